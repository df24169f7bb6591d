"""Shared timing helpers: best-of-k timing, and a baseline run in a child process with a timeout."""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from typing import Any, Callable


def best_time(fn: Callable[[], Any], repeats: int = 1) -> tuple[float, Any]:
    """The fastest of ``repeats`` runs of ``fn`` and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _child(fn, args, queue) -> None:
    start = time.perf_counter()
    result = fn(*args)
    queue.put((time.perf_counter() - start, result))


def run_with_timeout(fn: Callable, args: tuple, timeout: float):
    """``(seconds, fn(*args))`` computed in a forked child, or None if it ran past ``timeout``.

    ``fn`` must be a module-level function; it should do its own setup outside the
    timed part only if that setup is negligible (the whole call is timed).
    """
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(fn, args, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None
    return queue.get() if not queue.empty() else None


def write_rows(path: str | None, rows) -> None:
    """Write a benchmark's table rows as JSON to ``path`` (nothing when ``path`` is None)."""
    if path:
        with open(path, "w") as fh:
            json.dump(rows, fh, indent=1)

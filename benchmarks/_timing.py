"""Shared timing helpers: best-of-k timing, a baseline run in a child process with a timeout, and the
benchmarks' common command line and table (a header with its rule, the baseline's and the ratio's cells)."""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
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


def bench_parser(doc: str | None, timeout: float = 60.0) -> argparse.ArgumentParser:
    """A benchmark's parser (``doc`` its description) with ``--baseline-timeout`` and ``--json FILE``."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-timeout", type=float, default=timeout)
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    return parser


def print_header(header: str) -> None:
    """The table's header line and a rule of its width."""
    print(header)
    print("-" * len(header))


def running(spec: str) -> None:
    """Say on stderr which case starts (the table on stdout stays clean)."""
    print(f"  running {spec} ...", file=sys.stderr, flush=True)


def sweep(names, sizes, spec_of: Callable[[str, int], str], dead: set):
    """Each ``(name, n, spec, alive)`` of the table, names outer and sizes inner, saying on stderr which spec starts;
    ``alive``: the name is not in ``dead`` (where the caller puts a name whose baseline timed out, so that
    its larger sizes skip the baseline)."""
    for name in names:
        for n in sizes:
            spec = spec_of(name, n)
            running(spec)
            yield name, n, spec, name not in dead


def versus(base_s: float | None, kit_s: float, timeout: float, alive: bool = True):
    """``(ratio, baseline cell, ratio cell)`` of the baseline's ``base_s`` seconds against the kit's ``kit_s``.

    ``base_s`` None: the baseline ran past ``timeout`` (the ratio a lower bound, ``>``), or was not run
    at all when not ``alive`` (``skipped``, no ratio).
    """
    if base_s is not None:
        ratio = base_s / kit_s
        return ratio, f"{base_s:.3f}", f"{ratio:.0f}x"
    if not alive:
        return None, "skipped", ""
    ratio = timeout / kit_s
    return ratio, f">{timeout:.0f}", f">{ratio:.0f}x"

"""A deadline for long pure-Python loops: :func:`deadline` sets it, :func:`tick` checks it.

Definition. Inside ``with deadline(seconds):`` every :func:`tick` raises
``TimeoutError`` once ``seconds`` have passed since the block was entered (nested
blocks keep the earlier of the two deadlines; ``None`` adds no limit). Loops that
can run long before any solver or search sees the time limit — building a Z3
encoding, generating the families of a theorem — call :func:`tick` once per outer
step, so ``--timeout`` is honoured while they run too. ``tick`` costs one
clock read.

>>> import time
>>> with deadline(0.01):
...     time.sleep(0.02)
...     tick()
Traceback (most recent call last):
...
TimeoutError: the time limit of 0.01 s is spent
>>> with deadline(None):
...     tick()
"""

from __future__ import annotations

import contextlib
import time

_active: list[tuple[float, float]] = []  # (monotonic end, seconds) of the enclosing deadlines, innermost last


@contextlib.contextmanager
def deadline(seconds: float | None):
    """Within the block, :func:`tick` raises ``TimeoutError`` after ``seconds`` (``None``: no new limit)."""
    if seconds is None:
        yield
        return
    end = time.monotonic() + seconds
    if _active and _active[-1][0] < end:
        end, seconds = _active[-1]
    _active.append((end, seconds))
    try:
        yield
    finally:
        _active.pop()


def tick() -> None:
    """``TimeoutError`` when the innermost :func:`deadline` has passed; nothing otherwise."""
    if _active and time.monotonic() > _active[-1][0]:
        raise TimeoutError(f"the time limit of {_active[-1][1]:g} s is spent")


def left() -> float | None:
    """Seconds left before the innermost deadline (``None``: none is set)."""
    return _active[-1][0] - time.monotonic() if _active else None

"""The values of one subterm over the evaluation grid: an array, its undefined lanes, its bounds, its width.

Integers are exact: int64 while an interval bound of the values fits, else object arrays of
Python ints. A lane is *undefined* where Z3 leaves the value unspecified (an integer
divisor 0, a table read outside it, an :data:`UNDEFINED` constant).
"""

from __future__ import annotations

import numpy as np

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


class Unevaluable(Exception):
    """The formula has an operation not evaluated here, or an undefined value where one was needed."""


UNDEFINED = object()  # an env value: this constant is unknown, every lane that reads it is undefined


class _V:
    """One subterm's value: ``a`` (array: bool, int64 or object), ``undef`` (bool array or None), bounds, width."""

    __slots__ = ("a", "undef", "lo", "hi", "width")

    def __init__(self, a, undef=None, lo=None, hi=None, width=None):
        self.a, self.undef, self.lo, self.hi, self.width = a, undef, lo, hi, width


def _fits(lo, hi) -> bool:
    return lo is not None and hi is not None and INT64_MIN <= lo and hi <= INT64_MAX


def _bounds_of(a) -> tuple[int, int]:
    if a.size == 0:
        return 0, 0
    return int(np.min(a)), int(np.max(a))


def _int_array(value):
    """An integer array (int64 when the values fit, else object) and its bounds."""
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if isinstance(value, int):
        if INT64_MIN <= value <= INT64_MAX:
            return np.asarray(value, dtype=np.int64), value, value
        return np.asarray(value, dtype=object), value, value
    a = np.asarray(value)
    if a.dtype == bool:
        a = a.astype(np.int64)
    if a.dtype == object:
        lo, hi = _bounds_of(a)
        return (a.astype(np.int64) if _fits(lo, hi) else a), lo, hi
    if not np.issubdtype(a.dtype, np.integer):
        raise Unevaluable(f"an integer value of dtype {a.dtype}")
    if a.dtype == np.uint64:
        lo, hi = _bounds_of(a.astype(object))
        return (a.astype(np.int64) if _fits(lo, hi) else a.astype(object)), lo, hi
    a = a.astype(np.int64, copy=False)
    lo, hi = _bounds_of(a)
    return a, lo, hi


def _or_undef(*us):
    out = None
    for u in us:
        if u is None:
            continue
        out = u if out is None else (out | u)
    return out


def _obj(a):
    """``a`` as an object array of Python ints (a 0-d operation's Python scalar included)."""
    if isinstance(a, np.ndarray) and a.dtype == object:
        return a
    if isinstance(a, np.ndarray):
        return a.astype(object)
    return np.asarray(int(a) if isinstance(a, np.integer) else a, dtype=object)


def _tighten(v: _V) -> None:
    """Replace interval bounds by the actual bounds of the values (always true, often tighter)."""
    v.lo, v.hi = _bounds_of(v.a)


def _shrink(a, lo, hi) -> _V:
    """An integer result: int64 when it fits, object otherwise (bounds refined by the values when wide)."""
    if a.dtype == object:
        lo, hi = _bounds_of(a)
        if _fits(lo, hi):
            a = a.astype(np.int64)
    return _V(a, None, lo, hi)

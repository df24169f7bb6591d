"""Where values meet: torch's result dtype, a Python int entering a tensor, wrapping into a dtype, intervals.

Promotion is bool < int32 < int64; a Python int with a tensor takes the tensor's dtype (a
bool tensor with a Python int gives int64). int64 and int32 results wrap (two's
complement) when they can leave the dtype's range under the tracer's assumptions: the
interval kept on every value (``lo``, ``hi``) decides, else the tracer's solver. A Python
int meeting an int64 tensor wraps for ``2^63 <= v < 2^64`` and cannot run outside
``[-2^63, 2^64)`` (an obligation when it is symbolic).
"""

from __future__ import annotations

import z3

from hasse.solvers.symbolic.terms.dtypes import _RANK, BITS, BOOL, INT32, INT64, RANGES
from hasse.solvers.symbolic.terms.errors import CannotRun, Untraceable
from hasse.solvers.symbolic.terms.sym import Sym, SymBool, SymInt, _const, _view


def _fits(lo, hi, low, high) -> bool:
    return lo is not None and hi is not None and low <= lo and hi <= high


def _may_leave(tracer, expr, lo, hi, low, high) -> bool:
    if _fits(lo, hi, low, high):
        return False
    if lo is not None and hi is not None and (hi < low or lo > high):
        return True
    return tracer is None or tracer.may_leave(expr, low, high)


def _wrap(expr, bits: int):
    """``expr`` taken modulo ``2^bits`` into ``[-2^(bits-1), 2^(bits-1))`` (two's complement)."""
    m, half = 2 ** bits, 2 ** (bits - 1)
    value = _const(expr)
    if isinstance(value, int) and not isinstance(value, bool):
        return z3.IntVal((value + half) % m - half)
    return expr - m * ((expr + half) / m)  # Z3's div by a positive constant is floor division


def _fit(expr, lo, hi, dtype, tracer):
    """``(expr, lo, hi)`` of an int tensor result: wrapped when it can leave the dtype's range."""
    low, high = RANGES[dtype]
    if not _may_leave(tracer, expr, lo, hi, low, high):
        return expr, max(lo if lo is not None else low, low), min(hi if hi is not None else high, high)
    return _wrap(expr, BITS[dtype]), low, high


def _promote(a: Sym, b: Sym):
    """torch's result dtype of ``a op b`` (None: both Python scalars)."""
    da, db = a.dtype, b.dtype
    if da is None and db is None:
        return None
    if da is None or db is None:
        tensor, other = (da, b) if da is not None else (db, a)
        if tensor == BOOL and isinstance(other, SymInt):
            return INT64  # a bool tensor with a Python int
        return tensor
    return da if _RANK[da] >= _RANK[db] else db


def _show(v: int) -> str:
    for k in range(1, 200):
        for sign in (1, -1):
            for delta in (0, -1, 1):
                if v == sign * 2 ** k + delta and k > 8:
                    text = f"{'-' if sign < 0 else ''}2**{k}"
                    return text + (f" {'+' if delta > 0 else '-'} 1" if delta else "")
    return str(v)


def _convert(s: Sym, dtype, tracer, strict: bool = False, library: str = "torch"):
    """``(expr, lo, hi)`` of ``s`` as an element of an int tensor of ``dtype``.

    A tensor's value is already in range (a bool as 0/1). A Python int is converted as torch
    does: for int64, wrapped when ``2^63 <= v < 2^64`` (not when ``strict``: where/clamp and
    numpy raise there), and the program cannot run outside (an obligation when symbolic).
    """
    expr, lo, hi = _view(s)
    if s.dtype is not None or isinstance(s, SymBool):
        return expr, lo, hi
    low, high = RANGES[dtype]
    who = "numpy" if library == "numpy" else "torch"
    if dtype == INT32:
        if _may_leave(tracer, expr, lo, hi, low, high):
            value = _const(expr)
            if strict and value is not None:
                raise CannotRun(f"{who} raises: the Python int {_show(value)} does not fit int32")
            raise Untraceable("a Python int outside the int32 range with an int32 tensor (torch truncates it): "
                              "not modelled")
        return expr, lo, hi
    top = high if strict else 2 ** 64 - 1
    value = _const(expr)
    if value is not None:
        if not low <= value <= top:
            raise CannotRun(f"{who} raises OverflowError: the Python int {_show(value)} does not fit int64")
        v = _const(_wrap(expr, 64))
        return z3.IntVal(v), v, v
    if _may_leave(tracer, expr, lo, hi, low, top):
        if tracer is None:
            raise Untraceable("a symbolic Python int that may not fit int64, outside a trace")
        tracer.oblige(z3.And(expr >= low, expr <= top),
                      f"a Python int does not fit int64 ({who} raises OverflowError)")
        lo = low if lo is None else max(lo, low)
        hi = top if hi is None else min(hi, top)
    if not strict and _may_leave(tracer, expr, lo, hi, low, high):
        return _wrap(expr, 64), low, high
    return expr, lo, hi


# --------------------------------------------------------------------------- interval arithmetic


def _add(a, b):
    return None if a is None or b is None else a + b


def _corners(xl, xh, yl, yh, f):
    if None in (xl, xh, yl, yh):
        return None, None
    values = [f(x, y) for x in (xl, xh) for y in (yl, yh)]
    return min(values), max(values)


def _magnitude(lo, hi):
    return None if lo is None or hi is None else max(abs(lo), abs(hi))

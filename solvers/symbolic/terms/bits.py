"""Comparisons, and ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` on symbolic values.

A comparison is a bool tensor when a tensor is involved, else a Python bool. The bit
operations are logical on Booleans and two's complement on integers (Z3 bit-vectors of
the width the values need; ``x & (2^k - 1)`` as ``x mod 2^k``); ``~x`` is ``-1 - x``;
shifts by a constant count, ``0 … 63`` for a tensor.
"""

from __future__ import annotations

import z3

from hasse.solvers.symbolic.terms.dtypes import BITS, BOOL, INT64
from hasse.solvers.symbolic.terms.errors import CannotRun, Untraceable
from hasse.solvers.symbolic.terms.promote import _convert, _fit, _promote
from hasse.solvers.symbolic.terms.sym import Sym, SymBool, SymInt, _const, _plain, _tracer_of, _view, lift
from hasse.solvers.symbolic.terms.tracer import Tracer


_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def compare(op: str, a, b, tracer: Tracer | None = None, library: str = "torch") -> SymBool:
    """``a op b``: a bool tensor when a tensor is involved, else a Python bool."""
    tracer = tracer if tracer is not None else _tracer_of(a, b)
    if op in ("==", "!=") and any(v is None or isinstance(v, str) for v in (a, b)):
        return SymBool(z3.BoolVal(op == "!="), tracer)  # x == None: Python's False
    A, B = lift(a, tracer), lift(b, tracer)
    out = BOOL if (A.dtype is not None or B.dtype is not None) else None
    if isinstance(A, SymBool) and isinstance(B, SymBool) and op in ("==", "!="):
        e = A.expr == B.expr
        return SymBool(e if op == "==" else z3.Not(e), tracer, out)
    dtype = _promote(A, B)
    if dtype is None or dtype == BOOL:
        x, _, _ = _view(A)
        y, _, _ = _view(B)
    else:
        x, _, _ = _convert(A, dtype, tracer, library=library)
        y, _, _ = _convert(B, dtype, tracer, library=library)
    return SymBool(_COMPARE[op](x, y), tracer, out)


def invert(a) -> Sym:
    """``~a``: logical on a bool tensor, ``-1 - a`` on integers (two's complement; never overflows)."""
    A = lift(a)
    if isinstance(A, SymBool) and A.dtype == BOOL:
        return SymBool(z3.Not(A.expr), A.tracer, BOOL)
    x, lo, hi = _view(A)  # a Python bool is the int 0/1 here, as in Python (~True == -2)
    return SymInt(-1 - x, A.tracer, A.dtype, (None if hi is None else -1 - hi, None if lo is None else -1 - lo))


def _signed_bits(lo, hi):
    return max((v if v >= 0 else -v - 1).bit_length() + 1 for v in (lo, hi))


def _bits(op, x, xl, xh, y, yl, yh, maxbits):
    """Two's complement ``x op y`` (``&``, ``|``, ``^``) on integers in the given intervals, and its interval."""
    for c, (z, zl, zh) in ((_const(y), (x, xl, xh)), (_const(x), (y, yl, yh))):
        if op == "&" and isinstance(c, int) and c >= 0 and (c & (c + 1)) == 0:  # x & (2^k - 1) = x mod 2^k
            if c == 0:
                return z3.IntVal(0), 0, 0
            hi = c if zl is None or zl < 0 or zh is None else min(c, zh)
            return z % (c + 1), 0, hi
    if None in (xl, xh, yl, yh):
        raise Untraceable("bitwise arithmetic on an unbounded Python int (give its range) is not modelled")
    if xl >= 0 and yl >= 0:
        width = max(xh.bit_length(), yh.bit_length(), 1)
        signed = False
    else:
        width = min(max(_signed_bits(xl, xh), _signed_bits(yl, yh)), maxbits or 10 ** 9)
        signed = True
    bx, by = z3.Int2BV(x, width), z3.Int2BV(y, width)
    r = {"&": lambda p, q: p & q, "|": lambda p, q: p | q, "^": lambda p, q: p ^ q}[op](bx, by)
    e = z3.BV2Int(r, is_signed=signed)
    if not signed:
        return e, 0, (min(xh, yh) if op == "&" else 2 ** width - 1)
    return e, -2 ** (width - 1), 2 ** (width - 1) - 1


def bitwise(op: str, a, b, tracer: Tracer | None = None, library: str = "torch") -> Sym:
    """``a & b``, ``a | b``, ``a ^ b``: logical on Booleans, two's complement on integers."""
    tracer = tracer if tracer is not None else _tracer_of(a, b)
    A, B = lift(a, tracer), lift(b, tracer)
    if isinstance(A, SymBool) and isinstance(B, SymBool):
        logic = {"&": z3.And, "|": z3.Or, "^": z3.Xor}[op]
        return SymBool(logic(A.expr, B.expr), tracer, BOOL if (A.dtype or B.dtype) else None)
    dtype = _promote(A, B)
    if dtype is None:
        x, xl, xh = _view(A)
        y, yl, yh = _view(B)
        e, lo, hi = _bits(op, x, xl, xh, y, yl, yh, None)
        return SymInt(e, tracer, None, (lo, hi))
    x, xl, xh = _convert(A, dtype, tracer, library=library)
    y, yl, yh = _convert(B, dtype, tracer, library=library)
    e, lo, hi = _bits(op, x, xl, xh, y, yl, yh, BITS[dtype])
    return SymInt(e, tracer, dtype, (lo, hi))


def shift(op: str, a, c, tracer: Tracer | None = None) -> Sym:
    """``a << c`` / ``a >> c`` by a constant count (arithmetic shift: floor by ``2^c``; ``<<`` wraps)."""
    tracer = tracer if tracer is not None else _tracer_of(a, c)
    if isinstance(c, Sym):
        count = _const(c.expr)
        if count is None:
            raise Untraceable("a shift by a symbolic count is not modelled")
        tensor_count = c.dtype is not None
    else:
        count, tensor_count = _plain(c), False
        if tracer is not None:
            tracer.note(count)
    count = int(count)
    A = lift(a, tracer)
    dtype = INT64 if A.dtype == BOOL or (A.dtype is None and tensor_count) else A.dtype
    x, lo, hi = _view(A)
    if dtype is not None:
        if isinstance(A, SymInt) and A.dtype is None:
            x, lo, hi = _convert(A, dtype, tracer)
        if not 0 <= count < BITS[dtype]:
            raise Untraceable(f"a shift of a tensor by {count} (outside 0 … {BITS[dtype] - 1}: implementation-"
                              "defined in torch's kernels) is not modelled")
    elif count < 0:
        raise CannotRun("a shift by a negative count: Python raises ValueError ('negative shift count')")
    elif count > 4096:
        raise Untraceable(f"a shift by {count} is not modelled")
    p = 2 ** count
    if op == ">>":
        return SymInt(x / p if count else x, tracer, dtype,
                      (None if lo is None else lo >> count, None if hi is None else hi >> count))
    e, lo, hi = x * p, (None if lo is None else lo * p), (None if hi is None else hi * p)
    if dtype is not None:
        e, lo, hi = _fit(e, lo, hi, dtype, tracer)
    return SymInt(e, tracer, dtype, (lo, hi))

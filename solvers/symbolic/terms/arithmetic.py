"""``+ - * // % fmod``, ``div(rounding_mode=…)``, unary ``-``, ``abs`` and ``**`` on symbolic values.

Python's semantics on Python ints (exact), torch's on tensors (wrapped into the dtype). On
bool tensors ``+`` is ``or`` and ``*`` is ``and``; ``-``, ``//``, ``%``, unary ``-`` and
``abs`` cannot run. ``a // b`` is floor division, ``a % b`` takes the sign of ``b``,
``fmod`` truncates; a divisor that may be 0 adds the obligation ``b != 0`` (torch and
Python raise there: a claim is refuted where it fails, never restricted), a constant 0
divisor cannot run. ``**`` takes a constant exponent ``0 … 63``.
"""

from __future__ import annotations

import z3

from hasse.solvers.symbolic.terms.dtypes import BOOL, INT64
from hasse.solvers.symbolic.terms.errors import CannotRun, Untraceable
from hasse.solvers.symbolic.terms.promote import _convert, _corners, _fit, _magnitude, _promote, _add
from hasse.solvers.symbolic.terms.sym import Sym, SymBool, SymInt, _const, _plain, _tracer_of, _view, lift
from hasse.solvers.symbolic.terms.tracer import Tracer

MAX_POWER = 63  # the largest constant exponent of ``**`` (and shift of a Python int beyond 63 is refused at 4096)


_OPNAME = {"+": "'+'", "-": "'-'", "*": "'*'", "//": "'//' (floor_divide)", "%": "'%' (remainder)",
           "fmod": "fmod", "trunc": "div(rounding_mode='trunc')"}


def _divisor(y, yl, yh, tracer, python: bool, library: str):
    """Check a divisor: a constant 0 cannot run; one that may be 0 is an obligation ``y != 0``."""
    y = z3.simplify(y)
    value = _const(y)
    if value is not None:
        if value == 0:
            raise CannotRun("a division or modulo by 0: " + ("Python raises ZeroDivisionError" if python else
                            f"{'numpy' if library == 'numpy' else 'torch'} raises ZeroDivisionError"))
        return y
    if (yl is not None and yl > 0) or (yh is not None and yh < 0):
        return y
    if tracer is None:
        raise Untraceable("a division by a value that may be 0, outside a trace")
    if tracer.possible(y == 0):  # else the assumptions (domain, side conditions) exclude it: no obligation
        tracer.oblige(y != 0, "the divisor is 0")
    return y


def _sign(y, yl, yh, tracer):
    """A narrower interval for a divisor from the assumptions: ``(0, yh)`` when it cannot be negative."""
    if (yl is not None and yl >= 0) or (yh is not None and yh <= 0) or tracer is None:
        return yl, yh
    if not tracer.possible(y < 0):
        return 0, yh
    if not tracer.possible(y > 0):
        return yl, 0
    return yl, yh


def _floor_div(x, y, yl, yh):
    if yl is not None and yl >= 0:  # y = 0 fails the obligation y != 0: only y > 0 is read
        return x / y
    if yh is not None and yh <= 0:
        return (-x) / (-y)
    return z3.If(y > 0, x / y, (-x) / (-y))  # Z3's div is floor only for a positive divisor


def _floor_mod(x, y, yl, yh):
    if yl is not None and yl >= 0:
        return x % y  # Z3's mod is Python's for a positive divisor
    return x - y * _floor_div(x, y, yl, yh)


def _trunc_div(x, y, xl, xh, yl, yh):
    ax = x if xl is not None and xl >= 0 else z3.If(x >= 0, x, -x)
    ay = y if yl is not None and yl > 0 else z3.If(y >= 0, y, -y)
    q = ax / ay
    same = z3.BoolVal(True) if (xl is not None and xl >= 0 and yl is not None and yl > 0) else (x >= 0) == (y >= 0)
    return q if z3.is_true(same) else z3.If(same, q, -q)


def _exact(op, x, xl, xh, y, yl, yh, tracer, python: bool, library: str):
    """The exact integer result of ``x op y`` and its interval."""
    if op == "+":
        return x + y, _add(xl, yl), _add(xh, yh)
    if op == "-":
        return x - y, _add(xl, None if yh is None else -yh), _add(xh, None if yl is None else -yl)
    if op == "*":
        lo, hi = _corners(xl, xh, yl, yh, lambda a, b: a * b)
        return x * y, lo, hi
    y = _divisor(y, yl, yh, tracer, python, library)
    yl, yh = _sign(y, yl, yh, tracer)
    if op == "//":
        if xl is not None and xl >= 0 and yl is not None and yl >= 1 and xh is not None and yh is not None:
            lo, hi = xl // yh, xh // yl
        else:
            m = _magnitude(xl, xh)
            lo, hi = (None, None) if m is None else (-m, m)
        return _floor_div(x, y, yl, yh), lo, hi
    if op == "trunc":
        m = _magnitude(xl, xh)
        return _trunc_div(x, y, xl, xh, yl, yh), (None if m is None else -m), m
    mb = _magnitude(yl, yh)
    ma = _magnitude(xl, xh)
    bound = None if mb is None else mb - 1
    if ma is not None:
        bound = ma if bound is None else min(bound, ma)
    if op == "%":
        if yl is not None and yl > 0:
            lo, hi = 0, None if yh is None else yh - 1
            if xl is not None and xl >= 0 and xh is not None:
                hi = xh if hi is None else min(hi, xh)
        elif yh is not None and yh < 0:
            lo, hi = (None if yl is None else yl + 1), 0
        else:  # |r| < |y| only: -1 % 5 == 4 exceeds |x|
            edge = None if mb is None else mb - 1
            lo, hi = (None if edge is None else -edge), edge
        return _floor_mod(x, y, yl, yh), lo, hi
    if op == "fmod":  # the sign of the dividend
        lo = 0 if xl is not None and xl >= 0 else (None if bound is None else -bound)
        hi = 0 if xh is not None and xh <= 0 else bound
        return x - y * _trunc_div(x, y, xl, xh, yl, yh), lo, hi
    raise ValueError(op)


def arith(op: str, a, b, tracer: Tracer | None = None, library: str = "torch") -> Sym:
    """``a op b`` for ``op`` in ``+ - * // % fmod trunc``, on tensors (torch) or Python scalars (Python)."""
    tracer = tracer if tracer is not None else _tracer_of(a, b)
    A, B = lift(a, tracer), lift(b, tracer)
    dtype = _promote(A, B)
    if dtype == BOOL:  # two bool tensors, or a bool tensor and a Python bool
        if op == "+":
            return SymBool(z3.Or(A.expr, B.expr), tracer, BOOL)
        if op == "*":
            return SymBool(z3.And(A.expr, B.expr), tracer, BOOL)
        if op == "-":
            raise CannotRun("'-' of two bool tensors: torch raises RuntimeError ('Subtraction, the `-` operator, "
                            "with two bool tensors is not supported'); use ^ or logical_xor")
        raise CannotRun(f"{_OPNAME[op]} of two bool tensors: torch raises NotImplementedError (not implemented "
                        "for 'Bool')")
    if dtype is None:
        x, xl, xh = _view(A)
        y, yl, yh = _view(B)
        if op in ("fmod", "trunc") and library == "torch":
            raise CannotRun(f"torch.{'fmod' if op == 'fmod' else 'div'}() of two Python ints: torch raises TypeError "
                            "(it needs a tensor)")
        e, lo, hi = _exact(op, x, xl, xh, y, yl, yh, tracer, True, library)
        return SymInt(e, tracer, None, (lo, hi))
    x, xl, xh = _convert(A, dtype, tracer, library=library)
    y, yl, yh = _convert(B, dtype, tracer, library=library)
    e, lo, hi = _exact(op, x, xl, xh, y, yl, yh, tracer, False, library)
    e, lo, hi = _fit(e, lo, hi, dtype, tracer)
    return SymInt(e, tracer, dtype, (lo, hi))


def divide(a, b, rounding_mode=None, tracer: Tracer | None = None) -> Sym:
    """``torch.div(a, b, rounding_mode=…)``: ``"floor"`` is ``//``, ``"trunc"`` truncates; none gives floats."""
    if rounding_mode == "floor":
        return arith("//", a, b, tracer)
    if rounding_mode == "trunc":
        return arith("trunc", a, b, tracer)
    if rounding_mode is None:
        raise Untraceable("torch.div() without rounding_mode gives floats (not modelled); use rounding_mode='floor'")
    raise CannotRun(f"torch.div(rounding_mode={rounding_mode!r}): torch raises ValueError")


def negate(a) -> Sym:
    A = lift(a)
    tracer = A.tracer
    if A.dtype == BOOL:
        raise CannotRun("'-' of a bool tensor: torch raises RuntimeError ('Negation, the `-` operator, on a bool "
                        "tensor is not supported'); use ~ or logical_not")
    x, lo, hi = _view(A)
    e, lo, hi = -x, (None if hi is None else -hi), (None if lo is None else -lo)
    if A.dtype is not None:
        e, lo, hi = _fit(e, lo, hi, A.dtype, tracer)
    return SymInt(e, tracer, A.dtype, (lo, hi))


def absolute(a, library: str = "torch") -> Sym:
    A = lift(a)
    tracer = A.tracer
    if A.dtype == BOOL:
        if library == "numpy":
            return A
        raise CannotRun("abs() of a bool tensor: torch raises NotImplementedError ('abs_cpu' not implemented for "
                        "'Bool')")
    x, lo, hi = _view(A)
    if lo is not None and lo >= 0:
        return SymInt(x, tracer, A.dtype, (lo, hi))
    if hi is not None and hi <= 0:
        e, lo, hi = -x, -hi, (None if lo is None else -lo)
    else:
        e, lo, hi = z3.If(x >= 0, x, -x), 0, (None if lo is None or hi is None else max(-lo, hi))
    if A.dtype is not None:
        e, lo, hi = _fit(e, lo, hi, A.dtype, tracer)  # abs(-2^63) = -2^63
    return SymInt(e, tracer, A.dtype, (lo, hi))


def power(a, k) -> Sym:
    """``a ** k`` for a constant ``k`` in ``0 … 63`` (wrapped for a tensor)."""
    A = lift(a)
    tracer = A.tracer
    if isinstance(k, Sym):
        value = _const(k.expr)
        if value is None:
            raise Untraceable("'**' with a symbolic exponent is not modelled")
        k = value
    k = _plain(k)
    if tracer is not None:
        tracer.note(k)
    k = int(k)
    if k < 0:
        if A.dtype is not None:
            raise CannotRun("a negative power of an integer tensor: torch raises RuntimeError ('Integers to negative "
                            "integer powers are not allowed')")
        raise Untraceable("a negative power of an integer (a float) is not modelled")
    if k > MAX_POWER:
        raise Untraceable(f"'**' with an exponent above {MAX_POWER} is not modelled")
    dtype = INT64 if A.dtype == BOOL else A.dtype
    x, xl, xh = _view(A)
    e = z3.IntVal(1)
    for _ in range(k):
        e = e * x
    if xl is None or xh is None:
        lo = hi = None
    else:
        values = [xl ** k, xh ** k] + ([0] if xl < 0 < xh else [])
        lo, hi = min(values), max(values)
    if dtype is not None:
        e, lo, hi = _fit(e, lo, hi, dtype, tracer)
    return SymInt(e, tracer, dtype, (lo, hi))

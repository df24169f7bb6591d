"""Booleans and integers on arrays, with Z3's semantics: ``And``/``Or`` defined wherever a defined operand
decides them, exact integers, Euclidean ``div``/``mod`` (a divisor 0 is an undefined lane)."""

from __future__ import annotations

import functools

import numpy as np

from hasse.solvers.symbolic.evaluate.lanes import _V, Unevaluable, _fits, _obj, _or_undef, _shrink, _tighten


# ---------------------------------------------------------------- Booleans


def _and(e, args):
    val = functools.reduce(np.logical_and, [a.a for a in args]) if args else np.asarray(True)
    undefs = [a.undef for a in args if a.undef is not None]
    if not undefs:
        return _V(np.asarray(val))
    decided = None  # some defined operand is False
    for a in args:
        f = ~a.a if a.undef is None else (~a.a & ~a.undef)
        decided = f if decided is None else (decided | f)
    undef = _or_undef(*undefs) & ~decided
    return _V(np.asarray(val), undef)


def _or(e, args):
    val = functools.reduce(np.logical_or, [a.a for a in args]) if args else np.asarray(False)
    undefs = [a.undef for a in args if a.undef is not None]
    if not undefs:
        return _V(np.asarray(val))
    decided = None
    for a in args:
        t = a.a if a.undef is None else (a.a & ~a.undef)
        decided = t if decided is None else (decided | t)
    undef = _or_undef(*undefs) & ~decided
    return _V(np.asarray(val), undef)


def _not(e, args):
    return _V(~args[0].a, args[0].undef)


def _implies(e, args):
    a, b = args
    return _or(e, [_V(~a.a, a.undef), b])


def _xor(e, args):
    return _V(args[0].a ^ args[1].a, _or_undef(args[0].undef, args[1].undef))


def _ite(e, args):
    c, a, b = args
    if e.is_bool:
        val = np.where(c.a, a.a, b.a)
        out = _V(val)
    elif a.width is not None:
        out = _V(np.where(c.a, a.a, b.a), None, None, None, a.width)
    else:
        lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
        if a.a.dtype == object or b.a.dtype == object:
            out = _V(np.where(c.a, _obj(a.a), _obj(b.a)), None, lo, hi)
        else:
            out = _V(np.where(c.a, a.a, b.a), None, lo, hi)
    if a.undef is not None or b.undef is not None:
        ua = a.undef if a.undef is not None else False
        ub = b.undef if b.undef is not None else False
        out.undef = np.where(c.a, ua, ub)
    out.undef = _or_undef(out.undef, c.undef)
    return out


def _eq(e, args):
    a, b = args
    if a.a.dtype != b.a.dtype and (a.a.dtype == object or b.a.dtype == object):
        val = _obj(a.a) == _obj(b.a)
    else:
        val = a.a == b.a
    return _V(np.asarray(val, dtype=bool), _or_undef(a.undef, b.undef))


def _distinct(e, args):
    out = None
    for i in range(len(args)):
        for j in range(i + 1, len(args)):
            d = _eq(e, [args[i], args[j]])
            d = _V(~d.a, d.undef)
            out = d if out is None else _and(e, [out, d])
    return out if out is not None else _V(np.asarray(True))


def _cmp(op):
    def f(e, args):
        a, b = args
        x, y = (a.a, b.a) if a.a.dtype == b.a.dtype or (a.a.dtype != object and b.a.dtype != object) \
            else (_obj(a.a), _obj(b.a))
        return _V(np.asarray(op(x, y), dtype=bool), _or_undef(a.undef, b.undef))

    return f


# ---------------------------------------------------------------- integers


def _arith(values: list[_V], lo: int, hi: int, op) -> _V:
    """``op`` on the operands' arrays, in int64 when [lo, hi] fits, else on Python ints."""
    undef = _or_undef(*(v.undef for v in values))
    if _fits(lo, hi) and all(v.a.dtype != object for v in values):
        with np.errstate(over="ignore"):
            a = op(*[v.a for v in values])
        out = _V(np.asarray(a, dtype=np.int64), undef, lo, hi)
    else:
        out = _shrink(np.asarray(op(*[_obj(v.a) for v in values]), dtype=object), lo, hi)
        out.undef = undef
    return out


def _retry(values: list[_V], bound) -> tuple[int, int]:
    lo, hi = bound(values)
    if not _fits(lo, hi):
        for v in values:
            _tighten(v)
        lo, hi = bound(values)
    return lo, hi


def _add(e, args):
    lo, hi = _retry(args, lambda vs: (sum(v.lo for v in vs), sum(v.hi for v in vs)))
    out = args[0]

    def op(*xs):
        total = xs[0]
        for x in xs[1:]:
            total = total + x
        return total

    return _arith(args, lo, hi, op) if len(args) > 1 else out


def _sub(e, args):
    def bound(vs):
        lo = vs[0].lo - sum(v.hi for v in vs[1:])
        hi = vs[0].hi - sum(v.lo for v in vs[1:])
        return lo, hi

    lo, hi = _retry(args, bound)

    def op(*xs):
        total = xs[0]
        for x in xs[1:]:
            total = total - x
        return total

    return _arith(args, lo, hi, op)


def _uminus(e, args):
    a = args[0]
    lo, hi = -a.hi, -a.lo
    return _arith([a], lo, hi, lambda x: -x)


def _mul(e, args):
    out = args[0]
    for b in args[1:]:
        def bound(vs):
            x, y = vs
            corners = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi]
            return min(corners), max(corners)

        pair = [out, b]
        lo, hi = _retry(pair, bound)
        out = _arith(pair, lo, hi, lambda x, y: x * y)
    return out


def _divmod_parts(a: _V, b: _V, want: str) -> _V:
    """Euclidean ``div``/``mod`` (``rem``: mod with the divisor's sign); a divisor 0 is an undefined lane."""
    zero = b.a == 0
    undef = _or_undef(a.undef, b.undef, zero if np.any(zero) else None)
    reach = max(abs(a.lo), abs(a.hi)) + max(abs(b.lo), abs(b.hi))  # |x - r| <= |x| + |d|
    wide = a.a.dtype == object or b.a.dtype == object or not _fits(-reach, reach)
    x = _obj(a.a) if wide else a.a
    d = np.where(zero, 1, _obj(b.a) if wide else b.a)
    if wide:
        d = d.astype(object)
    ad = np.abs(d)
    with np.errstate(over="ignore"):
        r = x % ad  # in [0, |d|) as Python's % and numpy's with a positive divisor
        if want == "mod":
            res, lo, hi = r, 0, max(abs(b.lo), abs(b.hi)) - 1 if max(abs(b.lo), abs(b.hi)) > 0 else 0
        elif want == "rem":
            res = np.where(d < 0, -r, r)
            m = max(abs(b.lo), abs(b.hi))
            lo, hi = -m, m
        else:  # div: (x - r) / d, exact
            res = (x - r) // d
            m = max(abs(a.lo), abs(a.hi))
            lo, hi = -m, m
    out = _shrink(np.asarray(res, dtype=object if wide else np.int64), lo, hi)
    out.undef = undef
    return out


def _idiv(e, args):
    return _divmod_parts(args[0], args[1], "div")


def _mod(e, args):
    return _divmod_parts(args[0], args[1], "mod")


def _rem(e, args):
    return _divmod_parts(args[0], args[1], "rem")


def _abs(e, args):
    a = args[0]
    lo = 0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
    return _arith([a], lo, max(abs(a.lo), abs(a.hi)), lambda x: abs(x))


def _power(e, args):
    base, ex = args
    if e.exponent is None or e.exponent < 0:
        raise Unevaluable(f"a power with exponent {e.expr.arg(1)}")
    k = e.exponent
    corners = [base.lo ** k, base.hi ** k] + ([0] if base.lo <= 0 <= base.hi else [])
    return _arith([base], min(corners), max(corners), lambda x: x ** k)

"""Bit-vectors on arrays, as Z3 computes them: a width-``w`` value held as its signed value (int64 for
``w <= 64``, Python ints above), wrapping; ``bvudiv``/``bvsdiv``/… by 0 take Z3's values; ``int2bv``,
``bv2int``, extract, concat, extensions, shifts, the ``*_no_overflow`` tests."""

from __future__ import annotations

import numpy as np

from hasse.solvers.symbolic.evaluate.lanes import _V, _obj, _or_undef, _shrink


def _norm(a, w: int):
    """The signed value of ``a`` taken modulo ``2^w`` (int64 for ``w <= 64``, Python ints above)."""
    if isinstance(a, (int, np.integer)):
        a = np.asarray(int(a), dtype=object)
    a = np.asarray(a)
    if a.dtype == np.uint64:
        a = a.astype(object)
    half, full = 1 << (w - 1), 1 << w
    if w <= 64:
        if a.dtype == object:
            return np.asarray((a + half) % full - half, dtype=object).astype(np.int64)
        a = a.astype(np.int64, copy=False)
        if w == 64:
            return a
        with np.errstate(over="ignore"):
            return ((a + half) & (full - 1)) - half
    return np.asarray((_obj(a) + half) % full - half, dtype=object)


def _unsigned(a, w: int):
    """The unsigned value of a w-bit signed array (object when it may not fit int64)."""
    if w < 64:
        return a & ((1 << w) - 1) if a.dtype != object else a % (1 << w)
    o = _obj(a)
    return np.asarray(o % (1 << w), dtype=object)


def _bv(fn):
    def f(e, args):
        w = e.size()
        return _V(_norm(fn(w, *[a.a for a in args]), w), _or_undef(*(a.undef for a in args)), None, None, w)

    return f


def _wrapping(op):
    def fn(w, *xs):
        if w <= 64 and all(x.dtype != object for x in xs):
            with np.errstate(over="ignore"):
                out = xs[0]
                for x in xs[1:]:
                    out = op(out, x)
                return out
        out = _obj(xs[0])
        for x in xs[1:]:
            out = op(out, _obj(x))
        return out

    return fn


def _shift(kind):
    def fn(w, x, s):
        u, ux = _unsigned(s, w), _unsigned(x, w)
        o = _obj(x)
        big = _obj(u) >= w
        amount = _obj(np.where(big, _obj(0), _obj(u)))
        if kind == "shl":
            res = np.where(big, 0, _obj(_obj(ux) * _obj(2 ** amount)))
        elif kind == "lshr":
            res = np.where(big, 0, _obj(_obj(ux) // _obj(2 ** amount)))
        else:
            res = np.where(big, np.where(o < 0, -1, 0), _obj(o // _obj(2 ** amount)))
        return np.asarray(res, dtype=object)

    return fn


def _udiv(kind):
    def fn(w, x, y):
        ux, uy = _obj(_unsigned(x, w)), _obj(_unsigned(y, w))
        zero = uy == 0
        safe = _obj(np.where(zero, _obj(1), uy))
        if kind == "udiv":
            return np.asarray(np.where(zero, _obj((1 << w) - 1), _obj(ux // safe)), dtype=object)
        return np.asarray(np.where(zero, ux, _obj(ux % safe)), dtype=object)

    return fn


def _sdiv(kind):
    def fn(w, x, y):
        sx, sy = _obj(x), _obj(y)
        zero = sy == 0
        safe = _obj(np.where(zero, _obj(1), sy))
        ax, ay = _obj(np.abs(sx)), _obj(np.abs(safe))
        q = _obj(ax // ay)
        q = _obj(np.where((sx < 0) != (safe < 0), _obj(-q), q))  # truncated
        r = _obj(sx - _obj(safe * q))  # sign of the dividend
        if kind == "sdiv":
            return np.asarray(np.where(zero, _obj(np.where(sx < 0, 1, -1)), q), dtype=object)
        if kind == "srem":
            return np.asarray(np.where(zero, sx, r), dtype=object)
        m = _obj(np.where((r != 0) & ((r < 0) != (safe < 0)), _obj(r + safe), r))  # smod: sign of the divisor
        return np.asarray(np.where(zero, sx, m), dtype=object)

    return fn


def _bv_cmp(op, signed: bool):
    def f(e, args):
        a, b = args
        w = a.width
        x, y = (a.a, b.a) if signed else (_obj(_unsigned(a.a, w)), _obj(_unsigned(b.a, w)))
        return _V(np.asarray(op(x, y), dtype=bool), _or_undef(a.undef, b.undef))

    return f


def _extract(e, args):
    hi, lo = e.params()
    w = hi - lo + 1
    a = args[0]
    u = _obj(_unsigned(a.a, a.width))
    return _V(_norm(np.asarray(u // (1 << lo), dtype=object), w), a.undef, None, None, w)


def _concat(e, args):
    out = None
    for a in args:
        u = _obj(_unsigned(a.a, a.width))
        out = u if out is None else out * (1 << a.width) + u
    w = e.size()
    return _V(_norm(np.asarray(out, dtype=object), w), _or_undef(*(a.undef for a in args)), None, None, w)


def _sign_ext(e, args):
    a = args[0]
    return _V(_norm(a.a, e.size()), a.undef, None, None, e.size())


def _zero_ext(e, args):
    a = args[0]
    return _V(_norm(_unsigned(a.a, a.width), e.size()), a.undef, None, None, e.size())


def _int2bv(e, args):
    a, w = args[0], e.size()
    return _V(_norm(a.a, w), a.undef, None, None, w)


def _bv2int(e, args):
    a = args[0]
    u = _unsigned(a.a, a.width)
    if u.dtype == object:
        out = _shrink(np.asarray(u), 0, (1 << a.width) - 1)
        out.undef = a.undef
        return out
    return _V(np.asarray(u, dtype=np.int64), a.undef, 0, (1 << a.width) - 1)


def _sbv2int(e, args):
    a = args[0]
    half = 1 << (a.width - 1)
    if a.a.dtype == object:
        out = _shrink(a.a, -half, half - 1)
        out.undef = a.undef
        return out
    return _V(a.a, a.undef, -half, half - 1)


def _no_ovfl(kind):
    def f(e, args):
        a, b = args
        w = a.width
        if kind == "umul":
            p = _obj(_unsigned(a.a, w)) * _obj(_unsigned(b.a, w))
            ok = p < (1 << w)
        else:
            p = _obj(a.a) * _obj(b.a)
            ok = p <= (1 << (w - 1)) - 1 if kind == "smul" else p >= -(1 << (w - 1))
        return _V(np.asarray(ok, dtype=bool), _or_undef(a.undef, b.undef))

    return f

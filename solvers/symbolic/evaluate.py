"""A Z3 formula evaluated on numpy arrays: the traced formula at many points at once, exactly.

The re-check (:mod:`solvers.symbolic.recheck`) compares the user's program with the
formula the tracer made of it at thousands of points; Z3's ``simplify`` entry by entry
took minutes. :func:`evaluate` walks the formula once (shared subterms once) with numpy
arrays for its free constants — ``q0`` as ``rows[:, None]``, ``k0`` as ``cols[None, :]``,
``n`` and the parameters as scalars or arrays over a batch axis — and broadcasts.

Semantics are Z3's, not numpy's:

- integers are exact: a subterm is computed in int64 only when an interval bound of its
  value fits (the bounds come from the operands' bounds, refined by their actual values
  when needed), else on object arrays of Python ints;
- ``div``/``mod`` are Euclidean (``a = b·(a div b) + a mod b`` with ``0 <= a mod b < |b|``),
  ``rem`` follows ``mod`` with the divisor's sign; an integer divisor 0 makes that lane
  *undefined* (Z3 leaves ``x div 0`` unspecified): :func:`evaluate_partial` returns the
  undefined lanes, :func:`evaluate` raises :class:`Unevaluable` when the result has any.
  ``And``/``Or`` are defined wherever one defined operand decides them (a branch that
  would divide by zero does not spoil ``If(d != 0, x / d, 0)``);
- bit-vectors of width ``w`` are held as their signed value (int64 for ``w <= 64``,
  Python ints above), wrapping as Z3 does; ``bvudiv``/``bvsdiv``/… by 0 take Z3's values;
  ``int2bv``, ``bv2int``, extract, concat, extensions, shifts, the ``*_no_overflow`` tests;
- an uninterpreted function (an index tensor: ``doc``, ``rank``, ``anc``) reads a table
  given in ``env`` by its name (a numpy array, one axis per argument); an argument outside
  the table is an undefined lane; arrays (``Select``) likewise.

Anything else (reals, quantifiers, strings) raises :class:`Unevaluable`.

>>> import z3
>>> q, k, n = z3.Ints("q0 k0 n")
>>> evaluate(z3.And(k <= q, q - k < n / 2), {"q0": np.arange(4)[:, None], "k0": np.arange(4)[None, :], "n": 4}).astype(int).tolist()
[[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
>>> evaluate(z3.IntVal(-7) / z3.IntVal(-2), {}), evaluate(z3.IntVal(-7) % z3.IntVal(-2), {})
(array(4), array(1))
"""

from __future__ import annotations

import functools

import numpy as np
import z3

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


def _i64(a):
    return a.astype(np.int64) if a.dtype != np.int64 else a


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


class _Node:
    """What evaluation needs of one Z3 term, read once (the Z3 API is slow to walk): see :func:`_compile`."""

    __slots__ = ("expr", "kind", "name", "is_bool", "is_int", "width", "extract", "value", "exponent", "kids",
                 "array_name")

    def __init__(self, e, kids: list[int]):
        self.expr = e
        decl = e.decl()
        self.kind = decl.kind()
        self.name = decl.name()
        sort = e.sort()
        self.is_bool = sort.kind() == z3.Z3_BOOL_SORT
        self.is_int = sort.kind() == z3.Z3_INT_SORT
        self.width = sort.size() if sort.kind() == z3.Z3_BV_SORT else None
        self.extract = tuple(e.params()) if self.kind == z3.Z3_OP_EXTRACT else None
        self.value = None
        if self.kind == z3.Z3_OP_ANUM:
            if not z3.is_int_value(e):
                raise Unevaluable(f"the real number {e}")
            self.value = e.as_long()
        elif self.kind == z3.Z3_OP_BNUM:
            self.value = e.as_long()
        self.exponent = None
        if self.kind == z3.Z3_OP_POWER:
            x = e.arg(1)
            self.exponent = x.as_long() if z3.is_int_value(x) else None
        self.array_name = None
        if self.kind == z3.Z3_OP_SELECT:
            arr = e.arg(0)
            if z3.is_const(arr) and arr.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                self.array_name = arr.decl().name()
        self.kids = kids

    def size(self) -> int:
        return self.width

    def params(self) -> tuple:
        return self.extract

    @property
    def sort_text(self) -> str:
        return str(self.expr.sort())


_COMPILED: dict = {}  # expr id -> (expr kept alive, nodes): a formula is walked once per process
_COMPILED_MAX = 512


def _compile(root) -> list[_Node]:
    """The subterms of ``root`` in an order where each comes after its children (shared ones once)."""
    key = root.get_id()
    hit = _COMPILED.get(key)
    if hit is not None and hit[0].eq(root):
        return hit[1]
    index: dict[int, int] = {}
    nodes: list[_Node] = []
    stack = [(root, False)]
    while stack:
        e, ready = stack.pop()
        eid = e.get_id()
        if eid in index:
            continue
        if z3.is_quantifier(e) or z3.is_var(e):
            raise Unevaluable("a quantifier")
        kids = e.children()
        if not ready and kids:
            stack.append((e, True))
            stack.extend((c, False) for c in kids if c.get_id() not in index)
            continue
        index[eid] = len(nodes)
        nodes.append(_Node(e, [index[c.get_id()] for c in kids]))
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.clear()
    _COMPILED[key] = (root, nodes)
    return nodes


class _Evaluator:
    def __init__(self, env: dict):
        self.env = env

    # ------------------------------------------------------------ leaves
    def leaf(self, e: _Node) -> _V:
        name = e.name
        if name not in self.env:
            raise Unevaluable(f"no value for {name}")
        value = self.env[name]
        if value is UNDEFINED:
            if e.is_bool:
                return _V(np.asarray(False), np.asarray(True))
            if e.is_int:
                return _V(np.asarray(0, dtype=np.int64), np.asarray(True), 0, 0)
            raise Unevaluable(f"{name} of sort {e.sort_text} unknown")
        if e.is_bool:
            a = np.asarray(value)
            if a.dtype != bool:
                a = a != 0
            return _V(a)
        if e.is_int:
            a, lo, hi = _int_array(value)
            return _V(a, None, lo, hi)
        if e.width is not None:
            w = e.width
            a, _, _ = _int_array(value)
            return _V(_norm(a, w), None, None, None, w)
        raise Unevaluable(f"{name} of sort {e.sort_text}")

    # ------------------------------------------------------------ the walk
    def value(self, root) -> _V:
        nodes = _compile(root)
        values: list[_V] = []
        for node in nodes:
            values.append(self.apply(node, [values[i] for i in node.kids]))
        return values[-1]

    def apply(self, e: _Node, args: list) -> _V:
        kind = e.kind
        k = z3
        if kind == k.Z3_OP_ANUM:
            a, lo, hi = _int_array(e.value)
            return _V(a, None, lo, hi)
        if kind == k.Z3_OP_BNUM:
            w = e.width
            return _V(_norm(np.asarray(e.value, dtype=object), w), None, None, None, w)
        if kind == k.Z3_OP_TRUE:
            return _V(np.asarray(True))
        if kind == k.Z3_OP_FALSE:
            return _V(np.asarray(False))
        if kind == k.Z3_OP_UNINTERPRETED:
            return self.leaf(e) if not args else self.lookup(e, args)
        if kind == k.Z3_OP_SELECT:
            return self.select(e, args)
        fn = _OPS.get(kind)
        if fn is None:
            raise Unevaluable(f"the operation {e.name} (in {_short(e.expr)})")
        return fn(e, args)

    def lookup(self, e: _Node, args: list) -> _V:
        name = e.name
        if name not in self.env:
            raise Unevaluable(f"no table for the function {name}")
        return _read_table(np.asarray(self.env[name]), args, e, name)

    def select(self, e: _Node, args: list) -> _V:
        name = e.array_name
        if name is None:
            raise Unevaluable(f"a lookup into the array {_short(e.expr.arg(0))}")
        if name not in self.env:
            raise Unevaluable(f"no table for the array {name}")
        return _read_table(np.asarray(self.env[name]), args[1:], e, name)


def _short(e) -> str:
    text = str(e).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _read_table(table, args: list, e, name: str) -> _V:
    if table.ndim != len(args):
        raise Unevaluable(f"the table of {name} has {table.ndim} axes, the function {len(args)} arguments")
    idx, undef = [], _or_undef(*(a.undef for a in args))
    for axis, a in enumerate(args):
        if a.width is not None:
            raise Unevaluable(f"{name} indexed by a bit-vector")
        size = table.shape[axis]
        ok = (a.a >= 0) & (a.a < size)
        out = ~ok
        undef = out if undef is None else (undef | out)
        idx.append(np.where(ok, a.a, 0).astype(np.int64))
    idx = np.broadcast_arrays(*idx)
    vals = table[tuple(idx)]
    if undef is not None and not np.any(undef):
        undef = None
    if e.is_bool:
        return _V(vals.astype(bool), undef)
    if e.is_int:
        a, lo, hi = _int_array(vals)
        if undef is not None:
            lo, hi = _bounds_of(table.astype(object)) if table.size else (0, 0)
        return _V(a, undef, lo, hi)
    raise Unevaluable(f"the function {name} of sort {e.sort_text}")


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


# ---------------------------------------------------------------- bit-vectors


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
    return _shrink(np.asarray(u), 0, (1 << a.width) - 1) if u.dtype == object else \
        _V(np.asarray(u, dtype=np.int64), a.undef, 0, (1 << a.width) - 1)


def _sbv2int(e, args):
    a = args[0]
    half = 1 << (a.width - 1)
    if a.a.dtype == object:
        out = _shrink(a.a, -half, half - 1)
        out.undef = a.undef
        return out
    return _V(a.a, a.undef, -half, half - 1)


def _bv2int_result(e, args):
    out = _bv2int(e, args)
    out.undef = args[0].undef
    return out


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


_K = z3
_OPS = {
    _K.Z3_OP_AND: _and, _K.Z3_OP_OR: _or, _K.Z3_OP_NOT: _not, _K.Z3_OP_IMPLIES: _implies,
    _K.Z3_OP_XOR: _xor, _K.Z3_OP_ITE: _ite, _K.Z3_OP_EQ: _eq, _K.Z3_OP_IFF: _eq, _K.Z3_OP_DISTINCT: _distinct,
    _K.Z3_OP_LE: _cmp(lambda x, y: x <= y), _K.Z3_OP_LT: _cmp(lambda x, y: x < y),
    _K.Z3_OP_GE: _cmp(lambda x, y: x >= y), _K.Z3_OP_GT: _cmp(lambda x, y: x > y),
    _K.Z3_OP_ADD: _add, _K.Z3_OP_SUB: _sub, _K.Z3_OP_UMINUS: _uminus, _K.Z3_OP_MUL: _mul,
    _K.Z3_OP_IDIV: _idiv, _K.Z3_OP_MOD: _mod, _K.Z3_OP_REM: _rem, _K.Z3_OP_ABS: _abs, _K.Z3_OP_POWER: _power,
    _K.Z3_OP_BADD: _bv(_wrapping(lambda x, y: x + y)), _K.Z3_OP_BSUB: _bv(_wrapping(lambda x, y: x - y)),
    _K.Z3_OP_BMUL: _bv(_wrapping(lambda x, y: x * y)), _K.Z3_OP_BNEG: _bv(lambda w, x: -_obj(x)),
    _K.Z3_OP_BAND: _bv(_wrapping(lambda x, y: x & y)), _K.Z3_OP_BOR: _bv(_wrapping(lambda x, y: x | y)),
    _K.Z3_OP_BXOR: _bv(_wrapping(lambda x, y: x ^ y)), _K.Z3_OP_BNOT: _bv(lambda w, x: ~_obj(x)),
    _K.Z3_OP_BSHL: _bv(_shift("shl")), _K.Z3_OP_BLSHR: _bv(_shift("lshr")), _K.Z3_OP_BASHR: _bv(_shift("ashr")),
    _K.Z3_OP_BUDIV: _bv(_udiv("udiv")), _K.Z3_OP_BUREM: _bv(_udiv("urem")),
    _K.Z3_OP_BUDIV_I: _bv(_udiv("udiv")), _K.Z3_OP_BUREM_I: _bv(_udiv("urem")),
    _K.Z3_OP_BSDIV: _bv(_sdiv("sdiv")), _K.Z3_OP_BSREM: _bv(_sdiv("srem")), _K.Z3_OP_BSMOD: _bv(_sdiv("smod")),
    _K.Z3_OP_BSDIV_I: _bv(_sdiv("sdiv")), _K.Z3_OP_BSREM_I: _bv(_sdiv("srem")),
    _K.Z3_OP_BSMOD_I: _bv(_sdiv("smod")),
    _K.Z3_OP_SLEQ: _bv_cmp(lambda x, y: x <= y, True), _K.Z3_OP_SLT: _bv_cmp(lambda x, y: x < y, True),
    _K.Z3_OP_SGEQ: _bv_cmp(lambda x, y: x >= y, True), _K.Z3_OP_SGT: _bv_cmp(lambda x, y: x > y, True),
    _K.Z3_OP_ULEQ: _bv_cmp(lambda x, y: x <= y, False), _K.Z3_OP_ULT: _bv_cmp(lambda x, y: x < y, False),
    _K.Z3_OP_UGEQ: _bv_cmp(lambda x, y: x >= y, False), _K.Z3_OP_UGT: _bv_cmp(lambda x, y: x > y, False),
    _K.Z3_OP_EXTRACT: _extract, _K.Z3_OP_CONCAT: _concat, _K.Z3_OP_SIGN_EXT: _sign_ext,
    _K.Z3_OP_ZERO_EXT: _zero_ext, _K.Z3_OP_INT2BV: _int2bv, _K.Z3_OP_BV2INT: _bv2int_result,
    _K.Z3_OP_SBV2INT: _sbv2int,
    _K.Z3_OP_BSMUL_NO_OVFL: _no_ovfl("smul"), _K.Z3_OP_BSMUL_NO_UDFL: _no_ovfl("smul_udfl"),
    _K.Z3_OP_BUMUL_NO_OVFL: _no_ovfl("umul"),
}


def free_names(expr) -> set[str]:
    """The names of the constants ``expr`` reads (what ``env`` may give)."""
    return {node.name for node in _compile(expr) if node.kind == z3.Z3_OP_UNINTERPRETED and not node.kids}


def evaluate_partial(expr, env: dict, shape: tuple | None = None):
    """``(values, undefined)`` of ``expr`` with the constants and tables of ``env`` (module docstring).

    ``undefined`` is a bool array (True where an integer divisor is 0 or a table is read
    outside its length), or None when every lane is defined. ``shape``: broadcast both to it.
    A Boolean ``expr`` gives a bool array; an integer one int64 or object; a bit-vector
    its signed value.
    """
    v = _Evaluator(env).value(expr)
    a, u = v.a, v.undef
    if shape is not None:
        a = np.broadcast_to(a, shape)
        u = None if u is None else np.broadcast_to(u, shape)
    if u is not None and not np.any(u):
        u = None
    return a, u


def evaluate(expr, env: dict, shape: tuple | None = None) -> np.ndarray:
    """The values of ``expr`` (see :func:`evaluate_partial`); :class:`Unevaluable` where a lane is undefined."""
    a, u = evaluate_partial(expr, env, shape)
    if u is not None:
        where = tuple(int(i) for i in np.argwhere(np.asarray(u))[0]) if np.ndim(u) else ()
        raise Unevaluable(f"the formula is undefined (a divisor 0, or a table read outside it) at index {where}")
    return a

"""A Z3 formula compiled once into its subterms (shared ones once), then run on numpy arrays."""

from __future__ import annotations

import numpy as np
import z3

from hasse.solvers.symbolic.evaluate.bitvectors import _norm
from hasse.solvers.symbolic.evaluate.lanes import _V, UNDEFINED, Unevaluable, _bounds_of, _int_array, _or_undef
from hasse.solvers.symbolic.evaluate.operations import _OPS


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
    """The values of ``expr`` (see :func:`evaluate_partial`); :class:`Unevaluable` where a lane is undefined.

    >>> import z3
    >>> q, k, n = z3.Ints("q0 k0 n")
    >>> evaluate(z3.And(k <= q, q - k < n / 2), {"q0": np.arange(4)[:, None], "k0": np.arange(4)[None, :], "n": 4}).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    >>> evaluate(z3.IntVal(-7) / z3.IntVal(-2), {}), evaluate(z3.IntVal(-7) % z3.IntVal(-2), {})
    (array(4), array(1))
    """
    a, u = evaluate_partial(expr, env, shape)
    if u is not None:
        where = tuple(int(i) for i in np.argwhere(np.asarray(u))[0]) if np.ndim(u) else ()
        raise Unevaluable(f"the formula is undefined (a divisor 0, or a table read outside it) at index {where}")
    return a

"""The catalogue masks over index tensors (``document``, ``xlnet``, ``tree``), and index tensors fixed or sampled.

The list a mask reads becomes an index tensor (:class:`~solvers.symbolic.terms.SymIndex`):
``doc`` (*nondecreasing*) and ``rank`` (a *bijection*) put in the closure of the catalogue's
real rule (:func:`_closure_rule`), ``parent`` (*backward*) with its ancestor-or-self relation
(:class:`Ancestry`) written by hand. :func:`fix_index` fixes a tensor to concrete values;
:func:`index_instances` gives a few (extreme cases first, then seeded).
"""

from __future__ import annotations

import random
import types
from dataclasses import replace
from typing import Callable, Sequence

import z3

from hasse.solvers.symbolic.catalog.traced import SYMBOL, _statement
from hasse.solvers.symbolic.mask import N, SymbolicMask, _input
from hasse.solvers.symbolic.terms import SymBool, SymIndex, SymInt, as_int
from hasse.solvers.symbolic.trace import Traced, TraceError, rebind, trace
from hasse.theory.errors import InputError
from hasse.theory.limits import MAX_SYMBOLIC_VALUE
from hasse.theory.masks.document import document_ids, make_document
from hasse.theory.masks.tree import tree_table
from hasse.theory.masks.xlnet import make_xlnet, ranks
from hasse.theory.params import require_non_negative


class Ancestry(SymIndex):
    """A parent array (``"backward"``: ``parent(i) = -1`` for a root, else ``0 <= parent(i) < i``)
    with its ancestor-or-self relation ``anc(i, j)`` ("``j`` is ``i`` or an ancestor of ``i``").

    ``anc`` is the reflexive-transitive closure of ``parent``, which is not first-order.
    It is an uninterpreted relation; what is known of it is instantiated on the node terms
    the mask reads (:attr:`lookups`) and their parents, ``T``: for ``a, b, c`` in ``T``
    (inside ``0 … size-1``)

    1. ``anc(a, a)`` (reflexive);
    2. ``anc(a, b) and anc(b, c) -> anc(a, c)`` (transitive);
    3. ``parent(a) >= 0 -> anc(a, parent(a))``;
    4. ``anc(a, b) and b != a -> parent(a) >= 0 and anc(parent(a), b)`` (an ancestor other
       than ``a`` is an ancestor-or-self of ``a``'s parent);
    5. ``anc(a, b) -> 0 <= b <= a`` (ancestors come earlier).

    Soundness for proofs: every real forest, with ``anc`` its true ancestor-or-self
    relation, satisfies every instance of 1–5, so a statement that no assignment of the
    instantiated axioms violates holds for every parent array. The axioms are not
    complete: a model of finitely many instances may give ``anc`` a value no forest
    has (4 only unrolls one level), so a *refutation* through this encoding is a
    candidate until a concrete parent array, read off the model and re-checked with the
    concrete engine, confirms it.
    """

    def __init__(self, size, tracer=None):
        super().__init__("parent", "backward", size, tracer)
        self.relation = z3.Function("anc", z3.IntSort(), z3.IntSort(), z3.BoolSort())

    def ancestor(self, i, j) -> SymBool:
        """``anc(i, j)``: node ``j`` is node ``i`` or one of its ancestors."""
        a, b = (x if isinstance(x, z3.ArithRef) else as_int(x, "a tree node") for x in (i, j))
        for t in (a, b):
            if not any(t.eq(x) for x in self.lookups):
                self.lookups.append(t)
        return SymBool(self.relation(a, b), self.tracer)

    def axioms(self, extra_lookups=()) -> list:
        out = super().axioms(extra_lookups)
        f, anc, n = self.function, self.relation, self.size
        nodes = list(self.lookups) + [t for t in extra_lookups if not any(t.eq(x) for x in self.lookups)]
        terms = nodes + [f(t) for t in nodes]

        def inside(*ts):
            return z3.And([z3.And(t >= 0, t < n) for t in ts])

        for a in terms:
            out.append(z3.Implies(inside(a), anc(a, a)))
        for a in nodes:
            out.append(z3.Implies(z3.And(inside(a), f(a) >= 0), anc(a, f(a))))
            for b in terms:
                out.append(z3.Implies(z3.And(inside(a, b), anc(a, b), b != a),
                                      z3.And(f(a) >= 0, anc(f(a), b))))
        for a in terms:
            for b in terms:
                out.append(z3.Implies(anc(a, b), z3.And(b >= 0, b <= a)))
                for c in terms:
                    out.append(z3.Implies(z3.And(inside(a, b, c), anc(a, b), anc(b, c)), anc(a, c)))
        return out


def _closure_rule(rule: Callable, values: dict) -> Callable:
    """``rule`` with the cells of its closure named in ``values`` replaced (the real code, other data)."""
    code = rule.__code__
    missing = set(values) - set(code.co_freevars)
    if missing:
        raise TraceError(f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}: the catalogue rule no "
                         f"longer reads {', '.join(sorted(missing))}: update solvers/symbolic/catalog/indexed.py")
    cells = tuple(types.CellType(values[name]) if name in values else cell
                  for name, cell in zip(code.co_freevars, rule.__closure__))
    return types.FunctionType(code, rule.__globals__, rule.__name__, rule.__defaults__, cells)


def _indexed(name: str, source: str, given: dict, defaults: dict) -> SymbolicMask:
    n = z3.Int(N)
    q, k = z3.Int("q0"), z3.Int("k0")
    conditions = [n >= 1, n <= MAX_SYMBOLIC_VALUE]  # the domain bound of every statement (theory.limits)
    params: dict = {}
    if name == "document":
        causal = bool(given.get("causal", defaults.get("causal", False)))
        index = SymIndex("doc", "nondecreasing", SymInt(n, None))
        size, streams = n, ()
        template = make_document((1,), causal)  # its closure (doc, causal) is replaced below

        def program(tracer):
            index.tracer = tracer
            return _closure_rule(template, {"doc": index, "causal": causal})
    elif name == "xlnet":
        index = SymIndex("rank", "bijection", SymInt(n, None))
        size, streams = 2 * n, (("c", z3.IntVal(0)), ("g", n))
        template = make_xlnet((0,))

        def program(tracer):
            index.tracer = tracer
            return _closure_rule(template, {"rank": index, "n": SymInt(n, tracer)})
    else:  # tree
        p = z3.Int(SYMBOL["prefix"])
        prefix = given.get("prefix")
        if prefix is not None:
            require_non_negative("prefix", prefix)
            p_term = z3.IntVal(prefix)
        else:
            params["prefix"] = p_term = p
            conditions += [p >= 0, p <= MAX_SYMBOLIC_VALUE]
        index = Ancestry(SymInt(n, None))
        size, streams = p_term + n, (("p", z3.IntVal(0)), ("t", p_term))

        def program(tracer):
            index.tracer = tracer

            def rule(q, k):  # tree_table: prefix causal; a node reads the prefix, itself and its ancestors
                cached_q, cached_k = q < p_term_s, k < p_term_s
                both_cached = cached_q & cached_k & (k <= q)
                node_reads_prefix = ~cached_q & cached_k
                nodes = ~cached_q & ~cached_k & index.ancestor(q - p_term_s, k - p_term_s)
                return both_cached | node_reads_prefix | nodes

            p_term_s = SymInt(p_term, tracer)
            return rule

    def setup(tracer, _program):
        return rebind(program(tracer), tracer)

    inside = [q >= 0, k >= 0, q < size, k < size, *conditions]
    high = 3 * MAX_SYMBOLIC_VALUE  # sizes n, 2n, p + n under the domain bound: positions are int64 tensors below it
    positions = [_input(q, (0, high), "int64"), _input(k, (0, high), "int64")]
    traced: Traced = trace(program, positions, setup=setup, source=source, assumptions=inside, n=n)
    conds = conditions + [c for c in traced.conditions if not any(c.eq(x) for x in conditions)]
    mask = SymbolicMask(source, n, z3.simplify(size) if isinstance(size, z3.ExprRef) else size, params,
                        traced.formula, q, k, conds, traced.obligations, [index], streams,
                        _statement(n, params, conds, False))
    if name == "document" and "lengths" in given:
        return fix_index(mask, doc=document_ids(given["lengths"]))
    if name == "xlnet" and "order" in given:
        return fix_index(mask, rank=ranks(given["order"]))
    if name == "tree" and "parents" in given:
        tree_table(given["parents"], prefix if prefix is not None else 0)  # the catalogue's checks, same words
        return fix_index(mask, parent=given["parents"])
    return mask


def _table(values: Sequence[int], outside) -> z3.ExprRef:
    """``lambda i: values[i]`` as a term of ``Var(0)`` (``outside`` off the end)."""
    x = z3.Var(0, z3.IntSort())
    out = outside
    for i in reversed(range(len(values))):
        out = z3.If(x == i, z3.IntVal(int(values[i])), out)
    return out


def _ancestors(parents: Sequence[int]) -> list[set[int]]:
    """The ancestor-or-self set of each node, walked up the parent array (independent of tree_table)."""
    out = []
    for i in range(len(parents)):
        seen, j = set(), i
        while j >= 0:
            seen.add(j)
            j = int(parents[j])
        out.append(seen)
    return out


def fix_index(mask: SymbolicMask, **values: Sequence[int]) -> SymbolicMask:
    """``mask`` with its index tensors fixed to concrete ``values`` (by index name: ``doc``, ``rank``, ``parent``).

    ``n`` becomes the length of the values; the result has no index tensors left (when
    all are given), so :meth:`SymbolicMask.concrete` evaluates it. A lookup outside the
    values reads an unknown constant, so a grid entry that depends on one does not
    reduce (``concrete`` then says so) instead of reading a made-up value.

    >>> from hasse.solvers.symbolic.catalog import symbolic_mask
    >>> m = fix_index(symbolic_mask("document:causal=true"), doc=[0, 0, 1])
    >>> m.concrete(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    unknown = set(values) - {ix.name for ix in mask.indexes}
    if unknown:
        raise InputError(f"{mask.name} has no index tensor {', '.join(sorted(unknown))}; "
                         f"its index tensors: {', '.join(ix.name for ix in mask.indexes) or 'none'}")
    lengths = {len(v) for v in values.values()}
    if len(lengths) != 1:
        raise InputError(f"{mask.name}: index tensors of different lengths {sorted(lengths)}")
    n = lengths.pop()
    funs, left = [], []
    for ix in mask.indexes:
        if ix.name not in values:
            left.append(ix)
            continue
        vals = [int(v) for v in values[ix.name]]
        funs.append((ix.function, _table(vals, z3.Int(f"{ix.name}_outside"))))
        if isinstance(ix, Ancestry):
            a, b = z3.Var(0, z3.IntSort()), z3.Var(1, z3.IntSort())
            body = z3.BoolVal(False)
            for i, anc in reversed(list(enumerate(_ancestors(vals)))):
                body = z3.If(a == i, z3.Or([b == j for j in sorted(anc)]), body)
            funs.append((ix.relation, body))
    n_value = z3.IntVal(n)

    def sub(e):
        if not isinstance(e, z3.ExprRef):
            return e
        e = z3.substitute(e, (mask.n, n_value)) if not z3.is_int_value(mask.n) else e
        return z3.simplify(z3.substitute_funs(e, *funs)) if funs else z3.simplify(e)

    return replace(mask, name=mask.name, n=n_value, size=sub(mask.size), formula=sub(mask.formula),
                   conditions=[sub(c) for c in mask.conditions],
                   obligations=[(sub(o), why) for o, why in mask.obligations], indexes=left,
                   streams=tuple((s, sub(p)) for s, p in mask.streams),
                   statement=_statement(n_value, mask.params, [c for c in map(sub, mask.conditions)
                                                               if not z3.is_true(c)], True))


def index_instances(mask: SymbolicMask, n: int, limit: int = 8, seed: int = 0) -> list[dict[str, list[int]]]:
    """Up to ``limit`` concrete values of ``mask``'s index tensors at ``n`` (for :func:`fix_index` and re-checks).

    Each is a dict by index name, of the kind the index declares: ``nondecreasing`` —
    document ids of lengths (one document, ``n`` of length 1, then random cuts);
    ``bijection`` — a permutation (identity, reversed, then random); ``backward`` — a
    parent array (a chain, all roots, then random forests); ``any`` — random values in
    ``0 … n-1``. The first ones are the extreme cases; the rest are seeded, so the list is
    the same on every run.

    >>> from hasse.solvers.symbolic.catalog import symbolic_mask
    >>> index_instances(symbolic_mask("xlnet"), 3, limit=2)
    [{'rank': [0, 1, 2]}, {'rank': [2, 1, 0]}]
    """
    rng = random.Random(seed)
    if not mask.indexes:
        return [{}]

    def one(prop: str, i: int) -> list[int]:
        if prop == "nondecreasing":
            if i == 0:
                return [0] * n
            if i == 1:
                return list(range(n))
            cuts = sorted(rng.sample(range(1, n), rng.randint(0, n - 1))) if n > 1 else []
            return [sum(1 for c in cuts if c <= p) for p in range(n)]
        if prop == "bijection":
            if i == 0:
                return list(range(n))
            if i == 1:
                return list(range(n))[::-1]
            return rng.sample(range(n), n)
        if prop == "backward":
            if i == 0:
                return list(range(-1, n - 1))
            if i == 1:
                return [-1] * n
            return [rng.randint(-1, p - 1) for p in range(n)]
        return [rng.randrange(n) for _ in range(n)]

    out: list[dict[str, list[int]]] = []
    for i in range(limit):
        values = {ix.name: one(ix.prop, i) for ix in mask.indexes}
        if values not in out:
            out.append(values)
    return out

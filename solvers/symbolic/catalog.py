"""Symbolic forms of every catalogue mask and layout: a spec whose left-out parameters are symbolic.

:func:`symbolic_mask` reads a catalogue spec and returns a
:class:`~solvers.symbolic.mask.SymbolicMask` in which every *integer* parameter the
spec leaves out, ``n`` included, is a Z3 variable: ``sliding_window`` is the window
for all ``n`` and all ``w >= 1``, ``sliding_window:w=8`` the window of 8 keys for all
``n``, ``block_two_stream`` Block Two-Stream for all ``n`` and all ``l >= 1`` with
``l | n``. A parameter that is a *choice* (``variant``) or a *Boolean* (``causal``)
takes its catalogue default when left out: it selects a program, not a number, and
a caller wanting both does the case split (two masks).

Where the catalogue's factory takes numbers, its real rule is traced
(:func:`~solvers.symbolic.mask.from_rule`; the factory's ``require_*`` checks become
the side conditions). Where it takes a list, the list becomes an index tensor
(:class:`~solvers.symbolic.terms.SymIndex`):

- ``document`` — ``doc``, the document id of each position, *nondecreasing*; the real
  rule of :func:`theory.masks.document.make_document` is traced with ``doc`` put in
  its closure (any nondecreasing sequence is the id sequence of some lengths, up to
  renaming the ids, which the rule only compares for equality);
- ``xlnet`` — ``rank``, the place of each token in the factorisation order, a
  *bijection* of ``0 … n-1``; the real rule of :func:`theory.masks.xlnet.make_xlnet`
  is traced with ``rank`` and ``n`` put in its closure;
- ``tree`` — ``parent``, *backward* (``-1`` for a root, else an earlier node), and the
  ancestor-or-self relation ``anc`` (:class:`Ancestry`), written by hand, since the
  catalogue's rule reads a precomputed table.

A given list (``document:lengths=2+3``) fixes the index tensor to those values
(:func:`fix_index`), which is also how the tests compare a symbolic form with the
concrete catalogue mask. ``n`` is the number of tokens (``lengths`` summed for
``document``, of tree nodes for ``tree``); the layout's streams are listed in
``SymbolicMask.streams`` by their first position.

:func:`symbolic_mask_mod` is the same for a user's ``file.py:function``.
Every problem with a spec raises :class:`~theory.errors.InputError` with one line.
"""

from __future__ import annotations

import types
from dataclasses import replace
from typing import Callable, Sequence

import z3

from hasse.solvers.symbolic.mask import (N, SymbolicMask, _free_constants, _input, describe_conditions, from_mask_mod,
                                         from_rule)
from hasse.theory.limits import MAX_SYMBOLIC_VALUE
from hasse.solvers.symbolic.terms import SymBool, SymIndex, SymInt, Untraceable, as_int
from hasse.solvers.symbolic.trace import Traced, TraceError, rebind, trace
from hasse.theory.errors import InputError
from hasse.theory.masks.bd3lm import make_bd3lm
from hasse.theory.masks.bidirectional import bidirectional_mask  # noqa: F401  (hand form below: np.ones has no term)
from hasse.theory.masks.block_causal import make_block_causal
from hasse.theory.masks.block_two_stream import make_block_two_stream
from hasse.theory.masks.butterfly import make_butterfly
from hasse.theory.masks.causal import causal_mask
from hasse.theory.masks.chunked import make_chunked
from hasse.theory.masks.document import document_ids, make_document
from hasse.theory.masks.prefix_lm import make_prefix_lm
from hasse.theory.masks.sliding_window import make_sliding_window, make_sliding_window_distance
from hasse.theory.masks.tree import tree_table
from hasse.theory.masks.xlnet import make_xlnet, ranks
from hasse.theory.params import require_block, require_non_negative, require_positive

# the Z3 name of each catalogue parameter (statements read "for all n >= 1 and all l >= 1 with l | n")
SYMBOL = {"n": "n", "window": "w", "block": "l", "d": "d", "chunk": "c", "prefix": "p"}


# --------------------------------------------------------------------------- factories traced


def _causal(n):
    return causal_mask


def _bidirectional(n):
    def rule(q, k):  # the catalogue's rule builds np.ones of the broadcast shape: no term; this is it
        return True

    return rule


def _sliding_window(n, window):
    return make_sliding_window(window)


def _sliding_window_distance(n, d):
    return make_sliding_window_distance(d)


def _prefix_lm(n, prefix):
    return make_prefix_lm(prefix)


def _block_causal(n, block):
    n, block = require_block(n, block)
    return make_block_causal(block)


def _chunked(n, chunk):
    return make_chunked(chunk)


def _recurrent(n, chunk):
    chunk = require_non_negative("chunk", chunk)
    return make_chunked(where_zero(chunk, n))  # chunk = 0: one chunk of n (the causal prefix), as build_recurrent


def where_zero(chunk, n):
    """``n`` where ``chunk == 0``, else ``chunk`` (a term: no branch, no path-local side condition)."""
    if isinstance(chunk, SymInt) or isinstance(n, SymInt):
        tracer = chunk.tracer if isinstance(chunk, SymInt) else n.tracer
        return SymInt(z3.If(as_int(chunk) == 0, as_int(n), as_int(chunk)), tracer)
    return chunk or n


def _bd3lm(n, block):
    return make_bd3lm(n, block)


def _block_two_stream(n, block, variant):
    return make_block_two_stream(n, block, variant)


def _butterfly(n):
    return make_butterfly(n)


# name -> (factory, integer parameters, size(n, **p), streams(n, **p), extra conditions(n, **p))
_TRACED: dict[str, tuple] = {
    "causal": (_causal, (), None, None, None),
    "bidirectional": (_bidirectional, (), None, None, None),
    "sliding_window": (_sliding_window, ("window",), None, None, None),
    "sliding_window_distance": (_sliding_window_distance, ("d",), None, None, None),
    "prefix_lm": (_prefix_lm, ("prefix",), None, None, lambda n, prefix: [prefix <= n]),
    "block_causal": (_block_causal, ("block",), None, None, None),
    "chunked": (_chunked, ("chunk",), None, None, None),
    "recurrent": (_recurrent, ("chunk",), None, None, None),
    "bd3lm": (_bd3lm, ("block",), lambda n, block: 2 * n, lambda n, block: (("xt", 0), ("x0", n)), None),
    "block_two_stream": (_block_two_stream, ("block",), lambda n, block, variant: 2 * n - block,
                         lambda n, block, variant: (("C", 0), ("Q", n - block)), None),
    "butterfly": (_butterfly, (), lambda n: 3 * n - 2, lambda n: (("F", 0), ("B", n - 1), ("P", 2 * n - 2)), None),
}

# concrete checks of a given value (the builder's own; relations between two given values below)
_CHECK = {"n": require_positive, "window": require_positive, "d": require_non_negative, "block": require_positive,
          "chunk": require_positive, "prefix": require_non_negative}
_CHECK_OF = {("recurrent", "chunk"): require_non_negative}

INDEXED = ("document", "xlnet", "tree")


def names() -> tuple[str, ...]:
    """The catalogue masks that have a symbolic form.

    >>> names()[:3]
    ('causal', 'bidirectional', 'sliding_window')
    """
    return tuple(_TRACED) + INDEXED


# --------------------------------------------------------------------------- the spec


def symbolic_mask(spec: str) -> SymbolicMask:
    """The symbolic form of the catalogue mask ``spec``; integer parameters left out are symbolic.

    >>> m = symbolic_mask("block_two_stream")
    >>> m.statement
    'for all 1 <= n <= 2^31 and all l >= 1 with l | n'
    >>> m.size
    2*n - l
    >>> symbolic_mask("sliding_window:w=2").concrete(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    >>> symbolic_mask("causal:m=3")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: causal:m=3: unknown parameter 'm' for causal; its parameters: n
    """
    from hasse.theory.catalog import canonical_keys, get_entry, parse_spec, parse_value

    source = spec.strip()
    name, raw = parse_spec(spec)
    entry = get_entry(name, "mask", source)
    if name not in names():
        raise InputError(f"{name} has no symbolic form yet; symbolic masks: {', '.join(names())}", source)
    raw = canonical_keys(entry, raw, source)
    given: dict = {}
    shared: dict[str, str] = {}  # parameter -> the symbol the user named (sliding_window:w=W)
    for key, text in raw.items():
        param = entry.param(key)
        if param is None:
            known = ", ".join(p.name for p in entry.params) or "none"
            raise InputError(f"unknown parameter {key!r} for {entry.name}; its parameters: {known}", source)
        if param.kind == "int" and text.strip().isidentifier():
            if not text.strip()[0].isupper():  # w=abc is a typo, not a symbol: symbols are capitalised (W)
                raise InputError(f"{param.name} must be an integer or a symbol with a capital initial (W: one "
                                 f"symbol shared by the specs naming it), got {text.strip()!r}", source)
            shared[key] = text.strip()  # symbolic, under that name: two specs naming W share it
            continue
        given[key] = parse_value(param, text, source)
    defaults = {p.name: p.default for p in entry.params if p.kind in ("choice", "bool")}
    try:
        mask = _indexed(name, source, given, defaults) if name in INDEXED else _traced(name, source, given, defaults)
    except InputError as exc:
        if exc.source is not None:
            raise
        raise InputError(str(exc), source) from None
    mask = _named_symbols(mask, shared, fixed_n=N in given) if shared else mask
    from hasse.solvers.symbolic.programs import CatalogProgram

    rule = _TRACED[name][:2] if name in _TRACED else None  # the re-check runs the catalogue's builder and rule
    mask.program = CatalogProgram(source, rule)
    return mask


def _named_symbols(mask: SymbolicMask, shared: dict[str, str], fixed_n: bool) -> SymbolicMask:
    """``mask`` with the parameters of ``shared`` renamed to the symbols the user wrote.

    ``hasse equiv sliding_window:w=W sliding_window_distance:d=W`` compares the two windows
    at the same value ``W`` for every ``W``, where ``w`` and ``d`` left out would range
    independently.

    >>> m = symbolic_mask("sliding_window:w=W")
    >>> m.statement, sorted(str(v) for v in m.params.values())
    ('for all 1 <= n <= 2^31 and all 1 <= W <= 2^31', ['W'])
    """
    if N in shared:
        raise InputError("n cannot be named: it is the length every statement ranges over", mask.name)
    pairs = [(mask.params[key], z3.Int(symbol)) for key, symbol in shared.items() if key in mask.params]

    def sub(e):
        return z3.substitute(e, *pairs) if pairs and isinstance(e, z3.ExprRef) else e

    params = {key: sub(term) for key, term in mask.params.items()}
    conditions = [sub(c) for c in mask.conditions]
    return replace(mask, params=params, formula=sub(mask.formula), size=sub(mask.size), conditions=conditions,
                   obligations=[(sub(o), why) for o, why in mask.obligations],
                   streams=tuple((s, sub(p)) for s, p in mask.streams),
                   statement=_statement(mask.n, params, conditions, fixed_n))


def _traced(name: str, source: str, given: dict, defaults: dict) -> SymbolicMask:
    factory, ints, size, streams, extra = _TRACED[name]
    for key in (N, *ints):
        if key in given:
            _CHECK_OF.get((name, key), _CHECK[key])(key, given[key])
    if N in given and "block" in given:
        require_block(given[N], given["block"])
    if N in given and "prefix" in given and given["prefix"] > given[N]:
        raise InputError(f"prefix must be between 0 and n = {given[N]}, got {given['prefix']}")
    params: dict = {N: given.get(N)}
    params.update({key: given.get(key) for key in ints})
    params.update({key: given.get(key, default) for key, default in defaults.items()})
    extra_conditions = ()
    if extra is not None:
        n_term = z3.Int(N) if params[N] is None else z3.IntVal(params[N])
        terms = {k: (z3.Int(k) if params[k] is None else z3.IntVal(params[k])) for k in ints}
        extra_conditions = [c for c in extra(n_term, **terms) if not z3.is_true(z3.simplify(c))]
    mask = from_rule(source, factory, params=params, size=size, streams=streams, conditions=extra_conditions)
    return _renamed(mask, fixed_n=params[N] is not None)


def _renamed(mask: SymbolicMask, fixed_n: bool) -> SymbolicMask:
    """``mask`` with each parameter's Z3 variable renamed to its mathematical name (block -> l)."""
    pairs = [(term, z3.Int(SYMBOL.get(key, key))) for key, term in mask.params.items()
             if SYMBOL.get(key, key) != key]

    def sub(e):
        return z3.substitute(e, *pairs) if pairs and isinstance(e, z3.ExprRef) else e

    params = {key: sub(term) for key, term in mask.params.items()}
    conditions = _pruned([sub(c) for c in mask.conditions])
    return replace(mask, params=params, formula=sub(mask.formula), size=z3.simplify(sub(mask.size)) if fixed_n else sub(mask.size),
                   conditions=conditions,
                   obligations=[(sub(o), why) for o, why in mask.obligations],
                   streams=tuple((s, sub(z3.IntVal(p) if isinstance(p, int) else p)) for s, p in mask.streams),
                   statement=_statement(mask.n, params, conditions, fixed_n))


def _statement(n, params: dict, conditions: list, fixed_n: bool) -> str:
    """The side conditions in words; with ``n`` given, its name is left out (``for all w >= 1``)."""
    named = {str(v): v for v in params.values()}
    if not fixed_n:
        return describe_conditions(n, named, conditions)
    if not params:
        return f"at n = {n}"
    first, *rest = params.values()
    return describe_conditions(first, {str(v): v for v in rest}, conditions) + f" at n = {n}"


def _pruned(conditions: list) -> list:
    """``conditions`` without those the others imply (``If(c == 0, n, c) >= 1`` given ``n >= 1, c >= 0``)."""
    out = list(conditions)
    for c in list(reversed(out)):
        rest = [x for x in out if x is not c]
        solver = z3.Solver()
        solver.set("timeout", 1000)
        solver.add(*rest, z3.Not(c))
        if solver.check() == z3.unsat:
            out = rest
    return out


# --------------------------------------------------------------------------- index tensors


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
                         f"longer reads {', '.join(sorted(missing))}: update solvers/symbolic/catalog.py")
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


# --------------------------------------------------------------------------- fixing an index tensor


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

    >>> index_instances(symbolic_mask("xlnet"), 3, limit=2)
    [{'rank': [0, 1, 2]}, {'rank': [2, 1, 0]}]
    """
    import random

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


# --------------------------------------------------------------------------- a user's file


def symbolic_mask_mod(path: str, fn: str, heads: int | None = None, *, code=None, fallback=None,
                      batch: int | None = None, assume: dict | None = None,
                      strict_assume: bool = True) -> SymbolicMask:
    """The mask_mod ``fn`` of the file ``path`` (a name, or a factory call with literal arguments) for all ``n``.

    The file is loaded as ``hasse`` loads any mask_mod (:func:`theory.mask_mod.resolve_function`,
    with the permission ``code``: :data:`theory.user_code.ARGUMENT` when the command line
    names it; None: refused); the tracer runs the function on symbolic positions. The
    import, the factory call and the tracing are user code: one bounded run
    (:func:`theory.user_code.run_here`: rehearsed in a child, then here). What the tracer
    cannot model raises :class:`~solvers.symbolic.trace.TraceError` naming the file and line.
    ``mask.program`` runs the file itself for the re-check (:class:`~solvers.symbolic.recheck.MaskModProgram`,
    with ``fallback``: the torch evaluator the command line passes, as ``hasse analyze``).
    ``heads``, ``batch`` and ``assume`` (closure tensors as index tensors) as in
    :func:`~solvers.symbolic.mask.from_mask_mod`.
    """
    from hasse.theory.inputs.mask_mod import resolve_function
    from hasse.theory.user_code import require_permission, run_here

    source = f"{path}:{fn}"
    require_permission(code, source)
    mask = run_here(lambda: from_mask_mod(source, resolve_function(path, fn, source, code), heads=heads,
                                          batch=batch, assume=assume, strict_assume=strict_assume),
                    source=source, what="mask_mod", path=path, keep=(TraceError, Untraceable))
    from hasse.solvers.symbolic.programs import MaskModProgram

    # the re-check runs this program as `hasse analyze FILE.py:fn --n N` does (fallback: torch, from the CLI)
    mask.program = MaskModProgram(path, fn, source, code, heads, fallback)
    return mask


def free_names(mask: SymbolicMask) -> set[str]:
    """The names of the Z3 constants in ``mask``'s formula (positions, sizes, parameters).

    >>> sorted(free_names(symbolic_mask("sliding_window")))
    ['k0', 'q0', 'w']
    """
    return {str(c) for c in _free_constants(mask.formula)}


__all__ = ["Ancestry", "fix_index", "free_names", "index_instances", "names", "symbolic_mask", "symbolic_mask_mod", "Untraceable"]

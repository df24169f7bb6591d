"""Task families by formulas: which token each position holds and predicts, for every ``n``.

:func:`symbolic_task` turns a task spec of the catalogue (``butterfly``,
``block_two_stream:variant=clique``, ``bd3lm:block=2``, ``xlnet``, ``causal_lm``, ``mlm``,
``packed``, and the bad designs ``bad_*``) into a :class:`~solvers.symbolic.task.SymbolicTask`.
Parameters left out of the spec are symbolic (``n``, ``block``, ``window``), with the side
conditions the builders check (``n >= 1``, ``l >= 1``, ``l | n``); parameters given are
constants. The layouts are those of design §4 (and ``theory/tasks/*.py``), position ``p``
in ``0 … size − 1``:

====================== =========== ==================================================================
task                   size        holds(p, t) / predicts(p, t)
====================== =========== ==================================================================
butterfly              3n − 2      F_i at i (i ≤ n−2) and B_i at n−2+i (1 ≤ i) hold x_i;
                                   P_k at 2n−2+k holds x_{k−1}, x_{k+1} (those inside) and predicts x_k
block_two_stream       2n − l      C_i at i (i < n − l) holds x_i; Q_t at n−l+t predicts x_t
bd3lm                  2n          xt_i at i predicts x_i; x0_i at n+i holds x_i
xlnet                  2n          c_i at i holds x_i; g_i at n+i predicts x_i (order: a permutation)
causal_lm              n           i holds x_i, predicts x_{i+1} (i < n − 1)
mlm                    n           i holds x_i unless masked(i); predicts x_i when masked(i)
packed                 n           i holds x_i, predicts x_{i+1} when doc(i+1) = doc(i); group doc(i)
====================== =========== ==================================================================

Lists a task depends on are modelled, not enumerated (each statement is then for all of them):

- ``xlnet``'s factorisation order by its ranks, an index tensor ``rank`` with the declared
  property *bijection* (:class:`~solvers.symbolic.terms.SymIndex`) over ``0 … n−1``;
- ``packed``'s document lengths by the document id of each position, an index tensor
  ``doc`` with the property *nondecreasing* (every non-decreasing sequence has the
  equalities of some list of lengths, and conversely), ``n`` = the sum of the lengths;
- ``mlm``'s masked positions by an uninterpreted predicate ``masked(i)`` (any subset).

A list given in the spec (``xlnet:order=2+0+1``, ``packed:lengths=3+2``, ``mlm:masked=1``)
fixes ``n`` and the values, as side conditions of the task.

The masks are traced from the catalogue's rule factories (:func:`~solvers.symbolic.mask.from_rule`),
except the ones over a list (xlnet, packed: the same rules, written here on the index
tensor) and the bad designs (their flaw written on the case study's rule). Their lookups
in an index tensor include those of ``predicts`` and ``group`` (``doc(q + 1)``), so that
``mask.facts(pairs)`` carries the index axioms a task query needs.

:func:`known_invariant` gives, for each task, the relation ``I`` of the catalogue for the
claim "leak-free at every depth" (the closure of the case study's mask, the causal order
for the causal and packed tasks, everything for the bidirectional ones), written as its own
formula, never derived from the mask: the claim checks ``M ∨ I ⊆ I``, ``I`` transitive and
no target inside ``I``, so a wrong invariant is refuted, not trusted.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import z3

from hasse.solvers.symbolic.mask import N, SymbolicMask, describe_conditions, from_rule
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.symbolic.terms import SymIndex, SymInt
from hasse.solvers.symbolic.trace import TraceError
from hasse.theory.errors import InputError
from hasse.theory.masks.bd3lm import make_bd3lm
from hasse.theory.masks.block_two_stream import make_block_two_stream
from hasse.theory.masks.butterfly import make_butterfly
from hasse.theory.params import require_block, require_non_negative, require_positive

TASKS = ("butterfly", "block_two_stream", "bd3lm", "xlnet", "causal_lm", "mlm", "packed",
         "bad_butterfly_self", "bad_butterfly_crossed", "bad_block_own_content", "bad_mlm_unmasked",
         "bad_packed_window", "bad_block_query_history")


# --------------------------------------------------------------------------- the spec


def _parse(spec: str) -> tuple[str, dict]:
    """``(name, values given)`` of a task spec, values parsed by the catalogue's parameter kinds."""
    import hasse.theory.catalog  # noqa: F401  (registers the entries)
    from hasse.theory.spec import canonical_keys, get_entry, parse_spec, parse_value

    name, raw = parse_spec(spec)
    source = spec.strip()
    if name not in TASKS:
        raise InputError(f"no symbolic form for the task {name!r}; tasks for every n: {', '.join(TASKS)}", source)
    entry = get_entry(name, "task", source)
    raw = canonical_keys(entry, raw, source)
    values = {}
    for key, text in raw.items():
        param = entry.param(key)
        if param is None:
            known = ", ".join(p.name for p in entry.params)
            raise InputError(f"unknown parameter {key!r} for {name}; its parameters: {known}", source)
        values[key] = parse_value(param, text, source)
    return name, values


# The list a concrete task needs when neither the spec nor the caller gives it (a re-check at n
# and the integer parameters only): one instance, chosen to exercise what the task is about.
_DEFAULT_LISTS: dict[str, Callable[[int], dict]] = {
    "xlnet": lambda n: {"order": tuple(range(n))},  # left to right
    "mlm": lambda n: {"masked": tuple(range(0, n, 2))},  # every other token
    "packed": lambda n: {"lengths": (2,) * (n // 2) + (1,) * (n % 2)},  # boundaries and labels both
    "bad_packed_window": lambda n: {"lengths": (1,) * n},  # every boundary: the flaw shows wherever it can
}


def _concrete(name: str, fixed: dict) -> Callable:
    """``concrete(n, **params)``: the catalogue's task at these values (the spec's own values kept).

    A list the task needs (``order``, ``masked``, ``lengths``) comes from the spec, else from
    ``params``, else from :data:`_DEFAULT_LISTS` (one instance: the modelled list stands for all
    of them, so a re-check there is of that instance only; :func:`lists_from_model` gives the
    lists of a Z3 model instead).
    """
    import hasse.theory.catalog  # noqa: F401
    from hasse.theory.catalog import build_task, get_entry
    from hasse.theory.spec import format_value

    entry = get_entry(name, "task")
    has_n = entry.param(N) is not None

    def concrete(n: int, **params):
        values = {**fixed, **params}
        if name in _DEFAULT_LISTS:
            values = {**_DEFAULT_LISTS[name](n), **values}
        if has_n:
            values[N] = n
        items = [f"{p.name}={format_value(p, values[p.name])}" for p in entry.params if p.name in values]
        return build_task(f"{name}:{','.join(items)}" if items else name)

    return concrete


def _int_or_none(values: dict, key: str):
    v = values.get(key)
    return None if v is None else int(v)


def _inside_tokens(n, t) -> z3.BoolRef:
    return z3.And(t >= 0, t < n)


# --------------------------------------------------------------------------- rule factories (traced)


def _causal_rule(n):
    """Causal attention (theory.masks.causal), as a factory for :func:`from_rule`."""
    require_positive("n", n)

    def rule(q, k):
        return k <= q

    return rule


def _full_rule(n):
    """Bidirectional attention (theory.masks.bidirectional)."""
    require_positive("n", n)

    def rule(q, k):
        return True

    return rule


# A factory over an index tensor is made by a closure: the tracer rebinds the factory it is
# given (numpy and the parameter checks replaced), not the other functions of this module.


def _xlnet_factory(rank: SymIndex):
    def make_xlnet(n):
        """theory.masks.xlnet's rule with ``rank`` an index tensor; ``q % n`` written as ``q − n`` past ``n``."""
        require_positive("n", n)

        def rule(q, k):
            q_query, k_query = q >= n, k >= n
            rq = rank[np.where(q_query, q - n, q)]
            rk = rank[np.where(k_query, k - n, k)]
            content = ~q_query & ~k_query & (rk <= rq)
            query = q_query & ~k_query & (rk < rq)
            itself = q_query & (q == k)
            return content | query | itself

        return rule

    return make_xlnet


def _packed_factory(doc: SymIndex):
    def make_packed(n, window):
        """theory.tasks.prior_art.packed's mask: causal within a document, inside ``window`` keys when > 0."""
        require_positive("n", n)
        window = require_non_negative("window", window)

        def rule(q, k):
            return (doc[q] == doc[k]) & (k <= q) & ((window == 0) | (q - window < k))

        return rule

    return make_packed


def _sliding_rule(n, window):
    """theory.masks.sliding_window's rule ``q − window < k <= q`` (bad_packed_window's mask)."""
    require_positive("n", n)
    window = require_positive("window", window)

    def rule(q, k):
        return (q - window < k) & (k <= q)

    return rule


def _crossed_rule(n):
    """bad_butterfly_crossed: Butterfly's rule, plus every F position attending every B position."""
    base = make_butterfly(n)

    def rule(q, k):
        return base(q, k) | ((q < n - 1) & (k >= n - 1) & (k < 2 * n - 2))

    return rule


def _own_content_rule(n, block):
    """bad_block_own_content on 2n positions: C causal; Q_t → C_j iff j//l <= t//l; Q_t → Q_u same block, u <= t."""
    n, block = require_block(n, block)

    def rule(q, k):
        q_query, k_query = q >= n, k >= n
        t, u = q - n, k - n
        cc = ~q_query & ~k_query & (k <= q)
        qc = q_query & ~k_query & (k // block <= t // block)
        qq = q_query & k_query & (u // block == t // block) & (u <= t)
        return cc | qc | qq

    return rule


def _query_history_rule(n, block):
    """bad_block_query_history: Block Two-Stream (chain) plus Q_t → Q_u when u//l < t//l."""
    base = make_block_two_stream(n, block, "chain")
    n, block = require_block(n, block)

    def rule(q, k):
        content = n - block
        t, u = q - content, k - content
        extra = (q >= content) & (k >= content) & (u // block < t // block)
        return base(q, k) | extra

    return rule


# --------------------------------------------------------------------------- the tasks


def symbolic_task(spec: str) -> SymbolicTask:
    """The task named by ``spec`` for every value of the parameters it leaves out (module docstring).

    >>> t = symbolic_task("butterfly")
    >>> str(t.mask.size), t.mask.statement
    ('3*n - 2', 'for all n >= 1')
    >>> z3.simplify(z3.substitute(t.holds(z3.IntVal(5), z3.IntVal(0)), (t.n, z3.IntVal(3))))  # P_1 holds x_0
    True
    >>> symbolic_task("ar:n=3")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: ar:n=3: no symbolic form for the task 'ar'; tasks for every n: butterfly, block_two_stream, bd3lm, xlnet, causal_lm, mlm, packed, bad_butterfly_self, bad_butterfly_crossed, bad_block_own_content, bad_mlm_unmasked, bad_packed_window, bad_block_query_history
    """
    name, values = _parse(spec)
    try:
        _check_values(name, values)
        task = _BUILDERS[name](spec.strip(), name, values)
    except InputError as exc:
        if exc.source is not None:
            raise
        raise InputError(str(exc), spec.strip()) from None
    solver = z3.Solver()
    solver.set("timeout", 5000)
    solver.add(*task.all_conditions())
    if solver.check() == z3.unsat:  # a statement under impossible conditions would hold vacuously
        raise InputError(f"no value satisfies the side conditions ({task.statement})", spec.strip())
    return task


def _check_values(name: str, values: dict) -> None:
    """The checks the catalogue's builders make on the values a spec gives (without building anything)."""
    from hasse.theory.params import require_int_list

    n = require_positive("n", values[N]) if N in values else None
    if "block" in values:
        block = require_positive("block", values["block"])
        if n is not None:
            require_block(n, block)
    if "window" in values:
        if name == "bad_packed_window":
            require_positive("window", values["window"])
        else:
            require_non_negative("window", values["window"])
    if "masked" in values:
        masked = require_int_list("masked", values["masked"])
        for i in masked:
            if i < 0 or (n is not None and i >= n):
                raise InputError(f"masked index {i} is out of range" + (f": the sample has tokens 0…{n - 1}"
                                                                         if n is not None else ""))
        if len(set(masked)) != len(masked):
            raise InputError(f"masked index {next(i for i in masked if masked.count(i) > 1)} is given twice")
    if "order" in values:
        from hasse.theory.masks.xlnet import ranks

        ranks(values["order"])
    if "lengths" in values:
        from hasse.theory.masks.document import document_ids

        document_ids(values["lengths"])


def _traced(spec: str, factory, **kwargs) -> SymbolicMask:
    """:func:`from_rule`, each parameter's Z3 variable then named as the catalogue's forms name it
    (``block`` → ``l``, ``window`` → ``w``: :data:`solvers.symbolic.catalog.SYMBOL`), so that a task
    and a catalogue mask share their symbols (``--task`` through a MASK, ``--param-range``)."""
    from hasse.solvers.symbolic.catalog import SYMBOL

    mask = from_rule(spec, factory, **kwargs)
    pairs = [(term, z3.Int(SYMBOL[key])) for key, term in mask.params.items() if SYMBOL.get(key, key) != key]
    if not pairs:
        return mask

    def sub(e):
        return z3.substitute(e, *pairs) if isinstance(e, z3.ExprRef) else e

    mask.params = {key: sub(term) for key, term in mask.params.items()}
    mask.formula, mask.size = sub(mask.formula), sub(mask.size)
    mask.conditions = [sub(c) for c in mask.conditions]
    mask.obligations = [(sub(o), why) for o, why in mask.obligations]
    mask.streams = tuple((name, sub(p)) for name, p in mask.streams)
    for index in mask.indexes:
        index.lookups = [sub(t) for t in index.lookups]
    return mask


def statement_of(n, params: dict, conditions: list) -> str:
    """The side conditions in words, by the symbols' own names; ``n`` given: ``at n = 3``."""
    named = {str(v): v for v in params.values()}
    conditions = [c for c in conditions if not z3.is_true(z3.simplify(c))]
    if not z3.is_int_value(n):
        return describe_conditions(n, named, conditions)
    if not named:
        return f"at n = {n}"
    first, *rest = named.values()
    return describe_conditions(first, {str(v): v for v in rest}, conditions) + f" at n = {n}"


def _task(spec, name, values, mask, holds, predicts, group=None, conditions=()) -> SymbolicTask:
    conditions = list(conditions)
    mask.size = z3.simplify(mask.size) if z3.is_int_value(mask.n) else mask.size
    statement = statement_of(mask.n, mask.params, conditions + list(mask.conditions))
    mask.statement = statement_of(mask.n, mask.params, list(mask.conditions))
    return SymbolicTask(spec, mask, holds, predicts, group, _concrete(name, values), conditions, statement)


def _butterfly(spec, name, values, *, self_=False, crossed=False) -> SymbolicTask:
    n_fixed = _int_or_none(values, N)
    factory = _crossed_rule if crossed else make_butterfly
    mask = _traced(spec, factory, params={N: n_fixed}, size=lambda n: 3 * n - 2,
                     streams=lambda n: (("F", z3.IntVal(0)), ("B", n - 1), ("P", 2 * n - 2)))
    n = mask.n
    b_start, p_start = n - 1, 2 * n - 2

    def holds(p, t):
        forward = z3.And(p < b_start, t == p)
        backward = z3.And(p >= b_start, p < p_start, t == p - b_start + 1)
        k = p - p_start
        centre = z3.And(p >= p_start, t == k) if self_ else z3.And(p >= p_start, z3.Or(t == k - 1, t == k + 1))
        return z3.And(_inside_tokens(n, t), z3.Or(forward, backward, centre))

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p >= p_start, t == p - p_start)

    return _task(spec, name, values, mask, holds, predicts)


def _block_two_stream(spec, name, values, *, history=False) -> SymbolicTask:
    variant = "chain" if history else values.get("variant", "chain")
    params = {N: _int_or_none(values, N), "block": _int_or_none(values, "block")}
    if history:
        mask = _traced(spec, _query_history_rule, params=params, size=lambda n, block: 2 * n - block)
    else:
        mask = _traced(spec, make_block_two_stream, params={**params, "variant": variant},
                         size=lambda n, block, variant: 2 * n - block)
    n, block = mask.n, _param(mask, "block", values)
    content = n - block
    mask.streams = (("C", z3.IntVal(0)), ("Q", content))

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p < content, t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p >= content, t == p - content)

    return _task(spec, name, values, mask, holds, predicts)


def _param(mask: SymbolicMask, key: str, values: dict):
    """The Z3 term of a parameter: the symbol when left out, the constant when given."""
    return mask.params[key] if key in mask.params else z3.IntVal(int(values[key]))


def _bd3lm(spec, name, values) -> SymbolicTask:
    mask = _traced(spec, make_bd3lm, params={N: _int_or_none(values, N), "block": _int_or_none(values, "block")},
                     size=lambda n, block: 2 * n,
                     streams=lambda n, block: (("xt", z3.IntVal(0)), ("x0", n)))
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p >= n, t == p - n)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p < n, t == p)

    return _task(spec, name, values, mask, holds, predicts)


def _xlnet(spec, name, values) -> SymbolicTask:
    order = values.get("order")
    n_term = z3.Int(N) if order is None else z3.IntVal(len(order))
    rank = SymIndex("rank", "bijection", SymInt(n_term, None))
    conditions = []
    if order is not None:
        from hasse.theory.masks.xlnet import ranks

        conditions = [rank.function(z3.IntVal(i)) == int(r) for i, r in enumerate(ranks(order))]
    mask = _traced(spec, _xlnet_factory(rank), params={N: None if order is None else len(order)},
                     size=lambda n: 2 * n, streams=lambda n: (("c", z3.IntVal(0)), ("g", n)), indexes=[rank])
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p < n, t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p >= n, t == p - n)

    return _task(spec, name, values, mask, holds, predicts, conditions=conditions)


def _causal_lm(spec, name, values) -> SymbolicTask:
    mask = _traced(spec, _causal_rule, params={N: _int_or_none(values, N)})
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), t == p + 1)

    return _task(spec, name, values, mask, holds, predicts)


MASKED = z3.Function("masked", z3.IntSort(), z3.BoolSort())  # mlm's masked positions (any subset)


def _mlm(spec, name, values, *, unmasked=False) -> SymbolicTask:
    masked_list = values.get("masked")
    n_fixed = _int_or_none(values, N)
    mask = _traced(spec, _full_rule, params={N: n_fixed})
    n = mask.n
    conditions = []
    if unmasked:
        def is_masked(p):
            return z3.BoolVal(False)
    elif masked_list is not None:
        chosen = tuple(int(i) for i in masked_list)

        def is_masked(p):
            return z3.Or([p == i for i in chosen])

        conditions = [n >= max(chosen) + 1] if chosen else []
    else:
        def is_masked(p):
            return MASKED(p)

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), t == p, z3.Not(is_masked(p)))

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), t == p, z3.BoolVal(True) if unmasked else is_masked(p))

    return _task(spec, name, values, mask, holds, predicts, conditions=conditions)


def _packed(spec, name, values, *, bad=False) -> SymbolicTask:
    lengths = values.get("lengths")
    n_term = z3.Int(N) if lengths is None else z3.IntVal(sum(int(v) for v in lengths))
    doc = SymIndex("doc", "nondecreasing", SymInt(n_term, None))
    conditions = []
    if lengths is not None:
        from hasse.theory.masks.document import document_ids

        conditions = [doc.function(z3.IntVal(i)) == int(d) for i, d in enumerate(document_ids(lengths))]
    n_value = None if lengths is None else int(sum(int(v) for v in lengths))
    window = _int_or_none(values, "window")
    if bad:
        mask = _traced(spec, _sliding_rule, params={N: n_value, "window": window})
    else:
        mask = _traced(spec, _packed_factory(doc), params={N: n_value, "window": window},
                         indexes=[doc])
    if bad:
        mask.indexes.append(doc)
    for term in (mask.q, mask.k, mask.q + 1, mask.k + 1):  # the lookups of group and predicts, for facts()
        if not any(term.eq(x) for x in doc.lookups):
            doc.lookups.append(term)
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), t == p + 1, doc.function(p + 1) == doc.function(p))

    def group(p):
        return doc.function(p)

    return _task(spec, name, values, mask, holds, predicts, group, conditions=conditions)


_BUILDERS: dict[str, Callable[..., SymbolicTask]] = {
    "butterfly": _butterfly,
    "block_two_stream": _block_two_stream,
    "bd3lm": _bd3lm,
    "xlnet": _xlnet,
    "causal_lm": _causal_lm,
    "mlm": _mlm,
    "packed": _packed,
    "bad_butterfly_self": lambda s, nm, v: _butterfly(s, nm, v, self_=True),
    "bad_butterfly_crossed": lambda s, nm, v: _butterfly(s, nm, v, crossed=True),
    "bad_block_own_content": None,  # below
    "bad_mlm_unmasked": lambda s, nm, v: _mlm(s, nm, v, unmasked=True),
    "bad_packed_window": lambda s, nm, v: _packed(s, nm, v, bad=True),
    "bad_block_query_history": lambda s, nm, v: _block_two_stream(s, nm, v, history=True),
}


def _own_content(spec, name, values) -> SymbolicTask:
    mask = _traced(spec, _own_content_rule, params={N: _int_or_none(values, N), "block": _int_or_none(values, "block")},
                     size=lambda n, block: 2 * n, streams=lambda n, block: (("C", z3.IntVal(0)), ("Q", n)))
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p < n, t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p >= n, t == p - n)

    return _task(spec, name, values, mask, holds, predicts)


_BUILDERS["bad_block_own_content"] = _own_content


# --------------------------------------------------------------------------- invariants


def known_invariant(task: SymbolicTask) -> SymbolicMask | None:
    """The catalogue's relation ``I(q, k)`` ("``q`` may hold what ``k`` holds") for leak-free at every depth.

    A :class:`SymbolicMask` over the task's symbols (``.allowed(q, k)``; its ``facts`` carry the
    index axioms), written as its own formula from the layouts of design §4:

    - Butterfly (and its bad designs): ``F`` causal, ``B`` anti-causal, ``P_k`` reading
      ``F_{<k}`` and ``B_{>k}``, and the diagonal (the mask is its own closure);
    - Block Two-Stream (each variant; ``bad_block_query_history`` with its earlier blocks'
      queries): content causal, ``Q_t`` reading content of earlier blocks and the queries of
      its own block (earlier ones for chain); ``bad_block_own_content``: the block-causal version;
    - BD3-LM: same-half same-block, ``x_t`` reading earlier clean blocks, clean block-causal;
    - XLNet: ``rank(k) <= rank(q)`` into content (strictly from a query), each query itself;
    - causal_lm (through any causal mask, a sliding window included): ``k <= q``;
      packed (and bad_packed_window): ``doc(k) = doc(q)`` and ``k <= q``; mlm: every pair.

    None for a task with no catalogue invariant. The claim checks the three conditions.

    >>> t = symbolic_task("causal_lm")
    >>> known_invariant(t).allowed(3, 2)
    2 <= 3
    """
    from hasse.theory.spec import parse_spec

    name, _ = parse_spec(task.name.split(" through ")[0])
    mask = task.mask
    n, q, k = mask.n, mask.q, mask.k
    indexes = []
    if name in ("butterfly", "bad_butterfly_self", "bad_butterfly_crossed"):
        formula = _butterfly_closure(n, q, k)
    elif name in ("block_two_stream", "bad_block_query_history"):
        _, values = parse_spec(task.name.split(" through ")[0])
        chain = name == "bad_block_query_history" or values.get("variant", "chain") == "chain"
        block = _block_term(task)
        formula = _block_closure(n, block, q, k, chain, name == "bad_block_query_history")
    elif name == "bad_block_own_content":
        formula = _own_content_closure(n, _block_term(task), q, k)
    elif name == "bd3lm":
        formula = _bd3lm_closure(n, _block_term(task), q, k)
    elif name == "xlnet":
        rank = next(i for i in mask.indexes if i.name == "rank")
        indexes = [rank]
        formula = _xlnet_closure(n, rank.function, q, k)
    elif name == "causal_lm":
        formula = k <= q
    elif name in ("packed", "bad_packed_window"):
        doc = next(i for i in mask.indexes if i.name == "doc")
        indexes = [doc]
        formula = z3.And(doc.function(k) == doc.function(q), k <= q)
    elif name in ("mlm", "bad_mlm_unmasked"):
        formula = z3.BoolVal(True)
    else:
        return None
    conditions = list(mask.conditions) + list(task.conditions)
    return SymbolicMask(f"{name} (known invariant)", n, mask.size, dict(mask.params), formula, q, k, conditions,
                        [], indexes, mask.streams, statement_of(n, mask.params, conditions))


def _block_term(task: SymbolicTask):
    if "block" in task.mask.params:
        return task.mask.params["block"]
    from hasse.theory.spec import parse_spec

    _, values = parse_spec(task.name.split(" through ")[0])
    if "block" not in values:
        raise TraceError(f"{task.name}: the block size is neither symbolic nor given")
    return z3.IntVal(int(values["block"]))


def _butterfly_closure(n, q, k):
    b, p = n - 1, 2 * n - 2

    def stream(x):
        return z3.If(x < b, 0, z3.If(x < p, 1, 2))

    def index(x):
        return z3.If(x < b, x, z3.If(x < p, x - b + 1, x - p))

    sq, sk, i, j = stream(q), stream(k), index(q), index(k)
    return z3.Or(q == k,
                 z3.And(sq == 0, sk == 0, j <= i),
                 z3.And(sq == 1, sk == 1, j >= i),
                 z3.And(sq == 2, sk == 0, j < i),
                 z3.And(sq == 2, sk == 1, j > i))


def _block_closure(n, block, q, k, chain: bool, history: bool):
    c = n - block
    t, u = q - c, k - c
    qq = z3.And(q >= c, k >= c, u / block == t / block)
    if chain:
        qq = z3.And(qq, u <= t)
    parts = [q == k,
             z3.And(q < c, k < c, k <= q),
             z3.And(q >= c, k < c, k / block < t / block),
             qq]
    if history:
        parts.append(z3.And(q >= c, k >= c, u / block < t / block))
    return z3.Or(parts)


def _own_content_closure(n, block, q, k):
    t, u = q - n, k - n
    return z3.Or(q == k,
                 z3.And(q < n, k < n, k <= q),
                 z3.And(q >= n, k < n, k / block <= t / block),
                 z3.And(q >= n, k >= n, u / block == t / block, u <= t))


def _bd3lm_closure(n, block, q, k):
    qc, kc = q >= n, k >= n
    bq = z3.If(qc, q - n, q) / block
    bk = z3.If(kc, k - n, k) / block
    return z3.Or(q == k,
                 z3.And(qc == kc, bq == bk),
                 z3.And(z3.Not(qc), kc, bk < bq),
                 z3.And(qc, kc, bk <= bq))


def _xlnet_closure(n, rank, q, k):
    rq = rank(z3.If(q >= n, q - n, q))
    rk = rank(z3.If(k >= n, k - n, k))
    return z3.Or(q == k,
                 z3.And(q < n, k < n, rk <= rq),
                 z3.And(q >= n, k < n, rk < rq))


# --------------------------------------------------------------------------- evaluation at values


def evaluate(task: SymbolicTask, expr, n: int, **params) -> z3.ExprRef:
    """``expr`` (a formula of the task's symbols) at ``n`` and these parameters, simplified.

    The lists of the concrete spec fill in the modelled ones: ``order`` the ``rank`` tensor,
    ``lengths`` the ``doc`` tensor, ``masked`` the ``masked`` predicate. For re-checks and tests.

    >>> t = symbolic_task("packed")
    >>> evaluate(t, t.predicts(z3.IntVal(0), z3.IntVal(1)), 3, lengths=(1, 2), window=0)
    False
    """
    subs = [(task.mask.n, z3.IntVal(n))]
    for key, value in params.items():
        if key in task.mask.params and isinstance(value, (int, np.integer)):
            subs.append((task.mask.params[key], z3.IntVal(int(value))))
    expr = z3.simplify(z3.substitute(expr, *subs))
    funs = []
    x = z3.Var(0, z3.IntSort())
    if "order" in params:
        from hasse.theory.masks.xlnet import ranks

        funs.append((z3.Function("rank", z3.IntSort(), z3.IntSort()), _table(x, ranks(params["order"]), -1)))
    if "lengths" in params:
        from hasse.theory.masks.document import document_ids

        funs.append((z3.Function("doc", z3.IntSort(), z3.IntSort()), _table(x, document_ids(params["lengths"]), -1)))
    if "masked" in params:
        chosen = set(int(i) for i in params["masked"])
        funs.append((MASKED, z3.Or([x == i for i in sorted(chosen)]) if chosen else z3.BoolVal(False)))
    if funs:
        expr = z3.simplify(z3.substitute_funs(expr, *funs))
    return expr


def _table(x, values, default: int):
    out = z3.IntVal(default)
    for i in reversed(range(len(values))):
        out = z3.If(x == i, z3.IntVal(int(values[i])), out)
    return out


def lists_from_model(task: SymbolicTask, model: z3.ModelRef, n: int, positions=None) -> dict:
    """The lists a Z3 model of ``task`` chose at sample length ``n``: ``order``, ``lengths`` or ``masked``.

    For the concrete re-check of a counterexample: ``task.concrete(n, **params, **lists_from_model(…))``
    builds the very instance the model describes. ``positions``: the positions the query read
    (a witness path); the model's values there are kept (and at ``p + 1``, which ``predicts``
    reads), and a position left free joins the document before it (packed), or is ranked after
    the others (xlnet). Without ``positions`` every value of the model is kept, made
    non-decreasing where needed.

    >>> t = symbolic_task("packed")
    >>> s = z3.Solver(); doc = z3.Function("doc", z3.IntSort(), z3.IntSort())
    >>> s.add(doc(0) == 4, doc(1) == 7, doc(2) == 7); s.check()
    sat
    >>> lists_from_model(t, s.model(), 3), lists_from_model(t, s.model(), 3, positions=[0])
    ({'lengths': (1, 2)}, {'lengths': (1, 2)})
    """
    from hasse.theory.spec import parse_spec

    name, given = parse_spec(task.name.split(" through ")[0])
    keep = set(range(n)) if positions is None else {int(p) + d for p in positions for d in (0, 1)} & set(range(n))
    out: dict = {}
    if name == "xlnet" and "order" not in given:
        values = _values_at(model, "rank", n)
        out["order"] = tuple(sorted(range(n), key=lambda i: (values[i] if i in keep else n + i, i)))
    elif name in ("packed", "bad_packed_window") and "lengths" not in given:
        values = _values_at(model, "doc", n)
        ids: list = [values[i] if i in keep else None for i in range(n)]
        last = next((v for v in ids if v is not None), 0)
        for i in range(n):
            ids[i] = last = max(last, ids[i]) if ids[i] is not None else last
        lengths, run = [], 1
        for i in range(1, n):
            if ids[i] == ids[i - 1]:
                run += 1
            else:
                lengths.append(run)
                run = 1
        out["lengths"] = tuple(lengths + [run]) if n else ()
    elif name == "mlm" and "masked" not in given:
        out["masked"] = tuple(i for i in range(n)
                              if z3.is_true(model.eval(MASKED(z3.IntVal(i)), model_completion=True)))
    return out


def _values_at(model: z3.ModelRef, name: str, n: int) -> list[int]:
    f = z3.Function(name, z3.IntSort(), z3.IntSort())
    return [model.eval(f(z3.IntVal(i)), model_completion=True).as_long() for i in range(n)]


def check_same_size(task: SymbolicTask, mask: SymbolicMask) -> None:
    """Raise :class:`InputError` unless ``mask`` has as many positions as ``task`` for every ``n``.

    A task read through another mask (``--task``) must lay its positions on the same grid:
    a mask of ``n`` positions under XLNet's ``2n`` would leave every query outside it, and the
    claim would hold vacuously. Proved by Z3 under both side conditions; a size that may differ
    (or that Z3 cannot decide) is refused in one line.

    >>> from hasse.solvers.symbolic.mask import from_rule
    >>> check_same_size(symbolic_task("causal_lm"), from_rule("causal", _causal_rule, params={"n": None}))
    >>> check_same_size(symbolic_task("xlnet"), from_rule("causal", _causal_rule, params={"n": None}))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: causal: the task xlnet has 2*n positions but the mask has n (e.g. at n = 1)
    """
    solver = z3.Solver()
    solver.set("timeout", 5000)
    solver.add(*task.all_conditions(), *mask.conditions, task.mask.size != mask.size)
    result = solver.check()
    if result == z3.unsat:
        return
    where = f" (e.g. at n = {solver.model().eval(task.mask.n, model_completion=True)})" if result == z3.sat else ""
    raise InputError(f"the task {task.name} has {task.mask.size} positions but the mask has {mask.size}{where}",
                     mask.name)

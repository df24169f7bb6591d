"""The builders of the symbolic task families (:func:`solvers.symbolic.tasks.symbolic_task` dispatches on
:data:`_BUILDERS`): each traces its mask and writes ``holds``, ``predicts`` and ``group``.

:func:`_concrete` is the catalogue's task at concrete values, the re-check's (a list the task
needs and neither the spec nor the caller gives: one instance, :data:`_DEFAULT_LISTS`).
"""

from __future__ import annotations

from typing import Callable

import z3

from hasse.solvers.symbolic.catalog import SYMBOL
from hasse.solvers.symbolic.mask import N, SymbolicMask, from_rule
from hasse.solvers.symbolic.programs import TaskProgram
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.symbolic.tasks.rules import (
    MASKED,
    causal_rule,
    crossed_rule,
    full_rule,
    own_content_rule,
    packed_factory,
    query_history_rule,
    sliding_rule,
    xlnet_factory,
)
from hasse.solvers.symbolic.tasks.values import statement_of
from hasse.solvers.symbolic.terms import SymIndex, SymInt
from hasse.theory.catalog import build_task, get_entry
from hasse.theory.masks.bd3lm import make_bd3lm
from hasse.theory.masks.block_two_stream import make_block_two_stream
from hasse.theory.masks.butterfly import make_butterfly
from hasse.theory.masks.document import document_ids
from hasse.theory.masks.xlnet import ranks
from hasse.theory.spec import format_value


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


def _traced(spec: str, factory, **kwargs) -> SymbolicMask:
    """:func:`from_rule`, each parameter's Z3 variable then named as the catalogue's forms name it
    (``block`` → ``l``, ``window`` → ``w``: :data:`solvers.symbolic.catalog.SYMBOL`), so that a task
    and a catalogue mask share their symbols (``--task`` through a MASK, ``--param-range``)."""
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


def _task(spec, name, values, mask, holds, predicts, group=None, conditions=()) -> SymbolicTask:
    conditions = list(conditions)
    mask.size = z3.simplify(mask.size) if z3.is_int_value(mask.n) else mask.size
    statement = statement_of(mask.n, mask.params, conditions + list(mask.conditions))
    mask.statement = statement_of(mask.n, mask.params, list(mask.conditions))
    concrete = _concrete(name, values)
    if getattr(mask, "program", None) is None and not mask.indexes:  # the re-check runs the catalogue's task
        mask.program = TaskProgram(spec, concrete)
    return SymbolicTask(spec, mask, holds, predicts, group, concrete, conditions, statement)


def _butterfly(spec, name, values, *, self_=False, crossed=False) -> SymbolicTask:
    n_fixed = _int_or_none(values, N)
    factory = crossed_rule if crossed else make_butterfly
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
        mask = _traced(spec, query_history_rule, params=params, size=lambda n, block: 2 * n - block)
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


def rank_index(order) -> tuple:
    """``(n, rank, conditions)`` for a task over a factorisation order: ``rank`` the index tensor (a bijection) of
    the order's ranks, ``n`` symbolic, or the order's length with ``conditions`` fixing every rank when given."""
    n_term = z3.Int(N) if order is None else z3.IntVal(len(order))
    rank = SymIndex("rank", "bijection", SymInt(n_term, None))
    conditions = []
    if order is not None:
        conditions = [rank.function(z3.IntVal(i)) == int(r) for i, r in enumerate(ranks(order))]
    return n_term, rank, conditions


def _xlnet(spec, name, values) -> SymbolicTask:
    order = values.get("order")
    _, rank, conditions = rank_index(order)
    mask = _traced(spec, xlnet_factory(rank), params={N: None if order is None else len(order)},
                     size=lambda n: 2 * n, streams=lambda n: (("c", z3.IntVal(0)), ("g", n)), indexes=[rank])
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p < n, t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p >= n, t == p - n)

    return _task(spec, name, values, mask, holds, predicts, conditions=conditions)


def _causal_lm(spec, name, values) -> SymbolicTask:
    mask = _traced(spec, causal_rule, params={N: _int_or_none(values, N)})
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), t == p + 1)

    return _task(spec, name, values, mask, holds, predicts)


def _ar_merged(spec, name, values) -> SymbolicTask:
    """The ar family's merge: causal on n - 1 positions (n >= 2), position p holding x_p and predicting x_{p+1}."""
    mask = _traced(spec, causal_rule, params={N: _int_or_none(values, N)}, size=lambda n: n - 1)
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), t == p + 1)

    return _task(spec, name, values, mask, holds, predicts, conditions=[n >= 2])


def _mlm(spec, name, values, *, unmasked=False) -> SymbolicTask:
    masked_list = values.get("masked")
    n_fixed = _int_or_none(values, N)
    mask = _traced(spec, full_rule, params={N: n_fixed})
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
        conditions = [doc.function(z3.IntVal(i)) == int(d) for i, d in enumerate(document_ids(lengths))]
    n_value = None if lengths is None else int(sum(int(v) for v in lengths))
    window = _int_or_none(values, "window")
    if bad:
        mask = _traced(spec, sliding_rule, params={N: n_value, "window": window})
    else:
        mask = _traced(spec, packed_factory(doc), params={N: n_value, "window": window},
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


def _own_content(spec, name, values) -> SymbolicTask:
    mask = _traced(spec, own_content_rule, params={N: _int_or_none(values, N), "block": _int_or_none(values, "block")},
                     size=lambda n, block: 2 * n, streams=lambda n, block: (("C", z3.IntVal(0)), ("Q", n)))
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p < n, t == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p >= n, t == p - n)

    return _task(spec, name, values, mask, holds, predicts)


_BUILDERS: dict[str, Callable[..., SymbolicTask]] = {
    "butterfly": _butterfly,
    "block_two_stream": _block_two_stream,
    "bd3lm": _bd3lm,
    "xlnet": _xlnet,
    "causal_lm": _causal_lm,
    "ar_merged": _ar_merged,
    "mlm": _mlm,
    "packed": _packed,
    "bad_butterfly_self": lambda s, nm, v: _butterfly(s, nm, v, self_=True),
    "bad_butterfly_crossed": lambda s, nm, v: _butterfly(s, nm, v, crossed=True),
    "bad_block_own_content": _own_content,
    "bad_mlm_unmasked": lambda s, nm, v: _mlm(s, nm, v, unmasked=True),
    "bad_packed_window": lambda s, nm, v: _packed(s, nm, v, bad=True),
    "bad_block_query_history": lambda s, nm, v: _block_two_stream(s, nm, v, history=True),
}

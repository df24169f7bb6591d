"""Symbolic task builders for the derived layouts of theory.tasks.derived_masked (issue 25).

``masked_context`` (the derived layout of the MAE and masked-diffusion families) and
``mae_published`` (MAE's encoder + decoder), ``n`` positions in token order. The masked set
is an index tensor ``masked`` with the property *any* (:class:`~solvers.symbolic.terms.SymIndex`):
token ``i`` is masked iff ``masked[i] != 0`` (every subset of ``0 … n-1``, the empty one and the
whole sample included), read by the traced rule:

====================== ====== =========================================================
task                   size   mask / holds(p, t) / predicts(p, t)
====================== ====== =========================================================
masked_context         n      ``visible(k) or q == k``
mae_published          n      ``visible(k) or masked(q)`` (side condition ``n >= 2``)
both                          holds: ``visible(p)`` and ``t = p``; predicts: ``masked(p)`` and ``t = p``
====================== ====== =========================================================

A spec with ``masked=`` (and then ``n=``) fixes the set: the rule compares a position with its
members instead of reading a tensor, so no index tensor is left and the re-check runs the
catalogue's task at that ``n``. The mask is dense (transitive with
the diagonal), so ``prove-mask --claim leak-free`` uses its own closure as the invariant.
"""

from __future__ import annotations

import numpy as np
import z3

from hasse.solvers.symbolic.mask import N
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.symbolic.tasks.families import _inside_tokens, _task, _traced
from hasse.solvers.symbolic.terms import SymIndex, SymInt
from hasse.theory.errors import InputError
from hasse.theory.masks.masked_context import masked_flags
from hasse.theory.params import require_positive
from hasse.theory.spec import plus_joined


def _flag_of(masked):
    """``is_masked(x)`` on traced positions: ``masked[x] != 0`` for an index tensor, else ``x`` equal to a member
    of the given set (a tuple of ints; the empty set masks nothing)."""
    if isinstance(masked, SymIndex):
        return lambda x: masked[x] != 0

    def is_masked(x):
        out = x < 0  # false on every position
        for i in masked:
            out = out | (x == int(i))
        return out

    return is_masked


def masked_context_factory(masked):
    """The traced factory of the derived layout; ``masked`` an index tensor (nonzero = masked) or a fixed set."""
    is_masked = _flag_of(masked)

    def make_masked_context(n):
        """theory.masks.masked_context's rule ``visible(k) or q == k``."""
        require_positive("n", n)

        def rule(q, k):
            return ~is_masked(k) | (q == k)

        return rule

    return make_masked_context


def mae_published_factory(masked):
    """The traced factory of MAE's published rule ``visible(k) or masked(q)``."""
    is_masked = _flag_of(masked)

    def make_mae_published(n):
        """MAE's published rule ``visible(k) or masked(q)``."""
        require_positive("n", n)

        def rule(q, k):
            return ~is_masked(k) | is_masked(q)

        return rule

    return make_mae_published


def default_masked(n: int) -> tuple[int, ...]:
    """The masked set a re-check uses when neither the spec nor the caller gives one: the odd tokens (token 0 at n = 1).

    >>> default_masked(5), default_masked(1)
    ((1, 3), (0,))
    """
    return tuple(range(1, n, 2)) or (0,)


def _concrete(name: str, fixed: dict):
    """``concrete(n, masked=…)``: the catalogue's task at ``n`` (the spec's masked set, else ``masked``, else
    :func:`default_masked`)."""
    def concrete(n: int, **params):
        from hasse.theory.catalog import build_task

        masked = fixed.get("masked", params.get("masked"))
        if masked is None:
            masked = default_masked(int(n))
        return build_task(f"{name}:n={int(n)},masked={plus_joined(int(i) for i in masked)}")

    return concrete


def _masked_task(spec: str, name: str, values: dict, factory, *, low: int = 1, holds_masked: bool = False,
                 concrete=None) -> SymbolicTask:
    """The builder of both tasks; ``low``: the least ``n`` (MAE keeps a visible token: 2); ``holds_masked`` (a planted
    bug for the tests): a masked position holds ``x_p`` too."""
    chosen = values.get("masked")
    n_fixed = None if values.get(N) is None else int(values[N])
    if chosen is not None and n_fixed is None:
        raise InputError(f"{name} with masked= needs n= too (the set fixes the flag of every token)")
    if chosen is not None:
        masked_flags(n_fixed, chosen, keep_visible=low > 1)  # the catalogue's checks, in its words
    if chosen is not None:  # a fixed set: the rule compares with its members, no index tensor (the re-check
        chosen = tuple(int(i) for i in chosen)  # then runs the catalogue's task at that n)
        mask = _traced(spec, factory(chosen), params={N: n_fixed})

        def is_masked(p):
            return z3.Or([p == i for i in chosen]) if chosen else z3.BoolVal(False)
    else:
        masked = SymIndex("masked", "any", SymInt(z3.Int(N) if n_fixed is None else z3.IntVal(n_fixed), None))
        mask = _traced(spec, factory(masked), params={N: n_fixed}, indexes=[masked])
        for term in (mask.q, mask.k):  # the lookups of holds and predicts, for facts()
            if not any(term.eq(x) for x in masked.lookups):
                masked.lookups.append(term)

        def is_masked(p):
            return masked.function(p) != 0
    n = mask.n
    conditions = []
    if low > 1:
        conditions.append(n >= low)

    def holds(p, t):
        own = z3.BoolVal(True) if holds_masked else z3.Not(is_masked(p))
        return z3.And(_inside_tokens(n, t), t == p, own)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), t == p, is_masked(p))

    task = _task(spec, name, values, mask, holds, predicts, conditions=conditions)
    task.concrete = concrete or _concrete(name, values)
    return task


def _masked_context(spec, name, values) -> SymbolicTask:
    return _masked_task(spec, name, values, masked_context_factory)


def _mae_published(spec, name, values) -> SymbolicTask:
    return _masked_task(spec, name, values, mae_published_factory, low=2)


def masked_lists(task: SymbolicTask, model: z3.ModelRef, n: int) -> dict:
    """The masked set a Z3 model of one of these tasks chose at ``n`` (for re-checking a counterexample).

    >>> s = z3.Solver(); f = z3.Function("masked", z3.IntSort(), z3.IntSort()); s.add(f(1) == 7, f(0) == 0, f(2) == 0)
    >>> s.check(), masked_lists(None, s.model(), 3)
    (sat, {'masked': (1,)})
    """
    f = z3.Function("masked", z3.IntSort(), z3.IntSort())
    values = [model.eval(f(z3.IntVal(i)), model_completion=True).as_long() for i in range(n)]
    return {"masked": tuple(int(i) for i in np.flatnonzero(np.asarray(values) != 0))}


BUILDERS: dict = {  # task name -> builder(spec, name, values) -> SymbolicTask (as families._BUILDERS)
    "masked_context": _masked_context,
    "mae_published": _mae_published,
}

"""Symbolic task builders for the derived layouts of theory.tasks.derived_orders (issue 25).

====================== =========== ==================================================================
task                   size        holds(p, t) / predicts(p, t)
====================== =========== ==================================================================
any_order_two_stream   2n − 1      c_p at p (p < n − 1) holds x_t where rank(t) = p; g_i at n−1+i
                                   predicts x_i (rank: an index tensor, a bijection)
fim_causal             n − 1       r holds x_{tok(r)}; predicts x_{tok(r+1)} when r + 1 >= n − end + start
                                   (tok: the rearranged order, piecewise linear in r, start, end, n)
====================== =========== ==================================================================

The any-order mask is written on the index tensor ``rank`` (as XLNet's, :mod:`.rules`), not
traced from :func:`theory.masks.any_order.make_any_order_two_stream` (which reads a concrete
order); the FIM mask is traced from :func:`theory.masks.fim.make_fim_causal`, its split checks
becoming the side conditions ``0 <= start < end <= n`` with a prefix or suffix token.
Each builder takes the mask factory (and the concrete task of the re-check) as arguments, so
that a test can plant a flawed layout and see it refuted.
"""

from __future__ import annotations

import numpy as np
import z3

from hasse.solvers.symbolic.mask import N
from hasse.solvers.symbolic.programs import RuleTaskProgram, TaskProgram
from hasse.solvers.symbolic.tasks.families import _inside_tokens, _int_or_none, _param, _task, _traced, rank_index
from hasse.solvers.symbolic.terms import SymIndex
from hasse.theory.catalog import build_task
from hasse.theory.masks.fim import make_fim_causal
from hasse.theory.params import require_positive
from hasse.theory.spec import plus_joined


def any_order_factory(rank: SymIndex):
    """The derived any-order rule on ``2n − 1`` positions, over the index tensor ``rank``."""

    def make_any_order_two_stream(n):
        """c_p (p < n−1) attends c_{p'} for p' <= p; g_i at n−1+i attends c_p for p < rank(i), and itself."""
        require_positive("n", n)

        def rule(q, k):
            content = n - 1
            q_query, k_query = q >= content, k >= content
            rq = rank[np.where(q_query, q - content, 0)]
            causal = ~q_query & ~k_query & (k <= q)
            reads = q_query & ~k_query & (k < rq)
            itself = q_query & (q == k)
            return causal | reads | itself

        return rule

    return make_any_order_two_stream


def _any_order_concrete(values: dict):
    given = values.get("order")

    def concrete(n: int, order=None, **_):
        chosen = tuple(given or order or range(n))  # one instance: the spec's order, the caller's, else left to right
        return build_task(f"any_order_two_stream:order={plus_joined(chosen)}")

    return concrete


def any_order_two_stream(spec, name, values, *, factory=any_order_factory, concrete=None):
    """``any_order_two_stream`` for every n and every order (``order`` given: that order)."""
    order = values.get("order")
    _, rank, conditions = rank_index(order)
    mask = _traced(spec, factory(rank), params={N: None if order is None else len(order)},
                   size=lambda n: 2 * n - 1, streams=lambda n: (("c", z3.IntVal(0)), ("g", n - 1)), indexes=[rank])
    n = mask.n

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p < n - 1, rank.function(t) == p)

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p >= n - 1, t == p - (n - 1))

    task = _task(spec, name, values, mask, holds, predicts, conditions=conditions)
    task.concrete = concrete or _any_order_concrete(values)
    return task


def fim_token(n, start, end, mode: str, r):
    """The token at place ``r`` of the rearranged order, as a Z3 term (psm or spm)."""
    outside = n - end + start
    middle = start + (r - outside)
    if mode == "psm":
        front = z3.If(r < start, r, end + (r - start))
    else:
        front = z3.If(r < n - end, end + r, r - (n - end))
    return z3.If(r < outside, front, middle)


def fim_causal(spec, name, values, *, factory=make_fim_causal, concrete=None):
    """``fim_causal:mode=…`` for every n, start and end (those given are constants)."""
    mode = values.get("mode", "psm")
    params = {N: _int_or_none(values, N), "start": _int_or_none(values, "start"),
              "end": _int_or_none(values, "end"), "mode": mode}
    mask = _traced(spec, factory, params=params, size=lambda n, start, end, mode: n - 1)
    n = mask.n
    start, end = _param(mask, "start", values), _param(mask, "end", values)
    outside = n - end + start  # places of the prefix and suffix: the middle's first token is at `outside`

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), t == fim_token(n, start, end, mode, p))

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), p + 1 >= outside, t == start + (p + 1 - outside))

    task = _task(spec, name, values, mask, holds, predicts)
    if concrete is not None:  # a planted layout: its own concrete task, whole grids
        task.concrete = concrete
        task.mask.program = TaskProgram(spec, concrete)
    elif isinstance(mask.program, TaskProgram):
        fixed = {key: values[key] for key in ("start", "end") if key in values}
        mask.program = RuleTaskProgram(spec, task.concrete, make_fim_causal, {**fixed, "mode": mode})
    return task


BUILDERS: dict = {  # task name -> builder(spec, name, values) -> SymbolicTask (as families._BUILDERS)
    "any_order_two_stream": any_order_two_stream,
    "fim_causal": fim_causal,
}

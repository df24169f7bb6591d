"""Leak-free and isolation for every n: by walks of at most L hops, or at every depth through an invariant.

Both claims are one search, for a different end of the walk: a leak ends at a position
predicting a token its start holds; a crossing (isolation) joins two positions of different
groups (``group >= 0``; a negative group is none). With ``layers=L``: no walk
``j = p_0 → p_1 → … → p_L = p`` with ``A(p_{i+1}, p_i)`` (a stutter ``p_{i+1} = p_i`` is a hop
through the residual, so this is every walk of *at most* ``L`` hops); the intermediate
positions are existential. With an invariant ``R`` (every depth, ``R' = R or I``): (1) and (2)
of :mod:`.invariant`, then (3) no leak (crossing) inside ``R'``.
"""

from __future__ import annotations

import time
from typing import Sequence

import z3

from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.solvers.symbolic.claims.concrete import _concrete_flow, _lists, _recheck_small
from hasse.solvers.symbolic.claims.dense import prove_dense
from hasse.solvers.symbolic.claims.invariant import _check_invariant, _resolve_invariant
from hasse.solvers.symbolic.claims.obligations import _earlier, _failing, _invariant_domain, _invariant_fails
from hasse.solvers.symbolic.claims.search import _walks_below
from hasse.solvers.symbolic.claims.solve import (
    _conditions_of, _params_of, _positions, _solve, _task_pairs, _task_params, _value, _values, smallest_model,
)
from hasse.solvers.symbolic.claims.statement import _empty_rows_note, _ptext, _statement, _uncertain
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, RECHECK_UPTO, SymbolicVerdict
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.theory.errors import InputError
from hasse.theory.limits import MAX_WALK_LAYERS, number_text
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN


def _walk(mask: SymbolicMask, layers: int, prefix: str) -> tuple[list, list, list]:
    """Positions ``p_0 … p_L``, hop constraints ``A(p_{i+1}, p_i)`` and the facts of those reads.

    At most :data:`theory.limits.MAX_WALK_LAYERS` hops are encoded (one copy of the mask per
    hop); a longer walk is refused here, after a transitive ``M or I`` shortened it to one.
    """
    if layers > MAX_WALK_LAYERS:
        raise InputError(f"layers = {number_text(layers)}: a walk of more than {MAX_WALK_LAYERS} hops is not "
                         "encoded (one copy of the mask per hop, and M or I is not transitive here, so walks do not "
                         "shorten); leave layers out for the claim at every depth (an invariant covers every L)")
    ps = _positions(prefix, layers + 1)
    pairs = [(ps[i + 1], ps[i]) for i in range(layers)]
    # stutters (hops through the residual) first: every walk of at most L hops has this form,
    # and the solver need not try each place a shorter walk could pause
    first = [z3.Implies(ps[i] == ps[i + 1], ps[i - 1] == ps[i]) for i in range(1, layers)]
    return ps, [mask.attends(x, y) for x, y in pairs] + first, mask.facts(pairs + _task_pairs(ps))


def _hops(mask: SymbolicMask, layers: int, timeout, assume: Sequence = ()) -> tuple[int, str]:
    """The walk length to search: 1 when ``M or I`` is transitive (proved; a walk then shortens to one hop), else L."""
    if layers <= 1 or prove_dense(mask, timeout=timeout, assume=assume, recheck_upto=0).verdict != PROVED:
        return layers, ""
    return 1, f" (M or I is transitive, so every walk of at most {layers} hops is one hop)"


def _path(model, ps) -> list[int]:
    out: list[int] = []
    for x in ps:
        v = _value(model, x)
        if not out or out[-1] != v:
            out.append(v)
    return out


def prove_leak_free(task: SymbolicTask, *, layers: int | None = None, invariant=None,
                    timeout: float | None = DEFAULT_TIMEOUT, assume: Sequence = (),
                    recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """No position predicts a token it can see: within ``layers`` hops (walks), or at every depth (an invariant).

    ``invariant``: a :class:`SymbolicMask` over the same ``n``, or None / "auto" for
    :func:`known_invariant` (the three conditions: module docstring).
    """
    return _flow_claim(prove_leak_free, False, task, layers, invariant, timeout, assume, recheck_upto)


def prove_isolation(task: SymbolicTask, *, layers: int | None = None, invariant=None,
                    timeout: float | None = DEFAULT_TIMEOUT, assume: Sequence = (),
                    recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """No position of one group (``group >= 0``) depends on a position of another: by walks, or an invariant."""
    return _flow_claim(prove_isolation, True, task, layers, invariant, timeout, assume, recheck_upto)


def _flow_claim(fn, isolation: bool, task: SymbolicTask, layers, invariant, timeout, assume, recheck_upto):
    """The body of :func:`prove_leak_free` (``isolation`` False) and :func:`prove_isolation` (``fn`` is the claim)."""
    start = time.perf_counter()
    mask = task.mask
    claim, says = ("isolation", "no flow between groups") if isolation else \
        ("leak-free", "no position predicts a token it sees")
    tparams = _task_params(task, assume)
    conds = _conditions_of(mask, extra=list(task.conditions) + list(assume))
    depth = f"within {layers} layers" if layers is not None else "at any depth"
    failed = _failing(claim, _statement(mask, tparams, conds, f"{says} {depth}", task=task), start, timeout,
                      [(mask, conds, tparams)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: fn(
            task, layers=layers, invariant=invariant, timeout=timeout, assume=[*assume, *below], recheck_upto=0),
            lambda n0: _walks_below(fn, task, n0, timeout, assume, isolation) if layers is None else None)
    empty = _empty_rows_note(mask, conds, timeout)
    if isolation and task.group is None:
        return SymbolicVerdict(claim, UNKNOWN, _statement(mask, tparams, conds, "groups are isolated", task=task),
                               0.0, None, None, "the task declares no groups")
    flow = _Flow(claim, says, isolation, task, z3.Int("t"), start)
    if layers is not None:
        return flow.by_walks(tparams, conds, layers, empty, timeout, assume, recheck_upto)
    return flow.by_invariant(tparams, conds, invariant, empty, timeout, assume, recheck_upto)


class _Flow:
    """One leak-free or isolation claim on ``task``: the ends of its walks, its words, its verdicts."""

    def __init__(self, claim: str, says: str, isolation: bool, task: SymbolicTask, t, start: float):
        self.claim, self.says, self.isolation, self.task, self.t, self.start = claim, says, isolation, task, t, start

    def verdict(self, verdict: str, statement: str, reason: str, cx: dict | None = None,
                recheck: str | None = None) -> SymbolicVerdict:
        return SymbolicVerdict(self.claim, verdict, statement, time.perf_counter() - self.start, cx, recheck, reason)

    def apart(self, x, y):
        g = self.task.group
        return z3.And(g(x) >= 0, g(y) >= 0, g(x) != g(y))

    def bounds(self) -> list:
        """The token's range (a leak), or nothing (a crossing)."""
        return [] if self.isolation else [self.t >= 0, self.t < self.task.mask.n]

    def concrete(self, n: int, params: dict, layers, witness, lists=None) -> str:
        return _concrete_flow(self.task, n, params, layers, witness, lists, isolation=self.isolation)

    def by_walks(self, tparams, conds, layers, empty, timeout, assume, recheck_upto) -> SymbolicVerdict:
        task, mask, t = self.task, self.task.mask, self.t
        statement = _statement(mask, tparams, conds, f"{self.says} within {layers} layers{empty}", task=task)
        searched, why = _hops(mask, layers, timeout, assume)
        ps, hops, facts = _walk(mask, searched, "p")
        ends = [self.apart(ps[-1], ps[0])] if self.isolation else [task.holds(ps[0], t), task.predicts(ps[-1], t)]
        query = conds + [mask.inside(*ps)] + self.bounds() + hops + facts + ends
        status, model, reason, _ = _solve(query, timeout)
        if status == UNSAT:
            recheck = _recheck_small(mask, conds, recheck_upto, lambda n, p: self.concrete(n, p, layers, None), tparams)
            between = "between positions of different groups" if self.isolation else \
                "from a holder of t to a predictor of t"
            return self.verdict(PROVED, statement, f"no walk of at most {layers} hops {between}{why}", None, recheck)
        if status != SAT:
            return self.verdict(UNKNOWN, statement, f"the solver said {reason or status}")
        model, note = smallest_model(query, mask.n, tparams, timeout, model)
        n, params = _values(model, mask, tparams)
        path = _path(model, ps)
        walk = " -> ".join(map(str, path))
        cx = {"n": n, "params": params, "position": path[-1]}
        if self.isolation:
            cx.update(source=path[0], path=path, depth=len(path) - 1, positions=path,
                      groups=[_value(model, task.group(z3.IntVal(path[0]))),
                              _value(model, task.group(z3.IntVal(path[-1])))])
            witness = (path[-1], path[0])
            words = f"{walk} crosses from group {cx['groups'][0]} to group {cx['groups'][1]}"
        else:
            tv = _value(model, t)
            cx.update(target=tv, source=path[0], path=path, depth=len(path) - 1, positions=path)
            witness = (path[-1], tv)
            words = f"position {path[-1]} predicts token {tv}, held by {path[0]}, along {walk}"
        recheck = self.concrete(n, params, layers, witness, _lists(task, model, n, path))
        return self.verdict(REFUTED, statement, f"at n = {n}{_ptext(params)}: {words}" + _uncertain(cx, note), cx,
                            recheck)

    def by_invariant(self, tparams, conds, invariant, empty, timeout, assume, recheck_upto) -> SymbolicVerdict:
        task, mask, t = self.task, self.task.mask, self.t
        statement = _statement(mask, tparams, conds, f"{self.says}, at any depth{empty}", task=task)
        inv, why = _resolve_invariant(mask, invariant, timeout, task)
        if inv is None:
            return self.verdict(UNKNOWN, statement, why)
        why = _invariant_domain(inv, conds, timeout) or _invariant_fails(inv, conds, timeout,
                                                                         {**tparams, **_params_of(inv)})
        if why:
            return self.verdict(UNKNOWN, statement, why)
        conds = _conditions_of(mask, inv, extra=list(task.conditions) + list(assume))
        params = {**tparams, **_params_of(mask, inv)}
        statement = _statement(mask, params, conds, f"{self.says}, at any depth{empty}", task=task)
        status, why, _w = _check_invariant(mask, inv, conds, timeout)
        if status != "ok":
            return self.verdict(UNKNOWN, statement, f"invariant {inv.name}: {why}")
        p, x = z3.Ints("p k") if self.isolation else z3.Ints("p j")
        ends = [inv.attends(p, x), self.apart(p, x)] if self.isolation else \
            [task.predicts(p, t), task.holds(x, t), inv.attends(p, x)]
        query = conds + [inv.inside(p, x)] + self.bounds() + inv.facts([(p, x)]) + mask.facts(_task_pairs([p, x])) \
            + ends
        status, model, reason, _ = _solve(query, timeout)
        if status == UNSAT:
            recheck = _recheck_small(mask, conds, recheck_upto, lambda n, ps: self.concrete(n, ps, None, None),
                                     params, masks=[mask, inv])
            inside = "(1), (2), and no two positions of different groups inside it" if self.isolation else \
                "(1) M or I inside it, (2) transitive, (3) no predictor of t reaches a holder of t inside it"
            return self.verdict(PROVED, statement, f"invariant {inv.name}: {inside}", None, recheck)
        if status != SAT:
            return self.verdict(UNKNOWN, statement, f"invariant {inv.name}: (3): the solver said {reason or status}")
        n, ps = _values(model, [mask, inv], tparams)
        at = f"invariant {inv.name}: (3) fails: at n = {n}{_ptext(ps)}"
        if self.isolation:
            return self.verdict(UNKNOWN, statement, f"{at} positions {_value(model, p)} and {_value(model, x)} of "
                                                    "different groups are related (try layers=)")
        return self.verdict(UNKNOWN, statement, f"{at} position {_value(model, p)} predicts {_value(model, t)}, held "
                                                f"by {_value(model, x)}, inside the invariant (try layers= for a real "
                                                "walk)")

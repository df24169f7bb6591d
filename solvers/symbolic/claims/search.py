"""The smallest n of a leak over every walk length: the concrete search by increasing n, or longer walks.

At one ``n`` a walk of at most ``size − 1`` hops suffices (a shortest walk repeats no
position), so walks of ``max size − 1`` hops over ``n <= m`` find every leak there
(:func:`_walks_below`); the concrete search (:func:`_concrete_smallest`) is complete where
nothing is symbolic but ``n`` and the grids are small.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import z3

from hasse.solvers.symbolic.claims.solve import _conditions_of, _task_params
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.theory.leak import find_leaks
from hasse.theory.limits import MAX_WALK_LAYERS
from hasse.theory.verdicts import PROVED, REFUTED, disagreement

CONCRETE_SEARCH_ENTRIES = 300_000  # a concrete search by increasing n reads at most this many mask entries in all


def _walks_below(fn: Callable, task: SymbolicTask, n0: int, timeout, assume: Sequence = (), isolation: bool = False):
    """The first refutation by walks of any length at ``n < n0``: ``(verdict, how, "")``; none: ``(None, how, "")``;
    not decided: ``(None, "", why)`` (see :func:`smallest_refutation`)."""
    mask = task.mask
    conds = _conditions_of(mask, extra=list(task.conditions) + list(assume))
    found = _concrete_smallest(task, conds, n0, isolation)
    if found == "none":
        return None, f"the smallest n: the concrete search finds nothing at n < {n0} (every depth)", ""
    if found is not None:
        m, depth = found
        v = fn(task, layers=max(1, depth), assume=[*assume, mask.n <= m], timeout=timeout, recheck_upto=0)
        vn = (v.counterexample or {}).get("n")
        if v.verdict == REFUTED and vn == m:
            return v, (f"the smallest n: the concrete search finds nothing at n < {m} (every depth), "
                       f"and this walk of {depth} hops at n = {m}"), ""
        if v.verdict == REFUTED:  # the symbolic walk finds a smaller n than the concrete search: a bug of the kit
            return dataclasses.replace(v, recheck=disagreement(f"the concrete search at every depth finds nothing "
                                                               f"at n = {vn} < {m}, the symbolic walk does")), "", ""
        return None, "", (f"the concrete search finds a leak at n = {m} that the symbolic walk of {depth} hops "
                          f"does not confirm (it says {v.verdict}: {v.reason})")
    m = 1
    while True:
        m = min(m, n0 - 1)
        hops = _walk_length(mask, conds, m, timeout)
        if hops is None:
            return None, "", f"the number of positions at n <= {m} is not bounded by the solver"
        if hops > MAX_WALK_LAYERS:
            return None, "", (f"walks of {hops} hops (every walk at n <= {m}) are more than "
                              f"{MAX_WALK_LAYERS}, the most encoded")
        if hops > 0:
            v = fn(task, layers=hops, assume=[*assume, mask.n <= m], timeout=timeout, recheck_upto=0)
            if v.verdict == REFUTED:
                return v, f"the smallest n: walks of {hops} hops cover every walk at n <= {m}", ""
            if v.verdict != PROVED:
                return None, "", f"walks of {hops} hops at n <= {m}: {v.reason}"
        if m >= n0 - 1:
            return None, f"the smallest n: no walk of any length at n < {n0}", ""
        m *= 2


def _walk_length(mask: SymbolicMask, conds: list, m: int, timeout) -> int | None:
    """``max size − 1`` over ``n <= m`` and the side conditions (0: no instance there); None when not bounded."""
    opt = z3.Optimize()
    if timeout is not None:
        opt.set("timeout", max(1, int(timeout * 1000)))
    opt.add(*conds, mask.n <= m)
    goal = opt.maximize(mask.size)
    status = opt.check()
    if status == z3.unsat:
        return 0
    if status != z3.sat:
        return None
    value = goal.value()
    if not z3.is_int_value(value):  # unbounded (oo) or not a number
        return None
    return max(1, value.as_long() - 1)


def _free_functions(*exprs) -> bool:
    """Whether an uninterpreted function (an index tensor, a free predicate such as ``masked``) occurs."""
    todo, seen = list(exprs), set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED and e.decl().arity() > 0:
            return True
        todo.extend(e.children())
    return False


def _concrete_smallest(task: SymbolicTask, conds: list, below: int, isolation: bool):
    """``(n, depth)`` of the first leak (crossing) at every depth for ``n < below``; "none"; None: not complete here."""
    mask = task.mask
    p, t = z3.Ints("p_search t_search")
    parts = [mask.formula, task.holds(p, t), task.predicts(p, t)] + ([task.group(p)] if task.group else [])
    if task.concrete is None or mask.indexes or _task_params(task) or _free_functions(*parts):
        return None
    try:
        sizes = [mask.size_at(m) for m in range(1, below)]
    except Exception:
        return None
    if sum(x * x for x in sizes) > CONCRETE_SEARCH_ENTRIES:
        return None
    for m in range(1, below):
        solver = z3.Solver()
        solver.set("timeout", 5000)
        solver.add(*conds, mask.n == m)
        status = solver.check()
        if status == z3.unsat:
            continue  # no instance of the side conditions at this n
        if status != z3.sat:
            return None
        try:
            report = find_leaks(task.concrete(m), None, empty_rows="attend-none")
        except Exception:  # the concrete task cannot be built here: the search is not complete
            return None
        found = report.isolation if isolation else report.leaks
        if found:
            return m, min(x.depth for x in found)
    return "none"

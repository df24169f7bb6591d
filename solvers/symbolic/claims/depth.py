"""Refutations at every depth: the smallest n over every walk length, and a real walk where an invariant fails."""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import z3

from hasse.solvers.symbolic.claims.leaks import prove_isolation
from hasse.solvers.symbolic.claims.search import _concrete_smallest, _walks_below
from hasse.solvers.symbolic.claims.solve import _conditions_of
from hasse.solvers.symbolic.claims.statement import _inner
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, SymbolicVerdict, _how, _label
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.theory.limits import MAX_WALK_LAYERS
from hasse.theory.verdicts import REFUTED, UNKNOWN

SEARCH_UPTO = 64  # an every-depth claim no short walk refutes: the concrete search by increasing n goes this far


def smallest_refutation(fn: Callable, task: SymbolicTask, walk: SymbolicVerdict, *,
                        timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicVerdict:
    """``walk`` (a refutation by walks of at most K hops) with the smallest ``n`` over every walk length.

    ``fn`` is :func:`prove_leak_free` or :func:`prove_isolation`. The walk's ``n`` is the
    smallest among walks of at most K hops; a longer walk may need fewer positions. At one
    ``n`` a walk of at most ``size − 1`` hops suffices (a shortest walk repeats no position),
    so "a counterexample with ``n <= m``, by walks of ``max size − 1`` hops over ``n <= m``"
    is monotone in ``m`` and its smallest model is the true smallest ``n``:

    1. a concrete search by increasing ``n`` (``task.concrete`` and :func:`theory.leak.find_leaks`
       at every depth), complete where nothing is symbolic but ``n`` (no parameter, index
       tensor or free predicate) and the grids are small (:data:`CONCRETE_SEARCH_ENTRIES`);
       the ``n`` it finds is confirmed by the symbolic walk of its depth;
    2. else the symbolic walks at ``m = 1, 2, 4, …`` (below the walk's ``n``).

    Where neither finishes (more than :data:`theory.limits.MAX_WALK_LAYERS` hops, a solver
    unknown), the walk's counterexample is kept and labelled "an n; smaller may exist"
    (``counterexample["smallest"] = False``); it still refutes.
    """
    start = time.perf_counter()
    out = _smallest_refutation(fn, task, walk, timeout)
    return out if out is walk else dataclasses.replace(out, seconds=walk.seconds + time.perf_counter() - start)


def _smallest_refutation(fn: Callable, task: SymbolicTask, walk: SymbolicVerdict, timeout) -> SymbolicVerdict:
    cx = walk.counterexample or {}
    n0 = cx.get("n")
    if walk.verdict != REFUTED or not isinstance(n0, int) or z3.is_int_value(task.mask.n) or n0 <= 1:
        return walk
    with _inner():
        v, how, why = _walks_below(fn, task, n0, timeout, isolation=fn is prove_isolation)
    if v is not None:
        return v if v.disagrees else _how(v, how)
    return _label(walk, why) if why else _how(walk, how)


def search_every_depth(fn: Callable, task: SymbolicTask, *, upto: int = SEARCH_UPTO,
                       timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicVerdict | None:
    """A refutation at every depth that no walk of at most K hops found: the concrete search by increasing
    ``n <= upto`` (complete at each n: every depth; so its first n is the smallest), confirmed by the
    symbolic walk of the depth it needs. None where the search does not apply (a parameter, an index
    tensor, grids too large: :func:`_concrete_smallest`), finds nothing, or is not confirmed."""
    mask = task.mask
    if z3.is_int_value(mask.n):
        return None
    conds = _conditions_of(mask, extra=list(task.conditions))
    with _inner():
        found = _concrete_smallest(task, conds, upto + 1, fn is prove_isolation)
        if found is None or found == "none":
            return None
        m, depth = found
        if depth > MAX_WALK_LAYERS:
            return None
        v = fn(task, layers=max(1, depth), assume=[mask.n <= m], timeout=timeout, recheck_upto=0)
    if v.verdict != REFUTED or (v.counterexample or {}).get("n") != m:
        return None  # not confirmed: the every-depth verdict stays as it was
    return _how(v, f"the smallest n: the concrete search finds nothing at n < {m} (every depth), and this walk "
                   f"of {depth} hops at n = {m}")


def walk_search(fn: Callable, task: SymbolicTask, verdict: SymbolicVerdict, hops: int, *,
                timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicVerdict:
    """An every-depth verdict left unknown by a failing invariant, settled by a real walk where one exists.

    ``fn`` is :func:`prove_leak_free` or :func:`prove_isolation`. A leak (or a crossing)
    within ``hops`` layers is one at every depth from there on, so a refutation by walks
    refutes the every-depth claim; its n is then made the smallest over every walk length
    (:func:`smallest_refutation`). No walk of at most ``hops`` hops: the concrete search by
    increasing n (:func:`search_every_depth`). Nothing found: ``verdict`` as it was (the
    invariant's failure is no proof).
    """
    if verdict.verdict != UNKNOWN or "fails" not in (verdict.reason or ""):
        return verdict
    walk = fn(task, layers=hops, timeout=timeout)
    if walk.verdict != REFUTED:
        found = search_every_depth(fn, task, timeout=timeout)
        if found is None:
            return verdict
        return dataclasses.replace(
            found, statement=verdict.statement, seconds=verdict.seconds + walk.seconds + found.seconds,
            reason=f"{found.reason} (no walk of at most {hops} hops; a longer real walk: it stays at every greater "
                   f"depth; {verdict.reason})")
    walk = smallest_refutation(fn, task, walk, timeout=timeout)
    return dataclasses.replace(walk, statement=verdict.statement, seconds=verdict.seconds + walk.seconds,
                               reason=f"{walk.reason} (a real walk: it stays at every greater depth; {verdict.reason})")

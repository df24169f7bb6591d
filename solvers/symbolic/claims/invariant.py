"""Invariants for every depth: the one known invariant, and conditions (1) and (2) checked, never assumed.

(1) ``A ⊆ R'`` and (2) ``R'`` transitive (``R' = R or I``) make the limit of ``A`` a subset of
``R'``; the claim (:mod:`.leaks`) then checks (3) on ``R'`` alone.
"""

from __future__ import annotations

import z3

from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.solvers.symbolic.claims.dense import prove_dense
from hasse.solvers.symbolic.claims.solve import _positions, _solve, _value, _values
from hasse.solvers.symbolic.claims.statement import _ptext
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT
from hasse.solvers.symbolic.tasks.invariants import catalogue_invariant
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.theory.verdicts import PROVED


def causal_order(mask: SymbolicMask) -> SymbolicMask:
    """``k <= q`` over the positions, size, parameters and conditions of ``mask`` (a candidate invariant)."""
    return SymbolicMask(f"causal order of {mask.name}", mask.n, mask.size, dict(mask.params), mask.k <= mask.q,
                        mask.q, mask.k, list(mask.conditions), [], [], mask.streams, mask.statement)


def known_invariant(subject: SymbolicMask | SymbolicTask, *,
                    timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicMask | None:
    """The invariant that needs no user: for a task, the catalogue's (:func:`invariants.catalogue_invariant`),
    else its mask's; for a mask, the mask itself when dense, else the causal order when ``M ⊆ {k <= q}``
    (both proved here); else None.

    The mask's covers the catalogue's dense masks (causal, bidirectional, block-causal,
    prefix-LM, document masks) and every causal one (sliding windows, chunked, recurrent).
    The claims that use the result check its conditions again.
    """
    if isinstance(subject, SymbolicTask):
        inv = catalogue_invariant(subject)
        return inv if inv is not None else known_invariant(subject.mask, timeout=timeout)
    mask = subject
    if prove_dense(mask, timeout=timeout, recheck_upto=0).verdict == PROVED:
        return mask
    q, k = z3.Ints("q k")
    query = list(mask.conditions) + mask.facts([(q, k)]) + [mask.inside(q, k), mask.allowed(q, k), k > q]
    status, _, _, _ = _solve(query, timeout)
    return causal_order(mask) if status == UNSAT else None


def _check_invariant(mask: SymbolicMask, inv: SymbolicMask, conds: list, timeout) -> tuple[str, str, dict | None]:
    """Conditions (1) ``A ⊆ R'`` and (2) ``R'`` transitive: ("ok", "", None) or (status, reason, witness)."""
    q, k = z3.Ints("q k")
    status, model, reason, _ = _solve(conds + [mask.size != inv.size], timeout)
    if status != UNSAT:
        return status, ("the invariant's size differs from the mask's" if status == SAT
                        else f"comparing sizes, the solver said {reason or status}"), None
    query = conds + [mask.inside(q, k)] + mask.facts([(q, k)]) + inv.facts([(q, k)]) + \
        [mask.attends(q, k), z3.Not(inv.attends(q, k))]
    status, model, reason, _ = _solve(query, timeout)
    if status != UNSAT:
        if status == SAT:
            n, ps = _values(model, [mask, inv])
            w = {"n": n, "params": ps, "pair": [_value(model, q), _value(model, k)]}
            return SAT, f"(1) fails: M or I is not inside the invariant (at n = {n}{_ptext(ps)}, " \
                        f"{w['pair'][0]} attends {w['pair'][1]})", w
        return status, f"(1) M or I inside the invariant: the solver said {reason or status}", None
    a, b, c = _positions("a", 3)
    query = conds + [inv.inside(a, b, c)] + inv.facts([(c, b), (b, a), (c, a)]) + \
        [inv.attends(c, b), inv.attends(b, a), z3.Not(inv.attends(c, a))]
    status, model, reason, _ = _solve(query, timeout)
    if status != UNSAT:
        if status == SAT:
            n, ps = _values(model, [mask, inv])
            w = {"n": n, "params": ps, "path": [_value(model, x) for x in (a, b, c)]}
            return SAT, f"(2) fails: the invariant is not transitive (at n = {n}{_ptext(ps)}, path {w['path']})", w
        return status, f"(2) the invariant is transitive: the solver said {reason or status}", None
    return "ok", "", None


def _resolve_invariant(mask, invariant, timeout, task: SymbolicTask | None = None):
    """The invariant given, else :func:`known_invariant` of the task (or of the mask without one)."""
    if invariant is None or invariant == "auto":
        inv = known_invariant(task if task is not None else mask, timeout=timeout)
        return inv, ("no known invariant for this mask (give layers= or invariant=)" if inv is None else "")
    return invariant, ""

"""Density for every n: ``M or I`` is transitive (the limit of the residual stack is then ``M or I``)."""

from __future__ import annotations

import time
from typing import Sequence

import z3

from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.solvers.symbolic.claims.concrete import _concrete_dense, _model_lists, _recheck_small
from hasse.solvers.symbolic.claims.obligations import _earlier, _failing
from hasse.solvers.symbolic.claims.solve import _conditions_of, _positions, _solve, _value, _values, smallest_model
from hasse.solvers.symbolic.claims.statement import _ptext, _statement, _uncertain
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, RECHECK_UPTO, SymbolicVerdict
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN


def prove_dense(mask: SymbolicMask, *, timeout: float | None = DEFAULT_TIMEOUT, assume: Sequence = (),
                recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """``M or I`` is transitive for every ``n``: unsat of ``A(c, b) ∧ A(b, a) ∧ ¬A(c, a)`` (module docstring)."""
    start = time.perf_counter()
    a, b, c = _positions("a", 3)
    conds = _conditions_of(mask, extra=assume)
    statement = _statement(mask, mask.params, conds, "M or I is transitive")
    failed = _failing("dense", statement, start, timeout, [(mask, conds, mask.params)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: prove_dense(mask, timeout=timeout, assume=[*assume, *below],
                                                                  recheck_upto=0))
    query = conds + [mask.inside(a, b, c)] + mask.facts([(c, b), (b, a), (c, a)]) + \
        [mask.attends(c, b), mask.attends(b, a), z3.Not(mask.attends(c, a))]
    status, model, reason, _ = _solve(query, timeout)
    if status == UNSAT:
        recheck = _recheck_small(mask, conds, recheck_upto, lambda n, ps: _concrete_dense(mask, n, ps, None))
        return SymbolicVerdict("dense", PROVED, statement, time.perf_counter() - start, None, recheck,
                               "no a, b, c with c -> b -> a and not c -> a")
    if status != SAT:
        return SymbolicVerdict("dense", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"the solver said {reason or status}")
    model, note = smallest_model(query, mask.n, mask.params, timeout, model)
    n, params = _values(model, mask)
    pa, pb, pc = (_value(model, x) for x in (a, b, c))
    cx = {"n": n, "params": params, "positions": [pa, pb, pc], "path": [pa, pb, pc],
          "missing": [pc, pa], "size": mask.size_at(n, **params)}
    recheck = _concrete_dense(mask, n, params, (pa, pb, pc),
                              _model_lists([mask], model, n, [(pc, pb), (pb, pa), (pc, pa)]))
    return SymbolicVerdict("dense", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                           f"at n = {n}{_ptext(params)}: {pc} attends {pb}, {pb} attends {pa}, "
                           f"but {pc} does not attend {pa}" + _uncertain(cx, note))

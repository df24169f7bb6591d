"""Equivalence for every n: two masks with the same size and the same pairs, else the smallest n where not."""

from __future__ import annotations

import time
from typing import Sequence

import z3

from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.solvers.symbolic.claims.concrete import (
    _concrete_equal, _concrete_sizes, _equal_on_plan, _model_lists, _recheck_small,
)
from hasse.solvers.symbolic.claims.obligations import _earlier, _failing
from hasse.solvers.symbolic.claims.solve import _conditions_of, _params_of, _solve, _value, _values, smallest_model
from hasse.solvers.symbolic.claims.statement import _ptext, _statement, _uncertain
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, RECHECK_UPTO, SymbolicVerdict
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN


def check_equivalence(mask_a: SymbolicMask, mask_b: SymbolicMask, *, timeout: float | None = DEFAULT_TIMEOUT,
                      assume: Sequence = (), recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """The two masks have the same size and the same pairs for every ``n`` (else the smallest differing ``n``).

    Both masks must be over the same ``n`` (and parameters of the same name are the same
    parameter); ``assume`` ties others (``z3.Int("d") == z3.Int("w") - 1``).
    """
    start = time.perf_counter()
    q, k = z3.Ints("q k")
    conds = _conditions_of(mask_a, mask_b, extra=assume)
    params = _params_of(mask_a, mask_b)
    statement = _statement(mask_a, params, conds, f"{mask_a.name} and {mask_b.name} allow the same pairs")
    failed = _failing("equivalent", statement, start, timeout, [(mask_a, conds, params), (mask_b, conds, params)])
    if failed is not None:
        return _earlier(failed, mask_a.n, lambda below: check_equivalence(
            mask_a, mask_b, timeout=timeout, assume=[*assume, *below], recheck_upto=0))
    base = conds + mask_a.facts([(q, k)]) + mask_b.facts([(q, k)])
    size_query = conds + [mask_a.size != mask_b.size]
    status, model, reason, _ = _solve(size_query, timeout)
    if status == SAT:
        model, note = smallest_model(size_query, mask_a.n, params, timeout, model)
        n, ps = _values(model, [mask_a, mask_b])
        sa, sb = mask_a.size_at(n, **ps), mask_b.size_at(n, **ps)
        cx = {"n": n, "params": ps, "sizes": [sa, sb]}
        return SymbolicVerdict("equivalent", REFUTED, statement, time.perf_counter() - start, cx,
                               _concrete_sizes(mask_a, mask_b, n, ps),
                               f"at n = {n}{_ptext(ps)} the sizes differ: {sa} and {sb}"
                               + _uncertain(cx, note))
    if status != UNSAT:
        return SymbolicVerdict("equivalent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"comparing the sizes, the solver said {reason or status}")
    query = base + [mask_a.inside(q, k), mask_a.allowed(q, k) != mask_b.allowed(q, k)]
    status, model, reason, _ = _solve(query, timeout)
    if status == UNSAT:
        recheck = _recheck_small(mask_a, conds, recheck_upto,
                                 lambda n, ps: _concrete_equal(mask_a, mask_b, n, ps, None), params,
                                 masks=[mask_a, mask_b], on_plan=lambda pl: _equal_on_plan(mask_a, mask_b, pl))
        return SymbolicVerdict("equivalent", PROVED, statement, time.perf_counter() - start, None, recheck,
                               "same size and no pair (q, k) allowed by one and not the other")
    if status != SAT:
        return SymbolicVerdict("equivalent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"the solver said {reason or status}")
    model, note = smallest_model(query, mask_a.n, params, timeout, model)
    n, ps = _values(model, [mask_a, mask_b])
    pq, pk = _value(model, q), _value(model, k)
    in_a = z3.is_true(model.eval(mask_a.allowed(pq, pk), model_completion=True))
    cx = {"n": n, "params": ps, "positions": [pq, pk], "pair": [pq, pk],
          "allowed_by": mask_a.name if in_a else mask_b.name}
    recheck = _concrete_equal(mask_a, mask_b, n, ps, (pq, pk),
                              _model_lists([mask_a, mask_b], model, n, [(pq, pk)]))
    return SymbolicVerdict("equivalent", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                           f"at n = {n}{_ptext(ps)}: M[{pq}, {pk}] is allowed by {cx['allowed_by']} only"
                           + _uncertain(cx, note))

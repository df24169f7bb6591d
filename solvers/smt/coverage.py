"""Target coverage by Z3: a token that no position of a task predicts.

>>> find_uncovered_target([None, [1], [2]], 3).value
0
>>> find_uncovered_target([[0], [1], [2]], 3).status
'unsat'
"""

from __future__ import annotations

import z3

from hasse.solvers.smt.prove import Answer, check


def find_uncovered_target(labels, tokens: int, *, timeout: float | None = None) -> Answer:
    """A token ``T`` (``0 <= T < tokens``) that no position predicts: unsat means coverage 100 %."""
    solver = z3.Solver()
    t = z3.Int("T")
    solver.add(0 <= t, t < tokens)
    for target in sorted({int(x) for ts in labels for x in (ts or ())}):
        solver.add(t != target)
    return check(solver, timeout, lambda model: model[t].as_long())

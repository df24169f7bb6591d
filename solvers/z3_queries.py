"""Proof obligations about masks (:class:`Query`) and their proof by negation, one after another.

A :class:`Query` holds the hypotheses over a mask's Boolean variables
(:mod:`solvers.z3_masks`) and the negated claim as named disjuncts: ``unsat`` of
``hypotheses and OR(target)`` proves the claim; ``sat`` is a counterexample (or the
witness of an existence statement), decoded into a numpy mask with the disjuncts that
hold in it. :func:`check_query` checks one (all disjuncts at once, or one at a time on
one solver with ``incremental``); :func:`prove` checks a list in turn until one is not
``unsat``. Both answer with :class:`solvers.z3_prove.Answer` (``value``: the mask).

>>> from hasse.solvers.z3_masks import encode_mask
>>> m = encode_mask(2)
>>> answer = check_query(Query("an edge", m, [], {"0 sees 1": m[0][1]}), None)
>>> answer.status, answer.value.astype(int).tolist(), answer.failing
('sat', [[0, 1], [0, 0]], ('0 sees 1',))
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import z3

from hasse.solvers.z3_masks import Matrix, decode_mask
from hasse.solvers.z3_prove import SAT, UNKNOWN, UNSAT, Answer, check, or_


@dataclass
class Query:
    """One proof obligation: hypotheses, and the negated claim as named disjuncts.

    ``unsat`` of ``hypotheses and OR(target.values())`` proves the claim. For an
    existence statement ``target`` is the property wanted and ``sat`` gives the witness.
    """

    name: str
    mask: Matrix
    hypotheses: list = field(default_factory=list)
    target: dict = field(default_factory=dict)  # readable name -> Boolean term (a way the claim fails)
    incremental: bool = False  # check the disjuncts one at a time on one solver (push/pop), keeping what it learnt
    logic: str | None = None  # e.g. "QF_BV": a solver specialised for that logic (z3.SolverFor)


def check_query(query: Query, timeout: float | None) -> Answer:
    """Check one query; ``timeout`` in seconds (``None``: no limit). ``value`` of a sat answer is the mask."""
    start = time.monotonic()
    solver = z3.SolverFor(query.logic) if query.logic else z3.Solver()
    solver.add(*query.hypotheses)
    parts = list(query.target.values()) if query.incremental else [or_(list(query.target.values()))]

    def decode(model: z3.ModelRef):
        failing = tuple(name for name, t in query.target.items() if z3.is_true(model.eval(t, model_completion=True)))
        return decode_mask(model, query.mask), failing[:8]

    for term in parts:
        left = None
        if timeout is not None:
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                return Answer(UNKNOWN, reason="timeout", query=query.name, seconds=time.monotonic() - start)
        solver.push()
        solver.add(term)
        answer = check(solver, left, decode)
        if answer.status == SAT:
            mask, failing = answer.value
            return Answer(SAT, mask, query=query.name, seconds=time.monotonic() - start, failing=failing)
        if answer.status != UNSAT:
            return Answer(UNKNOWN, reason=answer.reason or "unknown", query=query.name,
                          seconds=time.monotonic() - start)
        solver.pop()
    return Answer(UNSAT, query=query.name, seconds=time.monotonic() - start)


def prove(queries: Sequence[Query], remaining) -> list[Answer]:
    """Check the queries in turn until one is not ``unsat`` (a refutation, a witness or unknown).

    ``remaining()`` gives the seconds left (``None``: no limit); when it is spent
    the next query is answered ``unknown`` with reason ``timeout`` without a call.
    """
    answers = []
    for query in queries:
        left = remaining()
        if left is not None and left <= 0:
            answers.append(Answer(UNKNOWN, reason="timeout", query=query.name))
            break
        answer = check_query(query, left)
        if answer.status == UNKNOWN and left is not None and answer.reason in ("timeout", "canceled"):
            answer = replace(answer, reason="timeout")
        answers.append(answer)
        if answer.status != UNSAT:
            break
    return answers

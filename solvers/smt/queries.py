"""Proof obligations about masks (:class:`Query`) and their proof by negation, one after another.

A :class:`Query` holds the hypotheses over a mask's Boolean variables
(:mod:`solvers.smt.masks`) and the negated claim as named disjuncts: ``unsat`` of
``hypotheses and OR(target)`` proves the claim; ``sat`` is a counterexample (or the
witness of an existence statement), decoded into a numpy mask with the disjuncts that
hold in it. :func:`check_query` checks one (all disjuncts at once, or one at a time on
one solver with ``incremental``); :func:`prove` checks a list in turn until one is not
``unsat``. Both answer with :class:`solvers.smt.prove.Answer` (``value``: the mask).

Run-time controls (:func:`run_controls`): an ``unsat`` is only worth something if the
hypotheses are not vacuous and the encoding can find what it looks for. Every check
of a theorem therefore also asks, in the same run, (1) that each query's hypotheses
admit known non-trivial objects (:attr:`Query.admits`; default :func:`known_masks`:
the causal and the bidirectional mask), asserting the hypotheses plus "``M`` equals
this concrete mask" (must be ``sat``), and (2) that a *planted* false variant of the
claim, built by the same encoder on the same hypotheses and symmetry breaking, comes
out ``sat`` (a counterexample; ``unsat`` for a false existence statement). A control
that fails makes the verdict ``unknown`` ("vacuous premises" / "control failed").

>>> from hasse.solvers.smt.masks import encode_mask
>>> m = encode_mask(2)
>>> answer = check_query(Query("an edge", m, [], {"0 sees 1": m[0][1]}), None)
>>> answer.status, answer.value.astype(int).tolist(), answer.failing
('sat', [[0, 1], [0, 0]], ('0 sees 1',))
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np
import z3

from hasse.solvers.smt.masks import Matrix, decode_mask
from hasse.solvers.smt.prove import SAT, UNKNOWN, UNSAT, Answer, check, or_


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
    admits: dict = field(default_factory=dict)  # name -> (n, n) bool values of ``mask`` the hypotheses must admit


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


# ---------------------------------------------------------------- run-time controls


def known_masks(n: int) -> dict[str, np.ndarray]:
    """Known non-trivial masks every premise set of size ``n`` must admit: causal and bidirectional.

    Zero diagonal (the diagonal plays no role under the residual). Both survive the
    kit's symmetry breaking (every position is at hop distance 1 from position 0).

    >>> {k: v.astype(int).tolist() for k, v in known_masks(2).items()}
    {'causal:n=2': [[0, 0], [1, 0]], 'bidirectional:n=2': [[0, 1], [1, 0]]}
    """
    off = ~np.eye(n, dtype=bool)
    return {f"causal:n={n}": np.tri(n, k=-1, dtype=bool), f"bidirectional:n={n}": off}


def admits(query: Query, values: np.ndarray, timeout: float | None) -> Answer:
    """Do ``query.hypotheses`` admit ``query.mask = values``? ``sat`` = yes (the premises are not vacuous there)."""
    solver = z3.SolverFor(query.logic) if query.logic else z3.Solver()
    solver.add(*query.hypotheses)
    n = len(query.mask)
    solver.add(*[query.mask[q][k] == z3.BoolVal(bool(values[q][k])) for q in range(n) for k in range(n)])
    return check(solver, timeout)


@dataclass(frozen=True)
class Controls:
    """What the run-time controls found; ``failure`` is ``None`` when every control passed."""

    premises: tuple = ()  # {"query", "admits", "status"} per premise set and known object
    planted: tuple = ()  # {"query", "expected", "status"} per query of the planted false variant
    failure: str | None = None  # "vacuous premises: …" / "control failed: …" / "timeout"

    def to_json(self) -> dict:
        out = {"premises": list(self.premises), "planted": list(self.planted), "passed": self.failure is None}
        if self.failure is not None:
            out["failure"] = self.failure
        return out


def run_controls(queries: Sequence[Query], planted: Sequence[Query], remaining: Callable[[], float | None], *,
                 expect: str = SAT) -> Controls:
    """Check that every query's premises admit its known objects and that the planted queries answer ``expect``.

    ``queries``: the obligations of the claim (each distinct hypothesis set is checked
    once per known object: :attr:`Query.admits`, default :func:`known_masks`);
    ``planted``: the queries of a false variant of the claim on the same premises;
    ``expect``: ``"sat"`` (a universal claim: the false variant has a counterexample) or
    ``"unsat"`` (an existence statement: the false one has no witness).

    >>> from hasse.solvers.smt.masks import encode_mask
    >>> m = encode_mask(2)
    >>> good = Query("q", m, [], {"0 sees 1": m[0][1]})
    >>> run_controls([good], [good], lambda: None).failure is None
    True
    >>> empty = Query("q", m, [z3.Not(m[1][0]), z3.Not(m[0][1])], {"0 sees 1": m[0][1]})
    >>> run_controls([empty], [], lambda: None).failure
    "vacuous premises: the hypotheses of 'q' exclude causal:n=2"
    """
    premises, seen = [], set()
    for query in queries:
        key = (id(query.hypotheses), id(query.mask), query.logic)
        if key in seen:
            continue
        seen.add(key)
        for name, values in (query.admits or known_masks(len(query.mask))).items():
            left = remaining()
            if left is not None and left <= 0:
                return Controls(tuple(premises), (), "timeout")
            status = admits(query, values, left).status
            premises.append({"query": query.name, "admits": name, "status": status})
            if status == UNKNOWN:
                return Controls(tuple(premises), (), "timeout" if left is not None else "control unknown")
            if status != SAT:
                return Controls(tuple(premises), (),
                                f"vacuous premises: the hypotheses of {query.name!r} exclude {name}")
    results = []
    for query in planted:
        left = remaining()
        if left is not None and left <= 0:
            return Controls(tuple(premises), tuple(results), "timeout")
        status = check_query(query, left).status
        results.append({"query": query.name, "expected": expect, "status": status})
        if status == UNKNOWN:
            return Controls(tuple(premises), tuple(results), "timeout" if left is not None else "control unknown")
        if status != expect:
            return Controls(tuple(premises), tuple(results),
                            f"control failed: the planted false claim {query.name!r} came out {status}, "
                            f"expected {expect}")
    return Controls(tuple(premises), tuple(results))

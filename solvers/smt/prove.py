"""Proof by negation with Z3: the one answer type, the one solver call, and simplifying Boolean helpers.

Every encoding of the kit asserts its hypotheses and the *negated* claim on a
solver and hands it to :func:`check`:

- ``unsat`` → the claim is proved (no object of that size breaks it);
- ``sat`` → refuted (or, for an existence statement, a witness): the model is
  decoded by the caller's ``decode(model)`` into :attr:`Answer.value`;
- ``unknown`` → inconclusive, with the solver's ``reason_unknown()``.

:func:`or_`, :func:`and_` and :func:`not_` build terms and fold the constants
``TRUE``/``FALSE`` away, so encodings with many constant entries stay small. They
also check the time limit (:func:`theory.deadline.tick`): every encoding is built from
them, so ``--timeout`` is honoured while an encoding is being built.

>>> import z3
>>> s = z3.Solver()
>>> x = z3.Bool("x")
>>> s.add(and_(x, not_(x)))
>>> check(s, None)
Answer(status='unsat', value=None, reason=None, query='', seconds=0.0, failing=())
>>> or_([FALSE, x]) is x, z3.is_true(or_([x, TRUE]))
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import z3

from hasse.theory.deadline import tick

SAT, UNSAT, UNKNOWN = "sat", "unsat", "unknown"
TRUE, FALSE = z3.BoolVal(True), z3.BoolVal(False)
MAX_TIMEOUT_MS = 2 ** 32 - 1  # Z3's timeout parameter is an unsigned 32-bit count of milliseconds


@dataclass(frozen=True)
class Answer:
    """What the solver said: ``status`` sat / unsat / unknown, the decoded model when sat, the reason when unknown."""

    status: str  # "sat" | "unsat" | "unknown"
    value: Any = None  # sat: the decoded model (a mask, a map between diagrams, a walk, …)
    reason: str | None = None  # unknown: reason_unknown() or "timeout"
    query: str = ""  # the name of the proof obligation (mask-level queries)
    seconds: float = 0.0  # time spent on it (mask-level queries)
    failing: tuple[str, ...] = ()  # sat: the named disjuncts of the negated claim that hold in the model


def check(solver: z3.Solver, timeout: float | None,
          decode: Callable[[z3.ModelRef], Any] | None = None) -> Answer:
    """Run ``solver`` within ``timeout`` seconds (``None``: no limit) and say what it found.

    ``sat``: ``value`` is ``decode(model)`` (``None`` without ``decode``); ``unknown``:
    ``reason`` is the solver's ``reason_unknown()``. Raises ``TimeoutError`` when
    ``timeout`` leaves no time at all, ``ValueError`` when it is NaN; an infinite
    timeout is no limit, and one beyond Z3's range (``2^32 - 1`` ms) is capped.
    """
    if timeout is not None:
        if math.isnan(timeout):
            raise ValueError("timeout must be a number of seconds, got nan")
        if timeout <= 0:
            raise TimeoutError("no time left for the next solver call")
        if math.isfinite(timeout):
            solver.set("timeout", min(MAX_TIMEOUT_MS, max(1, int(timeout * 1000))))
    result = solver.check()
    if result == z3.sat:
        return Answer(SAT, decode(solver.model()) if decode is not None else None)
    if result == z3.unsat:
        return Answer(UNSAT)
    return Answer(UNKNOWN, reason=solver.reason_unknown())


def or_(terms: Sequence) -> z3.BoolRef:
    """``OR terms``, without constant False terms (True if one is constant True)."""
    tick()
    terms = [t for t in terms if not z3.is_false(t)]
    if any(z3.is_true(t) for t in terms):
        return TRUE
    return FALSE if not terms else terms[0] if len(terms) == 1 else z3.Or(terms)


def not_(a) -> z3.BoolRef:
    """``not a``, folding constants."""
    return FALSE if z3.is_true(a) else TRUE if z3.is_false(a) else z3.Not(a)


def and_(a, b) -> z3.BoolRef:
    """``a and b``, folding constants."""
    tick()
    if z3.is_false(a) or z3.is_false(b):
        return FALSE
    if z3.is_true(a):
        return b
    return a if z3.is_true(b) else z3.And(a, b)

"""From an exhaustive search or Z3 answers to an :class:`~proofs.core.Outcome`, shared by the mask-level proofs.

- :func:`exhaustive_outcome`: every mask of size n (or one shard of them) through a
  vectorised predicate; the first flagged mask is decoded and explained.
- :func:`z3_outcome`: the queries of :mod:`solvers.z3_claims` proved by negation;
  a model is decoded into a mask and re-checked with numpy after the fact.
- :func:`shortest_path`: a plain breadth-first search for witnesses (independent of
  the engine being checked).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable

import numpy as np

from hasse.proofs.core import PROVED, REFUTED, UNKNOWN, Context, Outcome
from hasse.solvers import exhaustive as ex


def rows01(mask: np.ndarray) -> list[list[int]]:
    return np.asarray(mask, dtype=bool).astype(int).tolist()


def shortest_path(mask: np.ndarray, source: int, target: int) -> list[int] | None:
    """Fewest attention edges ``source -> … -> target`` (``mask[q, k]``: ``k -> q``), or None."""
    mask = np.asarray(mask, dtype=bool)
    before = {source: None}
    todo = deque([source])
    while todo:
        k = todo.popleft()
        if k == target:
            path = [k]
            while before[path[-1]] is not None:
                path.append(before[path[-1]])
            return path[::-1]
        for q in np.flatnonzero(mask[:, k]).tolist():
            if q not in before:
                before[q] = k
                todo.append(q)
    return None


def exhaustive_outcome(n: int, ctx: Context, flag: Callable[[np.ndarray], np.ndarray],
                       explain: Callable[[np.ndarray], dict], *, diagonal: bool = False,
                       existence: bool = False) -> Outcome:
    """Search every mask of size ``n`` (zero diagonal unless ``diagonal``) for one that ``flag`` marks.

    A universal statement is ``refuted`` by the first flagged mask, ``proved`` when the
    whole space was checked; an existence statement is ``proved`` by the first flagged
    mask (its witness) and ``refuted`` when no mask is flagged. A shard that checks
    only part of the space and finds nothing is ``unknown`` (reason ``partial``) until
    the shards are combined (:func:`solvers.exhaustive.combine`).
    """
    found = ex.search(n, flag, ctx, diagonal=diagonal)
    details = {"total": found.total, "range": [found.start, found.stop], "complete": found.complete,
               "workers": found.workers, "existence": existence,
               "space": "every mask (diagonal included)" if diagonal else "every mask with a zero diagonal"}
    if ctx.shard is not None:
        details["shard"] = f"{ctx.shard[0]}/{ctx.shard[1]}"
    if found.found is not None:
        mask = ex.decode(n, found.found, diagonal)
        described = {"index": found.found, "mask": rows01(mask)} | explain(mask)
        if existence:
            return Outcome(PROVED, found.checked, witness=described, details=details)
        return Outcome(REFUTED, found.checked, counterexample=described, details=details)
    if found.timed_out:
        return Outcome(UNKNOWN, found.checked, reason="timeout", details=details)
    if (found.start, found.stop) != (0, found.total):
        return Outcome(UNKNOWN, found.checked, details=details | {"partial": True},
                       reason=f"partial: shard {details['shard']} checked masks {found.start:,} to {found.stop - 1:,} "
                              f"of {found.total:,}; combine every shard for a verdict")
    if existence:
        return Outcome(REFUTED, found.checked, counterexample={"none": f"no mask of size {n} has the property"},
                       details=details)
    return Outcome(PROVED, found.checked, details=details)


def z3_outcome(n: int, ctx: Context, build: Callable[[int, str], list], encoding: str, *,
               confirm: Callable[[np.ndarray], dict] | None = None, existence: bool = False,
               diagonal: bool = False, shape_only: bool = False) -> Outcome:
    """Prove ``build(n, encoding)``'s queries by negation (for an existence statement: find a witness).

    ``confirm(mask)`` re-checks a decoded mask with numpy and describes it (it goes
    into the counterexample or the witness). ``shape_only``: an ``unsat`` of an
    existence query only rules out witnesses of one shape, so it is ``unknown``.
    """
    from hasse.solvers.z3_queries import prove

    start = time.monotonic()
    queries = build(n, encoding)
    built = time.monotonic() - start
    details = {"encoding": encoding, "build_seconds": round(built, 4), "masks": ex.space_size(n, diagonal)}
    if ctx.expired():
        return Outcome(UNKNOWN, 0, reason="timeout", details=details)
    answers = prove(queries, ctx.remaining)
    details["queries"] = [{"query": a.query, "status": a.status, "seconds": round(a.seconds, 4)} for a in answers]
    last = answers[-1]
    if last.status == "sat":
        described = {"mask": rows01(last.value), "query": last.query, "fails": list(last.failing)}
        if confirm is not None:
            described |= confirm(last.value)
        if existence:
            return Outcome(PROVED, len(answers), witness=described, details=details)
        return Outcome(REFUTED, len(answers), counterexample=described, details=details)
    if last.status == "unknown":
        return Outcome(UNKNOWN, len(answers), reason=last.reason, details=details)
    if existence:
        if shape_only:
            return Outcome(UNKNOWN, len(answers), reason="no witness of the encoded shape", details=details)
        return Outcome(REFUTED, len(answers), counterexample={"none": f"no mask of size {n} has the property"},
                       details=details)
    return Outcome(PROVED, len(answers), details=details)

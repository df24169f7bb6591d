"""The checks of the mask-level theorems: an exhaustive search or Z3 answers to an :class:`~proofs.theorem.Outcome`.

- :func:`mask_theorem`: a mask-level :class:`~proofs.theorem.Theorem` from its parts —
  a vectorised predicate ``flag`` for the exhaustive check, the queries of
  :mod:`solvers.smt.claims` / :mod:`solvers.smt.hasse` for the Z3 check, and the numpy
  re-checks ``explain`` and ``confirm`` that describe a flagged or decoded mask;
- :func:`exhaustive_outcome`: every mask of size n (or one shard of them) through a
  vectorised predicate; the first flagged mask is decoded and explained. Complete or
  not proved: ``checked`` counts the masks actually decoded (:class:`solvers.exhaustive.Coverage`)
  and a verdict about every mask needs it equal to ``2^(n(n-1))`` (``2^(n²)`` with the
  diagonal, :func:`solvers.class_sizes.masks`), else ``unknown`` ("scan incomplete: …");
- :func:`mask_recheck`: re-checks a counterexample or witness read from a certificate
  (the mask through ``flag`` and ``confirm``, its index decoded again).
- :func:`z3_outcome`: the queries of :mod:`solvers.smt.claims` proved by negation;
  a model is decoded into a mask and re-checked with numpy after the fact; in the
  same run the run-time controls (:func:`solvers.smt.queries.run_controls`) check that
  the premises admit the causal and the bidirectional mask and that a planted false
  variant of the claim is refuted — otherwise the verdict is ``unknown``. The controls
  are recorded in ``details["controls"]`` (and so in the certificate).
- :func:`shortest_path`: a plain breadth-first search for witnesses (independent of
  the engine being checked).

>>> shortest_path(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=bool), 0, 2)  # 0 -> 1 -> 2
[0, 1, 2]
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable

import numpy as np

from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Theorem
from hasse.solvers import class_sizes
from hasse.solvers import exhaustive as ex
from hasse.theory import batch


def rows01(mask: np.ndarray) -> list[list[int]]:
    """A mask as rows of 0/1 (JSON)."""
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
    the shards are combined (:func:`proofs.certificate.combine`). A scan that checked
    fewer masks than its range holds (a decoder that skips or repeats masks) is
    ``unknown`` ("scan incomplete: checked … of …"), as is a flagged mask that is not
    flagged again when decoded from its index.
    """
    space = class_sizes.masks(n, diagonal)
    found = ex.search(n, flag, ctx, diagonal=diagonal)
    details = {"total": found.total, "range": [found.start, found.stop], "complete": found.complete,
               "workers": found.workers, "existence": existence,
               "space": "every mask (diagonal included)" if diagonal else "every mask with a zero diagonal"}
    if ctx.shard is not None:
        details["shard"] = f"{ctx.shard[0]}/{ctx.shard[1]}"
    if found.total != space:
        return Outcome(UNKNOWN, found.checked, reason=f"the enumeration numbers {found.total:,} masks, the class "
                                                      f"has {space:,}", details=details, space=space)
    if found.found is not None:
        mask = ex.decode(n, found.found, diagonal)
        if not bool(np.asarray(flag(batch.pack(mask[None])))[0]):
            return Outcome(UNKNOWN, found.checked, reason=f"mask {found.found:,} was flagged but is not when decoded "
                                                          "again from its index", details=details, space=space)
        described = {"index": found.found, "mask": rows01(mask)} | explain(mask)
        if existence:
            return Outcome(PROVED, found.checked, witness=described, details=details, space=space)
        return Outcome(REFUTED, found.checked, counterexample=described, details=details, space=space)
    if found.timed_out:
        return Outcome(UNKNOWN, found.checked, reason="timeout", details=details, space=space)
    size = found.stop - found.start
    if not found.complete:
        return Outcome(UNKNOWN, found.checked, details=details, space=space,
                       reason=f"scan incomplete: checked {found.checked:,} of {size:,}"
                              + (f" (masks {found.start:,} to {found.stop - 1:,})" if size != space else ""))
    if (found.start, found.stop) != (0, space):
        where = f"shard {details['shard']}" if "shard" in details else "the range"
        return Outcome(UNKNOWN, found.checked, details=details | {"partial": True}, space=space,
                       reason=f"partial: {where} checked masks {found.start:,} to {found.stop - 1:,} "
                              f"of {space:,}; combine every shard for a verdict")
    if existence:
        return Outcome(REFUTED, found.checked, counterexample={"none": f"no mask of size {n} has the property"},
                       details=details, space=space)
    return Outcome(PROVED, found.checked, details=details, space=space)


def mask_recheck(flag: Callable[[np.ndarray], np.ndarray], confirm: Callable[[np.ndarray], dict], *,
                 diagonal: bool = False) -> Callable[[str, int, object], str | None]:
    """A re-check of a counterexample or witness read from a certificate: ``(kind, n, obj) -> why not`` (None: holds).

    ``obj["mask"]`` must be ``n`` rows of ``n`` 0/1 integers (zero diagonal unless
    ``diagonal``), flagged by ``flag`` and confirmed by ``confirm`` (the theorem's
    independent numpy re-check); ``obj["index"]``, if given, must decode to that mask.

    >>> always = mask_recheck(lambda rows: np.ones(rows.shape[1], bool), lambda m: {"confirmed": m.any()})
    >>> always("witness", 2, {"mask": [[0, 1], [0, 0]]}) is None, always("witness", 2, {"mask": [[0, 0], [0, 0]]})
    (True, 'the witness is not confirmed when re-checked')
    """

    def recheck(kind: str, n: int, obj) -> str | None:
        rows = obj.get("mask") if isinstance(obj, dict) else None
        if (not isinstance(rows, list) or len(rows) != n
                or any(not isinstance(r, list) or len(r) != n or any(type(x) is not int or x not in (0, 1) for x in r)
                       for r in rows)):
            return f"the {kind} has no mask of {n} rows of {n} 0/1 integers"
        mask = np.array(rows, dtype=bool)
        if not diagonal and mask.diagonal().any():
            return f"the {kind}'s mask has a nonzero diagonal"
        if "index" in obj:
            index = obj["index"]
            if type(index) is not int or not 0 <= index < class_sizes.masks(n, diagonal):
                return f"the {kind}'s index is not a mask number of size {n}"
            if not np.array_equal(ex.decode(n, index, diagonal), mask):
                return f"the {kind}'s index {index} decodes to another mask"
        if not bool(np.asarray(flag(batch.pack(mask[None])))[0]):
            return f"the {kind} is not flagged when re-checked"
        if not confirm(mask).get("confirmed"):
            return f"the {kind} is not confirmed when re-checked"
        return None

    return recheck


def z3_outcome(n: int, ctx: Context, build: Callable[[int, str], list], encoding: str, *,
               confirm: Callable[[np.ndarray], dict] | None = None, existence: bool = False,
               diagonal: bool = False, shape_only: bool = False) -> Outcome:
    """Prove ``build(n, encoding)``'s queries by negation (for an existence statement: find a witness).

    ``confirm(mask)`` re-checks a decoded mask with numpy and describes it (it goes
    into the counterexample or the witness). ``shape_only``: an ``unsat`` of an
    existence query only rules out witnesses of one shape, so it is ``unknown``.
    A definite verdict stands only if the run-time controls pass: every query's
    premises admit known non-trivial masks, and ``build(n, encoding, planted=True)``
    (a false variant of the claim on the same premises) comes out ``sat`` (``unsat``
    for an existence statement); otherwise ``unknown`` with the control's reason.
    """
    from hasse.solvers.smt.queries import prove

    start = time.monotonic()
    queries = build(n, encoding)
    built = time.monotonic() - start
    details = {"encoding": encoding, "build_seconds": round(built, 4), "masks": ex.space_size(n, diagonal)}
    if ctx.expired():
        return Outcome(UNKNOWN, 0, reason="timeout", details=details)
    answers = prove(queries, ctx.remaining)
    details["queries"] = [{"query": a.query, "status": a.status, "seconds": round(a.seconds, 4)} for a in answers]
    last = answers[-1]
    if last.status != "unknown":
        failure = _controls(n, ctx, build, encoding, queries, existence, details)
        if failure is not None:
            return Outcome(UNKNOWN, len(answers), reason=failure, details=details)
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


def _controls(n: int, ctx: Context, build, encoding: str, queries: list, existence: bool,
              details: dict) -> str | None:
    """Run the run-time controls of one Z3 check; record them in ``details``; the reason to say unknown, or None."""
    from hasse.solvers.smt.queries import UNSAT, run_controls

    start = time.monotonic()
    planted = build(n, encoding, planted=True)
    controls = run_controls(queries, planted, ctx.remaining, expect=UNSAT if existence else "sat")
    details["controls"] = controls.to_json() | {"seconds": round(time.monotonic() - start, 4)}
    if not planted:
        details["controls"]["note"] = f"no false variant of the claim at n = {n} (the space has one mask)"
    return controls.failure


def mask_theorem(name: str, statement: str, flag: Callable[[np.ndarray], np.ndarray],
                 explain: Callable[[np.ndarray], dict], claims: Callable[[int, str], list],
                 confirm: Callable[[np.ndarray], dict], *, diagonal: bool = False, existence: bool = False,
                 shaped_encoding: str | None = None, unconfirmed: str = "the solver's witness fails when re-checked",
                 min_n: int = 1, max_n: dict | None = None, invariant: str | None = None,
                 not_invariant: str | None = None, limit_only: str | None = None) -> Theorem:
    """A mask-level theorem whose two checks are :func:`exhaustive_outcome` and :func:`z3_outcome`.

    ``flag``/``explain`` drive the exhaustive check; ``claims(n, encoding)`` builds the Z3
    queries and ``confirm`` re-checks a decoded mask. ``diagonal``: masks with their
    diagonal (the no-residual control). For an existence statement (``existence``) the
    ``shaped_encoding`` looks only for witnesses of one shape (its ``unsat`` is unknown),
    and a Z3 witness that ``confirm`` does not confirm is unknown with reason ``unconfirmed``.
    ``z3_check(n, ctx, encoding="naive")`` runs the naive encoding (default ``"better"``).
    ``max_n``: the size guard per method (default exhaustive 7, :data:`proofs.theorem.DEFAULT_MAX_N`),
    with :func:`mask_work` as the estimate in its message. ``invariant``: why the statement is
    invariant under relabelling positions (``hasse prove --orbits``, :mod:`proofs.orbits_check`);
    ``limit_only``: why ``flag`` reads a mask only through its limit ``R*`` (``--orbits`` then runs it
    over every labelled preorder).
    """

    def exhaustive_check(n: int, ctx: Context) -> Outcome:
        return exhaustive_outcome(n, ctx, flag, explain, diagonal=diagonal, existence=existence)

    def z3_check(n: int, ctx: Context, encoding: str = "better") -> Outcome:
        outcome = z3_outcome(n, ctx, claims, encoding, confirm=confirm, existence=existence, diagonal=diagonal,
                             shape_only=encoding == shaped_encoding)
        if existence and outcome.witness is not None and not outcome.witness["confirmed"]:
            return Outcome(UNKNOWN, outcome.checked, reason=unconfirmed,
                           details=outcome.details | {"model": outcome.witness})
        return outcome

    return Theorem(name, statement, exhaustive_check, z3_check, existence=existence, min_n=min_n,
                   space=lambda n: class_sizes.masks(n, diagonal), indexed=True,
                   recheck=mask_recheck(flag, confirm, diagonal=diagonal), max_n=dict(max_n or {}),
                   estimate=lambda n, method: mask_work(n, method, diagonal), invariant=invariant,
                   not_invariant=not_invariant, limit_only=limit_only, flag=flag, explain=explain, diagonal=diagonal)


def mask_work(n: int, method: str, diagonal: bool = False) -> str:
    """The work of a mask-level check at ``n``, in words, without computing ``2^(n(n-1))`` itself.

    >>> mask_work(9, "exhaustive"), mask_work(1000, "z3")
    ('2^72 ≈ 4.7e+21 masks', 'a Z3 encoding of about 1.0e+09 terms')
    """
    if method == "exhaustive":
        bits = n * n if diagonal else n * (n - 1)
        exponent = bits * 0.30102999566398120
        mantissa = 10 ** (exponent - int(exponent))
        return f"2^{bits} ≈ {mantissa:.1f}e+{int(exponent):02d} masks"
    return f"a Z3 encoding of about {float(n) ** 3:.1e} terms"

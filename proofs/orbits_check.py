"""Exhaustive mask proofs over one mask per isomorphism class: ``hasse prove NAME --n N --orbits`` (issue 14).

Relabelling positions (the same permutation ``P`` on rows and columns, ``M -> P M Pᵀ``)
splits the masks of size ``n`` into classes (orbits). A theorem whose statement is
invariant under relabelling (``Theorem.invariant``: the sentence saying why) flags a
mask exactly when it flags every mask of its class, so checking one representative
per class decides it for every labelled mask: the *cover argument*. The classes of
zero-diagonal masks are the digraphs on ``n`` unlabelled vertices (mask ``M[q, k]``
is the edge ``k -> q``; loops would be the diagonal).

- :func:`orbit_batches`: the representatives, in batches of packed rows, from
  :func:`solvers.orbits.orbit_masks` (nauty when installed, else a numpy fallback up
  to n = 6); :func:`enumeration` is its :class:`~solvers.orbits.Cover` (which
  enumerator, exact or a cover with repeats of classes, a description);
- :func:`expected`: how many distinct masks a complete enumeration yields: the
  number of classes (OEIS A000273, written down in :mod:`solvers.orbits`) for an
  exact cover. An enumeration that yields another number of distinct masks is
  incomplete, and a verdict about every mask is then ``unknown`` (never proved);
- :func:`orbit_outcome`: a theorem's exhaustive predicate over the representatives,
  with a run-time control: the predicate gives the same flags on a random
  relabelling of the first batch (otherwise ``unknown``);
- :func:`run_orbits`: the :class:`~proofs.theorem.Result` of one theorem, method
  :data:`METHOD`; :func:`refusal`: why a theorem cannot run with ``--orbits`` (one line).

>>> expected(4), enumeration(4, "fallback").exact
(218, True)
"""

from __future__ import annotations

import time
from typing import Iterator

import numpy as np

from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Result, Theorem, crash_site, versions
from hasse.solvers import exhaustive as ex
from hasse.theory import batch
from hasse.theory.errors import InputError

METHOD = "exhaustive-orbits"
MAX_N = 7  # the size guard of --orbits (n = 7: 882,033,440 classes)
COVER = ("every mask of size {n} with a zero diagonal is P R Pᵀ for a permutation P and a representative R "
         "({what}); the statement is invariant under relabelling ({why}), so its predicate flags M iff it flags R")


def enumeration(n: int, method: str = "auto"):
    """The :class:`solvers.orbits.Cover` of the representatives at ``n`` (``InputError`` when out of reach)."""
    from hasse.solvers import orbits

    return orbits.cover(n, method)


def expected(n: int, method: str = "auto") -> int:
    """How many distinct masks a complete enumeration yields: A000273 for an exact cover, else its size."""
    from hasse.solvers import orbits

    c = orbits.cover(n, method)
    if c.exact:
        return orbits.CLASS_COUNTS[n] if n < len(orbits.CLASS_COUNTS) else orbits.orbit_count(n, method)
    return orbits.orbit_count(n, method)


def orbit_batches(n: int, method: str = "auto") -> Iterator[np.ndarray]:
    """Packed rows ``(n, B)`` covering every class of zero-diagonal masks (:func:`solvers.orbits.orbit_masks`)."""
    from hasse.solvers import orbits

    yield from orbits.orbit_masks(n, method)


def collect(n: int, method: str = "auto") -> list[np.ndarray]:
    """Every batch of representatives at ``n``, in memory (tests; runs stream them)."""
    return list(orbit_batches(n, method))


def _relabelled(rows: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    masks = batch.unpack(rows, n)
    p = rng.permutation(n)
    return batch.pack(masks[:, p][:, :, p])


DISTINCT_LIMIT = 20_000_000  # up to this many expected masks the distinct indices are kept and counted


class _Scan:
    """One theorem's state during a pass over the representatives (:func:`scan`)."""

    def __init__(self, theorem: Theorem, n: int, ctx: Context, details: dict, classes: int | None, seed):
        self.theorem, self.n, self.ctx, self.details, self.classes = theorem, n, ctx, details, classes
        self.distinct = classes is not None and classes <= DISTINCT_LIMIT
        self.seen: set[int] = set()
        self.checked = 0
        self.control: bool | None = None
        self.rng = np.random.default_rng(seed)
        self.outcome: Outcome | None = None  # set once the theorem is decided (a hit, a failed control, a timeout)
        self.seconds = 0.0  # time in this theorem's predicate

    def stop(self, verdict: str, **kw) -> None:
        self.outcome = Outcome(verdict, self.checked, details=self.details, space=self.classes, **kw)

    def feed(self, rows: np.ndarray, index: np.ndarray) -> None:
        if self.outcome is not None:
            return
        if self.ctx.expired():
            return self.stop(UNKNOWN, reason="timeout")
        start = time.monotonic()
        flags = np.asarray(self.theorem.flag(rows.copy()), dtype=bool)
        if self.control is None:  # run-time control: the predicate is invariant on this batch
            again = np.asarray(self.theorem.flag(_relabelled(rows, self.n, self.rng)), dtype=bool)
            self.control = bool((again == flags).all())
            self.details["control"] = (
                "the predicate gave the same flags on a random relabelling of the first "
                f"{rows.shape[1]:,} representatives" if self.control else
                "the predicate changed under relabelling: the statement is not invariant")
        self.seconds += time.monotonic() - start
        if not self.control:
            return self.stop(UNKNOWN, reason="the predicate is not invariant under relabelling")
        hits = np.flatnonzero(flags)
        upto = int(hits[0]) + 1 if hits.size else rows.shape[1]
        if self.distinct:
            self.seen.update(int(i) for i in index[:upto])
            self.checked = len(self.seen)
        else:
            self.checked += upto
        if hits.size:
            i = int(hits[0])
            mask = batch.unpack(rows[:, i:i + 1], self.n)[0]
            described = {"index": int(index[i]), "mask": mask.astype(int).tolist()} | self.theorem.explain(mask)
            if self.theorem.existence:
                return self.stop(PROVED, witness=described)
            return self.stop(REFUTED, counterexample=described)

    def finish(self) -> Outcome:
        self.details["predicate_seconds"] = round(self.seconds, 3)
        if self.outcome is not None:
            return self.outcome
        if self.classes is None:  # a part of a distributed run: the combiner checks the total
            self.stop(UNKNOWN, reason=f"part: {self.checked:,} representatives checked, no hit")
        elif self.checked != self.classes:
            what = "distinct masks" if self.distinct else "masks"
            self.stop(UNKNOWN, reason=f"scan incomplete: checked {self.checked:,} {what} of the {self.classes:,} expected")
        elif self.theorem.existence:
            self.stop(REFUTED, counterexample={"none": f"no mask of size {self.n} has the property"})
        else:
            self.stop(PROVED)
        return self.outcome


def _details(theorem: Theorem, n: int, c, classes: int, distinct: bool) -> dict:
    what = (f"{classes:,} representatives, one per class (OEIS A000273)" if c.exact
            else f"{classes:,} masks, every class at least once")
    return {"enumeration": c.method, "exact": c.exact, "count": classes, "description": c.description,
            "invariant": theorem.invariant, "existence": theorem.existence,
            "cover": COVER.format(n=n, what=what, why=theorem.invariant),
            "completeness": ("the distinct masks checked (their labelled indices) equal the count" if distinct else
                             "the masks yielded equal the count; that they are pairwise non-isomorphic is the "
                             "enumerator's guarantee (nauty: one digraph per class), tested for n <= 6")}


def scan(theorems, n: int, ctxs, batches, method: str = "auto", part: tuple[int, int] | None = None,
         progress=None) -> list[Outcome]:
    """Every theorem's predicate over the representatives in ``batches``, in one pass (a verdict by the cover argument).

    ``part``: the batches are one part of the enumeration (a distributed work unit):
    the outcomes are ``unknown`` "part: …" with their counts unless a mask is flagged,
    and the combiner (:mod:`proofs.distributed`) checks that the parts add up.
    """
    c = enumeration(n, method)
    classes = expected(n, method)
    scans = []
    for theorem, ctx in zip(theorems, ctxs):
        scans.append(_Scan(theorem, n, ctx, _details(theorem, n, c, classes, classes <= DISTINCT_LIMIT),
                           None if part else classes, [n, 14]))
        if part:
            scans[-1].details["part"] = list(part)
    done = 0
    for rows in batches:
        index, ok = ex.encode(n, rows)
        if not ok.all():
            for s in scans:
                if s.outcome is None:
                    s.stop(UNKNOWN, reason="the enumeration yielded a mask with a nonzero diagonal")
            break
        for s in scans:
            s.feed(rows, index)
        done += rows.shape[1]
        if progress:
            progress(done, classes)
        if all(s.outcome is not None for s in scans):
            break
    return [s.finish() for s in scans]


def orbit_outcome(theorem: Theorem, n: int, ctx: Context, batches, method: str = "auto") -> Outcome:
    """``theorem.flag`` over the representatives in ``batches``: a verdict for every mask by the cover argument."""
    return scan([theorem], n, [ctx], batches, method, progress=ctx.progress)[0]


def refusal(theorem: Theorem) -> str | None:
    """Why ``theorem`` cannot run with ``--orbits`` (one line), or None."""
    if theorem.invariant is None:
        why = theorem.not_invariant or "its statement is not declared invariant under relabelling positions"
        return f"{theorem.name}: --orbits refused: {why}"
    if theorem.flag is None or theorem.diagonal:
        return (f"{theorem.name}: --orbits refused: the class enumeration covers zero-diagonal masks only"
                if theorem.diagonal else f"{theorem.name}: --orbits refused: no mask predicate to run")
    return None


def run_orbits(theorem: Theorem, n: int, ctx: Context | None = None, batches=None,
               method: str = "auto") -> Result:
    """One theorem over the class representatives at ``n`` (``batches``: already enumerated ones)."""
    return run_many([theorem], n, [ctx or Context()], batches, method)[0]


def run_many(theorems, n: int, ctxs, batches=None, method: str = "auto", progress=None) -> list[Result]:
    """Several theorems over one pass of the class representatives at ``n`` (``prove all --orbits``).

    Each result's ``seconds`` is the wall time of the pass (the enumeration is shared);
    ``details.predicate_seconds`` is the time spent in that theorem's own predicate.
    """
    for theorem in theorems:
        why = refusal(theorem)
        if why:
            raise InputError(why)
    start = time.monotonic()
    for ctx in ctxs:
        ctx.started = start
    enumeration(n, method)  # InputError (exit 2) when out of reach, before any work
    run = [(t, c) for t, c in zip(theorems, ctxs) if n >= t.min_n]
    outcomes = {}
    try:
        found = scan([t for t, _ in run], n, [c for _, c in run],
                     batches if batches is not None else orbit_batches(n, method), method,
                     progress=progress or (ctxs[0].progress if len(ctxs) == 1 else None))
        outcomes = {t.name: o for (t, _), o in zip(run, found)}
    except InputError:
        raise
    except Exception as exc:  # a bug in one check must not abort `prove all --orbits`
        crash = Outcome(UNKNOWN, 0, reason=f"crashed: {crash_site(exc)} (a bug in this check; please report)")
        outcomes = {t.name: crash for t, _ in run}
    seconds = round(time.monotonic() - start, 4)
    results = []
    for theorem in theorems:
        outcome = outcomes.get(theorem.name) or Outcome(UNKNOWN, 0, reason=f"the statement needs n >= {theorem.min_n}")
        results.append(Result(theorem.name, n, METHOD, outcome.verdict, outcome.checked, seconds,
                              outcome.counterexample, outcome.witness, outcome.reason, outcome.details, versions(),
                              space=outcome.space))
    return results

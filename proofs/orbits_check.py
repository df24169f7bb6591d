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
    """Every batch of representatives at ``n``, in memory (``prove all --orbits`` enumerates once)."""
    return list(orbit_batches(n, method))


def _relabelled(rows: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    masks = batch.unpack(rows, n)
    p = rng.permutation(n)
    return batch.pack(masks[:, p][:, :, p])


def orbit_outcome(theorem: Theorem, n: int, ctx: Context, batches, method: str = "auto") -> Outcome:
    """``theorem.flag`` over the representatives in ``batches``: a verdict for every mask by the cover argument."""
    c = enumeration(n, method)
    classes = expected(n, method)
    what = (f"{classes:,} representatives, one per class (OEIS A000273)" if c.exact
            else f"{classes:,} masks, every class at least once")
    details = {"enumeration": c.method, "exact": c.exact, "count": classes, "description": c.description,
               "invariant": theorem.invariant, "existence": theorem.existence,
               "cover": COVER.format(n=n, what=what, why=theorem.invariant)}
    seen, checked, control = set(), 0, None
    rng = np.random.default_rng([n, 14])
    for rows in batches:
        if ctx.expired():
            return Outcome(UNKNOWN, checked, reason="timeout", details=details, space=classes)
        index, ok = ex.encode(n, rows)
        if not ok.all():
            return Outcome(UNKNOWN, checked, reason="the enumeration yielded a mask with a nonzero diagonal",
                           details=details, space=classes)
        flags = np.asarray(theorem.flag(rows.copy()), dtype=bool)
        if control is None:  # run-time control: the predicate is invariant on this batch
            again = np.asarray(theorem.flag(_relabelled(rows, n, rng)), dtype=bool)
            control = bool((again == flags).all())
            details["control"] = ("the predicate gave the same flags on a random relabelling of the first "
                                  f"{rows.shape[1]:,} representatives" if control else
                                  "the predicate changed under relabelling: the statement is not invariant")
            if not control:
                return Outcome(UNKNOWN, checked, reason="the predicate is not invariant under relabelling",
                               details=details, space=classes)
        hits = np.flatnonzero(flags)
        upto = int(hits[0]) + 1 if hits.size else rows.shape[1]
        seen.update(int(i) for i in index[:upto])
        checked = len(seen)
        if ctx.progress:
            ctx.progress(checked, classes or checked)
        if hits.size:
            i = int(hits[0])
            mask = batch.unpack(rows[:, i:i + 1], n)[0]
            described = {"index": int(index[i]), "mask": mask.astype(int).tolist()} | theorem.explain(mask)
            if theorem.existence:
                return Outcome(PROVED, checked, witness=described, details=details, space=classes)
            return Outcome(REFUTED, checked, counterexample=described, details=details, space=classes)
    if checked != classes:
        return Outcome(UNKNOWN, checked, details=details, space=classes,
                       reason=f"scan incomplete: checked {checked:,} distinct masks of the {classes:,} expected")
    if theorem.existence:
        return Outcome(REFUTED, checked, counterexample={"none": f"no mask of size {n} has the property"},
                       details=details, space=classes)
    return Outcome(PROVED, checked, details=details, space=classes)


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
    why = refusal(theorem)
    if why:
        raise InputError(why)
    ctx = ctx or Context()
    start = time.monotonic()
    ctx.started = start
    enumeration(n, method)  # InputError (exit 2) when out of reach, before any work
    if n < theorem.min_n:
        outcome = Outcome(UNKNOWN, 0, reason=f"the statement needs n >= {theorem.min_n}")
    else:
        try:
            outcome = orbit_outcome(theorem, n, ctx, batches if batches is not None else orbit_batches(n, method),
                                    method)
        except InputError:
            raise
        except Exception as exc:  # a bug in one check must not abort `prove all --orbits`
            outcome = Outcome(UNKNOWN, 0, reason=f"crashed: {crash_site(exc)} (a bug in this check; please report)")
    return Result(theorem.name, n, METHOD, outcome.verdict, outcome.checked, round(time.monotonic() - start, 4),
                  outcome.counterexample, outcome.witness, outcome.reason, outcome.details, versions(),
                  space=outcome.space)

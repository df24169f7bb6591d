"""Exhaustive mask proofs over one mask per isomorphism class: ``hasse prove NAME --n N --orbits``.

Relabelling positions (the same permutation ``P`` on rows and columns, ``M -> P M Pᵀ``)
splits the masks of size ``n`` into classes (orbits). A theorem whose statement is
invariant under relabelling (``Theorem.invariant``: the sentence saying why) flags a
mask exactly when it flags every mask of its class, so checking one representative
per class decides it for every labelled mask: the *cover argument*. The classes of
zero-diagonal masks are the digraphs on ``n`` unlabelled vertices (mask ``M[q, k]``
is the edge ``k -> q``; loops would be the diagonal).

Each theorem runs over one of the enumerations of :mod:`proofs.orbit_cover` (classes,
classes with loops, labelled preorders: :func:`~proofs.orbit_cover.kind_of`).

A scan that checks fewer distinct masks than :func:`~proofs.orbit_cover.expected` is
``unknown`` ("scan incomplete"), never proved. Run-time controls (:class:`_Scan`): the
predicate gives the same flags on a random relabelling of the first batch (classes),
or on random masks and the masks of their limits (limits); otherwise ``unknown``.
:func:`run_many` runs several theorems with one pass per enumeration;
:func:`refusal` says why a theorem cannot run with ``--orbits`` (one line).

Every result records ``details.digest`` (:data:`proofs.orbit_cover.DIGEST`): the sha256 of
the labelled indices its predicate checked, in enumeration order, and how many
(``masks``). A part ``(i, k)`` of a distributed or sharded run is bound to its content by
it: the combiners (:mod:`proofs.certificates.combine`, :mod:`proofs.distributed`) and
``certificate verify`` recompute what part ``i`` holds here
(:func:`proofs.orbit_cover.content`) and refuse a part whose digest or count is another's.
"""

import time

import numpy as np

from hasse.proofs.orbit_cover import (CLASSES, LIMITS, LOOPS, digest_bytes, digester, enumeration, expected, kind_of,
                                      orbit_batches)
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Result, Theorem, crash_site, versions
from hasse.solvers import exhaustive as ex
from hasse.theory import batch
from hasse.theory.errors import InputError

METHOD = "exhaustive-orbits"
COVER = {
    CLASSES: ("every mask of size {n} with a zero diagonal is P R Pᵀ for a permutation P and a representative R "
              "({what}); the statement is invariant under relabelling ({why}), so its predicate flags M iff it "
              "flags R"),
    LOOPS: ("every mask of size {n} is P (R + D) Pᵀ for a permutation P, a zero-diagonal representative R and a "
            "diagonal D ({what}); the statement is invariant under relabelling ({why}), so its predicate flags M "
            "iff it flags R + D"),
    LIMITS: ("every mask M of size {n} has a limit R*(M), a preorder P, and P - I (zero diagonal) has the limit P "
             "({what}); the predicate reads a mask only through its limit ({why}), so it flags M iff it flags P - I"),
}


def _relabelled(rows: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    masks = batch.unpack(rows, n)
    p = rng.permutation(n)
    return batch.pack(masks[:, p][:, :, p])


DISTINCT_LIMIT = 20_000_000  # up to this many expected masks the distinct indices are kept and counted
CONTROL_MASKS = 4096  # random masks of the limit control


class _Seen:
    """The labelled indices of a pass so far (when they are counted: up to :data:`DISTINCT_LIMIT`)."""

    def __init__(self):
        self.parts: list[np.ndarray] = []
        self._count: int | None = None

    def add(self, index: np.ndarray) -> None:
        self.parts.append(index)
        self._count = None

    def count(self, extra: np.ndarray | None = None) -> int:
        """Distinct indices so far, with ``extra`` (the current batch up to a hit) when given."""
        if extra is None and self._count is not None:
            return self._count
        arrays = self.parts + ([extra] if extra is not None else [])
        found = int(np.unique(np.concatenate(arrays)).size) if arrays else 0
        if extra is None:
            self._count = found
        return found


class _Scan:
    """One theorem's state during a pass over the enumeration (:func:`scan`)."""

    def __init__(self, theorem: Theorem, n: int, ctx: Context, details: dict, classes: int | None, seed,
                 kind: str = CLASSES):
        self.theorem, self.n, self.ctx, self.details, self.classes, self.kind = theorem, n, ctx, details, classes, kind
        self.distinct = classes is not None and classes <= DISTINCT_LIMIT
        self.checked = 0
        self.control: bool | None = None
        self.rng = np.random.default_rng(seed)
        self.outcome: Outcome | None = None  # set once the theorem is decided (a hit, a failed control, a timeout)
        self.seconds = 0.0  # time in this theorem's predicate
        self.digest, self.hashed = digester(n, kind), 0  # the masks this theorem's predicate did check (DIGEST)

    def stop(self, verdict: str, **kw) -> None:
        self.outcome = Outcome(verdict, self.checked, details=self.details, space=self.classes, **kw)

    def feed(self, rows: np.ndarray, index: np.ndarray, seen: _Seen) -> None:
        if self.outcome is not None:
            return
        if self.ctx.expired():
            self.checked = seen.count() if self.distinct else self.checked
            return self.stop(UNKNOWN, reason="timeout")
        start = time.monotonic()
        flags = np.asarray(self.theorem.flag(rows.copy()), dtype=bool)
        if self.control is None:
            self.control = self._control(rows, flags)
        self.seconds += time.monotonic() - start
        if not self.control:
            return self.stop(UNKNOWN, reason="the predicate is not invariant under relabelling" if self.kind != LIMITS
                             else "the predicate reads more of a mask than its limit")
        hits = np.flatnonzero(flags)
        upto = int(hits[0]) + 1 if hits.size else rows.shape[1]
        self.digest.update(digest_bytes(index[:upto]))
        self.hashed += upto
        if not self.distinct:
            self.checked += upto
        if hits.size:
            if self.distinct:
                self.checked = seen.count(index[:upto])
            i = int(hits[0])
            mask = batch.unpack(rows[:, i:i + 1], self.n)[0]
            described = {"index": int(index[i]), "mask": mask.astype(int).tolist()} | self.theorem.explain(mask)
            if self.theorem.existence:
                return self.stop(PROVED, witness=described)
            return self.stop(REFUTED, counterexample=described)

    def _control(self, rows: np.ndarray, flags: np.ndarray) -> bool:
        """The run-time control of the cover argument on this batch (recorded in ``details.control``)."""
        if self.kind != LIMITS:  # the predicate is invariant: same flags on a random relabelling
            again = np.asarray(self.theorem.flag(_relabelled(rows, self.n, self.rng)), dtype=bool)
            ok = bool((again == flags).all())
            self.details["control"] = (f"the predicate gave the same flags on a random relabelling of the first "
                                       f"{rows.shape[1]:,} masks" if ok else
                                       "the predicate changed under relabelling: the statement is not invariant")
            return ok
        masks = batch.masks_from_indices(self.n, self.rng.integers(0, ex.space_size(self.n), CONTROL_MASKS))
        limits = batch.closure(masks) & ~batch.identity(self.n, masks.shape[1])
        ok = bool((np.asarray(self.theorem.flag(masks), dtype=bool)
                   == np.asarray(self.theorem.flag(limits), dtype=bool)).all())
        self.details["control"] = (f"the predicate gave the same flags on {CONTROL_MASKS:,} random masks and on "
                                   "the masks of their limits" if ok else
                                   "the predicate differs between a mask and the mask of its limit")
        return ok

    def finish(self, seen: _Seen) -> Outcome:
        self.details["predicate_seconds"] = round(self.seconds, 3)
        self.details["digest"] = {"sha256": self.digest.hexdigest(), "masks": self.hashed}
        if self.outcome is not None:
            return self.outcome
        if self.distinct:
            self.checked = seen.count()
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


def _details(theorem: Theorem, n: int, c, count: int, distinct: bool, kind: str) -> dict:
    if kind == LIMITS:
        what, why = f"{count:,} preorders (OEIS A000798)", theorem.limit_only
    else:
        what = (f"{count:,} masks, one per class" + (" and set of loops" if kind == LOOPS else "") + " (OEIS A000273)"
                if c.exact else f"{count:,} masks, every class at least once")
        why = theorem.invariant
    return {"enumeration": c.method, "exact": c.exact, "count": count, "description": c.description,
            "kind": kind, "invariant": theorem.invariant, "limit_only": theorem.limit_only,
            "existence": theorem.existence, "cover": COVER[kind].format(n=n, what=what, why=why),
            "completeness": ("the distinct masks checked (their labelled indices) equal the count" if distinct else
                             "the masks yielded equal the count; that they are pairwise non-isomorphic is the "
                             "enumerator's guarantee (nauty: one digraph per class), tested for n <= 6")}


def scan(theorems, n: int, ctxs, batches, method: str = "auto", part: tuple[int, int] | None = None,
         progress=None, kind: str = CLASSES) -> list[Outcome]:
    """Every theorem's predicate over the masks of ``batches`` (enumeration ``kind``), in one pass.

    ``part``: the batches are one part of the enumeration (a distributed work unit):
    the outcomes are ``unknown`` "part: …" with their counts unless a mask is flagged,
    and the combiner (:mod:`proofs.distributed`) checks that the parts add up.
    """
    c = enumeration(n, method, kind)
    count = expected(n, method, kind)
    scans = []
    for theorem, ctx in zip(theorems, ctxs):
        scans.append(_Scan(theorem, n, ctx, _details(theorem, n, c, count, count <= DISTINCT_LIMIT, kind),
                           None if part else count, [n, 14], kind))
        if part:
            scans[-1].details["part"] = list(part)
    done, seen = 0, _Seen()
    for rows in batches:
        index, ok = ex.encode(n, rows, diagonal=kind == LOOPS)
        if not ok.all():
            for s in scans:
                if s.outcome is None:
                    s.stop(UNKNOWN, reason="the enumeration yielded a mask with a nonzero diagonal")
            break
        for s in scans:
            s.feed(rows, index, seen)
        if count <= DISTINCT_LIMIT:
            seen.add(index)
        done += rows.shape[1]
        if progress:
            progress(done, count)
        if all(s.outcome is not None for s in scans):
            break
    return [s.finish(seen) for s in scans]


def refusal(theorem: Theorem) -> str | None:
    """Why ``theorem`` cannot run with ``--orbits`` (one line), or None."""
    if kind_of(theorem) is not None:
        return None
    if theorem.flag is None:
        return f"{theorem.name}: --orbits refused: no mask predicate to run"
    why = theorem.not_invariant or "its statement is not declared invariant under relabelling positions"
    return f"{theorem.name}: --orbits refused: {why}"


def run_orbits(theorem: Theorem, n: int, ctx: Context | None = None, batches=None,
               method: str = "auto") -> Result:
    """One theorem over its enumeration at ``n`` (``batches``: already enumerated masks of that kind)."""
    return run_many([theorem], n, [ctx or Context()], batches, method)[0]


def run_many(theorems, n: int, ctxs, batches=None, method: str = "auto", progress=None,
             part: tuple[int, int] | None = None) -> list[Result]:
    """Several theorems at ``n``, one pass per enumeration (``prove all --orbits``).

    ``batches``: masks already enumerated (one kind of theorem only). ``part``: only
    that part of each enumeration (a distributed work unit, :mod:`proofs.distributed`).
    Each result's ``seconds`` is the wall time of its pass (shared by the theorems of
    the pass); ``details.predicate_seconds`` is the time in that theorem's own predicate.
    """
    for theorem in theorems:
        why = refusal(theorem)
        if why:
            raise InputError(why)
    groups: dict[str, list] = {}
    for theorem, ctx in zip(theorems, ctxs):
        if n >= theorem.min_n:
            groups.setdefault(kind_of(theorem), []).append((theorem, ctx))
    for kind in groups:
        enumeration(n, method, kind)  # InputError (exit 2) when out of reach, before any work
    outcomes, seconds = {}, {}
    for kind, run in groups.items():
        start = time.monotonic()
        for _, ctx in run:
            ctx.started = start
        try:
            found = scan([t for t, _ in run], n, [c for _, c in run],
                         batches if batches is not None else orbit_batches(n, method, kind, part), method, part=part,
                         progress=progress or (run[0][1].progress if len(run) == 1 else None), kind=kind)
        except InputError:
            raise
        except Exception as exc:  # a bug in one check must not abort `prove all --orbits`
            crash = Outcome(UNKNOWN, 0, reason=f"crashed: {crash_site(exc)} (a bug in this check; please report)")
            found = [crash] * len(run)
        for (theorem, _), outcome in zip(run, found):
            outcomes[theorem.name] = outcome
            seconds[theorem.name] = round(time.monotonic() - start, 4)
    results = []
    for theorem in theorems:
        outcome = outcomes.get(theorem.name) or Outcome(UNKNOWN, 0, reason=f"the statement needs n >= {theorem.min_n}")
        results.append(Result(theorem.name, n, METHOD, outcome.verdict, outcome.checked, seconds.get(theorem.name, 0.0),
                              outcome.counterexample, outcome.witness, outcome.reason, outcome.details, versions(),
                              space=outcome.space))
    return results

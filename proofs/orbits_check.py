"""Exhaustive mask proofs over one mask per isomorphism class: ``hasse prove NAME --n N --orbits`` (issue 14).

Relabelling positions (the same permutation ``P`` on rows and columns, ``M -> P M Pᵀ``)
splits the masks of size ``n`` into classes (orbits). A theorem whose statement is
invariant under relabelling (``Theorem.invariant``: the sentence saying why) flags a
mask exactly when it flags every mask of its class, so checking one representative
per class decides it for every labelled mask: the *cover argument*. The classes of
zero-diagonal masks are the digraphs on ``n`` unlabelled vertices (mask ``M[q, k]``
is the edge ``k -> q``; loops would be the diagonal).

Each theorem gets one of three enumerations (:func:`kind_of`):

- :data:`CLASSES` (an invariant statement about zero-diagonal masks): the
  representatives of :func:`solvers.orbits.orbit_masks` (nauty when installed, else a
  numpy fallback up to n = 6), exactly one per class (OEIS A000273) or a cover;
- :data:`LOOPS` (an invariant statement about masks with their diagonal, the
  no-residual control): every representative with every set of loops (``2^n``); every
  mask is ``P (R + D) Pᵀ`` for a representative ``R`` and a diagonal ``D``;
- :data:`LIMITS` (a predicate that reads a mask only through its limit ``R*``,
  ``Theorem.limit_only``, such as the sparse realisation, whose construction numbers
  class members by position so it is not invariant): every labelled preorder ``P`` as
  the mask ``P - I`` (:mod:`solvers.preorders`, OEIS A000798); every mask's limit is one.

:func:`expected` is how many distinct masks a complete enumeration yields; fewer is
``unknown`` ("scan incomplete"), never proved. Run-time controls (:class:`_Scan`): the
predicate gives the same flags on a random relabelling of the first batch (classes),
or on random masks and the masks of their limits (limits); otherwise ``unknown``.
:func:`run_many` runs several theorems with one pass per enumeration;
:func:`refusal` says why a theorem cannot run with ``--orbits`` (one line).

Every result records ``details.digest`` (:data:`DIGEST`): the sha256 of the labelled
indices its predicate checked, in enumeration order, and how many (``masks``). A part
``(i, k)`` of a distributed or sharded run is bound to its content by it: the combiners
(:mod:`proofs.certificate_combine`, :mod:`proofs.distributed`) and ``certificate
verify`` recompute what part ``i`` holds here (:func:`content`, the enumeration alone,
no predicate) and refuse a part whose digest or count is another's.

>>> expected(4, "fallback"), enumeration(4, "fallback").exact, expected(4, "fallback", LIMITS)
(218, True, 355)
"""

import hashlib
import time
from typing import Iterator

import numpy as np

from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Result, Theorem, crash_site, versions
from hasse.solvers import exhaustive as ex
from hasse.theory import batch
from hasse.theory.errors import InputError

METHOD = "exhaustive-orbits"
MAX_N = 7  # the size guard of --orbits (n = 7: 882,033,440 classes)
CLASSES, LOOPS, LIMITS = "classes", "classes with loops", "limits"
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


def kind_of(theorem: Theorem) -> str | None:
    """Which enumeration ``--orbits`` runs ``theorem`` over, or None (then :func:`refusal` says why)."""
    if theorem.flag is None:
        return None
    if theorem.invariant is not None:
        return LOOPS if theorem.diagonal else CLASSES
    if theorem.limit_only is not None and not theorem.diagonal:
        return LIMITS
    return None


def enumeration(n: int, method: str = "auto", kind: str = CLASSES):
    """The :class:`solvers.orbits.Cover` of the masks enumerated for ``kind`` at ``n`` (InputError when out of reach)."""
    from hasse.solvers import orbits, preorders

    if kind == LIMITS:
        if not 1 <= n <= preorders.MAX_N:
            raise InputError(f"preorder enumeration: n must be between 1 and {preorders.MAX_N}, got {n}")
        return orbits.Cover(n, "preorders", True, f"every labelled preorder on {n} positions (OEIS A000798), "
                                                  "each as its zero-diagonal mask")
    c = orbits.cover(n, method)
    if kind == LOOPS:
        return orbits.Cover(n, f"{c.method}+loops", c.exact, f"{c.description}, each with each of the {2 ** n} "
                                                             "sets of loops")
    return c


def expected(n: int, method: str = "auto", kind: str = CLASSES) -> int:
    """How many distinct masks a complete enumeration yields (A000273 or the cover's size; times ``2^n``; A000798)."""
    from hasse.solvers import orbits, preorders

    if kind == LIMITS:
        return preorders.preorder_count(n)
    c = orbits.cover(n, method)
    if c.exact:
        count = orbits.CLASS_COUNTS[n] if n < len(orbits.CLASS_COUNTS) else orbits.orbit_count(n, method)
    else:
        count = orbits.orbit_count(n, method)
    return count * 2 ** n if kind == LOOPS else count


def orbit_batches(n: int, method: str = "auto", kind: str = CLASSES,
                  part: tuple[int, int] | None = None) -> Iterator[np.ndarray]:
    """Packed rows ``(n, B)`` of the enumeration ``kind`` (``part = (i, k)``: its i-th of k disjoint parts)."""
    from hasse.solvers import orbits, preorders

    if kind == LIMITS:
        for rows in preorders.preorder_masks(n):
            mine = rows if part is None else np.ascontiguousarray(rows[:, part[0]::part[1]])
            if mine.shape[1]:
                yield mine
        return
    for rows in orbits.orbit_masks(n, method, part=part):
        if kind == CLASSES:
            yield rows
            continue
        for loops in range(2 ** n):  # LOOPS: every set of loops on the representatives
            diag = np.array([(loops >> q) & 1 for q in range(n)], dtype=rows.dtype) << np.arange(n, dtype=rows.dtype)
            yield rows | diag[:, None]


DIGEST = ("sha256 of a header naming n and the enumeration's kind, then the labelled index of each mask checked "
          "(8 bytes, little-endian), in enumeration order")


def _digester(n: int, kind: str):
    return hashlib.sha256(f"hasse orbit masks: n={n}, kind={kind}\n".encode())


def _digest_bytes(index: np.ndarray) -> bytes:
    return np.ascontiguousarray(index, dtype="<u8").tobytes()


def content(n: int, method: str = "auto", kind: str = CLASSES, part: tuple[int, int] | None = None,
            masks: int | None = None, count: bool = True) -> tuple[int, str]:
    """``(size, sha256)``: how many masks ``part`` of the enumeration holds here, and the digest of its first ``masks``.

    The content a part's result claims (``details.digest``, :data:`DIGEST`), recomputed from
    the enumerator of this checkout without running any predicate (``masks``: every mask
    of the part when None). The combiners and ``certificate verify`` compare it with the claim.
    ``count=False``: stop once the first ``masks`` are read (``size`` is then how many were
    read, at least ``masks`` unless the part holds fewer).

    >>> content(3)[0], content(3, part=(0, 2))[0] + content(3, part=(1, 2))[0]
    (16, 16)
    >>> content(3, masks=5)[1] == content(3, masks=6)[1]
    False
    """
    digest, size = _digester(n, kind), 0
    for rows in orbit_batches(n, method, kind, part):
        index, _ = ex.encode(n, rows, diagonal=kind == LOOPS)
        take = index.size if masks is None else max(0, min(index.size, masks - size))
        if take:
            digest.update(_digest_bytes(index[:take]))
        size += index.size
        if not count and masks is not None and size >= masks:
            break
    return size, digest.hexdigest()


def contents(n: int, method: str = "auto", kind: str = CLASSES, k: int = 1,
             masks: list[int | None] | None = None) -> list[tuple[int, str]]:
    """:func:`content` of every part ``(i, k)``, ``i = 0 … k-1`` (``masks[i]``: the prefix of part i), in one pass.

    nauty's parts are separate directg runs over geng's graphs ``j mod k = i`` (one pass in
    all); the fallback and the preorders take the masks ``j mod k = i`` of each batch of the
    whole enumeration, so the whole enumeration is read once and each batch split here
    (tests/test_prove_orbits.py checks this against :func:`content` part by part).

    >>> [size for size, _ in contents(4, "fallback", k=3)]
    [73, 73, 72]
    """
    masks = list(masks) if masks is not None else [None] * k
    if "nauty" in enumeration(n, method, kind).method:
        return [content(n, method, kind, (i, k), masks[i]) for i in range(k)]
    digests, sizes = [_digester(n, kind) for _ in range(k)], [0] * k
    for rows in orbit_batches(n, method, kind):
        index, _ = ex.encode(n, rows, diagonal=kind == LOOPS)
        for i in range(k):
            mine = index[i::k]
            take = mine.size if masks[i] is None else max(0, min(mine.size, masks[i] - sizes[i]))
            if take:
                digests[i].update(_digest_bytes(mine[:take]))
            sizes[i] += mine.size
    return [(size, digest.hexdigest()) for size, digest in zip(sizes, digests)]


def collect(n: int, method: str = "auto") -> list[np.ndarray]:
    """Every batch of representatives at ``n``, in memory (tests; runs stream them)."""
    return list(orbit_batches(n, method))


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
        self.digest, self.hashed = _digester(n, kind), 0  # the masks this theorem's predicate did check (DIGEST)

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
        self.digest.update(_digest_bytes(index[:upto]))
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

"""Re-checking a certificate in this checkout: ``hasse certificate verify CERT [--recheck FRACTION]``.

A certificate from someone else is evidence, not proof, until it is re-checked.
:func:`verify` reads it strictly (:func:`proofs.certificate.read_certificate`) and,
for every result:

1. checks what it claims without running anything (:func:`proofs.certificate_claims.claim_problems`:
   the class size recomputed from ``n``, ``checked`` against the range, the
   counterexample or witness re-checked by the theorem; an ``--orbits`` result's content,
   ``details.digest``, recomputed from this checkout's enumeration, for the whole
   enumeration, its part, or each part it combines — inconclusive when this checkout
   enumerates otherwise, nauty there and not here);
2. compares its ``fingerprint`` with this checkout's sources (a mismatch names the
   files that differ, from the certificate's ``sources``) and its kit version with
   this kit's;
3. re-runs a seeded random sample: a numbered exhaustive scan is cut into aligned
   chunks of one batch (:func:`solvers.exhaustive.default_batch`) and
   ``ceil(FRACTION × chunks)`` of them are scanned again (``Context.span``), each
   expected to find nothing, or the certificate's flagged mask as its first;
   any other result (Z3, task-level) is re-run whole with probability ``FRACTION``
   and must give the same verdict (and, exhaustive, the same count).
   ``FRACTION = 1.0`` re-runs everything.

The report (:class:`Verification`) agrees when nothing differs (exit 0); a
difference is exit 1, a re-run that was itself inconclusive (timeout) exit 3.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field

from hasse.proofs import fingerprint as fp
from hasse.proofs import registry
from hasse.proofs.certificates.format import read_certificate
from hasse.proofs.certificates.claims import ORBITS, claim_problems, hit_of, is_part, orbit_unavailable
from hasse.proofs.theorem import UNKNOWN, Context, run_theorem
from hasse.solvers import exhaustive as ex
from hasse.theory.errors import clip


@dataclass
class Checked:
    """One result of the certificate and what re-checking it found."""

    theorem: str
    n: int
    method: str
    verdict: str
    checked: int
    problems: list[str] = field(default_factory=list)  # differences: the certificate does not hold up
    inconclusive: list[str] = field(default_factory=list)  # re-runs that could not decide (timeout)
    rechecked: int = 0  # objects (or whole checks) run again
    reruns: int = 0  # chunks or whole checks run again

    def to_json(self) -> dict:
        return {"theorem": self.theorem, "n": self.n, "method": self.method, "verdict": self.verdict,
                "checked": self.checked, "agrees": not self.problems, "problems": self.problems,
                "inconclusive": self.inconclusive, "rechecked": self.rechecked, "reruns": self.reruns}


@dataclass
class Verification:
    """The whole report of :func:`verify`."""

    path: str
    fraction: float
    seed: int
    results: list[Checked]
    seconds: float = 0.0

    @property
    def agrees(self) -> bool:
        return all(not c.problems for c in self.results)

    @property
    def inconclusive(self) -> bool:
        return any(c.inconclusive for c in self.results)

    def to_json(self) -> dict:
        return {"certificate": self.path, "recheck": self.fraction, "seed": self.seed, "agrees": self.agrees,
                "inconclusive": self.inconclusive, "seconds": round(self.seconds, 4),
                "results": [c.to_json() for c in self.results]}


def verify(path: str, fraction: float = 0.0, seed: int = 0, timeout: float | None = None,
           progress=None) -> Verification:
    """Re-check the certificate at ``path`` (``InputError`` if it is malformed); see the module docstring."""
    from hasse.theory.version import __version__

    start = time.monotonic()
    cert = read_certificate(path)
    here = fp.source_hashes()
    rng = random.Random(seed)
    out = []
    memo: dict = {}  # the enumerations of --orbits results, computed once per certificate
    for r in cert.results:
        theorem = registry.get(r["theorem"])
        c = Checked(r["theorem"], r["n"], r["method"], r["verdict"], r["checked"])
        elsewhere = orbit_unavailable(theorem, r) if r["method"] == ORBITS else None
        if elsewhere:  # another enumerator (nauty there, not here): the content cannot be recomputed here
            c.inconclusive.append(elsewhere)
        c.problems += claim_problems(theorem, r, whole=True, content=not elsewhere, memo=memo)
        now = fp.fingerprint(theorem.name, here)["sha256"]
        if r["fingerprint"]["sha256"] != now:
            diff = fp.differences(cert.sources, here, theorem.name) if cert.sources else []
            c.problems.append("fingerprint differs from this checkout: "
                              + (", ".join(diff[:8]) + (f" and {len(diff) - 8} more" if len(diff) > 8 else "")
                                 if diff else "the certificate does not list its sources"))
        if r["versions"]["hasse"] != __version__:
            c.problems.append(f"written by hasse {clip(r['versions']['hasse'], 20)}, this is hasse {__version__}")
        if fraction > 0:
            if theorem.indexed and r["method"] == "exhaustive":
                _rerun_chunks(theorem, r, c, fraction, rng, timeout, progress)
            elif rng.random() < fraction:
                _rerun_whole(theorem, r, c, timeout)
        out.append(c)
    return Verification(path, fraction, seed, out, time.monotonic() - start)


def chunks(n: int, a: int, b: int) -> list[tuple[int, int]]:
    """``[a, b)`` cut at the multiples of one batch (:func:`solvers.exhaustive.default_batch`).

    >>> chunks(5, 10, 70000)
    [(10, 65536), (65536, 70000)]
    """
    size = ex.default_batch(n)
    cuts = [a] + list(range((a // size + 1) * size, b, size)) + [b]
    return list(zip(cuts, cuts[1:]))


def _rerun_chunks(theorem, r: dict, c: Checked, fraction: float, rng: random.Random, timeout, progress) -> None:
    a, b = r["details"]["range"]
    hit = hit_of(theorem, r)
    index = hit[1].get("index") if hit else None
    if hit is not None:
        if type(index) is not int or not a <= index < b:
            return  # already a problem; nothing to compare a re-run with
        b = index + 1
    elif r["verdict"] == UNKNOWN and not r.get("details", {}).get("partial"):
        return  # an unfinished scan claims nothing about which masks it checked
    parts = chunks(r["n"], a, b)
    picked = sorted(rng.sample(parts, min(len(parts), math.ceil(fraction * len(parts)))))
    if index is not None and parts[-1] not in picked:
        picked.append(parts[-1])  # the chunk that holds the flagged mask is always run again
    for lo, hi in picked:
        got = run_theorem(theorem, r["n"], "exhaustive", Context(timeout=timeout, span=(lo, hi)))
        c.reruns += 1
        c.rechecked += got.checked
        found = hit_of(theorem, got.to_json())
        found_at = found[1].get("index") if found else None
        expect_checked = (index - lo + 1) if index is not None and lo <= index < hi else hi - lo
        expect_at = index if index is not None and lo <= index < hi else None
        if found is None and (got.reason or "").startswith("timeout"):
            c.inconclusive.append(f"re-run of masks {lo:,} to {hi - 1:,}: {got.reason}")
        elif found_at != expect_at or got.checked != expect_checked:
            says = f"flags mask {expect_at:,}" if expect_at is not None else "flags none"
            c.problems.append(f"re-run of masks {lo:,} to {hi - 1:,}: "
                              + (f"flags mask {found_at:,}" if found_at is not None else "flags none")
                              + f" after {got.checked:,}, the certificate {says} after {expect_checked:,}")
        if progress:
            progress(c)


def _rerun_whole(theorem, r: dict, c: Checked, timeout) -> None:
    if r["method"] == ORBITS:  # hasse prove --orbits: the whole enumeration, or the result's part
        from hasse.proofs.orbits_check import run_many

        part = (r.get("details") or {}).get("part")
        got = run_many([theorem], r["n"], [Context(timeout=timeout)],
                       part=tuple(part) if is_part(part) else None)[0]
    else:
        got = run_theorem(theorem, r["n"], r["method"], Context(timeout=timeout))
    c.reruns += 1
    c.rechecked += got.checked
    if got.verdict == UNKNOWN and r["verdict"] != UNKNOWN:
        c.inconclusive.append(f"re-run: unknown ({got.reason})")
    elif got.verdict != r["verdict"]:
        c.problems.append(f"re-run: {got.verdict}, the certificate says {r['verdict']}")
    elif (r["method"] == "exhaustive" or r["method"] == ORBITS and hit_of(theorem, r) is None) \
            and got.checked != r["checked"]:
        c.problems.append(f"re-run: checked {got.checked:,}, the certificate says {r['checked']:,}")

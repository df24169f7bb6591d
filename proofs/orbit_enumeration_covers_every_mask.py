"""orbit_enumeration_covers_every_mask — the enumerations behind ``hasse prove --orbits`` cover every mask, in parts that partition them.

Statement. At size ``n`` (``1 <= n <= 5``), with the enumerator a user's run would take
(``auto``: nauty when installed, else the numpy fallback; both when nauty is installed):

- classes (:func:`solvers.orbits.orbit_masks`): every representative has a zero
  diagonal; every labelled zero-diagonal mask (``2^(n(n-1))``) is ``P R Pᵀ`` for a
  permutation ``P`` and some representative ``R`` (its canonical form, the least code over
  all ``n!`` relabellings, is among the representatives' canonical forms); there are
  exactly A000273(n) canonical forms (1, 1, 3, 16, 218, 9,608), and an exact cover
  (:func:`~solvers.orbits.cover`) yields exactly that many masks, pairwise non-isomorphic;
  :func:`~solvers.orbits.orbit_count` and :func:`proofs.orbit_cover.expected` give the
  number yielded;
- classes with loops (:func:`proofs.orbit_cover.orbit_batches`, ``LOOPS``): every
  representative with every one of the ``2^n`` sets of loops, nothing else (so every mask
  with its diagonal is covered); for ``n <= 4`` also directly: the canonical forms of all
  ``2^(n²)`` masks (A000595(n): 1, 2, 10, 104, 3,044 classes) are among those yielded;
- limits (:func:`solvers.preorders.preorder_masks`, ``LIMITS``): every mask yielded has a
  zero diagonal and ``mask or I`` is a preorder (reflexive, transitive), no two are equal,
  there are A000798(n) of them (1, 1, 4, 29, 355, 6,942), and they are exactly the limits
  ``R*`` of the labelled zero-diagonal masks;
- parts: for ``k = 2, 3`` the parts ``(i, k)`` of each enumeration yield, together, the
  same masks as the whole, each once (a multiset equality);
- the scan (:func:`proofs.orbits_check.run_many`): a planted theorem that flags nothing is
  proved over each enumeration with ``checked`` equal to the count, and its predicate sees
  every class (every preorder); for every class (``n <= 5``; with loops: the class of one
  representative in 16, each with its own set of loops) and every preorder, a planted
  theorem "no mask is in this class" ("has this limit") is refuted with a counterexample
  of that class (limit), all of them in one pass per enumeration, as ``prove all --orbits``
  runs them.

What a verdict covers. :mod:`solvers.orbits` (with the enumerator named in ``details``),
:mod:`solvers.preorders`, the enumerations and counts of :mod:`proofs.orbit_cover` and the
scan of :mod:`proofs.orbits_check`, as they are in this checkout, at that ``n``. For ``n >= 6`` the
verdict is ``unknown``: checking the cover needs the ``2^30`` labelled masks of n = 6
(tests/test_orbits.py checks the n = 6 parts and the n = 7 counts).

The references here share no code with them: masks read from packed rows bit by bit,
canonical forms as the least of the ``n!`` relabelled codes ``Σ M[p(i), p(j)] 2^(i n + j)``,
closures by Warshall's algorithm, the OEIS counts written out.

Counterexample: the enumeration, the part or the planted theorem, and the mask (or count)
that shows the gap.

Exhaustive method only (:mod:`proofs.engine_checks`): the enumerators are code. n = 4 takes
about a second; n = 5 (2^20 labelled masks, 9,608 planted theorems) about a minute and a half of CPU.

References: design.md §5 (Orbits); OEIS A000273, A000595, A000798.
"""

from __future__ import annotations

import itertools
import time
from functools import lru_cache

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import NO_Z3, first_finding, safely
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Theorem

NAME = "orbit_enumeration_covers_every_mask"
STATEMENT = ("the class enumeration (A000273 classes), the classes with loops and the labelled preorders (A000798) "
             "cover every labelled mask, their parts partition them, and the --orbits scan sees every class")
NOT_INVARIANT = ("the statement is about the enumerators themselves, which list particular labelled masks, not "
                 "about a property of one mask")
FULL_UPTO = 5
A000273 = (1, 1, 3, 16, 218, 9608, 1540944, 882033440)  # digraphs (no loops) on n unlabelled nodes
A000595 = (1, 2, 10, 104, 3044, 291968)  # binary relations (loops allowed) on n unlabelled points
A000798 = (1, 1, 4, 29, 355, 6942, 209527, 9535241)  # labelled preorders (finite topologies) on n points
LOOP_STRIDE = 16  # with loops: a planted refutation for one representative in 16


# --------------------------------------------------------------------------- references


def unpack(rows: np.ndarray, n: int) -> np.ndarray:
    """Packed rows ``(n, B)`` (bit ``k`` of ``rows[q]`` is ``M[q, k]``) as ``(B, n, n)`` bool, bit by bit."""
    rows = np.asarray(rows)
    out = np.zeros((rows.shape[1], n, n), dtype=bool)
    for q in range(n):
        for k in range(n):
            out[:, q, k] = (rows[q].astype(np.uint64) >> np.uint64(k)) & np.uint64(1) == 1
    return out


def codes(masks: np.ndarray) -> np.ndarray:
    """``Σ M[i, j] 2^(i n + j)`` of each mask (``n <= 7``)."""
    n = masks.shape[-1]
    weights = (1 << np.arange(n * n, dtype=np.int64)).reshape(n, n)
    return (masks.reshape(len(masks), -1).astype(np.int64) @ weights.reshape(-1)).astype(np.int64)


def canonical(masks: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """The least code of each mask over all relabellings ``M[p(i), p(j)]``."""
    n = masks.shape[-1]
    out = np.empty(len(masks), dtype=np.int64)
    for a in range(0, len(masks), chunk):
        part = masks[a:a + chunk]
        best = None
        for perm in itertools.permutations(range(n)):
            p = np.array(perm)
            c = codes(part[:, p][:, :, p])
            best = c if best is None else np.minimum(best, c)
        out[a:a + chunk] = best
    return out


def all_masks(n: int, diagonal: bool = False) -> np.ndarray:
    """Every ``n × n`` mask (zero diagonal unless ``diagonal``), from the bits of ``0 … 2^m - 1``."""
    cells = [(q, k) for q in range(n) for k in range(n) if diagonal or q != k]
    index = np.arange(1 << len(cells), dtype=np.int64)
    out = np.zeros((len(index), n, n), dtype=bool)
    for bit, (q, k) in enumerate(cells):
        out[:, q, k] = (index >> bit) & 1 == 1
    return out


def closures(masks: np.ndarray) -> np.ndarray:
    """Reflexive–transitive closure of each mask (Warshall)."""
    n = masks.shape[-1]
    out = masks | np.eye(n, dtype=bool)
    for k in range(n):
        out = out | (out[:, :, k:k + 1] & out[:, k:k + 1, :])
    return out


def _multiset(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.unique(c, return_counts=True)


def _mask_json(m: np.ndarray) -> list:
    return m.astype(int).tolist()


# --------------------------------------------------------------------------- the enumerations, compared


def gather(batches, n: int) -> np.ndarray:
    parts = [unpack(rows, n) for rows in batches]
    return np.concatenate(parts) if parts else np.zeros((0, n, n), dtype=bool)


def parts_problem(what: str, whole: np.ndarray, make) -> dict | None:
    """The parts ``make(part)`` for ``k = 2, 3`` must yield the masks of ``whole`` (a multiset), together."""
    want = _multiset(codes(whole))
    for k in (2, 3):
        got = _multiset(codes(np.concatenate([make((i, k)) for i in range(k)])))
        if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
            extra = np.setdiff1d(got[0], want[0])
            return {"enumeration": what, "parts": k, "problem": "the parts do not yield the whole enumeration, "
                                                                 "each mask once",
                    "yielded": int(got[1].sum()), "whole": int(want[1].sum()),
                    "extra_or_repeated": [int(x) for x in extra[:3]]}
    return None


def classes_problem(n: int, method: str) -> tuple[dict | None, np.ndarray]:
    from hasse.proofs import orbit_cover
    from hasse.solvers import orbits

    reps = gather(orbits.orbit_masks(n, method), n)
    where = {"enumeration": f"classes ({method})"}
    if np.diagonal(reps, axis1=1, axis2=2).any():
        i = int(np.flatnonzero(np.diagonal(reps, axis1=1, axis2=2).any(axis=1))[0])
        return where | {"problem": "a representative with a loop", "mask": _mask_json(reps[i])}, reps
    mine = canonical(reps)
    labelled = all_masks(n)
    every = canonical(labelled)
    missing = np.setdiff1d(every, mine)
    if missing.size:
        i = int(np.flatnonzero(every == missing[0])[0])
        return where | {"problem": "a labelled mask whose class has no representative",
                        "mask": _mask_json(labelled[i])}, reps
    classes = np.unique(every).size
    if classes != A000273[n]:
        return where | {"problem": f"the reference finds {classes} classes, A000273 says {A000273[n]}"}, reps
    cover = orbits.cover(n, method)
    if cover.exact and (len(reps) != A000273[n] or np.unique(mine).size != len(reps)):
        return where | {"problem": f"an exact cover yields {len(reps)} masks ({np.unique(mine).size} classes), "
                                   f"A000273 says {A000273[n]}"}, reps
    counts = {"orbit_count": orbits.orbit_count(n, method), "expected": orbit_cover.expected(n, method)}
    if any(v != len(reps) for v in counts.values()):
        return where | {"problem": f"counts {counts}, but {len(reps)} masks are yielded"}, reps
    return parts_problem(where["enumeration"], reps, lambda part: gather(orbits.orbit_masks(n, method, part=part),
                                                                         n)), reps


def loops_problem(n: int, method: str, reps: np.ndarray) -> dict | None:
    from hasse.proofs import orbit_cover as oc

    got = gather(oc.orbit_batches(n, method, oc.LOOPS), n)
    where = {"enumeration": f"classes with loops ({method})"}
    eye = np.eye(n, dtype=bool)
    want = np.concatenate([reps | (eye & np.array([(d >> q) & 1 for q in range(n)], dtype=bool)[:, None])
                           for d in range(1 << n)])
    g, w = _multiset(codes(got)), _multiset(codes(want))
    if not (np.array_equal(g[0], w[0]) and np.array_equal(g[1], w[1])):
        return where | {"problem": "not every representative with every set of loops, each once",
                        "yielded": len(got), "want": len(want)}
    if oc.expected(n, method, oc.LOOPS) != len(want):
        return where | {"problem": f"expected {oc.expected(n, method, oc.LOOPS)}, but {len(want)} masks"}
    if n <= 4:
        every = canonical(all_masks(n, diagonal=True))
        missing = np.setdiff1d(every, canonical(got))
        if missing.size or np.unique(every).size != A000595[n]:
            return where | {"problem": f"{missing.size} classes with loops missing; the reference finds "
                                       f"{np.unique(every).size}, A000595 says {A000595[n]}"}
    return parts_problem(where["enumeration"], got, lambda part: gather(oc.orbit_batches(n, method, oc.LOOPS, part),
                                                                        n))


def limits_problem(n: int) -> tuple[dict | None, np.ndarray]:
    from hasse.proofs import orbit_cover as oc
    from hasse.solvers import preorders

    got = gather(preorders.preorder_masks(n), n)
    where = {"enumeration": "labelled preorders"}
    eye = np.eye(n, dtype=bool)
    if np.diagonal(got, axis1=1, axis2=2).any():
        return where | {"problem": "a preorder mask with a nonzero diagonal"}, got
    closed = closures(got)
    bad = np.flatnonzero(~(closed == (got | eye)).reshape(len(got), -1).all(axis=1))
    if bad.size:
        return where | {"problem": "mask or I is not transitive", "mask": _mask_json(got[int(bad[0])])}, got
    mine = codes(got)
    if np.unique(mine).size != len(got) or len(got) != A000798[n]:
        return where | {"problem": f"{len(got)} masks, {np.unique(mine).size} distinct, A000798 says "
                                   f"{A000798[n]}"}, got
    limits = np.unique(codes(closures(all_masks(n)) & ~eye))
    if not np.array_equal(limits, np.unique(mine)):
        return where | {"problem": "not exactly the limits of the labelled masks",
                        "limits": int(limits.size), "yielded": int(np.unique(mine).size)}, got
    if oc.expected(n, "auto", oc.LIMITS) != len(got):
        return where | {"problem": f"expected {oc.expected(n, 'auto', oc.LIMITS)}, but {len(got)} masks"}, got
    return parts_problem("labelled preorders", got,
                         lambda part: gather(oc.orbit_batches(n, "auto", oc.LIMITS, part), n)), got


# --------------------------------------------------------------------------- the scan, with planted theorems


class _Keys:
    """The key (canonical code or limit code) of every mask of a batch, cached by the batch's bytes."""

    def __init__(self, n: int, key):
        self.n, self.key, self.cache = n, key, {}

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        tag = (np.asarray(rows).shape, np.asarray(rows).tobytes())
        if tag not in self.cache:
            if len(self.cache) > 64:
                self.cache.clear()
            self.cache[tag] = self.key(unpack(rows, self.n))
        return self.cache[tag]


def _planted(kind: str, key: _Keys, target: int | None, seen: set | None, diagonal: bool = False) -> Theorem:
    """A planted theorem: "no mask has key ``target``" (None: flags nothing, recording the keys it sees)."""

    def flag(rows):
        k = key(rows)
        if seen is not None:
            seen.update(k.tolist())
        return k == target if target is not None else np.zeros(len(k), dtype=bool)

    why = "its predicate reads a mask only through its class under relabelling (a canonical form)"
    limit = "its predicate reads a mask only through its limit (the code of R*)"
    return Theorem(f"planted_{kind.replace(' ', '_')}_{target}", "planted", None, None, flag=flag,
                   explain=lambda mask: {}, invariant=None if kind == "limits" else why,
                   limit_only=limit if kind == "limits" else None,
                   not_invariant="planted" if kind == "limits" else None, diagonal=diagonal)


TIMEOUT = {"timeout": True}  # the time limit was spent: the verdict is unknown, never a finding


def scan_problem(n: int, method: str, kind: str, targets: np.ndarray, every: np.ndarray | None, key_of,
                 ctx: Context | None = None) -> dict | None:
    """Planted theorems over one enumeration in one pass: every target refuted in its class, the recorder proved."""
    from hasse.proofs import orbit_cover as oc
    from hasse.proofs import orbits_check

    key = _Keys(n, key_of)
    seen: set = set()
    theorems = [_planted(kind, key, None, seen, kind == oc.LOOPS)] + [_planted(kind, key, int(t), None,
                                                                               kind == oc.LOOPS) for t in targets]
    left = ctx.remaining() if ctx is not None else None
    results, error = safely(lambda: orbits_check.run_many(theorems, n, [Context(timeout=left) for _ in theorems],
                                                          method=method))
    if ctx is not None and ctx.expired():
        return TIMEOUT
    where = {"scan": f"{kind} ({method})"}
    if error:
        return where | {"problem": f"run_many raised {error}"}
    recorder, *planted = results
    count = oc.expected(n, method, kind)
    if recorder.verdict != PROVED or recorder.checked != count:
        return where | {"problem": f"the theorem that flags nothing: {recorder.verdict}, checked {recorder.checked:,} "
                                   f"of {count:,} ({recorder.reason})"}
    missing = np.setdiff1d(every, np.array(sorted(seen), dtype=np.int64)) if every is not None else np.zeros(0)
    if missing.size:
        return where | {"problem": f"the predicate never saw {missing.size} of the {every.size} classes or limits"}
    for t, r in zip(targets, planted):
        mask = np.array((r.counterexample or {}).get("mask", []), dtype=bool)
        if r.verdict != REFUTED or mask.shape != (n, n) or int(key_of(mask[None])[0]) != int(t):
            return where | {"problem": f"the planted theorem 'no mask has key {int(t)}' is {r.verdict} "
                                       f"({r.reason}) with counterexample {r.counterexample}"}
    return None


def limit_key(masks: np.ndarray) -> np.ndarray:
    return codes(closures(masks))


def check_size(n: int, method: str, limits: bool = True, ctx: Context | None = None) -> tuple[dict | None, int]:
    """The first gap at ``n`` for ``method`` (and the preorders when ``limits``), and how many masks were compared."""
    from hasse.proofs import orbit_cover as oc

    ctx = ctx or Context()
    found, reps = classes_problem(n, method)
    checked = len(reps) + (1 << (n * (n - 1)))
    if found or ctx.expired():
        return found or TIMEOUT, checked
    found = loops_problem(n, method, reps)
    checked += len(reps) << n
    if found or ctx.expired():
        return found or TIMEOUT, checked
    every = np.unique(canonical(reps))
    found = scan_problem(n, method, oc.CLASSES, every, every, canonical, ctx)
    if found:
        return found, checked
    with_loops = np.unique(canonical(gather(oc.orbit_batches(n, method, oc.LOOPS), n)))
    eye = np.eye(n, dtype=bool)
    sample = [reps[j] | (eye & np.array([(j >> q) & 1 for q in range(n)], dtype=bool)[:, None])
              for j in range(0, len(reps), LOOP_STRIDE)]
    found = scan_problem(n, method, oc.LOOPS, np.unique(canonical(np.array(sample))), with_loops, canonical, ctx)
    if found:
        return found, checked
    if not limits:
        return None, checked
    found, preorders = limits_problem(n)
    checked += len(preorders)
    if found or ctx.expired():
        return found or TIMEOUT, checked
    # every preorder is a target; no recorder check (the limit control feeds the predicate random masks too)
    every = np.unique(limit_key(preorders))
    return scan_problem(n, "auto", oc.LIMITS, every, None, limit_key, ctx), checked


@lru_cache(maxsize=1)
def methods() -> tuple[str, ...]:
    """``auto`` (what a user's run takes), and the fallback too when nauty is installed."""
    from hasse.solvers import orbits

    return ("auto", "fallback") if orbits.nauty_programs() else ("auto",)


def exhaustive_check(n: int, ctx: Context) -> Outcome:
    from hasse.solvers import orbits

    start = time.monotonic()
    details = {"methods": NO_Z3, "enumerators": [f"{m}: {orbits.cover(n, m).description}" for m in methods()]
               if n <= FULL_UPTO else []}
    if n > FULL_UPTO:
        return Outcome(UNKNOWN, 0, reason=f"the cover is checked for n <= {FULL_UPTO}: n = {n} has "
                                          f"2^{n * (n - 1)} labelled masks", details=details)
    steps = [lambda m=m: check_size(n, m, limits=m == methods()[0], ctx=ctx) for m in methods()]
    return first_finding(steps, n, details, start, ctx)


THEOREM = Theorem(NAME, STATEMENT, exhaustive_check, None, not_invariant=NOT_INVARIANT)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

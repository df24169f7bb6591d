"""catalog_layouts_match_design — the catalogue builds exactly the layouts design.md §4 writes down, and the generators list exactly their class.

Statement. For every size ``m = 1 … n`` and every parameter value at that size:

- the masks and tasks the catalogue builds from a spec (:func:`theory.catalog.build_mask`,
  :func:`~theory.catalog.build_task`, :func:`~theory.catalog.build_family`: the code behind
  every command that reads a spec) equal, entry by entry (mask, position names, inputs,
  labels), the layouts written out here from the rules' text of design.md §4 and
  prior_art.md: ``causal``, ``bidirectional``, ``sliding_window`` (every ``w = 1 … m``),
  ``prefix_lm`` (every ``p = 0 … m``), ``block_causal``, ``bd3lm`` (every ``l | m``),
  ``xlnet`` (every order, a permutation of ``0 … m-1``), ``block_two_stream`` (every ``l | m``,
  ``chain`` and ``clique``; mask and task), ``butterfly`` (mask and task), and the families
  ``ar``, ``block`` (every ``l | m``, both variants) and ``infill``;
- the generators the task theorems quantify over (:mod:`solvers.task_sets`) list their
  class: :func:`~solvers.task_sets.block_specs` names every ``l`` dividing ``m`` (divisors
  found here as pairs ``d, m/d``), once per variant (``clique`` for ``l >= 2``);
  :func:`~solvers.task_sets.builtin_families` gives ``ar`` (``m >= 2``), those and
  ``infill``; :func:`~solvers.task_sets.compositions` lists ``2^(m-1)`` distinct
  compositions of ``m``; :func:`~solvers.task_sets.small_family_diagrams` lists exactly
  :func:`~solvers.task_sets.small_family_count` families, and that count equals the
  known sequence (2, 11, 68, 469, 3640 for m = 1 … 5; :func:`solvers.task_sets.count_problems`).

The infill member ``T_k`` is laid out as its builder documents: the left arm, then the right
arm, then the centre (design.md §4 fixes what each part holds and attends, not the order).

What a verdict covers. The builders named above and their spec parsing, and the four
generators, as they are in this checkout, for every ``m <= n``. It does not cover entries
with free-form parameters beyond those listed (``document``, ``tree``, ``packed``, ``mlm``,
the ``bad_`` designs).

Counterexample: the spec, the part that differs (mask, names, inputs or labels), the
builder's value and the design's.

Exhaustive method only (:mod:`proofs.engine_checks`): the builders are Python. n = 4 takes
well under a second; the family counts dominate from n = 5 on.

References: design.md §4 (the case studies and built-in layouts), prior_art.md, §5.
"""

from __future__ import annotations

import itertools

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import NO_Z3, safely
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Theorem

NAME = "catalog_layouts_match_design"
STATEMENT = ("the catalogue's masks, tasks and families equal the layouts of design.md §4, and the family "
             "generators list exactly their class")


def divisors(m: int) -> list[int]:
    """Divisors of ``m``, as pairs ``d, m // d`` with ``d * d <= m``."""
    out = set()
    d = 1
    while d * d <= m:
        if m % d == 0:
            out |= {d, m // d}
        d += 1
    return sorted(out)


def rule_mask(size: int, attends) -> np.ndarray:
    return np.array([[bool(attends(q, k)) for k in range(size)] for q in range(size)], dtype=bool)


def centre(m: int, k: int) -> str:
    """``agg(x_(k-1),x_(k+1))``, one-sided at the ends, ``[MASK]`` without neighbours."""
    parts = [f"x{i}" for i in (k - 1, k + 1) if 0 <= i < m]
    return f"agg({','.join(parts)})" if parts else "[MASK]"


def two_stream(m: int, l: int, variant: str) -> dict:
    streams = [("C", i) for i in range(m - l)] + [("Q", t) for t in range(m)]

    def attends(a, b):
        (s, t), (r, u) = streams[a], streams[b]
        if s == "C":
            return r == "C" and u <= t
        if r == "C":
            return u // l < t // l
        return u // l == t // l and (variant == "clique" or u <= t)

    return {"mask": rule_mask(len(streams), attends), "names": tuple(f"{s}{i}" for s, i in streams),
            "inputs": tuple((f"x{i}", i) if s == "C" else ("[MASK]", i) for s, i in streams),
            "labels": tuple(() if s == "C" else (i,) for s, i in streams)}


def butterfly(m: int) -> dict:
    streams = [("F", i) for i in range(m - 1)] + [("B", i) for i in range(1, m)] + [("P", k) for k in range(m)]
    allowed = {("F", "F"): lambda i, j: j <= i, ("B", "B"): lambda i, j: j >= i, ("P", "F"): lambda k, j: j < k,
               ("P", "B"): lambda k, j: j > k, ("P", "P"): lambda k, j: j == k}

    def attends(a, b):
        (s, i), (r, j) = streams[a], streams[b]
        return (s, r) in allowed and allowed[(s, r)](i, j)

    return {"mask": rule_mask(len(streams), attends), "names": tuple(f"{s}{i}" for s, i in streams),
            "inputs": tuple((centre(m, i), i) if s == "P" else (f"x{i}", i) for s, i in streams),
            "labels": tuple((i,) if s == "P" else () for s, i in streams)}


def ar_member(k: int) -> dict:
    return {"mask": rule_mask(k, lambda q, j: j <= q), "inputs": tuple((f"x{i}", i) for i in range(k)),
            "labels": tuple(() if i < k - 1 else (k,) for i in range(k))}


def block_member(l: int, b: int, variant: str) -> dict:
    c = b * l

    def attends(q, k):
        if q < c:
            return k <= q
        return k < c or variant == "clique" or k <= q

    return {"mask": rule_mask(c + l, attends),
            "inputs": tuple((f"x{i}", i) for i in range(c)) + tuple(("[MASK]", c + j) for j in range(l)),
            "labels": tuple(() for _ in range(c)) + tuple((c + j,) for j in range(l))}


def infill_member(m: int, k: int) -> dict:
    parts = [("L", i) for i in range(k)] + [("R", i) for i in range(k + 1, m)] + [("P", k)]

    def attends(a, b):
        (s, i), (r, j) = parts[a], parts[b]
        return s == "P" or (s == r == "L" and j <= i) or (s == r == "R" and j >= i)

    return {"mask": rule_mask(m, attends),
            "inputs": tuple((centre(m, i), i) if s == "P" else (f"x{i}", i) for s, i in parts),
            "labels": tuple((i,) if s == "P" else () for s, i in parts)}


def masks_by_rule(m: int):
    """``(spec, layout)`` for the masks written from their rules alone."""
    yield f"causal:n={m}", {"mask": rule_mask(m, lambda q, k: k <= q)}
    yield f"bidirectional:n={m}", {"mask": np.ones((m, m), dtype=bool)}
    for w in range(1, m + 1):
        yield f"sliding_window:n={m},w={w}", {"mask": rule_mask(m, lambda q, k: q - w < k <= q)}
    for p in range(0, m + 1):
        yield f"prefix_lm:n={m},prefix={p}", {"mask": rule_mask(m, lambda q, k: k < p or k <= q)}
    for l in divisors(m):
        yield f"block_causal:n={m},block={l}", {"mask": rule_mask(m, lambda q, k: k // l <= q // l)}
        yield f"bd3lm:n={m},block={l}", {"mask": rule_mask(2 * m, lambda q, k: (
            (((q % m) // l == (k % m) // l) and ((q >= m) == (k >= m)))
            or (q < m <= k and (k % m) // l < (q % m) // l)
            or (q >= m and k >= m and (k % m) // l <= (q % m) // l)))}
        for variant in ("chain", "clique"):
            yield f"block_two_stream:n={m},block={l},variant={variant}", two_stream(m, l, variant)
    for order in itertools.permutations(range(m)):
        rank = {t: i for i, t in enumerate(order)}
        yield f"xlnet:order={'+'.join(map(str, order))}", {"mask": rule_mask(2 * m, lambda q, k: (
            (q < m and k < m and rank[k] <= rank[q]) or (q >= m > k and rank[k] < rank[q % m]) or q == k >= m))}
    yield f"butterfly:n={m}", butterfly(m)


def tasks_by_rule(m: int):
    """``(kind, spec, layouts)``: the tasks and families of design.md §4 (kind ``task`` or ``family``)."""
    for l in divisors(m):
        for variant in ("chain", "clique"):
            yield "task", f"block_two_stream:n={m},block={l},variant={variant}", [two_stream(m, l, variant)]
            yield "family", f"block:n={m},block={l},variant={variant}", [block_member(l, b, variant)
                                                                         for b in range(m // l)]
    yield "task", f"butterfly:n={m}", [butterfly(m)]
    if m >= 2:
        yield "family", f"ar:n={m}", [ar_member(k) for k in range(1, m)]
    yield "family", f"infill:n={m}", [infill_member(m, k) for k in range(m)]


def _differs(spec: str, built: dict, want: dict) -> dict | None:
    for key, value in want.items():
        got = built[key]
        same = (np.shape(got) == np.shape(value) and np.array_equal(got, value)) if key == "mask" else got == value
        if not same:
            show = (lambda v: np.asarray(v, dtype=int).tolist()) if key == "mask" else (lambda v: v)
            return {"spec": spec, "part": key, "catalogue": show(got), "design": show(value)}
    return None


def layout_problems(m: int, counter: list[int]) -> dict | None:
    """The first catalogue entry of size ``m`` that differs from its layout, or None (``counter[0]``: specs built)."""
    from hasse.theory.catalog import build_family, build_mask, build_task

    for spec, want in masks_by_rule(m):
        counter[0] += 1
        built, error = safely(lambda: build_mask(spec))
        if error:
            return {"spec": spec, "part": "build", "catalogue": error}
        found = _differs(spec, {"mask": built.matrix, "names": tuple(built.names)},
                         {k: v for k, v in want.items() if k in ("mask", "names")})
        if found:
            return found
    for kind, spec, wants in tasks_by_rule(m):
        counter[0] += 1
        built, error = safely(lambda: [build_task(spec)] if kind == "task" else list(build_family(spec)))
        if error:
            return {"spec": spec, "part": "build", "catalogue": error}
        if len(built) != len(wants):
            return {"spec": spec, "part": "members", "catalogue": len(built), "design": len(wants)}
        for i, (task, want) in enumerate(zip(built, wants)):
            found = _differs(spec if kind == "task" else f"{spec} member {i}",
                             {"mask": task.mask, "names": tuple(task.names), "inputs": tuple(task.inputs),
                              "labels": tuple(task.labels)}, want)
            if found:
                return found
    return None


def generator_problems(m: int) -> dict | None:
    """The first generator of :mod:`solvers.task_sets` that does not list its class at size ``m``, or None."""
    from hasse.solvers import task_sets

    want = [f"block:n={m},block={l},variant={v}" for l in divisors(m) for v in (("chain", "clique") if l >= 2
                                                                                 else ("chain",))]
    got = task_sets.block_specs(m)
    if sorted(got) != sorted(want) or len(got) != len(set(got)):
        return {"generator": "block_specs", "n": m, "got": got, "want": want}
    specs = [spec for spec, _ in task_sets.builtin_families(m)]
    want = sorted(([f"ar:n={m}"] if m >= 2 else []) + want + [f"infill:n={m}"])
    if sorted(specs) != want:
        return {"generator": "builtin_families", "n": m, "got": specs, "want": want}
    problems = task_sets.count_problems(m)
    if problems:
        return {"generator": "counts", "n": m, "problems": problems}
    return None


def exhaustive_check(n: int, ctx: Context) -> Outcome:
    counter = [0]  # specs built and compared
    details = {"sizes": list(range(1, n + 1)), "checked": "catalogue specs (masks, tasks, families)", "methods": NO_Z3}
    for m in range(1, n + 1):
        if ctx.expired():
            return Outcome(UNKNOWN, counter[0], reason=f"timeout after sizes 1 … {m - 1}", details=details)
        found = layout_problems(m, counter) or generator_problems(m)
        if found:
            return Outcome(REFUTED, counter[0], counterexample={"n": m} | found, details=details)
    return Outcome(PROVED, counter[0], details=details)


THEOREM = Theorem(NAME, STATEMENT, exhaustive_check, None,  # --orbits refused
                  not_invariant="the catalogue's layouts are particular labelled masks, not classes of masks")

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

"""shard_combination_is_exact — combining shards and parts gives a verdict exactly when they cover the class once.

Statement. At size ``n`` (``n <= 5``; the existence theorem and the orbit parts ``n <= 4``),
with results produced here by really running the theorems (``run_theorem`` with shard and
span contexts, ``orbits_check.run_many`` with parts), never written by hand:

- numbered shards (:func:`proofs.certificates.combine.combine`, what ``hasse prove
  --combine`` runs, and :func:`proofs.distributed.combine_labelled`, the Dask combiner):
  the pool holds the ``k`` shards ``i/k`` of ``limit_is_preorder`` for ``k = 1 … 4`` and
  the span results ``[a, b)`` for every ``a < b`` of the cut points
  ``{0, 1, ⌊T/2⌋ - 1, ⌊T/2⌋, ⌊T/2⌋ + 1, T - 1, T}`` (``T = 2^(n(n-1))``). For every
  multiset of at most two results of the pool and of three spans (duplicates included), and every full
  set of ``k`` shards with one shard dropped, repeated or replaced by a relabelled copy of
  another (its range set to the other's with its own shard label, or the other's label
  on its own range), the combination is ``proved`` exactly when the ranges partition
  ``[0, T)`` (no gap, no overlap), and then with the verdict of the whole run; otherwise
  it is refused (``ValueError``) or ``unknown``, never ``proved``. The same for the
  existence statement ``no_residual_can_oscillate`` (``n <= 4``, ``T = 2^(n²)``): a
  partition gives the whole run's verdict and its witness (the lowest index);
- orbit parts (:func:`~proofs.certificates.combine.combine`,
  :func:`proofs.distributed.combine_orbits`): the parts ``(i, k)``, ``k = 2, 3``, of
  ``limit_is_preorder`` (classes) and ``no_residual_can_oscillate`` (classes with loops)
  under ``--orbits``, and relabelled copies (part ``i``'s result numbered ``j``: a forgery unless
  both parts are empty); for every multiset of at most three of them, and the three parts of
  ``k = 3`` with any one more, the combination gives the whole enumeration's verdict exactly
  when it is the ``k`` parts of one ``k``, each once, each as run; otherwise it is
  refused or ``unknown``.

A relabelled copy whose range *and* shard label are both moved is not in the class: a
numbered shard's content is its range, so it cannot be told from a real run without
re-running it (``hasse certificate verify --recheck``); an orbit part's content is bound
by its digest, so its relabelled copies are.

What a verdict covers. The combiners of :mod:`proofs.certificates.combine` and
:mod:`proofs.distributed` as they are in this checkout, on those pools. For ``n >= 6`` the
verdict is ``unknown``: every span would rescan ``2^30`` masks.

The definition (a partition of the numbering; the exact set of parts) is decided here
from the ranges and part numbers this module asked for, sharing no code with the combiners.

Counterexample: the combination (each result's range or part, and how it was relabelled),
what the combiner answered and what the definition says.

Exhaustive method only (:mod:`proofs.engine_checks`): the combiners are Python. n = 4 takes
a few seconds.

References: design.md §5 (certificates, ``--combine``, the distributed engine).
"""

from __future__ import annotations

import copy
import itertools
import time

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import NO_Z3, first_finding, safely
from hasse.proofs.theorem import PROVED, UNKNOWN, Context, Outcome, Theorem

NAME = "shard_combination_is_exact"
STATEMENT = ("for every multiset of shards, spans and orbit parts (duplicates, gaps, overlaps, relabelled copies) "
             "of really run results, --combine and the Dask combiners prove exactly when the results partition "
             "the class, with the whole run's verdict, and never otherwise")
NOT_INVARIANT = ("the statement is about combining results by their ranges and part numbers, not about a "
                 "property of one mask")
FULL_UPTO = 5
EXISTENCE_UPTO = 4  # the existence theorem's space is 2^(n²): n = 5 would rescan 2^25 masks per span
ORBITS_UPTO = 4
UNIVERSAL, EXISTENCE = "limit_is_preorder", "no_residual_can_oscillate"


def cuts(total: int) -> list[int]:
    half = total // 2
    return sorted({x for x in (0, 1, half - 1, half, half + 1, total - 1, total) if 0 <= x <= total})


def tiles(ranges: list[tuple[int, int]], total: int) -> bool:
    """The definition: the ranges, sorted, follow each other from 0 to ``total`` with no gap and no overlap."""
    pos = 0
    for a, b in sorted(ranges):
        if a != pos or b <= a:
            return False
        pos = b
    return pos == total


def _json(r) -> dict:
    return r.to_json() if hasattr(r, "to_json") else r


def _hit(result: dict):
    return result.get("witness") or result.get("counterexample")


def _same_verdict(got: dict, whole: dict) -> bool:
    """The combined verdict is the whole run's (and the same witness index for an existence statement)."""
    if got.get("verdict") != whole["verdict"]:
        return False
    if whole.get("witness") is not None:
        return (got.get("witness") or {}).get("index") == whole["witness"].get("index")
    return True


def range_pool(name: str, n: int, ctx: Context) -> tuple[list[tuple[str, dict]], dict, int]:
    """``(label, result)`` of every shard (k = 1 … 4) and span of the pool, the whole run, and the space."""
    from hasse.proofs import registry
    from hasse.proofs.theorem import run_theorem

    theorem = registry.get(name)
    total = theorem.space(n)
    if n < theorem.min_n:
        return [], {"verdict": UNKNOWN, "n": n}, total
    whole = _json(run_theorem(theorem, n, "exhaustive", Context(timeout=ctx.remaining())))
    pool = []
    for k in range(1, 5):
        if k <= total:
            for i in range(k):
                pool.append((f"shard {i}/{k}", _json(run_theorem(theorem, n, "exhaustive",
                                                                 Context(shard=(i, k), timeout=ctx.remaining())))))
    points = cuts(total)
    for a, b in itertools.combinations(points, 2):
        pool.append((f"span [{a}, {b})", _json(run_theorem(theorem, n, "exhaustive",
                                                           Context(span=(a, b), timeout=ctx.remaining())))))
    return pool, whole, total


def _answer(call) -> tuple[dict | None, str | None]:
    """``(result, None)`` or ``(None, refusal)``; an exception other than a refusal is an answer to report."""
    got, error = safely(call)
    if error is not None:
        return None, error
    return _json(got), None


def ranges_of(parts: list[dict]) -> list[tuple[int, int]]:
    return [tuple(p["details"]["range"]) for p in parts]


def fresh(parts: list[dict]) -> list[dict]:
    """Copies a combiner may not alter the pool through (the results and their details)."""
    return [{**p, "details": copy.deepcopy(p.get("details") or {})} for p in parts]


def judge(name: str, labels: list[str], parts: list[dict], partition: bool, whole: dict,
          dask: bool = False) -> dict | None:
    """The combiners on ``parts`` (``dask``: the Dask one too): the whole run's verdict iff ``partition``, never
    ``proved`` otherwise."""
    from hasse.proofs.certificates.combine import combine
    from hasse.proofs.distributed import combine_labelled

    n = whole["n"]
    calls = [("combine", lambda: combine(fresh(parts)))]
    if dask:
        calls.append(("distributed.combine_labelled", lambda: combine_labelled(name, n, fresh(parts), len(parts))))
    for combiner, call in calls:
        got, error = _answer(call)
        refused = error is not None and error.startswith("ValueError") or (got or {}).get("verdict") == UNKNOWN
        if error is not None and not error.startswith("ValueError"):
            return {"theorem": name, "combiner": combiner, "parts": labels, "engine": error,
                    "definition": "a verdict or a refusal"}
        if partition and (refused or not _same_verdict(got, whole)):
            return {"theorem": name, "combiner": combiner, "parts": labels, "engine": error or got.get("verdict"),
                    "reason": (got or {}).get("reason"),
                    "definition": f"the ranges partition the space: {whole['verdict']} as the whole run"}
        if not partition and not refused and got.get("verdict") == PROVED:
            return {"theorem": name, "combiner": combiner, "parts": labels, "engine": "proved",
                    "definition": "the ranges do not partition the space: refused or unknown"}
    return None


def relabelled(label: str, r: dict, other_label: str, other: dict, how: str) -> tuple[str, dict]:
    """A copy of ``r`` claiming ``other``'s range (``how="range"``) or its shard label (``how="label"``)."""
    forged = copy.deepcopy(r)
    if how == "range":
        forged["details"]["range"] = list(other["details"]["range"])
    else:
        forged["details"]["shard"] = other["details"].get("shard")
    return f"{label} as {other_label} ({how})", forged


def ranges_problem(name: str, n: int, ctx: Context) -> tuple[dict | None, int]:
    pool, whole, total = range_pool(name, n, ctx)
    if ctx.expired():  # a shard may have stopped at the limit: its result says nothing about combining
        return {"timeout": True}, 0
    checked = 0
    spans = [i for i, (label, _) in enumerate(pool) if label.startswith("span")]
    combos = [c for size in (1, 2) for c in itertools.combinations_with_replacement(range(len(pool)), size)]
    combos += list(itertools.combinations_with_replacement(spans, 3))
    for combo in combos:
        if True:
            if ctx.expired():
                return {"timeout": True}, checked
            labels = [pool[i][0] for i in combo]
            parts = [pool[i][1] for i in combo]
            checked += 1
            found = judge(name, labels, parts, tiles(ranges_of(parts), total), whole)
            if found:
                return found, checked
    shards = {}
    for label, r in pool:
        if label.startswith("shard"):
            i, k = map(int, label.split()[1].split("/"))
            shards.setdefault(k, []).append((label, r))
    for k, full in shards.items():
        variants = [(f"the {k} shards without {full[j][0]}", full[:j] + full[j + 1:]) for j in range(k)]
        variants += [(f"the {k} shards, {full[j][0]} twice", full + [full[j]]) for j in range(k)]
        for i, j in itertools.permutations(range(k), 2):
            for how in ("range", "label"):
                forged = relabelled(*full[i], *full[j], how)
                variants.append((f"the {k} shards, {forged[0]}", full[:j] + [forged] + full[j + 1:]))
        for what, combo in variants:
            checked += 1
            labels = [what] + [label for label, _ in combo]
            parts = [r for _, r in combo]
            partition = tiles(ranges_of(parts), total) and all(
                "(range)" not in label and "(label)" not in label for label, _ in combo)
            found = judge(name, labels, parts, partition, whole, dask=True)
            if found:
                return found, checked
    return None, checked


def orbit_pool(name: str, n: int, ctx: Context) -> tuple[list[tuple[str, tuple[int, int], bool, dict]], dict]:
    """``(label, claimed part, as run, result)`` of the parts for k = 2, 3 and their relabelled copies; the whole.

    A relabelled copy is "as run" only when both parts are empty (n = 1: one class, three parts).
    """
    from hasse.proofs import orbits_check as oc
    from hasse.proofs import registry

    theorem = registry.get(name)
    pool = []
    if n < theorem.min_n:
        return pool, {}
    whole = _json(oc.run_many([theorem], n, [Context(timeout=ctx.remaining())])[0])
    for k in (2, 3):
        real = [_json(oc.run_many([theorem], n, [Context(timeout=ctx.remaining())], part=(i, k))[0])
                for i in range(k)]
        pool += [(f"part {i}/{k}", (i, k), True, r) for i, r in enumerate(real)]
        for i, j in itertools.permutations(range(k), 2):
            forged = copy.deepcopy(real[i])
            forged["details"]["part"] = [j, k]
            empty = real[i]["checked"] == 0 and real[j]["checked"] == 0  # two empty parts: the same (no) masks
            pool.append((f"part {i}/{k} as {j}/{k}", (j, k), empty, forged))
    return pool, whole


def orbits_problem(name: str, n: int, ctx: Context) -> tuple[dict | None, int]:
    from hasse.proofs.certificates.combine import combine
    from hasse.proofs.distributed import combine_orbits

    pool, whole = orbit_pool(name, n, ctx)
    if ctx.expired():
        return {"timeout": True}, 0
    checked = 0
    combos = [c for size in (1, 2, 3) for c in itertools.combinations_with_replacement(range(len(pool)), size)]
    exact3 = [i for i, c in enumerate(pool) if c[2] and c[1][1] == 3]
    combos += [tuple(sorted(exact3 + [extra])) for extra in range(len(pool))]  # the three parts and one more
    for combo in combos:
        if True:
            if ctx.expired():
                return {"timeout": True}, checked
            chosen = [pool[i] for i in combo]
            labels = [c[0] for c in chosen]
            claimed = sorted(c[1] for c in chosen)
            ks = {k for _, k in claimed}
            exact = len(ks) == 1 and claimed == [(i, k) for k in ks for i in range(k)] and all(c[2] for c in chosen)
            parts = [c[3] for c in chosen]
            checked += 1
            calls = [("combine", lambda: combine(fresh(parts)))]
            if len(ks) == 1:
                calls.append(("distributed.combine_orbits",
                              lambda: combine_orbits(name, n, fresh(parts), next(iter(ks)))))
            for combiner, call in calls:
                got, error = _answer(call)
                refused = error is not None and error.startswith("ValueError") or \
                    (got or {}).get("verdict") == UNKNOWN
                if error is not None and not error.startswith("ValueError"):
                    return {"theorem": name, "combiner": combiner, "parts": labels, "engine": error,
                            "definition": "a verdict or a refusal"}, checked
                if exact and (refused or got.get("verdict") != whole["verdict"]):  # a hit: the lowest part's
                    return {"theorem": name, "combiner": combiner, "parts": labels,
                            "engine": error or got.get("verdict"), "reason": (got or {}).get("reason"),
                            "definition": f"the parts of one k, each once: {whole['verdict']} as the whole "
                                          "enumeration"}, checked
                if not exact and not refused and got.get("verdict") == PROVED:
                    return {"theorem": name, "combiner": combiner, "parts": labels, "engine": "proved",
                            "definition": "not the parts of one k each once as run: refused or unknown"}, checked
    return None, checked


def exhaustive_check(n: int, ctx: Context) -> Outcome:
    start = time.monotonic()
    details = {"methods": NO_Z3, "theorems": [UNIVERSAL] + ([EXISTENCE] if n <= EXISTENCE_UPTO else []),
               "orbit_parts": n <= ORBITS_UPTO}
    if n > FULL_UPTO:
        return Outcome(UNKNOWN, 0, reason=f"shard combining is checked for n <= {FULL_UPTO}: each span at n = {n} "
                                          f"would rescan 2^{n * (n - 1)} masks", details=details)
    runs = [(ranges_problem, UNIVERSAL)] + ([(ranges_problem, EXISTENCE)] if n <= EXISTENCE_UPTO else [])
    runs += [(orbits_problem, UNIVERSAL), (orbits_problem, EXISTENCE)] if n <= ORBITS_UPTO else []
    return first_finding([lambda c=check, x=name: c(x, n, ctx) for check, name in runs], n, details, start)


THEOREM = Theorem(NAME, STATEMENT, exhaustive_check, None, not_invariant=NOT_INVARIANT)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

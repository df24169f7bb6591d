"""leak_search_is_exact — the leak, isolation and flow search behind ``hasse leak`` finds exactly the leaks of the definition.

Statement. For every mask ``M`` of size ``n`` (zero diagonal: ``2^(n(n-1))`` masks) and
every task of the class below, :func:`theory.leak.find_leaks` (and
:func:`theory.leak.find_flows`) report exactly the violations of design.md §3:

- a leak ``(p, t)`` for supervised ``p`` with target ``t`` iff some ``j`` with
  ``t ∈ sources(j)`` has ``R*[p, j]``, once; its ``depth`` is ``d = min{L : R(L)[p, j]}``
  over those ``j``; its ``source`` holds ``t``, and its ``path`` is a walk
  ``source = v_0, …, v_d = p`` of ``d`` attention edges (``M[v_(i+1), v_i]``, ``v_(i+1) ≠ v_i``),
  so a shortest one;
- for every ``L = 0 … n``, :meth:`~theory.leak.LeakReport.leaks_within` keeps exactly the
  leaks with ``d <= L`` (the ``L``-layer model leaks there and nowhere else), and
  ``leak_free`` holds iff nothing is reported;
- an isolation violation per position ``p`` of a group and per other group ``h`` that
  ``p`` depends on, with the nearest member of ``h`` as source and a shortest path; a flow
  per sink that depends on a source, likewise;
- empty rows are read by the policy (:mod:`theory.empty_rows`): under the default
  ``attend-all`` the definitions use ``M`` with every empty row made all true, under
  ``attend-none`` the mask as given.

The class of tasks (``n`` tokens on ``n`` positions, every position supervised with every
target ``0 … n-1``, so every pair ``(p, t)`` is asked at once):

- for each rotation ``r = 0 … n-1``, position ``i`` holds ``x_((i+r) mod n)`` at pos ``i``:
  every position holds every token in some task; ``r = 0`` also isolates every position
  from every other (singleton groups), ``r = 1`` isolates two halves with the last position
  in no group;
- ``agg``: position ``i < n-1`` holds ``agg(x_i,x_(i+1))``, the last one ``[MASK]`` (content
  of two tokens, and none);
- the flow query: sources ``{0, n-1}``, every position a sink.
Policy ``attend-all`` runs on all of them; ``attend-none`` on ``r = 0`` and ``agg``.

What a verdict covers. :func:`theory.leak.find_leaks` (with :func:`~theory.leak.nearest_sources`,
:func:`~theory.leak.find_isolation`, :class:`~theory.leak.LeakReport`) and
:func:`theory.leak.find_flows`, as they are in this checkout, on every mask of size
``n <= 4``; for ``n >= 5`` a seeded uniform sample of 1,024 masks (the verdict line says
"sample … not a full proof"). ``R(L)`` comes from Boolean powers of the packed masks
(:func:`theory.batch.powers`), never from the engine.

Counterexample: the mask, the task (rotation, agg or flow) and policy, the pair and what
the engine said against what the definition says.

Exhaustive method only (:mod:`proofs.engine_checks`): the engine is Python. n = 4 takes a
few seconds.

References: design.md §2 (empty rows), §3 (leak, forbidden flow, isolation), §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import engine_theorem, safely
from hasse.theory import batch

NAME = "leak_search_is_exact"
STATEMENT = ("for every mask and every task of a covering class, find_leaks/find_flows report exactly the leaks, "
             "depths and shortest witness paths of the definition, under both empty-row policies")
UNREACHED = 1 << 20


def filled(masks: np.ndarray) -> np.ndarray:
    """The masks read under ``attend-all``: every empty row (diagonal included) made all true."""
    out = masks.copy()
    out[~masks.any(axis=2)] = True
    return out


def first_depths(masks: np.ndarray) -> np.ndarray:
    """``(B, n, n)``: ``first[b, p, j] = min{L : R(L)[p, j]}`` by Boolean powers (``UNREACHED`` if none)."""
    n = masks.shape[1]
    powers = batch.powers(batch.pack(masks), n)
    reach = np.stack([batch.unpack(p, n) for p in powers], axis=1)  # (B, n + 1, n, n)
    return np.where(reach.any(axis=1), reach.argmax(axis=1), UNREACHED)


def tasks(n: int) -> list[tuple[str, list, tuple, list]]:
    """``(name, inputs, policies, isolate)`` of the class of tasks above."""
    out = []
    half = [g for g in (list(range(0, (n - 1) // 2)), list(range((n - 1) // 2, n - 1))) if g]
    for r in range(n):
        isolate = [[p] for p in range(n)] if r == 0 else half if r == 1 else []
        policies = ("attend-all", "attend-none") if r == 0 else ("attend-all",)
        out.append((f"rotation {r}", [(f"x{(i + r) % n}", i) for i in range(n)], policies, isolate))
    agg = [(f"agg(x{i},x{i + 1})", i) for i in range(n - 1)] + [("[MASK]", n - 1)]
    out.append(("agg", agg, ("attend-all", "attend-none"), []))
    return out


def _walk_problem(path, mask, source, position, depth) -> str | None:
    path = list(path)
    if not path or path[0] != source or path[-1] != position or len(path) - 1 != depth:
        return f"path {path} is not a walk of {depth} steps from {source} to {position}"
    for a, b in zip(path, path[1:]):
        if a == b or not mask[b, a]:
            return f"path {path}: {b} does not attend {a}"
    return None


def _flows_problem(flows, first, mask, groups_of_source, expected) -> str | None:
    """``expected``: {(position, group): depth}; ``groups_of_source(j)``: the group a source counts for."""
    seen = {}
    for f in flows:
        key = (f.position, groups_of_source(f.source))
        if key in seen or key not in expected:
            return f"flow {f.to_json()} is {'repeated' if key in seen else 'not a violation of the definition'}"
        seen[key] = f
        if f.depth != expected[key] or first[f.position, f.source] != f.depth:
            return f"flow {f.to_json()}: depth {f.depth}, definition {expected[key]}"
        problem = _walk_problem(f.path, mask, f.source, f.position, f.depth)
        if problem:
            return problem
    missing = sorted(set(expected) - set(seen))
    return f"violations {missing} (position, group) not reported" if missing else None


def check_task(raw, mask, first, name, inputs, policy, isolate) -> dict | None:
    """What is wrong with the engine's report of one task (on mask ``raw``, read as ``mask``) under ``policy``."""
    from hasse.theory.leak import find_leaks
    from hasse.theory.task import make_task

    n = len(mask)
    task = make_task(n, inputs, [list(range(n))] * n, raw, isolate=isolate)
    where = {"task": name, "policy": policy, "inputs": [list(x) for x in inputs], "isolate": isolate}
    report, error = safely(lambda: find_leaks(task, empty_rows=policy))
    if error:
        return where | {"problem": f"find_leaks raised {error}"}
    sources = task.all_sources()
    depth = {(p, t): min([first[p, j] for j in range(n) if t in sources[j]], default=UNREACHED)
             for p in range(n) for t in range(n)}
    want = {k: d for k, d in depth.items() if d < UNREACHED}
    got = {}
    for leak in report.leaks:
        key = (leak.position, leak.target)
        if key in got or key not in want:
            return where | {"problem": f"leak {leak.to_json()} is {'repeated' if key in got else 'not a leak'}"}
        got[key] = leak
        if leak.depth != want[key] or t_missing(leak, sources):
            return where | {"problem": f"leak {leak.to_json()}: definition depth {want[key]}"}
        problem = _walk_problem(leak.path, mask, leak.source, leak.position, leak.depth)
        if problem:
            return where | {"problem": problem}
    if set(got) != set(want):
        return where | {"problem": f"leaks {sorted(set(want) - set(got))} (position, target) not reported"}
    for L in range(n + 1):
        within = {(x.position, x.target) for x in report.leaks_within(L)}
        if within != {k for k, d in want.items() if d <= L}:
            return where | {"problem": f"leaks_within({L}) = {sorted(within)}"}
    group = {p: g for g, members in enumerate(isolate) for p in members}
    expected = {}
    for p, g in group.items():
        for h, members in enumerate(isolate):
            d = min(first[p, j] for j in members)
            if h != g and d < UNREACHED:
                expected[(p, h)] = d
    problem = _flows_problem(report.isolation, first, mask, lambda j: group.get(j), expected)
    if problem:
        return where | {"problem": "isolation: " + problem}
    if report.leak_free != (not want and not expected):
        return where | {"problem": f"leak_free = {report.leak_free}"}
    return None


def t_missing(leak, sources) -> bool:
    return leak.target not in sources[leak.source]


def check_flows(raw, mask, first, policy) -> dict | None:
    from hasse.theory.leak import find_flows

    n = len(mask)
    srcs = sorted({0, n - 1})
    flows, error = safely(lambda: find_flows(raw, srcs, range(n), empty_rows=policy))
    where = {"task": f"flow from {srcs} to every position", "policy": policy}
    if error:
        return where | {"problem": f"find_flows raised {error}"}
    expected = {(p, 0): min(first[p, j] for j in srcs) for p in range(n)}
    expected = {k: d for k, d in expected.items() if d < UNREACHED}
    problem = _flows_problem(flows, first, mask, lambda j: 0 if j in srcs else None, expected)
    return where | {"problem": problem} if problem else None


def difference(mask: np.ndarray, firsts: dict) -> dict | None:
    """The first wrong report on one mask (``firsts[policy]``: its first-depth array), or None."""
    read = {"attend-all": filled(mask[None])[0], "attend-none": mask}
    for name, inputs, policies, isolate in tasks(len(mask)):
        for policy in policies:
            found = check_task(mask, read[policy], firsts[policy], name, inputs, policy, isolate)
            if found:
                return found | ({"read_as": read[policy].astype(int).tolist()} if policy == "attend-all" else {})
    for policy in ("attend-all", "attend-none"):
        found = check_flows(mask, read[policy], firsts[policy], policy)
        if found:
            return found
    return None


def _differences(masks: np.ndarray):
    firsts = {"attend-all": first_depths(filled(masks)), "attend-none": first_depths(masks)}
    for b, mask in enumerate(masks):
        yield difference(mask, {k: v[b] for k, v in firsts.items()})


def flag(rows: np.ndarray) -> np.ndarray:
    return np.array([d is not None for d in _differences(batch.unpack(rows, rows.shape[0]))], dtype=bool)


def explain(mask: np.ndarray) -> dict:
    return next(_differences(np.asarray(mask, dtype=bool)[None])) or {}


THEOREM = engine_theorem(NAME, STATEMENT, flag, explain, sample=1024)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

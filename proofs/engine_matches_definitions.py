"""engine_matches_definitions — the engine behind ``hasse analyze`` gives, mask by mask, what the definitions give.

Statement. For every mask ``M`` of size ``n`` (zero diagonal: ``2^(n(n-1))`` masks), the
per-mask engine the command line runs returns exactly the objects of design.md §2:

- :func:`theory.analysis.mask_to_analysis` (on :func:`theory.order.mask_to_order`):
  the classes in canonical order (a topological order of the quotient, the class with
  the smallest member first among those available; members ascending), the Hasse edges
  ``(lower, upper)`` as class indices, ``dense`` (``M or I = R*``), the height (classes
  on the longest chain), the convergence depth ``L* = min{L : A^L = A^(L+1)}``, the empty
  rows, and ``R(L)`` for every ``L = 0 … n`` (``layers=L``); without the residual, the
  pre-period and period of ``M, M^2, …`` and the depth only when the period is 1;
- :meth:`theory.order.LimitOrder.closure` is ``R*``; :func:`theory.reach.reach` at
  ``L = n`` is ``R(n)``; :func:`theory.reach.hop_distances` is the hop distance;
- :func:`theory.sparse.sparse_realisation` is *the* sparse realisation of the design:
  the diagonal; in each class of several members (ascending) every member attended by
  the next one and the largest by the smallest (one cycle through all members); for each
  Hasse edge ``[k] -> [q]`` the smallest member of ``[q]`` attends the smallest member of
  ``[k]``; nothing else.

What a verdict covers. Exactly the functions named above, as they are in this checkout,
on every mask of size ``n`` for ``n <= 4``; for ``n >= 5`` a seeded uniform sample of
4,096 masks (``details``: ``sample``, ``seed``, ``class_size``; the verdict line says
"sample … not a full proof"). It says nothing about the batched algebra
(:mod:`theory.batch`, covered by the mask theorems) beyond using it as the reference.

The definitions, computed independently of the engine: ``R(L) = A^L`` by Boolean powers
(:func:`theory.batch.powers`, packed rows), ``L*`` the first repeat of those powers,
``R* = R(L*)``, hop distances by breadth-first layers (:func:`theory.batch.hop_distances`),
the no-residual cycle by :func:`theory.batch.power_cycle`; the classes, their canonical
order, the covering relation, the height and the sparse realisation by brute force here,
from ``R*`` as numpy arrays.

Counterexample: the mask, the first quantity that differs, the engine's value and the
definition's (an exception of the engine is a difference too).

Exhaustive method only (:mod:`proofs.engine_checks`): the engine is Python, so no Z3
encoding can call it. n = 4 (4,096 masks) takes about 3 s on one core; a full n = 5
(1,048,576 masks) would take about 15 minutes, hence the sample.

References: design.md §2 (definitions), §5; docs/architecture.md (the engine's modules).
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import engine_theorem, safely
from hasse.theory import batch

NAME = "engine_matches_definitions"
STATEMENT = ("for every mask, mask_to_analysis/mask_to_order, reach, hop_distances and sparse_realisation "
             "return what the definitions give")


def batch_definitions(rows: np.ndarray) -> list[dict]:
    """Per mask of the batch: ``R(L)`` for ``L = 0 … n``, ``L*``, ``R*``, hop distances, no-residual cycle."""
    n, count = rows.shape
    powers = batch.powers(rows, n + 1)
    reach = np.stack([batch.unpack(p, n) for p in powers], axis=1)  # (B, n + 2, n, n)
    depth = batch.first_repeat(powers)
    hops = batch.hop_distances(rows)
    pre, per = batch.power_cycle(rows)
    masks = batch.unpack(rows, n)
    return [{"mask": masks[b], "reach": reach[b, : n + 1], "depth": int(depth[b]), "hops": hops[b],
             "preperiod": int(pre[b]), "period": int(per[b])} for b in range(count)]


def canonical_classes(limit: np.ndarray) -> list[tuple[int, ...]]:
    """Classes of ``R*`` in canonical order: repeatedly the available class with the smallest member."""
    n = len(limit)
    same = limit & limit.T
    classes = sorted({tuple(np.flatnonzero(same[p]).tolist()) for p in range(n)})
    placed: list[tuple[int, ...]] = []
    while len(placed) < len(classes):
        ready = [c for c in classes if c not in placed
                 and all(d in placed for d in classes if d != c and limit[c[0], d[0]])]
        placed.append(min(ready, key=lambda c: c[0]))
    return placed


def definition(ref: dict) -> dict:
    """Everything the engine reports about one mask, from the definitions."""
    mask, reach, depth = ref["mask"], ref["reach"], ref["depth"]
    n = len(mask)
    limit = reach[depth]
    classes = canonical_classes(limit)
    index = {p: i for i, c in enumerate(classes) for p in c}
    strict = limit & ~limit.T  # [k] < [q]
    covers = strict & ~((strict.astype(int) @ strict.astype(int)) > 0)
    edges = tuple(sorted({(index[k], index[q]) for q, k in zip(*np.nonzero(covers))}))
    level = [1] * len(classes)
    for lo, up in sorted(edges, key=lambda e: e[1]):  # lower classes come first in canonical order
        level[up] = max(level[up], level[lo] + 1)
    sparse = np.eye(n, dtype=bool)
    for c in classes:
        if len(c) > 1:
            for a, b in zip(c, c[1:] + c[:1]):
                sparse[b, a] = True
    for lo, up in edges:
        sparse[classes[up][0], classes[lo][0]] = True
    settles = ref["period"] == 1
    return {"classes": tuple(classes), "hasse_edges": edges, "dense": bool(np.array_equal(mask | np.eye(n, dtype=bool),
                                                                                            limit)),
            "height": max(level), "convergence_depth": depth, "closure": limit,
            "empty_rows": tuple(np.flatnonzero(~mask.any(axis=1)).tolist()),
            **{f"R({L})": reach[L] for L in range(n + 1)}, "reach(n)": reach[n], "hop_distances": ref["hops"],
            "no_residual": (ref["preperiod"], ref["period"], ref["preperiod"] if settles else None),
            "sparse_realisation": sparse}


def engine(mask: np.ndarray) -> dict:
    """The same quantities from the engine behind the command line."""
    from hasse.theory.analysis import mask_to_analysis
    from hasse.theory.order import mask_to_order
    from hasse.theory.reach import hop_distances, reach
    from hasse.theory.sparse import sparse_realisation

    n = len(mask)
    a = mask_to_analysis(mask)
    no_res = mask_to_analysis(mask, residual=False)
    return {"classes": tuple(a.classes), "hasse_edges": tuple(a.hasse_edges), "dense": a.dense, "height": a.height,
            "convergence_depth": a.convergence_depth, "closure": mask_to_order(mask).closure(),
            "empty_rows": tuple(a.empty_rows),
            **{f"R({L})": mask_to_analysis(mask, layers=L).reachability for L in range(n + 1)},
            "reach(n)": reach(mask, n), "hop_distances": hop_distances(mask),
            "no_residual": (no_res.preperiod, no_res.period, no_res.convergence_depth),
            "sparse_realisation": sparse_realisation(mask)}


def _same(x, y) -> bool:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return x is not None and y is not None and np.shape(x) == np.shape(y) and bool(np.array_equal(x, y))
    return x == y


def _json(value):
    if isinstance(value, np.ndarray):
        return value.astype(int).tolist()
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    return value


def difference(ref: dict) -> dict | None:
    """The first quantity where the engine and the definitions differ on one mask, or None."""
    want = definition(ref)
    got, error = safely(lambda: engine(ref["mask"]))
    if error is not None:
        return {"quantity": "engine raised", "engine": error}
    for key, value in want.items():
        if not _same(got[key], value):
            return {"quantity": key, "engine": _json(got[key]), "definition": _json(value)}
    return None


def flag(rows: np.ndarray) -> np.ndarray:
    return np.array([difference(ref) is not None for ref in batch_definitions(rows)], dtype=bool)


def explain(mask: np.ndarray) -> dict:
    return difference(batch_definitions(batch.pack(np.asarray(mask, dtype=bool)[None]))[0]) or {}


THEOREM = engine_theorem(NAME, STATEMENT, flag, explain)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

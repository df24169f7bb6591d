"""The definitions :mod:`proofs.stack_flow_matches_products` holds the stack engine to, written independently.

Not a theorem: its reference side. Nothing here imports :mod:`theory.stack` or
:mod:`theory.stack_leak`: integer matrix products of ``A_i = M_i or I`` (:func:`definition`:
``R(L)`` until the limit, first arrival, convergence, receptive field, the engine the
definition picks), a Warshall closure (:func:`closure`), runs read off each row
(:func:`is_interval`), the ``attend-all`` policy (:func:`filled`), the task of the class
(:func:`task_parts`), what a layered walk must be (:func:`walk_problem`) and the holder
a position sees first (:func:`nearest`). References: design.md §2 (different masks per layer), §3.
"""

from __future__ import annotations

import numpy as np


def closure(mask: np.ndarray) -> np.ndarray:
    """Reflexive–transitive closure by Warshall's algorithm."""
    out = mask | np.eye(len(mask), dtype=bool)
    for k in range(len(mask)):
        out = out | (out[:, k:k + 1] & out[k:k + 1, :])
    return out


def is_interval(mask: np.ndarray) -> bool:
    """Every row of ``mask or I`` one run ``lo … hi`` with ``lo`` and ``hi`` non-decreasing."""
    a = mask | np.eye(len(mask), dtype=bool)
    ends = []
    for row in a:
        cols = [k for k in range(len(row)) if row[k]]
        if cols[-1] - cols[0] + 1 != len(cols):
            return False
        ends.append((cols[0], cols[-1]))
    return all(x[0] <= y[0] and x[1] <= y[1] for x, y in zip(ends, ends[1:]))


def definition(layers: list[np.ndarray]) -> dict:
    """``R(L)`` until the limit, ``first``, ``converged``, the receptive field, the engine the definition picks."""
    n, d = len(layers[0]), len(layers)
    eye = np.eye(n, dtype=bool)
    steps = [(m | eye).astype(np.int64) for m in layers]
    union = np.zeros((n, n), dtype=bool)
    for m in layers:
        union |= m
    limit = closure(union)
    reach = [eye]
    while not np.array_equal(reach[-1], limit):
        if len(reach) > d * n * n + 1:
            raise AssertionError("the reference products did not reach the closure")  # cannot happen
        reach.append((steps[(len(reach) - 1) % d] @ reach[-1].astype(np.int64)) > 0)
    first = np.full((n, n), -1, dtype=np.int64)
    for L, r in enumerate(reach):
        first[r & (first < 0)] = L
    receptive = [min(L for L, r in enumerate(reach) if np.array_equal(r[q], limit[q])) for q in range(n)]
    return {"reach": reach, "limit": limit, "first": first, "converged": len(reach) - 1, "receptive": receptive,
            "engine": "interval" if all(is_interval(m) for m in layers) else "product"}


def reach_at(ref: dict, L: int) -> np.ndarray:
    return ref["reach"][min(L, ref["converged"])]


def filled(mask: np.ndarray) -> np.ndarray:
    """``attend-all``: every row with no true entry (diagonal included) made all true."""
    out = mask.copy()
    out[~mask.any(axis=1)] = True
    return out


def task_parts(n: int) -> tuple[list, list[set[int]], list[list[int]]]:
    """The task of the class: inputs, what each position holds, isolation groups."""
    if n == 1:
        return [("x0", 0)], [{0}], []
    inputs = [(f"agg(x{i},x{i + 1})", i) for i in range(n - 1)] + [("x0", n - 1)]
    holds = [{i, i + 1} for i in range(n - 1)] + [{0}]
    groups = [[0], list(range(1, n - 1))] if n >= 3 else [[0], [1]]
    return inputs, holds, groups


def walk_problem(path, hops, layers, k: int, q: int, arrival: int) -> str | None:
    """Why ``path``/``hops`` is not a walk ``k -> … -> q`` through the stack arriving at layer ``arrival``."""
    path, hops = [int(v) for v in path], [int(h) for h in hops]
    if not path or path[0] != k or path[-1] != q or len(hops) != len(path) - 1:
        return f"path {path} with hop layers {hops} does not go from {k} to {q}"
    if any(a >= b for a, b in zip(hops, hops[1:])) or (hops and hops[0] < 1):
        return f"hop layers {hops} are not strictly increasing from 1"
    if (hops[-1] if hops else 0) != arrival:
        return f"path {path} arrives at layer {hops[-1] if hops else 0}, first arrival is {arrival}"
    for (u, v), h in zip(zip(path, path[1:]), hops):
        if u == v or not layers[(h - 1) % len(layers)][v, u]:
            return f"path {path}: {v} does not attend {u} in layer {h}"
    return None


def nearest(ref: dict, p: int, candidates) -> tuple[int, int] | None:
    """``(depth, source)``: the candidate ``p`` sees first, then the smallest; None if none ever."""
    seen = [(int(ref["first"][p, j]), j) for j in sorted(candidates) if ref["first"][p, j] >= 0]
    return min(seen) if seen else None

"""Layered layout of a DAG (a Hasse diagram): layers, crossing reduction, x positions.

Pure geometry with numpy, no matplotlib; :mod:`hasse.views.draw_hasse` draws what this lays out.

- :func:`longest_chain_layers` -- a node sits on the layer given by the longest chain
  below it (upstream at layer 0);
- :func:`order_layers` -- barycentre sweeps and adjacent swaps, started from the given,
  the spectral (:func:`spectral_keys`) and a few shuffled orders, reduce crossings
  (:func:`count_crossings`);
- :func:`layered_layout` -- the whole layout: edges that skip layers are routed through
  invisible waypoints, and the x positions (in points) are relaxed towards the
  neighbours' mean, keeping boxes apart.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import numpy as np

MAX_WAYPOINTS = 4000  # above this, long edges are drawn straight


@dataclass
class Layout:
    """A layered drawing of a DAG, in abstract units (x in points, y in layers).

    Nodes ``0 .. m-1`` are the DAG's; nodes ``m ..`` are waypoints of long edges.
    """

    layer: list[int]  # layer of every node (waypoints included)
    x: np.ndarray  # horizontal centre of every node, in points
    rows: list[list[int]]  # nodes of each layer, left to right
    routes: list[list[int]]  # per DAG edge: lower, waypoints ..., upper


def longest_chain_layers(m: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """Layer of each node: the number of edges on the longest chain ending at it.

    >>> longest_chain_layers(4, [(0, 1), (1, 3), (0, 3), (2, 3)])
    [0, 1, 0, 2]
    """
    ups: list[list[int]] = [[] for _ in range(m)]
    indegree = [0] * m
    for a, b in edges:
        ups[a].append(b)
        indegree[b] += 1
    layer = [0] * m
    ready = [v for v in range(m) if indegree[v] == 0]
    while ready:
        v = ready.pop()
        for u in ups[v]:
            layer[u] = max(layer[u], layer[v] + 1)
            indegree[u] -= 1
            if indegree[u] == 0:
                ready.append(u)
    return layer


def count_crossings(rows: list[list[int]], up: list[list[int]]) -> int:
    """Edge crossings between adjacent layers, for the order ``rows``.

    >>> count_crossings([[0, 1], [2, 3]], [[3], [2], [], []])
    1
    """
    pos = {v: i for row in rows for i, v in enumerate(row)}
    total = 0
    for row in rows:
        pairs = np.array([(pos[v], pos[u]) for v in row for u in up[v]]).reshape(-1, 2)
        lo, hi = pairs[:, 0], pairs[:, 1]
        total += int(((lo[:, None] < lo[None, :]) & (hi[:, None] > hi[None, :])).sum())
    return total


def _barycentre_sweep(rows, layers, nbrs) -> None:
    """Sort each of ``layers`` by the mean position of its neighbours in ``nbrs``."""
    pos = {v: i for row in rows for i, v in enumerate(row)}
    for level in layers:
        keys = {}
        for i, v in enumerate(rows[level]):
            near = [pos[u] for u in nbrs[v]]
            keys[v] = (sum(near) / len(near) if near else i, i)
        rows[level].sort(key=keys.__getitem__)
        pos.update({v: i for i, v in enumerate(rows[level])})


def _transpose(rows, down, up) -> None:
    """Swap neighbours in a layer while that removes crossings (local search)."""
    pos = {v: i for row in rows for i, v in enumerate(row)}

    def cost(a, b):  # crossings between the edges of a and b with a left of b
        return sum(pos[x] > pos[y] for nbrs in (down, up) for x in nbrs[a] for y in nbrs[b])

    improved = True
    while improved:
        improved = False
        for row in rows:
            for i in range(len(row) - 1):
                a, b = row[i], row[i + 1]
                if cost(b, a) < cost(a, b):
                    row[i], row[i + 1] = b, a
                    pos[a], pos[b] = i + 1, i
                    improved = True


def _sweep_orders(rows, down, up, sweeps: int) -> tuple[list[list[int]], int]:
    """Barycentre sweeps up and down from ``rows``, each followed by adjacent swaps;
    returns the order with fewest crossings seen and its crossing count."""
    best = [list(r) for r in rows]
    best_cost = count_crossings(best, up)
    current = [list(r) for r in rows]
    for _ in range(sweeps):
        if best_cost == 0:
            break
        for layers, nbrs in ((range(1, len(rows)), down), (range(len(rows) - 2, -1, -1), up)):
            _barycentre_sweep(current, layers, nbrs)
            _transpose(current, down, up)
            cost = count_crossings(current, up)
            if cost < best_cost:
                best, best_cost = [list(r) for r in current], cost
    return best, best_cost


def spectral_keys(total: int, up: list[list[int]]) -> list[tuple[int, float]]:
    """A sort key per node: its connected component, then its entry in the component's
    Fiedler vector (the Laplacian eigenvector of the second smallest eigenvalue).

    Sorting each layer by these keys places nodes that are close in the graph close on
    the page, a good start for the sweeps (for Butterfly it finds the 2-crossing
    drawing that barycentre sweeps alone miss).
    """
    nbrs: list[list[int]] = [[] for _ in range(total)]
    for v in range(total):
        for u in up[v]:
            nbrs[v].append(u)
            nbrs[u].append(v)
    keys: list[tuple[int, float]] = [(0, 0.0)] * total
    seen = [False] * total
    component = 0
    for root in range(total):
        if seen[root]:
            continue
        members, stack, seen[root] = [], [root], True
        while stack:
            v = stack.pop()
            members.append(v)
            for u in nbrs[v]:
                if not seen[u]:
                    seen[u] = True
                    stack.append(u)
        members.sort()
        fiedler = np.zeros(len(members))
        if len(members) > 2:
            index = {v: i for i, v in enumerate(members)}
            lap = np.zeros((len(members), len(members)))
            for v in members:
                for u in nbrs[v]:
                    lap[index[v], index[u]] -= 1.0
                    lap[index[v], index[v]] += 1.0
            fiedler = np.round(np.linalg.eigh(lap)[1][:, 1], 9)
            if fiedler[0] > 0:  # fix the eigenvector's sign
                fiedler = -fiedler
        for i, v in enumerate(members):
            keys[v] = (component, float(fiedler[i]))
        component += 1
    return keys


def order_layers(rows, down, up, sweeps: int = 12, restarts: int = 4) -> list[list[int]]:
    """Order each layer to reduce crossings (the problem is NP-hard; this is a heuristic).

    Runs :func:`_sweep_orders` from the given order, from the spectral order
    (:func:`spectral_keys`, for graphs of up to 1500 nodes) and from ``restarts``
    shuffled ones (seeded, so the result is deterministic), and keeps the best.
    """
    total = sum(len(row) for row in rows)
    starts = [rows]
    if total <= 1500:
        keys = spectral_keys(total, up)
        starts.append([sorted(row, key=lambda v: (keys[v], v)) for row in rows])
    for seed in range(restarts):
        rng = random.Random(seed)
        starts.append([rng.sample(row, len(row)) for row in rows])
    best, best_cost = None, None
    for start in starts:
        order, cost = _sweep_orders(start, down, up, sweeps)
        if best_cost is None or cost < best_cost:
            best, best_cost = order, cost
        if best_cost == 0:
            break
    return best


def _isotonic_with_gaps(target: np.ndarray, gaps: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Closest ``x`` to ``target`` (weighted least squares) with ``x[i+1] - x[i] >= gaps[i]``.

    Shifts by the cumulative gaps and solves isotonic regression by pooling
    adjacent violators.
    """
    shift = np.concatenate([[0.0], np.cumsum(gaps)])
    y = target - shift
    blocks: list[list[float]] = []  # [mean, weight, count]
    for value, w in zip(y, weight):
        blocks.append([value, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, c2 = blocks.pop()
            m1, w1, c1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    fitted = np.concatenate([[m] * c for m, _, c in blocks])
    return fitted + shift


def layered_layout(widths: Sequence[float], edges: Sequence[tuple[int, int]],
                   gap: float = 12.0, relax: int = 20) -> Layout:
    """Lay out a DAG in layers (upstream at layer 0) with boxes ``widths`` points wide.

    Each node sits on the layer of :func:`longest_chain_layers`; an edge that skips
    layers gets a waypoint (a node of width 0) on each layer it crosses; the layers are
    ordered by :func:`order_layers`; then ``relax`` sweeps move every node towards the
    mean x of its neighbours, keeping the order and ``gap`` points between boxes.

    >>> lay = layered_layout([10, 10, 10, 10], [(0, 1), (1, 2), (3, 2)])
    >>> lay.layer, lay.routes  # the edge 3 -> 2 skips layer 1: waypoint 4
    ([0, 1, 2, 0, 1], [[0, 1], [1, 2], [3, 4, 2]])
    """
    m = len(widths)
    layer = longest_chain_layers(m, edges)
    widths = list(widths)
    span = sum(max(0, layer[b] - layer[a] - 1) for a, b in edges)
    routes = []
    for a, b in edges:
        route = [a]
        if span <= MAX_WAYPOINTS:
            for level in range(layer[a] + 1, layer[b]):
                layer.append(level)
                widths.append(0.0)
                route.append(len(layer) - 1)
        routes.append(route + [b])
    total = len(layer)
    down: list[list[int]] = [[] for _ in range(total)]
    up: list[list[int]] = [[] for _ in range(total)]
    for route in routes:
        for a, b in zip(route, route[1:]):
            if layer[b] == layer[a] + 1:
                up[a].append(b)
                down[b].append(a)
    rows: list[list[int]] = [[] for _ in range(max(layer) + 1 if layer else 0)]
    for v in range(total):  # DAG nodes in canonical order, then waypoints
        rows[layer[v]].append(v)
    rows = order_layers(rows, down, up, restarts=4 if total <= 400 else 0)

    w = np.asarray(widths, dtype=float)
    x = np.zeros(total)
    for row in rows:
        x[row] = np.cumsum(w[row] + gap) - (w[row] + gap) / 2
    weight = np.where(np.arange(total) >= m, 2.0, 1.0)  # keep long edges straight
    for it in range(relax):
        order = range(len(rows)) if it % 2 == 0 else range(len(rows) - 1, -1, -1)
        for level in order:
            row = rows[level]
            target = np.array([np.mean(x[down[v] + up[v]]) if down[v] + up[v] else x[v] for v in row])
            gaps = (w[row][:-1] + w[row][1:]) / 2 + np.where(
                (np.array(row[:-1]) >= m) & (np.array(row[1:]) >= m), gap / 2, gap)
            x[row] = _isotonic_with_gaps(target, gaps, weight[row])
    if total:
        x -= (x - w / 2).min()
    return Layout(layer=layer, x=x, rows=rows, routes=routes)

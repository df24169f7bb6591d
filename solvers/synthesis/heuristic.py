"""Mask synthesis, greedy: a realising mask for targets too big for the exact search, with a proved lower bound.

The mask (cost ``"pairs"``), polynomial and bounded by ``timeout``:

1. start from the necessary pairs (every realisation holds them);
2. greedy rounds: with ``R_i = (M or I)^i`` and ``U`` the pairs of ``T`` not yet reached
   within ``L`` hops, the gain of a new pair ``(a, b)`` is the number of pairs of ``U``
   it reaches: ``(q, k)`` with ``R_i[q, a]`` and ``R_j[b, k]`` for some ``i + j = L - 1``.
   The rectangles ``Q_i x K_{L-1-i}`` (``Q_i``, ``K_j`` growing with ``i``, ``j``) form a
   staircase, so the gains of every pair at once are
   ``sum_i R_i^T U R_{L-1-i}^T - sum_i R_i^T U R_{L-2-i}^T`` (each cell of the union lies in
   one more rectangle than corner): ``2 L`` matrix products. Each round adds the best pairs,
   at most one per row and one per column, whose gain is at least half the best;
3. reverse-delete: the added pairs, last first, are dropped while the mask still realises
   (``L = 2``: a count of the 2-hop walks per pair, updated in ``O(n)`` per pair; else
   the reach of the affected rows recomputed).

For ``L = 2`` the greedy adds whole stars instead of single pairs (:func:`_greedy_two`).
For ``L >= 3`` the 2-layer star mask (which realises within ``L`` too), pruned by the
reverse-delete at depth ``L``, competes with the rounds above (up to ``BATCH_MAX_N``);
the cheaper one is kept.

On a timeout the mask so far comes back if it realises, else ``T`` minus the diagonal
(always a realisation). Every mask returned is re-checked by ``realises``.

Cost ``"tiles"``: start from every tile of ``T``; drop whole tiles (far from the diagonal
first), keeping those of the necessary pairs, while the densest mask inside the kept
tiles still realises (a mask inside fewer tiles reaches less, so a failing drop fails
for every mask); then the pairs greedy above inside the kept tiles (it may empty one).

The lower bound: :func:`hasse.solvers.synthesis.bounds.pair_bound` (the LP relaxation
for ``L = 2``, classes and covers, necessary pairs: the largest, named in ``bound_how``);
cost ``"tiles"``: the tiles holding a necessary pair.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from hasse.solvers.synthesis.bounds import pair_bound
from hasse.solvers.synthesis.problem import Synthesis, SynthesisBug, check_request
from hasse.theory.synthesis import (BLOCK, necessary_pairs, pair_cost, realises, tile_cost,
                                    tile_counts, tiles_of)

MAX_N = 4096
BATCH_MAX_N = 256  # L >= 3: the batch rounds run up to this size (beyond: the pruned 2-layer mask only)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Boolean product by a float32 matrix product (exact: counts below 2^24)."""
    return (a.astype(np.float32) @ b.astype(np.float32)) > 0.5


def _powers(step: np.ndarray, upto: int) -> list[np.ndarray]:
    """``[I, step, step^2, ..., step^upto]`` as bool (``step`` holds the diagonal)."""
    out = [np.eye(step.shape[0], dtype=bool)]
    for _ in range(upto):
        out.append(step.copy() if len(out) == 1 else _product(step, out[-1]))
    return out


def _gains(powers: list[np.ndarray], uncovered: np.ndarray, layers: int) -> np.ndarray:
    """The pairs of ``uncovered`` each new pair ``(a, b)`` would reach (the staircase sum)."""
    m = layers - 1
    u = uncovered.astype(np.float32)
    left = [powers[i].T.astype(np.float32) @ u for i in range(m + 1)]
    total = np.zeros(u.shape, dtype=np.float32)
    for i in range(m + 1):
        total += left[i] @ powers[m - i].T.astype(np.float32)
    for i in range(m):
        total -= left[i] @ powers[m - 1 - i].T.astype(np.float32)
    return np.rint(total).astype(np.int64)


def _pick(gains: np.ndarray, free: np.ndarray) -> list[tuple[int, int]]:
    """The round's pairs: best first, at most one per row and column, gain >= half the best."""
    score = np.where(free, gains, 0)
    best = int(score.max()) if score.size else 0
    if best <= 0:
        return []
    qs, ks = np.nonzero(score >= max(1, (best + 1) // 2))
    vals = score[qs, ks]
    order = np.lexsort((ks, qs, -vals))
    rows, cols, out = set(), set(), []
    for i in order.tolist():
        q, k = int(qs[i]), int(ks[i])
        if q in rows or k in cols:
            continue
        rows.add(q)
        cols.add(k)
        out.append((q, k))
    return out


def _greedy_two(target: np.ndarray, allowed: np.ndarray, deadline: float) -> np.ndarray | None:
    """``L = 2``: the star greedy on the 2-hop walk counts, then reverse-delete; None on a timeout.

    A star of hub ``c``: the allowed pairs ``(q, c)`` and ``(c, k)``; it reaches every
    ``(q, k)`` of its up- and down-sets in two hops. The star with the most unreached pairs
    per missing pair comes next (lazily re-scored); the star of ``k`` holds ``(q, k)``, so
    the stars always finish.
    """
    n = target.shape[0]
    eye = np.eye(n, dtype=bool)
    off = target & ~eye
    fixed = necessary_pairs(target, 2)
    mask = fixed & allowed
    step = mask | eye
    walks = np.rint(step.astype(np.float32) @ step.astype(np.float32)).astype(np.int32)
    ups = [np.flatnonzero(allowed[:, c] | eye[c]) for c in range(n)]
    downs = [np.flatnonzero(allowed[c] | eye[c]) for c in range(n)]
    added: list[tuple[int, int]] = []

    def score(c: int, hole: np.ndarray) -> float:
        missing = int((~step[ups[c], c]).sum() + (~step[c, downs[c]]).sum())
        return int(hole[np.ix_(ups[c], downs[c])].sum()) / missing if missing else 0.0

    hole = off & (walks <= 0)
    heap = [(-score(c, hole), c) for c in range(n)]
    heapq.heapify(heap)
    while heap:
        if time.perf_counter() > deadline:
            return None
        _, c = heapq.heappop(heap)
        hole = off & (walks <= 0)
        value = score(c, hole)
        if value <= 0:
            continue
        if heap and value < -heap[0][0]:
            heapq.heappush(heap, (-value, c))
            continue
        for a, b in [(int(q), c) for q in ups[c]] + [(c, int(k)) for k in downs[c]]:
            if not step[a, b]:
                mask[a, b] = step[a, b] = True
                walks[a] += step[b]
                walks[:, b] += step[:, a]
                added.append((a, b))
    if (off & (walks <= 0)).any():
        raise SynthesisBug("the stars left a pair of the target unreached")
    _delete_two(mask, target, added[::-1], fixed, deadline)
    return mask


def _greedy(target: np.ndarray, layers: int, allowed: np.ndarray, deadline: float) -> np.ndarray | None:
    """Necessary pairs, then greedy rounds inside ``allowed``, then reverse-delete; None on a timeout."""
    if layers == 2:
        return _greedy_two(target, allowed, deadline)
    masks = []
    # a 2-layer realisation realises within L too: pruned at depth L (when the allowed pairs reach T in 2 layers)
    two = _greedy_two(target, allowed, deadline) if realises(allowed, target, 2) else None
    if two is not None:
        fixed = necessary_pairs(target, layers)
        _delete_deep(two, target, layers, [tuple(p) for p in np.argwhere(two & ~fixed)[::-1].tolist()], fixed,
                     deadline)
        masks.append(two)
    if target.shape[0] <= BATCH_MAX_N:
        batch = _greedy_rounds(target, layers, allowed, deadline)
        if batch is not None:
            masks.append(batch)
    return min(masks, key=lambda m: int(m.sum())) if masks else None


def _greedy_rounds(target: np.ndarray, layers: int, allowed: np.ndarray, deadline: float) -> np.ndarray | None:
    """Any ``L``: greedy rounds by the staircase gains, then reverse-delete; None on a timeout."""
    n = target.shape[0]
    eye = np.eye(n, dtype=bool)
    off = target & ~eye
    mask = necessary_pairs(target, layers) & allowed
    added: list[tuple[int, int]] = []
    while True:
        powers = _powers(mask | eye, layers)
        uncovered = off & ~powers[layers]
        if not uncovered.any():
            break
        if time.perf_counter() > deadline:
            return None
        picks = _pick(_gains(powers, uncovered, layers), allowed & ~mask)
        if not picks:  # no single pair helps (only inside a tile region): a whole walk for one missing pair
            q, k = (int(v) for v in np.argwhere(uncovered)[0])
            picks = [p for p in _walk(allowed, q, k, layers) if not mask[p]]
        for q, k in picks:
            mask[q, k] = True
        added += picks
    _delete_deep(mask, target, layers, added[::-1], necessary_pairs(target, layers), deadline)
    return mask


def _walk(allowed: np.ndarray, q: int, k: int, layers: int) -> list[tuple[int, int]]:
    """The pairs of a shortest walk of ``allowed`` from ``q`` to ``k`` (``allowed`` realises: one exists)."""
    n = allowed.shape[0]
    dist = np.full(n, -1)
    dist[q] = 0
    frontier = np.zeros(n, dtype=bool)
    frontier[q] = True
    for d in range(1, layers + 1):
        frontier = allowed[frontier].any(axis=0) & (dist < 0)
        dist[frontier] = d
        if dist[k] >= 0:
            break
    if dist[k] < 0:
        raise SynthesisBug(f"no walk of the allowed pairs from {q} to {k} within {layers} hops")
    out, y = [], k
    while y != q:
        x = int(np.flatnonzero(allowed[:, y] & (dist == dist[y] - 1))[0])
        out.append((x, y))
        y = x
    return out[::-1]


def _delete_two(mask: np.ndarray, target: np.ndarray, order, fixed: np.ndarray, deadline: float) -> None:
    """Reverse-delete for ``L = 2`` on the 2-hop walk counts ``W = (M or I)^2`` (in place)."""
    step = mask | np.eye(mask.shape[0], dtype=bool)
    walks = np.rint(step.astype(np.float32) @ step.astype(np.float32)).astype(np.int32)
    for a, b in order:
        if time.perf_counter() > deadline:
            return
        if fixed[a, b] or not mask[a, b]:
            continue
        row = walks[a] - step[b]
        col = walks[:, b] - step[:, a]
        row[b] -= 1  # (a, b) itself loses its walk through b (in row) and through a (in col)
        col[a] = row[b]
        if (target[a] & (row <= 0)).any() or (target[:, b] & (col <= 0)).any():
            continue
        walks[a] = row
        walks[:, b] = col
        mask[a, b] = step[a, b] = False


def _delete_deep(mask: np.ndarray, target: np.ndarray, layers: int, order, fixed: np.ndarray,
                 deadline: float) -> None:
    """Reverse-delete for any ``L``: the rows that reached ``a`` within ``L - 1`` hops recomputed (in place)."""
    n = mask.shape[0]
    eye = np.eye(n, dtype=bool)
    upto = _powers(mask | eye, layers - 1)[layers - 1]  # computed once: deletions only shrink it (a superset)
    for a, b in order:
        if time.perf_counter() > deadline:
            return
        if fixed[a, b] or not mask[a, b]:
            continue
        step = mask | eye
        rows = np.flatnonzero(upto[:, a])
        step[a, b] = False
        x = eye[rows]
        for _ in range(layers):
            x = _product(x, step)
        if np.array_equal(x, target[rows]):
            mask[a, b] = False


def _tile_region(target: np.ndarray, layers: int, block: int, deadline: float) -> np.ndarray:
    """The off-diagonal pairs of ``T`` inside the tiles kept by the reverse-delete over whole tiles."""
    n = target.shape[0]
    off = target & ~np.eye(n, dtype=bool)
    grid = tiles_of(n, block)
    t = -(-n // block)
    holds = np.bincount(grid[off], minlength=t * t)
    needed = set(np.unique(grid[necessary_pairs(target, layers)]).tolist())
    tiles = [i for i in range(t * t) if holds[i] and i not in needed]
    tiles.sort(key=lambda i: (-abs(i // t - i % t), holds[i], i))
    region = off.copy()
    for i in tiles:
        if time.perf_counter() > deadline:
            break
        trial = region & (grid != i)
        if realises(trial, target, layers):
            region = trial
    return region


def heuristic(target, layers: int, cost: str = "pairs", block: int = BLOCK, timeout: float | None = None, *,
              bound: bool = True) -> Synthesis:
    """A realising mask by the greedy (status ``"heuristic"``), re-checked, with a proved lower bound.

    ``bound=False``: the mask only (``lower_bound`` 0, no LP solved).

    >>> r = heuristic(np.tril(np.ones((6, 6), dtype=bool)), 2)
    >>> r.status, r.lower_bound <= r.cost, r.bound_how in ("LP relaxation (GLOP)", "necessary pairs")
    ('heuristic', True, True)
    """
    start = time.perf_counter()
    target, layers = check_request(target, layers, cost, block, timeout, MAX_N, "the heuristic")
    n = target.shape[0]
    layers = int(layers)
    depth = max(1, min(layers, n - 1))
    deadline = math.inf if timeout is None else start + timeout
    if cost == "pairs":
        allowed = (target & ~np.eye(n, dtype=bool))
    else:
        allowed = _tile_region(target, depth, block, deadline)
    mask = _greedy(target, depth, allowed, deadline) if depth > 1 else (target & ~np.eye(n, dtype=bool))
    if mask is None:
        mask = allowed if cost == "tiles" else (target & ~np.eye(n, dtype=bool))
    if not realises(mask, target, layers):
        raise SynthesisBug(f"the heuristic's mask does not realise the target (n = {n}, layers = {layers})")
    if not bound:  # the caller wants the mask only (CP-SAT's hint)
        value = pair_cost(mask) if cost == "pairs" else int(np.count_nonzero(tile_counts(mask, block)))
        lower, how = 0, "none asked"
    elif cost == "pairs":
        value = pair_cost(mask)
        lower, how = pair_bound(target, depth, deadline)
    else:
        value = int(np.count_nonzero(tile_counts(mask, block)))
        lower = int(np.count_nonzero(tile_counts(necessary_pairs(target, depth), block)))
        how = "tiles of the necessary pairs"
    if lower > value:
        raise SynthesisBug(f"the lower bound {lower} ({how}) exceeds a realisation's cost {value}")
    return Synthesis(mask=mask, cost=value, lower_bound=lower, status="heuristic",
                     seconds=time.perf_counter() - start, layers=layers, kind=cost, block=int(block),
                     pairs=pair_cost(mask), tiles=tile_cost(mask, block), engine="greedy", bound_how=how)

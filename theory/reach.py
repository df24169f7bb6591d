"""Per-layer dependency, depth-L reachability, hop distances and power periods.

Definitions (design.md §2). One layer with the residual connection makes output
``q`` depend on input ``k`` iff ``A[q, k]`` with ``A = I or M`` (several heads:
``A = I or M_1 or ... or M_h``). Depth ``L``: ``R(L) = A_L ... A_1`` in Boolean
arithmetic, ``R(0) = I``. Without the residual (the negative control) ``A = M``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hasse.theory.bitset import neighbour_lists, pack_rows, transpose, unpack_rows
from hasse.theory.errors import InputError
from hasse.theory.limits import number_text
from hasse.theory.mask import as_mask


def dependency(*masks: np.ndarray, residual: bool = True) -> np.ndarray:
    """One layer's dependency matrix ``A = I or M_1 or ... or M_h`` (``I`` only with the residual).

    >>> dependency(np.array([[0, 1], [0, 0]], dtype=bool)).astype(int).tolist()
    [[1, 1], [0, 1]]
    >>> dependency([[0, 1], [0, 0]], [[0, 0], [1, 0]], residual=False).astype(int).tolist()
    [[0, 1], [1, 0]]
    """
    if not masks:
        raise InputError("dependency() needs at least one mask (one per head)")
    heads = [as_mask(m) for m in masks]
    n = heads[0].shape[0]
    if any(h.shape != (n, n) for h in heads):
        raise InputError("all heads of a layer must have the same size")
    out = np.logical_or.reduce(heads) if len(heads) > 1 else heads[0].copy()
    if residual:
        np.fill_diagonal(out, True)
    return out


def _step(rows: list[int], lists: list[np.ndarray], keep_self: bool) -> list[int]:
    """One Boolean product ``A @ R`` on bitset rows; ``lists[q]`` are the off-diagonal keys of q."""
    out = []
    for q, ks in enumerate(lists):
        acc = rows[q] if keep_self else 0
        for k in ks.tolist():
            acc |= rows[k]
        out.append(acc)
    return out


def reach(layers: np.ndarray | Sequence[np.ndarray], depth: int, *, residual: bool = True) -> np.ndarray:
    """``R(L)``: ``R[q, k]`` iff output ``q`` of an ``L``-layer stack depends on input ``k``.

    ``layers`` is one mask used at every layer, or a list of ``L`` masks (first
    layer first; then ``depth`` must equal its length).

    >>> causal = np.tril(np.ones((3, 3), dtype=bool))
    >>> reach(causal, 0).astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    >>> swap = np.array([[0, 1], [1, 0]], dtype=bool)
    >>> reach(swap, 3, residual=False).astype(int).tolist()
    [[0, 1], [1, 0]]

    A depth beyond what changes anything is computed, not looped: with one mask and the
    residual, ``R(L) = R(n - 1)`` for ``L >= n - 1``; without the residual, a deep
    ``A^L`` is found by repeated squaring (``log2 L`` products), so ``depth = 10**12``
    costs about 80 products.

    >>> reach(swap, 10**12 + 1, residual=False).astype(int).tolist()
    [[0, 1], [1, 0]]

    Notes: bitset rows; each layer costs one OR per attention edge.
    """
    if depth < 0:
        raise InputError(f"depth must be >= 0, got {depth}")
    if np.ndim(layers) == 2:
        single = as_mask(layers)
        n = single.shape[0]
        if residual:
            depth = min(depth, max(n - 1, 0))  # the powers of A = I or M are constant from n - 1 on
        elif depth > 2 * n + 2:
            return unpack_rows(_deep_power(single, depth), n)
        masks = [single] * depth
    else:
        masks = [as_mask(m) for m in layers]
        if len(masks) != depth or not masks:
            raise InputError(f"got {len(masks)} layer masks for depth {depth}")
        n = masks[0].shape[0]
        if any(m.shape != (n, n) for m in masks):
            raise InputError("all layer masks must have the same size")
    rows = [1 << q for q in range(n)]
    cache: dict[int, tuple[list[np.ndarray], list[int]]] = {}
    for m in masks:
        if id(m) not in cache:
            diag = [q for q in range(n) if m[q, q]]
            cache[id(m)] = (neighbour_lists(m), diag)
        lists, diag = cache[id(m)]
        new = _step(rows, lists, keep_self=residual)
        if not residual:
            for q in diag:
                new[q] |= rows[q]
        rows = new
    return unpack_rows(rows, n)


def _deep_power(mask: np.ndarray, depth: int) -> list[int]:
    """Bitset rows of ``M^depth`` (no residual) by repeated squaring: ``(X Y)[q] = OR_{j in X[q]} Y[j]``."""
    n = mask.shape[0]

    def product(x: list[int], y: list[int]) -> list[int]:
        out = []
        for row in x:
            acc = 0
            while row:  # one step per set bit (a sparse row costs its ones, not n shifts)
                low = row & -row
                acc |= y[low.bit_length() - 1]
                row ^= low
            out.append(acc)
        return out

    result = [1 << q for q in range(n)]
    base = pack_rows(mask)
    while depth:
        if depth & 1:
            result = product(base, result)
        depth >>= 1
        if depth:
            base = product(base, base)
    return result


@dataclass(frozen=True)
class Levels:
    """Result of level-synchronous propagation under the residual (``A = I or M``)."""

    depth: int  # L* = min{L : R(L) = R(L+1)}
    closure: list[int]  # bitset rows of R* = R(L*)


def propagate(mask: np.ndarray, *, max_depth: int | None = None, distances: np.ndarray | None = None) -> Levels:
    """Grow ``R(L)`` level by level until it stops changing (or ``max_depth``).

    Uses frontiers: ``R(L+1)[q] = R(L)[q] or OR_{k attended by q} (R(L)[k] - R(L-1)[k])``,
    so each level only pushes what is new. When ``distances`` (an ``(n, n)`` int
    array filled with -1) is given, the level at which each pair appears is written
    into it: that is the hop distance.
    """
    mask = as_mask(mask)
    n = mask.shape[0]
    succ = neighbour_lists(transpose(mask))  # succ[k]: queries attending k
    rows = [1 << q for q in range(n)]
    frontier = dict(enumerate(rows))
    if distances is not None:
        np.fill_diagonal(distances, 0)
    level = 0
    while frontier and (max_depth is None or level < max_depth):
        incoming: dict[int, int] = {}
        for k, f in frontier.items():
            for q in succ[k].tolist():
                incoming[q] = incoming.get(q, 0) | f
        frontier = {}
        for q, f in incoming.items():
            f &= ~rows[q]
            if f:
                rows[q] |= f
                frontier[q] = f
        if frontier:
            level += 1
            if distances is not None:
                for q, f in frontier.items():
                    distances[q, unpack_rows([f], n)[0]] = level
    return Levels(level, rows)


def hop_distances(mask: np.ndarray) -> np.ndarray:
    """``D[q, k] = dist(k, q)``: fewest attention edges on a path ``k -> q``; -1 if none.

    ``dist(q, q) = 0``; the diagonal of the mask plays no role.

    >>> hop_distances(np.tril(np.ones((3, 3), dtype=bool)) ^ np.tri(3, k=-2, dtype=bool)).tolist()
    [[0, -1, -1], [1, 0, -1], [2, 1, 0]]
    """
    mask = as_mask(mask)
    n = mask.shape[0]
    dist = np.full((n, n), -1, dtype=np.int32)
    propagate(mask, distances=dist)
    return dist


@dataclass(frozen=True)
class PowerCycle:
    """The eventually periodic sequence ``A^L`` (``L = 0, 1, ...``): ``A^(preperiod+period) = A^preperiod``."""

    preperiod: int
    period: int

    @property
    def settles(self) -> bool:
        """True iff the powers reach a limit (period 1); the limit is then ``A^preperiod``."""
        return self.period == 1


POWER_WORK = 50_000_000  # row ORs the pre-period search may spend (steps x (n + edges))


def power_cycle(matrix: np.ndarray, *, max_steps: int = 1_000_000) -> PowerCycle:
    """Pre-period and period of the Boolean powers ``I, A, A^2, ...`` of ``matrix`` (taken as is).

    With the residual (``A = I or M``) the period is always 1; without it
    (``A = M``) it can be larger: the 2x2 swap has period 2.

    >>> power_cycle(np.array([[0, 1], [1, 0]], dtype=bool))
    PowerCycle(preperiod=0, period=2)
    >>> power_cycle(np.array([[0, 0], [1, 0]], dtype=bool))
    PowerCycle(preperiod=2, period=1)

    The period comes from the structure, exactly and at once: it is the least common
    multiple of the periods of the strongly connected components that hold an edge (the
    period of a component is the gcd of its cycle lengths: of ``level(u) + 1 - level(v)``
    over its edges, with breadth-first levels), so cycles of distinct prime lengths
    2, 3, 5, … 113 give a period of 45 digits without stepping through it. The pre-period
    is the first ``t`` with ``A^t = A^(t + period)``: ``period + 2 * preperiod`` products on
    bitset rows. When no edge joins two components (a permutation, disjoint cycles) the
    powers are those of each block, so each block is stepped with its own period and the
    pre-period is the largest block's. ``InputError`` (one line, the period named) when
    the products needed exceed ``max_steps`` or :data:`POWER_WORK` row operations.

    >>> cycles = np.zeros((5, 5), dtype=bool)
    >>> cycles[[0, 1, 2, 3, 4], [1, 0, 3, 4, 2]] = True  # a 2-cycle and a 3-cycle
    >>> power_cycle(cycles)
    PowerCycle(preperiod=0, period=6)
    """
    a = as_mask(matrix)
    n = a.shape[0]
    lists = [np.flatnonzero(a[q]).tolist() for q in range(n)]
    comp = _strong_components(lists)
    periods = _component_periods(lists, comp)
    period = math.lcm(*periods.values()) if periods else 1
    edges = sum(len(ks) for ks in lists)
    steps = min(max_steps, max(1, POWER_WORK // (n + edges)))
    if any(comp[q] != comp[k] for q, ks in enumerate(lists) for k in ks):
        return PowerCycle(_preperiod(lists, period, steps, period), period)
    preperiod = 0  # block diagonal: A^t is the blocks' powers side by side
    members: dict[int, list[int]] = {}
    for q, c in enumerate(comp):
        members.setdefault(c, []).append(q)
    for c, nodes in members.items():
        local = {q: i for i, q in enumerate(nodes)}
        block = [[local[k] for k in lists[q]] for q in nodes]
        preperiod = max(preperiod, _preperiod(block, periods.get(c, 1), steps, period))
    return PowerCycle(preperiod, period)


def _preperiod(lists: list[list[int]], period: int, steps: int, whole: int) -> int:
    """The first ``t`` with ``A^t = A^(t + period)`` (``lists[q]``: the keys of q), in at most ``steps`` products."""
    if period > steps:
        raise InputError(f"the powers repeat with period {number_text(whole)} (the lcm of the periods of the "
                         f"mask's strongly connected components); finding the pre-period would take more than "
                         f"{steps:,} products")
    rows = [1 << q for q in range(len(lists))]
    used = 0

    def advance(r: list[int]) -> list[int]:
        nonlocal used
        used += 1
        if used > steps:
            raise InputError(f"the powers repeat with period {number_text(whole)}, but no pre-period shows within "
                             f"{steps:,} products")
        out = []
        for ks in lists:
            acc = 0
            for k in ks:
                acc |= r[k]
            out.append(acc)
        return out

    tortoise, hare = rows, rows
    for _ in range(period):
        hare = advance(hare)
    preperiod = 0
    while tortoise != hare:
        tortoise, hare = advance(tortoise), advance(hare)
        preperiod += 1
    return preperiod


def _strong_components(lists: list[list[int]]) -> list[int]:
    """The strongly connected component of each node of the digraph ``q -> lists[q]`` (Tarjan, no recursion)."""
    n = len(lists)
    index, low, comp = [-1] * n, [0] * n, [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = found = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            if i < len(lists[v]):
                work[-1] = (v, i + 1)
                w = lists[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = found
                    if w == v:
                        break
                found += 1
    return comp


def _component_periods(lists: list[list[int]], comp: list[int]) -> dict[int, int]:
    """``{component: period}`` for each component holding an edge: gcd of ``level(u) + 1 - level(v)``."""
    n = len(lists)
    level = [-1] * n
    for root in range(n):
        if level[root] >= 0:
            continue
        level[root] = 0
        frontier = [root]
        while frontier:
            nxt = []
            for u in frontier:
                for v in lists[u]:
                    if comp[v] == comp[u] and level[v] < 0:
                        level[v] = level[u] + 1
                        nxt.append(v)
            frontier = nxt
    periods: dict[int, int] = {}
    for u in range(n):
        for v in lists[u]:
            if comp[v] == comp[u]:
                periods[comp[u]] = math.gcd(periods.get(comp[u], 0), level[u] + 1 - level[v])
    return periods

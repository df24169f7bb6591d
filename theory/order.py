"""From a mask to its limit order: classes, closure, Hasse diagram, depth.

The limit ``R*`` of the residual stack is the reflexive–transitive closure of
the mask. Its classes (mutual reachability = strongly connected components) are
partially ordered, and the Hasse diagram is the covering relation of that order.

The engine (:func:`mask_to_order`) works on bitset rows (:mod:`theory.bitset`):

1. classes by Kosaraju's two depth-first searches, each step "the first
   unvisited neighbour" found with one AND on a bitset — O(n) bitset
   operations, never a loop over edges;
2. the closure per class in a topological order, greedily: take the
   highest-ordered attended position not yet covered, OR in its closure, repeat.
   The positions taken are exactly the covering classes (the Hasse edges), so
   closure and transitive reduction come out of one pass of
   O((n + |Hasse edges|) · n / 64) word operations;
3. the convergence depth ``L*`` = the largest finite hop distance, computed when
   first asked for (the leak checks never ask): 0 or 1 for a dense mask (no
   all-pairs work); for an acyclic mask a dynamic programme on distance rows in
   topological order (O(m · n) on small integers, rows freed as soon as their last
   reader is done); otherwise level-synchronous frontier propagation
   (:func:`theory.reach.propagate`).

Memory stays a small multiple of ``n²`` bits.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from hasse.theory.bitset import neighbour_lists, pack_rows, transpose, unpack_rows
from hasse.theory.mask import as_mask
from hasse.theory.reach import propagate


@dataclass(frozen=True)
class LimitOrder:
    """The limit order of a mask under the residual stack.

    ``classes`` are in canonical order (a topological order of the quotient in
    which, among the classes available next, the one with the smallest member
    comes first; members ascend). ``hasse_edges`` are ``(lower, upper)`` class
    indices, sorted. ``closure_rows[c]`` is the bitset of positions upstream of
    class ``c``, in the engine's internal numbering ``perm`` (use :meth:`closure`).
    """

    n: int
    classes: tuple[tuple[int, ...], ...]
    class_of: np.ndarray  # (n,) canonical class index of each position
    hasse_edges: tuple[tuple[int, int], ...]
    closure_rows: tuple[int, ...]  # per class: bit i set iff position perm[i] is upstream of the class
    perm: np.ndarray | None  # bit numbering of closure_rows: bit i is position perm[i] (None: identity)
    dense: bool
    height: int
    depth_from: int | tuple[int, ...] = field(default=0, repr=False, compare=False)  # L*, or the rows it comes from

    @cached_property
    def convergence_depth(self) -> int:
        """``L*``, the largest finite hop distance. Computed on first use from a packed copy of the mask
        (``depth_from``): the leak checks need the closure, not ``L*`` (O(edges · n) on a sparse acyclic mask)."""
        if isinstance(self.depth_from, int):
            return self.depth_from
        mask = unpack_rows(list(self.depth_from), self.n)
        if len(self.classes) == self.n:
            return _acyclic_depth(mask if self.perm is None else mask.take(self.perm, axis=0).take(self.perm, axis=1))
        return propagate(mask).depth

    @cached_property
    def internal_index(self) -> list[int]:
        """``internal_index[p]``: the bit of position ``p`` in ``closure_rows``."""
        if self.perm is None:
            return list(range(self.n))
        inverse = np.empty(self.n, dtype=np.int64)
        inverse[self.perm] = np.arange(self.n)
        return inverse.tolist()

    def bit_of(self, positions) -> int:
        """The bitset, in the numbering of ``closure_rows``, of the given positions."""
        index = self.internal_index
        out = 0
        for p in positions:
            out |= 1 << index[p]
        return out

    def upstream_bits(self, position: int) -> int:
        """Bitset (numbering of ``closure_rows``) of the positions ``position`` depends on in the limit."""
        return self.closure_rows[int(self.class_of[position])]

    def closure(self) -> np.ndarray:
        """``R*`` as an ``(n, n)`` bool array: ``R*[q, k]`` iff ``k`` is upstream of ``q``."""
        rows = unpack_rows([self.closure_rows[c] for c in self.class_of.tolist()], self.n)
        if self.perm is None:
            return rows
        out = np.empty_like(rows)
        out[:, self.perm] = rows
        return out


def strongly_connected(pred: list[int], succ: list[int]) -> list[list[int]]:
    """Classes of mutual reachability, upstream first (a topological order of the quotient).

    ``pred[q]`` / ``succ[k]`` are bitsets: the keys ``q`` attends / the queries
    attending ``k``. Kosaraju: finish order of a search along information flow,
    then searches against the flow in decreasing finish order; each one is a class.

    >>> strongly_connected([0b010, 0b001, 0b011], [0b110, 0b101, 0b000])
    [[0, 1], [2]]
    """
    n = len(pred)
    finish: list[int] = []
    unvisited = (1 << n) - 1
    while unvisited:
        done, unvisited = _depth_first((unvisited & -unvisited).bit_length() - 1, succ, unvisited)
        finish += done
    classes: list[list[int]] = []
    unvisited = (1 << n) - 1
    for root in reversed(finish):
        if (unvisited >> root) & 1:
            members, unvisited = _depth_first(root, pred, unvisited)
            classes.append(sorted(members))
    return classes


def _depth_first(root: int, edges: list[int], unvisited: int) -> tuple[list[int], int]:
    """A depth-first search from ``root`` along the bitsets ``edges`` through ``unvisited`` (a bitset).

    Returns the nodes it reached, ``root`` included, in the order they finished, and
    the nodes still unvisited.
    """
    unvisited &= ~(1 << root)
    stack, finished = [root], []
    while stack:
        nxt = edges[stack[-1]] & unvisited
        if nxt:
            u = (nxt & -nxt).bit_length() - 1
            unvisited ^= 1 << u
            stack.append(u)
        else:
            finished.append(stack.pop())
    return finished, unvisited


def canonical_order(classes: list[list[int]], lower: list[list[int]]) -> list[int]:
    """Canonical order of classes: Kahn's algorithm, smallest member first among those ready.

    ``lower[c]`` lists the classes covered by ``c`` (any generating set of the
    order works). Returns the class indices in canonical order.

    >>> canonical_order([[2], [0], [1]], [[], [], [0]])
    [1, 0, 2]
    """
    upper: list[list[int]] = [[] for _ in classes]
    waiting = [len(set(ls)) for ls in lower]
    for c, ls in enumerate(lower):
        for b in set(ls):
            upper[b].append(c)
    ready = [(classes[c][0], c) for c in range(len(classes)) if waiting[c] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, c = heapq.heappop(ready)
        order.append(c)
        for d in upper[c]:
            waiting[d] -= 1
            if waiting[d] == 0:
                heapq.heappush(ready, (classes[d][0], d))
    return order


def _acyclic_depth(mask_topo: np.ndarray) -> int:
    """Largest finite hop distance of an acyclic mask whose index order is topological.

    ``D[v] = min over attended u of D[u] + 1`` (entrywise), ``D[v, v] = 0``; row
    ``u`` is dropped once every position attending it has been processed.
    """
    n = mask_topo.shape[0]
    inf = n
    dtype = np.int16 if 2 * n + 2 < np.iinfo(np.int16).max else np.int32
    preds = neighbour_lists(mask_topo)
    readers = np.zeros(n, dtype=np.int64)
    for ps in preds:
        readers[ps] += 1
    readers = readers.tolist()
    plus_one: dict[int, np.ndarray] = {}  # D[u] + 1 for rows still needed
    depth = 0
    for v in range(n):
        row = np.full(v + 1, inf, dtype=dtype)
        for u in preds[v].tolist():
            head = row[: u + 1]
            np.minimum(head, plus_one[u], out=head)
            readers[u] -= 1
            if readers[u] == 0:
                del plus_one[u]
        row[v] = 0
        finite = row[row < inf]
        depth = max(depth, int(finite.max()))
        if readers[v]:
            np.minimum(row, inf - 1, out=row)
            row += 1
            plus_one[v] = row
    return depth


def mask_to_order(mask: np.ndarray) -> LimitOrder:
    """Classes, closure, Hasse diagram, density and convergence depth of a mask.

    >>> order = mask_to_order(np.array([[1, 1, 0], [1, 1, 0], [1, 0, 1]], dtype=bool))
    >>> order.classes, order.hasse_edges, order.convergence_depth, order.dense
    (((0, 1), (2,)), ((0, 1),), 2, False)
    """
    mask = as_mask(mask)
    n = mask.shape[0]
    pred = pack_rows(mask)
    if all(row >> (q + 1) == 0 for q, row in enumerate(pred)):
        # Lower-triangular (causal-like): every class is one position, index order is topological.
        topo_classes = [[v] for v in range(n)]
    else:
        topo_classes = strongly_connected(pred, pack_rows(transpose(mask)))

    # Renumber positions so every class is a contiguous block, blocks in topological order.
    perm = np.fromiter((v for c in topo_classes for v in c), dtype=np.int64, count=n)
    identity = bool((perm == np.arange(n)).all())
    sizes = [len(c) for c in topo_classes]
    starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    class_at = np.repeat(np.arange(len(sizes)), sizes).tolist()  # topo class of new index
    mask_topo = mask if identity else mask.take(perm, axis=0).take(perm, axis=1)  # 2x faster than np.ix_
    pred_topo = pred if identity else pack_rows(mask_topo)

    closure: list[int] = []
    lower: list[list[int]] = []
    dense = True
    for c, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        acc = ((1 << (b - a)) - 1) << a
        attended = 0
        for v in range(a, b):
            attended |= pred_topo[v]
        covers = []
        rest = attended & ~acc
        while rest:
            u = rest.bit_length() - 1
            cu = class_at[u]
            covers.append(cu)
            acc |= closure[cu]
            rest &= ~acc
        closure.append(acc)
        lower.append(covers)
        if dense:
            dense = all(pred_topo[v] | (1 << v) == acc for v in range(a, b))

    # Canonical order and relabelling back to the original positions.
    order = canonical_order(topo_classes, lower)
    rank = {c: i for i, c in enumerate(order)}
    classes = tuple(tuple(topo_classes[c]) for c in order)
    class_of = np.empty(n, dtype=np.int64)
    for i, members in enumerate(classes):
        class_of[list(members)] = i
    edges = tuple(sorted((rank[b], rank[c]) for c in range(len(order)) for b in lower[c]))
    closure_rows = tuple(closure[c] for c in order)

    levels = [1] * len(order)
    for c in range(len(topo_classes)):  # topological order
        if lower[c]:
            levels[c] = 1 + max(levels[b] for b in lower[c])
    height = max(levels)

    if dense:
        depth = 1 if np.count_nonzero(mask) > np.count_nonzero(np.diagonal(mask)) else 0
    else:
        depth = tuple(pred)  # the rows L* is computed from when first asked for (LimitOrder.convergence_depth)
    return LimitOrder(n, classes, class_of, edges, closure_rows, None if identity else perm, dense, height, depth)

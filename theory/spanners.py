"""Sparse masks that realise chains, block-causal chains, unions and products within L layers.

Definitions (the contract shared with the exact synthesis). A *target* ``T`` is a
preorder on ``n`` positions: an ``(n, n)`` bool matrix, reflexive and transitive. A
mask ``M`` *realises* ``T`` within ``L`` layers when ``(M or I)^L == T`` (Boolean
power, ``theory.reach.reach(M, L)``): every pair of ``T`` is reached within ``L``
hops and nothing outside ``T`` is ever reached (``M`` inside ``T``, so every deeper
power is ``T`` too). Cost ``pairs``: the True entries of ``M``, diagonal included;
a construction here never sets a diagonal entry (``I`` is added), so its cost is
its off-diagonal pairs.

Every construction comes with a *witness*: for each pair ``(q, k)`` of ``T`` the
intermediate positions of its hops (at most ``L - 1``), each hop an edge of
``M or I``, so a checker can verify "every pair reached" pair by pair.

Chains (``T[q, k] = k <= q``), sizes ``f_L(s)`` (Alon and Schieber 1987 give
``Theta(n log n)`` pairs for 2 hops, ``Theta(n log log n)`` for 3 hops, and
``Theta(n log* n)`` for 4 and 5 hops; constants are not claimed here):

- ``L = 1``: the dense lower triangle, ``f_1(s) = s(s-1)/2``;
- ``L = 2``: the centre point ``m = s // 2``: ``m`` attends every earlier position,
  every later position attends ``m``, then both halves recursively:
  ``f_2(s) = s - 1 + f_2(s // 2) + f_2(s - s // 2 - 1)``, ``f_2(0) = f_2(1) = 0``;
- ``L >= 3``: blocks of size ``b`` with representative ``R_j`` (the block's last
  position); ``R_j`` attends its block, every other position of block ``j`` attends
  ``R_{j-1}``, the representatives form a chain realised within ``L - 2`` hops, and
  each block less its representative is realised recursively: ``k -> R(bk) ~> R(bq - 1)
  -> q``. With ``nb = ceil(s / b)`` and ``last = s - (nb - 1) b``: ``blocks(s, b) =
  (s - nb) + (s - b - nb + 1) + f_{L-2}(nb) + (nb - 1) f_L(b - 1) + f_L(last - 1)``
  and ``f_L(s) = min(f_{L-1}(s), s - 1 if s - 1 <= L, min over 2 <= b <= 2 isqrt(s) + 1
  of blocks(s, b))``. ``b ~ sqrt(s)`` for ``L = 3`` gives ``O(s log log s)``, ``b ~ log s``
  for ``L = 4`` gives ``O(s log* s)``; the minimum is computed, not assumed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from hasse.theory.errors import InputError


@dataclass(frozen=True)
class Construction:
    """A mask ``mask`` (no diagonal) realising ``target`` within ``depth`` layers, with its witness.

    ``witness(q, k)`` is the list of intermediate positions of a walk from ``k`` to ``q``
    of at most ``depth`` hops (``[]`` for a direct edge or ``q == k``).
    """

    mask: np.ndarray
    target: np.ndarray
    depth: int
    witness: Callable[[int, int], list[int]]

    n = property(lambda self: int(self.mask.shape[0]))
    pairs = property(lambda self: int(self.mask.sum()), doc="The cost ``pairs``: True entries, diagonal included.")


def _check(n: int, depth: int) -> tuple[int, int]:
    for value, what in ((n, "n"), (depth, "layers")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{what} must be a positive integer, got {value!r}", what)
    return int(n), int(depth)


@lru_cache(maxsize=None)
def _plan(depth: int, s: int) -> tuple[int, str, int]:
    """``(f_depth(s), kind, b)``: the cost of the chain of size ``s`` and how it is built."""
    if s <= 1:
        return 0, "empty", 0
    if s - 1 <= depth:
        return s - 1, "path", 0
    if depth == 1:
        return s * (s - 1) // 2, "dense", 0
    if depth == 2:
        m = s // 2
        return s - 1 + _plan(2, m)[0] + _plan(2, s - m - 1)[0], "centre", 0
    best = (_plan(depth - 1, s)[0], "lower", 0)
    for b in range(2, min(s - 1, 2 * math.isqrt(s) + 1) + 1):
        nb = -(-s // b)
        last = s - (nb - 1) * b
        cost = (s - nb) + (s - b - nb + 1) + _plan(depth - 2, nb)[0]
        cost += (nb - 1) * _plan(depth, b - 1)[0] + _plan(depth, last - 1)[0]
        if cost < best[0]:
            best = (cost, "blocks", b)
    return best


def chain_pairs(n: int, depth: int) -> int:
    """``f_L(n)``: the pairs of :func:`chain` (the recurrence of the module docstring).

    >>> [chain_pairs(n, 2) for n in range(1, 9)]
    [0, 1, 2, 4, 6, 8, 10, 13]
    >>> chain_pairs(8, 1), chain_pairs(8, 7)
    (28, 7)
    """
    n, depth = _check(n, depth)
    return _plan(depth, n)[0]


def _reps(s: int, b: int) -> np.ndarray:
    """The representative (last position) of each block of size ``b`` of ``0 … s-1``."""
    return np.minimum(np.arange(1, -(-s // b) + 1) * b, s) - 1


@lru_cache(maxsize=None)
def _chain_edges(depth: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges ``(q, k)`` of the chain of size ``s`` (``q`` attends ``k``, ``k < q``), read-only."""
    _, kind, b = _plan(depth, s)
    if kind == "lower":
        return _chain_edges(depth - 1, s)
    parts: list = [(np.zeros(0, np.int64), np.zeros(0, np.int64))]
    if kind == "path":
        parts.append((np.arange(1, s), np.arange(s - 1)))
    elif kind == "dense":
        parts.append(np.tril_indices(s, -1))
    elif kind == "centre":  # m attends the first half, the second half attends m
        m = s // 2
        q, k = _chain_edges(depth, s - m - 1)
        parts += [(np.full(m, m), np.arange(m)), (np.arange(m + 1, s), np.full(s - m - 1, m))]
        parts += [_chain_edges(depth, m), (q + m + 1, k + m + 1)]
    elif kind == "blocks":  # R_j attends its block, the rest of block j attends R_{j-1}
        reps, block, pos = _reps(s, b), np.arange(s) // b, np.arange(s)
        inner = pos != reps[block]
        later = inner & (block >= 1)
        q, k = _chain_edges(depth - 2, len(reps))
        parts += [(reps[block[inner]], pos[inner]), (pos[later], reps[block[later] - 1]), (reps[q], reps[k])]
        for start in range(0, s, b):  # each block less R_j, recursively
            q, k = _chain_edges(depth, min(b, s - start) - 1)
            parts.append((q + start, k + start))
    out = tuple(np.concatenate(x).astype(np.int64) for x in zip(*parts))
    for x in out:
        x.flags.writeable = False  # cached: shared by every caller
    return out


def _walk(nodes: list[int]) -> list[int]:
    """The intermediates of a walk given by its nodes, repeated consecutive nodes dropped."""
    out: list[int] = []
    for x in nodes:
        if not out or out[-1] != x:
            out.append(x)
    return out[1:-1]


def _chain_witness(depth: int, s: int, q: int, k: int) -> list[int]:
    """The intermediates of the walk ``k -> … -> q`` in the chain of size ``s`` (``k <= q``)."""
    offset = 0
    while True:
        if q - k <= 1:
            return []
        _, kind, b = _plan(depth, s)
        if kind == "path":
            return [offset + x for x in range(k + 1, q)]
        if kind == "dense":
            return []
        if kind == "lower":
            depth -= 1
            continue
        if kind == "centre":
            m = s // 2
            if q < m:
                s = m
            elif k > m:
                s, q, k, offset = s - m - 1, q - m - 1, k - m - 1, offset + m + 1
            else:
                return [] if m in (q, k) else [offset + m]
            continue
        bk, bq = k // b, q // b
        if bk == bq:  # inside a block: R_j attends it directly, the rest recursively
            start = bk * b
            if q == min(start + b, s) - 1:
                return []
            s, q, k, offset = min(b, s - start) - 1, q - start, k - start, offset + start
            continue
        reps = _reps(s, b)
        middle = _chain_witness(depth - 2, len(reps), bq - 1, bk)
        nodes = [k, int(reps[bk])] + [int(reps[w]) for w in middle] + [int(reps[bq - 1]), q]
        return [offset + x for x in _walk(nodes)]


def chain_target(n: int) -> np.ndarray:
    """The causal order on ``n`` positions: ``T[q, k] = k <= q``."""
    return np.tril(np.ones((n, n), dtype=bool))


def chain(n: int, depth: int) -> Construction:
    """A mask realising the causal chain on ``n`` positions within ``depth`` layers.

    >>> c = chain(4, 2)
    >>> c.mask.astype(int).tolist(), c.pairs, c.witness(3, 0)
    ([[0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0]], 4, [2])
    """
    n, depth = _check(n, depth)
    mask = np.zeros((n, n), dtype=bool)
    q, k = _chain_edges(depth, n)
    mask[q, k] = True

    def witness(qq: int, kk: int) -> list[int]:
        return _chain_witness(depth, n, qq, kk)

    return Construction(mask, chain_target(n), depth, witness)


def _block_sizes(n: int, block: int) -> list[int]:
    return [min(block, n - start) for start in range(0, n, block)]


def _centre_pairs(sizes: Sequence[int]) -> int:
    """Pairs of the 2-hop block-centre construction over blocks of these sizes."""
    if not sizes:
        return 0
    m = len(sizes) // 2
    here = sum(sizes) - 1 + sizes[m] - 1
    return here + _centre_pairs(sizes[:m]) + _centre_pairs(sizes[m + 1:])


def block_causal_pairs(n: int, block: int, depth: int) -> int:
    """The pairs of :func:`block_causal`: ``block = 1`` is :func:`chain`; dense (``L = 1``), block
    centres (``L = 2``), else the fewer of block centres and stars around each block's first
    position joined by a chain within ``L - 2`` hops (``2 (n - nb) + f_{L-2}(nb)``).

    >>> block_causal_pairs(6, 2, 1), block_causal_pairs(6, 2, 2), block_causal_pairs(6, 2, 3)
    (18, 10, 9)
    """
    n, depth = _check(n, depth)
    sizes = _block_sizes(n, _check(block, 1)[0])
    if block == 1:
        return chain_pairs(n, depth)
    if depth == 1:
        return int(sum(size * int(end) for size, end in zip(sizes, np.cumsum(sizes)))) - n
    centre = _centre_pairs(sizes)
    if depth == 2:
        return centre
    return min(centre, 2 * (n - len(sizes)) + _plan(depth - 2, len(sizes))[0])


def block_causal(n: int, block: int, depth: int) -> Construction:
    """A mask realising ``T[q, k] = k // block <= q // block`` within ``depth`` layers.

    The last block may be shorter than ``block``. Block centres (:func:`centres`), or stars for ``L >= 3``.

    >>> c = block_causal(4, 2, 2)
    >>> c.pairs, c.witness(3, 0)
    (6, [2])
    """
    n, depth = _check(n, depth)
    block = _check(block, 1)[0]
    if block == 1:
        return chain(n, depth)
    blk = np.arange(n) // block
    target = blk[None, :] <= blk[:, None]
    sizes = _block_sizes(n, block)
    starts, nb = np.arange(0, n, block), len(sizes)
    if depth == 1:
        return Construction(target & ~np.eye(n, dtype=bool), target, depth, lambda q, k: [])
    if depth >= 3 and 2 * (n - nb) + _plan(depth - 2, nb)[0] < _centre_pairs(sizes):
        first, mask = starts[blk], np.zeros((n, n), dtype=bool)
        mask[first, np.arange(n)] = mask[np.arange(n), first] = True  # the first position and its block, both ways
        q, k = _chain_edges(depth - 2, nb)
        mask[starts[q], starts[k]] = True
        np.fill_diagonal(mask, False)

        def witness(qq: int, kk: int) -> list[int]:
            middle = _chain_witness(depth - 2, nb, int(blk[qq]), int(blk[kk])) if blk[kk] < blk[qq] else []
            return _walk([kk, int(starts[blk[kk]])] + [int(starts[w]) for w in middle] + [int(starts[blk[qq]]), qq])

        return Construction(mask, target, depth, witness)

    return centres(blk, depth)


def centres(rank: np.ndarray, depth: int) -> Construction:
    """Block centres for classes of any sizes (``rank``: each position's class rank) within 2 hops: the middle
    class's first position ``h`` attends the ranks up to it, the later ranks attend ``h``; both halves recursively."""
    n, m, by_rank = len(rank), int(rank.max()) + 1, np.argsort(rank, kind="stable")
    start = np.searchsorted(rank[by_rank], np.arange(m + 1))
    hub, mask, todo = by_rank[start[:-1]], np.zeros((n, n), dtype=bool), [(0, m)]
    while todo:
        lo, hi = todo.pop()
        if lo < hi:
            c = (lo + hi) // 2
            mask[hub[c], by_rank[start[lo]:start[c + 1]]] = True
            mask[by_rank[start[c]:start[hi]], hub[c]] = True
            todo += [(lo, c), (c + 1, hi)]
    np.fill_diagonal(mask, False)

    def witness(q: int, k: int) -> list[int]:
        lo, hi, rq, rk = 0, m, int(rank[q]), int(rank[k])
        while True:
            c = (lo + hi) // 2
            if rq < c:
                hi = c
            elif rk > c:
                lo = c + 1
            else:
                return _walk([k, int(hub[c]), q])

    return Construction(mask, rank[None, :] <= rank[:, None], depth, witness)


def union(parts: Sequence[Construction]) -> Construction:
    """The disjoint union (packed documents): each part on its own positions, in order.

    >>> u = union([chain(2, 1), chain(3, 2)])
    >>> u.n, u.pairs, u.depth, u.witness(4, 2)
    (5, 3, 2, [3])
    """
    if not parts:
        raise InputError("a union needs at least one part", "parts")
    n = sum(p.n for p in parts)
    mask, target = np.zeros((n, n), dtype=bool), np.zeros((n, n), dtype=bool)
    starts = np.cumsum([0] + [p.n for p in parts])
    for p, start in zip(parts, starts):
        mask[start:start + p.n, start:start + p.n] = p.mask
        target[start:start + p.n, start:start + p.n] = p.target
    part_of = np.repeat(np.arange(len(parts)), [p.n for p in parts])

    def witness(q: int, k: int) -> list[int]:
        i = int(part_of[q])
        if part_of[k] != i:
            raise InputError(f"({q}, {k}) is not a pair of the target: different parts", "pair")
        start = int(starts[i])
        return [start + x for x in parts[i].witness(q - start, k - start)]

    return Construction(mask, target, max(p.depth for p in parts), witness)


def documents(lengths: Sequence[int], depth: int) -> Construction:
    """Packed documents, each a causal chain realised within ``depth`` layers.

    >>> documents([3, 1, 4], 2).pairs == chain_pairs(3, 2) + chain_pairs(4, 2)
    True
    """
    if not lengths:
        raise InputError("documents needs at least one length", "lengths")
    return union([chain(length, depth) for length in lengths])


def tensor(a: Construction, b: Construction) -> Construction:
    """The product order ``T_a x T_b`` (position ``i * n_b + j``) within ``max`` of the depths:
    ``A = (M_a or I) kron (M_b or I)``, so ``A^L = T_a kron T_b``. Pairs ``(p_a + n_a)(p_b + n_b) - n_a n_b``.

    >>> tensor(chain(2, 1), chain(2, 1)).pairs
    5
    """
    nb = b.n
    mask = np.kron(a.mask | np.eye(a.n, dtype=bool), b.mask | np.eye(nb, dtype=bool))
    np.fill_diagonal(mask, False)

    def witness(q: int, k: int) -> list[int]:
        (q1, q2), (k1, k2) = divmod(q, nb), divmod(k, nb)
        w1, w2 = [k1] + a.witness(q1, k1) + [q1], [k2] + b.witness(q2, k2) + [q2]
        length = max(len(w1), len(w2))  # the shorter walk waits at its end
        w1, w2 = w1 + [q1] * (length - len(w1)), w2 + [q2] * (length - len(w2))
        return _walk([x * nb + y for x, y in zip(w1, w2)])

    return Construction(mask, np.kron(a.target, b.target), max(a.depth, b.depth), witness)


def sequential(a: Construction, b: Construction) -> Construction:
    """The product order within ``L_a + L_b`` layers: hops in the first coordinate, then the
    second. ``M = M_a kron I or I kron M_b``; pairs ``p_a n_b + n_a p_b``.

    >>> sequential(chain(2, 1), chain(2, 1)).pairs
    4
    """
    nb = b.n
    mask = np.kron(a.mask, np.eye(nb, dtype=bool)) | np.kron(np.eye(a.n, dtype=bool), b.mask)

    def witness(q: int, k: int) -> list[int]:
        (q1, q2), (k1, k2) = divmod(q, nb), divmod(k, nb)
        first = [x * nb + k2 for x in [k1] + a.witness(q1, k1) + [q1]]
        second = [q1 * nb + y for y in b.witness(q2, k2) + [q2]]
        return _walk(first + second)

    return Construction(mask, np.kron(a.target, b.target), a.depth + b.depth, witness)


def chain_product(n1: int, n2: int, depth: int) -> Construction:
    """The product of two chains (``(i, j) <= (i', j')`` iff ``i <= i'`` and ``j <= j'``) within
    ``depth`` layers: the cheapest of :func:`tensor` at depth ``L`` and :func:`sequential`
    with ``L_1 + L_2 = L``.

    >>> chain_product(3, 3, 2).pairs, chain_product(3, 3, 4).pairs
    (16, 12)
    """
    (n1, depth), n2 = _check(n1, depth), _check(n2, 1)[0]
    options = [((chain_pairs(n1, depth) + n1) * (chain_pairs(n2, depth) + n2) - n1 * n2, 0)]
    for d1 in range(1, depth):
        options.append((chain_pairs(n1, d1) * n2 + n1 * chain_pairs(n2, depth - d1), d1))
    _, d1 = min(options)
    if d1 == 0:
        return tensor(chain(n1, depth), chain(n2, depth))
    return sequential(chain(n1, d1), chain(n2, depth - d1))

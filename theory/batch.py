"""Batched mask algebra: many small masks at once, each row packed into one unsigned integer.

The per-mask engine (:mod:`theory.order`, :mod:`theory.reach`, :mod:`theory.sparse`)
handles one large mask; the exhaustive proofs need the same quantities for
millions of small ones (every mask of size 5 is 2^20 masks). A batch of ``B``
masks of size ``n`` is one array ``rows`` of shape ``(n, B)``, bit ``k`` of
``rows[q, b]`` set iff mask ``b`` has ``M[q, k]`` (:mod:`theory.batch_rows`: the
representation, packing and the Boolean product; its names are importable from here
too, so a proof reads the whole algebra as ``batch.<name>``). Every operation is a
few numpy operations per pair of positions over the whole batch — never a Python
loop per mask.

Definitions are those of design.md §2: ``A = I or M`` (residual), ``R(L) = A^L``,
``R* = A^(L*)``, classes = mutual reachability, Hasse diagram = covering relation.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.batch_rows import (  # the representation; re-exported: batch.<name> is the whole algebra
    bit,
    contained,
    equal_masks,
    identity,
    lowest_bit,
    masks_from_indices,
    pack,
    popcount,
    product,
    row_dtype,
    selectors,
    transpose,
    unpack,
)

__all__ = [
    "bit", "closure", "contained", "convergence_depth", "covering", "dependency", "equal_masks", "equivalence",
    "first_repeat", "hop_distances", "hop_layers", "identity", "lowest_bit", "masks_from_indices", "max_hop_distance",
    "pack", "popcount", "power_cycle", "powers", "product", "reach", "representatives", "row_dtype", "selectors",
    "sparse_realisation", "squarings_needed", "strict_order", "transpose", "unpack",
]


def dependency(rows: np.ndarray, residual: bool = True) -> np.ndarray:
    """One layer's dependency ``A = I or M`` (a copy of ``M`` without the residual)."""
    out = rows.copy()
    if residual:
        out |= identity(rows.shape[0], 1)
    return out


def powers(rows: np.ndarray, upto: int, *, residual: bool = True) -> list[np.ndarray]:
    """``[A^0, A^1, ..., A^upto]`` with ``A = I or M`` (``A = M`` without the residual).

    ``A^(L+1) = A . A^L``, so ``A^L[q, k]`` iff there is a walk of ``L`` steps ``k -> q``.
    """
    a = dependency(rows, residual)
    sel = selectors(a)
    out = [identity(rows.shape[0], rows.shape[1])]
    for _ in range(upto):
        out.append(product(a, out[-1], sel))
    return out


def reach(rows: np.ndarray, depth: int, *, residual: bool = True) -> np.ndarray:
    """``R(L) = A^L`` for every mask of the batch."""
    return powers(rows, depth, residual=residual)[-1]


def squarings_needed(n: int) -> int:
    """``s`` with ``2^s >= n - 1`` (0 for ``n <= 2``): ``A^(2^s) = R*`` since ``L* <= n - 1``."""
    return max(n - 2, 0).bit_length()


def closure(rows: np.ndarray, squarings: int | None = None) -> np.ndarray:
    """``R* = A^(2^s)``, the reflexive-transitive closure, by ``s`` Boolean squarings of ``A = I or M``.

    ``s`` = :func:`squarings_needed` (``2^s >= n - 1``; the powers are constant from
    ``n - 1`` on: theorem ``reach_stable_by_n_minus_1``).

    >>> chain = pack(np.array([[[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]], dtype=bool))
    >>> unpack(closure(chain), 4)[0].astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    """
    r = dependency(rows)
    for _ in range(squarings_needed(rows.shape[0]) if squarings is None else squarings):
        r = product(r, r)
    return r


def first_repeat(powers_: list[np.ndarray]) -> np.ndarray:
    """``(B,)``: the least ``L`` with ``powers_[L] = powers_[L+1]`` (-1 if none among them)."""
    depth = np.full(powers_[0].shape[1], -1, dtype=np.int64)
    for level in range(len(powers_) - 2, -1, -1):
        depth[equal_masks(powers_[level], powers_[level + 1])] = level
    return depth


def convergence_depth(rows: np.ndarray, powers_: list[np.ndarray] | None = None) -> np.ndarray:
    """``L*`` per mask: the least ``L >= 0`` with ``A^L = A^(L+1)``, searched up to ``L = n``; -1 if none.

    ``powers_`` = :func:`powers` of ``rows`` when already computed (then the search
    goes up to the last but one of them).
    """
    return first_repeat(powers(rows, rows.shape[0] + 1) if powers_ is None else powers_)


def hop_layers(rows: np.ndarray) -> list[np.ndarray]:
    """Breadth-first layers along the attention edges (no residual): ``F_0 = I``, then
    ``F_(t+1) = (M . F_t) and not (F_0 or ... or F_t)``, until every mask's layer is empty.

    ``F_t[q]`` has bit ``k`` iff ``dist(k, q) = t``: the fewest attention edges on a
    path ``k -> q`` (design.md §2). The empty last layer is not returned.
    """
    n, b = rows.shape
    sel = selectors(rows)
    frontier = identity(n, b)
    seen = frontier.copy()
    layers = [frontier]
    while True:
        frontier = product(rows, frontier, sel) & ~seen
        if not frontier.any():
            return layers
        if len(layers) > n:  # layers are disjoint and non-empty: at most n of them
            raise AssertionError("more than n breadth-first layers")
        seen |= frontier
        layers.append(frontier)


def hop_distances(rows: np.ndarray) -> np.ndarray:
    """``(B, n, n)`` int: ``D[b, q, k] = dist(k, q)`` in mask ``b``, -1 if there is no path."""
    n, b = rows.shape
    out = np.full((b, n, n), -1, dtype=np.int64)
    for t, layer in enumerate(hop_layers(rows)):
        out[unpack(layer, n)] = t
    return out


def max_hop_distance(rows: np.ndarray) -> np.ndarray:
    """``(B,)``: the largest finite hop distance of each mask (0 for a mask without edges)."""
    best = np.zeros(rows.shape[1], dtype=np.int64)
    for t, layer in enumerate(hop_layers(rows)):
        best[np.any(layer, axis=0)] = t
    return best


def equivalence(limit: np.ndarray) -> np.ndarray:
    """``E = R* and R*^T``: ``E[q, k]`` iff ``q`` and ``k`` reach each other (same class)."""
    return limit & transpose(limit)


def representatives(classes: np.ndarray) -> np.ndarray:
    """``(n, B)`` int: the smallest member of each position's class (rows of :func:`equivalence`)."""
    return lowest_bit(classes)


def strict_order(limit: np.ndarray) -> np.ndarray:
    """``S[q, k]`` iff ``[k] < [q]``: ``R*[q, k]`` and not ``R*[k, q]``."""
    return limit & ~transpose(limit)


def covering(limit: np.ndarray) -> np.ndarray:
    """The Hasse diagram on positions: ``H[q, k]`` iff ``[k] < [q]`` with no class strictly between.

    ``H = S and not (S . S)`` for the strict order ``S``; every member of the upper
    class gets every member of the lower class.
    """
    s = strict_order(limit)
    return s & ~product(s, s)


def sparse_realisation(rows: np.ndarray) -> np.ndarray:
    """The mask of Hasse edges plus a cycle per class, as :func:`theory.sparse.sparse_realisation`.

    Diagonal set; in each class (members ascending) every member is attended by
    the next one, the largest by the smallest; for each Hasse edge ``[k] -> [q]``
    the smallest member of ``[q]`` attends the smallest member of ``[k]``.

    >>> ring = pack(np.ones((1, 3, 3), dtype=bool))
    >>> unpack(sparse_realisation(ring), 3)[0].astype(int).tolist()
    [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
    """
    n, b = rows.shape
    limit = closure(rows)
    classes = equivalence(limit)
    rep = representatives(classes)
    is_rep = rep == np.arange(n)[:, None]  # (n, B)
    out = identity(n, b)
    for q in range(n):
        above = classes[q] & ~((bit(n, q) << 1) - 1) if q < n - 1 else np.zeros_like(classes[q])
        nxt = np.where(above != 0, lowest_bit(above), rep[q])  # the member after q, cyclically
        for t in range(n):
            out[t] |= np.where(nxt == t, bit(n, q), 0).astype(rows.dtype)
    rep_bits = np.zeros_like(rows[0])
    for k in range(n):
        rep_bits |= np.where(is_rep[k], bit(n, k), 0).astype(rows.dtype)
    hasse = covering(limit)
    for q in range(n):
        out[q] |= np.where(is_rep[q], hasse[q] & rep_bits, 0).astype(rows.dtype)
    return out


def power_cycle(rows: np.ndarray, *, max_steps: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pre-period and period of ``M^0 = I, M, M^2, ...`` for every mask (``M`` taken as is: no residual).

    The first ``t`` with ``M^t = M^s`` for some ``s < t`` gives ``preperiod = s``,
    ``period = t - s``. Returns two ``(B,)`` int arrays.

    >>> swap = pack(np.array([[[0, 1], [1, 0]], [[0, 0], [1, 0]]], dtype=bool))
    >>> [a.tolist() for a in power_cycle(swap)]
    [[0, 2], [2, 1]]
    """
    n, b = rows.shape
    limit = max_steps if max_steps is not None else 4 * n * n + 64
    sel = selectors(rows)
    history = [identity(n, b)]
    pre = np.full(b, -1, dtype=np.int64)
    per = np.full(b, -1, dtype=np.int64)
    open_ = np.ones(b, dtype=bool)
    for t in range(1, limit + 1):
        nxt = product(rows, history[-1], sel)
        for s, old in enumerate(history):
            hit = open_ & equal_masks(nxt, old)
            pre[hit], per[hit] = s, t - s
            open_ &= ~hit
        if not open_.any():
            return pre, per
        history.append(nxt)
    raise ValueError(f"no repeat among the first {limit} powers")

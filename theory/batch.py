"""Batched mask algebra: many small masks at once, each row packed into one unsigned integer.

The per-mask engine (:mod:`theory.order`, :mod:`theory.reach`, :mod:`theory.sparse`)
handles one large mask; the exhaustive proofs need the same quantities for
millions of small ones (every mask of size 5 is 2^20 masks). Here a batch of
``B`` masks of size ``n`` is one array ``rows`` of shape ``(n, B)``::

    rows[q, b]  bit k set  <=>  mask b has M[q, k] (query q attends key k)

so ``rows[q]`` is row ``q`` of every mask, contiguous. Rows are ``uint8`` for
``n <= 8`` (``uint16`` / ``uint32`` / ``uint64`` up to 64). Every operation is a
few numpy operations per pair of positions over the whole batch — never a Python
loop per mask. The Boolean product, the workhorse, uses *selectors*: for the
left factor, ``sel[q, k]`` is all ones where bit ``k`` of row ``q`` is set and 0
elsewhere, so ``(L . R)[q] = OR_k sel[q, k] & R[k]``.

Definitions are those of design.md §2: ``A = I or M`` (residual), ``R(L) = A^L``,
``R* = A^(L*)``, classes = mutual reachability, Hasse diagram = covering relation.
"""

from __future__ import annotations

import numpy as np

_DTYPES = ((8, np.uint8), (16, np.uint16), (32, np.uint32), (64, np.uint64))


def row_dtype(n: int) -> np.dtype:
    """The smallest unsigned integer type that holds a row of ``n`` bits (``n <= 64``).

    >>> row_dtype(5), row_dtype(9)
    (dtype('uint8'), dtype('uint16'))
    """
    for bits, dtype in _DTYPES:
        if n <= bits:
            return np.dtype(dtype)
    raise ValueError(f"batched masks hold at most 64 positions, got n = {n}")


def _bit(n: int, k: int):
    return row_dtype(n).type(1 << k)


def pack(masks: np.ndarray) -> np.ndarray:
    """``(B, n, n)`` bool masks -> ``(n, B)`` packed rows.

    >>> pack(np.array([[[1, 0], [1, 1]], [[0, 1], [0, 0]]], dtype=bool)).tolist()
    [[1, 2], [3, 0]]
    """
    masks = np.asarray(masks, dtype=bool)
    b, n, _ = masks.shape
    dtype = row_dtype(n)
    weights = (np.ones(1, dtype=dtype) << np.arange(n, dtype=dtype)).astype(dtype)
    rows = np.bitwise_or.reduce(masks.astype(dtype) * weights, axis=2) if n else np.zeros((b, 0), dtype)
    return np.ascontiguousarray(rows.T.astype(dtype))


def unpack(rows: np.ndarray, n: int) -> np.ndarray:
    """``(n, B)`` packed rows -> ``(B, n, n)`` bool masks (inverse of :func:`pack`)."""
    shifts = np.arange(n, dtype=rows.dtype)
    return ((rows.T[:, :, None] >> shifts) & 1).astype(bool)


def masks_from_indices(n: int, indices: np.ndarray, *, diagonal: bool = False) -> np.ndarray:
    """Packed rows of the masks numbered ``indices`` in the enumeration of all masks of size ``n``.

    Without ``diagonal`` (the default: under the residual the diagonal does not
    matter) there are ``2^(n(n-1))`` masks; bit ``q(n-1) + j`` of the index is
    entry ``(q, k)`` with ``k = j`` if ``j < q`` else ``j + 1``, so the diagonal
    is 0. With ``diagonal`` there are ``2^(n^2)`` and bit ``qn + k`` is ``(q, k)``.
    Decoding is bitwise: ``decode(i | j) = decode(i) | decode(j)`` for disjoint bits.

    >>> unpack(masks_from_indices(3, np.array([0b000011])), 3)[0].astype(int).tolist()
    [[0, 1, 1], [0, 0, 0], [0, 0, 0]]
    >>> unpack(masks_from_indices(2, np.array([0b0110]), diagonal=True), 2)[0].astype(int).tolist()
    [[0, 1], [1, 0]]
    """
    idx = np.asarray(indices, dtype=np.uint64)
    dtype = row_dtype(n)
    width = n if diagonal else n - 1
    field = np.uint64((1 << width) - 1)
    rows = np.empty((n, idx.size), dtype=dtype)
    for q in range(n):
        chunk = (idx >> np.uint64(q * width)) & field
        if not diagonal:
            low = np.uint64((1 << q) - 1)
            chunk = (chunk & low) | ((chunk & ~low) << np.uint64(1))
        rows[q] = chunk.astype(dtype)
    return rows


def identity(n: int, b: int) -> np.ndarray:
    """Packed rows of ``b`` copies of the ``n x n`` identity."""
    dtype = row_dtype(n)
    return np.repeat((np.ones(1, dtype=dtype) << np.arange(n, dtype=dtype))[:, None], b, axis=1)


def dependency(rows: np.ndarray, residual: bool = True) -> np.ndarray:
    """One layer's dependency ``A = I or M`` (a copy of ``M`` without the residual)."""
    out = rows.copy()
    if residual:
        out |= identity(rows.shape[0], 1)
    return out


def selectors(rows: np.ndarray) -> np.ndarray:
    """``(n, n, B)``: ``sel[q, k]`` is all ones where row ``q`` has bit ``k``, else 0."""
    n = rows.shape[0]
    one = rows.dtype.type(1)
    sel = np.empty((n, n, rows.shape[1]), dtype=rows.dtype)
    for k in range(n):
        np.bitwise_and(rows >> rows.dtype.type(k), one, out=sel[:, k])
    np.negative(sel, out=sel)  # 1 -> all ones (unsigned wrap-around), 0 -> 0
    return sel


def product(left: np.ndarray, right: np.ndarray, sel: np.ndarray | None = None) -> np.ndarray:
    """Boolean product ``left . right``: row ``q`` is the OR of the rows ``right[k]`` for ``k`` in ``left[q]``.

    ``sel`` = :func:`selectors` of ``left`` when it is reused for several products.

    >>> a = pack(np.array([[[1, 0, 0], [1, 1, 0], [0, 1, 1]]], dtype=bool))
    >>> unpack(product(a, a), 3)[0].astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    n = left.shape[0]
    sel = selectors(left) if sel is None else sel
    out = np.bitwise_and(sel[:, 0], right[0])  # (n, B): every row q at once, key k = 0
    tmp = np.empty_like(out)
    for k in range(1, n):
        np.bitwise_and(sel[:, k], right[k], out=tmp)
        out |= tmp
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


def equal_masks(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(B,)`` bool: mask ``b`` of ``a`` equals mask ``b`` of ``b``."""
    return ~np.any(a != b, axis=0)


def contained(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(B,)`` bool: ``a <= b`` entrywise (every edge of ``a`` is in ``b``)."""
    return ~np.any(a & ~b, axis=0)


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


def transpose(rows: np.ndarray) -> np.ndarray:
    """Packed rows of the transposed masks."""
    n = rows.shape[0]
    one = rows.dtype.type(1)
    out = np.zeros_like(rows)
    for q in range(n):
        for k in range(n):
            out[k] |= ((rows[q] >> rows.dtype.type(k)) & one) << rows.dtype.type(q)
    return out


def equivalence(limit: np.ndarray) -> np.ndarray:
    """``E = R* and R*^T``: ``E[q, k]`` iff ``q`` and ``k`` reach each other (same class)."""
    return limit & transpose(limit)


def lowest_bit(rows: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of every entry (-1 for 0), same shape as ``rows``."""
    out = np.full(rows.shape, -1, dtype=np.int64)
    for k in range(rows.dtype.itemsize * 8 - 1, -1, -1):
        out[((rows >> rows.dtype.type(k)) & rows.dtype.type(1)).astype(bool)] = k
    return out


def popcount(rows: np.ndarray) -> np.ndarray:
    """Number of set bits of every entry (int64)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(rows).astype(np.int64)
    out = np.zeros(rows.shape, dtype=np.int64)
    for k in range(rows.dtype.itemsize * 8):
        out += (rows >> rows.dtype.type(k)) & rows.dtype.type(1)
    return out


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
        above = classes[q] & ~((_bit(n, q) << 1) - 1) if q < n - 1 else np.zeros_like(classes[q])
        nxt = np.where(above != 0, lowest_bit(above), rep[q])  # the member after q, cyclically
        for t in range(n):
            out[t] |= np.where(nxt == t, _bit(n, q), 0).astype(rows.dtype)
    rep_bits = np.zeros_like(rows[0])
    for k in range(n):
        rep_bits |= np.where(is_rep[k], _bit(n, k), 0).astype(rows.dtype)
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

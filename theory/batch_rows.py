"""Packed rows: a batch of many small masks as one array, each row one unsigned integer.

A batch of ``B`` masks of size ``n`` is one array ``rows`` of shape ``(n, B)``::

    rows[q, b]  bit k set  <=>  mask b has M[q, k] (query q attends key k)

so ``rows[q]`` is row ``q`` of every mask, contiguous. Rows are ``uint8`` for
``n <= 8`` (``uint16`` / ``uint32`` / ``uint64`` up to 64). This module holds the
representation and its primitives: packing and unpacking, enumerating every mask
of a size, the identity, transposition, bit counts, comparisons, and the Boolean
product, which uses *selectors*: for the left factor, ``sel[q, k]`` is all ones
where bit ``k`` of row ``q`` is set and 0 elsewhere, so
``(L . R)[q] = OR_k sel[q, k] & R[k]``. The algebra built on it (powers, closure,
classes, Hasse diagram) is :mod:`theory.batch`.
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


def bit(n: int, k: int):
    """The row value with only bit ``k`` set, in the row type of size ``n``."""
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


def transpose(rows: np.ndarray) -> np.ndarray:
    """Packed rows of the transposed masks."""
    n = rows.shape[0]
    one = rows.dtype.type(1)
    out = np.zeros_like(rows)
    for q in range(n):
        for k in range(n):
            out[k] |= ((rows[q] >> rows.dtype.type(k)) & one) << rows.dtype.type(q)
    return out


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


def equal_masks(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(B,)`` bool: mask ``b`` of ``a`` equals mask ``b`` of ``b``."""
    return ~np.any(a != b, axis=0)


def contained(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(B,)`` bool: ``a <= b`` entrywise (every edge of ``a`` is in ``b``)."""
    return ~np.any(a & ~b, axis=0)


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

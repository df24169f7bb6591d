"""Rows of a Boolean matrix as Python integers (bitsets).

Bit ``k`` of ``rows[q]`` is ``matrix[q, k]``. Python's arbitrary-precision
integers make OR, AND-NOT and "highest set bit" single C-level operations on
``n / 64`` machine words, which is what the engine's algorithms need.
"""

from __future__ import annotations

import numpy as np


def pack_rows(matrix: np.ndarray) -> list[int]:
    """Return the rows of a 2-D bool array as integers, bit ``k`` = column ``k``.

    >>> pack_rows(np.array([[1, 0, 1], [0, 1, 0]], dtype=bool))
    [5, 2]
    """
    matrix = np.ascontiguousarray(matrix, dtype=bool)
    packed = np.packbits(matrix, axis=1, bitorder="little")
    width = packed.shape[1]
    buf = memoryview(packed.tobytes())
    return [int.from_bytes(buf[i : i + width], "little") for i in range(0, width * len(packed), width)]


def unpack_rows(rows: list[int], n: int) -> np.ndarray:
    """Inverse of :func:`pack_rows` for ``n`` columns: a ``(len(rows), n)`` bool array.

    >>> unpack_rows([5, 2], 3).astype(int).tolist()
    [[1, 0, 1], [0, 1, 0]]
    """
    nbytes = (n + 7) // 8
    if not rows:
        return np.zeros((0, n), dtype=bool)
    buf = b"".join(r.to_bytes(nbytes, "little") for r in rows)
    packed = np.frombuffer(buf, dtype=np.uint8).reshape(len(rows), nbytes)
    return np.unpackbits(packed, axis=1, count=n, bitorder="little").astype(bool)


def bits(x: int) -> list[int]:
    """The positions of the set bits of ``x``, ascending.

    >>> bits(0b10110)
    [1, 2, 4]
    """
    out = []
    while x:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out


def neighbour_lists(matrix: np.ndarray) -> list[np.ndarray]:
    """For each row ``q``, the columns ``k != q`` with ``matrix[q, k]`` (ascending)."""
    matrix = np.asarray(matrix, dtype=bool)
    n = matrix.shape[0]
    qs, ks = np.nonzero(matrix)
    keep = qs != ks
    qs, ks = qs[keep], ks[keep]
    cuts = np.searchsorted(qs, np.arange(n + 1))
    return [ks[cuts[q] : cuts[q + 1]] for q in range(n)]


def transpose(matrix: np.ndarray, tile: int = 128) -> np.ndarray:
    """A C-contiguous copy of ``matrix.T``, copied tile by tile (cache-friendly, ~6x faster at n = 8192).

    >>> transpose(np.array([[1, 0], [1, 1]], dtype=bool)).astype(int).tolist()
    [[1, 1], [0, 1]]
    """
    rows, cols = matrix.shape
    out = np.empty((cols, rows), dtype=matrix.dtype)
    for i in range(0, rows, tile):
        for j in range(0, cols, tile):
            out[j : j + tile, i : i + tile] = matrix[i : i + tile, j : j + tile].T
    return out

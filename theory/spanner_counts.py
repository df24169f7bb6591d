"""Pairs and tiles of the closed-form sparse masks, counted from their rows as intervals (no n x n grid).

:func:`formula_counts` enumerates each row of a mask of :mod:`theory.masks.sparse_spanners`
as disjoint key intervals ``[lo, hi)``, from the edge types of the formulas (a second
writing of them, tested equal to the grid's counts at small ``n``): the chain row of
``a`` for ``layers = 1`` is ``[0, a]``; for 2 the dyadic interval ``[a - lowbit(a), a]``
and the binary prefixes of ``a`` below it; for 3 the points of every scale (deduplicated);
lifted to tiles, one interval per tile edge of the tile row. The streams map chain rows
to positions as the masks do. Tiles: for each row of tiles, the cumulative count
``F(x) = Σ max(0, min(x, hi) - lo)`` at every tile boundary (sorted endpoints and prefix
sums), so the work is about ``(size / block)²`` plus the number of intervals.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.params import require_block, require_non_negative, require_positive

_I = np.int64


def _chain_points(a: np.ndarray, layers: int, low) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, lo, hi)``: the row of chain index ``a[row]`` of the pairs formula (diagonal included), keys
    ``>= low`` (an int or one per row; indices may be negative: the formulas are bitwise), disjoint."""
    a = a.astype(_I)
    idx = np.arange(len(a), dtype=_I)
    low = np.broadcast_to(np.asarray(low, dtype=_I), a.shape)
    if layers == 1:
        return idx, low.copy(), a + 1
    if layers == 2:
        base = a - (a & -a)  # [a - lowbit(a), a]: the centre edges and the diagonal
        rows, keys = [idx], [np.maximum(base, low)]
        for j in range(63):
            c = a & ~_I((1 << j) - 1)
            hit = (((a >> j) & 1) == 1) & (c < base) & (c >= low)  # a binary prefix of a below the interval
            rows.append(idx[hit])
            keys.append(c[hit])
        r, lo = np.concatenate(rows), np.concatenate(keys)
        hi = np.concatenate([a + 1, lo[len(a):] + 1])
        return r, lo, hi
    rows, keys = [idx], [a]  # the diagonal
    for b in (2, 4, 16, 256, 65536):
        bb = b * b
        sel = (a % b == b - 1) & (a % bb != bb - 1)  # a attends its b-block
        span = np.where(sel, b - 1, 0)
        rows.append(np.repeat(idx, span))
        keys.append(np.repeat(a - (b - 1), span) + _ranks(span))
        sel = a % b == 0  # the last of every earlier b-block of a's b²-block
        span = np.where(sel, (a % bb) // b, 0)
        rows.append(np.repeat(idx, span))
        keys.append(np.repeat((a // bb) * bb + b - 1, span) + b * _ranks(span))
        c = a & ~_I(b - 1)
        sel = (c != a) & (c % bb != 0)  # the first of a's b-block
        rows.append(idx[sel])
        keys.append(c[sel])
    r, c = np.concatenate(rows), np.concatenate(keys)
    keep = c >= low[r]
    r, c = r[keep], c[keep]
    floor = int(low.min()) if len(a) else 0
    width = int(a.max()) - floor + 2 if len(a) else 1
    code = np.sort(r * width + (c - floor))
    code = code[np.concatenate([[True], code[1:] != code[:-1]])] if len(code) else code  # deduplicated
    return code // width, code % width + floor, code % width + floor + 1


def _ranks(span: np.ndarray) -> np.ndarray:
    """``0 … span[i]-1`` for each ``i``, concatenated."""
    total = int(span.sum())
    starts = np.repeat(np.cumsum(span) - span, span)
    return np.arange(total, dtype=_I) - starts


def chain_rows(a, layers: int, tile: int = 0, low=0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, lo, hi)``: disjoint key intervals (keys ``>= low``) of
    :func:`~theory.masks.sparse_spanners.chain_rule` for rows ``a``.

    >>> [list(map(int, x)) for x in chain_rows(np.array([13]), 2)]  # 13 attends 12, 13 (its interval) and 8
    [[0, 0], [12, 8], [14, 9]]
    """
    a = np.asarray(a, dtype=_I)
    low = np.broadcast_to(np.asarray(low, dtype=_I), a.shape)
    if not tile or layers == 1:
        return _chain_points(a, layers, low)
    at = a // tile
    tiles, first, inverse = np.unique(at, return_index=True, return_inverse=True)
    trow, tlo, thi = _chain_points(tiles, layers, low[first] // tile)  # keys of each tile row (diagonal in) ...
    trow, tlo = np.repeat(trow, thi - tlo), np.repeat(tlo, thi - tlo) + _ranks(thi - tlo)  # ... as points
    order = np.argsort(trow, kind="stable")
    trow, tlo = trow[order], tlo[order]
    counts = np.bincount(trow, minlength=len(tiles))
    offsets = np.cumsum(counts) - counts
    span = counts[inverse]
    rows = np.repeat(np.arange(len(a), dtype=_I), span)
    key_tile = tlo[np.repeat(offsets[inverse], span) + _ranks(span)]
    lo = np.maximum(key_tile * tile, low[rows])
    hi = np.minimum(key_tile * tile + tile, a[rows] + 1)
    keep = lo < hi
    return rows[keep], lo[keep], hi[keep]


def _clip(rows, lo, hi, top):
    hi = np.minimum(hi, top[rows])
    keep = lo < hi
    return rows[keep], lo[keep], hi[keep]


def row_intervals(entry: str, n: int, layers: int, tile: int = 0, block: int | None = None):
    """``(size, q, lo, hi)``: every row of the mask (diagonal included) as disjoint intervals of keys."""
    if entry == "sparse_causal":
        q = np.arange(n, dtype=_I)
        r, lo, hi = chain_rows(q, layers, tile)
        return n, q[r], lo, hi
    if entry == "sparse_butterfly":
        size, qs, los, his = 3 * n - 2, [], [], []
        f = np.arange(n - 1, dtype=_I)
        r, lo, hi = chain_rows(f, layers, tile)  # F: chain on the positions
        qs, los, his = [f[r]], [lo], [hi]
        bpos = n - 1 + f  # B: chain on ~position (keys from ~(2n-3)); key c is position ~c
        r, lo, hi = chain_rows(~bpos, layers, tile, low=~_I(2 * n - 3))
        qs.append(bpos[r]), los.append(-hi), his.append(-lo)
        p = np.arange(n, dtype=_I)
        r, lo, hi = _clip(*chain_rows(p, layers, tile), p)  # P_p -> F: chain row of p, keys < p
        qs.append(2 * n - 2 + p[r]), los.append(lo), his.append(hi)
        v = ~(n - 2 + p)  # P_p -> B: the chain row of ~(n-2+p), keys below it
        r, lo, hi = _clip(*chain_rows(v, layers, tile, low=~_I(2 * n - 3)), v)
        qs.append(2 * n - 2 + p[r]), los.append(-hi), his.append(-lo)
        qs.append(2 * n - 2 + p), los.append(2 * n - 2 + p), his.append(2 * n - 1 + p)  # P itself
        return size, np.concatenate(qs), np.concatenate(los), np.concatenate(his)
    if entry == "sparse_block_two_stream":
        content = n - block
        c = np.arange(content, dtype=_I)
        r, lo, hi = chain_rows(c, layers, tile)
        qs, los, his = [c[r]], [lo], [hi]
        t = np.arange(n, dtype=_I)
        s = (t // block) * block
        r, lo, hi = _clip(*chain_rows(s, layers, tile), s)  # Q_t -> C: chain row of s, keys < s
        qs.append(content + t[r]), los.append(lo), his.append(hi)
        r, lo, hi = chain_rows(t % block, layers, tile)  # inside the block: chain on the offsets
        qs.append(content + t[r]), los.append(content + s[r] + lo), his.append(content + s[r] + hi)
        return 2 * n - block, np.concatenate(qs), np.concatenate(los), np.concatenate(his)
    raise InputError(f"unknown sparse formula {entry!r}; known: sparse_causal, sparse_butterfly, "
                     "sparse_block_two_stream")


def tile_counts_of(size: int, q, lo, hi, block: int) -> tuple[int, int]:
    """``(full, partial)`` non-empty ``block x block`` tiles of the intervals (padding blocked)."""
    t = -(-size // block)
    qt = q // block
    wide = _I(size + 1)
    lo_key = np.sort(qt * wide + lo)
    hi_key = np.sort(qt * wide + hi)
    lo_sum = np.concatenate([[0], np.cumsum(lo_key % wide)])
    hi_sum = np.concatenate([[0], np.cumsum(hi_key % wide)])
    bounds = np.minimum(np.arange(t + 1, dtype=_I) * block, size)
    full = partial = 0
    step = max(1, (1 << 22) // (t + 1))
    for start in range(0, t, step):
        rows = np.arange(start, min(t, start + step), dtype=_I)[:, None]
        x = rows * wide + bounds[None, :]

        def f(keys, sums):
            below = np.searchsorted(keys, x, side="left")  # entries of the tile row with endpoint < x
            first = np.searchsorted(keys, rows * wide, side="left")
            return (below - first) * bounds[None, :] - (sums[below] - sums[first])

        cum = f(lo_key, lo_sum) - f(hi_key, hi_sum)
        counts = np.diff(cum, axis=1)
        full += int(np.count_nonzero(counts == block * block))
        partial += int(np.count_nonzero((counts > 0) & (counts < block * block)))
    return full, partial


def formula_counts(entry: str, n: int, layers: int, block: int = 128, tile: int = 0,
                   **params) -> tuple[int, int, int]:
    """``(pairs, full_tiles, partial_tiles)`` of the mask ``entry:n,layers,tile[,block=l]`` without a grid.

    ``pairs``: off-diagonal; tiles: of the mask as written (diagonal included), for
    ``block x block`` tiles. The Block Two-Stream block ``l`` is ``params["block_size"]``
    or ``params["l"]`` (``block`` is the tile size counted).

    >>> formula_counts("sparse_causal", 4096, 2, 128)[0], formula_counts("sparse_causal", 4096, 3, 128)[0]
    (40974, 23021)
    """
    n = require_positive("n", n)
    layers = min(require_positive("layers", layers), 3)  # from 3 on: the 3-layer mask
    tile = require_non_negative("tile", tile)
    block = require_positive("block", block)
    l_block = None
    if entry == "sparse_block_two_stream":
        if not any(k in params for k in ("block_size", "l")):
            raise InputError("sparse_block_two_stream needs its block: formula_counts(..., l=L)")
        n, l_block = require_block(n, params.get("block_size", params.get("l")))
    size, q, lo, hi = row_intervals(entry, n, layers, tile, l_block)
    pairs = int((hi - lo).sum()) - size
    return (pairs, *tile_counts_of(size, q, lo, hi, block))

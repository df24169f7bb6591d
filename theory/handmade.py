"""The hand-made sparse patterns (window+global, dilated, log-sparse) at the cheapest parameter that realises a target.

Each pattern is written for the causal order (``q`` attends earlier keys ``k < q``)
and is restricted to the target: the mask is ``P and T``, never outside ``T``, so on a
target with a pair ``(q, k)``, ``k > q`` (not inside the causal order) none of them
realises anything ("never"). The patterns, ``P[q, k]`` for ``k < q``:

- ``window+global`` (Longformer / BigBird): ``q - k <= w`` (the previous ``w``
  positions), or ``q`` or ``k`` is a *global* position, a multiple of ``g`` (a global
  attends every earlier key and every later query attends it); ``g = none``: no global.
  For each ``g`` of :func:`global_steps` the least ``w`` (realising is monotone in ``w``:
  the masks are nested) by a doubling then a binary search; the cheapest ``(w, g)`` by
  pairs (ties: the smaller ``g``).
- ``dilated`` (Sparse Transformer's strided pattern, Child et al. 2019, with ``L``
  digits): ``q - k = d * b**i`` for ``1 <= d < b``, ``0 <= i < L``. ``b = ceil(n**(1/L))``
  realises the chain (``L`` digits in base ``b``); the least ``b`` that realises is
  searched upwards from the least ``b`` whose ``L`` longest steps reach the target's
  longest pair (``L (b - 1) b**(L-1)``), so every smaller ``b`` is known to fail.
- ``log-sparse`` (Li et al. 2019): ``q - k = 2**i``; no parameter. On the chain a pair
  at distance ``d`` needs ``popcount(d)`` hops, so the depth is ``floor(log2 n)``; at a
  smaller ``L`` it does not realise and its depth is reported.

Costs: ``pairs`` off-diagonal; ``tiles`` ``(full, partial)`` of the mask as written
for a kernel, WITH its diagonal (``tiles_bare``: of ``M`` without it). The grid
search (:func:`handmade`) checks every candidate by ``(M or I)^L == T`` (the body of
``theory.synthesis.realises``; the target is checked once); :func:`chain_handmade`
gives the same parameters and counts for the causal chain at any ``n`` by formulas
(no ``n x n`` grid), the same search code driven by closed-form predicates.
"""


from __future__ import annotations

import numpy as np

from hasse.theory.bitset import pack_rows
from hasse.theory.errors import InputError
from hasse.theory.handmade_chain import chain_handmade, chain_handmade_counts, chain_log_depth
from hasse.theory.handmade_patterns import (PATTERNS, Handmade, dilated_offsets, global_steps, log_offsets,
                                            offsets_mask, search_dilated, search_window_global, window_global_mask)
from hasse.theory.reach import propagate, reach
from hasse.theory.synthesis import BLOCK, check_target, tile_cost

__all__ = ["PATTERNS", "Handmade", "handmade", "chain_handmade", "chain_handmade_counts", "chain_log_depth",
           "offsets_mask", "window_global_mask", "dilated_offsets", "log_offsets", "global_steps", "MAX_N"]
MAX_N = 8192  # the grid search builds n x n masks


def _target(target) -> np.ndarray:
    """``check_target``'s verdict; a valid bool target is confirmed by one float product (exact: sums ``< 2**24``)."""
    arr = np.asarray(target)
    if arr.dtype == bool and arr.ndim == 2 and arr.shape[0] == arr.shape[1] and 0 < arr.shape[0] <= MAX_N:
        if np.array_equal(arr, np.tril(np.ones(arr.shape, dtype=bool))):
            return arr  # the causal chain: a preorder
        if np.diag(arr).all():
            f = arr.astype(np.float32)
            if not ((f @ f > 0) & ~arr).any():
                return arr
    return check_target(arr)  # its message, or the conversion of a 0/1 array


def _realises(mask: np.ndarray, target: np.ndarray, layers: int) -> bool:
    """``(M or I)^L == T``: ``theory.synthesis.realises`` on an already checked target.

    First the rows of ``(M or I)^L`` of a few queries (the last 16 and 48 spread out) by float
    products (exact: 0/1 entries, sums ``< 2**24``): one of them short of ``T`` already says no.
    """
    n = mask.shape[0]
    if n > 64:
        rows = np.unique(np.concatenate([np.arange(n - 16, n), np.linspace(0, n - 1, 48).astype(np.int64)]))
        a = (mask | np.eye(n, dtype=bool)).astype(np.float32)
        v = a[rows]
        for _ in range(layers - 1):
            v = np.minimum(v @ a, 1.0)
        if not np.array_equal(v > 0, target[rows]):
            return False
    return bool(np.array_equal(reach(mask, layers), target))


def _depth(mask: np.ndarray, target: np.ndarray) -> int | None:
    """The least ``L >= 1`` with ``(M or I)^L == T`` (``M`` inside ``T``), None when the closure is not ``T``."""
    levels = propagate(mask)
    return max(1, levels.depth) if levels.closure == pack_rows(target) else None


def _row(name: str, parameter: str, mask: np.ndarray, target: np.ndarray, layers: int, block: int) -> Handmade:
    depth = _depth(mask, target)
    ok = depth is not None and depth <= layers
    written = mask | np.eye(mask.shape[0], dtype=bool)
    return Handmade(name, parameter, written if ok else None, int(np.count_nonzero(mask)),
                    tile_cost(written, block), ok, depth, tile_cost(mask, block))


def _never(name: str, why: str) -> Handmade:
    return Handmade(name, why, None, None, None, False, None)


def _chain_mask(h: Handmade, n: int, layers: int) -> np.ndarray:
    """The mask of a row of :func:`chain_handmade`, built from its parameter."""
    p = dict(x.split("=") for x in h.parameter.split(",")) if "=" in h.parameter else {}
    if h.name == PATTERNS[0]:
        return window_global_mask(n, int(p["w"]), 0 if p["g"] == "none" else int(p["g"]))
    return offsets_mask(n, dilated_offsets(n, int(p["b"]), layers) if h.name == PATTERNS[1] else log_offsets(n))


def handmade(target, layers: int, block: int = BLOCK, *, formulas: bool = True) -> list[Handmade]:
    """Each pattern of :data:`PATTERNS` at its cheapest parameter realising ``target`` within ``layers``.

    ``formulas``: on the causal chain itself, take the parameters from :func:`chain_handmade`
    (the same search by formulas; the grid search finds the same, tests/test_handmade.py),
    then build and check each mask here; False: the grid search on every target.

    >>> rows = handmade(np.tril(np.ones((8, 8), dtype=bool)), 2, block=4)
    >>> [(h.name, h.parameter, h.pairs, h.realises, h.depth) for h in rows]
    [('window+global', 'w=1,g=4', 17, True, 2), ('dilated', 'b=3', 20, True, 2), ('log-sparse', '-', 17, False, 3)]
    """
    if np.ndim(target) == 2 and np.shape(target)[0] > MAX_N:
        raise InputError(f"the hand-made patterns are searched on a grid up to n = {MAX_N}, got {len(target)}")
    target = _target(target)
    if isinstance(layers, bool) or not isinstance(layers, (int, np.integer)) or layers < 1:
        raise InputError(f"layers must be an integer >= 1, got {layers!r}")
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise InputError(f"block must be an integer >= 1, got {block!r}")
    layers, n = int(layers), target.shape[0]
    if np.triu(target, 1).any():
        why = "none (the target has a pair (q, k) with k > q: outside the causal order)"
        return [_never(name, why) for name in PATTERNS]
    if formulas and np.array_equal(target, np.tril(np.ones((n, n), dtype=bool))):
        return [_row(h.name, h.parameter, _chain_mask(h, n, layers), target, layers, block)
                for h in chain_handmade(n, layers, block)]
    qs, ks = np.nonzero(target)
    longest = int((qs - ks).max())
    lower = np.tril(np.ones((n, n), dtype=bool), -1)

    def wg(w: int, g: int) -> np.ndarray:
        return window_global_mask(n, w, g) & target

    found = search_window_global(n, lambda w, g: _realises(wg(w, g), target, layers),
                                 lambda w, g: int(np.count_nonzero(wg(w, g))))
    # found: w = n - 1 is T less its diagonal, which realises T (inside the causal order) at depth 1
    out = [_row(PATTERNS[0], "w={},g={}".format(found[0], found[1] or "none"), wg(*found), target, layers, block)]

    def dil(b: int) -> np.ndarray:
        return offsets_mask(n, dilated_offsets(n, b, layers)) & target

    b = search_dilated(longest, layers, lambda b: _realises(dil(b), target, layers))
    out.append(_row(PATTERNS[1], f"b={b}", dil(b), target, layers, block) if b else _never(PATTERNS[1], "never"))
    out.append(_row(PATTERNS[2], "-", offsets_mask(n, log_offsets(n)) & target & lower, target, layers, block))
    return out


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

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from hasse.theory.bitset import pack_rows
from hasse.theory.errors import InputError
from hasse.theory.reach import propagate, reach
from hasse.theory.synthesis import BLOCK, check_target, tile_cost

PATTERNS = ("window+global", "dilated", "log-sparse")
MAX_N = 8192  # the grid search builds n x n masks


@dataclass(frozen=True)
class Handmade:
    """One hand-made pattern for a target and a depth budget.

    ``mask``: ``(n, n)`` bool WITH the diagonal when it realises within the budget (else
    None; None too from the formulas, which build nothing). ``pairs``: off-diagonal
    pairs; ``tiles``: ``(full, partial)`` of the mask with its diagonal; ``tiles_bare``:
    without it (None from the formulas). ``depth``: the least ``L >= 1`` with
    ``(M or I)^L == T`` (None: never, for any parameter).
    """

    name: str
    parameter: str
    mask: np.ndarray | None
    pairs: int | None
    tiles: tuple[int, int] | None
    realises: bool
    depth: int | None
    tiles_bare: tuple[int, int] | None = None


# ---- the patterns on a grid (no diagonal, causal order) ------------------------------------------


def offsets_mask(n: int, offsets) -> np.ndarray:
    """``P[q, k] = q - k in offsets`` (offsets ``>= 1``), ``(n, n)`` bool."""
    mask = np.zeros((n, n), dtype=bool)
    for d in offsets:
        rows = np.arange(int(d), n)
        mask[rows, rows - int(d)] = True
    return mask


def window_global_mask(n: int, w: int, g: int) -> np.ndarray:
    """``window+global``: ``0 < q - k <= w``, or ``k < q`` with ``q`` or ``k`` a multiple of ``g`` (``g = 0``: none).

    >>> window_global_mask(5, 1, 3).astype(int).tolist()
    [[0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 0, 0, 1, 0]]
    """
    mask = offsets_mask(n, range(1, min(w, n - 1) + 1))
    if g > 0:
        for x in range(0, n, g):
            mask[x, :x] = True  # a global attends every earlier key
            mask[x + 1:, x] = True  # every later query attends it
    return mask


def dilated_offsets(n: int, b: int, layers: int) -> list[int]:
    """The steps ``d * b**i`` (``1 <= d < b``, ``i < layers``) below ``n``, ascending.

    >>> dilated_offsets(20, 3, 2)
    [1, 2, 3, 6]
    """
    steps = {d * b ** i for i in range(layers) if b ** i < n for d in range(1, b)}
    return sorted(s for s in steps if s < n)


def log_offsets(n: int) -> list[int]:
    """The steps ``2**i`` below ``n``.

    >>> log_offsets(9)
    [1, 2, 4, 8]
    """
    return [1 << i for i in range(max(n - 1, 0).bit_length())]


# ---- the parameter searches, shared by the grid and the chain formulas --------------------------


def global_steps(n: int) -> list[int]:
    """The ``g`` tried: 0 (no global), then ``round(2**(j/2))`` below ``n``.

    >>> global_steps(20)
    [0, 1, 2, 3, 4, 6, 8, 11, 16]
    """
    out, j = [0], 0
    while round(2 ** (j / 2)) < n:
        g = round(2 ** (j / 2))
        if g not in out:
            out.append(g)
        j += 1
    return out


def search_window_global(n: int, works: Callable[[int, int], bool], cost: Callable[[int, int], int]):
    """The cheapest ``(w, g)`` (``g`` in :func:`global_steps`) with ``works(w, g)``, or None.

    ``works`` is monotone in ``w`` (nested masks) and ``cost`` non-decreasing in ``w``;
    a ``g`` whose ``w`` would cost at least the best so far is abandoned (ties: smaller ``g``).
    """
    best = None  # (cost, g, w)
    for g in global_steps(n):
        lo, top, found, w = -1, None, False, 0
        while True:  # doubling: lo fails; top works (found) or costs at least the best (so does every w >= top)
            if best is not None and cost(w, g) >= best[0]:
                top = w
                break
            if works(w, g):
                top, found = w, True
                break
            lo = w
            if w >= n - 1:
                break  # the whole window fails: so does every w
            w = min(n - 1, max(1, 2 * w))
        if top is None:
            continue
        while top - lo > 1:  # the least w in (lo, top) that works, else top
            mid = (lo + top) // 2
            if works(mid, g):
                top, found = mid, True
            else:
                lo = mid
        if found and (best is None or cost(top, g) < best[0]):
            best = (cost(top, g), g, top)
    return None if best is None else (best[2], best[1])


def dilated_start(longest: int, layers: int) -> int:
    """The least ``b >= 2`` whose ``layers`` longest steps reach ``longest``: ``layers (b-1) b**(layers-1) >= longest``.

    >>> dilated_start(4095, 2), dilated_start(1, 3)
    (46, 2)
    """
    b = 2
    while layers * (b - 1) * b ** (layers - 1) < longest:
        b += 1
    return b


def search_dilated(longest: int, layers: int, works: Callable[[int], bool]) -> int | None:
    """The least ``b`` with ``works(b)``, upwards from :func:`dilated_start` (smaller ``b`` cannot reach
    ``longest``) to ``longest + 1`` (every step ``1 … longest``: if that fails, every ``b`` does)."""
    for b in range(dilated_start(longest, layers), max(longest + 1, 2) + 1):
        if works(b):
            return b
    return None


# ---- the grid search ----------------------------------------------------------------------------


def _target(target) -> np.ndarray:
    """``check_target``'s verdict; a valid bool target is confirmed by one float product (exact: sums ``< 2**24``)."""
    arr = np.asarray(target)
    if arr.dtype == bool and arr.ndim == 2 and arr.shape[0] == arr.shape[1] and 0 < arr.shape[0] <= MAX_N:
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


def handmade(target, layers: int, block: int = BLOCK) -> list[Handmade]:
    """Each pattern of :data:`PATTERNS` at its cheapest parameter realising ``target`` within ``layers``.

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
        why = "never: the target has a pair (q, k) with k > q, outside every causal pattern"
        return [_never(name, why) for name in PATTERNS]
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


# ---- the causal chain by formulas (any n, no n x n grid) ----------------------------------------


def _wg_pairs(n: int, w: int, g: int) -> int:
    """Off-diagonal pairs of ``window+global`` on the chain: the window, plus global rows and columns beyond it."""
    m = min(w, n - 1)
    total = m * n - m * (m + 1) // 2
    if g > 0:
        glob = np.arange(0, n, g, dtype=np.int64)
        total += int(np.maximum(glob - w, 0).sum() + np.maximum(n - 1 - glob - w, 0).sum())
        ng, m0 = len(glob), w // g + 1  # pairs of globals i > j with (i - j) g > w, counted twice
        total -= sum(ng - d for d in range(m0, ng))
    return total


def _wg_works(n: int, layers: int, w: int, g: int) -> bool:
    """Whether ``window+global`` realises the chain within ``layers``: a pair with a global between its ends
    takes two hops (one when an end is global); inside a run of non-global positions only window steps."""
    if g == 1 or n <= 1:
        return True
    if layers == 1:  # every pair of two non-global positions directly
        first, last = (0, n - 1) if g == 0 else (1, n - 1 if (n - 1) % g else n - 2)
        return last <= first or last - first <= w
    run = n if g == 0 else max(g - 1 if g <= n - 1 else 0, (n - 1) % g)
    return run <= 1 or (w >= 1 and -(-(run - 1) // w) <= layers)


def _covers(n: int, steps, layers: int) -> bool:
    """Whether every distance ``1 … n-1`` is a sum of at most ``layers`` steps (bitsets of distances)."""
    full, reached = (1 << n) - 1, 1
    for _ in range(layers):
        new = reached
        for s in steps:
            new |= reached << s
        reached = new & full
    return reached == full


def _tile_spans(n: int, block: int):
    """Per tile row/column ``(first, last)`` position, and whether the tile is whole (no padding)."""
    starts = np.arange(0, n, block, dtype=np.int64)
    ends = np.minimum(starts + block, n) - 1
    return starts, ends, (ends - starts + 1) == block


def _offsets_tiles(n: int, offsets, block: int) -> tuple[int, int]:
    """``(full, partial)`` tiles of ``q - k in {0} + offsets``: a tile holds every distance of ``[q0 - k1, q1 - k0]``."""
    has = np.zeros(n + 1, dtype=np.int64)
    has[np.asarray([0, *offsets], dtype=np.int64) + 1] = 1
    cnt = np.cumsum(has)  # cnt[x + 1]: steps <= x
    s, e, whole = _tile_spans(n, block)
    lo, hi = s[:, None] - e[None, :], e[:, None] - s[None, :]
    inside = cnt[hi + 1] - cnt[np.maximum(lo, 0)]
    nonempty = (hi >= 0) & (inside > 0)
    full = nonempty & (lo >= 0) & (inside == hi - lo + 1) & whole[:, None] & whole[None, :]
    return int(full.sum()), int((nonempty & ~full).sum())


def _wg_tiles(n: int, w: int, g: int, block: int) -> tuple[int, int]:
    """``(full, partial)`` tiles of ``window+global`` with its diagonal, by tile spans (no grid)."""
    s, e, whole = _tile_spans(n, block)
    none = np.full(len(s), -1, dtype=np.int64)
    if g == 0:
        anyg, max_ng, min_ng = np.zeros(len(s), bool), e, s
    elif g == 1:
        anyg, max_ng, min_ng = np.ones(len(s), bool), none, none
    else:
        anyg = e // g * g >= s
        max_ng = np.where(e % g != 0, e, np.where(e - 1 >= s, e - 1, -1))
        min_ng = np.where(s % g != 0, s, np.where(s + 1 <= e, s + 1, -1))
    below = np.arange(len(s))[:, None] > np.arange(len(s))[None, :]
    diag = np.eye(len(s), dtype=bool)
    nonempty = diag | (below & ((s[:, None] - e[None, :] <= w) | anyg[:, None] | anyg[None, :]))
    blocked = (max_ng[:, None] >= 0) & (min_ng[None, :] >= 0) & (max_ng[:, None] - min_ng[None, :] > w)
    full = nonempty & (below | (diag & (block == 1))) & ~blocked & whole[:, None] & whole[None, :]
    return int(full.sum()), int((nonempty & ~full).sum())


def chain_log_depth(n: int) -> int:
    """The depth of ``log-sparse`` on the chain of ``n``: the largest ``popcount(d)``, ``d < n``, at least 1.

    >>> [chain_log_depth(n) for n in (1, 2, 4, 7, 8, 1024)]
    [1, 1, 2, 2, 3, 10]
    """
    return max(1, n.bit_length() - 1)


def chain_handmade(n: int, layers: int, block: int = BLOCK) -> list[Handmade]:
    """:func:`handmade` of the causal chain of ``n`` by formulas (``mask`` None): the same parameters and counts.

    >>> [(h.parameter, h.pairs, h.tiles) for h in chain_handmade(8, 2, 4)]
    [('w=1,g=4', 17, (0, 3)), ('b=3', 20, (0, 3)), ('-', 17, (0, 3))]
    """
    for value, what in ((n, "n"), (layers, "layers"), (block, "block")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{what} must be an integer >= 1, got {value!r}")
    n, layers, block = int(n), int(layers), int(block)
    w, g = search_window_global(n, lambda w, g: _wg_works(n, layers, w, g), lambda w, g: _wg_pairs(n, w, g))
    out = [Handmade(PATTERNS[0], f"w={w},g={g or 'none'}", None, _wg_pairs(n, w, g), _wg_tiles(n, w, g, block), True,
                    _wg_depth(n, w, g))]
    b = search_dilated(n - 1, layers, lambda b: _covers(n, dilated_offsets(n, b, layers), layers))
    steps = dilated_offsets(n, b, layers)
    depth = next(d for d in range(1, layers + 1) if _covers(n, steps, d))
    out.append(Handmade(PATTERNS[1], f"b={b}", None, sum(n - d for d in steps), _offsets_tiles(n, steps, block),
                        True, depth))
    steps, depth = log_offsets(n), chain_log_depth(n)
    out.append(Handmade(PATTERNS[2], "-", None, sum(n - d for d in steps), _offsets_tiles(n, steps, block),
                        depth <= layers, depth))
    return out


def _wg_depth(n: int, w: int, g: int) -> int:
    """The least ``L`` at which ``window+global`` realises the chain (:func:`_wg_works` is monotone in ``L``)."""
    layers = 1
    while not _wg_works(n, layers, w, g):
        layers += 1
    return layers


def chain_handmade_counts(n: int, layers: int, block: int = BLOCK) -> dict[str, tuple[int, tuple[int, int]] | None]:
    """``name -> (pairs, (full, partial) tiles)`` of each pattern realising the chain within ``layers``, else None.

    >>> chain_handmade_counts(8, 2, 4)["log-sparse"] is None
    True
    """
    return {h.name: (h.pairs, h.tiles) if h.realises else None for h in chain_handmade(n, layers, block)}

"""The hand-made sparse patterns on the causal chain by formulas: their cheapest parameters, pairs, tiles and depths at any n, without an n x n grid.

The same searches as the grid's (:mod:`theory.handmade_patterns`), driven by closed-form
predicates: ``window+global`` realises the chain within ``L`` layers when every run of
non-global positions is crossed by ``L`` window steps (one or two hops through a global
otherwise); ``dilated`` when every distance below ``n`` is a sum of at most ``L`` steps
(bitsets of distances); ``log-sparse`` needs ``popcount(d)`` hops for distance ``d``.
Tiles from the tile spans: a tile of rows ``[q0, q1]`` and columns ``[k0, k1]`` holds every
distance of ``[q0 - k1, q1 - k0]``.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.handmade_patterns import (PATTERNS, Handmade, dilated_offsets, log_offsets, search_dilated,
                                            search_window_global)
from hasse.theory.synthesis import BLOCK


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

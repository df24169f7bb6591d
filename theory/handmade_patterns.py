"""The hand-made sparse patterns themselves (causal order, no diagonal) and their parameter searches, shared by the grid and the chain formulas.

The definitions and the searches are described in :mod:`theory.handmade`, which puts them
to work on a target; :mod:`theory.handmade_chain` runs the same searches on the causal
chain by formulas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

PATTERNS = ("window+global", "dilated", "log-sparse")


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

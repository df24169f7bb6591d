"""Mask synthesis by brute force: the minimum over every mask inside the target (the reference, n <= 6).

The problem (:mod:`hasse.theory.synthesis`): a mask ``M`` realises the preorder ``T``
within ``L`` layers when ``(M or I)^L == T``. A pair outside ``T`` leaks at depth 1, so
only masks ``M`` inside ``T`` minus the diagonal are candidates (a diagonal entry only
adds cost); the pairs every realisation holds (``necessary_pairs``) are fixed, and the
others are enumerated:

- cost ``"pairs"``: by size, smallest first; the first size with a realisation is the
  minimum, and every mask of that size is checked (so the count of optimal masks is exact);
- cost ``"tiles"``: every subset (the tile count is not monotone in the size), each
  realisation scored by its non-empty ``block x block`` tiles.

Each batch of candidates is checked by Boolean matrix powers in numpy, written apart from
:func:`hasse.theory.reach.reach` (the engine the optimiser's answers are checked by).
This module also holds the result types: :class:`Synthesis` (the optimiser's answer) and
:class:`BruteForce` (the reference's), and :class:`SynthesisBug` (a mask that fails its
re-check: a bug of the kit, never returned).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.synthesis import COSTS, check_target, necessary_pairs, tile_counts

MAX_N = 6  # the brute force's reach
MAX_FREE = 24  # free pairs (not necessary) the enumeration accepts
CHUNK = 1 << 15


class SynthesisBug(AssertionError):
    """A synthesised mask that does not realise its target: a bug of the kit, never returned."""


@dataclass(frozen=True)
class Synthesis:
    """The optimiser's answer: a mask realising the target, its cost and a proved lower bound.

    ``status`` is ``"optimal"`` (``lower_bound == cost``), ``"unknown"`` (the time ran
    out: the best mask found, ``cost - lower_bound`` the gap) or ``"heuristic"`` (a
    realising mask from :mod:`.heuristic`, no optimality claimed). ``tiles`` is the mask's
    ``(full, partial)`` tiles of ``block``; ``pairs`` its allowed entries. ``engine`` names
    the search (``"z3"``, ``"cp-sat"``, ``"greedy"``), ``bound_how`` how ``lower_bound``
    was proved.
    """

    mask: np.ndarray
    cost: int
    lower_bound: int
    status: str
    seconds: float
    layers: int
    kind: str = "pairs"
    block: int = 0
    pairs: int = 0
    tiles: tuple[int, int] = (0, 0)
    engine: str = "z3"
    bound_how: str = ""

    @property
    def gap(self) -> int:
        return self.cost - self.lower_bound


@dataclass(frozen=True)
class BruteForce:
    """The reference's answer: the minimum cost, how many masks reach it, and one of them."""

    minimum: int
    count: int
    mask: np.ndarray


def check_cost(cost: str, block: int) -> None:
    if cost not in COSTS:
        raise InputError(f"cost must be one of {', '.join(COSTS)}, got {cost!r}")
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise InputError(f"block must be an integer >= 1, got {block!r}")


def check_request(target, layers, cost: str, block: int, timeout, max_n: int | None = None,
                  who: str = "") -> tuple[np.ndarray, int]:
    """The checks every optimiser makes first: the target (``check_target``), ``layers >= 1``, the cost and
    block, ``timeout > 0`` (or None) and ``n <= max_n`` (None: any n); returns the target as bool and ``layers`` as int.

    >>> check_request([[1, 0], [1, 1]], 2, "pairs", 2, None, 6, "the brute force")[1]
    2
    >>> check_request([[1]], 0, "pairs", 2, None, 6, "the brute force")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: layers must be an integer >= 1, got 0
    """
    target = check_target(target)
    check_cost(cost, block)
    if isinstance(layers, bool) or not isinstance(layers, (int, np.integer)) or layers < 1:
        raise InputError(f"layers must be an integer >= 1, got {layers!r}")
    if timeout is not None and not timeout > 0:
        raise InputError(f"timeout must be > 0 seconds, got {timeout!r}")
    if max_n is not None and target.shape[0] > max_n:
        raise InputError(f"{who} reaches n <= {max_n}, got n = {target.shape[0]}")
    return target, int(layers)


def _powers_equal(masks: np.ndarray, target: np.ndarray, layers: int) -> np.ndarray:
    """``(B,)`` bool: ``(M_b or I)^layers == T`` for each of the masks ``(B, n, n)``."""
    n = target.shape[0]
    step = (masks | np.eye(n, dtype=bool)).astype(np.uint8)
    power = step.copy()
    for _ in range(min(layers, max(n - 1, 1)) - 1):
        power = (np.matmul(step, power) > 0).astype(np.uint8)
    return (power.astype(bool) == target).all(axis=(1, 2))


def _batches(fixed: np.ndarray, free: np.ndarray, subsets):
    """Masks ``(B, n, n)`` for the subsets (tuples of indices into ``free``), in chunks."""
    while True:
        chunk = list(itertools.islice(subsets, CHUNK))
        if not chunk:
            return
        masks = np.repeat(fixed[None], len(chunk), axis=0)
        for b, subset in enumerate(chunk):
            if subset:
                sel = free[list(subset)]
                masks[b, sel[:, 0], sel[:, 1]] = True
        yield masks


def brute_force_minimum(target, layers: int, cost: str = "pairs", block: int = 2) -> BruteForce:
    """The minimum cost of a mask realising ``target`` within ``layers``, by enumeration (n <= 6).

    ``cost="tiles"``: non-empty ``block x block`` tiles (full and partial together).

    >>> chain = np.tril(np.ones((4, 4), dtype=bool))
    >>> r = brute_force_minimum(chain, 2)
    >>> r.minimum, r.count
    (4, 3)
    """
    target = check_target(target)
    check_cost(cost, block)
    if isinstance(layers, bool) or not isinstance(layers, (int, np.integer)) or layers < 1:
        raise InputError(f"layers must be an integer >= 1, got {layers!r}")
    n = target.shape[0]
    if n > MAX_N:
        raise InputError(f"the brute force reaches n <= {MAX_N}, got n = {n}")
    fixed = necessary_pairs(target, layers)
    free = np.argwhere(target & ~np.eye(n, dtype=bool) & ~fixed)
    if len(free) > MAX_FREE:
        raise InputError(f"the brute force enumerates at most {MAX_FREE} free pairs, got {len(free)}")
    if cost == "pairs":
        for size in range(len(free) + 1):
            count, first = 0, None
            for masks in _batches(fixed, free, itertools.combinations(range(len(free)), size)):
                ok = _powers_equal(masks, target, int(layers))
                count += int(ok.sum())
                if first is None and ok.any():
                    first = masks[int(np.flatnonzero(ok)[0])]
            if count:
                return BruteForce(int(fixed.sum()) + size, count, first)
        raise SynthesisBug("no mask inside the target realises it (the dense one always does)")
    best, count, first = None, 0, None
    subsets = itertools.chain.from_iterable(
        itertools.combinations(range(len(free)), s) for s in range(len(free) + 1))
    for masks in _batches(fixed, free, subsets):
        ok = _powers_equal(masks, target, int(layers))
        for m in masks[ok]:
            tiles = int(np.count_nonzero(tile_counts(m, block)))
            if best is None or tiles < best:
                best, count, first = tiles, 1, m.copy()
            elif tiles == best:
                count += 1
    return BruteForce(best, count, first)

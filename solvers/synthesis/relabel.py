"""Mask synthesis, relabelled: a position order that packs a realising mask into fewer B x B tiles.

Pairs do not depend on where positions sit; tiles do. :func:`relabel` synthesises the
target in candidate orders and keeps the cheapest (the cost, then the non-empty tiles):

- ``identity``: the given order (so the result is never worse than no relabelling);
- ``extension``: a linear extension of ``T``'s quotient order (keys before the queries
  that attend them: by the size of the down-set, which grows strictly along the strict
  order and is equal on a class), ties by class then position, so each class is contiguous;
- ``components``: the same inside each weakly connected component of ``T``, components
  one after another (interleaved documents become contiguous blocks);
- ``extension, last first``: the extension with ties broken by the largest position;

then, while time and ``LOCAL_TRIES`` allow, a local search swapping two seeded random
positions and keeping a swap that lowers the cost. In each order the mask comes from
the exact optimum (CP-SAT, n <= ``EXACT_N``, with the timeout) or :func:`heuristic`.

The answer is in the NEW order: new position ``i`` holds old position ``perm[i]``, the
mask realises ``T[perm][:, perm]`` (re-checked), and ``mask[inverse][:, inverse]`` (with
``inverse = argsort(perm)``) realises ``T`` itself. ``tiles_before`` / ``tiles_after``:
the non-empty tiles of ``M`` (without the diagonal) in the given order and in the new one.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from hasse.solvers.synthesis import cpsat
from hasse.solvers.synthesis.heuristic import heuristic
from hasse.solvers.synthesis.problem import Synthesis, SynthesisBug, check_request
from hasse.theory.synthesis import BLOCK, realises, tile_counts

EXACT_N = 8  # orders at or below this size are synthesised exactly (CP-SAT)
LOCAL_TRIES = 24  # swaps the local search tries at most
LOCAL_MAX_N = 256  # no local search above this size (each try is a whole synthesis)


@dataclass(frozen=True)
class Relabelled:
    """A relabelling: ``perm`` (new position ``i`` holds old ``perm[i]``), the synthesis in the new order."""

    perm: tuple[int, ...]
    synthesis: Synthesis
    tiles_before: int
    tiles_after: int
    order: str = "identity"


def _components(target: np.ndarray) -> np.ndarray:
    """The weakly connected component of each position (numbered by smallest member)."""
    n = target.shape[0]
    link = target | target.T
    comp = np.full(n, -1)
    for s in range(n):
        if comp[s] >= 0:
            continue
        seen = np.zeros(n, dtype=bool)
        seen[s] = True
        frontier = seen.copy()
        while frontier.any():
            frontier = link[frontier].any(axis=0) & ~seen
            seen |= frontier
        comp[seen] = s
    return comp


def candidate_orders(target: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The candidate permutations (module docstring), each a name and ``perm``.

    >>> two = np.zeros((4, 4), dtype=bool)
    >>> for q in range(4):
    ...     two[q, q % 2:q + 1:2] = True
    >>> dict(candidate_orders(two))["components"].tolist()
    [0, 2, 1, 3]
    """
    n = target.shape[0]
    idx = np.arange(n)
    down = target.sum(axis=1)
    cls = np.array([int(np.flatnonzero(target[q] & target[:, q])[0]) for q in range(n)])
    comp = _components(target)
    return [("identity", idx),
            ("extension", np.lexsort((idx, cls, down))),
            ("components", np.lexsort((idx, cls, down, comp))),
            ("extension, last first", np.lexsort((-idx, cls, down)))]


def _tiles(mask: np.ndarray, block: int) -> int:
    return int(np.count_nonzero(tile_counts(mask, block)))


def _synthesise(target, layers, cost, block, deadline) -> Synthesis:
    left = None if not math.isfinite(deadline) else max(0.05, deadline - time.perf_counter())
    if target.shape[0] <= EXACT_N and cpsat.available():
        return cpsat.minimum_cpsat(target, layers, cost, block, left, workers=1)
    return heuristic(target, layers, cost, block, left)


def relabel(target, layers: int, cost: str = "tiles", block: int = BLOCK, timeout: float | None = None,
            seed: int = 0) -> Relabelled:
    """The best of the candidate orders (then a bounded swap search): fewer tiles, never more.

    Two interleaved documents (position ``q`` attends the earlier positions of its parity):

    >>> two = np.zeros((16, 16), dtype=bool)
    >>> for q in range(16):
    ...     two[q, q % 2:q + 1:2] = True
    >>> r = relabel(two, 2, block=4)
    >>> r.tiles_before, r.tiles_after, r.order, r.perm[:8]
    (8, 6, 'components', (0, 2, 4, 6, 8, 10, 12, 14))
    """
    start = time.perf_counter()
    target, layers = check_request(target, layers, cost, block, timeout)
    deadline = math.inf if timeout is None else start + timeout
    n = target.shape[0]

    def score(s: Synthesis) -> tuple[int, int, int]:
        return s.cost, _tiles(s.mask, block), s.pairs

    best = None
    before = None
    seen: set[tuple[int, ...]] = set()
    for name, perm in candidate_orders(target):
        key = tuple(int(p) for p in perm)
        if key in seen or (before is not None and time.perf_counter() > deadline):
            continue
        seen.add(key)
        s = _synthesise(target[np.ix_(perm, perm)], int(layers), cost, block, deadline)
        if before is None:
            before = _tiles(s.mask, block)
        if best is None or score(s) < score(best[1]):
            best = (key, s, name)
    rng = np.random.default_rng(seed)
    tries = 0
    while n >= 2 and n <= LOCAL_MAX_N and tries < LOCAL_TRIES and time.perf_counter() < deadline:
        tries += 1
        i, j = (int(v) for v in rng.choice(n, size=2, replace=False))
        perm = np.array(best[0])
        perm[[i, j]] = perm[[j, i]]
        s = _synthesise(target[np.ix_(perm, perm)], int(layers), cost, block, deadline)
        if score(s) < score(best[1]):
            best = (tuple(int(p) for p in perm), s, best[2] + ", swaps")
    key, s, name = best
    perm = np.array(key)
    if not realises(s.mask, target[np.ix_(perm, perm)], int(layers)):
        raise SynthesisBug("the relabelled mask does not realise the relabelled target")
    return Relabelled(perm=key, synthesis=s, tiles_before=before, tiles_after=_tiles(s.mask, block), order=name)

"""Mask synthesis, the problem: targets, realising masks within L layers, their costs, necessary pairs.

Definitions (the contract of ``solvers/synthesis/`` and of the constructions):

- A **target** ``T`` is a preorder on ``n`` positions: an ``(n, n)`` bool matrix,
  reflexive and transitive (:func:`check_target`).
- A mask ``M`` **realises** ``T`` within ``L`` layers when ``(M or I)^L == T``
  (Boolean power, :func:`hasse.theory.reach.reach` with the residual): every pair of
  ``T`` is reached within ``L`` hops and nothing outside ``T`` is ever reached; then
  every deeper power is ``T`` too (``T`` is transitive). A pair of ``M`` outside ``T``
  is reached at depth 1 already, so a realising mask lies inside ``T``.
- Cost ``"pairs"`` (:func:`pair_cost`): every allowed entry of ``M``, the diagonal
  entries it has included (a query attending itself costs a pair in attention FLOPs).
  A minimal mask never needs a diagonal entry (the residual adds ``I``), so the
  optimum has none and its cost is its off-diagonal pairs.
- Cost ``"tiles"`` (:func:`tile_cost`): the non-empty ``B x B`` blocks of ``M``, full
  and partial counted apart, as FlexAttention's ``create_block_mask`` counts them
  (the mask padded with blocked entries to a multiple of ``B``: an edge block is full
  only when every padded entry of it is allowed, so never when ``B`` does not divide
  ``n``).
- **Necessary pairs** (:func:`necessary_pairs`): pairs every realising mask contains.
  With ``L = 1`` that is every off-diagonal pair of ``T``. With any ``L``: a pair
  ``(q, k)`` of ``T``, ``q != k``, with no third position ``j`` such that
  ``T[q, j]`` and ``T[j, k]``. Proof: a realising ``M`` reaches ``k`` from ``q`` by a
  walk ``q = j_0, j_1, ..., j_h = k`` of edges of ``M`` (diagonal steps dropped);
  every edge lies in ``T`` and ``T`` is transitive, so each inner ``j_i`` has
  ``T[q, j_i]`` and ``T[j_i, k]``; with no such third position the walk has no inner
  position other than ``q`` or ``k``, and a walk from ``q`` to ``k`` through only
  ``q`` and ``k`` uses the edge ``(q, k)``. Nothing more is claimed.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.reach import reach

COSTS = ("pairs", "tiles")
BLOCK = 128  # FlexAttention's default block size


def check_target(target, source: str = "target") -> np.ndarray:
    """The target as an ``(n, n)`` bool array; InputError unless square, reflexive and transitive.

    >>> check_target([[1, 0], [1, 1]]).astype(int).tolist()
    [[1, 0], [1, 1]]
    >>> check_target([[1, 1, 0], [0, 1, 1], [0, 0, 1]])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: target: not transitive: (0, 1) and (1, 2) but not (0, 2)
    """
    arr = np.asarray(target)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise InputError(f"a target is a non-empty square matrix, got shape {arr.shape}", source)
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise InputError("a target holds 0/1 or bool entries only", source)
        arr = arr.astype(bool)
    missing = np.flatnonzero(~np.diag(arr))
    if missing.size:
        raise InputError(f"not reflexive: position {int(missing[0])} lacks its diagonal entry", source)
    two = _product(arr, arr) > 0
    bad = np.argwhere(two & ~arr)
    if bad.size:
        q, k = (int(v) for v in bad[0])
        j = int(np.flatnonzero(arr[q] & arr[:, k])[0])
        raise InputError(f"not transitive: ({q}, {j}) and ({j}, {k}) but not ({q}, {k})", source)
    return arr


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` of two 0/1 matrices, exactly, as counts: a float32 BLAS product is exact for
    ``n < 2^24`` (every partial sum is an integer below ``2^24``); int64 products have no BLAS and
    took minutes at 3,070 positions.

    >>> _product(np.ones((2, 2), dtype=bool), np.ones((2, 2), dtype=bool)).tolist()
    [[2, 2], [2, 2]]
    """
    if a.shape[1] >= 1 << 24:
        return a.astype(np.int64) @ b.astype(np.int64)
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.int64)


def _check_layers(layers) -> int:
    if isinstance(layers, bool) or not isinstance(layers, (int, np.integer)) or layers < 1:
        raise InputError(f"layers must be an integer >= 1, got {layers!r}")
    return int(layers)


def realises(mask, target, layers: int) -> bool:
    """Whether ``(M or I)^layers == T`` (the concrete engine, :func:`theory.reach.reach`).

    >>> chain = np.tril(np.ones((3, 3), dtype=bool))
    >>> path = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=bool)
    >>> realises(path, chain, 2), realises(path, chain, 1)
    (True, False)
    """
    target = check_target(target)
    layers = _check_layers(layers)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != target.shape:
        raise InputError(f"mask shape {mask.shape} differs from the target's {target.shape}")
    return bool(np.array_equal(reach(mask, layers), target))


def pair_cost(mask) -> int:
    """Cost ``"pairs"``: every allowed entry of ``M``, its diagonal entries included.

    >>> pair_cost(np.eye(3, dtype=bool)), pair_cost([[0, 0], [1, 0]])
    (3, 1)
    """
    return int(np.count_nonzero(np.asarray(mask, dtype=bool)))


def tile_cost(mask, block: int = BLOCK) -> tuple[int, int]:
    """Cost ``"tiles"``: ``(full, partial)`` non-empty ``block x block`` tiles of ``M`` padded to a multiple of ``block``.

    >>> tile_cost(np.tril(np.ones((4, 4), dtype=bool)), 2)
    (1, 2)
    >>> tile_cost(np.ones((3, 3), dtype=bool), 2)
    (1, 3)
    """
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise InputError(f"block must be an integer >= 1, got {block!r}")
    counts = tile_counts(mask, block)
    full = int(np.count_nonzero(counts == block * block))
    partial = int(np.count_nonzero((counts > 0) & (counts < block * block)))
    return full, partial


def tile_counts(mask, block: int) -> np.ndarray:
    """The allowed entries of each tile, ``(ceil(n / block), ceil(n / block))`` ints (padding blocked)."""
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    t = -(-n // block)
    padded = np.zeros((t * block, t * block), dtype=np.int64)
    padded[:n, :n] = mask
    return padded.reshape(t, block, t, block).sum(axis=(1, 3))


def tiles_of(n: int, block: int) -> np.ndarray:
    """``(n, n)`` ints: the tile number of each entry (row-major over the tile grid)."""
    t = -(-n // block)
    idx = np.arange(n) // block
    return idx[:, None] * t + idx[None, :]


def necessary_pairs(target, layers: int = 2) -> np.ndarray:
    """``(n, n)`` bool: pairs every mask realising ``T`` within ``layers`` contains (module docstring's proof).

    >>> necessary_pairs(np.tril(np.ones((3, 3), dtype=bool))).astype(int).tolist()
    [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    >>> int(necessary_pairs(np.tril(np.ones((3, 3), dtype=bool)), 1).sum())
    3
    """
    target = check_target(target)
    layers = _check_layers(layers)
    n = target.shape[0]
    off = target & ~np.eye(n, dtype=bool)
    if layers == 1:
        return off
    between = _product(target, target)  # j with T[q, j] and T[j, k], q and k themselves counted
    # q and k always count for a pair of T (T[q, q], T[q, k] and T[q, k], T[k, k]): 2 when q != k.
    return off & (between == 2)


def dense_mask(target) -> np.ndarray:
    """``T`` minus its diagonal: the one realisation within one layer, and one within any ``L``."""
    target = check_target(target)
    return target & ~np.eye(target.shape[0], dtype=bool)

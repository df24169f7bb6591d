"""Every labelled preorder on ``n`` positions, in packed rows: the limits ``R*`` a mask can have.

A statement whose predicate reads a mask ``M`` only through its limit ``R*(M)``
(a reflexive, transitive relation: a preorder) needs one mask per limit instead of
every mask: the preorder ``P`` itself, written as the zero-diagonal mask ``P - I``
(whose limit is ``P`` again, the residual adding the diagonal back). n = 7:
9,535,241 preorders (OEIS A000798) instead of 2^42 masks.

:func:`preorder_masks` builds them position by position, vectorised. A preorder
``R'`` on ``m + 1`` positions restricts to a preorder ``R`` on the first ``m`` (any
restriction of a reflexive transitive relation is one), and ``R'`` is ``R`` plus
the column set ``C = {q : R'[q, m]}`` and the row set ``D = {k : R'[m, k]}``.
``R'`` is transitive exactly when (checking every triple that involves ``m``):

- ``C`` is closed: ``R[q, c]`` with ``c`` in ``C`` puts ``q`` in ``C``;
- ``D`` is closed: ``R[d, k]`` with ``d`` in ``D`` puts ``k`` in ``D``;
- ``C x D`` lies in ``R`` (``q -> m -> k`` must be ``q -> k``).

So each preorder on ``m + 1`` positions arises exactly once, from its restriction
and its ``(C, D)``; the counts are checked against A000798 (:data:`PREORDER_COUNTS`)
and, for small ``n``, against the closures of every mask (tests/test_preorders.py).

>>> sum(rows.shape[1] for rows in preorder_masks(3))
29
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from hasse.theory import batch
from hasse.theory.errors import InputError

# OEIS A000798: labelled preorders (quasi-orders, finite topologies) on n points, n = 0 … 8.
PREORDER_COUNTS = (1, 1, 4, 29, 355, 6942, 209527, 9535241, 642779354)
MAX_N = 8  # the reach of the enumeration here (n = 8: 6.4e8 preorders, about 100 s per 1e7)


def _subsets(m: int) -> np.ndarray:
    """``(2^m, m)`` bool: subset ``s`` holds position ``k`` iff bit ``k`` of ``s``."""
    s = np.arange(1 << m)
    return ((s[:, None] >> np.arange(m)) & 1).astype(bool)


def _extend(rel: np.ndarray, chunk: int = 2048) -> Iterator[np.ndarray]:
    """Every preorder on ``m + 1`` positions from the preorders ``rel`` ``(B, m, m)`` bool (diagonal set)."""
    count, m, _ = rel.shape
    subs = _subsets(m)  # (S, m)
    sub_u8 = subs.astype(np.uint8)
    weights = (1 << np.arange(m + 1)).astype(np.int64)
    for start in range(0, count, chunk):
        r = rel[start:start + chunk]  # (b, m, m)
        r8 = r.astype(np.uint8)
        # C closed: every q with R[q, c] for some c in C is in C.
        into = np.einsum("bqk,sk->bsq", r8, sub_u8) > 0  # (b, S, m): q reaches into the set
        closed_c = ~(into & ~subs[None]).any(axis=2)  # (b, S)
        # D closed: every k with R[d, k] for some d in D is in D.
        outof = np.einsum("sd,bdk->bsk", sub_u8, r8) > 0  # (b, S, m)
        closed_d = ~(outof & ~subs[None]).any(axis=2)
        # C x D in R: D within the positions every member of C reaches.
        rowbits = (r.astype(np.int64) * weights[:m]).sum(axis=2)  # (b, m): row q as bits k
        full = (1 << m) - 1
        allowed = np.where(subs[None, :, :], rowbits[:, None, :], full)  # (b, S, m)
        allowed = np.bitwise_and.reduce(allowed, axis=2)  # (b, S): the D's bits allowed for C = s
        d_bits = np.arange(1 << m)
        ok = (closed_c[:, :, None] & closed_d[:, None, :]
              & ((d_bits[None, None, :] & ~allowed[:, :, None]) == 0))  # (b, C, D)
        b_i, c_i, d_i = np.nonzero(ok)
        out = np.zeros((len(b_i), m + 1, m + 1), dtype=bool)
        out[:, :m, :m] = r[b_i]
        out[:, :m, m] = subs[c_i]
        out[:, m, :m] = subs[d_i]
        out[:, m, m] = True
        yield out


def _all(n: int) -> np.ndarray:
    """Every preorder on ``n`` positions, ``(P, n, n)`` bool with the diagonal (n small enough for memory)."""
    rel = np.ones((1, 1, 1), dtype=bool) if n else np.zeros((1, 0, 0), dtype=bool)
    for _ in range(1, n):
        rel = np.concatenate(list(_extend(rel)))
    return rel


def preorder_masks(n: int, batch_size: int = 1 << 16) -> Iterator[np.ndarray]:
    """Batches of packed rows ``(n, B)``: the zero-diagonal mask ``P - I`` of every labelled preorder ``P``.

    Each mask's limit is its preorder, and every mask's limit is one of them.
    InputError for ``n`` outside ``1 … MAX_N``.
    """
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_N:
        raise InputError(f"preorder enumeration: n must be between 1 and {MAX_N}, got {n!r}")
    base = _all(n - 1)  # at most 9.5M at n = 8
    eye = np.eye(n, dtype=bool)
    pending = []
    size = 0
    for block in (_extend(base) if n > 1 else iter([np.ones((1, 1, 1), dtype=bool)])):
        pending.append(batch.pack(block & ~eye))
        size += block.shape[0]
        if size >= batch_size:
            yield np.concatenate(pending, axis=1)
            pending, size = [], 0
    if pending:
        yield np.concatenate(pending, axis=1)


def preorder_count(n: int) -> int:
    """The number of labelled preorders on ``n`` positions (A000798), ``n <= 8``.

    >>> preorder_count(4)
    355
    """
    if not 0 <= n < len(PREORDER_COUNTS):
        raise InputError(f"preorder count: n must be between 0 and {len(PREORDER_COUNTS) - 1}, got {n}")
    return PREORDER_COUNTS[n]

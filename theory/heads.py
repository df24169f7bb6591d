"""Heads and batches: a mask_mod evaluated over declared ranges, and the mask of one layer.

Definitions (design.md §2). A FlexAttention ``mask_mod(b, h, q_idx, kv_idx)`` may
give each head ``h`` and batch row ``b`` its own mask ``M_{b,h}``. Output ``q`` of a
layer depends on input ``k`` iff some head lets it, so *the layer's mask for batch
row b* is the union ``M_b = M_{b,0} ∨ … ∨ M_{b,H-1}`` (with the residual,
``A_b = I ∨ M_b``); batch rows are separate problems, checked one by one.

Empty rows are read per head, before the union: a query that attends nothing in
head ``h`` depends, in that head, on whatever the kernel makes of an empty row
(:mod:`theory.empty_rows`), so under ``attend-all`` that head's row becomes all
true even when another head attends a few keys.

A range that is not declared must not matter: :func:`mask_mod_grid` evaluates an
undeclared axis at 0 only after checking that other values give the same mask
(:func:`theory.inputs.mask_mod.require_independent`), and raises
:class:`theory.inputs.mask_mod.RangeNeeded` otherwise — never a silent choice of ``h = 0``.

>>> grid = mask_mod_grid(lambda b, h, q, kv: (q >= kv) | (h == 1), 3, heads=2)
>>> grid.masks.shape, bool(grid.layer(0)[0].all())
((1, 2, 3, 3), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from hasse.theory.empty_rows import EmptyRows, apply_empty_row_policy, empty_rows, refuse, require_policy
from hasse.theory.errors import InputError
from hasse.theory.limits import check_positions
from hasse.theory.mask import as_mask, square_up
from hasse.theory.inputs.mask_mod import (MaskModFallback, check_n, check_size_free, evaluate_mask_mod,
                                          require_independent)
from hasse.theory.inputs.user_files import resolve_function
from hasse.theory.user_code import require_permission
from hasse.theory.user_code import run as run_user_code


@dataclass(frozen=True)
class HeadMasks:
    """Masks per batch row and head: ``masks[b, h]`` is ``M_{b,h}`` (``(B, H, n, n)`` bool)."""

    masks: np.ndarray  # (B, H, n, n) bool
    heads: int | None  # H as declared; None: not declared (the mask does not read h)
    batch: int | None  # B as declared; None: not declared (the mask does not read b)
    key_only: tuple[int, ...] = ()  # positions that only feed the queries (theory.mask.square_up)
    key_only_kind: str = ""  # "cache" | "memory" | "" (none)

    @property
    def n(self) -> int:
        return self.masks.shape[-1]

    @property
    def batch_rows(self) -> int:
        """How many batch rows are checked (1 when the batch was not declared)."""
        return self.masks.shape[0]

    def head_empty_rows(self, b: int) -> tuple[tuple[int, ...], ...]:
        """Per head of batch row ``b``, the queries that attend no key in that head."""
        return tuple(empty_rows(m, self.key_only) for m in self.masks[b])

    def layer(self, b: int, policy: str = "attend-none", source: str | None = None) -> tuple[np.ndarray, EmptyRows]:
        """The layer's mask for batch row ``b`` (union over heads, each head's empty rows read by ``policy``).

        ``EmptyRows.rows`` lists every query that is empty in some head.

        >>> g = single(np.array([[0, 0], [1, 1]], dtype=bool))
        >>> m, found = g.layer(0, "attend-all")
        >>> m.astype(int).tolist(), found.rows
        ([[1, 1], [1, 1]], (0,))
        """
        extra = {"key_only": self.key_only} if self.key_only else {}
        return layer_mask(self.masks[b], policy, source, **extra)


def layer_mask(head_masks, policy: str = "attend-none", source: str | None = None,
               key_only=()) -> tuple[np.ndarray, EmptyRows]:
    """``OR`` over heads of each head's mask after the empty-row ``policy`` (see :class:`HeadMasks`).

    Rows of ``key_only`` positions are never empty rows (:func:`theory.empty_rows.empty_rows`).

    >>> causal = np.tril(np.ones((2, 2), dtype=bool))
    >>> lonely = np.array([[0, 0], [0, 1]], dtype=bool)  # head 1: query 0 attends nothing
    >>> layer_mask([causal, lonely], "attend-all")[0].astype(int).tolist()
    [[1, 1], [1, 1]]
    >>> layer_mask([causal, lonely], "attend-none")[0].astype(int).tolist()
    [[1, 0], [1, 1]]
    """
    require_policy(policy)
    head_masks = [np.asarray(m, dtype=bool) for m in head_masks]
    rows = tuple(sorted({q for m in head_masks for q in empty_rows(m, key_only)}))
    if rows and policy == "error":
        raise refuse(rows, source)
    union = np.zeros_like(head_masks[0])
    for m in head_masks:
        union |= apply_empty_row_policy(m, policy, key_only=key_only)[0]
    return union, EmptyRows(rows, policy)


def single(mask, key_only=(), key_only_kind: str = "") -> HeadMasks:
    """One mask for every head and batch row (a spec or a file: nothing to evaluate per head)."""
    return HeadMasks(as_mask(mask)[None, None], None, None, tuple(key_only), key_only_kind)


def _check_range(value, name: str) -> int | None:
    if value is None:
        return None
    try:
        value = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a positive integer, got {value!r}") from None
    if value < 1:
        raise InputError(f"{name} must be a positive integer, got {value}")
    return value


def mask_mod_grid(fn: Callable, n: int, heads: int | None = None, batch: int | None = None, *,
                  source: str = "mask_mod", fallback: MaskModFallback | None = None,
                  kv_len: int | None = None, queries: str | None = None) -> HeadMasks:
    """Evaluate ``fn(b, h, q, kv)`` for ``b < batch`` and ``h < heads`` on ``n`` positions.

    An undeclared range (None) is evaluated at 0 after checking that the mask does
    not change with it (:class:`theory.inputs.mask_mod.RangeNeeded` if it does). With
    ``kv_len`` (or ``queries``) each head's ``n x kv_len`` mask is embedded by
    :func:`theory.mask.square_up`; ``key_only`` holds the key-only positions.

    >>> g = mask_mod_grid(lambda b, h, q, kv: kv <= q + b, 2, batch=2)
    >>> g.masks[:, 0].astype(int).tolist()
    [[[1, 0], [1, 1]], [[1, 1], [1, 1]]]
    """
    n = check_n(n, source)
    keys = n if kv_len is None else check_n(kv_len, source, "kv_len")
    heads, batch = _check_range(heads, "heads"), _check_range(batch, "batch")
    rows, cols = batch or 1, heads or 1
    check_positions(max(n, keys), source, masks=rows * cols, what="masks of every head and batch row")
    masks = np.empty((rows, cols, n, keys), dtype=bool)  # (B, H, Q, K)
    grid_keys = {} if kv_len is None else {"kv_len": kv_len}
    for b in range(rows):
        for h in range(cols):
            masks[b, h] = evaluate_mask_mod(fn, n, source=source, fallback=fallback, b=b, h=h, **grid_keys)
    if heads is None:  # each batch row's mask must not change with h
        for b in range(rows):
            require_independent(fn, n, masks[b, 0], ("h",), source=source, fallback=fallback, b=b, **grid_keys)
    if batch is None:  # each head's mask must not change with b
        for h in range(cols):
            require_independent(fn, n, masks[0, h], ("b",), source=source, fallback=fallback, h=h, **grid_keys)
    check_size_free(fn, n, masks[0, 0], source=source, fallback=fallback, **grid_keys)  # a baked-in size
    if kv_len is None and queries is None:
        return HeadMasks(masks, heads, batch)
    return square_heads(masks, heads, batch, queries, source)


def load_mask_mod_grid(path: str, function: str, source: str, n: int, heads: int | None = None,
                       batch: int | None = None, *, permission, fallback: MaskModFallback | None = None,
                       kv_len: int | None = None, queries: str | None = None) -> HeadMasks:
    """:func:`mask_mod_grid` of ``function`` in the file ``path`` (a name or a factory call), in one bounded run.

    The import, the factory call and every head's evaluation run in the child of
    :func:`theory.user_code.run`; ``permission`` as :func:`theory.inputs.user_files.import_function`
    (None: refused before anything runs).
    """
    require_permission(permission, source)
    n = check_n(n, source)
    keys = n if kv_len is None else check_n(kv_len, source, "kv_len")
    heads, batch = _check_range(heads, "heads"), _check_range(batch, "batch")
    check_positions(max(n, keys), source, masks=(batch or 1) * (heads or 1),
                    what="masks of every head and batch row")  # before it runs

    def evaluate() -> HeadMasks:
        fn = resolve_function(path, function, source, permission)
        return mask_mod_grid(fn, n, heads, batch, source=source, fallback=fallback, kv_len=kv_len, queries=queries)

    return run_user_code(evaluate, source=source, what="mask_mod", path=path)


def square_heads(masks, heads: int | None, batch: int | None, queries: str | None, source: str) -> HeadMasks:
    """``(B, H, Q, K)`` masks embedded head by head in square masks (:func:`theory.mask.square_up`).

    >>> g = square_heads(np.ones((1, 1, 1, 3), dtype=bool), None, None, None, "m")
    >>> g.masks.shape, g.key_only
    ((1, 1, 3, 3), (0, 1))
    """
    rows, cols = masks.shape[:2]
    key_only: tuple[int, ...] = ()
    kind = ""
    squares = None
    for b in range(rows):
        for h in range(cols):
            square, key_only, kind = square_up(masks[b, h], queries, source)
            if squares is None:
                squares = np.empty((rows, cols) + square.shape, dtype=bool)  # (B, H, n, n)
            squares[b, h] = square
    return HeadMasks(squares, heads, batch, key_only, kind)


def shape_name(mask) -> str:
    """A short name for a head's mask: a known shape, or how many pairs it allows.

    >>> shape_name(np.ones((3, 3), dtype=bool)), shape_name(np.tril(np.ones((3, 3), dtype=bool)))
    ('bidirectional (every query attends every key)', 'causal (k <= q)')
    >>> shape_name(np.array([[0, 1], [0, 0]], dtype=bool))
    '1 of 4 pairs'
    """
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    ones = np.ones((n, n), dtype=bool)
    for name, shape in (("bidirectional (every query attends every key)", ones),
                        ("causal (k <= q)", np.tril(ones)), ("anti-causal (k >= q)", np.triu(ones)),
                        ("diagonal (each query attends itself only)", np.eye(n, dtype=bool)),
                        ("empty (no query attends any key)", ~ones)):
        if np.array_equal(mask, shape):
            return name
    return f"{int(mask.sum())} of {n * n} pairs"

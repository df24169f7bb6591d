"""The mask type, its validation, masks made from rules, and a text picture.

A mask is an ``n x n`` boolean numpy array ``M`` with ``M[q, k] = True`` iff query
``q`` may attend key ``k`` (FlexAttention's ``mask_mod`` and SDPA's boolean
``attn_mask`` convention). Information flows ``k -> q``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.limits import check_positions


@dataclass(frozen=True)
class NamedMask:
    """A mask with a readable name for each position.

    ``names[p]`` labels position ``p`` in pictures and tables (``"F3"`` for the
    forward stream of Butterfly, ``"Q1"`` for a query position); plain masks use
    ``"0" .. "n-1"``. ``spec`` records where the mask came from.
    """

    matrix: np.ndarray  # (n, n) bool, M[q, k]
    names: tuple[str, ...]
    spec: str
    key_only: tuple[int, ...] = ()  # positions that feed the queries and attend nothing (square_up)
    key_only_kind: str = ""  # "cache" (queries at the end) or "memory" (separate queries); "" if none

    @property
    def n(self) -> int:
        return self.matrix.shape[0]

    @property
    def queries(self) -> int:
        """How many query rows the mask had before :func:`square_up` (``n`` for a square mask)."""
        return self.n - len(self.key_only)


def default_names(n: int) -> tuple[str, ...]:
    return tuple(str(i) for i in range(n))


def as_array(values, source: str = "mask") -> np.ndarray:
    """``values`` as a rectangular numeric numpy array (any rank); ragged rows and objects are an InputError.

    >>> as_array([[1, 0], [1, 1]]).shape
    (2, 2)
    >>> as_array([[1], [None]])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: mask: rows have different lengths or hold non-numbers
    """
    try:
        arr = np.asarray(values)
    except Exception as exc:  # ragged lists and the like
        raise InputError(f"not a rectangular array ({exc})", source) from None
    if arr.dtype == object:
        raise InputError("rows have different lengths or hold non-numbers", source)
    return arr


def as_mask(values, source: str = "mask", *, square: bool = True) -> np.ndarray:
    """Validate ``values`` as a mask and return it as a C-contiguous bool array.

    Accepts anything numpy can turn into a 2-D array of 0/1 or booleans; with
    ``square=False`` a ``(Q, K)`` array with ``Q != K`` passes too (for :func:`square_up`).

    >>> as_mask([[1, 0], [1, 1]]).tolist()
    [[True, False], [True, True]]
    >>> as_mask([[1, 2], [0, 1]])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: mask: values must be 0/1 or true/false, found 2 at [0, 1]
    """
    arr = as_array(values, source)
    if arr.ndim != 2:
        raise InputError(f"a mask must be 2-D, got {arr.ndim}-D with shape {arr.shape}", source)
    if square and arr.shape[0] != arr.shape[1]:
        raise InputError(f"a mask must be square, got shape {arr.shape[0]} x {arr.shape[1]}", source)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError("empty mask (n = 0)", source)
    if arr.dtype == bool:
        return np.ascontiguousarray(arr)
    if not (np.issubdtype(arr.dtype, np.number)):
        raise InputError(f"values must be 0/1 or true/false, got dtype {arr.dtype}", source)
    if np.issubdtype(arr.dtype, np.floating) and np.isnan(arr).any():
        q, k = np.argwhere(np.isnan(arr))[0]
        raise InputError(f"NaN at [{q}, {k}]", source)
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        q, k = np.argwhere(bad)[0]
        value = arr[q, k].item()
        raise InputError(f"values must be 0/1 or true/false, found {value:g} at [{q}, {k}]", source)
    return np.ascontiguousarray(arr == 1)


QUERY_LAYOUTS = ("end", "separate")
KEY_ONLY_KINDS = {"cache": "KV cache", "memory": "cross-attended memory"}


def square_up(matrix, queries: str | None = "end", source: str = "mask") -> tuple[np.ndarray, tuple[int, ...], str]:
    """Embed a ``(Q, K)`` mask in a square mask over positions: ``(square, key_only, kind)``.

    Definition (design.md §2, non-square masks). Row ``i`` of ``matrix`` is query
    ``i``, column ``k`` key ``k``. Positions that are keys only (a KV cache, a
    cross-attended memory) feed the queries and attend nothing: their rows are all
    false (with the residual they depend on themselves only).

    - ``queries="end"`` (``None`` picks it when ``Q <= K``): the queries are the
      *last* ``Q`` of the ``K`` key positions (Hugging Face's ``cache_position``:
      decoding ``1 x (cache + 1)``, chunked prefill, tree speculation over a cached
      prefix). ``n = K``; positions ``0 … K-Q-1`` are key-only, kind ``"cache"``.
      A square mask is returned as it is (no key-only positions, kind ``""``).
    - ``queries="separate"`` (required when ``Q > K``: cross-attention): positions
      ``0 … K-1`` are the memory (key-only, kind ``"memory"``) and ``K … K+Q-1`` the
      queries; ``n = K + Q``; query ``i`` attends the memory columns ``matrix[i]``
      and nothing else.

    Raises InputError (one line naming ``source``) when ``Q > K`` without
    ``queries="separate"``, or ``queries`` is not a layout.

    >>> sq, key_only, kind = square_up([[1, 1, 1]])  # decode one token after a cache of 2
    >>> sq.astype(int).tolist(), key_only, kind
    ([[0, 0, 0], [0, 0, 0], [1, 1, 1]], (0, 1), 'cache')
    >>> sq, key_only, kind = square_up([[1, 0], [1, 1], [0, 1]], "separate")  # 3 queries, memory of 2
    >>> sq.astype(int)[2:].tolist(), key_only, kind
    ([[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 0, 0, 0]], (0, 1), 'memory')
    >>> square_up([[1], [1]], source="m.npy")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.npy: 2 query rows but 1 key column: more queries than keys cannot be the last keys; read it as cross-attention with queries=separate
    """
    if queries is not None and queries not in QUERY_LAYOUTS:
        raise InputError(f"queries must be one of {', '.join(QUERY_LAYOUTS)}, got {queries!r}", source)
    mask = as_mask(matrix, source, square=False)
    q, k = mask.shape
    if queries == "separate":
        n = k + q
        check_positions(n, source)
        square = np.zeros((n, n), dtype=bool)
        square[k:, :k] = mask  # (Q, K): the queries attend the memory only
        return square, tuple(range(k)), "memory"
    if q > k:
        raise InputError(f"{q} query rows but {k} key column{'s' if k != 1 else ''}: more queries than keys "
                         "cannot be the last keys; read it as cross-attention with {queries=separate}", source,
                         param="queries")
    if q == k:
        return mask, (), ""
    check_positions(k, source)  # before the (K, K) square: a row of 10^6 keys is refused here
    square = np.zeros((k, k), dtype=bool)
    square[k - q:] = mask  # (Q, K): the queries are the last Q positions
    return square, tuple(range(k - q)), "cache"


def grid(rule: Callable, n: int) -> np.ndarray:
    """Evaluate ``rule(q, k)`` on the ``n x n`` index grid (numpy broadcasting).

    >>> grid(lambda q, k: k <= q, 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    k = np.arange(n)[None, :]
    out = np.empty((n, n), dtype=bool)
    step = max(1, (1 << 22) // max(n, 1))  # rows at a time: a rule's temporaries (int64 indices) stay ~32 MB
    for start in range(0, n, step):
        q = np.arange(start, min(n, start + step))[:, None]
        out[start:start + len(q)] = np.broadcast_to(np.asarray(rule(q, k), dtype=bool), (len(q), n))
    return out


def name_rule(rule: Callable, name: str) -> Callable:
    """Give a rule made by a factory its readable name (``sliding_window_w4``)."""
    rule.__name__ = name
    rule.__qualname__ = name
    return rule


def named_mask(
    rule: Callable, size: int, spec: str, names: Callable[[], Iterable[str]] | None = None
) -> NamedMask:
    """Evaluate ``rule`` on the ``size x size`` grid, after checking that it fits in memory.

    ``names()`` gives the position names (default ``"0" … "size-1"``); it is called
    only after the size check, so a huge size fails fast instead of building names.
    """
    check_positions(size)
    labels = tuple(names()) if names is not None else default_names(size)
    return NamedMask(grid(rule, size), labels, spec)


def to_text(mask: NamedMask) -> str:
    """A picture of the mask: one row per query, ``1`` where it attends, ``.`` where not.

    >>> print(to_text(NamedMask(grid(lambda q, k: k <= q, 2), default_names(2), "causal:n=2")))
    causal:n=2  (row q attends column k)
       0 1
    0  1 .
    1  1 1
    """
    width = max(len(name) for name in mask.names) + 1
    lines = [f"{mask.spec}  (row q attends column k)"]
    lines.append(" " * width + "".join(name.rjust(width) for name in mask.names))
    for name, row in zip(mask.names, mask.matrix):
        cells = "".join(("1" if v else ".").rjust(width) for v in row)
        lines.append(name.ljust(width) + cells)
    return "\n".join(line.rstrip() for line in lines)

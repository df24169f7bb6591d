"""Helpers for users' own test suites. Importable without z3 or torch.

>>> import numpy as np
>>> causal = np.tril(np.ones((4, 4), dtype=bool))
>>> assert_no_leak(causal, labels=[1, 2, 3, None])          # next-token prediction: clean
>>> assert_no_leak(causal, labels=[None, 0, None, None])    # predicts a token it has seen
Traceback (most recent call last):
...
AssertionError: 1 leak in the limit (every depth):
  position 1 (target 0) depends on position 0, which holds token 0, at depth 1: 0 -> 1
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.leak import nearest_sources
from hasse.theory.mask import as_mask


def _index_sets(values, n: int, what: str) -> list[frozenset[int]]:
    if len(values) != n:
        raise ValueError(f"{what}: {len(values)} entries for a mask of size {n}")
    out = []
    for v in values:
        if v is None:
            out.append(frozenset())
        elif isinstance(v, (int, np.integer)):
            out.append(frozenset([int(v)]))
        else:
            out.append(frozenset(int(x) for x in v))
    return out


def _as_matrix(mask, n: int | None) -> np.ndarray:
    if isinstance(mask, str):  # a built-in spec, a file or file.py:mask_mod, as on the command line
        from hasse.masks_in import load

        return load(mask, n).matrix
    if callable(mask):
        if n is None:
            raise ValueError("a mask_mod needs n, the number of positions")
        from hasse.theory.mask_mod import mask_mod_to_mask

        from hasse.gpu_check.mask_mod import torch_fallback_or_none

        return mask_mod_to_mask(mask, n, source=getattr(mask, "__name__", "mask_mod"),
                                fallback=torch_fallback_or_none())
    return as_mask(mask)


def assert_no_leak(
    mask: np.ndarray | Callable,
    labels: Sequence[int | Iterable[int] | None],
    sources: Sequence[int | Iterable[int] | None] | None = None,
    layers: int | None = None,
    n: int | None = None,
) -> None:
    """Fail (AssertionError) if any supervised position depends on a position holding its target.

    Parameters
    ----------
    mask : an ``(n, n)`` 0/1 matrix with ``mask[q, k]`` = q attends k, a
        FlexAttention-style ``mask_mod(b, h, q_idx, kv_idx)`` together with ``n``,
        or a string as the command line takes it (``"causal:n=4"``, a file).
    labels : per position, the token(s) predicted there (None when unsupervised).
    sources : per position, the token(s) whose content it holds (None for a
        ``[MASK]``); default: position ``i`` holds token ``i``.
    layers : check an ``L``-layer model; default every depth (the limit).
    n : number of positions, for a mask_mod.

    The message lists every leak with its shortest witness path (source first).
    """
    try:
        matrix = _as_matrix(mask, n)
    except InputError as exc:
        raise ValueError(str(exc)) from None
    size = matrix.shape[0]
    targets = _index_sets(labels, size, "labels")
    held = _index_sets(sources, size, "sources") if sources is not None else [frozenset([i]) for i in range(size)]
    queries = [(p, t) for p in range(size) for t in sorted(targets[p])]
    paths = nearest_sources(matrix, held, queries)
    leaks = [(p, t, path) for (p, t) in queries if (path := paths.get((p, t))) and
             (layers is None or len(path) - 1 <= layers)]
    if leaks:
        where = "in the limit (every depth)" if layers is None else f"within {layers} layers"
        lines = [f"{len(leaks)} leak{'s' if len(leaks) > 1 else ''} {where}:"]
        for p, t, path in leaks[:20]:
            lines.append(f"  position {p} (target {t}) depends on position {path[0]}, which holds token {t}, "
                         f"at depth {len(path) - 1}: " + " -> ".join(map(str, path)))
        if len(leaks) > 20:
            lines.append(f"  ... and {len(leaks) - 20} more")
        raise AssertionError("\n".join(lines))

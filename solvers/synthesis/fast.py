"""Mask synthesis, fast paths: the target check, the necessary pairs and the realises check on big targets.

:mod:`hasse.theory.synthesis` counts 2-step paths by an int64 matrix product (27 s at
n = 1024 on one core); here the same counts come from a float32 product (0.15 s; exact,
the counts being below 2^24), so the heuristic reaches a few thousand positions:

- :func:`checked`: a square bool reflexive transitive matrix passes as it is; anything
  else goes to :func:`hasse.theory.synthesis.check_target` (its InputError, its conversions);
- :func:`necessary`: :func:`hasse.theory.synthesis.necessary_pairs` of a checked target;
- :func:`realises`: :func:`hasse.theory.synthesis.realises` of a checked target: the
  concrete engine :func:`hasse.theory.reach.reach`, compared with ``T``.

tests/test_synthesis_optim.py checks each against its theory original.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.reach import reach
from hasse.theory.synthesis import check_target


def _two_step(target: np.ndarray) -> np.ndarray:
    """``T @ T`` as exact integer-valued float32 counts."""
    f = target.astype(np.float32)
    return np.rint(f @ f)


def checked(target) -> np.ndarray:
    """The target as an ``(n, n)`` bool array, checked (InputError as ``check_target`` says).

    >>> int(checked(np.tril(np.ones((3, 3), dtype=bool))).sum())
    6
    """
    arr = np.asarray(target)
    if (arr.ndim == 2 and arr.shape[0] == arr.shape[1] and arr.shape[0] > 0 and arr.dtype == bool
            and np.diag(arr).all() and not ((_two_step(arr) > 0.5) & ~arr).any()):
        return arr
    return check_target(arr)


def necessary(target: np.ndarray, layers: int) -> np.ndarray:
    """The necessary pairs of a checked target (``necessary_pairs``'s definition and proof).

    >>> necessary(np.tril(np.ones((3, 3), dtype=bool)), 2).astype(int).tolist()
    [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    """
    off = target & ~np.eye(target.shape[0], dtype=bool)
    return off if layers == 1 else off & (_two_step(target) == 2)


def realises(mask, target: np.ndarray, layers: int) -> bool:
    """Whether ``(M or I)^layers == T`` for a checked target, by the concrete engine.

    >>> realises(np.eye(2, dtype=bool), np.eye(2, dtype=bool), 1)
    True
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != target.shape:
        raise InputError(f"mask shape {mask.shape} differs from the target's {target.shape}")
    return bool(np.array_equal(reach(mask, int(layers)), target))

"""Sparse realisations: the fewest attention edges that keep a mask's limit order.

Design.md §2: any mask with the same limit ``R*`` realises the same Hasse diagram.
``sparse_realisation`` keeps one attention edge per Hasse edge (the first member of
the upper class attends the first member of the lower class) and a cycle through
each class of several positions. It has the limit of the original mask; its
convergence depth is then at least the original's and is reported by the engine.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.mask import as_mask
from hasse.theory.order import LimitOrder, mask_to_order


def sparse_realisation(mask: np.ndarray, order: LimitOrder | None = None) -> np.ndarray:
    """The mask of Hasse edges plus a cycle per class (diagonal included, so no row is empty).

    >>> causal = np.tril(np.ones((3, 3), dtype=bool))
    >>> sparse_realisation(causal).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    >>> sparse_realisation(np.ones((3, 3), dtype=bool)).astype(int).tolist()
    [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
    """
    mask = as_mask(mask)
    order = order or mask_to_order(mask)
    out = np.eye(mask.shape[0], dtype=bool)
    for members in order.classes:
        if len(members) > 1:
            for a, b in zip(members, members[1:] + members[:1]):
                out[b, a] = True  # b attends a: a -> b around the cycle
    for lo, up in order.hasse_edges:
        out[order.classes[up][0], order.classes[lo][0]] = True
    return out

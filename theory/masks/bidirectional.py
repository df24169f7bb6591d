"""Bidirectional (full) attention: every query attends every key.

MDLM-style diffusion LMs use it; there leakage is prevented by replacing inputs
with ``[MASK]``, not by the mask, so which positions carry labels matters.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.mask import NamedMask, grid, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import N, require_positive
from hasse.theory.spec import Entry


def bidirectional_mask(q, k):
    """The bidirectional rule: ``q`` attends ``k`` always.

    >>> grid(bidirectional_mask, 2).astype(int).tolist()
    [[1, 1], [1, 1]]
    """
    return np.ones(np.broadcast(q, k).shape, dtype=bool)


def build(n: int) -> NamedMask:
    """The full mask on ``n`` positions: ``M[q, k] = True`` for all ``q, k``.

    Examples
    --------
    >>> build(2).matrix.astype(int).tolist()
    [[1, 1], [1, 1]]
    """
    n = require_positive("n", n)
    return named_mask(bidirectional_mask, n, f"bidirectional:n={n}")


ENTRY = Entry("bidirectional", "full attention: every query attends every key", (N,), build)


def main() -> None:
    print(to_text(build(4)))


if __name__ == "__main__":
    main()

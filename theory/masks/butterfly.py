"""Butterfly Attention: fully supervised bidirectional attention without leakage.

The paper's minimal merge of the ``infill`` task family (design §4). ``3n - 2``
positions: the forward stream ``F_0 … F_{n-2}`` (``x_i``, causal), the backward
stream ``B_1 … B_{n-1}`` (``x_i``, anti-causal), and the prediction stream
``P_0 … P_{n-1}`` (label ``k``), where ``P_k`` reads the left context from the
forward stream and the right context from the backward stream, never ``x_k``.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import N, require_positive
from hasse.theory.spec import Entry


def layout(n: int) -> tuple[tuple[str, int], ...]:
    """``(stream, index)`` of each position: ``("F", 0 … n-2)``, ``("B", 1 … n-1)``, ``("P", 0 … n-1)``.

    >>> layout(3)
    (('F', 0), ('F', 1), ('B', 1), ('B', 2), ('P', 0), ('P', 1), ('P', 2))
    """
    n = require_positive("n", n)
    return (
        tuple(("F", i) for i in range(n - 1))
        + tuple(("B", i) for i in range(1, n))
        + tuple(("P", k) for k in range(n))
    )


def make_butterfly(n: int):
    """Return the Butterfly rule on ``3n - 2`` positions (named ``butterfly_n<n>``).

    Positions: ``F_i`` at ``i`` (``0 <= i <= n-2``), ``B_i`` at ``n - 2 + i``
    (``1 <= i <= n-1``), ``P_k`` at ``2n - 2 + k`` (``0 <= k <= n-1``).

    - ``F_i`` attends ``F_j`` iff ``j <= i``;
    - ``B_i`` attends ``B_j`` iff ``j >= i``;
    - ``P_k`` attends ``F_j`` iff ``j < k``, ``B_j`` iff ``j > k``, and ``P_k`` itself;
    - nothing else.

    ``n = 1`` is allowed: one position, ``P_0``, attending only itself.

    Examples
    --------
    >>> grid(make_butterfly(2), 4).astype(int).tolist()
    [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1]]
    """
    n = require_positive("n", n)
    b_start, p_start = n - 1, 2 * n - 2

    def stream_and_index(p):
        stream = np.where(p < b_start, 0, np.where(p < p_start, 1, 2))  # 0 = F, 1 = B, 2 = P
        index = np.where(stream == 0, p, np.where(stream == 1, p - b_start + 1, p - p_start))
        return stream, index

    def rule(q, k):
        qs, i = stream_and_index(q)
        ks, j = stream_and_index(k)
        forward = (qs == 0) & (ks == 0) & (j <= i)
        backward = (qs == 1) & (ks == 1) & (j >= i)
        left = (qs == 2) & (ks == 0) & (j < i)
        right = (qs == 2) & (ks == 1) & (j > i)
        itself = (qs == 2) & (ks == 2) & (j == i)
        return forward | backward | left | right | itself

    return name_rule(rule, f"butterfly_n{n}")


def build(n: int) -> NamedMask:
    """The Butterfly mask: ``3n - 2`` positions named ``F<i>``, ``B<i>``, ``P<k>``.

    See :func:`make_butterfly` for the rule.

    Examples
    --------
    >>> m = build(2)
    >>> m.names
    ('F0', 'B1', 'P0', 'P1')
    >>> m.matrix.astype(int).tolist()
    [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1]]
    """
    rule = make_butterfly(n)
    n = int(n)
    return named_mask(rule, 3 * n - 2, f"butterfly:n={n}", lambda: (f"{s}{i}" for s, i in layout(n)))


ENTRY = Entry(
    "butterfly",
    "Butterfly Attention: 3n-2 positions F, B, P; leak-free bidirectional supervision",
    (N,),
    build,
)


def main() -> None:
    print(to_text(build(4)))


if __name__ == "__main__":
    main()

"""XLNet two-stream attention over a factorisation order.

``2n`` positions: the content stream ``c_0 … c_{n-1}`` at ``0 … n-1``, then the query
stream ``g_0 … g_{n-1}`` at ``n … 2n-1``. Token ``order[0]`` is predicted first,
``order[1]`` next, and so on; ``rank(j)`` is the place of token ``j`` in ``order``.
The query stream ``g_i`` predicts token ``i`` and never sees its content ``c_i``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import require_int_list
from hasse.theory.spec import Entry, Param, plus_joined


def ranks(order: Sequence[int]) -> np.ndarray:
    """``rank[j]``, the place of token ``j`` in ``order`` (the inverse permutation).

    Raises
    ------
    InputError
        ``order`` is not a permutation of ``0 … n-1``.

    >>> ranks((2, 0, 1)).tolist()
    [1, 2, 0]
    """
    order = require_int_list("order", order)
    n = len(order)
    seen = set()
    for value in order:
        if not 0 <= value < n:
            raise InputError(
                f"order must be a permutation of 0..{n - 1}, got {plus_joined(order)} ({value} is out of range)"
            )
        if value in seen:
            raise InputError(f"order must be a permutation of 0..{n - 1}, got {plus_joined(order)} ({value} repeats)")
        seen.add(value)
    rank = np.empty(n, dtype=np.int64)
    rank[np.asarray(order)] = np.arange(n)
    return rank


def make_xlnet(order: Sequence[int]):
    """Return the two-stream rule on ``2n`` positions (named ``xlnet_<order>``).

    With ``c_i`` at position ``i`` and ``g_i`` at ``n + i``:

    - ``c_i`` attends ``c_j`` iff ``rank(j) <= rank(i)`` (itself included);
    - ``g_i`` attends ``c_j`` iff ``rank(j) < rank(i)`` (never its own content);
    - ``g_i`` attends ``g_i`` (its own previous state);
    - nothing else: content never attends the query stream, queries never each other.

    Examples
    --------
    >>> grid(make_xlnet((1, 0)), 4).astype(int).tolist()
    [[1, 1, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]]
    """
    rank = ranks(order)
    n = len(rank)

    def rule(q, k):
        q_query, k_query = q >= n, k >= n
        rq, rk = rank[q % n], rank[k % n]
        content = ~q_query & ~k_query & (rk <= rq)
        query = q_query & ~k_query & (rk < rq)
        itself = q_query & (q == k)
        return content | query | itself

    return name_rule(rule, f"xlnet_{plus_joined(order)}")


def names(n: int) -> tuple[str, ...]:
    """``c0 … c<n-1>`` (content stream), then ``g0 … g<n-1>`` (query stream)."""
    return tuple(f"c{i}" for i in range(n)) + tuple(f"g{i}" for i in range(n))


def build(order: Sequence[int]) -> NamedMask:
    """The XLNet two-stream mask for the factorisation ``order``: ``2n`` positions.

    See :func:`make_xlnet` for the rule.

    Raises
    ------
    InputError
        ``order`` is not a permutation of ``0 … n-1``.

    Examples
    --------
    >>> m = build((1, 0))
    >>> m.names
    ('c0', 'c1', 'g0', 'g1')
    >>> m.matrix.astype(int).tolist()
    [[1, 1, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]]
    """
    rule = make_xlnet(order)
    order = tuple(int(v) for v in order)
    return named_mask(rule, 2 * len(order), f"xlnet:order={plus_joined(order)}", lambda: names(len(order)))


ENTRY = Entry(
    "xlnet",
    "XLNet two-stream attention over a factorisation order: 2n positions c, g",
    (Param("order", "int_list", help="factorisation order, a permutation of 0..n-1, e.g. 2+0+1"),),
    build,
)


def main() -> None:
    print(to_text(build((2, 0, 1))))


if __name__ == "__main__":
    main()

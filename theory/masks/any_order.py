"""The derived layout of the any-order autoregressive family: two streams without the last content.

``2n - 1`` positions for a factorisation ``order`` (a permutation of ``0 … n-1``), with
``rank(j)`` the place of token ``j`` in ``order``:

- content stream ``c_0 … c_{n-2}`` at ``0 … n-2``: position ``p`` holds ``x_{order[p]}`` at
  pos id ``order[p]`` and attends the content positions ``p' <= p`` (causal in the order);
- query stream ``g_0 … g_{n-1}`` at ``n-1 … 2n-2``: ``g_i`` holds ``([MASK], i)``, predicts
  ``x_i`` and attends the content positions ``p < rank(i)`` and itself.

The content of the last token of the order (which XLNet keeps as ``c_{order[n-1]}``) is
left out: no query reads it. This module is a rule only (no catalogue *mask* entry: the
catalogue *task* ``any_order_two_stream`` of :mod:`theory.tasks.derived_orders` uses it).
"""

from __future__ import annotations

from typing import Sequence

from hasse.theory.mask import grid, name_rule  # grid: used by the examples
from hasse.theory.masks.xlnet import ranks
from hasse.theory.spec import plus_joined


def make_any_order_two_stream(order: Sequence[int]):
    """The rule ``rule(q, k)`` on ``2n - 1`` positions (numpy index arrays), see the module docstring.

    Raises
    ------
    InputError
        ``order`` is not a permutation of ``0 … n-1``.

    Examples
    --------
    >>> grid(make_any_order_two_stream((1, 0)), 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    >>> grid(make_any_order_two_stream((0, 1, 2)), 5).astype(int).tolist()
    [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 1, 0, 0], [1, 0, 0, 1, 0], [1, 1, 0, 0, 1]]
    """
    rank = ranks(order)
    n = len(rank)
    content = n - 1  # content positions 0 … n-2, queries n-1 … 2n-2

    def rule(q, k):
        q_query, k_query = q >= content, k >= content
        rq = rank[(q + 1) % n]  # the query's token i = q - (n-1); (q + 1) % n stays inside 0 … n-1
        causal = ~q_query & ~k_query & (k <= q)
        reads = q_query & ~k_query & (k < rq)
        itself = q_query & (q == k)
        return causal | reads | itself

    return name_rule(rule, f"any_order_two_stream_{plus_joined(order)}")


def names(n: int) -> tuple[str, ...]:
    """``c0 … c<n-2>`` (content, by place in the order), then ``g0 … g<n-1>`` (query, by token).

    >>> names(3)
    ('c0', 'c1', 'g0', 'g1', 'g2')
    """
    return tuple(f"c{p}" for p in range(n - 1)) + tuple(f"g{i}" for i in range(n))

"""Multi-token prediction with registers, one pass: a causal content stream, then one register stream per offset.

The derived layout of the ``mtp`` family (theory.tasks.derived_tokens), on ``n >= 2`` tokens and
offsets ``1 … k`` (``1 <= k <= n - 1``):

- content ``x_0 … x_{n-2}`` at positions ``0 … n-2``, causal (it predicts the next token);
- for each offset ``d = 2 … k`` a stream of ``n - d`` registers ``r_{i,d}`` (``i = 0 … n-1-d``)
  starting at ``S_d = (d-1)(2n-d)/2``; ``r_{i,d}`` attends the content ``0 … i`` and itself.

``size = S_{k+1} = k(2n-k-1)/2``. Registers never attend each other and content never attends a
register. This module is the rule only (no catalogue *mask* entry): the task is
``mtp_registers:n,k`` in theory.tasks.derived_tokens.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.mask import grid, name_rule  # grid: used by the examples
from hasse.theory.params import require_at_least, require_positive


def require_mtp(n, k) -> tuple[int, int]:
    """Check ``k >= 1`` and ``n >= k + 1`` (offsets ``1 … k`` need ``k + 1`` tokens); return both.

    Written with checks the tracer records as side conditions (``n >= k + 1`` for a symbolic ``n``).

    >>> require_mtp(4, 4)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: n must be at least 5 (offsets 1 … k need k + 1 tokens), got 4
    """
    k = require_positive("k", k)
    n = require_at_least("n", n, k + 1, "offsets 1 … k need k + 1 tokens")
    return n, k


def stream_start(n, d):
    """``S_d``: the first position of offset ``d``'s register stream (``S_2 = n - 1``: right after the content).

    Linear in ``n`` (``(d-1)·n - (d-1)d/2``), so the rule traces to linear arithmetic.

    >>> [stream_start(5, d) for d in (2, 3, 4, 5)]
    [4, 7, 9, 10]
    """
    return (d - 1) * n - (d - 1) * d // 2


def size(n: int, k: int) -> int:
    """The layout's positions: ``(n - 1) + Σ_{d=2..k} (n - d) = k(2n - k - 1)/2``.

    >>> size(5, 1), size(5, 2), size(5, 4)
    (4, 7, 10)
    """
    return k * (2 * n - k - 1) // 2


def make_mtp_registers(n: int, k: int):
    """Return the layout's rule on ``size(n, k)`` positions (named ``mtp_registers_n<n>_k<k>``).

    ``top(q)``: the last content position ``q`` reads (``q`` itself for content, ``i`` for
    ``r_{i,d}``); ``q`` attends ``key`` iff ``key`` is content with ``key <= top(q)``, or
    ``key == q``.

    >>> grid(make_mtp_registers(3, 2), 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 0, 1]]
    """
    n, k = require_mtp(n, k)
    content = n - 1

    def rule(q, key):
        offset = q * 0
        for d in range(2, k + 1):
            start = stream_start(n, d)
            offset = np.where(q >= start, start, offset)
        top = q - offset
        return ((key < content) & (key <= top)) | (key == q)

    return name_rule(rule, f"mtp_registers_n{n}_k{k}")


def registers(n: int, k: int) -> list[tuple[int, int]]:
    """``(i, d)`` of each register position, in layout order (grouped by ``d``, then ``i``).

    >>> registers(4, 3)
    [(0, 2), (1, 2), (0, 3)]
    """
    n, k = require_mtp(n, k)
    return [(i, d) for d in range(2, k + 1) for i in range(n - d)]

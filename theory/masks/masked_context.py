"""Masked context: the derived layout of the MAE and masked-diffusion families (issue 25), and MAE's published mask.

A *masked set* ``S ⊆ {0 … n-1}``; the visible set ``V`` is its complement. Both rules are
closed forms over ``n`` positions in token order (position ``i`` is token ``i``):

- :func:`make_masked_context` — ``M[q, k] = visible(k) or q == k``: a visible row attends the
  visible keys (the bidirectional encoder), a masked row attends the visible keys and itself.
  It is transitive with the diagonal (dense), so it is its own closure;
- :func:`make_mae_published` — ``M[q, k] = visible(k) or masked(q)``: MAE (He et al. 2022),
  the encoder over the visible patches, the decoder's mask-token rows over every position.

They are rules for catalogue *tasks* (``masked_context``, ``mae_published`` in
:mod:`theory.tasks.derived_masked`), not catalogue masks: a mask spec would need the masked set
anyway, and the task carries it with its labels.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.mask import grid, name_rule  # grid: used by the examples
from hasse.theory.params import require_int_list, require_positive
from hasse.theory.spec import plus_joined


def masked_flags(n: int, masked: Sequence[int], *, keep_visible: bool = False) -> np.ndarray:
    """``flag[i]``: token ``i`` is masked (a bool array of length ``n``), after checking ``masked``.

    ``masked`` must be non-empty, inside ``0 … n-1`` and without repeats; with
    ``keep_visible`` at least one token stays visible (MAE always keeps a patch).

    >>> masked_flags(4, (3, 1)).astype(int).tolist()
    [0, 1, 0, 1]
    >>> masked_flags(2, (0, 1), keep_visible=True)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: masked = 0+1 masks every token of n = 2; at least one must stay visible
    >>> masked_flags(3, (1, 1))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: masked index 1 is given twice
    """
    n = require_positive("n", n)
    masked = require_int_list("masked", masked)
    for i in masked:
        if not 0 <= i < n:
            raise InputError(f"masked index {i} is out of range: the sample has tokens 0…{n - 1}")
    if len(set(masked)) != len(masked):
        repeated = next(i for i in masked if masked.count(i) > 1)
        raise InputError(f"masked index {repeated} is given twice")
    if keep_visible and len(masked) == n:
        raise InputError(f"masked = {plus_joined(masked)} masks every token of n = {n}; at least one must stay visible")
    flag = np.zeros(n, dtype=bool)
    flag[list(masked)] = True
    return flag


def make_masked_context(n: int, masked: Sequence[int]):
    """The derived rule ``M[q, k] = visible(k) or q == k`` on ``n`` positions (named ``masked_context_<S>``).

    Examples
    --------
    >>> grid(make_masked_context(3, (1,)), 3).astype(int).tolist()
    [[1, 0, 1], [1, 1, 1], [1, 0, 1]]
    >>> grid(make_masked_context(2, (0, 1)), 2).astype(int).tolist()
    [[1, 0], [0, 1]]
    """
    visible = ~masked_flags(n, masked)

    def rule(q, k):
        return visible[k] | (q == k)

    return name_rule(rule, f"masked_context_{plus_joined(masked)}")


def make_mae_published(n: int, masked: Sequence[int]):
    """MAE's rule ``M[q, k] = visible(k) or masked(q)`` on ``n`` positions (named ``mae_published_<S>``).

    Examples
    --------
    >>> grid(make_mae_published(3, (1, 2)), 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 1], [1, 1, 1]]
    """
    flag = masked_flags(n, masked, keep_visible=True)
    visible = ~flag

    def rule(q, k):
        return visible[k] | flag[q]

    return name_rule(rule, f"mae_published_{plus_joined(masked)}")


def pair_counts(n: int, masked: int) -> dict[str, int]:
    """The allowed pairs (diagonal included) of the three designs, by formula, for ``|S| = masked``.

    With ``v = n - s``: masked context ``n·v + s``; MAE ``v² + s·n`` (``s(s-1)`` more: the
    mask-to-mask pairs); bidirectional ``n²`` (``s(n-1)`` more: those and the ``v·s``
    visible-to-mask pairs).

    >>> pair_counts(4, 2)
    {'masked_context': 10, 'mae_published': 12, 'bidirectional': 16}
    """
    s, v = masked, n - masked
    return {"masked_context": n * v + s, "mae_published": v * v + s * n, "bidirectional": n * n}

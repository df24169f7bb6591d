"""Fill-in-the-middle: the rearranged order of a split and the derived causal layout.

A split of ``x_0 … x_{n-1}``: the middle ``start … end-1`` (``0 <= start < end <= n``), the
prefix ``0 … start-1`` and the suffix ``end … n-1``, with at least one prefix or suffix token.
The rearranged order is prefix, suffix, middle (``psm``) or suffix, prefix, middle (``spm``)
(Bavarian et al. 2022). The derived layout reads the rearranged sequence causally on
``n - 1`` positions (the last token of the order is never context). Rules only: no catalogue
*mask* entry (the catalogue *tasks* of :mod:`theory.tasks.derived_orders` use them).
"""

from __future__ import annotations

from hasse.theory.errors import InputError
from hasse.theory.mask import grid, name_rule  # grid: used by the examples
from hasse.theory.params import require_at_least, require_int, require_non_negative

MODES = ("psm", "spm")


def require_mode(mode) -> str:
    """``mode`` if it is ``psm`` or ``spm``, else :class:`InputError`."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def require_split(n, start, end) -> tuple[int, int, int]:
    """Check ``0 <= start < end <= n`` with a prefix or a suffix token; return ``(n, start, end)``.

    >>> require_split(4, 0, 4)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: the prefix and suffix tokens must be at least 1 (the middle start … end-1 leaves a prefix or a suffix), got 0
    """
    n = require_at_least("n", n, 2, "a split has a middle and a prefix or suffix")
    start = require_non_negative("start", start)
    end = require_int("end", end)
    # each check on a difference: a symbolic value stays the checked value (the tracer's side conditions)
    require_at_least("end - start", end - start, 1, "the middle start … end-1 is not empty")
    require_non_negative("n - end", n - end)  # the middle ends at end-1 <= n-1
    require_at_least("the prefix and suffix tokens", n - end + start, 1,
                     "the middle start … end-1 leaves a prefix or a suffix")
    return n, start, end


def rearranged(n: int, start: int, end: int, mode: str = "psm") -> tuple[int, ...]:
    """The token indices in the rearranged order: prefix, suffix, middle (psm) or suffix, prefix, middle (spm).

    >>> rearranged(5, 1, 3), rearranged(5, 1, 3, "spm")
    ((0, 3, 4, 1, 2), (3, 4, 0, 1, 2))
    """
    n, start, end = require_split(n, start, end)
    prefix, suffix, middle = tuple(range(start)), tuple(range(end, n)), tuple(range(start, end))
    return (prefix + suffix if require_mode(mode) == "psm" else suffix + prefix) + middle


def token_at(n, start, end, mode, r):
    """The token at place ``r`` of the rearranged order, as a closed form (piecewise linear in ``r``).

    Works on numpy arrays. psm: ``r < start`` -> ``r``; then ``end + (r - start)`` for the
    suffix; then ``start + (r - (n - end + start))``. spm: the suffix ``end + r`` first, then
    the prefix ``r - (n - end)``, then the middle.

    >>> import numpy as np
    >>> token_at(5, 1, 3, "psm", np.arange(5)).tolist(), token_at(5, 1, 3, "spm", np.arange(5)).tolist()
    ([0, 3, 4, 1, 2], [3, 4, 0, 1, 2])
    """
    outside = n - end + start  # prefix and suffix tokens: the middle begins at place `outside`
    middle = start + (r - outside)
    if mode == "psm":
        front = (r < start) * r + (r >= start) * (end + (r - start))
    else:
        suffix = n - end
        front = (r < suffix) * (end + r) + (r >= suffix) * (r - suffix)
    return (r < outside) * front + (r >= outside) * middle


def make_fim_causal(n, start, end, mode="psm"):
    """Causal attention over the rearranged order on ``n - 1`` positions: ``k <= q``.

    The split only decides what each position holds and predicts (:func:`token_at`), not
    the attention.

    >>> grid(make_fim_causal(4, 1, 2), 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    require_split(n, start, end)
    require_mode(mode)

    def rule(q, k):
        return k <= q

    return name_rule(rule, f"fim_causal_{mode}")

"""Causal sliding-window attention, in both of the conventions libraries use.

The kit's convention, ``sliding_window:n=N,window=W``: a query attends ``window`` keys,
itself included, ``q - window < k <= q`` (``w`` is accepted for ``window``, design §7). Other libraries bound the *distance* instead,
``0 <= q - k <= d``, which gives ``d + 1`` keys; that one is
``sliding_window_distance:n=N,d=D``. The two agree when ``d = w - 1``. The
off-by-one between them is a real source of bugs (ml-explore/mlx-lm#390), so the
kit accepts both, by distinct names.
"""

from __future__ import annotations

from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import N, require_non_negative, require_positive
from hasse.theory.spec import Entry, Param


def make_sliding_window(w: int):
    """Return the rule ``q - w < k <= q``: ``w`` keys, the query itself included.

    The rule is named ``sliding_window_w<w>``. ``w = 1`` is self-attention only;
    ``w >= n`` is causal attention.

    Raises
    ------
    InputError
        ``w`` is not a positive integer.

    Examples
    --------
    >>> rule = make_sliding_window(2)
    >>> rule.__name__
    'sliding_window_w2'
    >>> grid(rule, 4).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    """
    w = require_positive("w", w)

    def rule(q, k):
        return (q - w < k) & (k <= q)

    return name_rule(rule, f"sliding_window_w{w}")


def make_sliding_window_distance(d: int):
    """Return the rule ``0 <= q - k <= d``: ``d + 1`` keys, the query itself included.

    This is the distance convention of other libraries; it equals
    ``make_sliding_window(d + 1)``. The rule is named ``sliding_window_distance_d<d>``.

    Raises
    ------
    InputError
        ``d`` is not a non-negative integer.

    Examples
    --------
    >>> grid(make_sliding_window_distance(1), 4).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    """
    d = require_non_negative("d", d)

    def rule(q, k):
        gap = q - k
        return (0 <= gap) & (gap <= d)

    return name_rule(rule, f"sliding_window_distance_d{d}")


def build(n: int, window: int) -> NamedMask:
    """The sliding window of ``window`` keys on ``n`` positions: ``M[q, k] = q - window < k <= q``.

    Raises
    ------
    InputError
        ``n`` or ``window`` is not a positive integer.

    Examples
    --------
    >>> build(3, 2).matrix.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    """
    n = require_positive("n", n)
    window = require_positive("window", window)
    rule = make_sliding_window(window)
    return named_mask(rule, n, f"sliding_window:n={n},window={window}")


def build_distance(n: int, d: int) -> NamedMask:
    """The sliding window of distance ``d`` on ``n`` positions: ``M[q, k] = 0 <= q - k <= d``.

    Raises
    ------
    InputError
        ``n`` is not a positive integer or ``d`` is negative.

    Examples
    --------
    >>> build_distance(3, 2).matrix.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    n = require_positive("n", n)
    rule = make_sliding_window_distance(d)
    return named_mask(rule, n, f"sliding_window_distance:n={n},d={int(d)}")


ENTRIES = (
    Entry(
        "sliding_window",
        "causal window of `window` keys, self included: q - window < k <= q",
        (N, Param("window", "int", help="keys per query, self included (window >= 1); alias w", aliases=("w",))),
        build,
    ),
    Entry(
        "sliding_window_distance",
        "causal window by distance, d + 1 keys: 0 <= q - k <= d (other libraries' convention)",
        (N, Param("d", "int", help="largest distance q - k (d >= 0)")),
        build_distance,
    ),
)


def main() -> None:
    print(to_text(build(4, 2)))
    print()
    print(to_text(build_distance(4, 2)))


if __name__ == "__main__":
    main()

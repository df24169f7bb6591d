"""Prefix-LM attention: a bidirectional prefix, causal after it."""

from __future__ import annotations

from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import N, require_non_negative, require_positive
from hasse.theory.spec import Entry, Param


def make_prefix_lm(prefix: int):
    """Return the rule ``k < prefix or k <= q`` (named ``prefix_lm_p<prefix>``).

    Every query attends the whole prefix ``0 … prefix-1`` and, causally, itself and
    every earlier key. ``prefix = 0`` is causal attention.

    Examples
    --------
    >>> grid(make_prefix_lm(2), 3).astype(int).tolist()
    [[1, 1, 0], [1, 1, 0], [1, 1, 1]]
    """
    prefix = require_non_negative("prefix", prefix)

    def rule(q, k):
        return (k < prefix) | (k <= q)

    return name_rule(rule, f"prefix_lm_p{prefix}")


def build(n: int, prefix: int) -> NamedMask:
    """The prefix-LM mask on ``n`` positions: ``M[q, k] = k < prefix or k <= q``.

    Raises
    ------
    InputError
        ``n`` is not a positive integer, or ``prefix`` is not in ``0 … n``.

    Examples
    --------
    >>> build(4, 2).matrix.astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    """
    n = require_positive("n", n)
    rule = make_prefix_lm(prefix)
    if prefix > n:
        raise InputError(f"prefix must be between 0 and n = {n}, got {prefix}")
    return named_mask(rule, n, f"prefix_lm:n={n},prefix={int(prefix)}")


ENTRY = Entry(
    "prefix_lm",
    "bidirectional prefix, causal after it: k < prefix or k <= q",
    (N, Param("prefix", "int", help="length of the bidirectional prefix (0 <= prefix <= n)")),
    build,
)


def main() -> None:
    print(to_text(build(4, 2)))


if __name__ == "__main__":
    main()

"""Block-causal attention: full attention inside a block and to every earlier block."""

from __future__ import annotations

from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import BLOCK, N, require_block, require_positive
from hasse.theory.spec import Entry


def make_block_causal(block: int):
    """Return the rule ``blk(k) <= blk(q)`` with ``blk(i) = i // block``.

    The rule is named ``block_causal_l<block>``. ``block = 1`` is causal attention.

    Examples
    --------
    >>> grid(make_block_causal(2), 4).astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]]
    """
    block = require_positive("block", block)

    def rule(q, k):
        return k // block <= q // block

    return name_rule(rule, f"block_causal_l{block}")


def build(n: int, block: int) -> NamedMask:
    """The block-causal mask on ``n`` positions: ``M[q, k] = k // block <= q // block``.

    Raises
    ------
    InputError
        ``n`` or ``block`` is not a positive integer, or ``block`` does not divide ``n``.

    Examples
    --------
    >>> build(4, 2).matrix.astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]]
    """
    n, block = require_block(n, block)
    return named_mask(make_block_causal(block), n, f"block_causal:n={n},block={block}")


ENTRY = Entry("block_causal", "block-causal attention: k // l <= q // l", (N, BLOCK), build)


def main() -> None:
    print(to_text(build(4, 2)))


if __name__ == "__main__":
    main()

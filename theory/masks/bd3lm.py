"""BD3-LM block diffusion: a noised copy ``x_t`` and a clean copy ``x_0`` side by side.

The training sequence is ``[x_t ; x_0]``: ``x_t`` at positions ``0 … n-1`` and
``x_0`` at ``n … 2n-1``. Each noised block is denoised from its own noised tokens
and the clean tokens of earlier blocks; clean tokens never attend noised ones
(kuleshov-group/bd3lms, ``block_diff_mask``).
"""

from __future__ import annotations

from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import BLOCK, N, require_block
from hasse.theory.spec import Entry


def make_bd3lm(n: int, block: int):
    """Return the BD3-LM rule on ``2n`` positions (named ``bd3lm_n<n>_l<block>``).

    With ``blk(i) = (i mod n) // block`` and "half" meaning ``x_t`` (``i < n``) or
    ``x_0`` (``i >= n``), ``q`` attends ``k`` iff one of:

    - same block and same half (block diagonal);
    - ``q`` in ``x_t``, ``k`` in ``x_0`` and ``blk(k) < blk(q)`` (offset block-causal);
    - both in ``x_0`` and ``blk(k) <= blk(q)`` (block-causal on the clean copy).

    Raises
    ------
    InputError
        ``n`` or ``block`` is not a positive integer, or ``block`` does not divide ``n``.

    Examples
    --------
    >>> grid(make_bd3lm(2, 1), 4).astype(int).tolist()
    [[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 1, 1]]
    """
    n, block = require_block(n, block)

    def rule(q, k):
        q_clean, k_clean = q >= n, k >= n
        bq, bk = (q % n) // block, (k % n) // block
        diagonal = (bq == bk) & (q_clean == k_clean)
        offset = ~q_clean & k_clean & (bk < bq)
        clean = q_clean & k_clean & (bk <= bq)
        return diagonal | offset | clean

    return name_rule(rule, f"bd3lm_n{n}_l{block}")


def names(n: int) -> tuple[str, ...]:
    """``xt0 … xt<n-1>`` for the noised copy, then ``x0_0 … x0_<n-1>`` for the clean one."""
    return tuple(f"xt{i}" for i in range(n)) + tuple(f"x0_{i}" for i in range(n))


def build(n: int, block: int) -> NamedMask:
    """The BD3-LM training mask for ``n`` tokens in blocks of ``block``: ``2n`` positions.

    See :func:`make_bd3lm` for the rule. Positions are named ``xt<i>`` and ``x0_<i>``.

    Examples
    --------
    >>> m = build(2, 1)
    >>> m.names
    ('xt0', 'xt1', 'x0_0', 'x0_1')
    >>> m.matrix.astype(int).tolist()
    [[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 1, 1]]
    """
    rule = make_bd3lm(n, block)
    n, block = int(n), int(block)
    return named_mask(rule, 2 * n, f"bd3lm:n={n},block={block}", lambda: names(n))


ENTRY = Entry(
    "bd3lm",
    "BD3-LM block diffusion: 2n positions [x_t ; x_0], clean tokens never attend noised ones",
    (N, BLOCK),
    build,
)


def main() -> None:
    print(to_text(build(4, 2)))


if __name__ == "__main__":
    main()

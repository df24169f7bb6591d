"""Block Two-Stream Attention: block generation with training-inference consistency.

The paper's minimal merge of the ``block`` task family (design §4). ``2n - l``
positions for ``n`` tokens in blocks of ``l``: the content stream ``C_0 … C_{n-l-1}``
(``x_i`` at pos ``i``; the last block is never context) at ``0 … n-l-1``, then the
query stream ``Q_0 … Q_{n-1}`` (``[MASK]`` at pos ``t``, label ``t``) at
``n-l … 2n-l-1``.
"""

from __future__ import annotations

from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import BLOCK, N, require_block
from hasse.theory.spec import Entry, Param

VARIANTS = ("chain", "clique")


def layout(n: int, block: int) -> tuple[tuple[str, int], ...]:
    """``(stream, index)`` of each position: ``("C", i)`` then ``("Q", t)``.

    >>> layout(4, 2)
    (('C', 0), ('C', 1), ('Q', 0), ('Q', 1), ('Q', 2), ('Q', 3))
    """
    n, block = require_block(n, block)
    return tuple(("C", i) for i in range(n - block)) + tuple(("Q", t) for t in range(n))


def make_block_two_stream(n: int, block: int, variant: str = "chain"):
    """Return the Block Two-Stream rule on ``2n - l`` positions (``l = block``).

    With ``C_i`` at position ``i`` and ``Q_t`` at ``n - l + t``:

    - ``C_i`` attends ``C_j`` iff ``j <= i`` (causal content);
    - ``Q_t`` attends ``C_j`` iff ``j // l < t // l`` (all content of earlier blocks);
    - ``Q_t`` attends ``Q_u`` iff ``u // l == t // l`` and, for ``chain``, ``u <= t``
      (for ``clique``, every query of its block);
    - content never attends queries.

    The rule is named ``block_two_stream_n<n>_l<l>_<variant>``.

    Raises
    ------
    InputError
        ``n`` or ``block`` is not a positive integer, ``block`` does not divide ``n``,
        or ``variant`` is not ``chain`` or ``clique``.

    Examples
    --------
    >>> grid(make_block_two_stream(2, 1), 3).astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [1, 0, 1]]
    """
    n, block = require_block(n, block)
    if variant not in VARIANTS:
        raise InputError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    content = n - block
    chain = variant == "chain"

    def rule(q, k):
        q_query, k_query = q >= content, k >= content
        t, u = q - content, k - content
        cc = ~q_query & ~k_query & (k <= q)
        qc = q_query & ~k_query & (k // block < t // block)
        qq = q_query & k_query & (u // block == t // block)
        if chain:
            qq = qq & (u <= t)
        return cc | qc | qq

    return name_rule(rule, f"block_two_stream_n{n}_l{block}_{variant}")


def build(n: int, block: int, variant: str = "chain") -> NamedMask:
    """The Block Two-Stream mask: ``2n - block`` positions named ``C<i>`` and ``Q<t>``.

    See :func:`make_block_two_stream` for the rule.

    Examples
    --------
    >>> m = build(2, 1)
    >>> m.names
    ('C0', 'Q0', 'Q1')
    >>> m.matrix.astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [1, 0, 1]]
    """
    rule = make_block_two_stream(n, block, variant)
    n, block = int(n), int(block)
    spec = f"block_two_stream:n={n},block={block},variant={variant}"
    return named_mask(rule, 2 * n - block, spec, lambda: (f"{s}{i}" for s, i in layout(n, block)))


ENTRY = Entry(
    "block_two_stream",
    "Block Two-Stream Attention: 2n-l positions C, Q; leak-free, consistent with block inference",
    (N, BLOCK, Param("variant", "choice", "chain", "attention among a block's queries", ("chain", "clique"))),
    build,
)


def main() -> None:
    print(to_text(build(4, 2, "chain")))
    print()
    print(to_text(build(4, 2, "clique")))


if __name__ == "__main__":
    main()

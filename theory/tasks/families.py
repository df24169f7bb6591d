"""The task families of design §4, each member by index and the whole family.

Every family is built on one sample ``x_0 … x_{n-1}`` (``tokens = n``):

- ``ar`` — ``T_k``, ``k = 1 … n-1``: predict ``x_k`` from the causal prefix
  ``x_0 … x_{k-1}``. Its minimal merge is causal attention on ``n - 1`` positions.
- ``block`` — ``B_b``, ``b = 0 … n/l - 1``: predict block ``b`` (``l`` tokens at
  once, from ``[MASK]`` queries) from the causal content of the blocks before it.
  Its minimal merge is Block Two-Stream Attention.
- ``infill`` — ``T_k``, ``k = 0 … n-1``: predict ``x_k`` from both sides, a left
  arm read causally, a right arm read anti-causally and a centre that sees both.
  Its minimal merge is Butterfly Attention.

The members are built from the catalogue's rules (:func:`~theory.masks.causal.causal_mask`,
:func:`~theory.masks.bidirectional.bidirectional_mask`), not from the merged masks, so
that checking "the merge of the family is the case-study mask" is not circular.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.mask import grid
from hasse.theory.masks.bidirectional import bidirectional_mask
from hasse.theory.masks.block_two_stream import VARIANTS
from hasse.theory.masks.causal import causal_mask
from hasse.theory.params import require_at_least, require_block, require_index, require_positive
from hasse.theory.task import Task, make_task
from hasse.theory.tasks.parts import centre_symbol, task_to_text, tokens_at


def require_variant(variant) -> str:
    """Return ``variant`` if it is ``chain`` or ``clique``, else raise :class:`InputError`."""
    if variant not in VARIANTS:
        raise InputError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    return variant


# --------------------------------------------------------------------------- ar


def ar_task(n: int, k: int) -> Task:
    """``T_k`` of the autoregressive family: ``k`` positions, causal, label ``k`` at the last.

    Position ``i`` (``0 <= i < k``) holds ``x_i`` at pos id ``i`` and attends ``0 … i``;
    position ``k - 1`` predicts ``x_k``. Names ``"0" … "k-1"``.

    Raises
    ------
    InputError
        ``n < 2`` (the family has no task) or ``k`` outside ``1 … n-1``.

    Examples
    --------
    >>> t = ar_task(4, 2)
    >>> t.inputs, t.labels
    ((('x0', 0), ('x1', 1)), ((), (2,)))
    >>> t.mask.astype(int).tolist()
    [[1, 0], [1, 1]]
    """
    n = require_at_least("n", n, 2, "the ar family has tasks k = 1 … n-1")
    k = require_index("k", k, 1, n - 1, f"ar:n={n} has tasks k = 1 … {n - 1}")
    labels = [None] * (k - 1) + [k]
    return make_task(n, tokens_at(range(k)), labels, grid(causal_mask, k), name=f"ar:n={n},k={k}",
                     names=[str(i) for i in range(k)])


def ar_family(n: int) -> tuple[Task, ...]:
    """``(T_1, …, T_{n-1})``, the autoregressive family on ``n >= 2`` tokens.

    >>> [t.size for t in ar_family(4)]
    [1, 2, 3]
    """
    n = require_at_least("n", n, 2, "the ar family has tasks k = 1 … n-1")
    return tuple(ar_task(n, k) for k in range(1, n))


def ar_merged(n: int) -> Task:
    """The layout of the ``ar`` family's merge (design §4): causal attention on ``n - 1`` positions,
    ``x_i`` at position ``i`` predicting ``x_{i+1}``. `hasse derive ar` checks the merge is isomorphic to it.

    >>> t = ar_merged(3)
    >>> t.inputs, t.labels, t.mask.astype(int).tolist()
    ((('x0', 0), ('x1', 1)), ((1,), (2,)), [[1, 0], [1, 1]])
    """
    n = require_at_least("n", n, 2, "ar_merged has n - 1 positions")
    return make_task(n, tokens_at(range(n - 1)), [i + 1 for i in range(n - 1)], grid(causal_mask, n - 1),
                     name=f"ar_merged:n={n}", names=[str(i) for i in range(n - 1)])


# --------------------------------------------------------------------------- block


def block_task(n: int, block: int, b: int, variant: str = "chain") -> Task:
    """``B_b`` of the block family: ``b·l`` content positions, then ``l`` query positions.

    With ``l = block`` and ``c = b·l``:

    - content ``C_i`` (``i < c``) holds ``x_i`` at pos id ``i`` and attends ``C_j``
      iff ``j <= i``; content never attends queries;
    - query ``Q_{c+j}`` (``j < l``) holds ``[MASK]`` at pos id ``c + j``, predicts
      ``x_{c+j}``, attends every content position and, among the queries, ``Q_{c+u}``
      iff ``u <= j`` (``chain``) or every one (``clique``).

    Raises
    ------
    InputError
        ``block`` does not divide ``n``, ``b`` outside ``0 … n/l - 1``, or an unknown variant.

    Examples
    --------
    >>> t = block_task(4, 2, 1)
    >>> t.names, t.labels
    (('C0', 'C1', 'Q2', 'Q3'), ((), (), (2,), (3,)))
    >>> t.mask.astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    """
    n, block = require_block(n, block)
    variant = require_variant(variant)
    blocks = n // block
    b = require_index("b", b, 0, blocks - 1, f"block:n={n},block={block} has tasks b = 0 … {blocks - 1}")
    c = b * block
    content, queries = slice(0, c), slice(c, c + block)
    mask = np.zeros((c + block, c + block), dtype=bool)
    mask[content, content] = grid(causal_mask, c)
    mask[queries, content] = True
    mask[queries, queries] = grid(causal_mask if variant == "chain" else bidirectional_mask, block)
    inputs = tokens_at(range(c)) + [("[MASK]", t) for t in range(c, c + block)]
    labels = [None] * c + list(range(c, c + block))
    names = [f"C{i}" for i in range(c)] + [f"Q{t}" for t in range(c, c + block)]
    return make_task(n, inputs, labels, mask, name=f"block:n={n},block={block},b={b},variant={variant}",
                     names=names)


def block_family(n: int, block: int, variant: str = "chain") -> tuple[Task, ...]:
    """``(B_0, …, B_{n/l-1})``, the block family on ``n`` tokens in blocks of ``l = block``.

    >>> [t.size for t in block_family(6, 2)]
    [2, 4, 6]
    """
    n, block = require_block(n, block)
    variant = require_variant(variant)
    return tuple(block_task(n, block, b, variant) for b in range(n // block))


# --------------------------------------------------------------------------- infill


def infill_task(n: int, k: int) -> Task:
    """``T_k`` of the infill family: left arm, right arm, then the centre; ``n`` positions.

    - left arm ``F_0 … F_{k-1}`` at positions ``0 … k-1``: ``F_i`` holds ``x_i`` and
      attends ``F_0 … F_i``;
    - right arm ``B_{k+1} … B_{n-1}`` at positions ``k … n-2``: ``B_i`` holds ``x_i``
      and attends ``B_i … B_{n-1}``;
    - centre ``P_k`` at position ``n - 1``: holds ``agg(x_{k-1},x_{k+1})`` (one-sided
      at the ends, ``[MASK]`` when ``n = 1``) at pos id ``k``, attends every position
      (itself included) and predicts ``x_k``.

    Every arm position has its token index as pos id; the arms never attend each other.

    Raises
    ------
    InputError
        ``n < 1`` or ``k`` outside ``0 … n-1``.

    Examples
    --------
    >>> t = infill_task(4, 2)
    >>> t.names, t.inputs[-1], t.labels[-1]
    (('F0', 'F1', 'B3', 'P2'), ('agg(x1,x3)', 2), (2,))
    >>> t.mask.astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [1, 1, 1, 1]]
    """
    n = require_positive("n", n)
    k = require_index("k", k, 0, n - 1, f"infill:n={n} has tasks k = 0 … {n - 1}")
    left, right, centre = slice(0, k), slice(k, n - 1), n - 1
    mask = np.zeros((n, n), dtype=bool)
    mask[left, left] = grid(causal_mask, k)
    mask[right, right] = grid(causal_mask, n - 1 - k).T  # the arm position of x_i attends x_i … x_{n-1}
    mask[centre, :] = True
    inputs = tokens_at(range(k)) + tokens_at(range(k + 1, n)) + [(centre_symbol(n, k), k)]
    labels = [None] * (n - 1) + [k]
    names = [f"F{i}" for i in range(k)] + [f"B{i}" for i in range(k + 1, n)] + [f"P{k}"]
    return make_task(n, inputs, labels, mask, name=f"infill:n={n},k={k}", names=names)


def infill_family(n: int) -> tuple[Task, ...]:
    """``(T_0, …, T_{n-1})``, the infill family on ``n >= 1`` tokens; every member has ``n`` positions.

    >>> [t.names[-1] for t in infill_family(3)]
    ['P0', 'P1', 'P2']
    """
    n = require_positive("n", n)
    return tuple(infill_task(n, k) for k in range(n))


def main() -> None:
    for task in (ar_task(4, 2), block_task(4, 2, 1), block_task(4, 2, 1, "clique"), infill_task(4, 2)):
        print(task_to_text(task))
        print()


if __name__ == "__main__":
    main()

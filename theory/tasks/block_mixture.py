"""BD3-LM with several block sizes: the ``block_mixture`` family by member, its derived layout, BD3-LM per size.

- :func:`block_mixture_task`, :func:`block_mixture_family` — built from the family's rule
  (clean context of the blocks before ``b``, then block ``b``'s ``[MASK]`` queries as a clique);
- :func:`block_mixture_merged` — the derived layout, from the closed-form rule of
  :mod:`theory.masks.block_mixture`;
- :func:`bd3lm_batch` — the published design for several sizes: one BD3-LM sequence
  (``theory.tasks.prior_art.bd3lm``, 2n positions) per size, side by side, no attention between them.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.mask import grid
from hasse.theory.masks.bidirectional import bidirectional_mask
from hasse.theory.masks.block_causal import make_block_causal
from hasse.theory.masks.block_mixture import make_block_mixture, require_blocks, require_context, segments, size
from hasse.theory.masks.causal import causal_mask
from hasse.theory.params import require_index
from hasse.theory.spec import plus_joined
from hasse.theory.task import Task, make_task
from hasse.theory.tasks.parts import task_to_text, tokens_at
from hasse.theory.tasks.prior_art import bd3lm


def block_mixture_task(n: int, blocks, context: str = "block", block: int = 1, b: int = 0) -> Task:
    """Member ``(L = block, b)``: clean tokens ``x_0 … x_{bL-1}``, then ``L`` queries ``([MASK], bL + j)``.

    The clean context is block-causal in blocks of ``L`` (``context="block"``, BD3-LM's ``x_0``) or
    causal; each query predicts ``x_{bL+j}`` and attends every clean position and every query
    (a clique, as BD3-LM's ``x_t`` block). Names ``c<u>`` and ``q<t>``.

    Raises
    ------
    InputError
        a size that does not divide ``n``, repeated sizes, ``block`` not among ``blocks``, ``b``
        outside ``0 … n/block - 1`` or an unknown context.

    >>> t = block_mixture_task(4, (2,), "block", 2, 1)
    >>> t.inputs, t.labels
    ((('x0', 0), ('x1', 1), ('[MASK]', 2), ('[MASK]', 3)), ((), (), (2,), (3,)))
    >>> t.mask.astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1]]
    """
    n, blocks = require_blocks(n, blocks)
    context = require_context(context)
    if block not in blocks:
        raise InputError(f"block = {block} is not one of the block sizes {plus_joined(blocks)}")
    b = require_index("b", b, 0, n // block - 1, f"with n = {n} and block = {block} the blocks are b = 0 … "
                                                 f"{n // block - 1}")
    c = b * block
    mask = np.zeros((c + block, c + block), dtype=bool)
    rule = make_block_causal(block) if context == "block" else causal_mask
    mask[:c, :c] = grid(rule, c)
    mask[c:, :c] = True
    mask[c:, c:] = grid(bidirectional_mask, block)
    inputs = tokens_at(range(c)) + [("[MASK]", t) for t in range(c, c + block)]
    labels = [None] * c + list(range(c, c + block))
    names = [f"c{u}" for u in range(c)] + [f"q{t}" for t in range(c, c + block)]
    return make_task(n, inputs, labels, mask, names=names,
                     name=f"block_mixture:n={n},blocks={plus_joined(blocks)},context={context},block={block},b={b}")


def block_mixture_family(n: int, blocks, context: str = "block") -> tuple[Task, ...]:
    """Every member: each size ``L`` in ``blocks`` (in order), each ``b = 0 … n/L - 1``.

    >>> [t.size for t in block_mixture_family(4, (2, 4))]
    [2, 4, 4]
    """
    n, blocks = require_blocks(n, blocks)
    context = require_context(context)
    return tuple(block_mixture_task(n, blocks, context, size_, b) for size_ in blocks for b in range(n // size_))


def block_mixture_merged(n: int, blocks, context: str = "block") -> Task:
    """The derived layout (:mod:`theory.masks.block_mixture`): streams in the order of ``segments``.

    Clean ``u`` holds ``(x_u, u)``; query ``t`` holds ``([MASK], t)`` and predicts ``x_t``.

    >>> t = block_mixture_merged(2, (1, 2), "causal")
    >>> t.names, t.labels
    (('c0', 'q1_0', 'q1_1', 'q2_0', 'q2_1'), ((), (0,), (1,), (0,), (1,)))
    """
    n, blocks = require_blocks(n, blocks)
    context = require_context(context)
    inputs, labels, names = [], [], []
    for kind, size_, _, length in segments(n, blocks, context):
        if kind == "clean":
            inputs += tokens_at(range(length))
            labels += [None] * length
            names += [f"c{u}" if context == "causal" else f"c{size_}_{u}" for u in range(length)]
        else:
            inputs += [("[MASK]", t) for t in range(length)]
            labels += list(range(length))
            names += [f"q{size_}_{t}" for t in range(length)]
    mask = grid(make_block_mixture(n, blocks, context), size(n, blocks, context))
    return make_task(n, inputs, labels, mask, names=names,
                     name=f"block_mixture_merged:n={n},blocks={plus_joined(blocks)},context={context}")


def bd3lm_batch(n: int, blocks) -> Task:
    """BD3-LM once per block size: the ``bd3lm:n,block`` tasks side by side, block-diagonal (``2n`` each).

    >>> t = bd3lm_batch(2, (1, 2))
    >>> t.size, t.names[:4], t.names[4:]
    (8, ('xt0@1', 'xt1@1', 'x0_0@1', 'x0_1@1'), ('xt0@2', 'xt1@2', 'x0_0@2', 'x0_1@2'))
    """
    n, blocks = require_blocks(n, blocks)
    parts = [bd3lm(n, size_) for size_ in blocks]
    total = sum(p.size for p in parts)
    mask = np.zeros((total, total), dtype=bool)
    inputs, labels, names, start = [], [], [], 0
    for size_, part in zip(blocks, parts):
        mask[start:start + part.size, start:start + part.size] = part.mask
        inputs += list(part.inputs)
        labels += [list(ls) or None for ls in part.labels]
        names += [f"{name}@{size_}" for name in part.names]
        start += part.size
    return make_task(n, inputs, labels, mask, names=names, name=f"bd3lm_batch:n={n},blocks={plus_joined(blocks)}")


def main() -> None:
    for task in (block_mixture_task(4, (2,), "block", 2, 1), block_mixture_merged(4, (1, 2)),
                 block_mixture_merged(4, (1, 2), "causal"), bd3lm_batch(2, (1, 2))):
        print(task_to_text(task))
        print()


if __name__ == "__main__":
    main()

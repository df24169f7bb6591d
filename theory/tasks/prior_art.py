"""Tasks for the catalogue's prior art: the masks of ``prior_art.md`` with the inputs and labels they train on.

- ``causal_lm`` — next-token prediction under causal attention;
- ``mlm`` — masked LM (MDLM-style) under bidirectional attention: only ``[MASK]``
  positions are supervised, which is what keeps it leak-free;
- ``bd3lm`` — BD3-LM block diffusion: a noised half ``x_t`` (here fully masked) beside
  the clean half ``x_0``;
- ``xlnet`` — XLNet two-stream over a factorisation order;
- ``packed`` — causal LM over packed documents, optionally inside a sliding window,
  with the documents as ``isolate`` groups.

Each mask is the catalogue's (:mod:`theory.masks`), unchanged or intersected.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.masks import (
    bd3lm as bd3lm_masks,
    bidirectional,
    causal,
    document,
    sliding_window,
    xlnet as xlnet_masks,
)
from hasse.theory.masks.masked_context import masked_flags
from hasse.theory.params import require_int_list, require_non_negative
from hasse.theory.spec import plus_joined
from hasse.theory.task import Task, make_task
from hasse.theory.tasks.parts import task_to_text, tokens_at


def causal_lm(n: int) -> Task:
    """Next-token prediction: ``x_i`` at pos id ``i``, causal, position ``i`` predicts ``x_{i+1}`` (``i < n-1``).

    Examples
    --------
    >>> t = causal_lm(3)
    >>> t.inputs, t.labels
    ((('x0', 0), ('x1', 1), ('x2', 2)), ((1,), (2,), ()))
    """
    mask = causal.build(n)
    n = int(n)
    labels = [i + 1 for i in range(n - 1)] + [None]
    return make_task(n, tokens_at(range(n)), labels, mask.matrix, name=f"causal_lm:n={n}", names=mask.names)


def mlm(n: int, masked: Sequence[int]) -> Task:
    """Masked LM: ``[MASK]`` at the ``masked`` positions, each predicting its own token; ``x_i`` elsewhere.

    Bidirectional attention; every position has pos id ``i``.

    Raises
    ------
    InputError
        ``n`` is not a positive integer, or ``masked`` is empty, holds an index outside
        ``0 … n-1`` or repeats one.

    Examples
    --------
    >>> t = mlm(3, (1,))
    >>> t.inputs, t.labels
    ((('x0', 0), ('[MASK]', 1), ('x2', 2)), ((), (1,), ()))
    """
    mask = bidirectional.build(n)
    n = int(n)
    masked = require_int_list("masked", masked)
    masked_flags(n, masked)  # inside 0 … n-1, no repeats: the check the derived MAE layout makes
    inputs = [("[MASK]", i) if i in masked else (f"x{i}", i) for i in range(n)]
    labels = [i if i in masked else None for i in range(n)]
    return make_task(n, inputs, labels, mask.matrix, name=f"mlm:n={n},masked={plus_joined(masked)}",
                     names=mask.names)


def bd3lm(n: int, block: int) -> Task:
    """BD3-LM block diffusion on ``2n`` positions: the ``x_t`` half masked and supervised, the ``x_0`` half clean.

    Position ``i < n`` (``xt<i>``) holds ``[MASK]`` at pos id ``i`` and predicts ``x_i``;
    position ``n + i`` (``x0_<i>``) holds ``x_i`` at pos id ``i``, unsupervised. The mask is
    :func:`theory.masks.bd3lm.build` (fully noised ``x_t``: the worst case for leakage).

    Raises
    ------
    InputError
        ``block`` does not divide ``n``.

    Examples
    --------
    >>> t = bd3lm(2, 1)
    >>> t.names, t.inputs, t.labels
    (('xt0', 'xt1', 'x0_0', 'x0_1'), (('[MASK]', 0), ('[MASK]', 1), ('x0', 0), ('x1', 1)), ((0,), (1,), (), ()))
    """
    mask = bd3lm_masks.build(n, block)
    n = int(n)
    inputs = [("[MASK]", i) for i in range(n)] + tokens_at(range(n))
    labels = list(range(n)) + [None] * n
    return make_task(n, inputs, labels, mask.matrix, name=mask.spec, names=mask.names)


def xlnet(order: Sequence[int]) -> Task:
    """XLNet two-stream: content ``c_i = (x_i, i)`` unsupervised, query ``g_i = ([MASK], i)`` predicting ``x_i``.

    The mask is :func:`theory.masks.xlnet.build` for the factorisation ``order``.

    Raises
    ------
    InputError
        ``order`` is not a permutation of ``0 … n-1``.

    Examples
    --------
    >>> t = xlnet((1, 0))
    >>> t.names, t.labels
    (('c0', 'c1', 'g0', 'g1'), ((), (), (0,), (1,)))
    """
    mask = xlnet_masks.build(order)
    n = mask.n // 2
    inputs = tokens_at(range(n)) + [("[MASK]", i) for i in range(n)]
    labels = [None] * n + list(range(n))
    return make_task(n, inputs, labels, mask.matrix, name=mask.spec, names=mask.names)


def packed_parts(lengths: Sequence[int]) -> tuple[list, list, tuple[tuple[int, ...], ...]]:
    """Inputs, labels and documents of a causal LM over packed documents (shared with the bad design).

    ``x_i`` at pos id ``i`` (the packed index); position ``i`` predicts ``x_{i+1}`` when
    ``i + 1`` is in the same document; the documents are the ``isolate`` groups.

    >>> packed_parts((2, 1))
    ([('x0', 0), ('x1', 1), ('x2', 2)], [1, None, None], ((0, 1), (2,)))
    """
    doc = document.document_ids(lengths)
    n = len(doc)
    labels = [i + 1 if i + 1 < n and doc[i + 1] == doc[i] else None for i in range(n)]
    documents = tuple(tuple(int(p) for p in np.flatnonzero(doc == d)) for d in range(doc[-1] + 1))
    return tokens_at(range(n)), labels, documents


def packed(lengths: Sequence[int], window: int = 0) -> Task:
    """Causal LM over packed documents: causal within each document, inside a window of ``window`` keys if ``> 0``.

    The mask is :func:`theory.masks.document.build` (causal), intersected with
    :func:`theory.masks.sliding_window.build` when ``window > 0``. Inputs, labels and
    ``isolate`` groups as in :func:`packed_parts`.

    Raises
    ------
    InputError
        ``lengths`` is empty or holds a length below 1, or ``window`` is negative.

    Examples
    --------
    >>> t = packed((2, 2), window=0)
    >>> t.labels, t.isolate
    (((1,), (), (3,), ()), ((0, 1), (2, 3)))
    >>> t.mask.astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]]
    """
    window = require_non_negative("window", window)
    mask = document.build(lengths, causal=True).matrix
    n = mask.shape[0]
    if window > 0:
        mask = mask & sliding_window.build(n, window).matrix
    inputs, labels, documents = packed_parts(lengths)
    name = f"packed:lengths={plus_joined(tuple(int(v) for v in lengths))},window={window}"
    return make_task(n, inputs, labels, mask, isolate=documents, name=name)


def main() -> None:
    for task in (causal_lm(4), mlm(4, (1, 3)), bd3lm(4, 2), xlnet((2, 0, 1)), packed((3, 2), window=2)):
        print(task_to_text(task))
        print()


if __name__ == "__main__":
    main()

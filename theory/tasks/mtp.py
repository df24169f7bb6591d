"""Multi-token prediction: the ``mtp`` family by member, its derived layout and the published designs.

Position ids are token indices: ``x_j`` at pos id ``j``. A register predicting ``x_{i+d}`` from
the prefix ``x_0 … x_i`` holds ``[MASK]`` at pos id ``i + d - 1``, MuToR's choice
(nasosger/MuToR finetune.py: ``reg_positions = question_length + j + offset - 1`` with
``offset = d - 1``: the position id of the token that predicts ``x_{i+d}`` in next-token
prediction).

- :func:`mtp_task` and :func:`mtp_family` — built from the family's rule (causal prefix, one
  register), never from the layout;
- :func:`mtp_registers` — the derived layout, from the closed-form rule of
  :mod:`theory.masks.mtp_registers` (registers grouped by offset);
- :func:`mutor` — MuToR's layout, registers interleaved after their anchor token;
- :func:`mtp_heads` — Gloeckle et al.'s k heads: the causal LM with ``k`` labels per position.
"""

from __future__ import annotations

import numpy as np

from hasse.theory.mask import grid
from hasse.theory.masks.causal import causal_mask
from hasse.theory.masks.mtp_registers import make_mtp_registers, registers, require_mtp, size
from hasse.theory.params import require_at_least, require_index
from hasse.theory.task import Task, make_task
from hasse.theory.tasks.parts import task_to_text, tokens_at


def register_input(i: int, d: int) -> tuple[str, int]:
    """The register that predicts ``x_{i+d}`` after anchor ``x_i``: ``([MASK], i + d - 1)``.

    >>> register_input(1, 3)
    ('[MASK]', 3)
    """
    return ("[MASK]", i + d - 1)


def mtp_task(n: int, k: int, anchor: int, d: int) -> Task:
    """Member ``(i, d)``: the causal prefix ``x_0 … x_i``, then ``x_{i+d}`` predicted.

    ``d = 1``: the prefix's last position predicts ``x_{i+1}`` (as ``ar``). ``d >= 2``: one register
    ``([MASK], i + d - 1)`` after the prefix attends every prefix position and itself and predicts
    ``x_{i+d}``; the prefix is unsupervised.

    Raises
    ------
    InputError
        ``k < 1``, ``n < k + 1``, ``d`` outside ``1 … k`` or ``i`` outside ``0 … n-1-d``.

    Examples
    --------
    >>> t = mtp_task(4, 2, 1, 2)
    >>> t.inputs, t.labels
    ((('x0', 0), ('x1', 1), ('[MASK]', 2)), ((), (), (3,)))
    >>> t.mask.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> mtp_task(4, 2, 0, 1).labels
    ((1,),)
    """
    n, k = require_mtp(n, k)
    d = require_index("d", d, 1, k, f"mtp:n={n},k={k} has offsets d = 1 … {k}")
    i = require_index("anchor", anchor, 0, n - 1 - d, f"with n = {n} and d = {d} the prefix ends at i = 0 … {n - 1 - d}")
    prefix = i + 1
    inputs = tokens_at(range(prefix))
    names = [f"x{j}" for j in range(prefix)]
    if d == 1:
        labels = [None] * i + [i + 1]
        mask = grid(causal_mask, prefix)
    else:
        inputs.append(register_input(i, d))
        names.append(f"r{i}_{d}")
        labels = [None] * prefix + [i + d]
        mask = np.zeros((prefix + 1, prefix + 1), dtype=bool)
        mask[:prefix, :prefix] = grid(causal_mask, prefix)
        mask[prefix, :] = True  # the register reads the whole prefix and itself
    return make_task(n, inputs, labels, mask, name=f"mtp:n={n},k={k},anchor={i},d={d}", names=names)


def mtp_family(n: int, k: int) -> tuple[Task, ...]:
    """Every member ``(i, d)``, ``d = 1 … k`` and ``i = 0 … n-1-d`` (offset by offset).

    >>> [t.name for t in mtp_family(3, 2)]
    ['mtp:n=3,k=2,anchor=0,d=1', 'mtp:n=3,k=2,anchor=1,d=1', 'mtp:n=3,k=2,anchor=0,d=2']
    """
    n, k = require_mtp(n, k)
    return tuple(mtp_task(n, k, i, d) for d in range(1, k + 1) for i in range(n - d))


def mtp_registers(n: int, k: int) -> Task:
    """The derived layout: content ``x_0 … x_{n-2}`` (``x_j`` predicts ``x_{j+1}``), then the registers.

    Mask: :func:`theory.masks.mtp_registers.make_mtp_registers`; register ``r_{i,d}`` holds
    ``([MASK], i + d - 1)`` and predicts ``x_{i+d}``. ``k(2n-k-1)/2`` positions.

    >>> t = mtp_registers(4, 2)
    >>> t.names, t.labels
    (('x0', 'x1', 'x2', 'r0_2', 'r1_2'), ((1,), (2,), (3,), (2,), (3,)))
    """
    n, k = require_mtp(n, k)
    regs = registers(n, k)
    inputs = tokens_at(range(n - 1)) + [register_input(i, d) for i, d in regs]
    labels = [j + 1 for j in range(n - 1)] + [i + d for i, d in regs]
    names = [f"x{j}" for j in range(n - 1)] + [f"r{i}_{d}" for i, d in regs]
    mask = grid(make_mtp_registers(n, k), size(n, k))
    return make_task(n, inputs, labels, mask, name=f"mtp_registers:n={n},k={k}", names=names)


def mutor(n: int, k: int, dmin: int = 1) -> Task:
    """MuToR's layout: ``x_0, r_{0,dmin}, …, r_{0,k}, x_1, …``; the registers of anchor ``x_i`` right after it.

    Only the positions that carry a label: ``x_0 … x_{n-2}`` (next-token prediction) and the
    registers ``r_{i,d}``, ``dmin <= d <= k``, with ``i + d <= n - 1``. Regular tokens attend the
    regular tokens up to themselves and no register; a register attends the regular tokens up to
    its anchor and itself, no other register (finetune.py: causal mask, then register-register
    and regular-register pairs removed, the diagonal kept). MuToR samples one offset per sequence;
    as registers are read by nobody, the offsets' sequences side by side are this one sequence.

    Raises
    ------
    InputError
        as :func:`mtp_task`, or ``dmin`` outside ``1 … k``.

    >>> t = mutor(4, 2, dmin=2)
    >>> t.names, t.inputs[1], t.labels
    (('x0', 'r0_2', 'x1', 'r1_2', 'x2'), ('[MASK]', 1), ((1,), (2,), (2,), (3,), (3,)))
    """
    n, k = require_mtp(n, k)
    dmin = require_index("dmin", dmin, 1, k, f"offsets are 1 … k = {k}")
    inputs, labels, names, regular = [], [], [], []
    for i in range(n - 1):
        regular.append(len(inputs))
        inputs.append((f"x{i}", i))
        labels.append(i + 1)
        names.append(f"x{i}")
        for d in range(dmin, k + 1):
            if i + d <= n - 1:
                inputs.append(register_input(i, d))
                labels.append(i + d)
                names.append(f"r{i}_{d}")
            size_ = len(inputs)
    is_register = np.ones(size_, dtype=bool)
    is_register[regular] = False
    where = np.arange(size_)
    # finetune.py's construction: causal over the interleaved sequence, then no register reads another
    # register and no regular token reads a register; the diagonal stays
    mask = where[None, :] <= where[:, None]
    mask &= ~(is_register[:, None] & is_register[None, :]) | (where[None, :] == where[:, None])
    mask &= ~(~is_register[:, None] & is_register[None, :])
    return make_task(n, inputs, labels, mask, name=f"mutor:n={n},k={k},dmin={dmin}", names=names)


def mtp_heads(n: int, k: int) -> Task:
    """Gloeckle et al.'s multi-token prediction: the causal LM, position ``i`` predicting ``x_{i+1} … x_{i+k}``.

    One label set per position is how the kit writes ``k`` output heads on one hidden state.

    >>> mtp_heads(3, 2).labels
    ((1, 2), (2,), ())
    """
    n = require_at_least("n", n, 2, "a token to predict needs one before it")
    k = require_index("k", k, 1, n - 1, f"with n = {n} the offsets are k = 1 … {n - 1}")
    labels = [[t for t in range(i + 1, min(i + k, n - 1) + 1)] or None for i in range(n)]
    return make_task(n, tokens_at(range(n)), labels, grid(causal_mask, n), name=f"mtp_heads:n={n},k={k}",
                     names=[f"x{i}" for i in range(n)])


def main() -> None:
    for task in (mtp_task(4, 2, 1, 2), mtp_registers(4, 2), mutor(4, 2, 2), mtp_heads(4, 2)):
        print(task_to_text(task))
        print()


if __name__ == "__main__":
    main()

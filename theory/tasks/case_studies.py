"""The paper's two new masks as full tasks: the catalogue masks, unchanged, with inputs and labels.

- Block Two-Stream (:mod:`theory.masks.block_two_stream`): ``2n - l`` positions,
  content ``C_i`` then queries ``Q_t``.
- Butterfly (:mod:`theory.masks.butterfly`): ``3n - 2`` positions, forward ``F_i``,
  backward ``B_i``, prediction ``P_k``.

Position names are the masks' own (``C0``, ``Q3``, ``F0``, ``B1``, ``P2``).
"""

from __future__ import annotations

from hasse.theory.masks import block_two_stream, butterfly
from hasse.theory.task import Task, make_task
from hasse.theory.tasks.parts import centre_symbol, task_to_text


def block_two_stream_task(n: int, block: int, variant: str = "chain") -> Task:
    """The Block Two-Stream task: ``C_i = (x_i, i)`` unsupervised, ``Q_t = ([MASK], t)`` predicting ``x_t``.

    The mask is :func:`theory.masks.block_two_stream.build` unchanged.

    Raises
    ------
    InputError
        ``block`` does not divide ``n``, or an unknown variant.

    Examples
    --------
    >>> t = block_two_stream_task(2, 1)
    >>> t.names, t.inputs, t.labels
    (('C0', 'Q0', 'Q1'), (('x0', 0), ('[MASK]', 0), ('[MASK]', 1)), ((), (0,), (1,)))
    """
    mask = block_two_stream.build(n, block, variant)
    inputs, labels = [], []
    for stream, i in block_two_stream.layout(n, block):
        inputs.append((f"x{i}", i) if stream == "C" else ("[MASK]", i))
        labels.append(None if stream == "C" else i)
    return make_task(int(n), inputs, labels, mask.matrix, name=mask.spec, names=mask.names)


def butterfly_task(n: int) -> Task:
    """The Butterfly task: ``F_i``, ``B_i`` hold ``x_i``; ``P_k`` holds ``agg(x_{k-1},x_{k+1})`` and predicts ``x_k``.

    Each position's pos id is its token index. The centre symbol is one-sided at the
    ends (``agg(x1)`` for ``P_0``, ``agg(x_{n-2})`` for ``P_{n-1}``) and ``[MASK]``
    when ``n = 1``, exactly as in the infill family. The mask is
    :func:`theory.masks.butterfly.build` unchanged.

    Examples
    --------
    >>> t = butterfly_task(2)
    >>> t.names, t.inputs, t.labels
    (('F0', 'B1', 'P0', 'P1'), (('x0', 0), ('x1', 1), ('agg(x1)', 0), ('agg(x0)', 1)), ((), (), (0,), (1,)))
    """
    mask = butterfly.build(n)
    n = int(n)
    inputs, labels = [], []
    for stream, i in butterfly.layout(n):
        inputs.append((centre_symbol(n, i), i) if stream == "P" else (f"x{i}", i))
        labels.append(i if stream == "P" else None)
    return make_task(n, inputs, labels, mask.matrix, name=mask.spec, names=mask.names)


def main() -> None:
    print(task_to_text(block_two_stream_task(4, 2)))
    print()
    print(task_to_text(butterfly_task(3)))


if __name__ == "__main__":
    main()

"""The parts the built-in tasks are made of: input symbols, positions found by name, a text picture.

Shared by the modules of :mod:`theory.tasks`; the checks on parameter values are
:mod:`theory.params`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.mask import NamedMask, to_text
from hasse.theory.task import Task


def centre_symbol(n: int, k: int) -> str:
    """The input of the position that predicts ``x_k`` from both sides: ``agg(x_{k-1},x_{k+1})``.

    One-sided at the ends of the sample, ``[MASK]`` when there is no neighbour (``n = 1``).

    >>> centre_symbol(4, 2), centre_symbol(4, 0), centre_symbol(4, 3), centre_symbol(1, 0)
    ('agg(x1,x3)', 'agg(x1)', 'agg(x2)', '[MASK]')
    """
    sources = [i for i in (k - 1, k + 1) if 0 <= i < n]
    return "agg(" + ",".join(f"x{i}" for i in sources) + ")" if sources else "[MASK]"


def tokens_at(indices: Sequence[int]) -> list[tuple[str, int]]:
    """``(x<i>, i)`` for each ``i``: the clean content of those tokens at their own position ids."""
    return [(f"x{i}", i) for i in indices]


def where(names: Sequence[str], prefix: str) -> np.ndarray:
    """The positions whose name is ``prefix`` followed by a number (``"F"`` -> ``F0``, ``F1``, …).

    >>> where(("F0", "B1", "P0", "P1"), "P").tolist()
    [2, 3]
    """
    found = [p for p, name in enumerate(names) if name.startswith(prefix) and name[len(prefix):].isdigit()]
    return np.array(found, dtype=np.int64)


def task_to_text(task: Task) -> str:
    """A picture of a task: one line per position (name, input, pos id, labels), then its mask.

    >>> from hasse.theory.task import make_task
    >>> print(task_to_text(make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 1], [[1, 0], [1, 1]], name="demo")))
    demo  (2 tokens, 2 positions)
      0  x0      pos 0
      1  [MASK]  pos 1  -> 1
    demo  (row q attends column k)
       0 1
    0  1 .
    1  1 1
    """
    width = max(len(name) for name in task.names)
    symbol_width = max(len(symbol) for symbol, _ in task.inputs)
    lines = [f"{task.name}  ({task.tokens} tokens, {task.size} positions)"]
    for name, (symbol, pos), labels in zip(task.names, task.inputs, task.labels):
        target = "  -> " + ",".join(str(t) for t in labels) if labels else ""
        lines.append(f"  {name:<{width}}  {symbol:<{symbol_width}}  pos {pos}{target}")
    lines.append(to_text(NamedMask(task.mask, task.names, task.name)))
    return "\n".join(lines)

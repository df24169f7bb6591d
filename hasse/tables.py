"""Plain-text tables shared by the commands' reports.

- :func:`capped_rows` -- one line per item up to a limit, then how many more there are
  (``hasse leak``, ``hasse gpu-check``, ``hasse merge``, ``hasse consistent``);
- :func:`task_table` -- a task's positions: name, input, position id and labels
  (``hasse merge``, ``hasse counterexample``).
"""

from __future__ import annotations

from typing import Callable, Sequence


def capped_rows(items: Sequence, row: Callable[[object], str], limit: int, *, indent: str = "  ",
                more: str = "(use --json for all)") -> list[str]:
    """``row(x)`` for the first ``limit`` items, then a line ``… and K more`` when ``K`` were left out.

    >>> capped_rows([1, 2, 3], lambda x: f"  row {x}", 2)
    ['  row 1', '  row 2', '  … and 1 more (use --json for all)']
    >>> capped_rows([1], str, 2)
    ['1']
    """
    lines = [row(x) for x in items[:limit]]
    if len(items) > limit:
        lines.append(f"{indent}… and {len(items) - limit} more {more}")
    return lines


def task_table(task, label_header: str = "label") -> list[str]:
    """The header and one row per position: index, name, input symbol, position id, labels (``-`` if none).

    >>> from hasse.theory.task import make_task
    >>> print("\\n".join(task_table(make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 1], [[1, 0], [1, 1]]))))
     pos name     input            pos id  label
       0 0        x0                    0  -
       1 1        [MASK]                1  1
    """
    lines = [f"{'pos':>4} {'name':<8} {'input':<16} {'pos id':>6}  {label_header}"]
    for p, ((sym, pid), ts) in enumerate(zip(task.inputs, task.labels)):
        lines.append(f"{p:>4} {task.names[p]:<8} {sym:<16} {pid:>6}  {','.join(map(str, ts)) or '-'}")
    return lines

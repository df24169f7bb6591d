"""Plain-text tables shared by the commands' reports.

- :func:`align` -- rows of cells in columns whose widths come from the content
  (every multi-row listing: ``hasse prove``'s verdicts, leaks, flows, ...);
- :class:`Columns` -- the same for rows printed one at a time as they come
  (``hasse prove``), the widths fixed from what is known before the first row;
- :func:`capped_rows` -- one line per item up to a limit, then how many more there are
  (``hasse leak``, ``hasse gpu-check``, ``hasse merge``, ``hasse consistent``);
- :func:`cut` and :func:`cut_items` -- text or a list shortened to a limit, ending
  with an ellipsis that says how much was left out (``… (+412 more characters)``);
- :func:`task_table` -- a task's positions: name, input, position id and labels
  (``hasse merge``, ``hasse counterexample``).

Nothing is cut silently: every shortened text or list ends with ``…`` (``...`` under
``--ascii``) and the count of what was left out.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence


def ellipsis(ascii: bool = False) -> str:
    """``"…"``, or ``"..."`` for terminals without Unicode (``--ascii``)."""
    return "..." if ascii else "…"


def cut(text: str, limit: int, *, ascii: bool = False, unit: str = "characters") -> str:
    """``text`` whole when it has at most ``limit`` characters, else its first ``limit`` and how many were left out.

    >>> cut("abcdefghij", 4)
    'abcd… (+6 more characters)'
    >>> cut("abcdefghij", 4, ascii=True), cut("abc", 4)
    ('abcd... (+6 more characters)', 'abc')
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}{ellipsis(ascii)} (+{len(text) - limit:,} more {unit})"


def cut_items(items: Sequence, limit: int, *, sep: str = ", ", ascii: bool = False, show=str) -> str:
    """The first ``limit`` items joined by ``sep``, then ``… (+K more)`` when ``K`` were left out.

    >>> cut_items(range(12), 3)
    '0, 1, 2, … (+9 more)'
    >>> cut_items([4, 5], 3, ascii=True)
    '4, 5'
    """
    items = list(items)
    shown = [show(x) for x in items[:limit]]
    if len(items) > limit:
        shown.append(f"{ellipsis(ascii)} (+{len(items) - limit:,} more)")
    return sep.join(shown)


def column_widths(rows: Iterable[Sequence[object]]) -> list[int]:
    """The width of each column: its longest cell (rows may have fewer cells than others).

    >>> column_widths([("a", "bbb"), ("cc", "d", "eeee")])
    [2, 3, 4]
    """
    widths: list[int] = []
    for row in rows:
        for i, cell in enumerate(row):
            if i == len(widths):
                widths.append(0)
            widths[i] = max(widths[i], len(str(cell)))
    return widths


def _line(cells: Sequence[object], widths: Sequence[int], right: Iterable[int], sep: str, indent: str) -> str:
    right = set(right)
    parts = []
    last = len(cells) - 1
    for i, cell in enumerate(cells):
        text, width = str(cell), widths[i] if i < len(widths) else 0
        if i in right:
            parts.append(text.rjust(width))
        else:
            parts.append(text if i == last else text.ljust(width))  # no trailing blanks
    return (indent + sep.join(parts)).rstrip()


def align(rows: Sequence[Sequence[object]], *, header: Sequence[str] | None = None, right: Iterable[int] = (),
          sep: str = "  ", indent: str = "") -> list[str]:
    """One line per row, each column as wide as its longest cell (``right``: the columns aligned right).

    >>> print("\\n".join(align([("P1 (5)", 1, 2), ("P10 (14)", 10, 2)], header=("position", "target", "depth"),
    ...                        right=(1, 2))))
    position  target  depth
    P1 (5)         1      2
    P10 (14)      10      2
    """
    rows = [tuple(r) for r in rows]
    widths = column_widths(([tuple(header)] if header else []) + rows)
    lines = [_line(header, widths, right, sep, indent)] if header else []
    return lines + [_line(r, widths, right, sep, indent) for r in rows]


class Columns:
    """Aligned rows printed one at a time: the widths are fixed before the first row.

    ``widths`` come from what is known in advance (:func:`column_widths` over the
    header and sample values: every theorem name, every method); a cell wider than its
    column widens it for later rows only, so give the widest values you know.

    >>> cols = Columns(("theorem", "method", "verdict"), [("limit_is_preorder", "exhaustive", "refuted")])
    >>> print("\\n".join([cols.header(), cols.row(("a", "z3", "proved"))]))
    theorem            method      verdict
    a                  z3          proved
    """

    def __init__(self, header: Sequence[str], samples: Iterable[Sequence[object]] = (), *, right: Iterable[int] = (),
                 sep: str = "  ", indent: str = ""):
        self.titles = tuple(header)
        self.widths = column_widths([self.titles, *samples])
        self.right, self.sep, self.indent = tuple(right), sep, indent

    def header(self) -> str:
        return _line(self.titles, self.widths, self.right, self.sep, self.indent)

    def row(self, cells: Sequence[object]) -> str:
        for i, cell in enumerate(cells[:-1]):  # the last column is free text
            if i < len(self.widths):
                self.widths[i] = max(self.widths[i], len(str(cell)))
        return _line(cells, self.widths, self.right, self.sep, self.indent)


def capped_rows(items: Sequence, row: Callable[[object], str], limit: int, *, indent: str = "  ",
                more: str = "(use --json for all)", ascii: bool = False) -> list[str]:
    """``row(x)`` for the first ``limit`` items, then a line ``… and K more`` when ``K`` were left out.

    >>> capped_rows([1, 2, 3], lambda x: f"  row {x}", 2)
    ['  row 1', '  row 2', '  … and 1 more (use --json for all)']
    >>> capped_rows([1], str, 2)
    ['1']
    """
    lines = [row(x) for x in items[:limit]]
    if len(items) > limit:
        lines.append(f"{indent}{ellipsis(ascii)} and {len(items) - limit:,} more {more}")
    return lines


def capped_table(items: Sequence, cells: Callable[[object], Sequence[object]], limit: int, *,
                 header: Sequence[str] | None = None, right: Iterable[int] = (), indent: str = "  ",
                 more: str = "(use --json for all)", ascii: bool = False) -> list[str]:
    """:func:`align` over ``cells(x)`` for the first ``limit`` items, then ``… and K more``.

    The widths come from the rows shown.

    >>> print("\\n".join(capped_table([1, 22, 333], lambda x: (x, "ok"), 2, header=("value", "state"), right=(0,))))
      value  state
          1  ok
         22  ok
      … and 1 more (use --json for all)
    """
    lines = align([cells(x) for x in items[:limit]], header=header, right=right, indent=indent)
    if len(items) > limit:
        lines.append(f"{indent}{ellipsis(ascii)} and {len(items) - limit:,} more {more}")
    return lines


def task_table(task, label_header: str = "label") -> list[str]:
    """The header and one row per position: index, name, input symbol, position id, labels (``-`` if none).

    >>> from hasse.theory.task import make_task
    >>> print("\\n".join(task_table(make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 1], [[1, 0], [1, 1]]))))
    pos  name  input   pos id  label
      0  0     x0           0  -
      1  1     [MASK]       1  1
    """
    rows = [(p, task.names[p], sym, pid, ",".join(map(str, ts)) or "-")
            for p, ((sym, pid), ts) in enumerate(zip(task.inputs, task.labels))]
    return align(rows, header=("pos", "name", "input", "pos id", label_header), right=(0, 3))

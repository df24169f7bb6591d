"""Text views of a mask and of its analysis, for the terminal.

Each function returns a string; the CLI prints it. Three views:

- :func:`matrix_view` -- the mask itself, one row per query and one character per key;
- :func:`classes_view` -- the classes of mutual reachability, in canonical order;
- :func:`hasse_view` -- the Hasse diagram as edges ``c_lower -> c_upper``.

Long listings are truncated to their first ``limit`` entries and say how many were left
out. Every view has an ``ascii=True`` form for terminals without Unicode.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from hasse.theory.analysis import MaskAnalysis

MATRIX_VIEW_MAX_N = 64

# Cell glyphs: attended, not attended, reachable at depth L but not attended, highlighted.
_GLYPHS = {"on": "█", "off": "·", "reach": "░", "mark": "●"}
_ASCII_GLYPHS = {"on": "#", "off": ".", "reach": "+", "mark": "@"}


def _glyphs(ascii: bool) -> dict[str, str]:
    return _ASCII_GLYPHS if ascii else _GLYPHS


def _ellipsis(ascii: bool) -> str:
    return "..." if ascii else "…"


def _arrow(ascii: bool) -> str:
    return "->" if ascii else "→"


def depth_phrase(layers: int | None, first: int | None = None) -> str:
    """How far a verdict reaches, said so that it cannot be misread.

    A clean verdict holds at every depth up to ``layers`` (``None``: the limit, every
    depth); a violation is named with the depth at which it first appears (the length of
    the shortest witness path), never with "every depth", which reads as "leaks at
    every depth".

    >>> depth_phrase(None), depth_phrase(None, 2)
    ('in the limit (every depth)', 'in the limit (first at depth 2)')
    >>> depth_phrase(1), depth_phrase(3, 0)
    ('within L = 1 layer', 'within L = 3 layers (first at depth 0)')
    """
    where = "in the limit" if layers is None else f"within L = {layers} layer{'' if layers == 1 else 's'}"
    if first is None:
        return where + (" (every depth)" if layers is None else "")
    return f"{where} (first at depth {first})"


def stack_where(layers: int, depth: int, first: int | None = None) -> str:
    """``within L = 6 layers, the stack's depth (first at layer 4)``: a stack verdict's reach.

    >>> stack_where(6, 6, 4), stack_where(2, 6)
    ("within L = 6 layers, the stack's depth (first at layer 4)", 'within L = 2 layers')
    """
    out = f"within L = {layers} layer{'' if layers == 1 else 's'}" + (", the stack's depth" if layers == depth else "")
    return out + (f" (first at layer {first})" if first is not None else "")


def position_text(p: int, names) -> str:
    """``P1 (5)`` for a named position, ``5`` when its name is its index."""
    return str(p) if names[p] == str(p) else f"{names[p]} ({p})"


def path_text(path: Sequence[int], names: Sequence[str] | None = None, ascii: bool = False,
              hop_layers: Sequence[int] | None = None) -> str:
    """A witness path, source first; through a stack (``hop_layers``) each hop with its layer (1-based).

    A named position reads ``name(index)``.

    >>> path_text((3, 5, 7), ascii=True), path_text((3, 5, 7), hop_layers=(2, 4), ascii=True)
    ('3 -> 5 -> 7', '3 -[layer 2]-> 5 -[layer 4]-> 7')
    >>> path_text((3, 5), hop_layers=(1,)), path_text((4,), hop_layers=())
    ('3 ─[layer 1]→ 5', '4')
    """
    def name(v: int) -> str:
        return str(v) if names is None or names[v] == str(v) else f"{names[v]}({v})"

    if hop_layers is None:
        return (" -> " if ascii else " → ").join(name(v) for v in path)
    if len(hop_layers) != max(len(path) - 1, 0):
        raise ValueError(f"a path of {len(path)} positions has {len(path) - 1} hops, not {len(hop_layers)} layers")
    dash, arrow = ("-", "->") if ascii else ("─", "→")
    out = [name(path[0])] if len(path) else []
    for v, layer in zip(path[1:], hop_layers):
        out.append(f" {dash}[layer {layer}]{arrow} {name(v)}")
    return "".join(out)


def key_only_line(key_only, kind: str) -> str | None:
    """The report line naming key-only positions (None when there are none).

    >>> key_only_line(range(10), "cache")
    'key-only positions (KV cache, feed the queries, attend nothing): 0-9'
    """
    from hasse.theory.mask import KEY_ONLY_KINDS

    key_only = list(key_only)
    if not key_only:
        return None
    what = KEY_ONLY_KINDS.get(kind, "keys only")
    return f"key-only positions ({what}, feed the queries, attend nothing): {', '.join(_ranges(key_only))}"


def is_default_names(names: Sequence[str] | None, n: int) -> bool:
    """True when ``names`` is absent or is the plain ``"0" .. "n-1"``."""
    return names is None or tuple(names) == tuple(str(i) for i in range(n))


def column_ruler(n: int, step: int) -> str:
    """A line with the key index written above every ``step``-th column.

    >>> column_ruler(12, 5)
    '0    5    10'
    """
    line = [" "] * (n + 3)
    for k in range(0, n, step):
        for i, ch in enumerate(str(k)):
            line[k + i] = ch
    return "".join(line).rstrip()


def matrix_view(
    mask: np.ndarray,
    names: Sequence[str] | None = None,
    highlight: Iterable[tuple[int, int]] | None = None,
    reach: np.ndarray | None = None,
    ascii: bool = False,
    max_n: int = MATRIX_VIEW_MAX_N,
) -> str:
    """The mask as text: one row per query ``q``, one character per key ``k``.

    Cell ``(q, k)`` shows ``M[q, k]``: ``█`` (``#``) attended, ``·`` (``.``) not.
    With ``reach`` (an ``n x n`` bool matrix such as ``R(L)``), a cell that is reachable
    but not attended shows ``░`` (``+``). Cells in ``highlight`` (pairs ``(q, k)``, e.g.
    the edges ``(v_{i+1}, v_i)`` of a leaking path) show ``●`` (``@``). Rows are labelled
    with ``names`` right-aligned (and the position, when the names are not plain
    indices); above the rows a ruler gives the key index every 5 (``n <= 40``) or 10
    columns, and short names are also written vertically over their columns. A legend
    follows when a highlighted or reachable-only cell is shown.

    Parameters
    ----------
    mask : (n, n) bool array, ``M[q, k]``.
    names : labels per position; default ``"0" .. "n-1"``.
    highlight : cells ``(q, k)`` to mark.
    reach : (n, n) bool array of cells to mark as reachable.
    ascii : use ``# . + @`` instead of Unicode glyphs.
    max_n : above this size the view is replaced by a one-line note.

    Returns
    -------
    str, lines joined by ``"\\n"``, no trailing newline.

    Examples
    --------
    >>> print(matrix_view(np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], bool), ascii=True))
      0
    0 #..
    1 ##.
    2 .##
    """
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    ell = _ellipsis(ascii)
    if n > max_n:
        return f"({n} x {n} mask: the matrix view is shown only for n <= {max_n}; use --png {ell})"
    if names is None:
        names = [str(i) for i in range(n)]
    names = [str(s) for s in names]
    glyph = _glyphs(ascii)
    marks = set() if highlight is None else {(int(q), int(k)) for q, k in highlight}
    reach = None if reach is None else np.asarray(reach, dtype=bool)

    if is_default_names(names, n):
        labels = names
    else:
        index_width = len(str(n - 1))
        labels = [f"{names[p]} {p:>{index_width}}" for p in range(n)]
    width = max(len(s) for s in labels)
    pad = " " * (width + 1)

    used: set[str] = set()
    lines = []
    if not is_default_names(names, n) and max(len(s) for s in names) <= 3:
        tall = max(len(s) for s in names)
        for i in range(tall):
            lines.append(pad + "".join(s.rjust(tall)[i] for s in names).rstrip())
    lines.append(pad + column_ruler(n, 5 if n <= 40 else 10))
    for q in range(n):
        row = []
        for k in range(n):
            if (q, k) in marks:
                row.append(glyph["mark"])
            elif mask[q, k]:
                row.append(glyph["on"])
            elif reach is not None and reach[q, k]:
                row.append(glyph["reach"])
                used.add("reach")
            else:
                row.append(glyph["off"])
        lines.append(f"{labels[q]:>{width}} " + "".join(row))
    if marks or used:
        legend = [f"{glyph['on']} attends", f"{glyph['off']} does not"]
        if used:
            legend.append(f"{glyph['reach']} reachable, not attended")
        if marks:
            legend.append(f"{glyph['mark']} highlighted")
        lines.append(pad + "   ".join(legend))
    return "\n".join(lines)


def _ranges(values: Sequence[int], min_run: int = 4) -> list[str]:
    """Runs of at least ``min_run`` consecutive integers as ``"a-b"``, others one by one.

    >>> _ranges([0, 1, 2, 5, 7, 8, 9, 10])
    ['0', '1', '2', '5', '7-10']
    """
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    pieces: list[str] = []
    for run in runs:
        if len(run) >= min_run:
            pieces.append(f"{run[0]}-{run[-1]}")
        else:
            pieces.extend(str(v) for v in run)
    return pieces


def members_text(
    members: Sequence[int],
    names: Sequence[str],
    max_items: int = 8,
    sep: str = ", ",
    ascii: bool = False,
) -> str:
    """The members of a class as text, truncated after ``max_items`` pieces.

    Plain index names are written with runs of 4 or more as ranges (``0-7``); other
    names one by one.

    >>> members_text(range(10), [str(i) for i in range(10)])
    '0-9'
    >>> members_text([0, 1, 2], ["F0", "F1", "B1"], max_items=2)
    'F0, F1, … (+1)'
    """
    members = list(members)
    if all(names[p] == str(p) for p in members):
        pieces = _ranges(members)
    else:
        pieces = [names[p] for p in members]
    if len(pieces) > max_items:
        rest = len(pieces) - max_items
        pieces = pieces[:max_items] + [f"{_ellipsis(ascii)} (+{rest})"]
    return sep.join(pieces)


def _more(count: int, what: str, ascii: bool) -> str:
    return f"  {_ellipsis(ascii)} and {count} more {what}"


def classes_view(analysis: MaskAnalysis, limit: int = 20, ascii: bool = False) -> str:
    """The classes in canonical order, one per line: ``c0 {F0}``, ``c1 {F1, F2}``, ...

    Only the first ``limit`` classes are listed; a last line says how many more there
    are. Members are given by name; a class of more than 8 pieces is truncated.

    >>> from theory.analysis import MaskAnalysis
    >>> a = MaskAnalysis(n=3, residual=True, convergence_depth=1, preperiod=None,
    ...     period=None, classes=((0, 1), (2,)), hasse_edges=((0, 1),), dense=True,
    ...     height=2, empty_rows=(), layers=None, reachability=None,
    ...     mask=np.ones((3, 3), bool), names=("a", "b", "c"))
    >>> print(classes_view(a))
    2 classes
      c0  {a, b}
      c1  {c}
    """
    count = len(analysis.classes)
    lines = [f"{count} class{'es' if count != 1 else ''}"]
    width = len(f"c{min(count, limit) - 1}") if count else 2
    for i, members in enumerate(analysis.classes[:limit]):
        tag = f"c{i}"
        text = members_text(members, analysis.names, ascii=ascii)
        lines.append(f"  {tag:<{width}}  {{{text}}}")
    if count > limit:
        lines.append(_more(count - limit, "classes", ascii))
    return "\n".join(lines)


def hasse_view(
    analysis: MaskAnalysis, limit: int = 20, max_targets: int = 12, ascii: bool = False
) -> str:
    """The Hasse edges grouped by lower class: ``c0 {F0}  → c1, c5``.

    Lower classes are upstream (information flows up). One line per lower class that
    has edges, in class order; only the first ``limit`` lines are shown, and at most
    ``max_targets`` upper classes per line.

    >>> from theory.analysis import MaskAnalysis
    >>> a = MaskAnalysis(n=3, residual=True, convergence_depth=1, preperiod=None,
    ...     period=None, classes=((0,), (1,), (2,)), hasse_edges=((0, 1), (0, 2)),
    ...     dense=True, height=2, empty_rows=(), layers=None, reachability=None,
    ...     mask=np.eye(3, dtype=bool), names=("0", "1", "2"))
    >>> print(hasse_view(a, ascii=True))
    Hasse diagram: 3 classes, 2 edges (lower -> upper, upstream first)
      c0 {0}  -> c1, c2
    """
    arrow = _arrow(ascii)
    edges = analysis.hasse_edges
    count = len(analysis.classes)
    head = (
        f"Hasse diagram: {count} class{'es' if count != 1 else ''}, "
        f"{len(edges)} edge{'s' if len(edges) != 1 else ''} (lower {arrow} upper, upstream first)"
    )
    if not edges:
        return head + "\n  (no edges: the classes are pairwise unordered)"
    uppers: dict[int, list[int]] = {}
    for lower, upper in edges:
        uppers.setdefault(lower, []).append(upper)
    lowers = sorted(uppers)
    shown = lowers[:limit]
    tags = [f"c{c} {{{members_text(analysis.classes[c], analysis.names, max_items=3, ascii=ascii)}}}"
            for c in shown]
    width = max(len(t) for t in tags)
    lines = [head]
    for c, tag in zip(shown, tags):
        targets = sorted(uppers[c])
        text = ", ".join(f"c{u}" for u in targets[:max_targets])
        if len(targets) > max_targets:
            text += f", {_ellipsis(ascii)} (+{len(targets) - max_targets})"
        lines.append(f"  {tag:<{width}}  {arrow} {text}")
    if len(lowers) > limit:
        hidden = sum(len(uppers[c]) for c in lowers[limit:])
        lines.append(_more(len(lowers) - limit, f"lower classes ({hidden} edges)", ascii))
    return "\n".join(lines)

"""The Hasse diagram of an analysis as Graphviz DOT text (``hasse analyze --dot F``).

Render it with ``dot -Tpng F -o F.png``; no Graphviz is needed to write it.
"""

from __future__ import annotations

from hasse.theory.analysis import MaskAnalysis

from hasse.views.render_text import members_text

# Class labels list at most this many members (or index ranges) before "... (+k)".
DOT_LABEL_MAX_ITEMS = 12


def dot_quote(text: str) -> str:
    """``text`` as a double-quoted DOT string (backslashes, quotes, newlines escaped).

    >>> print(dot_quote('say "hi"'))
    "say \\"hi\\""
    """
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r", "").replace("\n", "\\n")
    return f'"{text}"'


def class_label(members, names, max_items: int = DOT_LABEL_MAX_ITEMS) -> str:
    """The label of one class: its positions, with names where they differ.

    Plain index names give ``0,1,2`` (runs of 4 or more as ``0-7``); named positions give
    ``3 (F3)``, several joined by ``, ``.

    >>> class_label((0, 1, 2), ("0", "1", "2", "3"))
    '0,1,2'
    >>> class_label((3,), ("F0", "F1", "F2", "F3"))
    '3 (F3)'
    """
    members = list(members)
    if all(names[p] == str(p) for p in members):
        return members_text(members, names, max_items=max_items, sep=",", ascii=True)
    pieces = [f"{p} ({names[p]})" for p in members[:max_items]]
    if len(members) > max_items:
        pieces.append(f"... (+{len(members) - max_items})")
    return ", ".join(pieces)


def _count(k: int, one: str, many: str) -> str:
    return f"{k} {one if k == 1 else many}"


def to_dot(analysis: MaskAnalysis, graph_name: str = "hasse") -> str:
    """Graphviz DOT text of the Hasse diagram: a node per class, an edge per cover.

    Node ``c<i>`` is class ``i`` in canonical order, labelled by its positions (see
    :func:`class_label`); an edge ``c<lower> -> c<upper>`` follows the flow of
    information. ``rankdir=BT`` puts upstream classes at the bottom. Classes of more
    than one position are shaded. The output depends only on the analysis.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.analysis import MaskAnalysis
    >>> a = MaskAnalysis(n=2, residual=True, convergence_depth=1, preperiod=None,
    ...     period=None, classes=((0,), (1,)), hasse_edges=((0, 1),), dense=True,
    ...     height=2, empty_rows=(), layers=None, reachability=None,
    ...     mask=np.array([[1, 0], [1, 1]], bool), names=("0", "1"))
    >>> print(to_dot(a), end="")
    digraph hasse {
      // Hasse diagram of an attention mask: n = 2, 2 classes, 1 edge; lower -> upper
      rankdir=BT;
      node [shape=box, style="rounded", fontname="Helvetica"];
      edge [arrowsize=0.7];
      c0 [label="0"];
      c1 [label="1"];
      c0 -> c1;
    }
    """
    lines = [
        f"digraph {dot_quote(graph_name) if not graph_name.isidentifier() else graph_name} {{",
        f"  // Hasse diagram of an attention mask: n = {analysis.n}, "
        f"{_count(len(analysis.classes), 'class', 'classes')}, "
        f"{_count(len(analysis.hasse_edges), 'edge', 'edges')}; lower -> upper",
        "  rankdir=BT;",
        '  node [shape=box, style="rounded", fontname="Helvetica"];',
        "  edge [arrowsize=0.7];",
    ]
    for i, members in enumerate(analysis.classes):
        label = dot_quote(class_label(members, analysis.names))
        extra = ', style="rounded,filled", fillcolor="#e8eef7"' if len(members) > 1 else ""
        lines.append(f"  c{i} [label={label}{extra}];")
    for lower, upper in analysis.hasse_edges:
        lines.append(f"  c{lower} -> c{upper};")
    lines.append("}")
    return "\n".join(lines) + "\n"

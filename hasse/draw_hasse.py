"""A mask and its Hasse diagram as one PNG (``hasse analyze --png``, ``hasse merge --png``).

:func:`draw_analysis` puts the mask's heatmap (:func:`hasse.draw_mask.heatmap`) beside
its Hasse diagram. The diagram is laid out by :func:`hasse.layout.layered_layout` (no
Graphviz needed): a class sits on the layer given by the longest chain below it,
upstream at the bottom. The geometry is computed in points, so the figure grows with
the diagram and labels keep a readable size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hasse.draw_mask import heat_geometry, heatmap
from hasse.figure import EDGE, new_figure, require_matplotlib, save_png, stream, stream_colours
from hasse.layout import Layout, layered_layout
from hasse.theory.analysis import MaskAnalysis

MAX_DRAWN_CLASSES = 200  # above this, only the heatmap is drawn
LABEL_CHARS = 24  # node labels are cut to about this many characters


def node_label(members: Sequence[int], names: Sequence[str]) -> str:
    """Members' names joined by commas, cut to about ``LABEL_CHARS`` characters.

    >>> node_label(range(12), [str(i) for i in range(12)])
    '0-11'
    >>> node_label(range(10), [f"Q{i}" for i in range(10)])
    'Q0,Q1,Q2,Q3,Q4,Q5,Q6…+3'
    >>> node_label([0], ["P1: agg(x0 x2)@1 ⇒1"])
    'P1: agg(x0 x2)@1 ⇒1'
    """
    from hasse.render_text import members_text

    full = members_text(members, names, max_items=len(members), sep=",")
    if len(full) <= LABEL_CHARS:
        return full
    pieces = full.split(",")
    if len(pieces) == 1 or len(pieces[0]) > LABEL_CHARS - 4:  # one long name: cut the name itself
        head = pieces[0] if len(pieces[0]) <= LABEL_CHARS else pieces[0][: LABEL_CHARS - 1] + "…"
        return head + (f"…+{len(pieces) - 1}" if len(pieces) > 1 else "")
    kept: list[str] = []
    for piece in pieces:
        if len(",".join(kept + [piece])) > LABEL_CHARS - 4:
            break
        kept.append(piece)
    return ",".join(kept) + f"…+{len(pieces) - len(kept)}"


def _text_width(text: str, size: float) -> float:
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), text, size=size).get_extents().width if text else 0.0


@dataclass
class _DiagramGeometry:
    """The Hasse panel: its layout in points and its size in inches.

    One data unit of the panel is ``scale`` points, so a label of ``FONT`` points
    measured at scale 1 fits its box at any scale.
    """

    FONT = 9.0  # label size in points at scale 1
    BOX_H = 18.0  # box height
    GAP = 14.0  # horizontal space between boxes

    lay: Layout
    widths: list[float]  # box widths, waypoints included (0)
    layer_gap: float  # vertical space between the boxes of adjacent layers
    span: tuple[float, float]  # extent of the drawing, in data units
    scale: float
    width: float  # inches
    height: float

    @classmethod
    def plan(cls, analysis: MaskAnalysis, names: Sequence[str], beside: float) -> "_DiagramGeometry":
        """Lay out the diagram of ``analysis`` to stand beside a heatmap ``beside`` inches tall."""
        widths = [_text_width(node_label(c, names), cls.FONT) + 14 for c in analysis.classes]
        lay = layered_layout(widths, analysis.hasse_edges, gap=cls.GAP)
        widths += [0.0] * (len(lay.layer) - len(widths))
        levels = max(lay.layer)
        # Layers 30 pt apart, closer when that would make the diagram much taller than
        # the heatmap (long chains), but never under 10 pt.
        room = max(beside * 72, 400.0) - (levels + 1) * cls.BOX_H
        layer_gap = float(np.clip(room / levels, 10.0, 30.0)) if levels else 0.0
        span_x = float(max(lay.x[v] + widths[v] / 2 for v in range(len(lay.layer))))
        span_y = levels * (cls.BOX_H + layer_gap) + cls.BOX_H
        margin = 20.0
        max_w, max_h = max(12.0, 1.5 * beside), max(12.0, 1.3 * beside)  # inches
        scale = min(1.0, max_w * 72 / (span_x + margin), max_h * 72 / (span_y + margin))
        scale = max(scale, 0.35)  # below this labels become unreadable: grow instead
        width = max((span_x + margin) * scale / 72, 2.8)  # room for the title
        height = (span_y + margin) * scale / 72
        return cls(lay, widths, layer_gap, (span_x, span_y), scale, width, height)

    def draw(self, ax, analysis: MaskAnalysis) -> None:
        from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
        from matplotlib.path import Path

        lay, widths, box_h = self.lay, self.widths, self.BOX_H
        units_x, units_y = self.width * 72 / self.scale, self.height * 72 / self.scale
        ax.set_xlim(self.span[0] / 2 - units_x / 2, self.span[0] / 2 + units_x / 2)
        ax.set_ylim(self.span[1] / 2 - units_y / 2, self.span[1] / 2 + units_y / 2)
        y = [level * (box_h + self.layer_gap) + box_h / 2 for level in lay.layer]

        def clip(v, toward):
            """Where the segment from the centre of box ``v`` to ``toward`` leaves it."""
            dx, dy = toward[0] - lay.x[v], toward[1] - y[v]
            a, b = widths[v] / 2 + 1.5, box_h / 2 + 1.5
            t = min(a / abs(dx) if dx else np.inf, b / abs(dy) if dy else np.inf)
            return lay.x[v] + t * dx, y[v] + t * dy

        s = self.scale
        for route in lay.routes:
            points = [(lay.x[v], y[v]) for v in route]
            points[0] = clip(route[0], points[1])
            points[-1] = clip(route[-1], points[-2])
            codes = [Path.MOVETO] + [Path.LINETO] * (len(points) - 1)
            ax.add_patch(FancyArrowPatch(path=Path(points, codes), arrowstyle="-|>", mutation_scale=8 * s,
                                         color=EDGE, linewidth=0.8 * s, zorder=1))
        colours = stream_colours(analysis.names)
        for c, members in enumerate(analysis.classes):
            streams = {stream(analysis.names[p]) for p in members}
            fill = colours.get(streams.pop(), "#eeeeee") if len(streams) == 1 else "#eeeeee"
            ax.add_patch(FancyBboxPatch((lay.x[c] - widths[c] / 2, y[c] - box_h / 2), widths[c], box_h,
                                        boxstyle=f"round,pad=0,rounding_size={box_h / 3:.2f}",
                                        facecolor=fill, edgecolor="#333333",
                                        linewidth=(1.6 if len(members) > 1 else 0.8) * s, zorder=2))
            ax.text(lay.x[c], y[c], node_label(members, analysis.names), ha="center", va="center",
                    fontsize=self.FONT * s, zorder=3)


def draw_analysis(analysis: MaskAnalysis, path: str, title: str | None = None) -> None:
    """Write a PNG: the mask as a heatmap (left) and its Hasse diagram (right).

    The heatmap shows ``M[q, k]`` (and ``R(L)`` when the analysis has a reachability);
    the diagram has one rounded box per class, labelled with its members' names, on the
    layer of its longest chain below (upstream at the bottom), and an arrow per Hasse
    edge, lower to upper. Above ``MAX_DRAWN_CLASSES`` classes only the heatmap is drawn.
    The figure's title is ``title`` (e.g. the mask spec) followed by a summary.

    Raises
    ------
    InputError if matplotlib is missing or ``path`` cannot be written.
    """
    require_matplotlib()
    n = analysis.n
    names = [str(s) for s in analysis.names]
    classes = analysis.classes
    side, left, bottom = heat_geometry(n, names)
    diagram = None
    if 0 < len(classes) <= MAX_DRAWN_CLASSES:
        diagram = _DiagramGeometry.plan(analysis, names, beside=side)
        side = max(side, min(0.8 * diagram.height, 9.0))  # a tall diagram: grow the heatmap
    diag_w, diag_h = (diagram.width, diagram.height) if diagram else (3.5, 1.5)

    top, gutter, right = 0.9, 0.6, 0.3  # inches
    width = left + side + gutter + diag_w + right
    height = top + max(bottom + side, diag_h + 0.4) + 0.2
    fig = new_figure(width, height)
    heat_y = (height - top - side - bottom) / 2 + bottom
    ax_heat = fig.add_axes((left / width, heat_y / height, side / width, side / height))
    reach = analysis.reachability
    heat_title = f"mask, n = {n}"
    if reach is not None:
        heat_title += f", with R(L) at L = {analysis.layers}"
    heatmap(ax_heat, np.asarray(analysis.mask, dtype=bool), names, reach=reach,
             empty=analysis.empty_rows, title=heat_title)

    diag_y = (height - top - diag_h) / 2 + 0.2
    ax = fig.add_axes(((left + side + gutter) / width, diag_y / height, diag_w / width, diag_h / height))
    ax.set_axis_off()
    count = f"{len(classes)} class{'es' if len(classes) != 1 else ''}"
    if diagram:
        diagram.draw(ax, analysis)
        edges = len(analysis.hasse_edges)
        ax.set_title(f"Hasse diagram: {count}, {edges} edge{'s' if edges != 1 else ''}\n"
                     "upstream at the bottom", fontsize=10)
    else:
        reason = "no classes" if not classes else f"{count}: too large to draw\n(use --dot for Graphviz)"
        ax.text(0.5, 0.5, f"Hasse diagram\n{reason}", ha="center", va="center", fontsize=10,
                transform=ax.transAxes)
    heading = _summary(analysis) if title is None else f"{title}:  {_summary(analysis)}"
    fig.suptitle(heading, fontsize=11, y=1 - 0.25 / height, va="top")
    save_png(fig, path)


def _summary(analysis: MaskAnalysis) -> str:
    """One line: depth, classes, height, density (and the no-residual period)."""
    if analysis.residual:
        depth = f"L* = {analysis.convergence_depth}"
    elif analysis.convergence_depth is not None:
        depth = f"no residual: M^L settles at L = {analysis.convergence_depth}"
    else:
        depth = f"no residual: no limit (pre-period {analysis.preperiod}, period {analysis.period})"
    count = len(analysis.classes)
    parts = [depth, f"{count} class{'es' if count != 1 else ''}", f"height {analysis.height}",
             "dense" if analysis.dense else "sparse"]
    if analysis.empty_rows:
        parts.append(f"{len(analysis.empty_rows)} empty row{'s' if len(analysis.empty_rows) != 1 else ''}")
    return ", ".join(parts)

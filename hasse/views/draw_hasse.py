"""A mask and its Hasse diagram as one picture (``hasse analyze --png``, ``hasse merge --png``).

:func:`draw_analysis` puts the mask's heatmap (:func:`hasse.views.draw_mask.heatmap`) beside
its Hasse diagram. What the diagram shows is planned by :func:`hasse.views.diagram_plan.plan_diagram`:
long chains collapse into one labelled edge ("… 585 hops …"), a diagram still taller than
``MAX_LAYERS`` layers shows its bottom and top layers around a band that names what is
hidden, and one still too large is replaced by a summary panel (height, widest layer,
class-size histogram). Classes are boxes sized by their class size and labelled
``{0..7} (8)``; they are laid out by :func:`hasse.views.layout.layered_layout` (no Graphviz
needed): a class sits on the layer given by the longest chain below it, upstream at
the bottom. The geometry is computed in points, so the figure grows with what is drawn
and labels keep a readable size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hasse.views.diagram_plan import DiagramPlan, plan_diagram
from hasse.views.draw_mask import block_side, heat_geometry, heatmap, wrap_title
from hasse.views.figure import EDGE, new_figure, picture_format, require_matplotlib, save_png, stream, stream_colours
from hasse.views.layout import Layout, layered_layout
from hasse.theory.analysis import MaskAnalysis

LABEL_CHARS = 24  # node labels are cut to about this many characters


def node_label(members: Sequence[int], names: Sequence[str]) -> str:
    """A class's label: its members' names, cut to about ``LABEL_CHARS`` characters, in
    braces with the class size when it has more than one member.

    >>> node_label(range(8), [str(i) for i in range(8)])
    '{0..7} (8)'
    >>> node_label(range(10), [f"Q{i}" for i in range(10)])
    '{Q0,Q1,Q2,Q3,Q4,Q5,Q6…+3} (10)'
    >>> node_label([0], ["P1: agg(x0 x2)@1 ⇒1"])
    'P1: agg(x0 x2)@1 ⇒1'
    """
    from hasse.views.render_text import members_text

    members = list(members)
    if len(members) > 1 and all(names[p] == str(p) for p in members) and members == list(
            range(members[0], members[-1] + 1)):
        return f"{{{members[0]}..{members[-1]}}} ({len(members)})"
    full = members_text(members, names, max_items=len(members), sep=",")
    if len(full) > LABEL_CHARS:
        pieces = full.split(",")
        if len(pieces) == 1 or len(pieces[0]) > LABEL_CHARS - 4:  # one long name: cut the name itself
            head = pieces[0] if len(pieces[0]) <= LABEL_CHARS else pieces[0][: LABEL_CHARS - 1] + "…"
            full = head + (f"…+{len(pieces) - 1}" if len(pieces) > 1 else "")
        else:
            kept: list[str] = []
            for piece in pieces:
                if len(",".join(kept + [piece])) > LABEL_CHARS - 4:
                    break
                kept.append(piece)
            full = ",".join(kept) + f"…+{len(pieces) - len(kept)}"
    return f"{{{full}}} ({len(members)})" if len(members) > 1 else full


def box_height(size: int, base: float = 18.0) -> float:
    """Height in points of a class's box: grows with the log of its size, at most 2.2x.

    >>> box_height(1), box_height(8), box_height(10**6)
    (18.0, 27.0, 39.6)
    """
    return round(base * min(2.2, 1.0 + 0.5 * math.log2(size) / 3), 2)


def _text_width(text: str, size: float) -> float:
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), text, size=size).get_extents().width if text else 0.0


@dataclass
class _DiagramGeometry:
    """The Hasse panel: the planned display graph laid out in points, its size in inches.

    One data unit of the panel is ``scale`` points, so a label of ``FONT`` points
    measured at scale 1 fits its box at any scale. Display nodes are the plan's shown
    classes, then its chains, then its band (:class:`hasse.views.diagram_plan.DiagramPlan`).
    """

    FONT = 9.0  # label size in points at scale 1
    BOX_H = 18.0  # height of a one-member class's box
    GAP = 14.0  # horizontal space between boxes

    plan: DiagramPlan
    labels: list[str]
    lay: Layout
    widths: list[float]  # box widths, waypoints included (0)
    heights: list[float]
    layer_gap: float  # vertical space between the boxes of adjacent layers
    pitch: float  # vertical distance between layers
    span: tuple[float, float]  # extent of the drawing, in data units
    scale: float
    width: float  # inches
    height: float

    @classmethod
    def make(cls, analysis: MaskAnalysis, names: Sequence[str], plan: DiagramPlan,
             beside: float) -> "_DiagramGeometry":
        """Lay out ``plan`` to stand beside a heatmap ``beside`` inches tall."""
        labels = [node_label(analysis.classes[c], names) for c in plan.shown]
        labels += [f"… {chain.hops} hops …" for chain in plan.chains]
        if plan.band is not None:
            labels.append(f"… {plan.band[2]} more classes on layers {plan.band[0]}–{plan.band[1]} …")
        heights = [box_height(len(analysis.classes[c]), cls.BOX_H) for c in plan.shown]
        heights += [cls.BOX_H] * (len(labels) - len(heights))
        widths = [_text_width(t, cls.FONT) + 14 for t in labels]
        lay = layered_layout(widths, plan.edges, gap=cls.GAP)
        widths += [0.0] * (len(lay.layer) - len(widths))
        heights += [0.0] * (len(lay.layer) - len(heights))
        levels = max(lay.layer) if lay.layer else 0
        layer_gap = 26.0
        pitch = max(heights) + layer_gap
        span_x = float(max(lay.x[v] + widths[v] / 2 for v in range(len(lay.layer))))
        span_y = levels * pitch + max(heights)
        margin = 20.0
        max_w, max_h = max(9.0, 1.4 * beside), max(7.0, 1.2 * beside)  # inches
        scale = min(1.0, max_w * 72 / (span_x + margin), max_h * 72 / (span_y + margin))
        scale = max(scale, 0.5)  # below this labels become unreadable: grow instead
        width = max((span_x + margin) * scale / 72, 3.4)  # room for the title
        height = (span_y + margin) * scale / 72
        return cls(plan, labels, lay, widths, heights, layer_gap, pitch, (span_x, span_y), scale, width, height)

    def draw(self, ax, analysis: MaskAnalysis) -> None:
        from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
        from matplotlib.path import Path

        lay, widths, heights, plan = self.lay, self.widths, self.heights, self.plan
        units_x, units_y = self.width * 72 / self.scale, self.height * 72 / self.scale
        ax.set_xlim(self.span[0] / 2 - units_x / 2, self.span[0] / 2 + units_x / 2)
        ax.set_ylim(self.span[1] / 2 - units_y / 2, self.span[1] / 2 + units_y / 2)
        top = max(heights)
        y = [level * self.pitch + top / 2 for level in lay.layer]
        classes = len(plan.shown)

        def clip(v, toward):
            """Where the segment from the centre of box ``v`` to ``toward`` leaves it."""
            dx, dy = toward[0] - lay.x[v], toward[1] - y[v]
            a, b = widths[v] / 2 + 1.5, heights[v] / 2 + 1.5
            t = min(a / abs(dx) if dx else np.inf, b / abs(dy) if dy else np.inf)
            return lay.x[v] + t * dx, y[v] + t * dy

        s = self.scale
        for route in lay.routes:
            points = [(lay.x[v], y[v]) for v in route]
            points[0] = clip(route[0], points[1])
            points[-1] = clip(route[-1], points[-2])
            codes = [Path.MOVETO] + [Path.LINETO] * (len(points) - 1)
            elided = route[0] >= classes or route[-1] >= classes
            ax.add_patch(FancyArrowPatch(path=Path(points, codes), arrowstyle="-|>", mutation_scale=8 * s,
                                         color=EDGE, linewidth=0.8 * s, zorder=1,
                                         linestyle=(0, (2, 2)) if elided else "-"))
        colours = stream_colours(analysis.names)
        for i, c in enumerate(plan.shown):
            members = analysis.classes[c]
            streams = {stream(analysis.names[p]) for p in members}
            fill = colours.get(streams.pop(), "#eeeeee") if len(streams) == 1 else "#eeeeee"
            h = heights[i]
            ax.add_patch(FancyBboxPatch((lay.x[i] - widths[i] / 2, y[i] - h / 2), widths[i], h,
                                        boxstyle=f"round,pad=0,rounding_size={min(h, self.BOX_H) / 3:.2f}",
                                        facecolor=fill, edgecolor="#333333",
                                        linewidth=(1.6 if len(members) > 1 else 0.8) * s, zorder=2))
            ax.text(lay.x[i], y[i], self.labels[i], ha="center", va="center", fontsize=self.FONT * s, zorder=3)
        for i in range(classes, len(self.labels)):  # chains and the band: labels on white, no box
            band = plan.band is not None and i == len(self.labels) - 1
            ax.text(lay.x[i], y[i], self.labels[i], ha="center", va="center", fontsize=self.FONT * s,
                    style="italic", color="#333333", zorder=3,
                    bbox=dict(boxstyle="round,pad=0.25", facecolor="#f4f4f4" if band else "white",
                              edgecolor="#999999", linewidth=0.6 * s, linestyle="--"))


def _draw_summary(ax, analysis: MaskAnalysis, plan: DiagramPlan) -> None:
    """The diagram in numbers: classes, edges, height, widest layer and a class-size histogram."""
    sizes = np.array([len(c) for c in analysis.classes])
    bins = [1]
    while bins[-1] <= sizes.max():
        bins.append(bins[-1] * 2)
    counts, _ = np.histogram(sizes, bins=bins)
    labels = [str(a) if b - a == 1 else f"{a}–{b - 1}" for a, b in zip(bins, bins[1:])]
    ax.barh(range(len(counts)), counts, color="#a9c4e8", edgecolor="#2f4b7c")
    for i, k in enumerate(counts):
        ax.text(k, i, f" {k}", va="center", fontsize=8)
    ax.set_yticks(range(len(counts)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, counts.max() * 1.25)
    ax.set_ylabel("class size (members)", fontsize=8)
    ax.set_xlabel("classes", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.set_title(f"{plan.layers} layers (height), widest layer {plan.widest} classes;\n"
                 "too many to draw: class sizes", fontsize=9)


def draw_analysis(analysis: MaskAnalysis, path: str, title: str | None = None) -> None:
    """Write a picture: the mask as a heatmap (left) and its Hasse diagram (right).

    The heatmap shows ``M[q, k]`` (and ``R(L)`` when the analysis has a reachability),
    by blocks above :data:`hasse.views.draw_mask.BLOCK_ABOVE` positions; the diagram is what
    :func:`hasse.views.diagram_plan.plan_diagram` plans: one rounded box per shown class (sized by
    its class size), on the layer of its longest chain below (upstream at the bottom),
    an arrow per Hasse edge, lower to upper, long chains as one dashed "… k hops …"
    edge and the middle of a tall diagram as one band; a diagram still too large is
    summarised (numbers and a class-size histogram) in a panel as tall as the heatmap.
    The figure's title is ``title`` (e.g. the mask spec) followed by a summary, wrapped
    to the figure's width. The file's suffix picks PNG, SVG or PDF.

    Raises
    ------
    InputError if matplotlib is missing, the suffix is unknown, or ``path`` cannot be written.
    """
    picture_format(path)
    require_matplotlib()
    n = analysis.n
    names = [str(s) for s in analysis.names]
    classes = analysis.classes
    side, left, bottom = heat_geometry(n, names)
    right_bar = 1.1 if block_side(n) > 1 else 0.0  # the block colour bar
    plan = plan_diagram(len(classes), analysis.hasse_edges) if classes else None
    diagram = None
    if plan is not None and not plan.summary_only:
        diagram = _DiagramGeometry.make(analysis, names, plan, beside=side)
        side = max(side, min(0.8 * diagram.height, 7.0))  # a tall diagram: grow the heatmap
        diag_w, diag_h = diagram.width, diagram.height
    else:
        diag_w, diag_h = 3.6, min(max(2.4, 0.6 * side), 3.6)

    heading = _summary(analysis) if title is None else f"{title}:  {_summary(analysis)}"
    gutter, right = 0.6, 0.3  # inches
    width = left + side + right_bar + gutter + diag_w + right
    lines = wrap_title(heading, width, fontsize=11.0)
    top = 0.75 + 0.22 * len(lines)
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

    diag_x = (left + side + right_bar + gutter) / width
    count = f"{len(classes)} class{'es' if len(classes) != 1 else ''}"
    edges = len(analysis.hasse_edges)
    if diagram:
        diag_y = (height - top - diag_h) / 2 + 0.2
        ax = fig.add_axes((diag_x, diag_y / height, diag_w / width, diag_h / height))
        ax.set_axis_off()
        diagram.draw(ax, analysis)
        shown = f"{len(plan.shown)} drawn, " if plan.hidden else ""
        ax.set_title(f"Hasse diagram: {count}, {edges} edge{'s' if edges != 1 else ''}\n"
                     f"{shown}upstream at the bottom", fontsize=10)
    elif plan is not None:
        diag_y = (height - top - diag_h) / 2 + 0.4
        ax = fig.add_axes((diag_x + 0.9 / width, diag_y / height, (diag_w - 1.0) / width, (diag_h - 0.8) / height))
        _draw_summary(ax, analysis, plan)
        fig.text(diag_x + diag_w / 2 / width, (diag_y + diag_h - 0.15) / height,
                 f"Hasse diagram: {count}, {edges} edges", ha="center", va="bottom", fontsize=10)
    else:
        ax = fig.add_axes((diag_x, 0.3, diag_w / width, 0.3))
        ax.set_axis_off()
        ax.text(0.5, 0.5, "Hasse diagram\nno classes", ha="center", va="center", fontsize=10,
                transform=ax.transAxes)
    fig.suptitle("\n".join(lines), fontsize=11, y=1 - 0.15 / height, va="top")
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

"""Pictures of a mask and its Hasse diagram as PNG files (``--png F``), with matplotlib.

- :func:`draw_analysis` -- the mask as a heatmap beside its Hasse diagram;
- :func:`draw_mask` -- the heatmap alone, with an optional path drawn over it (a leak
  witness ``v_0 -> v_1 -> ...``).

The Hasse diagram is laid out by :func:`hasse.layout.layered_layout` (no Graphviz
needed; its names are importable from here too): a class sits on the layer given by
the longest chain below it, upstream at the bottom. The geometry is computed in points,
so the figure grows with the diagram and labels keep a readable size.

matplotlib is optional (``pip install 'hasse-attention[viz]'``) and imported only
inside the drawing functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hasse.layout import (  # the diagram's geometry; also importable from here
    MAX_WAYPOINTS,
    Layout,
    count_crossings,
    layered_layout,
    longest_chain_layers,
    order_layers,
    spectral_keys,
)
from hasse.theory.analysis import MaskAnalysis
from hasse.theory.errors import InputError

MAX_DRAWN_CLASSES = 200  # above this, only the heatmap is drawn
MAX_NAMED_TICKS = 64  # tick labels are names up to this n, indices above
MAX_HEATMAP_PIXELS = 1024  # larger masks are pooled (a block shows if any cell is set)
LABEL_CHARS = 24  # node labels are cut to about this many characters

_MISSING = "--png needs matplotlib: pip install 'hasse-attention[viz]'"
_ATTEND = "#2f4b7c"
_REACH = "#a9c4e8"
_PATH = "#d62728"
_EDGE = "#555555"
_PALETTE = ["#cfe0f5", "#fbd9b6", "#cdeccd", "#f3cccc", "#e1d5ef", "#ead7cf",
            "#f7d5ea", "#e0e0e0", "#eef0c4", "#c9eef2"]


def _require_matplotlib() -> None:
    """Raise :class:`InputError` with the install hint when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(_MISSING) from None


def _new_figure(width: float, height: float):
    """A matplotlib figure of ``width x height`` inches on the Agg canvas.

    pyplot is not used, so no global backend or figure state is touched.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _stream(name: str) -> str:
    found = re.match(r"[A-Za-z_]+", name)
    return found.group(0) if found else ""


def stream_colours(names: Sequence[str]) -> dict[str, str]:
    """A fill colour per stream prefix (``F``, ``B``, ``P`` ...), when there are 2 to 10."""
    streams = list(dict.fromkeys(_stream(s) for s in names))
    if not 2 <= len(streams) <= len(_PALETTE):
        return {}
    return dict(zip(streams, _PALETTE))


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


def _heatmap(ax, mask, names, reach=None, path=None, empty=(), title=None, fontsize=8.0):
    """Draw ``mask`` on ``ax``: queries as rows, keys as columns, names as ticks.

    Cells reachable in ``reach`` but not attended are light; ``path`` is drawn over
    the cells by :func:`_draw_path`; the tick labels of ``empty`` rows are red.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    n = mask.shape[0]
    image = mask.astype(np.int8) * 2  # 2 attended, 1 reachable only, 0 neither
    if reach is not None:
        image = np.where(~mask & np.asarray(reach, bool), 1, image)
    size = n
    if n > MAX_HEATMAP_PIXELS:  # pool blocks of step x step cells; a block shows its strongest cell
        step = -(-n // MAX_HEATMAP_PIXELS)
        size = -(-n // step) * step
        padded = np.zeros((size, size), np.int8)
        padded[:n, :n] = image
        image = padded.reshape(size // step, step, size // step, step).max(axis=(1, 3))
    ax.imshow(image, cmap=ListedColormap(["white", _REACH, _ATTEND]), vmin=0, vmax=2,
              interpolation="nearest", extent=(-0.5, size - 0.5, size - 0.5, -0.5))
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("key k", fontsize=fontsize + 1)
    ax.set_ylabel("query q", fontsize=fontsize + 1)
    if n <= MAX_NAMED_TICKS:
        cell = ax.get_position().height * ax.figure.get_figheight() * 72 / n  # points
        tick = float(np.clip(0.75 * cell, 4.0, fontsize))
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        rotate = 90 if _rotated_ticks(n, names) else 0
        ax.set_xticklabels(names, rotation=rotate, fontsize=tick)
        ax.set_yticklabels(names, fontsize=tick)
        for q in empty:
            ax.get_yticklabels()[q].set_color(_PATH)
        ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
        ax.grid(which="minor", color="#d0d0d0", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
        ax.tick_params(which="major", length=2, pad=2)
        colours = stream_colours(names)
        for p in range(1, n):  # stream boundaries
            if colours and _stream(names[p]) != _stream(names[p - 1]):
                ax.axhline(p - 0.5, color="#888888", linewidth=1.2)
                ax.axvline(p - 0.5, color="#888888", linewidth=1.2)
    else:
        ax.tick_params(labelsize=fontsize)
    for spine in ax.spines.values():
        spine.set_color("#888888")
    legend = [Patch(facecolor=_ATTEND, label="q attends k")]
    if reach is not None:
        legend.append(Patch(facecolor=_REACH, label="reachable, not attended"))
    if path is not None:
        _draw_path(ax, list(path), n, mask)
        legend.append(Patch(facecolor="none", edgecolor=_PATH, label="path"))
    if len(empty) and n <= MAX_NAMED_TICKS:
        legend.append(Patch(facecolor="none", edgecolor="none", label="red: empty row"))
    ax.legend(handles=legend, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=fontsize,
              frameon=False, ncol=len(legend), borderaxespad=0.2, handlelength=1.2)
    if title:
        ax.set_title(title, fontsize=fontsize + 2, pad=fontsize * 2.2)


def _draw_path(ax, path: list[int], n: int, mask: np.ndarray) -> None:
    """Mark the cells ``(v_{i+1}, v_i)`` of ``path`` and join consecutive ones.

    Step ``i`` is cell (row ``v_{i+1}``, column ``v_i``). The arrow to step ``i + 1``
    runs along row ``v_{i+1}`` to the diagonal and down column ``v_{i+1}``: the query
    of one step is the key of the next. Steps are numbered from 1 (the hop count); a
    one-position path (a depth-0 leak) marks its diagonal cell with 0.
    """
    from matplotlib.patches import FancyArrowPatch, Rectangle
    from matplotlib.path import Path

    cells = [(path[i + 1], path[i]) for i in range(len(path) - 1)] or [(path[0], path[0])]
    small = n <= MAX_NAMED_TICKS
    for step, (q, k) in enumerate(cells, start=1 if len(path) > 1 else 0):
        if small:
            ax.add_patch(Rectangle((k - 0.5, q - 0.5), 1, 1, fill=False, edgecolor=_PATH,
                                   linewidth=2.2, zorder=5))
            ax.text(k, q, str(step), ha="center", va="center", color="white" if mask[q, k] else _PATH,
                    fontsize=7, fontweight="bold", zorder=6)
        else:
            ax.plot([k], [q], marker="s", markersize=7, markerfacecolor="none",
                    markeredgecolor=_PATH, markeredgewidth=1.8, zorder=5)
    inset = 0.42 if small else 0.0
    for (q0, k0), (q1, k1) in zip(cells, cells[1:]):  # k1 == q0: the pivot is (q0, q0)
        start = (k0 + inset * np.sign(q0 - k0), q0)
        end = (k1, q1 - inset * np.sign(q1 - q0))
        ax.add_patch(FancyArrowPatch(path=Path([start, (q0, q0), end]), arrowstyle="-|>",
                                     mutation_scale=11, color=_PATH, linewidth=1.4,
                                     linestyle=(0, (4, 2)), zorder=6))


def draw_mask(mask: np.ndarray, names: Sequence[str] | None, path: str, title: str,
              highlight_path: Sequence[int] | None = None, reach: np.ndarray | None = None) -> None:
    """Write a PNG of ``mask`` as a heatmap, with an optional path drawn over it.

    ``highlight_path`` is a list of positions ``v_0 -> v_1 -> ...`` (information flows
    from ``v_0``); step ``i`` is the cell ``(v_{i+1}, v_i)``, outlined and numbered, and
    arrows join consecutive steps. A one-element path marks the diagonal cell.

    Raises
    ------
    InputError if matplotlib is missing.
    """
    _require_matplotlib()
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    names = [str(i) for i in range(n)] if names is None else [str(s) for s in names]
    if highlight_path is not None:
        highlight_path = [int(v) for v in highlight_path]
        if not highlight_path or not all(0 <= v < n for v in highlight_path):
            raise InputError(f"path {highlight_path} is empty or leaves the positions 0..{n - 1}")
    side, left, bottom = _heat_geometry(n, names)
    width, height = left + side + 0.3, bottom + side + 0.75
    fig = _new_figure(width, height)
    ax = fig.add_axes((left / width, bottom / height, side / width, side / height))
    _heatmap(ax, mask, names, reach=reach, path=highlight_path, title=title)
    _save(fig, path, width, height)


def _rotated_ticks(n: int, names: Sequence[str]) -> bool:
    """Whether key names go vertical under the heatmap (they would not fit flat)."""
    return n <= MAX_NAMED_TICKS and max(len(s) for s in names) * n > 40


def _heat_geometry(n: int, names: Sequence[str]) -> tuple[float, float, float]:
    """Side of the heatmap and its left and bottom margins, in inches."""
    side = float(np.clip(0.26 * n, 2.6, 9.0))
    longest = max(len(s) for s in names) if n <= MAX_NAMED_TICKS else len(str(n))
    left = 0.5 + 0.075 * longest
    bottom = 0.55 + (0.075 * longest if _rotated_ticks(n, names) else 0.15)
    return side, left, bottom


def _save(fig, path, width: float, height: float) -> None:
    dpi = float(min(150, 9000 / max(width, height)))
    try:
        fig.savefig(path, dpi=dpi, facecolor="white", format="png")
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise InputError(f"cannot write the picture ({reason})", str(path)) from None


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
                                         color=_EDGE, linewidth=0.8 * s, zorder=1))
        colours = stream_colours(analysis.names)
        for c, members in enumerate(analysis.classes):
            streams = {_stream(analysis.names[p]) for p in members}
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
    _require_matplotlib()
    n = analysis.n
    names = [str(s) for s in analysis.names]
    classes = analysis.classes
    side, left, bottom = _heat_geometry(n, names)
    diagram = None
    if 0 < len(classes) <= MAX_DRAWN_CLASSES:
        diagram = _DiagramGeometry.plan(analysis, names, beside=side)
        side = max(side, min(0.8 * diagram.height, 9.0))  # a tall diagram: grow the heatmap
    diag_w, diag_h = (diagram.width, diagram.height) if diagram else (3.5, 1.5)

    top, gutter, right = 0.9, 0.6, 0.3  # inches
    width = left + side + gutter + diag_w + right
    height = top + max(bottom + side, diag_h + 0.4) + 0.2
    fig = _new_figure(width, height)
    heat_y = (height - top - side - bottom) / 2 + bottom
    ax_heat = fig.add_axes((left / width, heat_y / height, side / width, side / height))
    reach = analysis.reachability
    heat_title = f"mask, n = {n}"
    if reach is not None:
        heat_title += f", with R(L) at L = {analysis.layers}"
    _heatmap(ax_heat, np.asarray(analysis.mask, dtype=bool), names, reach=reach,
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
    _save(fig, path, width, height)


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

"""The mask as a PNG heatmap (``hasse leak --png``), with a witness path drawn over it.

- :func:`draw_mask` -- the heatmap alone, with an optional path ``v_0 -> v_1 -> ...``
  (a leak witness) outlined and numbered cell by cell;
- :func:`heatmap` -- the heatmap on a given axes, also the left panel of
  :func:`hasse.views.draw_hasse.draw_analysis`; :func:`heat_geometry` sizes it.

Queries are rows, keys columns; masks above ``BLOCK_ABOVE`` positions are drawn by
blocks of ``S x S`` positions (at most ``MAX_BLOCKS`` a side), each shaded by the
fraction of its entries that attend, as attention-gym does; isolation groups (packed
documents) are outlined.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.views.figure import (ATTEND, GROUP, PATH, REACH, new_figure, picture_format, require_matplotlib, save_png,
                          stream, stream_colours)
from hasse.theory.errors import InputError

MAX_NAMED_TICKS = 64  # tick labels are names up to this n, indices above
BLOCK_ABOVE = 384  # larger masks are drawn by blocks (attention-gym style) ...
MAX_BLOCKS = 256  # ... at most this many a side: block side S = ceil(n / MAX_BLOCKS)
MIN_SHADE = 0.18  # a block with any attended entry is at least this dark (a thin band stays visible)


def block_side(n: int) -> int:
    """Side ``S`` of the blocks a heatmap of ``n`` positions is drawn with (1: cell by cell).

    >>> block_side(64), block_side(384), block_side(400), block_side(4096)
    (1, 1, 2, 16)
    """
    return 1 if n <= BLOCK_ABOVE else -(-n // MAX_BLOCKS)


def block_fractions(cells: np.ndarray, side: int) -> np.ndarray:
    """The fraction of set entries in each ``side x side`` block of ``cells`` (a padded
    last block counts only the entries inside the mask).

    >>> block_fractions(np.eye(4, dtype=bool), 2).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    >>> block_fractions(np.ones((3, 3), bool), 2).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    rows, cols = cells.shape
    br, bc = -(-rows // side), -(-cols // side)
    padded = np.zeros((br * side, bc * side), np.float64)
    inside = np.zeros_like(padded)
    padded[:rows, :cols] = cells
    inside[:rows, :cols] = 1.0
    total = padded.reshape(br, side, bc, side).sum(axis=(1, 3))
    area = inside.reshape(br, side, bc, side).sum(axis=(1, 3))
    return total / area


def shade(attended: np.ndarray, reach_only: np.ndarray | None = None) -> np.ndarray:
    """RGB image: white, mixed with ``REACH`` and ``ATTEND`` by the two fractions.

    A fraction above 0 is drawn at least ``MIN_SHADE`` strong, so one attended entry in a
    block is visible; a fraction of 1 is the full colour.
    """
    from matplotlib.colors import to_rgb

    def strength(f):
        return np.where(f > 0, MIN_SHADE + (1 - MIN_SHADE) * f, 0.0)[..., None]

    a = strength(attended)
    r = strength(reach_only) * (1 - a) if reach_only is not None else np.zeros_like(a)
    white = np.ones(3)
    return (1 - a - r) * white + r * np.array(to_rgb(REACH)) + a * np.array(to_rgb(ATTEND))


def runs(positions) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of consecutive positions.

    >>> runs([5, 0, 1, 2, 7, 6])
    [(0, 2), (5, 7)]
    """
    out: list[list[int]] = []
    for p in sorted(set(int(v) for v in positions)):
        if out and p == out[-1][1] + 1:
            out[-1][1] = p
        else:
            out.append([p, p])
    return [(a, b) for a, b in out]


def heatmap(ax, mask, names, reach=None, path=None, empty=(), title=None, fontsize=8.0, groups=()):
    """Draw ``mask`` on ``ax``: queries as rows, keys as columns, names as ticks.

    Cells reachable in ``reach`` but not attended are light; ``path`` is drawn over
    the cells by :func:`_draw_path`; the tick labels of ``empty`` rows are red; each of
    ``groups`` (isolation groups: packed documents) is outlined as a square per pair of
    its runs. Above ``BLOCK_ABOVE`` positions the mask is drawn by blocks of
    :func:`block_side` positions a side, each shaded by the fraction of its entries
    that attend (a colour bar says so); the axes keep position coordinates, so paths
    and groups are drawn in the same units at any size.
    """
    from matplotlib.patches import Patch, Rectangle

    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    side = block_side(n)
    reach_only = None if reach is None else (~mask & np.asarray(reach, bool))
    attended = block_fractions(mask, side) if side > 1 else mask.astype(float)
    reach_frac = None
    if reach_only is not None:
        reach_frac = block_fractions(reach_only, side) if side > 1 else reach_only.astype(float)
    blocks = attended.shape[0]
    ax.imshow(shade(attended, reach_frac), interpolation="nearest", aspect="equal",
              extent=(-0.5, blocks * side - 0.5, blocks * side - 0.5, -0.5))
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel("key k", fontsize=fontsize + 1)
    ax.set_ylabel("query q", fontsize=fontsize + 1)
    if n <= MAX_NAMED_TICKS:
        cell = ax.get_position().height * ax.figure.get_figheight() * 72 / n  # points
        tick = float(np.clip(0.75 * cell, 4.0, fontsize))
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        rotate = 90 if rotated_ticks(n, names) else 0
        ax.set_xticklabels(names, rotation=rotate, fontsize=tick)
        ax.set_yticklabels(names, fontsize=tick)
        for q in empty:
            ax.get_yticklabels()[q].set_color(PATH)
        ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, n, 1), minor=True)
        ax.grid(which="minor", color="#d0d0d0", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
        ax.tick_params(which="major", length=2, pad=2)
        colours = stream_colours(names)
        for p in range(1, n):  # stream boundaries
            if colours and stream(names[p]) != stream(names[p - 1]):
                ax.axhline(p - 0.5, color="#888888", linewidth=1.2)
                ax.axvline(p - 0.5, color="#888888", linewidth=1.2)
    else:
        ax.tick_params(labelsize=fontsize)
    for spine in ax.spines.values():
        spine.set_color("#888888")
    legend = [Patch(facecolor=ATTEND, label="q attends k")]
    if reach is not None:
        legend.append(Patch(facecolor=REACH, label="reachable, not attended"))
    for g, group in enumerate(groups):
        spans = runs(group)
        for a0, a1 in spans:
            for b0, b1 in spans:
                ax.add_patch(Rectangle((b0 - 0.5, a0 - 0.5), b1 - b0 + 1, a1 - a0 + 1, fill=False,
                                       edgecolor=GROUP, linewidth=1.6, linestyle=(0, (5, 2)), zorder=4))
    if len(groups):
        legend.append(Patch(facecolor="none", edgecolor=GROUP, linestyle="--",
                            label=f"isolation group{'s' if len(groups) != 1 else ''} ({len(groups)})"))
    if path is not None:
        _draw_path(ax, list(path), n, mask)
        legend.append(Patch(facecolor="none", edgecolor=PATH, label="path"))
    if len(empty) and n <= MAX_NAMED_TICKS:
        legend.append(Patch(facecolor="none", edgecolor="none", label="red: empty row"))
    ax.legend(handles=legend, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=fontsize,
              frameon=False, ncol=min(len(legend), 3), borderaxespad=0.2, handlelength=1.2)
    if side > 1:
        _block_colour_bar(ax, side, fontsize)
    if title:
        rows = -(-len(legend) // 3)
        ax.set_title(title, fontsize=fontsize + 2, pad=fontsize * (1.0 + 1.3 * rows))


def _block_colour_bar(ax, side: int, fontsize: float) -> None:
    """A colour bar right of ``ax``: the shade of a block is the fraction of its entries that attend."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import ListedColormap, Normalize

    steps = np.linspace(0, 1, 101)
    cmap = ListedColormap(shade(steps))
    bar = ax.inset_axes((1.03, 0.0, 0.035, 1.0))
    cb = ax.figure.colorbar(ScalarMappable(norm=Normalize(0, 1), cmap=cmap), cax=bar)
    cb.set_label(f"fraction attended in a block of {side} \u00d7 {side} positions", fontsize=fontsize)
    cb.ax.tick_params(labelsize=fontsize - 1)


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
            ax.add_patch(Rectangle((k - 0.5, q - 0.5), 1, 1, fill=False, edgecolor=PATH,
                                   linewidth=2.2, zorder=5))
            ax.text(k, q, str(step), ha="center", va="center", color="white" if mask[q, k] else PATH,
                    fontsize=7, fontweight="bold", zorder=6)
        else:
            ax.plot([k], [q], marker="s", markersize=9, markerfacecolor="none",
                    markeredgecolor=PATH, markeredgewidth=2.0, zorder=5)
    if not small:  # name the path beside its last cell: the cells are too small to number
        arrow = " \u2192 ".join(map(str, path)) if len(path) <= 6 else f"{path[0]} \u2192 \u2026 \u2192 {path[-1]}"
        q, k = cells[-1]
        ax.annotate(f"path {arrow}", xy=(k, q), xytext=(12, -14 if q < n / 2 else 14), textcoords="offset points",
                    color=PATH, fontsize=8, fontweight="bold", zorder=7,
                    ha="left" if k < n / 2 else "right", va="top" if q < n / 2 else "bottom",
                    bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor=PATH, linewidth=0.8))
    inset = 0.42 if small else 0.0
    for (q0, k0), (q1, k1) in zip(cells, cells[1:]):  # k1 == q0: the pivot is (q0, q0)
        start = (k0 + inset * np.sign(q0 - k0), q0)
        end = (k1, q1 - inset * np.sign(q1 - q0))
        ax.add_patch(FancyArrowPatch(path=Path([start, (q0, q0), end]), arrowstyle="-|>",
                                     mutation_scale=11, color=PATH, linewidth=1.4,
                                     linestyle=(0, (4, 2)), zorder=6))


def draw_mask(mask: np.ndarray, names: Sequence[str] | None, path: str, title: str,
              highlight_path: Sequence[int] | None = None, reach: np.ndarray | None = None,
              groups: Sequence[Sequence[int]] = ()) -> None:
    """Write a picture of ``mask`` as a heatmap, with an optional path drawn over it.

    ``highlight_path`` is a list of positions ``v_0 -> v_1 -> ...`` (information flows
    from ``v_0``); step ``i`` is the cell ``(v_{i+1}, v_i)``, outlined and numbered, and
    arrows join consecutive steps. A one-element path marks the diagonal cell.
    ``groups`` (isolation groups) are outlined. The format follows ``path``'s suffix
    (:func:`hasse.views.figure.picture_format`); a long ``title`` is wrapped.

    Raises
    ------
    InputError if matplotlib is missing, the suffix is not .png/.svg/.pdf, or the path is bad.
    """
    picture_format(path)
    require_matplotlib()
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    names = [str(i) for i in range(n)] if names is None else [str(s) for s in names]
    if highlight_path is not None:
        highlight_path = [int(v) for v in highlight_path]
        if not highlight_path or not all(0 <= v < n for v in highlight_path):
            raise InputError(f"path {highlight_path} is empty or leaves the positions 0..{n - 1}")
    side, left, bottom = heat_geometry(n, names)
    right = 1.2 if block_side(n) > 1 else 0.3
    width = left + side + right
    lines = wrap_title(title, width)
    entries = 1 + (reach is not None) + (len(groups) > 0) + (highlight_path is not None)
    legend_rows = -(-entries // 3)
    top = 0.25 + 0.2 * len(lines) + 0.2 * legend_rows
    height = bottom + side + top
    fig = new_figure(width, height)
    ax = fig.add_axes((left / width, bottom / height, side / width, side / height))
    heatmap(ax, mask, names, reach=reach, path=highlight_path, groups=groups)
    if lines:
        fig.suptitle("\n".join(lines), fontsize=10.0, y=1 - 0.1 / height, va="top")
    save_png(fig, path)


def wrap_title(title: str | None, width_inches: float, fontsize: float = 10.0) -> list[str]:
    """``title`` cut into lines that fit ``width_inches`` at ``fontsize`` points (never clipped).

    >>> wrap_title("a b c", 10)
    ['a b c']
    >>> len(wrap_title("word " * 40, 3)) > 3
    True
    """
    import textwrap

    if not title:
        return []
    chars = max(20, int((width_inches - 0.2) * 72 / (0.62 * fontsize)))
    return [line for part in str(title).split("\n") for line in (textwrap.wrap(part, chars) or [""])]


def rotated_ticks(n: int, names: Sequence[str]) -> bool:
    """Whether key names go vertical under the heatmap (they would not fit flat)."""
    return n <= MAX_NAMED_TICKS and max(len(s) for s in names) * n > 40


def heat_geometry(n: int, names: Sequence[str]) -> tuple[float, float, float]:
    """Side of the heatmap and its left and bottom margins, in inches."""
    side = float(np.clip(0.26 * n, 2.6, 7.0))
    longest = max(len(s) for s in names) if n <= MAX_NAMED_TICKS else len(str(n))
    left = 0.5 + 0.075 * longest
    bottom = 0.55 + (0.075 * longest if rotated_ticks(n, names) else 0.15)
    return side, left, bottom



def draw_leak(task, report, path: str, title: str) -> None:
    """The picture of a leak report (``hasse leak``, ``hasse counterexample --png``): the
    task's mask, its isolation groups outlined, and the first leak's (else the first
    isolation violation's) shortest witness path drawn over it.
    """
    first = (report.leaks_within() or report.isolation_within() or [None])[0]
    draw_mask(task.mask, task.names, path, title=title, highlight_path=first.path if first else None,
              groups=task.isolate)


def draw_flow(mask, names, flows, path: str, title: str) -> None:
    """The picture of ``hasse flow --png``: the mask and the first forbidden flow's path
    (source first) over it; the mask alone when nothing flows."""
    draw_mask(mask, names, path, title=title, highlight_path=flows[0].path if flows else None)

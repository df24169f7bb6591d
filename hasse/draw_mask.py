"""The mask as a PNG heatmap (``hasse leak --png``), with a witness path drawn over it.

- :func:`draw_mask` -- the heatmap alone, with an optional path ``v_0 -> v_1 -> ...``
  (a leak witness) outlined and numbered cell by cell;
- :func:`heatmap` -- the heatmap on a given axes, also the left panel of
  :func:`hasse.draw_hasse.draw_analysis`; :func:`heat_geometry` sizes it.

Queries are rows, keys columns; masks above ``MAX_HEATMAP_PIXELS`` positions are pooled.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.figure import ATTEND, PATH, REACH, new_figure, require_matplotlib, save_png, stream, stream_colours
from hasse.theory.errors import InputError

MAX_NAMED_TICKS = 64  # tick labels are names up to this n, indices above
MAX_HEATMAP_PIXELS = 1024  # larger masks are pooled (a block shows if any cell is set)


def heatmap(ax, mask, names, reach=None, path=None, empty=(), title=None, fontsize=8.0):
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
    ax.imshow(image, cmap=ListedColormap(["white", REACH, ATTEND]), vmin=0, vmax=2,
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
    if path is not None:
        _draw_path(ax, list(path), n, mask)
        legend.append(Patch(facecolor="none", edgecolor=PATH, label="path"))
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
            ax.add_patch(Rectangle((k - 0.5, q - 0.5), 1, 1, fill=False, edgecolor=PATH,
                                   linewidth=2.2, zorder=5))
            ax.text(k, q, str(step), ha="center", va="center", color="white" if mask[q, k] else PATH,
                    fontsize=7, fontweight="bold", zorder=6)
        else:
            ax.plot([k], [q], marker="s", markersize=7, markerfacecolor="none",
                    markeredgecolor=PATH, markeredgewidth=1.8, zorder=5)
    inset = 0.42 if small else 0.0
    for (q0, k0), (q1, k1) in zip(cells, cells[1:]):  # k1 == q0: the pivot is (q0, q0)
        start = (k0 + inset * np.sign(q0 - k0), q0)
        end = (k1, q1 - inset * np.sign(q1 - q0))
        ax.add_patch(FancyArrowPatch(path=Path([start, (q0, q0), end]), arrowstyle="-|>",
                                     mutation_scale=11, color=PATH, linewidth=1.4,
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
    require_matplotlib()
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    names = [str(i) for i in range(n)] if names is None else [str(s) for s in names]
    if highlight_path is not None:
        highlight_path = [int(v) for v in highlight_path]
        if not highlight_path or not all(0 <= v < n for v in highlight_path):
            raise InputError(f"path {highlight_path} is empty or leaves the positions 0..{n - 1}")
    side, left, bottom = heat_geometry(n, names)
    width, height = left + side + 0.3, bottom + side + 0.75
    fig = new_figure(width, height)
    ax = fig.add_axes((left / width, bottom / height, side / width, side / height))
    heatmap(ax, mask, names, reach=reach, path=highlight_path, title=title)
    save_png(fig, path)


def rotated_ticks(n: int, names: Sequence[str]) -> bool:
    """Whether key names go vertical under the heatmap (they would not fit flat)."""
    return n <= MAX_NAMED_TICKS and max(len(s) for s in names) * n > 40


def heat_geometry(n: int, names: Sequence[str]) -> tuple[float, float, float]:
    """Side of the heatmap and its left and bottom margins, in inches."""
    side = float(np.clip(0.26 * n, 2.6, 9.0))
    longest = max(len(s) for s in names) if n <= MAX_NAMED_TICKS else len(str(n))
    left = 0.5 + 0.075 * longest
    bottom = 0.55 + (0.075 * longest if rotated_ticks(n, names) else 0.15)
    return side, left, bottom


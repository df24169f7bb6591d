"""The receptive field of a stack as a picture (``hasse analyze --stack SPEC --png FILE``), with matplotlib.

One step curve: for each position, the layers until it sees all it will ever see when
the stack is repeated (:meth:`theory.stack.StackFlow.receptive_field`), and a dashed
line at the model's own depth (positions above it do not see their whole limit in
the model as configured).
"""

from __future__ import annotations


def draw_receptive(rf, depth: int, path: str, title: str = "") -> None:
    """Save the receptive-field step curve with the model's depth marked (PNG, SVG or PDF by the suffix)."""
    import numpy as np

    from hasse.views.figure import CLEAN, LEAKY, new_figure, require_matplotlib, save_png

    require_matplotlib()
    rf = np.asarray(rf)
    fig = new_figure(7, 4)
    ax = fig.add_subplot(1, 1, 1)
    edges = np.arange(rf.size + 1) - 0.5  # position q's value spans q - 1/2 .. q + 1/2
    ax.stairs(rf, edges, baseline=None, color=CLEAN, linewidth=1.5, label="receptive field (layers)")
    ax.axhline(depth, color=LEAKY, linestyle="--", label=f"model depth = {depth} layers")
    ax.set_xlabel("position")
    ax.set_ylabel("layers until the position sees all it will")
    ax.set_ylim(bottom=0, top=max(int(rf.max(initial=0)), depth) * 1.1 + 0.5)
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(loc="best")
    fig.tight_layout()
    save_png(fig, path, dpi=120)

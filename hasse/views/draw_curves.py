"""The loss curves of ``hasse gpu-check --train-demo`` as a PNG, with matplotlib.

The clean and the leaky design's cross-entropy per step, and the ``ln V`` line that
the clean one cannot go below.
"""

from __future__ import annotations


def draw_curves(demo, path: str) -> None:
    """Save both loss curves and the ln V line (PNG, SVG or PDF by the suffix of ``path``)."""
    from hasse.views.figure import CLEAN, EDGE, LEAKY, new_figure, require_matplotlib, save_png

    require_matplotlib()
    fig = new_figure(7, 4)
    ax = fig.add_subplot(1, 1, 1)
    steps = range(1, len(demo.clean.losses) + 1)
    ax.plot(steps, demo.clean.losses, label=f"clean: {demo.clean.task}", color=CLEAN)
    ax.plot(steps, demo.leaky.losses, label=f"leaky: {demo.leaky.task}", color=LEAKY)
    ax.axhline(demo.ln_vocab, color=EDGE, linestyle="--", label=f"ln V = {demo.ln_vocab:.3f}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"i.i.d. tokens, V = {demo.config.vocab}:\nthe clean loss cannot go below ln V")
    ax.legend()
    fig.tight_layout()
    save_png(fig, path, dpi=120)

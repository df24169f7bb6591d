"""Figure setup shared by the PNG pictures (``--png F``): matplotlib, colours, saving.

matplotlib is optional (``pip install 'hasse-attention[viz]'``): :func:`require_matplotlib`
says so in one line, and it is imported only inside the functions. Figures are built
on the Agg canvas without pyplot (:func:`new_figure`) and written by :func:`save_png`.
The colours and the stream colouring (``F``, ``B``, ``P`` ... prefixes of position
names) are shared by the mask heatmap (:mod:`hasse.draw_mask`), the Hasse diagram
(:mod:`hasse.draw_hasse`) and the loss curves (:mod:`hasse.draw_curves`).
"""

from __future__ import annotations

import re
from typing import Sequence

from hasse.theory.errors import InputError

MISSING_MATPLOTLIB = "--png needs matplotlib: pip install 'hasse-attention[viz]'"
ATTEND = "#2f4b7c"
REACH = "#a9c4e8"
PATH = "#d62728"
EDGE = "#555555"
PALETTE = ["#cfe0f5", "#fbd9b6", "#cdeccd", "#f3cccc", "#e1d5ef", "#ead7cf",
           "#f7d5ea", "#e0e0e0", "#eef0c4", "#c9eef2"]


def require_matplotlib() -> None:
    """Raise :class:`InputError` with the install hint when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(MISSING_MATPLOTLIB) from None


def new_figure(width: float, height: float):
    """A matplotlib figure of ``width x height`` inches on the Agg canvas.

    pyplot is not used, so no global backend or figure state is touched.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def save_png(fig, path, dpi: float | None = None) -> None:
    """Write ``fig`` to ``path`` as a PNG; InputError (one line) when it cannot be written.

    Default ``dpi``: 150, less for a large figure (at most 9000 pixels a side).
    """
    if dpi is None:
        width, height = fig.get_size_inches()
        dpi = float(min(150, 9000 / max(width, height)))
    from hasse.output import atomic_output

    try:
        with atomic_output(str(path)) as tmp:  # a temporary file, renamed over ``path`` when complete
            fig.savefig(tmp, dpi=dpi, facecolor="white", format="png")
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise InputError(f"cannot write the picture ({reason})", str(path)) from None


def stream(name: str) -> str:
    """The stream prefix of a position name: its leading letters.

    >>> stream("P12"), stream("agg"), stream("7")
    ('P', 'agg', '')
    """
    found = re.match(r"[A-Za-z_]+", name)
    return found.group(0) if found else ""


def stream_colours(names: Sequence[str]) -> dict[str, str]:
    """A fill colour per stream prefix (``F``, ``B``, ``P`` ...), when there are 2 to 10.

    >>> stream_colours(["F0", "F1", "P0"])
    {'F': '#cfe0f5', 'P': '#fbd9b6'}
    >>> stream_colours(["0", "1"])
    {}
    """
    streams = list(dict.fromkeys(stream(s) for s in names))
    if not 2 <= len(streams) <= len(PALETTE):
        return {}
    return dict(zip(streams, PALETTE))

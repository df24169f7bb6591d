"""Figure setup shared by the PNG pictures (``--png F``): matplotlib, colours, saving.

matplotlib is optional (``pip install 'hasse-attention[viz]'``): :func:`require_matplotlib`
says so in one line, and it is imported only inside the functions. Figures are built
on the Agg canvas without pyplot (:func:`new_figure`) and written by :func:`save_png`,
whose format follows the file's suffix (``.png``, ``.svg``, ``.pdf``; :func:`picture_format`).
The colours live here and nowhere else: :data:`STREAM_COLOURS` gives every stream
(the ``F``, ``B``, ``P``, ``C``, ``Q``, ``x``, ``agg`` ... prefixes of position names) one
fill in every command's picture (analyze, leak, flow, merge, counterexample, the demo),
shared by the mask heatmap (:mod:`hasse.views.draw_mask`), the Hasse diagram
(:mod:`hasse.views.draw_hasse`) and the loss curves (:mod:`hasse.views.draw_curves`).
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
GROUP = "#2ca02c"  # isolation groups (packed documents), outlined on heatmaps
CLEAN = "#2f4b7c"  # the clean design's loss curve
LEAKY = PATH  # the leaky one's
PALETTE = ["#cfe0f5", "#fbd9b6", "#cdeccd", "#f3cccc", "#e1d5ef", "#ead7cf",
           "#f7d5ea", "#e0e0e0", "#eef0c4", "#c9eef2"]
# One fill per stream, the same in every command. Streams not named here take the
# unused PALETTE entries in order of appearance.
STREAM_COLOURS = {
    "F": PALETTE[0],  # Butterfly: forward stream
    "B": PALETTE[1],  # backward stream
    "P": PALETTE[2],  # predictions
    "C": PALETTE[3],  # content stream (two-stream designs)
    "Q": PALETTE[4],  # query stream
    "x": PALETTE[5],  # raw inputs
    "agg": PALETTE[6],  # aggregates
    "M": PALETTE[8],  # [MASK] / mask tokens
}
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


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


def picture_format(path) -> str:
    """The picture format that ``path``'s suffix names; InputError (one line) for another.

    ``--png FILE`` keeps its name, but ``.svg`` and ``.pdf`` files get SVG and PDF.

    >>> picture_format("a.PNG"), picture_format("x/b.svg"), picture_format("c.pdf")
    ('png', 'svg', 'pdf')
    >>> picture_format("d.jpg")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: d.jpg: unknown picture type '.jpg' (use .png, .svg or .pdf)
    """
    import os

    suffix = os.path.splitext(str(path))[1].lower()
    if suffix not in FORMATS:
        raise InputError(f"unknown picture type {suffix or '(none)'!r} (use .png, .svg or .pdf)", str(path))
    return FORMATS[suffix]


def save_png(fig, path, dpi: float | None = None) -> None:
    """Write ``fig`` to ``path`` in the format its suffix names (:func:`picture_format`);
    InputError (one line) when it cannot be written.

    Default ``dpi``: 120, less for a large figure (at most 4000 pixels a side).
    The file is written atomically (a temporary file, renamed over ``path``).
    """
    fmt = picture_format(path)
    if dpi is None:
        width, height = fig.get_size_inches()
        dpi = float(min(120, 4000 / max(width, height)))
    from hasse.views.output import atomic_output

    try:
        with atomic_output(str(path)) as tmp:  # a temporary file, renamed over ``path`` when complete
            fig.savefig(tmp, dpi=dpi, facecolor="white", format=fmt, metadata=_metadata(fmt))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise InputError(f"cannot write the picture ({reason})", str(path)) from None


def _metadata(fmt: str) -> dict:
    """No creation date in SVG or PDF files, so the same figure gives the same bytes."""
    return {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt, {})


def stream(name: str) -> str:
    """The stream prefix of a position name: its leading letters.

    >>> stream("P12"), stream("agg"), stream("7")
    ('P', 'agg', '')
    """
    found = re.match(r"[A-Za-z_]+", name)
    return found.group(0) if found else ""


def stream_colours(names: Sequence[str]) -> dict[str, str]:
    """A fill colour per stream prefix (``F``, ``B``, ``P`` ...), when there are 2 to 10.

    A stream keeps its colour whatever the other streams are (:data:`STREAM_COLOURS`):

    >>> stream_colours(["F0", "F1", "P0"]) == {"F": STREAM_COLOURS["F"], "P": STREAM_COLOURS["P"]}
    True
    >>> stream_colours(["P0", "y1", "F2"])["P"] == stream_colours(["F0", "P1"])["P"]
    True
    >>> stream_colours(["0", "1"])
    {}
    """
    streams = list(dict.fromkeys(stream(s) for s in names))
    if not 2 <= len(streams) <= len(PALETTE):
        return {}
    spare = iter(c for c in PALETTE if c not in {STREAM_COLOURS.get(s) for s in streams})
    return {s: STREAM_COLOURS.get(s) or next(spare, PALETTE[-1]) for s in streams}

"""Regenerate the figures in ``docs/img`` (the README's and design.md's pictures).

Run ``python -m hasse.cli.figures_for_docs`` from a checkout (or ``... DIR`` to write them
elsewhere); each figure is the ``--png`` output of one command, run in-process through
:func:`hasse.cli.main`, so the pictures in the docs are exactly what users get.
``tests/test_pictures.py`` regenerates them into a temporary folder and compares their
pixel sizes with the committed files, so a stale picture fails the tests.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"  # hasse/cli/ -> the repository root

# file name in docs/img -> the command line that draws it (its --png FILE is appended)
FIGURES: dict[str, list[str]] = {
    "butterfly6.png": ["analyze", "butterfly:n=6"],
    "sliding_window4096.png": ["analyze", "sliding_window:n=4096,window=8"],
    "butterfly1024.png": ["analyze", "butterfly:n=1024"],
    "leak_packed_window.png": ["leak", "bad_packed_window:lengths=200+200,window=16"],
    "synthesis.png": ["synthesize", "butterfly:n=8", "--layers", "2", "--no-gpu-check"],
}
# the family pages of docs/families/ (issue 25): each family's merged task, and its first task, by `hasse derive`
DERIVE = {
    "ar": "ar:n=5", "block": "block:n=6,block=2", "infill": "infill:n=4", "mae": "mae:n=6,masked=1+4",
    "mae2d": "mae2d:rows=2,cols=3,masked=0+4", "masked_diffusion": "masked_diffusion:n=5,masked=1+2",
    "any_order": "any_order:n=4,order=2+0+3+1", "fim": "fim:n=6,mode=psm,start=2,end=4", "mtp": "mtp:n=6,k=3",
    "block_mixture": "block_mixture:n=4,blocks=1+2,context=causal",
}
for _name, _spec in DERIVE.items():
    FIGURES[f"derive_{_name}.png"] = ["derive", _spec, "--no-proof", "--minimum", "no", "--png-tasks", "1"]
del _name, _spec


def regenerate(dest: Path = DOCS_IMG, names: list[str] | None = None) -> list[Path]:
    """Draw the figures ``names`` (default: all of :data:`FIGURES`) into ``dest``; returns their paths.

    The commands' terminal output is discarded; their exit status (1 for a leak) is not
    an error, but a missing file is.
    """
    from hasse.cli import main

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names or list(FIGURES):
        out = dest / name
        with contextlib.redirect_stdout(io.StringIO()):
            main([*FIGURES[name], "--png", str(out)])
        if not out.exists():
            raise RuntimeError(f"{' '.join(FIGURES[name])} wrote no picture")
        written.append(out)
    return written


def cli(argv: list[str]) -> int:
    """``python -m hasse.cli.figures_for_docs [DIR]``: write the figures to DIR (default docs/img)."""
    if argv and argv[0] in ("-h", "--help") or len(argv) > 1:
        print(f"usage: python -m hasse.cli.figures_for_docs [DIR]\n\n{__doc__.strip()}\n\nfigures: {', '.join(FIGURES)}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    for path in regenerate(Path(argv[0]) if argv else DOCS_IMG):
        print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(cli(sys.argv[1:]))

"""Resolve a MASK argument (spec, file or mask_mod) for the commands."""

from __future__ import annotations

from hasse.theory.mask import NamedMask


def load(source: str, n: int | None = None) -> NamedMask:
    """Load a mask the way every command reads its MASK argument.

    A ``mask_mod`` written with torch ops is evaluated with torch when it is installed
    (:func:`hasse.gpu_check.mask_mod.torch_fallback_or_none`).
    """
    from hasse.gpu_check.mask_mod import torch_fallback_or_none
    from hasse.theory.mask_io import load_mask

    return load_mask(source, n=n, fallback=torch_fallback_or_none())

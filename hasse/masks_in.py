"""Resolve a MASK argument (spec, file or mask_mod) for the commands."""

from __future__ import annotations

import os

from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask


def load(source: str, n: int | None = None) -> NamedMask:
    """Load a mask the way every command reads its MASK argument.

    A ``mask_mod`` written with torch ops is evaluated with torch when it is installed
    (:func:`hasse.gpu_check.mask_mod.torch_fallback_or_none`). A mask_mod needs its
    size; the message names the command-line option ``--n``.
    """
    from hasse.gpu_check.mask_mod import torch_fallback_or_none
    from hasse.theory.mask_io import load_mask, source_kind

    path, _, function = source.rpartition(":")
    if n is None and source_kind(source) == "function" and function and os.path.isfile(path):
        raise InputError("a mask_mod needs --n, the number of positions to evaluate it on", source)
    return load_mask(source, n=n, fallback=torch_fallback_or_none())

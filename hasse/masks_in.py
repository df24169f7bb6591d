"""Resolve a MASK argument (spec, file or mask_mod) for the commands."""

from __future__ import annotations

from hasse.theory.mask import NamedMask


def torch_fallback():
    """The torch evaluator for mask_mods that need tensors, or None when torch is absent."""
    try:
        from hasse.gpu_check.mask_mod import torch_fallback_or_none
    except ImportError:
        return None
    return torch_fallback_or_none()


def load(source: str, n: int | None = None) -> NamedMask:
    """Load a mask the way every command reads its MASK argument."""
    from hasse.theory.io import load_mask

    return load_mask(source, n=n, fallback=torch_fallback())

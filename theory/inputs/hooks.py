"""The torch hooks of the input wing, registered once by the layer that has torch.

theory never imports torch. Two readers need it and live in :mod:`hasse.gpu_check`:
the torch evaluation of a mask_mod that numpy index arrays cannot run (the *fallback*,
``fallback(fn, n, kv_len=None) -> (n, K) bool array``) and the reader of ``.pt`` files and
``BlockMask`` objects (``torch_reader(obj, source) -> (values, spec, is_block_mask)``).
:func:`hasse.gpu_check.torch_masks.register_input_hooks` registers a *provider* of each (a
function giving the hook, or None while torch is not installed), called once by the
command line's ``main`` and by :mod:`hasse.api` at import; every reader of the wing asks
:func:`fallback` and :func:`torch_reader` here, and no caller passes them by hand.
Without a registration (theory used on its own) both are None: torch's forms are refused.
"""

from __future__ import annotations

from typing import Callable

_PROVIDERS: dict[str, Callable[[], Callable | None]] = {}


def register(*, fallback: Callable[[], Callable | None], torch_reader: Callable[[], Callable | None]) -> None:
    """Register the providers of the two hooks (calling it again replaces them: there is one of each)."""
    _PROVIDERS["fallback"] = fallback
    _PROVIDERS["torch_reader"] = torch_reader


def registered() -> bool:
    """Whether the providers are registered."""
    return "fallback" in _PROVIDERS and "torch_reader" in _PROVIDERS


def fallback() -> Callable | None:
    """The torch evaluation of a mask_mod (None: torch is missing, or nothing registered)."""
    provider = _PROVIDERS.get("fallback")
    return provider() if provider else None


def torch_reader() -> Callable | None:
    """The reader of ``.pt`` files and ``BlockMask`` objects (None: torch is missing, or nothing registered)."""
    provider = _PROVIDERS.get("torch_reader")
    return provider() if provider else None

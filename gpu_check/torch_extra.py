"""Whether torch is installed, and the one message that names the missing extra.

torch is optional (``pip install 'hasse-attention[torch]'``). Every caller that has
to know — ``hasse gpu-check``, ``hasse demo``, the torch evaluation of a
``mask_mod``, the command line's mask loader — asks here. Importing this module
does not import torch.

>>> needs_torch("gpu-check")
"gpu-check needs torch; install the extra: pip install 'hasse-attention[torch]'"
"""

from __future__ import annotations

import importlib.util

from hasse.theory.errors import InputError

INSTALL = "pip install 'hasse-attention[torch]'"


def has_torch() -> bool:
    """True when ``import torch`` can find the package (torch itself is not imported).

    An import hook that refuses torch counts as torch being absent.

    >>> isinstance(has_torch(), bool)
    True
    """
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def needs_torch(what: str) -> str:
    """The one-line message for ``what`` (a command, a mask_mod) when torch is missing."""
    return f"{what} needs torch; install the extra: {INSTALL}"


def require_torch(what: str) -> None:
    """Raise :class:`InputError` (exit 2) naming the extra when torch cannot be imported."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise InputError(needs_torch(what)) from None

"""hasse — attention masks as partial orders, verified.

The public Python API (the command line is :mod:`hasse.cli`). Each name is
loaded on first use, so ``import hasse`` — and ``import hasse.theory`` — stay
light: no z3, no torch until a function needs them.

>>> import hasse
>>> hasse.mask_to_analysis("causal:n=4").hasse_edges
((0, 1), (1, 2), (2, 3))
>>> hasse.assert_no_leak("causal:n=3", labels=[1, 2, None])
"""

from __future__ import annotations

import importlib

from hasse.theory.version import __version__

_EXPORTS = {  # public name -> module that defines it
    **dict.fromkeys(("load_mask", "load_task", "load_family", "mask_to_analysis", "reach", "find_leaks",
                     "find_flows", "family_to_merged_task", "check_consistency", "prove", "check_gradients"),
                    "hasse.api"),
    "assert_no_leak": "hasse.testing",
    "InputError": "hasse.theory.errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str):
    """Load a public name on first use (PEP 562)."""
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'hasse' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))

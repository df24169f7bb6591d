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

from hasse.theory.lazy import lazy_exports
from hasse.theory.version import __version__

_EXPORTS = {  # public name -> module that defines it
    **dict.fromkeys(("load_mask", "load_task", "load_family", "mask_to_analysis", "reach", "find_leaks",
                     "find_flows", "family_to_merged_task", "check_consistency", "prove", "check_gradients",
                     "load_stack", "stack_flow", "audit", "synthesize"),
                    "hasse.api"),
    "assert_no_leak": "hasse.testing",
    "InputError": "hasse.theory.errors",
    "Task": "hasse.theory.task",  # what load_task returns and find_leaks takes (the README's `Task`)
}

__all__ = ["__version__", *sorted(_EXPORTS)]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

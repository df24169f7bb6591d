"""hasse.theory — the mathematics of attention masks as partial orders.

numpy + networkx + stdlib only: no torch, no z3 (a test imports this package
with both blocked). Library functions return data; nothing here prints.

The names below are loaded on first use (PEP 562), so importing the package —
which every ``hasse.*`` import does — loads no engine module: the solvers' tests
can check that their encodings never import the code they check.
"""

from __future__ import annotations

from hasse.theory.lazy import lazy_exports

_EXPORTS = {  # public name -> module of hasse.theory that defines it
    # `empty_rows` and `reach` the functions are not exported here: each name is a submodule
    # (hasse.theory.empty_rows, hasse.theory.reach), and a package name means one thing (the module).
    **dict.fromkeys(("MaskAnalysis", "mask_to_analysis"), ".analysis"),
    **dict.fromkeys(("InputError", "TooLargeError"), ".errors"),
    **dict.fromkeys(("NamedMask", "as_mask"), ".mask"),
    **dict.fromkeys(("LimitOrder", "mask_to_order"), ".order"),
    **dict.fromkeys(("PowerCycle", "dependency", "hop_distances", "power_cycle"), ".reach"),
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

"""hasse.theory — the mathematics of attention masks as partial orders.

numpy + networkx + stdlib only: no torch, no z3 (a test imports this package
with both blocked). Library functions return data; nothing here prints.
"""

from hasse.theory.analysis import MaskAnalysis, empty_rows, mask_to_analysis
from hasse.theory.errors import InputError, TooLargeError
from hasse.theory.mask import NamedMask, as_mask
from hasse.theory.order import LimitOrder, mask_to_order
from hasse.theory.reach import PowerCycle, dependency, hop_distances, power_cycle, reach

__all__ = [
    "InputError",
    "LimitOrder",
    "MaskAnalysis",
    "NamedMask",
    "PowerCycle",
    "TooLargeError",
    "as_mask",
    "dependency",
    "empty_rows",
    "hop_distances",
    "mask_to_analysis",
    "mask_to_order",
    "power_cycle",
    "reach",
]

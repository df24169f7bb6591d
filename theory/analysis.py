"""The whole pipeline for one mask: ``mask_to_analysis``.

Strings the engine together: dependency -> classes and Hasse diagram -> depth,
density, empty rows, and (optionally) the reachability at a given depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MaskAnalysis:
    """Everything ``hasse analyze`` reports about one mask (positions are 0-based)."""

    n: int
    residual: bool
    convergence_depth: int | None  # L*; None when the powers never settle (no residual)
    preperiod: int | None  # no-residual mode only: A^(preperiod + period) = A^preperiod
    period: int | None  # no-residual mode only
    classes: tuple[tuple[int, ...], ...]  # canonical order, members ascending
    hasse_edges: tuple[tuple[int, int], ...]  # (lower, upper) class indices, sorted
    dense: bool  # M or I equals the limit R*
    height: int  # classes on the longest chain of the Hasse diagram
    empty_rows: tuple[int, ...]  # queries that attend no key at all
    layers: int | None  # the depth L asked for, if any
    reachability: np.ndarray | None  # (n, n) bool R(L) when layers is given
    mask: np.ndarray  # (n, n) bool, the mask analysed
    names: tuple[str, ...]  # label per position

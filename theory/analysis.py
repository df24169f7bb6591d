"""The whole pipeline for one mask: ``mask_to_analysis``.

Strings the engine together: empty rows (read by a policy,
:mod:`theory.empty_rows`) -> limit order (classes, Hasse diagram, density,
depth) -> the no-residual power cycle when asked -> the reachability at a given
depth when asked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hasse.theory.empty_rows import ANALYZE_DEFAULT, EmptyRows, apply_empty_row_policy
from hasse.theory.errors import InputError
from hasse.theory.mask import as_mask, default_names, square_up
from hasse.theory.order import LimitOrder, mask_to_order
from hasse.theory.reach import PowerCycle, power_cycle, reach


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
    mask: np.ndarray  # (n, n) bool, the mask analysed (empty rows filled under attend-all)
    names: tuple[str, ...]  # label per position
    empty_row_policy: str = ANALYZE_DEFAULT  # how the empty rows were read (theory.empty_rows)
    key_only: tuple[int, ...] = ()  # positions that feed the queries and attend nothing (theory.mask.square_up)
    key_only_kind: str = ""  # "cache" | "memory" | "" (none)

    @property
    def empty_row_report(self) -> EmptyRows:
        """The empty rows and the policy applied to them."""
        return EmptyRows(self.empty_rows, self.empty_row_policy)


def no_residual_cycle(mask: np.ndarray, order: LimitOrder) -> PowerCycle:
    """Pre-period and period of ``M, M^2, ...`` without the residual.

    When every position attends itself, ``M = I or M`` and the powers settle at
    the convergence depth; otherwise the powers are iterated (Brent).
    """
    if np.diag(mask).all():
        return PowerCycle(order.convergence_depth, 1)
    return power_cycle(mask)


def mask_to_analysis(
    mask: np.ndarray,
    *,
    residual: bool = True,
    layers: int | None = None,
    names: tuple[str, ...] | None = None,
    empty_rows: str = ANALYZE_DEFAULT,
    key_only=(),
    key_only_kind: str = "",
    queries: str | None = None,
) -> MaskAnalysis:
    """Analyse one mask: the limit order, depth, density, empty rows, and ``R(L)`` if ``layers`` is given.

    Without the residual the classes and Hasse diagram are still those of the
    mask's reflexive–transitive closure; the depth is the pre-period when the
    powers settle (period 1) and ``None`` otherwise.

    ``empty_rows`` is the policy for queries that attend no key
    (:mod:`theory.empty_rows`): ``attend-none`` (default) analyses the mask as
    given, ``attend-all`` fills those rows first, ``error`` refuses them.

    A non-square ``(Q, K)`` mask (or any mask with ``queries="separate"``) is first
    embedded by :func:`theory.mask.square_up`; its key-only positions (or the
    ``key_only`` given with a square mask, of kind ``key_only_kind``) are never
    empty rows and the analysis names them.

    >>> a = mask_to_analysis(np.tril(np.ones((3, 3), dtype=bool)))
    >>> a.convergence_depth, a.classes, a.hasse_edges, a.dense, a.height
    (1, ((0,), (1,), (2,)), ((0, 1), (1, 2)), True, 3)
    >>> swap = mask_to_analysis(np.array([[0, 1], [1, 0]], dtype=bool), residual=False)
    >>> swap.convergence_depth, swap.preperiod, swap.period
    (None, 0, 2)
    >>> decode = mask_to_analysis(np.ones((1, 3), dtype=bool), empty_rows="attend-all")  # 1 x (cache + 1)
    >>> decode.n, decode.key_only, decode.key_only_kind, decode.empty_rows, decode.hasse_edges
    (3, (0, 1), 'cache', (), ((0, 2), (1, 2)))
    """
    mask = as_mask(mask, square=False)
    if mask.shape[0] != mask.shape[1] or queries == "separate":
        mask, key_only, key_only_kind = square_up(mask, queries)
    key_only = tuple(int(p) for p in key_only)
    mask, found = apply_empty_row_policy(mask, empty_rows, key_only=key_only)
    n = mask.shape[0]
    if names is None:
        names = default_names(n)
    elif len(names) != n:
        raise InputError(f"{len(names)} position names for a mask of size {n}")
    if layers is not None and layers < 0:
        raise InputError(f"layers must be >= 0, got {layers}")
    order = mask_to_order(mask)
    depth: int | None = order.convergence_depth
    preperiod = period = None
    if not residual:
        cycle = no_residual_cycle(mask, order)
        preperiod, period = cycle.preperiod, cycle.period
        depth = cycle.preperiod if cycle.settles else None
    reachability = None
    if layers is not None:
        if residual and depth is not None and layers >= depth:
            reachability = order.closure()
        else:
            reachability = reach(mask, layers, residual=residual)
    return MaskAnalysis(
        n=n,
        residual=residual,
        convergence_depth=depth,
        preperiod=preperiod,
        period=period,
        classes=order.classes,
        hasse_edges=order.hasse_edges,
        dense=order.dense,
        height=order.height,
        empty_rows=found.rows,
        layers=layers,
        reachability=reachability,
        mask=mask,
        names=tuple(names),
        empty_row_policy=found.policy,
        key_only=key_only,
        key_only_kind=key_only_kind if key_only else "",
    )

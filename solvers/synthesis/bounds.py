"""Mask synthesis, lower bounds: proved floors on the pairs of every mask realising a target within L layers.

The bounds (:func:`pair_bound` returns the largest and its name, the heuristic's ``bound_how``):

- "necessary pairs" (``L >= 1``), see :mod:`hasse.theory.synthesis`;
- "classes and covers" (every ``L``): ``sum(s for each class of T of size s >= 2)`` plus
  the covers of the quotient order. Proof: a walk of ``M`` from ``q`` to ``k`` only passes
  positions ``j`` with ``T[q, j]`` and ``T[j, k]`` (``M`` lies in ``T``, ``T`` is
  transitive). Inside a class (``q ~ k``) every such ``j`` is in the class, so ``M``
  restricted to a class of size ``s >= 2`` is strongly connected: each member has an edge
  to another member, ``s`` edges. For a cover ``C1 > C2`` (no class strictly between) a
  walk from ``C1`` to ``C2`` passes only ``C1`` and ``C2``, so one edge of ``M`` goes from
  ``C1`` to ``C2`` directly. These edges are pairwise distinct.
- "LP relaxation (GLOP)" (every ``L >= 2``, ortools importable, at most ``LP_MAX_TRIPLES``
  ways): minimise ``sum x`` over ``0 <= x <= 1`` on the off-diagonal pairs of ``T``, necessary
  pairs at 1, with ``x_qk + sum_p y_p >= 1`` per pair of ``T``, ``p`` ranging over the simple
  paths ``k -> v_1 -> … -> q`` of 2 to ``L`` hops whose every hop is a pair of ``T`` (``L = 2``:
  the middles ``c`` with ``T[q, c]``, ``T[c, k]``), ``y_p <= x_e`` for each hop ``e`` of ``p``,
  and the rows of the bound above (per class member ``sum x >= 1`` over its class, per cover
  ``sum x >= 1``). A realising mask is an integral point: each pair's walk in ``M or I``, with
  its identity hops and cycles cut out, is a simple path of at most ``L`` hops of ``M``. So
  ``ceil(LP)`` is a lower bound; it is used only when GLOP reports OPTIMAL.
"""

from __future__ import annotations

import math
import time

import numpy as np

from hasse.theory.synthesis import check_target, necessary_pairs

LP_MAX_TRIPLES = 2_500  # ways (paths of 2..L hops) the LP accepts (causal n = 24: 2024 middles, GLOP ~2 s; n = 32: ~10 s)
LP_SECONDS = 5.0  # GLOP's own time limit (an unfinished LP bounds nothing: then it is not used)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Boolean product by a float32 matrix product (exact: counts below 2^24)."""
    return (a.astype(np.float32) @ b.astype(np.float32)) > 0.5


def _classes_and_covers(target: np.ndarray) -> int:
    """The bound "classes and covers" (module docstring)."""
    same = target & target.T
    _, cls = np.unique(same, axis=0, return_inverse=True)
    cls = cls.ravel()
    sizes = np.bincount(cls)
    c = len(sizes)
    first = np.array([int(np.flatnonzero(cls == i)[0]) for i in range(c)])
    quotient = target[np.ix_(first, first)] & ~np.eye(c, dtype=bool)
    covers = quotient & ~_product(quotient, quotient)
    return int(sizes[sizes >= 2].sum()) + int(covers.sum())


def _ways(target: np.ndarray, q: int, k: int, layers: int, cap: int) -> list[list[int]] | None:
    """The simple paths ``[k, v_1, …, q]`` of 2 to ``layers`` hops through pairs of ``T`` (None: more than ``cap``)."""
    inside = [v for v in np.flatnonzero(target[q] & target[:, k]).tolist() if v != q and v != k]
    out: list[list[int]] = []
    stack = [[k]]
    while stack:
        path = stack.pop()
        last = path[-1]
        if len(path) >= 2 and target[q, last]:
            out.append(path + [q])
            if len(out) > cap:
                return None
        if len(path) < layers:  # room for one more middle position
            stack += [path + [v] for v in inside if v not in path and target[v, last]]
    return out


def _lp_bound(target: np.ndarray, deadline: float, layers: int = 2) -> int | None:
    """``ceil`` of the LP relaxation's optimum by GLOP, or None (no ortools, too big, not solved)."""
    try:
        from ortools.linear_solver import pywraplp
    except ImportError:
        return None
    n = target.shape[0]
    off = target & ~np.eye(n, dtype=bool)
    between = np.rint(target.astype(np.float32) @ target.astype(np.float32))  # exact: counts below 2^24
    if float((between[off] - 2).sum()) > LP_MAX_TRIPLES:  # the middles alone: the 2-hop ways
        return None
    need = necessary_pairs(target, layers)
    paths, left = {}, LP_MAX_TRIPLES
    for q, k in np.argwhere(off & ~need):
        found = _ways(target, int(q), int(k), layers, left)
        if found is None:
            return None
        paths[(int(q), int(k))] = found
        left -= len(found)
    solver = pywraplp.Solver.CreateSolver("GLOP")
    if solver is None:
        return None
    x = {(int(q), int(k)): solver.NumVar(1.0 if need[q, k] else 0.0, 1.0, "") for q, k in np.argwhere(off)}
    for pair, found in paths.items():
        ways = [x[pair]]
        for path in found:
            y = solver.NumVar(0.0, 1.0, "")
            for a, b in zip(path, path[1:]):
                solver.Add(y <= x[(b, a)])
            ways.append(y)
        solver.Add(solver.Sum(ways) >= 1)
    same = target & target.T
    for q in range(n):
        mates = np.flatnonzero(same[q]).tolist()
        if len(mates) >= 2:
            solver.Add(solver.Sum([x[(q, k)] for k in mates if k != q]) >= 1)
    _, cls = np.unique(same, axis=0, return_inverse=True)
    cls = cls.ravel()
    groups = [np.flatnonzero(cls == i) for i in range(int(cls.max()) + 1)]
    first = np.array([int(g[0]) for g in groups])
    quotient = target[np.ix_(first, first)] & ~np.eye(len(groups), dtype=bool)
    for i, j in np.argwhere(quotient & ~_product(quotient, quotient)):
        solver.Add(solver.Sum([x[(int(q), int(k))] for q in groups[i] for k in groups[j]]) >= 1)
    solver.Minimize(solver.Sum(list(x.values())))
    left = min(LP_SECONDS, deadline - time.perf_counter())
    if left <= 0:
        return None
    solver.SetTimeLimit(max(1, int(left * 1000)))
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    return max(0, math.ceil(solver.Objective().Value() - 1e-6))


def pair_bound(target, layers: int, deadline: float = math.inf) -> tuple[int, str]:
    """A proved lower bound on the pairs of any realisation, and its name (module docstring)."""
    target = check_target(target)
    bounds = [(int(necessary_pairs(target, layers).sum()), "necessary pairs"),
              (_classes_and_covers(target), "classes and covers")]
    if layers >= 2:
        lp = _lp_bound(target, deadline, layers)
        if lp is not None:
            bounds.append((lp, "LP relaxation (GLOP)"))
    value = max(b for b, _ in bounds)
    return value, next(how for b, how in bounds if b == value)

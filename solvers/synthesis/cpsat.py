"""Mask synthesis, exact by CP-SAT (OR-Tools): the fewest pairs (or tiles) realising a target within L layers.

The encoding is :mod:`.exact`'s, as CP-SAT Booleans:

- ``m[q, k]`` for each candidate pair (the off-diagonal pairs of ``T``: the upper bound
  ``(M or I)^L <= T`` exactly, ``T`` being transitive); the necessary pairs are fixed true.
- the lower bound ``(M or I)^L >= T``: for each off-diagonal pair of ``T`` the clause
  "some way reaches ``k`` from ``q`` in ``L`` steps", a way through ``j`` being a literal
  ``w`` with ``w -> a[q, j]`` and ``w -> r_{L-1}[j, k]`` (:func:`_way`); a reach literal
  ``r_l[q, k]`` has ``r_l -> OR(ways)``. One direction is enough: in every solution each
  true ``r_l`` / ``w`` lies under the true reach, so the asserted clauses force the true
  ``L``-step reach to hold every pair of ``T``. ``L`` is capped at ``n - 1``.
- cost ``"pairs"``: minimise the true ``m``; ``"tiles"``: ``m -> t_tile`` and minimise
  ``tiles * (P + 1) + pairs`` (``P`` the candidate count), which is lexicographic: a tile
  outweighs every pair. The tile bound of a partial solve is ``floor(bound / (P + 1))``
  (from ``tiles * (P + 1) + pairs >= bound`` and ``pairs <= P``).
- symmetry breaking (cost ``"pairs"`` only), :mod:`.exact`'s: ``x <=lex swap(x)`` for
  consecutive twins, with prefix-equality literals ``e_i`` forced true when the prefix is
  equal (``e_{i-1} and x_i == y_i -> e_i``) and ``e_{i-1} -> (not x_i or y_i)``.

Determinism: one worker (the default, ``workers=None``; with the fixed seed 0) gives the
same mask on every run. Measured on 2 cores, causal L = 2, core-based search: n = 12 in
1.1 s with 1 worker, 9.2 s with 2, 1.2 s with 4; n = 14 in 5.5 s, 19.5 s, 6.3 s. More
workers (CP-SAT's portfolio) give the same optimum, maybe another optimal mask.

The search is core-based (``optimize_with_core``, like Z3's MaxSAT: without it one worker
does not prove causal n = 12 in 20 s) and starts from the heuristic's mask as a hint
(the core-based search alone finds poor masks); at a timeout the better of the two comes back.

Statuses: OPTIMAL -> ``"optimal"`` (bound = cost); FEASIBLE at the time limit ->
``"unknown"`` with the best mask and the solver's best objective bound (at least the
necessary pairs, or the tiles they touch); no solution yet -> ``T`` minus the diagonal,
the same bound. Every mask is re-checked by :func:`hasse.theory.synthesis.realises`;
a mask that fails raises :class:`SynthesisBug`. ortools is imported lazily (the
``synth`` extra): :func:`available` says whether it imports.
"""

from __future__ import annotations

import math
import time

import numpy as np

from hasse.solvers.synthesis.symmetry import lex_leader_perms
from hasse.solvers.synthesis.problem import Synthesis, SynthesisBug, check_request
from hasse.theory.errors import InputError
from hasse.theory.synthesis import (BLOCK, dense_mask, necessary_pairs, pair_cost, realises,
                                    tile_cost, tile_counts, tiles_of)

MAX_N = 64  # the model has about n^3 L literals
CORE = True  # core-based search (like Z3's MaxSAT): on causal n = 12 it proves what plain search does not


def available() -> bool:
    """Whether ortools (the ``synth`` extra) imports."""
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError:
        return False
    return True


def _candidate_pairs(target: np.ndarray) -> np.ndarray:
    """The pairs ``m`` may hold: the off-diagonal pairs of ``T`` (the upper bound)."""
    return target & ~np.eye(target.shape[0], dtype=bool)


def _way(model, a, b):
    """A literal ``w`` with ``w -> a`` and ``w -> b`` (``a``, ``b`` literals): one way through a middle."""
    w = model.new_bool_var("")
    model.add_implication(w, a)
    model.add_implication(w, b)
    return w


class _Model:
    """The CP-SAT model of one instance (see the module docstring)."""

    def __init__(self, target: np.ndarray, layers: int):
        from ortools.sat.python import cp_model
        self.model = model = cp_model.CpModel()
        self.target = target
        self.n = n = target.shape[0]
        self.layers = max(1, min(layers, n - 1))
        cand = _candidate_pairs(target)
        self.m = {(int(q), int(k)): model.new_bool_var(f"m_{q}_{k}") for q, k in np.argwhere(cand)}
        for q, k in np.argwhere(necessary_pairs(target, layers) & cand):
            model.add_bool_or([self.m[(int(q), int(k))]])
        step = cand | np.eye(n, dtype=bool)
        self.possible = [None, step]
        for _ in range(2, self.layers + 1):
            self.possible.append((step.astype(np.int64) @ self.possible[-1].astype(np.int64)) > 0)
        self.r: dict[tuple[int, int, int], object] = {}
        for q, k in np.argwhere(target & ~np.eye(n, dtype=bool)):
            ways = self.ways(self.layers, int(q), int(k))
            if ways is True:
                continue
            model.add_bool_or(ways)  # an empty clause: infeasible (a bug: T minus I always realises)

    def edge(self, q: int, k: int):
        return True if q == k else self.m.get((q, k), False)

    def ways(self, level: int, q: int, k: int):
        """True, or the literals of which one must hold for ``q`` to reach ``k`` in ``level`` steps."""
        if level == 1:
            e = self.edge(q, k)
            return True if e is True else [] if e is False else [e]
        ways = []
        for j in np.flatnonzero(self.possible[1][q] & self.possible[level - 1][:, k]).tolist():
            a, b = self.edge(q, j), self.reach(level - 1, j, k)
            if a is False or b is False:
                continue
            if a is True and b is True:
                return True
            ways.append(b if a is True else a if b is True else _way(self.model, a, b))
        return ways

    def reach(self, level: int, q: int, k: int):
        """``r_level[q, k]``: True, False or a literal under the true reach."""
        if q == k:
            return True
        if level == 1 or not self.possible[level][q, k]:
            return self.edge(q, k) if level == 1 else False
        key = (level, q, k)
        if key not in self.r:
            ways = self.ways(level, q, k)
            if ways is True:
                self.r[key] = True
            elif not ways:
                self.r[key] = False
            else:
                var = self.model.new_bool_var(f"r{level}_{q}_{k}")
                self.model.add_bool_or(ways + [var.Not()])
                self.r[key] = var
        return self.r[key]

    def symmetry(self) -> None:
        order = sorted(self.m)
        xs = [self.m[p] for p in order]
        for p in lex_leader_perms(self.target):
            ys = [self.m.get((int(p[q]), int(p[k])), False) for q, k in order]
            self._lex_leq(xs, ys)

    def _lex_leq(self, xs: list, ys: list) -> None:
        model = self.model
        equal = None  # None: the empty prefix (true)
        for x, y in zip(xs, ys):
            if x is y:
                continue
            pre = [equal.Not()] if equal is not None else []
            if y is False:  # x <= False: x false while the prefix is equal, which then stays equal
                model.add_bool_or(pre + [x.Not()])
                continue
            nxt = model.new_bool_var("")
            if y is True:  # x <= True always; the prefix stays equal when x is true
                model.add_bool_or(pre + [x.Not(), nxt])
                equal = nxt
                continue
            model.add_bool_or(pre + [x.Not(), y])
            model.add_bool_or(pre + [x.Not(), y.Not(), nxt])
            model.add_bool_or(pre + [x, y, nxt])
            equal = nxt

    def mask_of(self, solver) -> np.ndarray:
        out = np.zeros((self.n, self.n), dtype=bool)
        for (q, k), var in self.m.items():
            out[q, k] = bool(solver.boolean_value(var))
        return out


def _value(mask: np.ndarray, cost: str, block: int) -> int:
    return pair_cost(mask) if cost == "pairs" else int(np.count_nonzero(tile_counts(mask, block)))


def _hint(target, layers, cost, block, start, timeout) -> np.ndarray | None:
    """The heuristic's mask (a first solution: the core-based search alone finds poor ones), or None."""
    from hasse.solvers.synthesis.heuristic import heuristic
    left = None if timeout is None else timeout - (time.perf_counter() - start)
    if left is not None and left <= 0.05:
        return None
    return heuristic(target, layers, cost, block, None if left is None else left / 4, bound=False).mask


def _workers(workers: int | None) -> int:
    if workers is None:
        return 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be an integer >= 1, got {workers!r}")
    return workers


def minimum_cpsat(target, layers: int, cost: str = "pairs", block: int = BLOCK, timeout: float | None = None,
                  symmetry: bool = True, *, workers: int | None = None) -> Synthesis:
    """The cheapest mask realising ``target`` within ``layers`` (CP-SAT), re-checked by ``realises``.

    ``timeout`` in seconds (None: none), the model's building included; ``workers=1`` for
    a deterministic run (the default); ``symmetry=False`` drops the symmetry breaking.

    >>> r = minimum_cpsat(np.tril(np.ones((4, 4), dtype=bool)), 2, workers=1)
    >>> r.cost, r.status, r.lower_bound, r.engine
    (4, 'optimal', 4, 'cp-sat')
    """
    start = time.perf_counter()
    target, layers = check_request(target, layers, cost, block, timeout, MAX_N, "the exact optimiser (CP-SAT)")
    n = target.shape[0]
    threads = _workers(workers)
    from ortools.sat.python import cp_model
    enc = _Model(target, int(layers))
    model = enc.model
    pairs = sum(enc.m.values()) if enc.m else 0
    weight = len(enc.m) + 1
    if cost == "pairs":
        if symmetry:
            enc.symmetry()
        model.minimize(pairs)
    else:
        tiles = tiles_of(n, block)
        tile_vars: dict[int, object] = {}
        for (q, k), var in enc.m.items():
            t = int(tiles[q, k])
            if t not in tile_vars:
                tile_vars[t] = model.new_bool_var(f"t_{t}")
            model.add_implication(var, tile_vars[t])
        model.minimize(weight * sum(tile_vars.values()) + pairs if tile_vars else 0)
    hint = _hint(target, int(layers), cost, block, start, timeout)
    if hint is not None:
        for (q, k), var in enc.m.items():
            model.add_hint(var, bool(hint[q, k]))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = threads
    solver.parameters.random_seed = 0
    solver.parameters.optimize_with_core = CORE
    if timeout is not None:
        solver.parameters.max_time_in_seconds = max(0.01, timeout - (time.perf_counter() - start))
    answer = solver.solve(model)
    if answer in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
        raise SynthesisBug(f"CP-SAT: {solver.status_name(answer)}, though T minus the diagonal realises (n = {n})")
    if answer in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        mask = enc.mask_of(solver)
        if not realises(mask, target, int(layers)):
            raise SynthesisBug(f"the CP-SAT mask does not realise the target (n = {n}, layers = {layers})")
    else:
        mask = dense_mask(target)
    if answer != cp_model.OPTIMAL and hint is not None and _value(hint, cost, block) < _value(mask, cost, block):
        mask = hint  # the heuristic's mask (re-checked there) beats what the search found in time
    value = pair_cost(mask) if cost == "pairs" else int(np.count_nonzero(tile_counts(mask, block)))
    how = "the optimum (CP-SAT)"
    if answer == cp_model.OPTIMAL:
        status, lower = "optimal", value
    else:
        status = "unknown"
        need = necessary_pairs(target, int(layers))
        floor = int(need.sum()) if cost == "pairs" else int(np.count_nonzero(tile_counts(need, block)))
        solver_bound = 0
        if answer == cp_model.FEASIBLE or math.isfinite(solver.best_objective_bound):
            raw = math.ceil(solver.best_objective_bound - 1e-6)
            solver_bound = max(0, raw if cost == "pairs" else raw // weight)
        lower = min(max(floor, solver_bound), value)
        how = "CP-SAT's bound" if solver_bound > floor else ("necessary pairs" if cost == "pairs"
                                                             else "tiles of the necessary pairs")
        if lower == value:
            status, how = "optimal", "the optimum (CP-SAT)"
    return Synthesis(mask=mask, cost=value, lower_bound=lower, status=status,
                     seconds=time.perf_counter() - start, layers=int(layers), kind=cost,
                     block=int(block), pairs=pair_cost(mask), tiles=tile_cost(mask, block),
                     engine="cp-sat", bound_how=how)

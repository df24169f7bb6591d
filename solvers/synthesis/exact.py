"""Mask synthesis, exact: the fewest pairs (or tiles) realising a target preorder within L layers, by Z3 Optimize.

The problem (:mod:`hasse.theory.synthesis`): ``M`` realises the preorder ``T`` within
``L`` layers when ``(M or I)^L == T``. The encoding:

- a Boolean ``m[q, k]`` for each candidate pair: the off-diagonal pairs of ``T``
  (:func:`_candidate_pairs`). This is the upper bound ``(M or I)^L <= T``, exactly: a
  pair of ``M`` outside ``T`` is reached at depth 1, and a mask inside ``T`` never reaches
  outside it (``T`` transitive). The necessary pairs (``necessary_pairs``) are fixed true.
- the lower bound ``(M or I)^L >= T``: reach variables ``r_l[q, k]`` for depth ``l``, with
  ``r_1 = m or I`` and ``r_l[q, k] -> OR_j (a[q, j] and r_{l-1}[j, k])`` (one direction is
  enough: every satisfying assignment's ``r`` lies under the true reach), and
  ``r_L[q, k]`` asserted for every pair of ``T``; ``L`` is capped at ``n - 1``.
- cost ``"pairs"``: minimise the number of true ``m``; ``"tiles"``: minimise the non-empty
  ``block x block`` tiles (``m -> t_tile``), then the pairs.
- symmetry breaking (cost ``"pairs"`` only; tiles depend on where positions are): every
  automorphism ``p`` of ``T`` (``T[p][:, p] == T``) maps realising masks to realising masks of
  the same cost, so the lexicographic leader constraint ``x <=lex p(x)`` over the candidate
  pairs (in one fixed order) keeps at least one optimum: the lex-least mask of each orbit
  meets every such constraint. One constraint per coset representative of the group's
  stabiliser chain (:func:`.symmetry.lex_leader_perms`, each checked to be an automorphism).

Every mask returned is re-checked by :func:`hasse.theory.synthesis.realises` (the concrete
engine); a proved mask that fails raises :class:`SynthesisBug`. On a timeout the best
mask found (re-checked; else ``T`` minus the diagonal) comes back with status
``"unknown"`` and the solver's lower bound (at least the necessary pairs).
"""

from __future__ import annotations

import time

import numpy as np
import z3

from hasse.solvers.synthesis.problem import Synthesis, SynthesisBug, check_request
from hasse.solvers.synthesis.symmetry import lex_leader_perms
from hasse.theory.synthesis import (BLOCK, dense_mask, necessary_pairs, pair_cost, realises,
                                    tile_cost, tile_counts, tiles_of)

MAX_N = 64  # the encoding has about n^3 L clauses


def _candidate_pairs(target: np.ndarray) -> np.ndarray:
    """The pairs ``m`` may hold: the off-diagonal pairs of ``T`` (the upper bound)."""
    return target & ~np.eye(target.shape[0], dtype=bool)


def _lex_leq(xs: list, ys: list, name: str) -> list:
    """Constraints for ``xs <=lex ys`` (Z3 Booleans or Python bools), one prefix-equality variable per step."""
    out = []
    equal = z3.BoolVal(True)
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x is y:
            continue
        x = z3.BoolVal(x) if isinstance(x, bool) else x
        y = z3.BoolVal(y) if isinstance(y, bool) else y
        out.append(z3.Implies(equal, z3.Or(z3.Not(x), y)))
        nxt = z3.Bool(f"{name}_{i}")
        out.append(nxt == z3.And(equal, x == y))
        equal = nxt
    return out


class _Encoding:
    """The variables and constraints of one instance (see the module docstring)."""

    def __init__(self, target: np.ndarray, layers: int):
        self.target = target
        self.n = n = target.shape[0]
        self.layers = max(1, min(layers, n - 1))
        cand = _candidate_pairs(target)
        self.cand = cand
        self.m = {(q, k): z3.Bool(f"m_{q}_{k}") for q, k in map(tuple, np.argwhere(cand))}
        self.constraints = [self.m[(int(q), int(k))] for q, k in np.argwhere(necessary_pairs(target, layers) & cand)]
        step = cand | np.eye(n, dtype=bool)
        self.possible = [None, step]
        for _ in range(2, self.layers + 1):
            self.possible.append((step.astype(np.int64) @ self.possible[-1].astype(np.int64)) > 0)
        self.r: dict[tuple[int, int, int], object] = {}
        for q, k in np.argwhere(target & ~np.eye(n, dtype=bool)):
            self.constraints.append(self.reach(self.layers, int(q), int(k)))

    def edge(self, q: int, k: int):
        return True if q == k else self.m.get((q, k), False)

    def reach(self, level: int, q: int, k: int):
        """``r_level[q, k]``: True, False or a Z3 Boolean under the true reach."""
        if q == k:
            return True
        if level == 1 or not self.possible[level][q, k]:
            return self.edge(q, k) if level == 1 else False
        key = (level, q, k)
        if key not in self.r:
            var = z3.Bool(f"r{level}_{q}_{k}")
            self.r[key] = var
            ways = []
            for j in np.flatnonzero(self.possible[1][q] & self.possible[level - 1][:, k]).tolist():
                a, b = self.edge(q, j), self.reach(level - 1, j, k)
                if a is False or b is False:
                    continue
                ways.append(b if a is True else a if b is True else z3.And(a, b))
            self.constraints.append(z3.Implies(var, z3.Or(ways)) if ways else z3.Not(var))
        return self.r[key]

    def symmetry(self) -> list:
        order = sorted(self.m)
        xs = [self.m[p] for p in order]
        out = []
        for i, p in enumerate(lex_leader_perms(self.target)):
            ys = [self.m.get((int(p[q]), int(p[k])), False) for q, k in order]
            out += _lex_leq(xs, ys, f"lex_{i}")
        return out

    def mask_of(self, model) -> np.ndarray:
        out = np.zeros((self.n, self.n), dtype=bool)
        for (q, k), var in self.m.items():
            out[q, k] = z3.is_true(model.eval(var, model_completion=True))
        return out


def _count(terms) -> z3.ArithRef:
    return z3.Sum([z3.If(t, 1, 0) for t in terms]) if terms else z3.IntVal(0)


def _bound(handle) -> int | None:
    value = handle.lower()
    return value.as_long() if z3.is_int_value(value) else None


def minimum(target, layers: int, cost: str = "pairs", timeout: float | None = None, *,
            block: int = BLOCK, symmetry: bool = True) -> Synthesis:
    """The cheapest mask realising ``target`` within ``layers`` (Z3 Optimize), re-checked by ``realises``.

    ``timeout`` in seconds (None: none); ``block`` the tile size of cost ``"tiles"``;
    ``symmetry=False`` drops the symmetry breaking (the same optimum, the tests check).

    >>> r = minimum(np.tril(np.ones((4, 4), dtype=bool)), 2)
    >>> r.cost, r.status, r.lower_bound
    (4, 'optimal', 4)
    """
    start = time.perf_counter()
    target, layers = check_request(target, layers, cost, block, timeout, MAX_N, "the exact optimiser")
    n = target.shape[0]
    enc = _Encoding(target, int(layers))
    opt = z3.Optimize()
    if timeout is not None:
        opt.set("timeout", max(1, int(timeout * 1000)))
    opt.add(*enc.constraints)
    pairs = _count(list(enc.m.values()))
    if cost == "pairs":
        if symmetry:
            opt.add(*enc.symmetry())
        primary = opt.minimize(pairs)
    else:
        tiles = tiles_of(n, block)
        tile_vars: dict[int, z3.BoolRef] = {}
        for (q, k), var in enc.m.items():
            t = int(tiles[q, k])
            tile_vars.setdefault(t, z3.Bool(f"t_{t}"))
            opt.add(z3.Implies(var, tile_vars[t]))
        primary = opt.minimize(_count(list(tile_vars.values())))
        opt.minimize(pairs)
    answer = opt.check()
    mask = None
    if answer == z3.sat:
        mask = enc.mask_of(opt.model())
        if not realises(mask, target, int(layers)):
            raise SynthesisBug(f"the optimiser's mask does not realise the target (n = {n}, layers = {layers})")
        status = "optimal"
    elif answer == z3.unsat:
        raise SynthesisBug(f"no realisation found, though T minus the diagonal is one (n = {n})")
    else:
        status = "unknown"
        try:
            found = enc.mask_of(opt.model())
        except z3.Z3Exception:
            found = None
        mask = found if found is not None and realises(found, target, int(layers)) else None
        if mask is None:
            mask = dense_mask(target)
    value = (pair_cost(mask) if cost == "pairs"
             else int(np.count_nonzero(tile_counts(mask, block))))
    how = "the optimum (Z3 Optimize)"
    if status == "optimal":
        lower = value
    else:
        floor = int(necessary_pairs(target, int(layers)).sum()) if cost == "pairs" else 0
        solver = _bound(primary) or 0
        lower = min(max(floor, solver), value)
        how = "Z3's bound" if solver > floor else "necessary pairs"
        if lower == value:
            status = "optimal"  # the bound proved the best mask found optimal before the time ran out
            how = "the optimum (Z3 Optimize)"
    return Synthesis(mask=mask, cost=value, lower_bound=lower, status=status,
                     seconds=time.perf_counter() - start, layers=int(layers), kind=cost,
                     block=int(block), pairs=pair_cost(mask), tiles=tile_cost(mask, block),
                     engine="z3", bound_how=how)

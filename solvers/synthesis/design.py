"""Mask synthesis, the dispatcher: the cheapest mask for a depth budget, from formulas, the exact optimum or the heuristic.

:func:`synthesize` (``hasse synthesize``, ``hasse.synthesize``) gathers the candidates that
realise the target ``T`` within ``L`` layers (``(M or I)^L == T``,
:mod:`hasse.theory.synthesis`):

- **formula**: every closed formula whose target equals ``T`` (``theory.spanner_formulas.
  formula_designs``: masks proved for every ``n`` by ``hasse prove-mask --claim realises``);
- **construction**: a sparse mask built from the target's recognised structure (``theory.spanner_structure.
  structured``: unions of chains and forests of classes and of products of two chains), at any ``n``, re-checked here by
  ``realises`` and, up to ``WITNESS_MAX_PAIRS`` pairs, by its witness walk pair by pair (at this ``n`` only);
- **exact**: for ``n <= exact_max_n`` the optimum (``solvers.synthesis.optimise``: CP-SAT, or
  Z3's ``minimum``), status optimal or, when ``timeout`` ends the search, unknown with the
  best mask and the gap;
- **heuristic**: beyond that size when no formula applies, and either no construction does or
  ``n <= HEURISTIC_MAX_N`` (where it may beat the construction) (``solvers.synthesis.heuristic``),
  a realising mask with a proved lower bound.

The cheapest by the requested cost is chosen (on ``M``, the mask without its diagonal; ties:
a proved optimum first, then a formula, then a construction); the others stay in :attr:`Design.candidates`. The
chosen mask is re-checked here by :func:`~hasse.theory.synthesis.realises` (a failure is a
:class:`SynthesisBug`), and two verdicts are computed on the mask as a kernel gets it
(``M or I``): ``leak`` (the concrete engine: nothing outside ``T`` at any depth, and, with a
task, no leak of its labels) and ``prove-mask`` (a formula's all-n claim; an array is checked
at this ``n`` only). The third, gpu-check, needs torch and is added above this layer
(:func:`hasse.views.synthesis_report.gpu_verdict`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from hasse.solvers.synthesis.checks import Verdict, leak_verdict, prove_verdict, target_of  # noqa: F401
from hasse.solvers.synthesis.problem import Synthesis, SynthesisBug, check_cost
from hasse.theory.errors import InputError
from hasse.theory.reach import reach
from hasse.theory.spanner_formulas import chain_cover_bound, formula_designs
from hasse.theory.spanner_structure import bad_witness, structured
from hasse.theory.synthesis import BLOCK, check_target, necessary_pairs, pair_cost, realises, tile_cost, tile_counts

METHODS = ("optimal", "formula", "construction", "heuristic", "unknown")
HEURISTIC_MAX_N = 128  # up to here the heuristic runs beside a construction (it may be cheaper)
WITNESS_MAX_PAIRS = 300_000  # a construction's witness walks are checked pair by pair up to this many pairs of T


@dataclass(frozen=True)
class Candidate:
    """One realisation considered: its method, engine, cost (on ``M``), proved lower bound (None: none), sizes."""

    method: str
    engine: str
    cost: int
    lower_bound: int | None
    pairs: int
    tiles: tuple[int, int]
    seconds: float
    spec: str | None = None  # a formula's catalogue spec

    def to_json(self) -> dict:
        return {"method": self.method, "engine": self.engine, "cost": self.cost, "lower_bound": self.lower_bound,
                "pairs": self.pairs, "tiles": list(self.tiles), "seconds": self.seconds, "spec": self.spec}


@dataclass(frozen=True)
class Design:
    """The synthesised mask and everything the report says about it (see the module docstring).

    ``mask`` is ``M`` (no diagonal), ``kernel_mask`` is ``M or I`` (what is written and run);
    ``tiles`` are ``M``'s ``(full, partial)`` tiles, ``kernel_tiles`` the kernel mask's.
    With a relabelling, ``target``, ``mask`` and ``kernel_mask`` are in the new order
    (new position ``i`` holds old position ``permutation[i]``).
    """

    target: np.ndarray
    layers: int
    kind: str  # the cost: pairs | tiles
    block: int
    method: str  # optimal | formula | construction | heuristic | unknown
    mask: np.ndarray
    kernel_mask: np.ndarray
    cost: int
    lower_bound: int
    bound_how: str
    seconds: float
    engine: str
    pairs: int
    tiles: tuple[int, int]
    kernel_tiles: tuple[int, int]
    dense_pairs: int
    dense_tiles: tuple[int, int]  # of T as a kernel mask (its diagonal included)
    depth: int  # the convergence depth: the smallest L' with realises(M, T, L')
    formula: object | None = None  # a FormulaDesign when one was chosen
    permutation: tuple[int, ...] | None = None
    tiles_before: int | None = None  # relabelled: the best mask's non-empty tiles in the order given
    handmade: tuple = ()
    candidates: tuple[Candidate, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    timed_out: bool = False  # the exact search was cut by the timeout
    structure: str | None = None  # the recognised structure when a construction was chosen
    witness_checked: bool = False  # a construction's witness walks were verified pair by pair

    @property
    def n(self) -> int:
        return int(self.target.shape[0])

    @property
    def gap(self) -> int:
        return self.cost - self.lower_bound

    @property
    def optimal(self) -> bool:
        """The lower bound meets the cost: no mask is cheaper (by the cost on ``M``)."""
        return self.gap == 0

    @property
    def failed(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.status == "fail")

    def original_order(self, matrix: np.ndarray) -> np.ndarray:
        """``matrix`` (in the design's order) back in the order of positions given."""
        if self.permutation is None:
            return matrix
        inverse = np.argsort(np.asarray(self.permutation))
        return matrix[np.ix_(inverse, inverse)]


def cost_of(mask: np.ndarray, kind: str, block: int) -> int:
    """The cost of ``M`` (no diagonal): its pairs, or its non-empty ``block x block`` tiles."""
    return pair_cost(mask) if kind == "pairs" else int(np.count_nonzero(tile_counts(mask, block)))


def floor_of(target: np.ndarray, layers: int, kind: str, block: int) -> int:
    """A proved lower bound from the necessary pairs: their number, or the tiles they occupy."""
    return cost_of(necessary_pairs(target, layers), kind, block)


def convergence_depth(mask: np.ndarray, target: np.ndarray, layers: int) -> int:
    """The smallest ``L' <= layers`` with ``(M or I)^L' == T`` (``mask`` realises ``T`` within ``layers``)."""
    for depth in range(1, layers):
        if np.array_equal(reach(mask, depth), target):
            return depth
    return layers


def construction_verdict(design: Design) -> Verdict:
    """The prove-mask verdict of a construction: its witness walks checked at this ``n`` (not a proof for every n)."""
    if design.witness_checked:
        return Verdict("prove-mask", "pass", f"checked at this n: every pair's witness walk verified ({design.n} "
                                             "positions; a construction, not proved for every n)")
    return Verdict("prove-mask", "not-run", f"not run: a construction; realises checked at this n by the concrete "
                                            f"engine only (over {WITNESS_MAX_PAIRS:,} pairs: the witness walks are not "
                                            "checked one by one)")


def _exact(target, layers, kind, block, timeout) -> tuple[Synthesis, str, str]:
    from hasse.solvers.synthesis import optimise

    s = optimise(target, layers, cost=kind, block=block, timeout=timeout)
    return s, s.engine, s.bound_how


def _heuristic(target, layers, kind, block, timeout) -> tuple[Synthesis, str, str]:
    from hasse.solvers.synthesis import heuristic

    s = heuristic(target, layers, cost=kind, block=block, timeout=timeout)
    return s, s.engine, s.bound_how


def _formulas(target, layers, kind, block) -> list:
    return list(formula_designs(target, layers, kind, block))


def _handmade(target, layers, block) -> tuple:
    from hasse.theory.handmade import handmade

    return tuple(handmade(target, layers, block))


def _array_candidate(s: Synthesis, engine: str, method: str, kind: str, block: int) -> Candidate:
    m = np.asarray(s.mask, dtype=bool) & ~np.eye(s.mask.shape[0], dtype=bool)
    return Candidate(method, engine, cost_of(m, kind, block), int(s.lower_bound) if s.lower_bound is not None
                     else None, pair_cost(m), tile_cost(m, block), float(s.seconds))


def _method_of(s: Synthesis) -> str:
    return {"optimal": "optimal", "unknown": "unknown"}.get(s.status, "heuristic")


def synthesize(target, layers: int, *, cost: str = "pairs", block: int = BLOCK, relabel: bool = False,
               timeout: float | None = None, exact_max_n: int | None = None, task=None,
               progress: Callable[[str], None] | None = None, prefer_formula: bool = False) -> Design:
    """The cheapest mask realising ``target`` within ``layers`` layers, and its verdicts (module docstring).

    ``relabel`` (cost tiles only) lets the optimiser reorder the positions; ``timeout`` bounds the
    exact search (and the all-n proof); ``exact_max_n`` (default ``EXACT_MAX_N``) the size up to
    which the exact optimum is sought; ``task`` (a Task on the target's positions) adds its leak
    check with the designed mask in place of its own; ``progress`` receives a line before each
    step that may take over a second; ``prefer_formula`` chooses the cheapest formula whenever one
    applies, even where another candidate is cheaper (``--out FILE.py``: a mask_mod proved for every n;
    the cheaper candidates stay in :attr:`Design.candidates`).

    >>> d = synthesize(np.tril(np.ones((4, 4), dtype=bool)), 2)
    >>> d.method, d.cost, d.lower_bound, d.depth, bool(d.kernel_mask.diagonal().all())
    ('optimal', 4, 4, 2, True)
    """
    start = time.perf_counter()
    say = progress or (lambda text: None)
    target = check_target(target)
    if isinstance(layers, bool) or not isinstance(layers, (int, np.integer)) or layers < 1:
        raise InputError(f"layers must be an integer >= 1, got {layers!r}", param="layers")
    layers = int(layers)
    check_cost(cost, block)
    block = int(block)
    if timeout is not None and not timeout > 0:
        raise InputError(f"timeout must be > 0 seconds, got {timeout!r}")
    if relabel and cost != "tiles":
        raise InputError("relabel reorders positions to pack tiles; pairs do not depend on the order of positions "
                         "(use cost tiles)")
    n = int(target.shape[0])
    from hasse.solvers.synthesis import EXACT_MAX_N

    limit = EXACT_MAX_N if exact_max_n is None else int(exact_max_n)
    formulas = _formulas(target, layers, cost, block)
    built = structured(target, layers)
    arrays: list[tuple[Synthesis, str, str, str]] = []  # (synthesis, engine, bound_how, method)
    permutation = tiles_before = None
    timed_out = False
    if relabel:
        from hasse.solvers.synthesis import relabel as relabel_positions

        say(f"relabelling {n} positions to pack {block} x {block} tiles ...")
        r = relabel_positions(target, layers, cost=cost, block=block, timeout=timeout)
        permutation = tuple(int(p) for p in r.perm)
        tiles_before = int(r.tiles_before)
        s = r.synthesis
        arrays.append((s, getattr(s, "engine", "relabel"), getattr(s, "bound_how", ""), _method_of(s)))
    elif n <= limit:
        say(f"exact search: n = {n}, {layers} layer(s), cost {cost} ...")
        s, engine, how = _exact(target, layers, cost, block, timeout)
        timed_out = s.status != "optimal"
        arrays.append((s, engine, how, _method_of(s)))
    elif not formulas and (built is None or n <= HEURISTIC_MAX_N):
        say(f"heuristic: n = {n}, {layers} layer(s), cost {cost} ...")
        arrays.append((*_heuristic(target, layers, cost, block, timeout), "heuristic"))
    candidates: list[tuple[int, int, Candidate, object]] = []  # (cost, rank, candidate, payload)
    floor = floor_of(target, layers, cost, block)
    bounds = []
    rank = {"optimal": 0, "formula": 1, "construction": 2, "unknown": 3, "heuristic": 4}
    for s, engine, how, method in arrays:
        c = _array_candidate(s, engine, method, cost, block)
        candidates.append((c.cost, rank[method], c, s))
        if s.lower_bound is not None:
            bounds.append((int(s.lower_bound), how or engine))
    if floor:  # after the engines' bounds: an equal bound of theirs is the one named
        bounds.append((floor, "the necessary pairs (pairs with no position between them)"))
    if cost == "pairs" and layers == 2:
        chains, sizes = chain_cover_bound(target)
        bounds.append((chains, f"down-closed chains of {'+'.join(map(str, sizes[:4]))}"
                               f"{'+…' if len(sizes) > 4 else ''} positions (the 2-hop chain bound)"))
    eye = np.eye(n, dtype=bool)
    for f in formulas:
        m = np.asarray(f.mask, dtype=bool) & ~eye
        c = Candidate("formula", "formula", cost_of(m, cost, block), None, pair_cost(m), tile_cost(m, block), 0.0,
                      f.spec)
        candidates.append((c.cost, rank["formula"], c, f))
    if built is not None:
        m = built.construction.mask
        c = Candidate("construction", "structure", cost_of(m, cost, block), None, pair_cost(m), tile_cost(m, block),
                      0.0)
        candidates.append((c.cost, rank["construction"], c, built))
    if not candidates:
        raise SynthesisBug("no candidate mask (the exact search, the heuristic or a formula always gives one)")
    first = prefer_formula and any(c.method == "formula" for _, _, c, _ in candidates)
    candidates.sort(key=lambda item: (first and item[2].method != "formula", item[0], item[1]))
    _, _, chosen, payload = candidates[0]
    target_used = target if permutation is None else target[np.ix_(permutation, permutation)]
    formula = payload if chosen.method == "formula" else None
    construction = payload.construction if chosen.method == "construction" else None
    mask = np.asarray((payload if construction is None else construction).mask, dtype=bool) & ~eye
    if formula is not None or construction is not None:
        target_used, permutation, tiles_before = target, None, None  # in the order given
    if not realises(mask, target_used, layers):
        raise SynthesisBug(f"the {chosen.method} mask ({chosen.engine}) does not realise the target "
                           f"(n = {n}, layers = {layers})")
    lower, how = max(bounds, key=lambda b: b[0]) if bounds else (0, "none")
    checked = construction is not None and int(target.sum()) <= WITNESS_MAX_PAIRS
    bad = bad_witness(construction, target) if checked else None
    if bad is not None:
        raise SynthesisBug(f"the construction's witness walk of pair {bad} is not a walk of M or I within {layers} "
                           f"layer(s) (n = {n})")
    lower = min(lower, chosen.cost)
    method = chosen.method
    if method == "unknown" and lower == chosen.cost:
        method = "optimal"
    kernel = mask | eye
    dense = target & ~eye
    design = Design(
        target=target_used, layers=layers, kind=cost, block=block, method=method, mask=mask, kernel_mask=kernel,
        cost=chosen.cost, lower_bound=lower, bound_how=how, seconds=0.0, engine=chosen.engine,
        pairs=pair_cost(mask), tiles=tile_cost(mask, block), kernel_tiles=tile_cost(kernel, block),
        dense_pairs=pair_cost(dense), dense_tiles=tile_cost(target, block),
        depth=convergence_depth(mask, target_used, layers), formula=formula, permutation=permutation,
        tiles_before=tiles_before, handmade=_handmade(target, layers, block),
        candidates=tuple(c for _, _, c, _ in candidates), timed_out=timed_out,
        structure=None if construction is None else payload.description, witness_checked=checked)
    say("checking the design: leaks, and its all-n proof ...")
    proof = construction_verdict(design) if construction is not None else prove_verdict(design, timeout)
    verdicts = (leak_verdict(design, task), proof)
    return replace(design, verdicts=verdicts, seconds=time.perf_counter() - start)

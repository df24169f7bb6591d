"""The concrete re-checks: a verdict run again by the programs and the concrete engine.

A proof is re-checked on the programs (:func:`_recheck_small`: the program against its
traced formula at every instance of :func:`solvers.symbolic.recheck.plan`, then the claim on
the programs' own grids at the small instances); a refutation at its counterexample (the
mask's program at that ``n``, the concrete leak engine with ``empty_rows="attend-none"``).
Each gives ``"confirmed"``, a :func:`theory.verdicts.disagreement` or ``"not re-checked: …"``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import z3

from hasse.solvers.symbolic import recheck
from hasse.solvers.symbolic.catalog import index_instances
from hasse.solvers.symbolic.claims.solve import _params_of, _value
from hasse.solvers.symbolic.claims.statement import _ptext
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.programs import point
from hasse.solvers.symbolic.recheck import _sample_of, equal_programs, mask_grid
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.symbolic.tasks.values import lists_from_model
from hasse.theory.leak import find_leaks
from hasse.theory.order import mask_to_order
from hasse.theory.verdicts import disagreement, not_rechecked


def _small_instances(mask: SymbolicMask, conds: list, upto: int, params: dict | None = None,
                     limit: int = 12) -> list[tuple[int, dict]]:
    """Up to ``limit`` values of ``(n, params)`` with ``n <= upto`` satisfying the side conditions."""
    if upto <= 0:
        return []
    params = _params_of(mask) if params is None else params
    terms = ([mask.n] if not z3.is_int_value(mask.n) else []) + [params[p] for p in sorted(params)]
    solver = z3.Solver()
    solver.set("timeout", 5000)
    solver.add(*conds)
    if not z3.is_int_value(mask.n):
        solver.add(mask.n <= upto)
    for p in params.values():  # parameters bounded too, so the enumeration ends
        solver.add(p <= upto + 1, p >= -1)
    out = []
    while len(out) < limit and solver.check() == z3.sat:
        model = solver.model()
        values = [_value(model, x) for x in terms]
        n = _value(model, mask.n)
        out.append((n, {p: _value(model, params[p]) for p in sorted(params)}))
        if not terms:
            break
        solver.add(z3.Or([x != v for x, v in zip(terms, values)]))
    return sorted(out, key=lambda x: (x[0], sorted(x[1].items())))


def _recheck_small(mask, conds, upto, one: Callable[[int, dict], str], params: dict | None = None,
                   masks: Sequence | None = None, on_plan: Callable | None = None) -> str | None:
    """The re-check of a proof by the programs (:mod:`solvers.symbolic.recheck`).

    1. the program of each mask in ``masks`` (default ``[mask]``) against its traced formula at
       every instance of :func:`recheck.plan` (every n <= 64, constants ± 2, 2^k ± 1 sampled);
    2. ``on_plan(plan)`` (an equivalence: the two programs at every instance);
    3. the claim itself, ``one(n, params)``, on the programs' own grids at the plan's small
       instances (``n <= upto``).

    The first disagreement, or ``"confirmed: …"`` saying what ran; ``"not re-checked: …"`` when
    a program could not run at all or no instance exists; None when ``upto <= 0`` (not asked).
    """
    if upto <= 0:
        return None
    masks = list(masks) if masks else [mask]
    params = _params_of(*masks) if params is None else params
    try:
        the_plan = recheck.plan(masks, conds, params)
    except Exception as exc:  # a plan that cannot be made is said, never hidden
        return not_rechecked(f"{type(exc).__name__}: {' '.join(str(exc).split())}")
    if not the_plan.grids and not the_plan.samples:
        return not_rechecked("no instance of the side conditions among n <= 64, the constants ± 2 and 2^k ± 1")
    problem = recheck.check_program(masks, the_plan)
    if problem:
        return problem
    if on_plan is not None:
        problem = on_plan(the_plan)
        if problem:
            return problem
    claim = list(dict.fromkeys((p.n, p.params) for p in the_plan.claim if p.n <= upto))
    recheck.prefetch_grids(masks, claim)  # the claim's grids in one batch (one child run for a mask_mod)
    for n, ps in claim:
        try:
            result = one(n, dict(ps))
        except Exception as exc:  # a re-check that cannot run is reported, not hidden
            return not_rechecked(f"{type(exc).__name__}: {' '.join(str(exc).split())}")
        if result != "confirmed":
            return result
    ran = [m for m in masks if getattr(m, "program", None) is not None]
    what = "the program = the formula" if ran else "the formula (no program to run)"
    others = [m.name for m in masks[1:] if m not in ran]
    if ran and others:
        what += f" ({', '.join(others)}: the kit's own formula, no program)"
    whole = [m.program.name for m in ran if not getattr(m.program, "can_sample", True)]
    if whole and the_plan.samples:
        what += f" ({', '.join(whole)}: whole grids only, no samples)"
    claim_words = f"; the claim on the {'program' if ran else 'formula'} at {len(claim)} instance(s) with " \
                  f"n <= {max(n for n, _ in claim)}" if claim else ""
    return f"confirmed: {what} at {the_plan.words}{claim_words}"


def _model_lists(masks: list, model, n: int, pairs: list) -> dict | None:
    """The index tensors of a refutation's model (:func:`recheck.lists_from_model`), or None without any."""
    if not any(m.indexes for m in masks):
        return None
    return recheck.lists_from_model(masks, model, n, pairs) or None


def _grids(masks: list, n: int, params: dict, limit: int = 4, lists: dict | None = None) -> list[tuple[str, tuple]]:
    """``(label, (matrix, …))`` for each concrete instance of the masks' index tensors at ``n`` (one, without).

    Each matrix is the mask's PROGRAM at those values (``SymbolicMask.program``: the user's
    mask_mod or the catalogue's builder), never its formula; a mask with no program (one built
    in Python from a rule) is its formula evaluated (:func:`recheck.formula_grid`). The
    instances are :func:`solvers.symbolic.catalog.index_instances` (extreme cases first, then
    seeded), the same tensors for every mask; the label names them (`` with doc = [0, 0, 1]``).
    """
    names = {ix.name for m in masks for ix in m.indexes}
    if not names:
        return [("", tuple(mask_grid(m, n, _own(m, params)) for m in masks))]
    carrier = max(masks, key=lambda m: len({ix.name for ix in m.indexes}))
    if {ix.name for ix in carrier.indexes} != names:
        raise ValueError("the masks have different index tensors")
    out = []
    for inst in ([lists] if lists else index_instances(carrier, n, limit=limit)):  # a model's own, or instances
        label = "".join(f" with {k} = {v}" for k, v in sorted(inst.items()))
        fixed = []
        for m in masks:
            own = {k: v for k, v in inst.items() if k in {ix.name for ix in m.indexes}}
            fixed.append(mask_grid(m, n, _own(m, params), own))
        out.append((label, tuple(fixed)))
    return out


def _own(mask: SymbolicMask, params: dict) -> dict:
    return {p: v for p, v in params.items() if p in mask.params}


def _concrete_dense(mask: SymbolicMask, n: int, params: dict, witness, lists: dict | None = None) -> str:
    try:
        grids = _grids([mask], n, params, lists=lists)
    except Exception as exc:
        return not_rechecked(f"{exc}")
    if witness is None:  # a proof: every concrete instance (of the index tensors too) is dense
        for label, (matrix,) in grids:
            if not mask_to_order(matrix).dense:
                return disagreement(f"proved dense, but the concrete engine finds it not dense at "
                       f"n = {n}{_ptext(params)}{label}")
        return "confirmed"
    if len(grids) != 1 or (grids[0][0] and not lists):
        return not_rechecked("the model's index tensors are not rebuilt for a concrete grid")
    matrix = grids[0][1][0]
    dense = mask_to_order(matrix).dense
    a, b, c = witness
    attends = matrix | _eye(matrix.shape[0])
    if dense or not (attends[c, b] and attends[b, a] and not attends[c, a]):
        return disagreement(f"the concrete engine at n = {n}{_ptext(params)} finds the mask "
               f"{'dense' if dense else 'not dense, but not at this path'}")
    return "confirmed"


SAMPLED_FROM = 4096  # a refutation at a larger size is re-checked on the pair alone (the programs run on 1 x 1)


def _concrete_equal(a: SymbolicMask, b: SymbolicMask, n: int, params: dict, pair, lists: dict | None = None) -> str:
    if pair is not None and not lists and n > SAMPLED_FROM:
        return _sampled_pair(a, b, n, params, pair)
    try:
        grids = _grids([a, b], n, params, lists=lists)
    except Exception as exc:
        return not_rechecked(f"{exc}")
    if pair is not None and (len(grids) != 1 or (grids[0][0] and not lists)):
        return not_rechecked("the model's index tensors are not rebuilt for a concrete grid")
    for label, (ma, mb) in grids:
        where = f"n = {n}{_ptext(params)}{label}"
        if ma.shape != mb.shape:
            return disagreement(f"sizes {ma.shape[0]} and {mb.shape[0]} at {where}")
        if pair is None:
            if (ma != mb).any():
                q, k = (int(x) for x in next(zip(*(ma != mb).nonzero())))
                return disagreement(f"proved equivalent, but M[{q}, {k}] differs at {where}")
            continue
        q, k = pair
        if ma[q, k] == mb[q, k]:
            return disagreement(f"the concrete masks agree at M[{q}, {k}] at {where}")
    return "confirmed"


def _sampled_pair(a: SymbolicMask, b: SymbolicMask, n: int, params: dict, pair) -> str:
    """A refutation at a size too large for a grid: both programs run at ``n`` on the one pair (rows [q], cols [k])."""
    q, k = pair
    where = f"n = {n}{_ptext(params)}"
    try:
        at = point(n, params, None, [q], [k])
        va, vb = bool(_sample_of(a, at)[0, 0]), bool(_sample_of(b, at)[0, 0])
    except Exception as exc:  # the program's own failure, or one the sample cannot evaluate: said, never "confirmed"
        return not_rechecked(f"at {where}, pair ({q}, {k}): {' '.join(str(exc).split())}")
    if va == vb:
        return disagreement(f"the programs agree at M[{q}, {k}] at {where} (both {va})")
    return f"confirmed on the programs at {where}, pair ({q}, {k}) (sampled: the grid is too large)"


def _equal_on_plan(a: SymbolicMask, b: SymbolicMask, the_plan) -> str | None:
    """Proved equivalent: the two programs agree at every instance of the re-check (samples at large n too)."""
    return equal_programs(a, b, the_plan)


def _concrete_sizes(a: SymbolicMask, b: SymbolicMask, n: int, params: dict) -> str:
    try:
        sa, sb = mask_grid(a, n, _own(a, params)).shape[0], mask_grid(b, n, _own(b, params)).shape[0]
    except Exception as exc:
        return not_rechecked(f"{exc}")
    return "confirmed" if sa != sb else disagreement(f"both concrete masks have size {sa} at n = {n}{_ptext(params)}")


def _lists(task: SymbolicTask, model, n: int, positions) -> dict:
    """The lists (``lengths``, ``order``, ``masked``) the model chose, for a task over index tensors."""
    if not task.mask.indexes:
        return {}
    return lists_from_model(task, model, n, positions)


def _concrete_task(task: SymbolicTask, n: int, params: dict, lists: dict | None = None):
    if task.concrete is None:
        raise ValueError("the task has no concrete form")
    return task.concrete(n, **params, **(lists or {}))


def _concrete_flow(task: SymbolicTask, n: int, params: dict, layers, witness, lists: dict | None = None, *,
                   isolation: bool = False) -> str:
    """The concrete leak engine on the task at ``n``: no leak (crossing, with ``isolation``) for a proof
    (``witness`` None), else the one at ``witness`` (``(position, token)``; a crossing: ``(position, source)``)."""
    try:
        concrete = _concrete_task(task, n, params, lists)
    except Exception as exc:
        return not_rechecked(f"{exc}")
    report = find_leaks(concrete, layers, empty_rows="attend-none")
    found = report.isolation_within(layers) if isolation else report.leaks_within(layers)
    at = f"the concrete engine at n = {n}{_ptext(params)}"
    if witness is None:
        if not found:
            return "confirmed"
        if isolation:
            return disagreement(f"proved isolated, but {at} finds a flow along {list(found[0].path)}")
        return disagreement(f"proved leak-free, but {at} finds position {found[0].position} predicting "
                            f"{found[0].target} along {list(found[0].path)}")
    p, other = witness
    if any(x.position == p and (isolation or x.target == other) for x in found):
        return "confirmed"
    if isolation:
        return disagreement(f"{at} finds no flow into position {p} (from {other}) within {layers} layers")
    return disagreement(f"{at} finds no leak of token {other} into position {p} within {layers} layers")


def _eye(size: int):
    return np.eye(size, dtype=bool)

"""The re-check of a symbolic verdict by running the user's own program.

A proof is about the formula the tracer made of the program; a mis-trace makes it a proof
about another mask. So every verdict is re-checked on the **program**: a
:class:`~solvers.symbolic.programs.Program` (``SymbolicMask.program``; the programs live in
:mod:`solvers.symbolic.programs`) evaluates it concretely —

- :class:`MaskModProgram`: a ``FILE.py:fn`` mask_mod through the path of ``hasse analyze
  FILE.py:fn --n N`` (:func:`theory.mask_mod.evaluate_mask_mod`: numpy first, the torch
  fallback the command line passes in), every instance of one re-check in **one** bounded
  child run (:func:`theory.user_code.run`: the file imported once); large ``n`` on sampled
  index vectors (``rows[:, None]``, ``cols[None, :]``);
- :class:`CatalogProgram`: a catalogue spec through its builder (:func:`theory.catalog.build_mask`),
  and at large ``n`` its rule (the code the tracer read) on sampled index vectors.

:func:`plan` (:mod:`.instances`) says where: every ``n <= 64``, ``n`` within ±2 of every
constant of the program, ``2^k ± 1`` up to ``2^20`` on sampled sub-grids, the parameters
near their constants; the grids themselves are :mod:`.grids`. :func:`check_program` compares program and
formula (:mod:`solvers.symbolic.evaluate`) at every point: a difference is the loud
``DISAGREES: the traced formula and the program differ …`` (a bug of the kit). The claim
itself is then checked on the program's own grids at small ``n`` by the callers
(:mod:`solvers.symbolic.claims`).

A program that cannot be run at all gives ``"not re-checked: …"``; for a proof, the command
line turns that into the verdict unknown (exit 3): a proof whose program never ran is not
confirmed.
"""

from __future__ import annotations

import numpy as np

from hasse.solvers.symbolic.evaluate import Unevaluable, evaluate_partial
from hasse.solvers.symbolic.programs import (  # noqa: F401  (the programs, importable from here too)
    CatalogProgram,
    MaskModProgram,
    Point,
    Program,
    ProgramFailure,
    TaskProgram,
    _one_line,
    point,
)
from hasse.solvers.symbolic.recheck.grids import (  # noqa: F401  (importable from here)
    _grid_env, _sample_of, formula_at, formula_grid, lists_from_model, mask_grid, size_at,
)
from hasse.solvers.symbolic.recheck.instances import (  # noqa: F401  (importable from here)
    CLAIM_N, FULL_UPTO, LARGE_K, MAX_N, SAMPLE, SMALL_N, Plan, constants_of, plan, prefetch_grids,
)
from hasse.theory.errors import InputError
from hasse.theory.verdicts import disagreement, not_rechecked


def _describe(v) -> str:
    return "allowed" if bool(v) else "blocked"


def check_program(masks: list, the_plan: Plan) -> str | None:
    """The program of each mask against its formula at every point of the plan: None (they agree), or
    ``"DISAGREES: …"``, or ``"not re-checked: …"`` when a program cannot be run at all."""
    points = the_plan.grids + the_plan.samples
    for mask in masks:
        program = getattr(mask, "program", None)
        if program is None:
            continue
        own = [Point(p.n, tuple((k, v) for k, v in p.params if k in mask.params),
                     tuple((k, v) for k, v in p.lists if k in {ix.name for ix in mask.indexes}), p.rows, p.cols)
               for p in points if p.rows is None or program.can_sample]
        try:
            program.prefetch(own)
        except InputError as exc:  # the whole run failed: the file, a timeout
            return not_rechecked(f"the program {program.name} could not be run ({_one_line(exc)})")
        for p in own:
            problem = _compare(mask, program, p)
            if problem:
                return problem
    return None


def _compare(mask, program, p: Point) -> str | None:
    try:
        got = program.result(p)
    except ProgramFailure as exc:
        return disagreement(f"the program raises at {p.where()} ({exc}) where the claim holds (a bug of the kit)")
    try:
        size = size_at(mask, p)
        if p.rows is None and got.shape != (size, size):
            return disagreement(f"the program gives {got.shape[0]} positions at {p.where()}, the formula's size is "
                   f"{size} (a bug of the kit)")
        want, undef = formula_at(mask, p, p.rows, p.cols)
        problem = _obligations(mask, p, p.rows, p.cols, got)
        if problem:
            return problem
    except Unevaluable as exc:
        return not_rechecked(f"the formula of {mask.name} at {p.where()}: {exc}")
    rows = np.arange(size) if p.rows is None else np.asarray(p.rows)
    cols = np.arange(size) if p.cols is None else np.asarray(p.cols)
    if undef is not None:
        i, j = (int(x) for x in np.argwhere(undef)[0])
        return disagreement(f"the traced formula is undefined (a divisor 0) at {p.where()}, pair ({rows[i]}, "
               f"{cols[j]}), where the program says {_describe(got[i, j])} (a bug of the kit)")
    diff = np.asarray(want, dtype=bool) != got
    if diff.any():
        i, j = (int(x) for x in np.argwhere(diff)[0])
        return disagreement(f"the traced formula and the program differ at {p.where()}, pair ({rows[i]}, {cols[j]}): "
               f"the program says {_describe(got[i, j])}, the formula says {_describe(want[i, j])} (a bug of the kit)")
    return None


def _obligations(mask, p: Point, rows, cols, got) -> str | None:
    """An obligation (a divisor not 0, a lookup inside a tensor) false on the grid: the program fails there."""
    if not mask.obligations:
        return None
    env, rows, cols = _grid_env(mask, p, rows, cols)
    for ob, why in mask.obligations:
        try:
            values, undef = evaluate_partial(ob, env, shape=(len(rows), len(cols)))
        except Unevaluable:
            continue
        bad = ~np.asarray(values, dtype=bool)
        if undef is not None:
            bad = bad & ~undef
        if bad.any():
            i, j = (int(x) for x in np.argwhere(bad)[0])
            return disagreement(f"the program fails ({why}) at {p.where()}, pair ({rows[i]}, {cols[j]}), "
                   f"inside the claim's domain (a bug of the kit)")
    return None


def equal_programs(a, b, the_plan: Plan) -> str | None:
    """The two masks' programs (or formulas) give the same grids and samples at every point: None, or DISAGREES."""
    for p in the_plan.grids + the_plan.samples:
        try:
            if p.rows is None:
                ga, gb = mask_grid(a, p.n, p.param_dict, p.list_dict), mask_grid(b, p.n, p.param_dict, p.list_dict)
            else:
                ga, gb = _sample_of(a, p), _sample_of(b, p)
        except ProgramFailure as exc:
            return disagreement(f"a program raises at {p.where()} ({exc}) where the claim holds (a bug of the kit)")
        except (InputError, Unevaluable) as exc:
            return not_rechecked(f"at {p.where()}: {_one_line(exc)}")
        if ga.shape != gb.shape:
            return disagreement(f"proved equivalent, but the programs have {ga.shape[0]} and {gb.shape[0]} positions "
                   f"at {p.where()}")
        diff = ga != gb
        if diff.any():
            i, j = (int(x) for x in np.argwhere(diff)[0])
            rows = np.arange(ga.shape[0]) if p.rows is None else np.asarray(p.rows)
            cols = np.arange(ga.shape[1]) if p.cols is None else np.asarray(p.cols)
            return disagreement(f"proved equivalent, but the programs differ at {p.where()}, pair ({rows[i]}, "
                   f"{cols[j]}): {a.name} says {_describe(ga[i, j])}, {b.name} says {_describe(gb[i, j])} "
                   f"(a bug of the kit)")
    return None

"""A mask's traced formula and its program as grids at concrete values, and a model's index tensors.

:func:`formula_at` evaluates the formula (:mod:`solvers.symbolic.evaluate`, not Z3) at a
:class:`~solvers.symbolic.programs.Point`; :func:`mask_grid` is the mask at ``n`` as its
program gives it (its formula without one); :func:`lists_from_model` completes a
refutation's index tensors from a Z3 model.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import z3

from hasse.solvers.symbolic.catalog import _ancestors
from hasse.solvers.symbolic.evaluate import Unevaluable, evaluate, evaluate_partial
from hasse.solvers.symbolic.programs import Point, point


_NAMES: dict = {}  # id(term) -> (term kept alive, its name)


def _nm(term) -> str:
    """The name of a Z3 constant (its declaration's, cached: str() runs Z3's printer, and even decl() is slow)."""
    hit = _NAMES.get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    if len(_NAMES) > 4096:
        _NAMES.clear()
    name = term.name() if isinstance(term, z3.FuncDeclRef) else term.decl().name()
    _NAMES[id(term)] = (term, name)
    return name


def _env(mask, p: Point) -> dict:
    env = {}
    if not z3.is_int_value(mask.n):
        env[_nm(mask.n)] = p.n
    for key, value in p.params:
        term = mask.params.get(key)
        if term is not None and not z3.is_int_value(term):
            env[_nm(term)] = value
    for index in mask.indexes:
        values = dict(p.lists).get(index.name)
        if values is None:
            continue
        env[_nm(index.function)] = np.asarray(values, dtype=np.int64)
        relation = getattr(index, "relation", None)
        if relation is not None:  # an ancestry: anc(i, j), j is i or an ancestor of i
            table = np.zeros((len(values), len(values)), dtype=bool)
            for i, anc in enumerate(_ancestors(values)):
                table[i, sorted(anc)] = True
            env[_nm(relation)] = table
    return env


_SIZES: dict = {}  # (id(size term), n, params, lists) -> (term kept alive, size)


def size_at(mask, p: Point) -> int:
    key = (id(mask.size), p.n, p.params, p.lists)
    hit = _SIZES.get(key)
    if hit is not None and hit[0] is mask.size:
        return hit[1]
    if len(_SIZES) > 65536:
        _SIZES.clear()
    size = int(evaluate(mask.size, _env(mask, p)))
    _SIZES[key] = (mask.size, size)
    return size


def formula_at(mask, p: Point, rows=None, cols=None):
    """``(values, undefined)`` of the traced formula at ``p`` on the rows x cols of positions (default: all)."""
    env, rows, cols = _grid_env(mask, p, rows, cols)
    return evaluate_partial(mask.formula, env, shape=(len(rows), len(cols)))


def _grid_env(mask, p: Point, rows=None, cols=None) -> tuple[dict, np.ndarray, np.ndarray]:
    """The evaluation environment at ``p`` with ``q``, ``k`` on the rows x cols of positions (default: all),
    and those rows and cols as arrays."""
    size = size_at(mask, p)
    rows = np.arange(size) if rows is None else np.asarray(rows, dtype=np.int64)
    cols = np.arange(size) if cols is None else np.asarray(cols, dtype=np.int64)
    env = _env(mask, p)
    env[_nm(mask.q)] = rows[:, None]
    env[_nm(mask.k)] = cols[None, :]
    return env, rows, cols


def formula_grid(mask, n: int, params: dict | None = None, lists: dict | None = None) -> np.ndarray:
    """The formula's ``(size, size)`` grid (fast :mod:`evaluate`, not Z3); Unevaluable where it is undefined."""
    values, undef = formula_at(mask, point(n, params, lists))
    if undef is not None:
        q, k = (int(x) for x in np.argwhere(undef)[0])
        raise Unevaluable(f"the formula of {mask.name} is undefined at n = {n}, pair ({q}, {k}) (a divisor 0?)")
    return np.array(values, dtype=bool)


def mask_grid(mask, n: int, params: dict | None = None, lists: dict | None = None) -> np.ndarray:
    """The mask at ``n``: the program's grid when the mask has one, else the formula's."""
    program = getattr(mask, "program", None)
    own = {k: v for k, v in (params or {}).items() if k in mask.params}
    if program is not None:
        return program.grid(n, own, lists)
    return formula_grid(mask, n, own, lists)


def _sample_of(mask, p: Point) -> np.ndarray:
    program = getattr(mask, "program", None)
    own = {k: v for k, v in p.params if k in mask.params}
    if program is not None:
        return program.sample(p.n, own, p.rows, p.cols)
    values, undef = formula_at(mask, point(p.n, own), p.rows, p.cols)
    if undef is not None:
        raise Unevaluable(f"the formula of {mask.name} is undefined at {p.where()}")
    return np.asarray(values, dtype=bool)


def lists_from_model(masks: list, model, n: int, pairs: Sequence) -> dict:
    """Concrete values of the masks' index tensors for a refutation's re-check: the model's values at every
    place the masks look up at ``pairs`` (position pairs), completed to a tensor of the declared property.

    The axioms hold only at the lookups, so the model's other values need not have the property;
    they are filled in: ``nondecreasing`` with the nearest earlier looked-up value (the first one
    before it), ``bijection`` with the unused values in order, ``backward`` with roots (-1),
    ``any`` with 0. An ancestry relation (a tree's) is not rebuilt here: left out.

    >>> n = z3.Int("n"); q, k = z3.Ints("q0 k0")
    >>> from hasse.solvers.symbolic.terms import SymIndex, SymInt
    >>> ix = SymIndex("doc", "nondecreasing", SymInt(n, None)); ix.lookups = [q, k]
    >>> class M: indexes, q, k = [ix], q, k
    >>> s = z3.Solver(); s.add(ix.function(z3.IntVal(1)) == 3, ix.function(z3.IntVal(4)) == 5); _ = s.check()
    >>> lists_from_model([M], s.model(), 6, [(4, 1)])
    {'doc': [3, 3, 3, 3, 5, 5]}
    """
    out: dict = {}
    for m in masks:
        for ix in m.indexes:
            if ix.name in out or getattr(ix, "relation", None) is not None:
                continue
            fixed: dict[int, int] = {}
            for pq, pk in pairs:
                for term in ix.lookups:
                    at = z3.substitute(term, (m.q, z3.IntVal(int(pq))), (m.k, z3.IntVal(int(pk))))
                    i, v = model.eval(at, model_completion=True), model.eval(ix.function(at), model_completion=True)
                    if z3.is_int_value(i) and z3.is_int_value(v) and 0 <= i.as_long() < n:
                        fixed[i.as_long()] = v.as_long()
            out[ix.name] = _complete(ix.prop, n, fixed)
    return out


def _complete(prop: str, n: int, fixed: dict[int, int]) -> list[int]:
    if prop == "nondecreasing":
        first = fixed[min(fixed)] if fixed else 0
        values, current = [], first
        for i in range(n):
            current = fixed.get(i, current)
            values.append(current)
        return values
    if prop == "bijection":
        free = iter(sorted(set(range(n)) - set(fixed.values())))
        return [fixed[i] if i in fixed else next(free) for i in range(n)]
    if prop == "backward":
        return [fixed.get(i, -1) for i in range(n)]
    return [fixed.get(i, 0) for i in range(n)]

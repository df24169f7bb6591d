"""The solver of every claim's query, the smallest model, and the pieces a query is built from.

:func:`_solve` chooses the solver by the query's form (never by time): a query in linear
integer arithmetic with a quotient or remainder by a constant goes to Z3's LIA tactic
first, every other to the general solver. :func:`smallest_model` bisects for the smallest
``n``, then the smallest parameters in name order.
"""

from __future__ import annotations

import time
from typing import Sequence

import z3

from hasse.solvers.smt.prove import SAT, UNSAT, check
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask


def _value(model, term) -> int:
    return model.eval(term, model_completion=True).as_long()


def _solve(constraints: list, timeout: float | None):
    start = time.perf_counter()
    if _linear_with_constant_division(constraints):  # chosen by the query's form, never by a time: deterministic
        solver = z3.Then("simplify", "purify-arith", "elim-term-ite", "qflia").solver()
        solver.add(*constraints)
        try:
            answer = check(solver, timeout)
        except z3.Z3Exception:  # the tactic refuses the goal: the general solver decides it
            answer = None
        if answer is not None and answer.status in (SAT, UNSAT):
            return answer.status, (solver.model() if answer.status == SAT else None), answer.reason, \
                time.perf_counter() - start
    solver = z3.Solver()
    solver.add(*constraints)
    answer = check(solver, timeout)
    return answer.status, (solver.model() if answer.status == SAT else None), answer.reason, \
        time.perf_counter() - start


_LINEAR_OPS = {z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_UMINUS, z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT,
               z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT, z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_NOT, z3.Z3_OP_IMPLIES,
               z3.Z3_OP_XOR, z3.Z3_OP_ITE, z3.Z3_OP_TRUE, z3.Z3_OP_FALSE, z3.Z3_OP_ANUM, z3.Z3_OP_IFF}
_BY_CONSTANT = {z3.Z3_OP_MUL, z3.Z3_OP_IDIV, z3.Z3_OP_MOD, z3.Z3_OP_REM, z3.Z3_OP_DIV}


def _linear_with_constant_division(constraints: list, limit: int = 20_000) -> bool:
    """Whether the query is linear integer arithmetic (no function but + - and products, quotients and
    remainders by constants) with at least one quotient or remainder by a constant: the fragment Z3's
    default solver is weak at (``(q - k) % 2 == 0``: a timeout) and its LIA tactic decides at once."""
    todo, seen, division = list(constraints), set(), False
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if len(seen) > limit or not z3.is_app(e):  # a quantifier or a bound variable: the general solver
            return False
        if z3.is_const(e):
            if e.decl().kind() == z3.Z3_OP_UNINTERPRETED and e.sort() != z3.IntSort() and e.sort() != z3.BoolSort():
                return False
            continue
        kind = e.decl().kind()
        if kind in _BY_CONSTANT:
            constant_args = [c for c in e.children() if z3.is_int_value(c)]
            if kind == z3.Z3_OP_MUL and len(constant_args) < e.num_args() - 1:
                return False
            if kind != z3.Z3_OP_MUL:
                if not z3.is_int_value(e.arg(1)) or e.arg(1).as_long() == 0:
                    return False
                division = True
        elif kind not in _LINEAR_OPS:
            return False
        todo.extend(e.children())
    return division


def smallest_model(constraints: list, n: z3.ArithRef, params: dict, timeout: float | None = DEFAULT_TIMEOUT,
                   model=None):
    """A model of ``constraints`` with the smallest ``n``, then the smallest parameters in name order.

    Returns ``(model, note)``; ``note`` is "" when every minimisation finished, else why the
    result may not be the smallest (a solver call that timed out). ``model`` is a first
    model if the caller already has one.

    >>> n, x = z3.Ints("n x")
    >>> m, note = smallest_model([n >= 1, x >= 0, x < n, x * x == 49], n, {})
    >>> m[n], note
    (8, '')
    """
    fixed: list = []
    if model is None:
        status, model, reason, _ = _solve(constraints, timeout)
        if status != SAT:
            return None, reason or status
    note = ""
    for term in ([n] if not z3.is_int_value(n) else []) + [params[p] for p in sorted(params)]:
        hi = _value(model, term)
        lo = None  # everything below lo is unsat; found by stepping down 1, 2, 4, … from hi
        step = 1
        while lo is None or lo < hi:
            if lo is None and step > 2 ** 40:  # a parameter with no lower bound in the side conditions
                note = f"{term} has no smallest value (the side conditions bound it from below nowhere)"
                break
            mid = hi - step if lo is None else (lo + hi) // 2
            query = constraints + fixed + [term <= mid] + ([term >= lo] if lo is not None else [])
            status, m, reason, _ = _solve(query, timeout)
            if status == SAT:
                model, hi = m, _value(m, term)
                step *= 2
            elif status == UNSAT:
                lo = mid + 1
            else:
                note = f"the smallest {term} is not certain (the solver said {reason or status} below {hi})"
                break
        fixed.append(term == hi)
    return model, note


def _conditions_of(*masks: SymbolicMask, extra: Sequence = ()) -> list:
    out, seen = [], set()
    for c in [c for m in masks for c in m.conditions] + list(extra):
        key = str(c)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _params_of(*masks: SymbolicMask) -> dict:
    out: dict = {}
    for m in masks:
        for name, term in m.params.items():
            out.setdefault(name, term)
    return out


def _task_params(task: SymbolicTask, assume: Sequence = ()) -> dict:
    """The mask's parameters and the task's own (Int constants its side conditions name, besides ``n``)."""
    out = dict(task.mask.params)
    known = {str(t) for t in out.values()} | {str(task.mask.n)}
    todo, seen = list(task.conditions) + list(assume), set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED and e.sort() == z3.IntSort() \
                and str(e) not in known:
            out[str(e)] = e
            known.add(str(e))
        todo.extend(e.children())
    return out


def _positions(prefix: str, count: int) -> list:
    return [z3.Int(f"{prefix}{i}") for i in range(count)]


def _values(model, mask_or_masks, extra_params: dict | None = None) -> tuple[int, dict]:
    masks = mask_or_masks if isinstance(mask_or_masks, (list, tuple)) else [mask_or_masks]
    params = _params_of(*masks)
    params.update(extra_params or {})
    n = _value(model, masks[0].n)
    return n, {p: _value(model, t) for p, t in sorted(params.items())}


def _task_pairs(positions) -> list:
    """Pairs whose facts a task's ``holds``/``predicts``/``group`` at these positions may need.

    A task's lookups in an index tensor (``doc(p + 1)``) are among the mask's lookups at
    ``(p, p)`` (:mod:`solvers.symbolic.tasks`), so each position is read on the diagonal too,
    and the first against the last. Extra instances of true axioms are sound.
    """
    return [(x, x) for x in positions] + ([(positions[-1], positions[0])] if len(positions) > 1 else [])

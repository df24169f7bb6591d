"""One symbolic run of a program: its branch decisions, its obligations, and the questions it asks Z3."""

from __future__ import annotations

import numbers
from typing import Callable

import z3

from hasse.solvers.symbolic.terms.errors import TraceLimit, Untraceable

MAX_DECISIONS = 64  # branch decisions on symbolic values within one run of a program (one path)
RANGE_MS = 5000  # the time one "can this value leave its dtype's range?" question may take (unknown: wrapped)


def free_constants(expr) -> set:
    """The uninterpreted Z3 constants of ``expr`` (positions, sizes, parameters, b0, h0)."""
    out, todo, seen = set(), [expr], set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(e)
        todo.extend(e.children())
    return out


class Tracer:
    """Branch decisions and obligations of one symbolic run (see :mod:`solvers.symbolic.trace`)."""

    def __init__(self, assumptions=()):
        self.assumptions = list(assumptions)  # what is known about the inputs (ranges, side conditions)
        self.choices: list[bool] = []  # forced decisions for this run, in order
        self.taken: list[tuple[z3.BoolRef, bool]] = []  # (condition, decision) of this run
        self.obligations: list[tuple[z3.BoolRef, str]] = []  # (must hold under the path, why)
        self.raised: list = []  # every Untraceable made while this run's program ran (see Untraceable)
        self.where: Callable[[], str] | None = None  # "file.py:LINE" of the user's line running now (set by trace)
        self.constants: set[int] = set()  # every concrete Python int that met a symbolic value (q < 1000: 1000)
        self._solver = z3.Solver()
        self._solver.add(*self.assumptions)
        self._range: z3.Solver | None = None  # for may_leave (a time limit; its own assumptions)
        self._range_count = 0

    def path_condition(self) -> z3.BoolRef:
        return z3.And([c if d else z3.Not(c) for c, d in self.taken]) if self.taken else z3.BoolVal(True)

    def decide(self, cond: z3.BoolRef) -> bool:
        """The branch this run takes on ``cond``: forced by ``choices``, else the first feasible one."""
        from hasse.theory.deadline import tick

        tick()  # a given --timeout bounds tracing too (a loop over a symbolic value decides once per turn)
        cond = z3.simplify(cond)
        if z3.is_true(cond):
            return True
        if z3.is_false(cond):
            return False
        i = len(self.taken)
        if i >= MAX_DECISIONS:  # `while d >= 4: d -= 4` on a symbolic d never ends: one path, unbounded
            raise TraceLimit(f"more than {MAX_DECISIONS} branch decisions on symbolic values in one run (a loop "
                             "whose condition is symbolic?); write it without a loop over symbolic values")
        if i < len(self.choices):
            decision = self.choices[i]
        else:
            decision = self._feasible(cond)
            self.choices.append(decision)
        self.taken.append((cond, decision))
        return decision

    def _feasible(self, cond) -> bool:
        """True if ``cond`` can hold on the current path (then that branch first), else False."""
        self._solver.push()
        self._solver.add(self.path_condition(), cond)
        ok = self._solver.check() != z3.unsat
        self._solver.pop()
        return ok

    def branch_feasible(self, prefix: list[bool], conds: list[z3.BoolRef]) -> bool:
        """Whether the path given by ``conds[i] == prefix[i]`` is satisfiable under the assumptions."""
        self._solver.push()
        self._solver.add(*[c if d else z3.Not(c) for c, d in zip(conds, prefix)])
        ok = self._solver.check() != z3.unsat
        self._solver.pop()
        return ok

    def oblige(self, cond: z3.BoolRef, why: str) -> None:
        """Record that ``cond`` must hold on this path; ``why`` gets the user's line ("masks.py:7: the divisor is 0")."""
        guarded = getattr(self, "guarded", None)
        at = guarded() if guarded is not None else ""
        if at:  # torch raises here at some values and the program's handler runs: not the path traced
            raise Untraceable(f"an operation that raises at some values ({why}) inside a try block at {at}: torch "
                              "would raise there and run the handler")
        where = self.where() if self.where is not None else ""
        if where and not why.startswith(where):
            why = f"{where}: {why}"
        self.obligations.append((z3.Implies(self.path_condition(), cond), why))

    def note(self, value) -> None:
        """Record a concrete Python int that met a symbolic value (``Tracer.constants``)."""
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            self.constants.add(int(value))

    def may_leave(self, expr, low: int, high: int) -> bool:
        """Whether ``expr`` can lie outside ``[low, high]`` on this path under the assumptions (unknown: True)."""
        return self.possible(z3.Or(expr < low, expr > high))

    def possible(self, cond) -> bool:
        """Whether ``cond`` can hold on this path under the assumptions (a time limit; unknown: True)."""
        if self._range is None:
            self._range = z3.Solver()
            self._range.set("timeout", RANGE_MS)
        self._range_count += 1
        self._range.push()
        self._range.add(*self.assumptions)  # the assumptions grow as checks record side conditions
        self._range.add(self.path_condition(), cond)
        answer = self._range.check()
        self._range.pop()
        return answer != z3.unsat

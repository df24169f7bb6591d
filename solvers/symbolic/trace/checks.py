"""The kit's parameter checks (``require_positive``, ``require_block``, …) in a traced program.

On a symbolic value a check records its condition as a *side condition* of the statement
(``n >= 1``, ``l | n``) instead of testing a number; on a concrete one it is the kit's
own check (:mod:`theory.params`).
"""

from __future__ import annotations

from typing import Callable

from hasse.solvers.symbolic.terms import SymInt, Tracer, as_int, lift


def _checks(tracer: Tracer) -> dict[str, Callable]:
    """Symbolic stand-ins for theory.params' checks: each records its condition and returns the value."""

    def need(cond):
        tracer.assumptions.append(cond)
        tracer._solver.add(cond)

    def require_int(name, value):
        if isinstance(value, SymInt):
            return value
        from hasse.theory.params import require_int as concrete

        return concrete(name, value)

    def at_least(low_of, concrete_name):
        """A check ``value >= low``: a side condition for a symbolic value, the kit's own check otherwise."""
        def check(name, value, *rest):
            value = require_int(name, value)
            if isinstance(value, SymInt):
                need(value.expr >= as_int(low_of(*rest)))
                return value
            from hasse.theory import params

            return getattr(params, concrete_name)(name, value, *rest)

        return check

    require_positive = at_least(lambda: 1, "require_positive")
    require_non_negative = at_least(lambda: 0, "require_non_negative")
    require_at_least = at_least(lambda low, why="": low, "require_at_least")

    def require_block(n, block):
        if isinstance(n, SymInt) or isinstance(block, SymInt):
            n_, l_ = lift(n, tracer), lift(block, tracer)
            need(as_int(n_) >= 1)
            need(as_int(l_) >= 1)
            need(as_int(n_) % as_int(l_) == 0)  # Z3's mod is Python's for l >= 1
            return n_, l_
        from hasse.theory.params import require_block as concrete

        return concrete(n, block)

    def name_rule(rule, name):
        return rule

    return {"require_int": require_int, "require_positive": require_positive,
            "require_non_negative": require_non_negative, "require_at_least": require_at_least,
            "require_block": require_block, "name_rule": name_rule}

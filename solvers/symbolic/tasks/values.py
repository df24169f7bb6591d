"""A symbolic task's formulas at concrete values, and its side conditions in words.

- :func:`statement_of` — "for all n >= 1 and all l >= 1 with l | n" (``at n = 3`` when ``n`` is given);
- :func:`evaluate` — a formula at ``n`` and parameters, the modelled lists (``order``,
  ``lengths``, ``masked``) filled in from concrete ones: the tests' comparison with the catalogue;
- :func:`lists_from_model` — the lists a Z3 model chose, for the concrete re-check of a witness.
"""

from __future__ import annotations

import numpy as np
import z3

from hasse.solvers.symbolic.conditions import describe_conditions
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.symbolic.tasks.rules import MASKED


def statement_of(n, params: dict, conditions: list) -> str:
    """The side conditions in words, by the symbols' own names; ``n`` given: ``at n = 3``."""
    named = {str(v): v for v in params.values()}
    conditions = [c for c in conditions if not z3.is_true(z3.simplify(c))]
    if not z3.is_int_value(n):
        return describe_conditions(n, named, conditions)
    if not named:
        return f"at n = {n}"
    first, *rest = named.values()
    return describe_conditions(first, {str(v): v for v in rest}, conditions) + f" at n = {n}"


def evaluate(task: SymbolicTask, expr, n: int, **params) -> z3.ExprRef:
    """``expr`` (a formula of the task's symbols) at ``n`` and these parameters, simplified.

    The lists of the concrete spec fill in the modelled ones: ``order`` the ``rank`` tensor,
    ``lengths`` the ``doc`` tensor, ``masked`` the ``masked`` predicate. For re-checks and tests.

    >>> from hasse.solvers.symbolic.tasks import symbolic_task
    >>> t = symbolic_task("packed")
    >>> evaluate(t, t.predicts(z3.IntVal(0), z3.IntVal(1)), 3, lengths=(1, 2), window=0)
    False
    """
    subs = [(task.mask.n, z3.IntVal(n))]
    for key, value in params.items():
        if key in task.mask.params and isinstance(value, (int, np.integer)):
            subs.append((task.mask.params[key], z3.IntVal(int(value))))
    expr = z3.simplify(z3.substitute(expr, *subs))
    funs = []
    x = z3.Var(0, z3.IntSort())
    if "order" in params:
        from hasse.theory.masks.xlnet import ranks

        funs.append((z3.Function("rank", z3.IntSort(), z3.IntSort()), _table(x, ranks(params["order"]), -1)))
    if "lengths" in params:
        from hasse.theory.masks.document import document_ids

        funs.append((z3.Function("doc", z3.IntSort(), z3.IntSort()), _table(x, document_ids(params["lengths"]), -1)))
    if "masked" in params:
        chosen = set(int(i) for i in params["masked"])
        funs.append((MASKED, z3.Or([x == i for i in sorted(chosen)]) if chosen else z3.BoolVal(False)))
    if funs:
        expr = z3.simplify(z3.substitute_funs(expr, *funs))
    return expr


def _table(x, values, default: int):
    out = z3.IntVal(default)
    for i in reversed(range(len(values))):
        out = z3.If(x == i, z3.IntVal(int(values[i])), out)
    return out


def lists_from_model(task: SymbolicTask, model: z3.ModelRef, n: int, positions=None) -> dict:
    """The lists a Z3 model of ``task`` chose at sample length ``n``: ``order``, ``lengths`` or ``masked``.

    For the concrete re-check of a counterexample: ``task.concrete(n, **params, **lists_from_model(…))``
    builds the very instance the model describes. ``positions``: the positions the query read
    (a witness path); the model's values there are kept (and at ``p + 1``, which ``predicts``
    reads), and a position left free joins the document before it (packed), or is ranked after
    the others (xlnet). Without ``positions`` every value of the model is kept, made
    non-decreasing where needed.

    >>> from hasse.solvers.symbolic.tasks import symbolic_task
    >>> t = symbolic_task("packed")
    >>> s = z3.Solver(); doc = z3.Function("doc", z3.IntSort(), z3.IntSort())
    >>> s.add(doc(0) == 4, doc(1) == 7, doc(2) == 7); s.check()
    sat
    >>> lists_from_model(t, s.model(), 3), lists_from_model(t, s.model(), 3, positions=[0])
    ({'lengths': (1, 2)}, {'lengths': (1, 2)})
    """
    from hasse.theory.spec import parse_spec

    name, given = parse_spec(task.name.split(" through ")[0])
    keep = set(range(n)) if positions is None else {int(p) + d for p in positions for d in (0, 1)} & set(range(n))
    out: dict = {}
    indexes = {getattr(ix, "name", None) for ix in getattr(getattr(task, "mask", None), "indexes", ())}
    if "masked" in indexes and "masked" not in given:  # masked_context, mae_published: nonzero flags = masked
        return {"masked": tuple(i for i, v in enumerate(_values_at(model, "masked", n)) if v != 0)}
    if (name == "xlnet" or "rank" in indexes) and "order" not in given:  # xlnet, any_order_two_stream
        values = _values_at(model, "rank", n)
        out["order"] = tuple(sorted(range(n), key=lambda i: (values[i] if i in keep else n + i, i)))
    elif name in ("packed", "bad_packed_window") and "lengths" not in given:
        values = _values_at(model, "doc", n)
        ids: list = [values[i] if i in keep else None for i in range(n)]
        last = next((v for v in ids if v is not None), 0)
        for i in range(n):
            ids[i] = last = max(last, ids[i]) if ids[i] is not None else last
        lengths, run = [], 1
        for i in range(1, n):
            if ids[i] == ids[i - 1]:
                run += 1
            else:
                lengths.append(run)
                run = 1
        out["lengths"] = tuple(lengths + [run]) if n else ()
    elif name == "mlm" and "masked" not in given:
        out["masked"] = tuple(i for i in range(n)
                              if z3.is_true(model.eval(MASKED(z3.IntVal(i)), model_completion=True)))
    return out


def _values_at(model: z3.ModelRef, name: str, n: int) -> list[int]:
    f = z3.Function(name, z3.IntSort(), z3.IntSort())
    return [model.eval(f(z3.IntVal(i)), model_completion=True).as_long() for i in range(n)]

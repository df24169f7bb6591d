"""Task families by formulas: which token each position holds and predicts, for every ``n``.

:func:`symbolic_task` turns a task spec of the catalogue (``butterfly``,
``block_two_stream:variant=clique``, ``bd3lm:block=2``, ``xlnet``, ``causal_lm``, ``mlm``,
``packed``, and the bad designs ``bad_*``) into a :class:`~solvers.symbolic.task.SymbolicTask`.
Parameters left out of the spec are symbolic (``n``, ``block``, ``window``), with the side
conditions the builders check (``n >= 1``, ``l >= 1``, ``l | n``); parameters given are
constants. The layouts are those of design §4 (and ``theory/tasks/*.py``), position ``p``
in ``0 … size − 1``:

====================== =========== ==================================================================
task                   size        holds(p, t) / predicts(p, t)
====================== =========== ==================================================================
butterfly              3n − 2      F_i at i (i ≤ n−2) and B_i at n−2+i (1 ≤ i) hold x_i;
                                   P_k at 2n−2+k holds x_{k−1}, x_{k+1} (those inside) and predicts x_k
block_two_stream       2n − l      C_i at i (i < n − l) holds x_i; Q_t at n−l+t predicts x_t
bd3lm                  2n          xt_i at i predicts x_i; x0_i at n+i holds x_i
xlnet                  2n          c_i at i holds x_i; g_i at n+i predicts x_i (order: a permutation)
causal_lm              n           i holds x_i, predicts x_{i+1} (i < n − 1)
mlm                    n           i holds x_i unless masked(i); predicts x_i when masked(i)
packed                 n           i holds x_i, predicts x_{i+1} when doc(i+1) = doc(i); group doc(i)
====================== =========== ==================================================================

Lists a task depends on are modelled, not enumerated (each statement is then for all of them):

- ``xlnet``'s factorisation order by its ranks, an index tensor ``rank`` with the declared
  property *bijection* (:class:`~solvers.symbolic.terms.SymIndex`) over ``0 … n−1``;
- ``packed``'s document lengths by the document id of each position, an index tensor
  ``doc`` with the property *nondecreasing* (every non-decreasing sequence has the
  equalities of some list of lengths, and conversely), ``n`` = the sum of the lengths;
- ``mlm``'s masked positions by an uninterpreted predicate ``masked(i)`` (any subset).

A list given in the spec (``xlnet:order=2+0+1``, ``packed:lengths=3+2``, ``mlm:masked=1``)
fixes ``n`` and the values, as side conditions of the task.

The masks are traced from the catalogue's rule factories (:func:`~solvers.symbolic.mask.from_rule`),
except the ones over a list (xlnet, packed: the same rules, written on the index tensor)
and the bad designs (their flaw written on the case study's rule), whose factories are in
:mod:`.rules`. Lookups in an index tensor include those of
``predicts`` and ``group`` (``doc(q + 1)``), so that ``mask.facts(pairs)`` carries the
index axioms a task query needs.

The builders of each family are :mod:`.families`; the catalogue's invariant of each, for
"leak-free at every depth", is :mod:`.invariants` (written as its own formula and checked by
the claim, never trusted: :func:`solvers.symbolic.claims.known_invariant`). Re-exported here:
:func:`evaluate` and :func:`lists_from_model` (:mod:`.values`), a task at concrete values and
a model's lists, and :func:`statement_of`.
"""

from __future__ import annotations

import z3

import hasse.theory.catalog  # noqa: F401  (registers the entries)
from hasse.solvers.symbolic.mask import N, SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.symbolic.tasks.families import _BUILDERS as _CASE_STUDIES
from hasse.solvers.symbolic.tasks import derived_masked, derived_orders, derived_tokens
from hasse.solvers.symbolic.tasks.rules import causal_rule  # noqa: F401  (the doctest of check_same_size)
from hasse.solvers.symbolic.tasks.values import evaluate, lists_from_model, statement_of
from hasse.theory.errors import InputError
from hasse.theory.masks.document import document_ids
from hasse.theory.masks.xlnet import ranks
from hasse.theory.params import require_block, require_int_list, require_non_negative, require_positive
from hasse.theory.spec import canonical_keys, get_entry, parse_spec, parse_value

__all__ = ["TASKS", "check_same_size", "evaluate", "lists_from_model", "statement_of", "symbolic_task"]

TASKS = ("butterfly", "block_two_stream", "bd3lm", "xlnet", "causal_lm", "mlm", "packed",
         "bad_butterfly_self", "bad_butterfly_crossed", "bad_block_own_content", "bad_mlm_unmasked",
         "bad_packed_window", "bad_block_query_history")
_BUILDERS = {**_CASE_STUDIES, **derived_masked.BUILDERS, **derived_orders.BUILDERS, **derived_tokens.BUILDERS}
TASKS = TASKS + tuple(name for name in _BUILDERS if name not in TASKS)  # the derived layouts (issue 25)


def _parse(spec: str) -> tuple[str, dict]:
    """``(name, values given)`` of a task spec, values parsed by the catalogue's parameter kinds."""
    name, raw = parse_spec(spec)
    source = spec.strip()
    if name not in TASKS:
        raise InputError(f"no symbolic form for the task {name!r}; tasks for every n: {', '.join(TASKS)}", source)
    entry = get_entry(name, "task", source)
    raw = canonical_keys(entry, raw, source)
    values = {}
    for key, text in raw.items():
        param = entry.param(key)
        if param is None:
            known = ", ".join(p.name for p in entry.params)
            raise InputError(f"unknown parameter {key!r} for {name}; its parameters: {known}", source)
        values[key] = parse_value(param, text, source)
    return name, values


def symbolic_task(spec: str) -> SymbolicTask:
    """The task named by ``spec`` for every value of the parameters it leaves out (module docstring).

    >>> t = symbolic_task("butterfly")
    >>> str(t.mask.size), t.mask.statement
    ('3*n - 2', 'for all 1 <= n <= 2^31')
    >>> z3.simplify(z3.substitute(t.holds(z3.IntVal(5), z3.IntVal(0)), (t.n, z3.IntVal(3))))  # P_1 holds x_0
    True
    >>> symbolic_task("ar:n=3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: ar:n=3: no symbolic form for the task 'ar'; tasks for every n: butterfly, ...
    """
    name, values = _parse(spec)
    try:
        _check_values(name, values)
        task = _BUILDERS[name](spec.strip(), name, values)
    except InputError as exc:
        if exc.source is not None:
            raise
        raise InputError(str(exc), spec.strip()) from None
    solver = z3.Solver()
    solver.set("timeout", 5000)
    solver.add(*task.all_conditions())
    if solver.check() == z3.unsat:  # a statement under impossible conditions would hold vacuously
        raise InputError(f"no value satisfies the side conditions ({task.statement})", spec.strip())
    return task


def _check_values(name: str, values: dict) -> None:
    """The checks the catalogue's builders make on the values a spec gives (without building anything)."""
    n = require_positive("n", values[N]) if N in values else None
    if "block" in values:
        block = require_positive("block", values["block"])
        if n is not None:
            require_block(n, block)
    if "window" in values:
        if name == "bad_packed_window":
            require_positive("window", values["window"])
        else:
            require_non_negative("window", values["window"])
    if "masked" in values:
        masked = require_int_list("masked", values["masked"])
        for i in masked:
            if i < 0 or (n is not None and i >= n):
                raise InputError(f"masked index {i} is out of range" + (f": the sample has tokens 0…{n - 1}"
                                                                         if n is not None else ""))
        if len(set(masked)) != len(masked):
            raise InputError(f"masked index {next(i for i in masked if masked.count(i) > 1)} is given twice")
    if "order" in values:
        ranks(values["order"])
    if "lengths" in values:
        document_ids(values["lengths"])


def check_same_size(task: SymbolicTask, mask: SymbolicMask) -> None:
    """Raise :class:`InputError` unless ``mask`` has as many positions as ``task`` for every ``n``.

    A task read through another mask (``--task``) must lay its positions on the same grid:
    a mask of ``n`` positions under XLNet's ``2n`` would leave every query outside it, and the
    claim would hold vacuously. Proved by Z3 under both side conditions; a size that may differ
    (or that Z3 cannot decide) is refused in one line.

    >>> from hasse.solvers.symbolic.mask import from_rule
    >>> check_same_size(symbolic_task("causal_lm"), from_rule("causal", causal_rule, params={"n": None}))
    >>> check_same_size(symbolic_task("xlnet"), from_rule("causal", causal_rule, params={"n": None}))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: causal: the task xlnet has 2*n positions but the mask has n (e.g. at n = 1)
    """
    solver = z3.Solver()
    solver.set("timeout", 5000)
    solver.add(*task.all_conditions(), *mask.conditions, task.mask.size != mask.size)
    result = solver.check()
    if result == z3.unsat:
        return
    where = f" (e.g. at n = {solver.model().eval(task.mask.n, model_completion=True)})" if result == z3.sat else ""
    raise InputError(f"the task {task.name} has {task.mask.size} positions but the mask has {mask.size}{where}",
                     mask.name)

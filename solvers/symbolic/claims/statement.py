"""The words of a claim: its statement ("for all n >= 1 with …: …"), the values of a counterexample.

A claim decided inside another (a bound ``n <= m`` of :func:`obligations._earlier` or of the
search over walk lengths) shows no statement of its own: :func:`_inner` marks it.
"""

from __future__ import annotations

import contextlib

import z3

from hasse.solvers.smt.prove import UNSAT
from hasse.solvers.symbolic.claims.solve import _solve
from hasse.solvers.symbolic.conditions import describe_conditions
from hasse.solvers.symbolic.mask import SymbolicMask


INDEX_WORDS = {  # what "for every …" ranges over, by the property an index tensor is declared with
    "nondecreasing": "every split into documents ({name}: a non-decreasing id per position)",
    "bijection": "every order ({name}: a permutation of the positions)",
    "backward": "every forest ({name}: a parent per node, earlier or none)",
    "any": "every value of {name}",
}


def _index_words(mask: SymbolicMask, task=None) -> str:
    """`` and every order (rank: …)`` for each index tensor the statement quantifies over."""
    words = []
    for index in mask.indexes:
        prop = getattr(index, "prop", None)
        if prop in INDEX_WORDS and INDEX_WORDS[prop].format(name=index.name) not in words:
            words.append(INDEX_WORDS[prop].format(name=index.name))
    if task is not None and getattr(task, "name", "").startswith(("mlm", "bad_mlm")) and "masked=" not in task.name:
        words.append("every set of masked positions")
    return "".join(f" and {w}" for w in words)


def _statement(mask: SymbolicMask, params: dict, conditions: list, text: str, task=None) -> str:
    every = _index_words(mask, task)
    if mask.statement and [str(c) for c in conditions] == [str(c) for c in mask.conditions] \
            and set(params) == set(mask.params):
        return f"{_with(mask.statement, every)}: {text}"  # the mask's own words (its catalogue names the parameters)
    if z3.is_int_value(mask.n):
        head = describe_conditions(z3.Int("n"), params, conditions).replace("for all n and all ", "for all ")
        head = head.replace("for all n", f"at n = {mask.n}") if not params else head
        return f"{_with(head, every)}: {text}"
    return f"{_with(describe_conditions(mask.n, params, conditions), every)}: {text}"


def _with(head: str, every: str) -> str:
    """``every`` inserted before the side conditions' ``with …`` clause (or at the end)."""
    if not every:
        return head
    before, sep, after = head.partition(" with ")
    return f"{before}{every}{sep}{after}"


def _ptext(params: dict) -> str:
    return "".join(f", {p} = {v}" for p, v in params.items())


def _uncertain(cx: dict, note: str) -> str:
    """"" when the minimisation finished; else the label for the reason, and ``cx["smallest"] = False``."""
    if not note:
        return ""
    cx["smallest"] = False
    return f" (an n; smaller may exist: {note})"


EMPTY_ROWS_NOTE = " (a query attending no key reads as attending only itself: --empty-rows attend-none)"


_INNER: list = []  # non-empty while a claim runs inside another (_earlier, _walks_below): no statement words


@contextlib.contextmanager
def _inner():
    _INNER.append(True)
    try:
        yield
    finally:
        _INNER.pop()


def _empty_rows_note(mask: SymbolicMask, conds: list, timeout) -> str:
    """"" when no query of the mask attends no key (proved), else :data:`EMPTY_ROWS_NOTE` for the statement.

    The claims read ``M`` as given; the concrete engine's default reads an empty row as
    attending every key (``theory.empty_rows``). When rows may be empty the statement
    says which reading it is about. The diagonal first (no quantifier), then ``∃q ∀k ¬M``.
    """
    if _INNER:  # a claim asked inside another (a bound n <= m): its statement is not shown
        return ""
    q, k = z3.Ints("q_empty k_empty")
    status, _, _, _ = _solve(conds + [mask.inside(q)] + mask.facts([(q, q)]) + [z3.Not(mask.allowed(q, q))],
                             timeout)
    if status == UNSAT:
        return ""
    row_empty = z3.ForAll([k], z3.Implies(mask.inside(k), z3.Not(mask.allowed(q, k))))
    status, _, _, _ = _solve(conds + [mask.inside(q), row_empty], timeout)
    return "" if status == UNSAT else EMPTY_ROWS_NOTE

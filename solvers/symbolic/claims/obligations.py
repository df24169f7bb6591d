"""What a program needs to run (its obligations), checked on the whole domain before any claim.

An obligation that fails somewhere is a failure of the program there: the claim about the
mask is refuted at the smallest such ``n`` (:func:`check_obligations`), unless the claim's
own counterexample comes at a smaller ``n`` (:func:`_earlier`); an invariant that fails
proves nothing (:func:`_invariant_fails`, :func:`_invariant_domain`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Callable

import z3

from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.solvers.symbolic.claims.solve import _params_of, _solve, _value, smallest_model
from hasse.solvers.symbolic.claims.statement import _inner, _ptext, _uncertain
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, SymbolicVerdict, _label
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.recheck import lists_from_model
from hasse.solvers.symbolic.terms import free_constants as _constants
from hasse.theory.errors import InputError
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN, disagreement, not_rechecked


@dataclass
class Failure:
    """Where a program cannot run (an obligation fails there), or why that was not decided."""

    verdict: str  # REFUTED: it fails at the counterexample; UNKNOWN: an obligation was not decided
    reason: str
    counterexample: dict | None = None  # {"n", "params", "pair": [q, k], "failure": why, "program": name}
    recheck: str | None = None

    def as_verdict(self, claim: str, statement: str, start: float) -> SymbolicVerdict:
        return SymbolicVerdict(claim, self.verdict, statement, time.perf_counter() - start, self.counterexample,
                               self.recheck, self.reason)


def check_obligations(mask: SymbolicMask, conds: list, timeout: float | None = DEFAULT_TIMEOUT,
                      params: dict | None = None) -> Failure | None:
    """None when every obligation of ``mask`` holds on the whole domain; else the failure with the smallest n.

    An obligation (``Tracer.oblige``: a divisor never 0, a Python int that fits int64, a
    lookup inside its tensor, a shift count) is what the program needs to run; where it
    fails, torch raises. The domain is ``conds`` (the claim's side conditions, with the
    ranges of b and h where they are parameters) and every pair ``(q, k)`` of positions
    inside ``0 … size − 1``. ``sat`` → :data:`REFUTED` at the smallest ``n`` (then the
    parameters in name order, then ``q``, then ``k``): "the program fails: <why> at n = N,
    pair (q, k)", re-checked by running the program there (:func:`_recheck_failure`);
    ``unknown`` → :data:`UNKNOWN` naming the obligation; ``unsat`` → None: the obligations
    are theorems on the domain, and no query needs them as hypotheses.
    ``params`` (default the mask's) are the symbols the counterexample reports.

    >>> n = z3.Int("n")
    >>> m = SymbolicMask("m", n, n, {}, z3.BoolVal(True), conditions=[n >= 1])
    >>> m.obligations = [(z3.Int("k0") != 3, "m.py:2: the divisor is 0")]
    >>> f = check_obligations(m, m.conditions)
    >>> f.verdict, f.counterexample["n"], f.counterexample["pair"]
    ('refuted', 4, [0, 3])
    >>> m.obligations = [(z3.Int("k0") < n, "inside")]
    >>> check_obligations(m, m.conditions) is None
    True
    """
    if not mask.obligations:
        return None
    params = _params_of(mask) if params is None else params
    q, k = z3.Ints("q_fails k_fails")
    base = list(conds) + mask.facts([(q, k)])
    # an obligation on positions fails at a pair inside the grid; one on n and the parameters alone (a factory
    # of n that raises, positions(n) < 1: solvers.symbolic.catalog.factory) fails there even if the grid is empty
    fails = [z3.And(mask.inside(q, k), z3.Not(z3.substitute(ob, (mask.q, q), (mask.k, k)))) if _on_positions(ob, mask)
             else z3.And(q == 0, k == 0, z3.Not(ob)) for ob, _why in mask.obligations]
    query = base + [z3.Or(fails)]
    status, model, reason, _ = _solve(query, timeout)
    if status == UNSAT:
        return None
    if status != SAT:  # one at a time: a smaller query may be decided, and an undecided one is named
        for (_ob, why), fail in zip(mask.obligations, fails):
            status, model, reason, _ = _solve(base + [fail], timeout)
            if status == SAT:
                query = base + [fail]
                break
            if status != UNSAT:
                return Failure(UNKNOWN, f"{mask.name}: whether the program can run is not decided ({why}: "
                                        f"the solver said {reason or status})")
        else:
            return None
    model, note = smallest_model(query, mask.n, params, timeout, model)
    n = _value(model, mask.n)
    values = {p: _value(model, t) for p, t in sorted(params.items())}
    fixed = query + [mask.n == n] + [t == values[p] for p, t in params.items()]
    model, pair_note = smallest_model(fixed, q, {"k": k}, timeout, model)  # the first pair in row order
    pq, pk = _value(model, q), _value(model, k)
    why = next((w for (_ob, w), fail in zip(mask.obligations, fails)
                if z3.is_true(model.eval(fail, model_completion=True))), mask.obligations[0][1])
    cx = {"n": n, "params": values, "pair": [pq, pk], "failure": why, "program": mask.name}
    if mask.indexes:  # the model's index tensors (completed to their property): the re-check runs the program on them
        cx["lists"] = lists_from_model([mask], model, n, [(pq, pk)])
    heads = [x for x in _constants(z3.And([ob for ob, _ in mask.obligations])) if str(x) == "h0"]
    if heads:  # the union over heads: the head whose program fails there
        cx["head"] = _value(model, heads[0])
    at = f", head {cx['head']}" if "head" in cx else ""
    reason = f"the program fails: {why} at n = {n}{_ptext(values)}, pair ({pq}, {pk}){at} (torch raises there)" + \
        _uncertain(cx, note or pair_note)
    return Failure(REFUTED, reason, cx, _recheck_failure(mask, cx))


def _on_positions(ob, mask: SymbolicMask) -> bool:
    """Whether the obligation ``ob`` names a position (``q0``, ``k0``, ``b0``, ``h0``): then it is checked on the grid."""
    names = {str(mask.q), str(mask.k), "b0", "h0"}
    return any(str(c) in names for c in _constants(ob))


def _recheck_failure(mask: SymbolicMask, cx: dict) -> str:
    """Run the user's program at the failing pair (``SymbolicMask.program``): it must raise there."""
    program = getattr(mask, "program", None)
    if program is None:
        return not_rechecked("no program to run (a failure is a property of the program, not of its formula)")
    n, params, (q, k) = cx["n"], cx["params"], cx["pair"]
    try:
        program.sample(n, params, [q], [k], cx.get("lists") or None)
    except Exception as exc:  # the program raising is the expected outcome here
        text = " ".join(str(exc).split())[:200]
        return f"confirmed: the program raises at n = {n}{_ptext(params)}, pair ({q}, {k}) " \
               f"({type(exc).__name__}{': ' + text if text else ''})"
    return disagreement(f"the obligation {cx['failure']!r} fails at n = {n}{_ptext(params)}, pair ({q}, {k}), "
           "but the program runs there without raising")


def _check_domain(*masks: SymbolicMask) -> None:
    """Refuse a side condition on a position (``require_positive(name, q_idx)``): it would shrink the pairs.

    The side conditions bound ``n`` and the parameters; a check the program makes on ``q``,
    ``kv``, ``b`` or ``h`` (a symbolic parameter excepted) cannot run on index tensors in
    torch, and as a side condition it would drop the positions it rules out from the claim.
    """
    for mask in masks:
        placeholders = {str(mask.q), str(mask.k), "b0", "h0"} - {str(t) for t in mask.params.values()}
        for c in mask.conditions:
            names = {str(x) for x in _constants(c)}
            if names & placeholders:
                raise InputError(f"{mask.name}: the program checks a position ({z3.simplify(c)}); torch cannot run "
                                 "that check on index tensors, and as a side condition it would drop the positions "
                                 "it rules out from the claim")


def _failing(claim: str, statement: str, start: float, timeout, checks) -> SymbolicVerdict | None:
    """The first program among ``checks`` (``(mask, conds, params)``) that fails or is undecided, as the verdict."""
    for mask, conds, params in checks:
        _check_domain(mask)
        failure = check_obligations(mask, conds, timeout, params)
        if failure is not None:
            return failure.as_verdict(claim, statement, start)
    return None


def _earlier(failed: SymbolicVerdict, n, rerun: Callable, walks: Callable | None = None) -> SymbolicVerdict:
    """The program's failure at ``N``, or the claim's own counterexample at a smaller ``n`` where the program runs.

    Below ``N`` every obligation holds, so the claim is decided there as usual (``rerun([n <= N − 1])``):
    refuted → that counterexample (the smaller n); proved → the failure is the smallest; else (unknown,
    e.g. an invariant that fails) ``walks(N)`` (:func:`_walks_below`, every depth) may still find one, and
    where nothing decides it the failure is labelled "an n; smaller may exist".
    """
    start = time.perf_counter()
    out = _earlier_body(failed, n, rerun, walks)
    return out if out is failed else dataclasses.replace(out, seconds=failed.seconds + time.perf_counter() - start)


def _earlier_body(failed: SymbolicVerdict, n, rerun: Callable, walks: Callable | None) -> SymbolicVerdict:
    cx = failed.counterexample or {}
    top = cx.get("n")
    if failed.verdict != REFUTED or not isinstance(top, int) or z3.is_int_value(n) or top <= 1:
        return failed
    with _inner():
        below = rerun([n <= top - 1])
    if below.verdict == REFUTED:
        return dataclasses.replace(below, statement=failed.statement, reason=f"{below.reason} (below n = {top}, where the program fails: "
                                          f"{cx.get('failure')})")
    if below.verdict == PROVED:
        return failed
    with _inner():
        found = walks(top) if walks is not None else None
    if found is not None:
        v, how, why = found
        if v is not None:
            return dataclasses.replace(v, statement=failed.statement,
                                       reason=f"{v.reason} ({how}; below n = {top}, where the program fails: "
                                              f"{cx.get('failure')})")
        if not why:
            return failed
        return _label(failed, f"below n = {top}: {why}")
    return _label(failed, f"below n = {top} the claim was not decided: {below.reason}")


def _invariant_fails(inv: SymbolicMask, conds: list, timeout, params: dict) -> str:
    """"" when the invariant's program runs on the whole domain; else why it proves nothing (an unknown's reason)."""
    _check_domain(inv)
    failure = check_obligations(inv, conds, timeout, params)
    if failure is None:
        return ""
    if failure.verdict == REFUTED:
        return f"invariant {inv.name}: (0) fails: the invariant's program cannot run everywhere ({failure.reason}); " \
               "an invariant that fails proves nothing"
    return f"invariant {inv.name}: (0) {failure.reason}"


def _invariant_domain(inv: SymbolicMask, conds: list, timeout) -> str:
    """"" when the invariant's side conditions hold wherever the claim's do; else why the invariant proves nothing.

    An invariant must not narrow the claim: its own conditions (a program check such as
    ``require_positive``) are not added to the statement, they must follow from it.
    """
    own = [c for c in inv.conditions if not any(str(c) == str(x) for x in conds)]
    if not own:
        return ""
    status, model, reason, _ = _solve(list(conds) + [z3.Not(z3.And(own))], timeout)
    if status == UNSAT:
        return ""
    if status == SAT:
        n = _value(model, inv.n)
        return f"invariant {inv.name}: (0) fails: its side conditions exclude values the claim is about (e.g. " \
               f"n = {n}); an invariant that fails proves nothing"
    return f"invariant {inv.name}: (0) its side conditions against the claim's: the solver said {reason or status}"

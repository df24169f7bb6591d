"""Claims about a symbolic mask or task for every sample length ``n``, each proved or refuted in Z3.

Every claim first checks that each program it reads (the mask, the second mask of an
equivalence, the invariant) can run on the whole domain (:func:`check_obligations`): a
divisor that can be 0, a lookup out of range, … at some ``(n, params, q, k)`` is a failure
of the program there — the claim about the mask is **refuted** at the smallest such ``n``
("the program fails: …"), an invariant that fails proves nothing (**unknown**) — never a
hypothesis that drops those pairs. Then the claim is checked by negation: the hypotheses
(the side conditions of the mask and task, the positions inside ``0 … size − 1``, the
axioms of the index tensors at every place the mask is read) and the *negated* claim go
to one solver. ``unsat`` → **proved** for every ``n`` (and
every value of the symbolic parameters) satisfying the side conditions; ``sat`` →
**refuted**; ``unknown`` / timeout → **unknown**, never "proved".

The claims (each returns a :class:`SymbolicVerdict`):

- :func:`prove_dense` — ``M or I`` is transitive: there are no ``a, b, c`` with
  ``A(c, b)``, ``A(b, a)`` and not ``A(c, a)`` (``A = M or I``, :meth:`SymbolicMask.attends`).
  The limit of the residual stack is then ``M or I`` itself (design.md §3).
- :func:`prove_leak_free` — with ``layers=L``: no walk ``j = p_0 → p_1 → … → p_L = p`` with
  ``A(p_{i+1}, p_i)`` (a stutter ``p_{i+1} = p_i`` is a hop through the residual, so this is
  every walk of *at most* ``L`` hops) from a position ``j`` holding ``t`` to a position ``p``
  predicting ``t``; the intermediate positions are existential. With ``invariant=R`` (every
  depth): three conditions, each checked, never assumed — (1) ``A ⊆ R'``, (2) ``R'`` is
  transitive, (3) no ``(p, j, t)`` with ``predicts(p, t)``, ``holds(j, t)``, ``R'(p, j)``,
  where ``R' = R or I``. (1) and (2) make the transitive closure of ``A`` (the limit)
  a subset of ``R'``; (3) then rules out every leak at every depth. An invariant that
  fails (1) or (2) or (3) gives **unknown** (the invariant was not good enough, which
  refutes nothing), with the failing condition and its witness in ``reason``.
- :func:`prove_isolation` — no position of one group depends on a position of another
  (groups ``>= 0``; a negative group is none): by walks of ``L`` hops, or by an invariant
  as above with (3) replaced by "no ``p, k`` of different groups with ``R'(p, k)``".
- :func:`check_equivalence` — two masks have the same size and the same pairs ``M[q, k]``
  for every ``n``; else the smallest ``n`` with a differing pair.
- :func:`known_invariant` — an invariant that needs no user: the mask itself when it is
  dense (:func:`prove_dense`), else the causal order ``k <= q`` when the mask is inside it
  (proved, not assumed); None otherwise.

When a claim is refuted, :func:`smallest_model` finds the smallest ``n`` (then the smallest
value of each symbolic parameter, in name order) with a counterexample, by bisection on
``n <= mid`` until unsat, and the counterexample is **re-checked** with the concrete engine
at those values (:meth:`SymbolicMask.concrete` and :func:`theory.order.mask_to_order` for
density and equivalence, ``task.concrete`` and :func:`theory.leak.find_leaks` for leaks and
isolation). ``recheck`` is ``"confirmed"`` or a loud ``"DISAGREES: …"``; never dropped.
The concrete leak engine is run with ``empty_rows="attend-none"``: the symbolic claims read
the mask as given (a query with no key attends nothing but itself).

A proved verdict is re-checked too, at the small instances of the side conditions
(``n <= recheck_upto``): the concrete engine must find nothing there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import z3

from hasse.solvers.symbolic.invariants import catalogue_invariant
from hasse.solvers.symbolic.terms import free_constants as _constants
from hasse.solvers.symbolic.mask import SymbolicMask, describe_conditions
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.smt.prove import SAT, UNSAT, check
from hasse.theory.errors import InputError
from hasse.theory.limits import MAX_WALK_LAYERS, number_text
from hasse.theory.verdicts import EXIT_CODES, NOT_RECHECKED, PROVED, REFUTED, UNKNOWN, disagreement, disagrees

DEFAULT_TIMEOUT = 30.0  # seconds per solver call
RECHECK_UPTO = 12  # a proved claim is re-checked on the programs at the re-check's instances with n <= this


@dataclass
class SymbolicVerdict:
    """What one all-n claim came to."""

    claim: str  # the claim's name: "dense", "leak-free", "isolation", "equivalent"
    verdict: str  # proved | refuted | unknown
    statement: str  # exactly what was proved (or refuted): "for all 1 <= n <= 2^31 and all 1 <= w <= 2^31: M or I is transitive"
    seconds: float = 0.0
    counterexample: dict | None = None  # refuted: n, params, positions, path, …
    recheck: str | None = None  # "confirmed", "confirmed at n = 1…6", or "DISAGREES: …"
    reason: str = ""  # unknown: why; refuted: what the counterexample shows; proved: how

    @property
    def exit_code(self) -> int:
        """0 proved, 1 refuted, 3 unknown; 1 whenever the concrete re-check disagrees (a bug of the kit);
        3 for a proof whose re-check could not run its program ("not re-checked": not confirmed)."""
        if self.disagrees:
            return 1
        if self.verdict == PROVED and (self.recheck or "").startswith(NOT_RECHECKED):
            return 3
        return EXIT_CODES[self.verdict]

    @property
    def disagrees(self) -> bool:
        """Whether the concrete re-check contradicts the verdict (:class:`theory.verdicts.Recheck`'s outcome)."""
        return disagrees(self.recheck)

    def to_json(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------- solving


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


# ---------------------------------------------------------------- obligations: what the program needs to run


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
    base = list(conds) + [mask.inside(q, k)] + mask.facts([(q, k)])
    fails = [z3.Not(z3.substitute(ob, (mask.q, q), (mask.k, k))) for ob, _why in mask.obligations]
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
        from hasse.solvers.symbolic.recheck import lists_from_model

        cx["lists"] = lists_from_model([mask], model, n, [(pq, pk)])
    heads = [x for x in _constants(z3.And([ob for ob, _ in mask.obligations])) if str(x) == "h0"]
    if heads:  # the union over heads: the head whose program fails there
        cx["head"] = _value(model, heads[0])
    at = f", head {cx['head']}" if "head" in cx else ""
    reason = f"the program fails: {why} at n = {n}{_ptext(values)}, pair ({pq}, {pk}){at} (torch raises there)" + \
        _uncertain(cx, note or pair_note)
    return Failure(REFUTED, reason, cx, _recheck_failure(mask, cx))


def _recheck_failure(mask: SymbolicMask, cx: dict) -> str:
    """Run the user's program at the failing pair (``SymbolicMask.program``): it must raise there."""
    program = getattr(mask, "program", None)
    if program is None:
        return "not re-checked: no program to run (a failure is a property of the program, not of its formula)"
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


def _uncertain(cx: dict, note: str) -> str:
    """"" when the minimisation finished; else the label for the reason, and ``cx["smallest"] = False``."""
    if not note:
        return ""
    cx["smallest"] = False
    return f" (an n; smaller may exist: {note})"


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


# ---------------------------------------------------------------- claims on a mask


def _positions(prefix: str, count: int) -> list:
    return [z3.Int(f"{prefix}{i}") for i in range(count)]


def _values(model, mask_or_masks, extra_params: dict | None = None) -> tuple[int, dict]:
    masks = mask_or_masks if isinstance(mask_or_masks, (list, tuple)) else [mask_or_masks]
    params = _params_of(*masks)
    params.update(extra_params or {})
    n = _value(model, masks[0].n)
    return n, {p: _value(model, t) for p, t in sorted(params.items())}


def prove_dense(mask: SymbolicMask, *, timeout: float | None = DEFAULT_TIMEOUT, assume: Sequence = (),
                recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """``M or I`` is transitive for every ``n``: unsat of ``A(c, b) ∧ A(b, a) ∧ ¬A(c, a)`` (module docstring)."""
    start = time.perf_counter()
    a, b, c = _positions("a", 3)
    conds = _conditions_of(mask, extra=assume)
    statement = _statement(mask, mask.params, conds, "M or I is transitive")
    failed = _failing("dense", statement, start, timeout, [(mask, conds, mask.params)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: prove_dense(mask, timeout=timeout, assume=[*assume, *below],
                                                                  recheck_upto=0))
    query = conds + [mask.inside(a, b, c)] + mask.facts([(c, b), (b, a), (c, a)]) + \
        [mask.attends(c, b), mask.attends(b, a), z3.Not(mask.attends(c, a))]
    status, model, reason, _ = _solve(query, timeout)
    if status == UNSAT:
        recheck = _recheck_small(mask, conds, recheck_upto, lambda n, ps: _concrete_dense(mask, n, ps, None))
        return SymbolicVerdict("dense", PROVED, statement, time.perf_counter() - start, None, recheck,
                               "no a, b, c with c -> b -> a and not c -> a")
    if status != SAT:
        return SymbolicVerdict("dense", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"the solver said {reason or status}")
    model, note = smallest_model(query, mask.n, mask.params, timeout, model)
    n, params = _values(model, mask)
    pa, pb, pc = (_value(model, x) for x in (a, b, c))
    cx = {"n": n, "params": params, "positions": [pa, pb, pc], "path": [pa, pb, pc],
          "missing": [pc, pa], "size": mask.size_at(n, **params)}
    recheck = _concrete_dense(mask, n, params, (pa, pb, pc),
                              _model_lists([mask], model, n, [(pc, pb), (pb, pa), (pc, pa)]))
    return SymbolicVerdict("dense", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                           f"at n = {n}{_ptext(params)}: {pc} attends {pb}, {pb} attends {pa}, "
                           f"but {pc} does not attend {pa}" + _uncertain(cx, note))


def check_equivalence(mask_a: SymbolicMask, mask_b: SymbolicMask, *, timeout: float | None = DEFAULT_TIMEOUT,
                      assume: Sequence = (), recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """The two masks have the same size and the same pairs for every ``n`` (else the smallest differing ``n``).

    Both masks must be over the same ``n`` (and parameters of the same name are the same
    parameter); ``assume`` ties others (``z3.Int("d") == z3.Int("w") - 1``).
    """
    start = time.perf_counter()
    q, k = z3.Ints("q k")
    conds = _conditions_of(mask_a, mask_b, extra=assume)
    params = _params_of(mask_a, mask_b)
    statement = _statement(mask_a, params, conds, f"{mask_a.name} and {mask_b.name} allow the same pairs")
    failed = _failing("equivalent", statement, start, timeout, [(mask_a, conds, params), (mask_b, conds, params)])
    if failed is not None:
        return _earlier(failed, mask_a.n, lambda below: check_equivalence(
            mask_a, mask_b, timeout=timeout, assume=[*assume, *below], recheck_upto=0))
    base = conds + mask_a.facts([(q, k)]) + mask_b.facts([(q, k)])
    size_query = conds + [mask_a.size != mask_b.size]
    status, model, reason, _ = _solve(size_query, timeout)
    if status == SAT:
        model, note = smallest_model(size_query, mask_a.n, params, timeout, model)
        n, ps = _values(model, [mask_a, mask_b])
        sa, sb = mask_a.size_at(n, **ps), mask_b.size_at(n, **ps)
        cx = {"n": n, "params": ps, "sizes": [sa, sb]}
        return SymbolicVerdict("equivalent", REFUTED, statement, time.perf_counter() - start, cx,
                               _concrete_sizes(mask_a, mask_b, n, ps),
                               f"at n = {n}{_ptext(ps)} the sizes differ: {sa} and {sb}"
                               + _uncertain(cx, note))
    if status != UNSAT:
        return SymbolicVerdict("equivalent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"comparing the sizes, the solver said {reason or status}")
    query = base + [mask_a.inside(q, k), mask_a.allowed(q, k) != mask_b.allowed(q, k)]
    status, model, reason, _ = _solve(query, timeout)
    if status == UNSAT:
        recheck = _recheck_small(mask_a, conds, recheck_upto,
                                 lambda n, ps: _concrete_equal(mask_a, mask_b, n, ps, None), params,
                                 masks=[mask_a, mask_b], on_plan=lambda pl: _equal_on_plan(mask_a, mask_b, pl))
        return SymbolicVerdict("equivalent", PROVED, statement, time.perf_counter() - start, None, recheck,
                               "same size and no pair (q, k) allowed by one and not the other")
    if status != SAT:
        return SymbolicVerdict("equivalent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"the solver said {reason or status}")
    model, note = smallest_model(query, mask_a.n, params, timeout, model)
    n, ps = _values(model, [mask_a, mask_b])
    pq, pk = _value(model, q), _value(model, k)
    in_a = z3.is_true(model.eval(mask_a.allowed(pq, pk), model_completion=True))
    cx = {"n": n, "params": ps, "positions": [pq, pk], "pair": [pq, pk],
          "allowed_by": mask_a.name if in_a else mask_b.name}
    recheck = _concrete_equal(mask_a, mask_b, n, ps, (pq, pk),
                              _model_lists([mask_a, mask_b], model, n, [(pq, pk)]))
    return SymbolicVerdict("equivalent", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                           f"at n = {n}{_ptext(ps)}: M[{pq}, {pk}] is allowed by {cx['allowed_by']} only"
                           + _uncertain(cx, note))


def causal_order(mask: SymbolicMask) -> SymbolicMask:
    """``k <= q`` over the positions, size, parameters and conditions of ``mask`` (a candidate invariant)."""
    return SymbolicMask(f"causal order of {mask.name}", mask.n, mask.size, dict(mask.params), mask.k <= mask.q,
                        mask.q, mask.k, list(mask.conditions), [], [], mask.streams, mask.statement)


def known_invariant(subject: SymbolicMask | SymbolicTask, *,
                    timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicMask | None:
    """The invariant that needs no user: for a task, the catalogue's (:func:`invariants.catalogue_invariant`),
    else its mask's; for a mask, the mask itself when dense, else the causal order when ``M ⊆ {k <= q}``
    (both proved here); else None.

    The mask's covers the catalogue's dense masks (causal, bidirectional, block-causal,
    prefix-LM, document masks) and every causal one (sliding windows, chunked, recurrent).
    The claims that use the result check its conditions again.
    """
    if isinstance(subject, SymbolicTask):
        inv = catalogue_invariant(subject)
        return inv if inv is not None else known_invariant(subject.mask, timeout=timeout)
    mask = subject
    if prove_dense(mask, timeout=timeout, recheck_upto=0).verdict == PROVED:
        return mask
    q, k = z3.Ints("q k")
    query = list(mask.conditions) + mask.facts([(q, k)]) + [mask.inside(q, k), mask.allowed(q, k), k > q]
    status, _, _, _ = _solve(query, timeout)
    return causal_order(mask) if status == UNSAT else None


# ---------------------------------------------------------------- invariants


def _check_invariant(mask: SymbolicMask, inv: SymbolicMask, conds: list, timeout) -> tuple[str, str, dict | None]:
    """Conditions (1) ``A ⊆ R'`` and (2) ``R'`` transitive: ("ok", "", None) or (status, reason, witness)."""
    q, k = z3.Ints("q k")
    status, model, reason, _ = _solve(conds + [mask.size != inv.size], timeout)
    if status != UNSAT:
        return status, ("the invariant's size differs from the mask's" if status == SAT
                        else f"comparing sizes, the solver said {reason or status}"), None
    query = conds + [mask.inside(q, k)] + mask.facts([(q, k)]) + inv.facts([(q, k)]) + \
        [mask.attends(q, k), z3.Not(inv.attends(q, k))]
    status, model, reason, _ = _solve(query, timeout)
    if status != UNSAT:
        if status == SAT:
            n, ps = _values(model, [mask, inv])
            w = {"n": n, "params": ps, "pair": [_value(model, q), _value(model, k)]}
            return SAT, f"(1) fails: M or I is not inside the invariant (at n = {n}{_ptext(ps)}, " \
                        f"{w['pair'][0]} attends {w['pair'][1]})", w
        return status, f"(1) M or I inside the invariant: the solver said {reason or status}", None
    a, b, c = _positions("a", 3)
    query = conds + [inv.inside(a, b, c)] + inv.facts([(c, b), (b, a), (c, a)]) + \
        [inv.attends(c, b), inv.attends(b, a), z3.Not(inv.attends(c, a))]
    status, model, reason, _ = _solve(query, timeout)
    if status != UNSAT:
        if status == SAT:
            n, ps = _values(model, [mask, inv])
            w = {"n": n, "params": ps, "path": [_value(model, x) for x in (a, b, c)]}
            return SAT, f"(2) fails: the invariant is not transitive (at n = {n}{_ptext(ps)}, path {w['path']})", w
        return status, f"(2) the invariant is transitive: the solver said {reason or status}", None
    return "ok", "", None


def _resolve_invariant(mask, invariant, timeout, task: SymbolicTask | None = None):
    """The invariant given, else :func:`known_invariant` of the task (or of the mask without one)."""
    if invariant is None or invariant == "auto":
        inv = known_invariant(task if task is not None else mask, timeout=timeout)
        return inv, ("no known invariant for this mask (give layers= or invariant=)" if inv is None else "")
    return invariant, ""


# ---------------------------------------------------------------- claims on a task


def _walk(mask: SymbolicMask, layers: int, prefix: str) -> tuple[list, list, list]:
    """Positions ``p_0 … p_L``, hop constraints ``A(p_{i+1}, p_i)`` and the facts of those reads.

    At most :data:`theory.limits.MAX_WALK_LAYERS` hops are encoded (one copy of the mask per
    hop); a longer walk is refused here, after a transitive ``M or I`` shortened it to one.
    """
    if layers > MAX_WALK_LAYERS:
        raise InputError(f"layers = {number_text(layers)}: a walk of more than {MAX_WALK_LAYERS} hops is not "
                         "encoded (one copy of the mask per hop, and M or I is not transitive here, so walks do not "
                         "shorten); leave layers out for the claim at every depth (an invariant covers every L)")
    ps = _positions(prefix, layers + 1)
    pairs = [(ps[i + 1], ps[i]) for i in range(layers)]
    # stutters (hops through the residual) first: every walk of at most L hops has this form,
    # and the solver need not try each place a shorter walk could pause
    first = [z3.Implies(ps[i] == ps[i + 1], ps[i - 1] == ps[i]) for i in range(1, layers)]
    return ps, [mask.attends(x, y) for x, y in pairs] + first, mask.facts(pairs + _task_pairs(ps))


def _hops(mask: SymbolicMask, layers: int, timeout, assume: Sequence = ()) -> tuple[int, str]:
    """The walk length to search: 1 when ``M or I`` is transitive (proved; a walk then shortens to one hop), else L."""
    if layers <= 1 or prove_dense(mask, timeout=timeout, assume=assume, recheck_upto=0).verdict != PROVED:
        return layers, ""
    return 1, f" (M or I is transitive, so every walk of at most {layers} hops is one hop)"


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


def _task_pairs(positions) -> list:
    """Pairs whose facts a task's ``holds``/``predicts``/``group`` at these positions may need.

    A task's lookups in an index tensor (``doc(p + 1)``) are among the mask's lookups at
    ``(p, p)`` (:mod:`solvers.symbolic.tasks`), so each position is read on the diagonal too,
    and the first against the last. Extra instances of true axioms are sound.
    """
    return [(x, x) for x in positions] + ([(positions[-1], positions[0])] if len(positions) > 1 else [])


def _path(model, ps) -> list[int]:
    out: list[int] = []
    for x in ps:
        v = _value(model, x)
        if not out or out[-1] != v:
            out.append(v)
    return out


def prove_leak_free(task: SymbolicTask, *, layers: int | None = None, invariant=None,
                    timeout: float | None = DEFAULT_TIMEOUT, assume: Sequence = (),
                    recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """No position predicts a token it can see: within ``layers`` hops (walks), or at every depth (an invariant).

    ``invariant``: a :class:`SymbolicMask` over the same ``n``, or None / "auto" for
    :func:`known_invariant` (module docstring: the three conditions).
    """
    start = time.perf_counter()
    mask = task.mask
    tparams = _task_params(task, assume)
    conds = _conditions_of(mask, extra=list(task.conditions) + list(assume))
    depth = f"within {layers} layers" if layers is not None else "at any depth"
    failed = _failing("leak-free", _statement(mask, tparams, conds, f"no position predicts a token it sees {depth}",
                                              task=task), start, timeout, [(mask, conds, tparams)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: prove_leak_free(
            task, layers=layers, invariant=invariant, timeout=timeout, assume=[*assume, *below], recheck_upto=0),
            lambda n0: _walks_below(prove_leak_free, task, n0, timeout, assume) if layers is None else None)
    empty = _empty_rows_note(mask, conds, timeout)
    t = z3.Int("t")
    if layers is not None:
        statement = _statement(mask, tparams, conds,
                               f"no position predicts a token it sees within {layers} layers{empty}", task=task)
        searched, why = _hops(mask, layers, timeout, assume)
        ps, hops, facts = _walk(mask, searched, "p")
        query = conds + [mask.inside(*ps), t >= 0, t < mask.n] + hops + facts + \
            [task.holds(ps[0], t), task.predicts(ps[-1], t)]
        status, model, reason, _ = _solve(query, timeout)
        if status == UNSAT:
            recheck = _recheck_small(mask, conds, recheck_upto, 
                                     lambda n, p: _concrete_leak(task, n, p, layers, None), tparams)
            return SymbolicVerdict("leak-free", PROVED, statement, time.perf_counter() - start, None, recheck,
                                   f"no walk of at most {layers} hops from a holder of t to a predictor of t{why}")
        if status != SAT:
            return SymbolicVerdict("leak-free", UNKNOWN, statement, time.perf_counter() - start, None, None,
                                   f"the solver said {reason or status}")
        model, note = smallest_model(query, mask.n, tparams, timeout, model)
        n, params = _values(model, mask, tparams)
        path, tv = _path(model, ps), _value(model, t)
        cx = {"n": n, "params": params, "position": path[-1], "target": tv, "source": path[0], "path": path,
              "depth": len(path) - 1, "positions": path}
        recheck = _concrete_leak(task, n, params, layers, (path[-1], tv), _lists(task, model, n, path))
        return SymbolicVerdict("leak-free", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                               f"at n = {n}{_ptext(params)}: position {path[-1]} predicts token {tv}, held by "
                               f"{path[0]}, along {' -> '.join(map(str, path))}" + _uncertain(cx, note))
    statement = _statement(mask, tparams, conds, f"no position predicts a token it sees, at any depth{empty}", task=task)
    inv, why = _resolve_invariant(mask, invariant, timeout, task)
    if inv is None:
        return SymbolicVerdict("leak-free", UNKNOWN, statement, time.perf_counter() - start, None, None, why)
    why = _invariant_domain(inv, conds, timeout) or _invariant_fails(inv, conds, timeout, {**tparams, **_params_of(inv)})
    if why:
        return SymbolicVerdict("leak-free", UNKNOWN, statement, time.perf_counter() - start, None, None, why)
    conds = _conditions_of(mask, inv, extra=list(task.conditions) + list(assume))
    statement = _statement(mask, {**tparams, **_params_of(mask, inv)}, conds,
                           f"no position predicts a token it sees, at any depth{empty}", task=task)
    status, why, _w = _check_invariant(mask, inv, conds, timeout)
    if status != "ok":
        return SymbolicVerdict("leak-free", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"invariant {inv.name}: {why}")
    p, j = z3.Ints("p j")
    query = conds + [inv.inside(p, j), t >= 0, t < mask.n] + inv.facts([(p, j)]) + mask.facts(_task_pairs([p, j])) + \
        [task.predicts(p, t), task.holds(j, t), inv.attends(p, j)]
    status, model, reason, _ = _solve(query, timeout)
    if status == UNSAT:
        recheck = _recheck_small(mask, conds, recheck_upto, lambda n, ps: _concrete_leak(task, n, ps, None, None),
                                 {**tparams, **_params_of(mask, inv)}, masks=[mask, inv])
        return SymbolicVerdict("leak-free", PROVED, statement, time.perf_counter() - start, None, recheck,
                               f"invariant {inv.name}: (1) M or I inside it, (2) transitive, (3) no predictor of t "
                               f"reaches a holder of t inside it")
    if status == SAT:
        n, ps = _values(model, [mask, inv], tparams)
        return SymbolicVerdict("leak-free", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"invariant {inv.name}: (3) fails: at n = {n}{_ptext(ps)} position {_value(model, p)} "
                               f"predicts {_value(model, t)}, held by {_value(model, j)}, inside the invariant "
                               f"(try layers= for a real walk)")
    return SymbolicVerdict("leak-free", UNKNOWN, statement, time.perf_counter() - start, None, None,
                           f"invariant {inv.name}: (3): the solver said {reason or status}")


def prove_isolation(task: SymbolicTask, *, layers: int | None = None, invariant=None,
                    timeout: float | None = DEFAULT_TIMEOUT, assume: Sequence = (),
                    recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """No position of one group (``group >= 0``) depends on a position of another: by walks, or an invariant."""
    start = time.perf_counter()
    mask = task.mask
    tparams = _task_params(task, assume)
    conds = _conditions_of(mask, extra=list(task.conditions) + list(assume))
    depth = f"within {layers} layers" if layers is not None else "at any depth"
    failed = _failing("isolation", _statement(mask, tparams, conds, f"no flow between groups {depth}", task=task),
                      start, timeout, [(mask, conds, tparams)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: prove_isolation(
            task, layers=layers, invariant=invariant, timeout=timeout, assume=[*assume, *below], recheck_upto=0),
            lambda n0: _walks_below(prove_isolation, task, n0, timeout, assume) if layers is None else None)
    empty = _empty_rows_note(mask, conds, timeout)
    if task.group is None:
        return SymbolicVerdict("isolation", UNKNOWN, _statement(mask, tparams, conds, "groups are isolated", task=task),
                               0.0, None, None, "the task declares no groups")
    g = task.group

    def apart(x, y):
        return z3.And(g(x) >= 0, g(y) >= 0, g(x) != g(y))

    if layers is not None:
        statement = _statement(mask, tparams, conds, f"no flow between groups within {layers} layers{empty}", task=task)
        searched, why = _hops(mask, layers, timeout, assume)
        ps, hops, facts = _walk(mask, searched, "p")
        query = conds + [mask.inside(*ps)] + hops + facts + [apart(ps[-1], ps[0])]
        status, model, reason, _ = _solve(query, timeout)
        if status == UNSAT:
            recheck = _recheck_small(mask, conds, recheck_upto, 
                                     lambda n, p: _concrete_isolation(task, n, p, layers, None), tparams)
            return SymbolicVerdict("isolation", PROVED, statement, time.perf_counter() - start, None, recheck,
                                   f"no walk of at most {layers} hops between positions of different groups{why}")
        if status != SAT:
            return SymbolicVerdict("isolation", UNKNOWN, statement, time.perf_counter() - start, None, None,
                                   f"the solver said {reason or status}")
        model, note = smallest_model(query, mask.n, tparams, timeout, model)
        n, params = _values(model, mask, tparams)
        path = _path(model, ps)
        cx = {"n": n, "params": params, "position": path[-1], "source": path[0], "path": path,
              "depth": len(path) - 1, "positions": path,
              "groups": [_value(model, g(z3.IntVal(path[0]))), _value(model, g(z3.IntVal(path[-1])))]}
        recheck = _concrete_isolation(task, n, params, layers, (path[-1], path[0]), _lists(task, model, n, path))
        return SymbolicVerdict("isolation", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                               f"at n = {n}{_ptext(params)}: {' -> '.join(map(str, path))} crosses from group "
                               f"{cx['groups'][0]} to group {cx['groups'][1]}" + _uncertain(cx, note))
    statement = _statement(mask, tparams, conds, f"no flow between groups, at any depth{empty}", task=task)
    inv, why = _resolve_invariant(mask, invariant, timeout, task)
    if inv is None:
        return SymbolicVerdict("isolation", UNKNOWN, statement, time.perf_counter() - start, None, None, why)
    why = _invariant_domain(inv, conds, timeout) or _invariant_fails(inv, conds, timeout, {**tparams, **_params_of(inv)})
    if why:
        return SymbolicVerdict("isolation", UNKNOWN, statement, time.perf_counter() - start, None, None, why)
    conds = _conditions_of(mask, inv, extra=list(task.conditions) + list(assume))
    statement = _statement(mask, {**tparams, **_params_of(mask, inv)}, conds,
                           f"no flow between groups, at any depth{empty}", task=task)
    status, why, _w = _check_invariant(mask, inv, conds, timeout)
    if status != "ok":
        return SymbolicVerdict("isolation", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"invariant {inv.name}: {why}")
    p, k = z3.Ints("p k")
    query = conds + [inv.inside(p, k)] + inv.facts([(p, k)]) + mask.facts(_task_pairs([p, k])) + \
        [inv.attends(p, k), apart(p, k)]
    status, model, reason, _ = _solve(query, timeout)
    if status == UNSAT:
        recheck = _recheck_small(mask, conds, recheck_upto, lambda n, ps: _concrete_isolation(task, n, ps, None, None),
                                 {**tparams, **_params_of(mask, inv)}, masks=[mask, inv])
        return SymbolicVerdict("isolation", PROVED, statement, time.perf_counter() - start, None, recheck,
                               f"invariant {inv.name}: (1), (2), and no two positions of different groups inside it")
    if status == SAT:
        n, ps = _values(model, [mask, inv], tparams)
        return SymbolicVerdict("isolation", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"invariant {inv.name}: (3) fails: at n = {n}{_ptext(ps)} positions {_value(model, p)} "
                               f"and {_value(model, k)} of different groups are related (try layers=)")
    return SymbolicVerdict("isolation", UNKNOWN, statement, time.perf_counter() - start, None, None,
                           f"invariant {inv.name}: (3): the solver said {reason or status}")


# ---------------------------------------------------------------- the smallest n over every walk length

CONCRETE_SEARCH_ENTRIES = 300_000  # a concrete search by increasing n reads at most this many mask entries in all


def smallest_refutation(fn: Callable, task: SymbolicTask, walk: SymbolicVerdict, *,
                        timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicVerdict:
    """``walk`` (a refutation by walks of at most K hops) with the smallest ``n`` over every walk length.

    ``fn`` is :func:`prove_leak_free` or :func:`prove_isolation`. The walk's ``n`` is the
    smallest among walks of at most K hops; a longer walk may need fewer positions. At one
    ``n`` a walk of at most ``size − 1`` hops suffices (a shortest walk repeats no position),
    so "a counterexample with ``n <= m``, by walks of ``max size − 1`` hops over ``n <= m``"
    is monotone in ``m`` and its smallest model is the true smallest ``n``:

    1. a concrete search by increasing ``n`` (``task.concrete`` and :func:`theory.leak.find_leaks`
       at every depth), complete where nothing is symbolic but ``n`` (no parameter, index
       tensor or free predicate) and the grids are small (:data:`CONCRETE_SEARCH_ENTRIES`);
       the ``n`` it finds is confirmed by the symbolic walk of its depth;
    2. else the symbolic walks at ``m = 1, 2, 4, …`` (below the walk's ``n``).

    Where neither finishes (more than :data:`theory.limits.MAX_WALK_LAYERS` hops, a solver
    unknown), the walk's counterexample is kept and labelled "an n; smaller may exist"
    (``counterexample["smallest"] = False``); it still refutes.
    """
    start = time.perf_counter()
    out = _smallest_refutation(fn, task, walk, timeout)
    return out if out is walk else dataclasses.replace(out, seconds=walk.seconds + time.perf_counter() - start)


def _smallest_refutation(fn: Callable, task: SymbolicTask, walk: SymbolicVerdict, timeout) -> SymbolicVerdict:
    cx = walk.counterexample or {}
    n0 = cx.get("n")
    if walk.verdict != REFUTED or not isinstance(n0, int) or z3.is_int_value(task.mask.n) or n0 <= 1:
        return walk
    with _inner():
        v, how, why = _walks_below(fn, task, n0, timeout)
    if v is not None:
        return v if v.disagrees else _how(v, how)
    return _label(walk, why) if why else _how(walk, how)


def _walks_below(fn: Callable, task: SymbolicTask, n0: int, timeout, assume: Sequence = ()):
    """The first refutation by walks of any length at ``n < n0``: ``(verdict, how, "")``; none: ``(None, how, "")``;
    not decided: ``(None, "", why)`` (see :func:`smallest_refutation`)."""
    mask = task.mask
    conds = _conditions_of(mask, extra=list(task.conditions) + list(assume))
    found = _concrete_smallest(task, conds, n0, fn is prove_isolation)
    if found == "none":
        return None, f"the smallest n: the concrete search finds nothing at n < {n0} (every depth)", ""
    if found is not None:
        m, depth = found
        v = fn(task, layers=max(1, depth), assume=[*assume, mask.n <= m], timeout=timeout, recheck_upto=0)
        vn = (v.counterexample or {}).get("n")
        if v.verdict == REFUTED and vn == m:
            return v, (f"the smallest n: the concrete search finds nothing at n < {m} (every depth), "
                       f"and this walk of {depth} hops at n = {m}"), ""
        if v.verdict == REFUTED:  # the symbolic walk finds a smaller n than the concrete search: a bug of the kit
            return dataclasses.replace(v, recheck=disagreement(f"the concrete search at every depth finds nothing "
                                                               f"at n = {vn} < {m}, the symbolic walk does")), "", ""
        return None, "", (f"the concrete search finds a leak at n = {m} that the symbolic walk of {depth} hops "
                          f"does not confirm (it says {v.verdict}: {v.reason})")
    m = 1
    while True:
        m = min(m, n0 - 1)
        hops = _walk_length(mask, conds, m, timeout)
        if hops is None:
            return None, "", f"the number of positions at n <= {m} is not bounded by the solver"
        if hops > MAX_WALK_LAYERS:
            return None, "", (f"walks of {hops} hops (every walk at n <= {m}) are more than "
                              f"{MAX_WALK_LAYERS}, the most encoded")
        if hops > 0:
            v = fn(task, layers=hops, assume=[*assume, mask.n <= m], timeout=timeout, recheck_upto=0)
            if v.verdict == REFUTED:
                return v, f"the smallest n: walks of {hops} hops cover every walk at n <= {m}", ""
            if v.verdict != PROVED:
                return None, "", f"walks of {hops} hops at n <= {m}: {v.reason}"
        if m >= n0 - 1:
            return None, f"the smallest n: no walk of any length at n < {n0}", ""
        m *= 2


def _how(v: SymbolicVerdict, how: str) -> SymbolicVerdict:
    return dataclasses.replace(v, reason=f"{v.reason} ({how})")


def _label(walk: SymbolicVerdict, why: str) -> SymbolicVerdict:
    cx = dict(walk.counterexample or {})
    cx["smallest"] = False
    return dataclasses.replace(walk, counterexample=cx, reason=f"{walk.reason} (an n; smaller may exist: {why})")


SEARCH_UPTO = 64  # an every-depth claim no short walk refutes: the concrete search by increasing n goes this far


def search_every_depth(fn: Callable, task: SymbolicTask, *, upto: int = SEARCH_UPTO,
                       timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicVerdict | None:
    """A refutation at every depth that no walk of at most K hops found: the concrete search by increasing
    ``n <= upto`` (complete at each n: every depth; so its first n is the smallest), confirmed by the
    symbolic walk of the depth it needs. None where the search does not apply (a parameter, an index
    tensor, grids too large: :func:`_concrete_smallest`), finds nothing, or is not confirmed."""
    mask = task.mask
    if z3.is_int_value(mask.n):
        return None
    conds = _conditions_of(mask, extra=list(task.conditions))
    with _inner():
        found = _concrete_smallest(task, conds, upto + 1, fn is prove_isolation)
        if found is None or found == "none":
            return None
        m, depth = found
        if depth > MAX_WALK_LAYERS:
            return None
        v = fn(task, layers=max(1, depth), assume=[mask.n <= m], timeout=timeout, recheck_upto=0)
    if v.verdict != REFUTED or (v.counterexample or {}).get("n") != m:
        return None  # not confirmed: the every-depth verdict stays as it was
    return _how(v, f"the smallest n: the concrete search finds nothing at n < {m} (every depth), and this walk "
                   f"of {depth} hops at n = {m}")


def _walk_length(mask: SymbolicMask, conds: list, m: int, timeout) -> int | None:
    """``max size − 1`` over ``n <= m`` and the side conditions (0: no instance there); None when not bounded."""
    opt = z3.Optimize()
    if timeout is not None:
        opt.set("timeout", max(1, int(timeout * 1000)))
    opt.add(*conds, mask.n <= m)
    goal = opt.maximize(mask.size)
    status = opt.check()
    if status == z3.unsat:
        return 0
    if status != z3.sat:
        return None
    value = goal.value()
    if not z3.is_int_value(value):  # unbounded (oo) or not a number
        return None
    return max(1, value.as_long() - 1)


def _free_functions(*exprs) -> bool:
    """Whether an uninterpreted function (an index tensor, a free predicate such as ``masked``) occurs."""
    todo, seen = list(exprs), set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED and e.decl().arity() > 0:
            return True
        todo.extend(e.children())
    return False


def _concrete_smallest(task: SymbolicTask, conds: list, below: int, isolation: bool):
    """``(n, depth)`` of the first leak (crossing) at every depth for ``n < below``; "none"; None: not complete here."""
    from hasse.theory.leak import find_leaks

    mask = task.mask
    p, t = z3.Ints("p_search t_search")
    parts = [mask.formula, task.holds(p, t), task.predicts(p, t)] + ([task.group(p)] if task.group else [])
    if task.concrete is None or mask.indexes or _task_params(task) or _free_functions(*parts):
        return None
    try:
        sizes = [mask.size_at(m) for m in range(1, below)]
    except Exception:
        return None
    if sum(x * x for x in sizes) > CONCRETE_SEARCH_ENTRIES:
        return None
    for m in range(1, below):
        solver = z3.Solver()
        solver.set("timeout", 5000)
        solver.add(*conds, mask.n == m)
        status = solver.check()
        if status == z3.unsat:
            continue  # no instance of the side conditions at this n
        if status != z3.sat:
            return None
        try:
            report = find_leaks(task.concrete(m), None, empty_rows="attend-none")
        except Exception:  # the concrete task cannot be built here: the search is not complete
            return None
        found = report.isolation if isolation else report.leaks
        if found:
            return m, min(x.depth for x in found)
    return "none"


# ---------------------------------------------------------------- concrete re-checks


def _ptext(params: dict) -> str:
    return "".join(f", {p} = {v}" for p, v in params.items())


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
    from hasse.solvers.symbolic import recheck

    masks = list(masks) if masks else [mask]
    params = _params_of(*masks) if params is None else params
    try:
        the_plan = recheck.plan(masks, conds, params)
    except Exception as exc:  # a plan that cannot be made is said, never hidden
        return f"not re-checked: {type(exc).__name__}: {' '.join(str(exc).split())}"
    if not the_plan.grids and not the_plan.samples:
        return "not re-checked: no instance of the side conditions among n <= 64, the constants ± 2 and 2^k ± 1"
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
            return f"not re-checked: {type(exc).__name__}: {' '.join(str(exc).split())}"
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
    from hasse.solvers.symbolic.recheck import lists_from_model

    return lists_from_model(masks, model, n, pairs) or None


def _concrete_dense(mask: SymbolicMask, n: int, params: dict, witness, lists: dict | None = None) -> str:
    from hasse.theory.order import mask_to_order

    try:
        grids = _grids([mask], n, params, lists=lists)
    except Exception as exc:
        return f"not re-checked: {exc}"
    if witness is None:  # a proof: every concrete instance (of the index tensors too) is dense
        for label, (matrix,) in grids:
            if not mask_to_order(matrix).dense:
                return disagreement(f"proved dense, but the concrete engine finds it not dense at "
                       f"n = {n}{_ptext(params)}{label}")
        return "confirmed"
    if len(grids) != 1 or (grids[0][0] and not lists):
        return "not re-checked: the model's index tensors are not rebuilt for a concrete grid"
    matrix = grids[0][1][0]
    dense = mask_to_order(matrix).dense
    a, b, c = witness
    attends = matrix | _eye(matrix.shape[0])
    if dense or not (attends[c, b] and attends[b, a] and not attends[c, a]):
        return disagreement(f"the concrete engine at n = {n}{_ptext(params)} finds the mask "
               f"{'dense' if dense else 'not dense, but not at this path'}")
    return "confirmed"


def _grids(masks: list, n: int, params: dict, limit: int = 4, lists: dict | None = None) -> list[tuple[str, tuple]]:
    """``(label, (matrix, …))`` for each concrete instance of the masks' index tensors at ``n`` (one, without).

    Each matrix is the mask's PROGRAM at those values (``SymbolicMask.program``: the user's
    mask_mod or the catalogue's builder), never its formula; a mask with no program (one built
    in Python from a rule) is its formula evaluated (:func:`recheck.formula_grid`). The
    instances are :func:`solvers.symbolic.catalog.index_instances` (extreme cases first, then
    seeded), the same tensors for every mask; the label names them (`` with doc = [0, 0, 1]``).
    """
    from hasse.solvers.symbolic.recheck import mask_grid

    names = {ix.name for m in masks for ix in m.indexes}
    if not names:
        return [("", tuple(mask_grid(m, n, _own(m, params)) for m in masks))]
    from hasse.solvers.symbolic.catalog import index_instances

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


def _eye(size: int):
    import numpy as np

    return np.eye(size, dtype=bool)


SAMPLED_FROM = 4096  # a refutation at a larger size is re-checked on the pair alone (the programs run on 1 x 1)


def _concrete_equal(a: SymbolicMask, b: SymbolicMask, n: int, params: dict, pair, lists: dict | None = None) -> str:
    if pair is not None and not lists and n > SAMPLED_FROM:
        return _sampled_pair(a, b, n, params, pair)
    try:
        grids = _grids([a, b], n, params, lists=lists)
    except Exception as exc:
        return f"not re-checked: {exc}"
    if pair is not None and (len(grids) != 1 or (grids[0][0] and not lists)):
        return "not re-checked: the model's index tensors are not rebuilt for a concrete grid"
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
    from hasse.solvers.symbolic.programs import point
    from hasse.solvers.symbolic.recheck import _sample_of

    q, k = pair
    where = f"n = {n}{_ptext(params)}"
    try:
        at = point(n, params, None, [q], [k])
        va, vb = bool(_sample_of(a, at)[0, 0]), bool(_sample_of(b, at)[0, 0])
    except Exception as exc:  # the program's own failure, or one the sample cannot evaluate: said, never "confirmed"
        return f"not re-checked: at {where}, pair ({q}, {k}): {' '.join(str(exc).split())}"
    if va == vb:
        return disagreement(f"the programs agree at M[{q}, {k}] at {where} (both {va})")
    return f"confirmed on the programs at {where}, pair ({q}, {k}) (sampled: the grid is too large)"


def _equal_on_plan(a: SymbolicMask, b: SymbolicMask, the_plan) -> str | None:
    """Proved equivalent: the two programs agree at every instance of the re-check (samples at large n too)."""
    from hasse.solvers.symbolic.recheck import equal_programs

    return equal_programs(a, b, the_plan)


def _concrete_sizes(a: SymbolicMask, b: SymbolicMask, n: int, params: dict) -> str:
    from hasse.solvers.symbolic.recheck import mask_grid

    try:
        sa, sb = mask_grid(a, n, _own(a, params)).shape[0], mask_grid(b, n, _own(b, params)).shape[0]
    except Exception as exc:
        return f"not re-checked: {exc}"
    return "confirmed" if sa != sb else disagreement(f"both concrete masks have size {sa} at n = {n}{_ptext(params)}")


def _own(mask: SymbolicMask, params: dict) -> dict:
    return {p: v for p, v in params.items() if p in mask.params}


def _lists(task: SymbolicTask, model, n: int, positions) -> dict:
    """The lists (``lengths``, ``order``, ``masked``) the model chose, for a task over index tensors."""
    if not task.mask.indexes:
        return {}
    from hasse.solvers.symbolic.task_values import lists_from_model

    return lists_from_model(task, model, n, positions)


def _concrete_task(task: SymbolicTask, n: int, params: dict, lists: dict | None = None):
    if task.concrete is None:
        raise ValueError("the task has no concrete form")
    return task.concrete(n, **params, **(lists or {}))


def _concrete_leak(task: SymbolicTask, n: int, params: dict, layers, leak, lists: dict | None = None) -> str:
    from hasse.theory.leak import find_leaks

    try:
        concrete = _concrete_task(task, n, params, lists)
    except Exception as exc:
        return f"not re-checked: {exc}"
    found = find_leaks(concrete, layers, empty_rows="attend-none").leaks_within(layers)
    if leak is None:
        return "confirmed" if not found else \
            disagreement(f"proved leak-free, but the concrete engine at n = {n}{_ptext(params)} finds "
            f"position {found[0].position} predicting {found[0].target} along {list(found[0].path)}")
    p, t = leak
    if any(x.position == p and x.target == t for x in found):
        return "confirmed"
    return disagreement(f"the concrete engine at n = {n}{_ptext(params)} finds no leak of token {t} into position {p}"
           f" within {layers} layers")


def _concrete_isolation(task: SymbolicTask, n: int, params: dict, layers, flow, lists: dict | None = None) -> str:
    from hasse.theory.leak import find_leaks

    try:
        concrete = _concrete_task(task, n, params, lists)
    except Exception as exc:
        return f"not re-checked: {exc}"
    found = find_leaks(concrete, layers, empty_rows="attend-none").isolation_within(layers)
    if flow is None:
        return "confirmed" if not found else \
            disagreement(f"proved isolated, but the concrete engine at n = {n}{_ptext(params)} finds "
            f"a flow along {list(found[0].path)}")
    p, s = flow
    if any(x.position == p for x in found):
        return "confirmed"
    return disagreement(f"the concrete engine at n = {n}{_ptext(params)} finds no flow into position {p} "
           f"(from {s}) within {layers} layers")


# ---------------------------------------------------------------- training–inference consistency


def prove_consistent(mask: SymbolicMask | SymbolicTask, *, queries: Callable | None = None,
                     upstream: Callable | None = None, order: Callable | None = None,
                     concrete: Callable | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                     assume: Sequence = (), recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """Each query's upstream in training equals its upstream at inference, for every ``n``.

    What is proved, exactly: the inference side is stated in the training task's positions
    by the caller — ``queries(p)`` (the supervised positions that stand for inference
    nodes), ``upstream(p, k)`` (position ``k`` stands for a node upstream of ``p``'s
    inference node, ``p`` itself included) and, optionally, ``order(a, b)`` (among those,
    ``a`` depends on ``b`` at inference). With ``A* `` the limit of the training mask:

    1. ``M or I`` is transitive (:func:`prove_dense`), so ``A* = M or I`` — first-order;
       a mask that is not dense gives **unknown** (its limit is not written here);
    2. for every query ``p`` and position ``k``: ``A(p, k) ⇔ upstream(p, k)``;
    3. with ``order``: for every query ``p`` and ``a, b`` upstream of it:
       ``A(a, b) ⇔ order(a, b)`` — the upstream diagrams are then the same labelled
       order, position for position (inputs and labels are the training positions' own,
       which the caller's correspondence must keep: it is not checked here).

    This is design.md §3's consistency (an equivalent training node for every inference
    node) for designs whose correspondence is position-wise, as Block Two-Stream's is:
    :func:`block_two_stream_consistency` states it. ``concrete(n, **params)`` returns
    ``(train Task, inference Tasks)`` for :func:`theory.consistency.check_consistency`,
    the re-check. Given a :class:`SymbolicTask` instead of a mask (and no ``queries``),
    the statement is the task family's (:func:`task_consistency`).
    """
    start = time.perf_counter()
    if isinstance(mask, SymbolicTask):
        parts = task_consistency(mask)
        mask = mask.mask
        queries, upstream = queries or parts["queries"], upstream or parts["upstream"]
        order, concrete = order or parts["order"], concrete or parts["concrete"]
    if queries is None or upstream is None:
        raise TypeError("prove_consistent needs queries= and upstream= with a mask")
    conds = _conditions_of(mask, extra=assume)
    statement = _statement(mask, mask.params, conds, "every query's upstream equals its inference upstream")
    failed = _failing("consistent", statement, start, timeout, [(mask, conds, mask.params)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: prove_consistent(
            mask, queries=queries, upstream=upstream, order=order, concrete=concrete, timeout=timeout,
            assume=[*assume, *below], recheck_upto=0))
    dense = prove_dense(mask, timeout=timeout, assume=assume, recheck_upto=0)
    if dense.verdict != PROVED:
        why = "the mask is not dense" if dense.verdict == REFUTED else f"density: {dense.reason}"
        return SymbolicVerdict("consistent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"{why}, so its limit is not first-order here (use hasse consistent at one n)")
    p, k, a, b = z3.Ints("p k a b")
    checks = [("upstream", conds + [mask.inside(p, k), queries(p)] + mask.facts([(p, k)] + _task_pairs([p, k]))
               + [mask.attends(p, k) != upstream(p, k)], [p, k])]
    if order is not None:
        checks.append(("order", conds + [mask.inside(p, a, b), queries(p), upstream(p, a), upstream(p, b)]
                       + mask.facts([(a, b), (p, a), (p, b)]) + [mask.attends(a, b) != order(a, b)], [p, a, b]))
    for what, query, terms in checks:
        status, model, reason, _ = _solve(query, timeout)
        if status == UNSAT:
            continue
        if status != SAT:
            return SymbolicVerdict("consistent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                                   f"{what}: the solver said {reason or status}")
        model, note = smallest_model(query, mask.n, mask.params, timeout, model)
        n, params = _values(model, mask)
        pos = [_value(model, x) for x in terms]
        x, y = (pos[0], pos[1]) if what == "upstream" else (pos[1], pos[2])
        training = z3.is_true(model.eval(mask.attends(x, y), model_completion=True))
        cx = {"n": n, "params": params, "query": pos[0], "positions": pos, "pair": [x, y], "check": what,
              "training": training, "inference": not training}
        recheck = _concrete_consistency(concrete, n, params, False)
        return SymbolicVerdict("consistent", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                               f"at n = {n}{_ptext(params)}, query {pos[0]}: {x} "
                               f"{'depends' if training else 'does not depend'} on {y} in training but "
                               f"{'not at inference' if training else 'does at inference'}"
                               + _uncertain(cx, note))
    recheck = _recheck_small(mask, conds, recheck_upto, lambda n, ps: _concrete_consistency(concrete, n, ps, True)) \
        if concrete is not None else None
    return SymbolicVerdict("consistent", PROVED, statement, time.perf_counter() - start, None, recheck,
                           "dense, and every query's upstream" + (" and its order" if order else "")
                           + " equal the inference task's")


def block_two_stream_consistency(mask: SymbolicMask, variant: str = "chain", block=None) -> dict:
    """``queries``, ``upstream`` and ``order`` of the ``block`` inference family in Block Two-Stream positions.

    Content ``C_i`` at ``i < c = n − l``, query ``Q_t`` at ``c + t``. At inference (``B_b``,
    ``b = t // l``) ``Q_t`` sees ``C_j`` for ``j < b·l`` and the queries of its block
    (``u <= t`` for chain, all for clique); content is causal, queries see every content
    position of their task and no query of another block.
    """
    n, l = mask.n, mask.params.get("block", mask.params.get("l")) if block is None else z3.IntVal(int(block))
    if l is None:
        raise ValueError(f"{mask.name}: no symbolic block parameter")
    c = n - l
    chain = variant == "chain"

    def is_query(x):
        return x >= c

    def same_block(x, y):  # two query positions, same block; chain: y no later than x
        return z3.And((x - c) / l == (y - c) / l, (y <= x) if chain else z3.BoolVal(True))

    def upstream(x, y):
        return z3.Or(x == y, z3.And(y < c, y < ((x - c) / l) * l), z3.And(is_query(y), same_block(x, y)))

    def order(x, y):
        return z3.Or(x == y,
                     z3.And(z3.Not(is_query(x)), z3.Not(is_query(y)), y <= x),
                     z3.And(is_query(x), z3.Not(is_query(y))),
                     z3.And(is_query(x), is_query(y), same_block(x, y)))

    return {"queries": is_query, "upstream": upstream, "order": order}


def task_consistency(task: SymbolicTask) -> dict:
    """``queries``, ``upstream``, ``order`` and ``concrete`` for a task family with a symbolic consistency statement.

    Block Two-Stream (either variant) and ``bad_block_query_history`` (chain), against the
    ``block`` inference family; any other task: InputError (use ``hasse consistent`` at one n).
    """
    from hasse.theory.errors import InputError
    from hasse.theory.spec import parse_spec

    source = task.name.split(" through ")[0]
    try:
        name, values = parse_spec(source)
    except Exception:
        name, values = source, {}
    if name not in ("block_two_stream", "bad_block_query_history") or " through " in task.name:
        raise InputError(f"{task.name}: no symbolic consistency statement for this task "
                         f"(use hasse consistent TRAIN_TASK --inference FAMILY at one n)")
    variant = str(values.get("variant", "chain")) if name == "block_two_stream" else "chain"
    fixed = values.get("block") if "block" not in task.mask.params else None
    parts = block_two_stream_consistency(task.mask, variant, fixed)

    def concrete(n, **params):
        from hasse.theory.tasks.families import block_family

        train = task.concrete(n, **params)
        block = params.get("block", values.get("block"))
        return train, block_family(n, int(block), variant)

    parts["concrete"] = concrete if task.concrete is not None else None
    return parts


def _concrete_consistency(concrete, n: int, params: dict, expect: bool) -> str:
    from hasse.theory.consistency import check_consistency

    if concrete is None:
        return "not re-checked: no concrete form given"
    try:
        train, inference = concrete(n, **params)
        report = check_consistency(train, inference)
    except Exception as exc:
        return f"not re-checked: {type(exc).__name__}: {exc}"
    if report.consistent == expect:
        return "confirmed"
    return disagreement(f"the concrete engine at n = {n}{_ptext(params)} finds the training task "
           f"{'consistent' if report.consistent else 'inconsistent'} ({report.checked} nodes checked)")


# ---------------------------------------------------------------- the claims of hasse prove-mask, by name


def walk_search(fn: Callable, task: SymbolicTask, verdict: SymbolicVerdict, hops: int, *,
                timeout: float | None = DEFAULT_TIMEOUT) -> SymbolicVerdict:
    """An every-depth verdict left unknown by a failing invariant, settled by a real walk where one exists.

    ``fn`` is :func:`prove_leak_free` or :func:`prove_isolation`. A leak (or a crossing)
    within ``hops`` layers is one at every depth from there on, so a refutation by walks
    refutes the every-depth claim; its n is then made the smallest over every walk length
    (:func:`smallest_refutation`). No walk of at most ``hops`` hops: the concrete search by
    increasing n (:func:`search_every_depth`). Nothing found: ``verdict`` as it was (the
    invariant's failure is no proof).
    """
    if verdict.verdict != UNKNOWN or "fails" not in (verdict.reason or ""):
        return verdict
    walk = fn(task, layers=hops, timeout=timeout)
    if walk.verdict != REFUTED:
        found = search_every_depth(fn, task, timeout=timeout)
        if found is None:
            return verdict
        return dataclasses.replace(
            found, statement=verdict.statement, seconds=verdict.seconds + walk.seconds + found.seconds,
            reason=f"{found.reason} (no walk of at most {hops} hops; a longer real walk: it stays at every greater "
                   f"depth; {verdict.reason})")
    walk = smallest_refutation(fn, task, walk, timeout=timeout)
    return dataclasses.replace(walk, statement=verdict.statement, seconds=verdict.seconds + walk.seconds,
                               reason=f"{walk.reason} (a real walk: it stays at every greater depth; {verdict.reason})")


@dataclass(frozen=True)
class Claim:
    """One ``--claim`` of ``hasse prove-mask``.

    ``run(subject, *, layers=None, invariant=None, timeout=DEFAULT_TIMEOUT, search_layers=0)``
    decides it: ``subject`` is a :class:`SymbolicTask` when ``needs_task``, else a
    :class:`SymbolicMask`; ``walks``: the claim is about walks (``layers`` within L hops, or
    every depth through ``invariant``, then ``search_layers`` K > 0 looks for a real walk of
    at most K hops when the invariant fails: :func:`walk_search`).
    """

    name: str
    needs_task: bool
    run: Callable[..., SymbolicVerdict]
    walks: bool = False


def _run_dense(mask: SymbolicMask, *, layers=None, invariant=None, timeout: float | None = DEFAULT_TIMEOUT,
               search_layers: int = 0) -> SymbolicVerdict:
    return prove_dense(mask, timeout=timeout)


def _run_consistent(task: SymbolicTask, *, layers=None, invariant=None, timeout: float | None = DEFAULT_TIMEOUT,
                    search_layers: int = 0) -> SymbolicVerdict:
    return prove_consistent(task, timeout=timeout)


def _walk_claim(fn: Callable) -> Callable[..., SymbolicVerdict]:
    def run(task: SymbolicTask, *, layers: int | None = None, invariant=None,
            timeout: float | None = DEFAULT_TIMEOUT, search_layers: int = 0) -> SymbolicVerdict:
        verdict = fn(task, layers=layers, invariant=invariant, timeout=timeout)
        if layers is None and search_layers > 0:
            verdict = walk_search(fn, task, verdict, search_layers, timeout=timeout)
        return verdict
    return run


CLAIMS: dict[str, Claim] = {
    "dense": Claim("dense", False, _run_dense),
    "leak-free": Claim("leak-free", True, _walk_claim(prove_leak_free), walks=True),
    "isolation": Claim("isolation", True, _walk_claim(prove_isolation), walks=True),
    "consistent": Claim("consistent", True, _run_consistent),
}

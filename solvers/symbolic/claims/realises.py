"""Realisation for every n: ``(M or I)^L = T`` — MASK realises the target preorder TARGET within L layers.

The claim (``hasse prove-mask MASK --claim realises --target T --layers L [--witness FILE.py:fn]``)
is decided in three parts, each a query of its negation:

(a) T is a preorder: reflexive by reading ``T or I``, transitive by :func:`prove_dense` on T
    (a target refuted there is bad input, one line; undecided: unknown, never proved);
(b) nothing outside T: no ``(q, k)`` with ``M(q, k)`` and not ``T(q, k)``; with (a) every walk
    stays inside T, so ``(M or I)^L ⊆ T``;
(c) every pair of T reached: for every ``(q, k)`` of T with ``q != k`` the witness's positions
    ``(w1, …, w_{L-1}) = W(q, k)`` (:mod:`solvers.symbolic.witness`) lie inside ``0 … size − 1``
    and make a walk ``A(w1, k), A(w2, w1), …, A(q, w_{L-1})``, ``A = M or I``.

Unsat of all three: proved for every n (re-checked by the concrete engine at every small
instance: :func:`theory.synthesis.realises` on the programs' grids). (b) sat: refuted at the
smallest n with the pair outside T. (c) sat: the witness fails at ``(n, q, k)`` (the smallest
n); below that n the mask realises T (the witness works there and (b) holds), so the concrete
engine at that n decides: a pair of T not reached there is a real refutation at the smallest
n; else unknown ("give a witness that works"). Without a witness: ``L = 1`` needs none
(``T ⊆ M or I`` directly); for ``L >= 2`` the concrete engine searches the smallest n <= 64
where T is not realised (refuted), else unknown — never proved without a witness.

Queries with bit operations are decided as bit-vectors (:mod:`.as_bits`); others, and where
the rewrite does not apply, by :func:`.solve._solve`.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import z3

from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.solvers.symbolic.claims.as_bits import relax, smallest_bits, solve_bits
from hasse.solvers.symbolic.claims.concrete import _recheck_small, _small_instances
from hasse.solvers.symbolic.claims.dense import prove_dense
from hasse.solvers.symbolic.claims.obligations import _earlier, _failing
from hasse.solvers.symbolic.claims.solve import _conditions_of, _params_of, _solve, _value, smallest_model
from hasse.solvers.symbolic.claims.statement import _inner, _ptext, _statement
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, RECHECK_UPTO, SymbolicVerdict
from hasse.solvers.symbolic.mask import SymbolicMask, _largest
from hasse.theory.errors import InputError
from hasse.theory.limits import MAX_SYMBOLIC_VALUE
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN, disagreement, not_rechecked

SEARCH_UPTO = 64  # no witness (L >= 2): the concrete search for a refutation goes up to this n
GRID_UPTO = 4096  # the concrete engine decides a failing witness at sizes up to this many positions
INT64 = (-2 ** 63, 2 ** 63 - 1)
RELAX_SECONDS = 1.0  # the relaxation (solvers.symbolic.claims.as_bits.relax) is tried this long before bit-blasting


class _Query:
    """The solver of one claim's queries: bit-vectors when the rewrite applies, else the integer solver."""

    def __init__(self, mask: SymbolicMask, params: dict, conds: list, timeout, lemmas=None):
        self.mask, self.params, self.timeout, self.lemmas = mask, params, timeout, lemmas
        top = MAX_SYMBOLIC_VALUE
        high = _largest(mask.size, list(conds))
        self.bounds = {} if z3.is_int_value(mask.n) else {str(mask.n): (1, top)}
        self.bounds.update({str(t): (-top, top) for t in params.values()})
        self.position_top = high - 1 if high is not None else None
        self.order = ([] if z3.is_int_value(mask.n) else [str(mask.n)]) + sorted(str(t) for t in params.values())

    def check(self, query: list, positions: Sequence, values: Sequence = ()):
        """``(status, values by name, reason)``; ``positions`` are bounded by the largest size, ``values`` int64."""
        if self.lemmas is not None:  # opaque components (.modular): their lemma's instances, then LIA + UF
            status, model, reason, _ = _solve(list(query) + self.lemmas.instances(query), self.timeout)
            return status, (self._values(model, query) if status == SAT else None), reason, None
        if _has_bits(query):
            status, _, _, _ = _solve(relax(query), min(self.timeout or RELAX_SECONDS, RELAX_SECONDS))
            if status == UNSAT:  # a relaxation's unsat is the query's
                return UNSAT, None, "", None
        bounds = dict(self.bounds)
        if self.position_top is not None:
            bounds.update({str(p): (0, self.position_top) for p in positions})
            bounds.update({str(v): INT64 for v in values})
            status, got, reason = solve_bits(query, bounds, self.timeout)
            if status is not None:
                return status, got, reason, bounds
        status, model, reason, _ = _solve(query, self.timeout)
        if status != SAT:
            return status, None, reason, None
        return status, self._values(model, query), reason, None

    def decide(self, base: list, cases: Sequence, positions: Sequence, values: Sequence = ()):
        """``base`` and one of ``cases`` (each a list of constraints), one query per case (a disjunction split:
        each case is smaller, and an undecided one is named): ``(status, values, reason, note)`` with the
        smallest counterexample over the satisfiable cases (``note``: why it may not be the smallest)."""
        found, unknown = [], ""
        for case in cases:
            query = list(base) + list(case)
            status, got, reason, bounds = self.check(query, positions, values)
            if status == SAT:
                got, note = self.smallest(query, got, bounds, [str(p) for p in positions])
                found.append((self._key(got, positions), got, note))
            elif status != UNSAT:
                unknown = unknown or (reason or status)
        if found:
            _, got, note = min(found, key=lambda x: x[0])
            if unknown:
                note = note or f"a case of the query was not decided ({unknown})"
            return SAT, got, "", note
        return (UNSAT, None, "", "") if not unknown else ("unknown", None, unknown, "")

    def _key(self, got: dict, positions) -> tuple:
        return tuple(got.get(name, 0) for name in self.order + [str(p) for p in positions])

    def _values(self, model, query) -> dict:
        names = {}
        for c in query:
            for x in _constants(c):
                names[str(x)] = x
        return {name: _value(model, x) for name, x in names.items()}

    def smallest(self, query: list, got: dict, bounds, tail: Sequence[str]):
        """``got`` with the smallest n, then parameters, then ``tail`` (positions); ``(values, note)``."""
        order = self.order + list(tail)
        if bounds is not None:
            return smallest_bits(query, bounds, order, self.timeout, got)
        terms = {name: z3.Int(name) for name in order}
        model, note = smallest_model(query, terms[order[0]], {k: terms[k] for k in order[1:]}, self.timeout) \
            if order else (None, "")
        return (self._values(model, query) if model is not None else got), note


def _has_bits(query: list) -> bool:
    """Whether the query reads a bit-vector value as an integer (``bv2int``: a traced bit operation)."""
    todo, seen = list(query), set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen or not z3.is_app(e):
            continue
        seen.add(e.get_id())
        if e.decl().kind() == z3.Z3_OP_BV2INT:
            return True
        todo.extend(e.children())
    return False


def _constants(e) -> list:
    from hasse.solvers.symbolic.terms import free_constants

    return [x for x in free_constants(e) if x.sort() == z3.IntSort()]


def prove_realises(mask: SymbolicMask, target: SymbolicMask, layers: int, witness=None, *,
                   timeout: float | None = DEFAULT_TIMEOUT, assume: Sequence = (),
                   recheck_upto: int = RECHECK_UPTO, modular: bool = True, lemmas=None) -> SymbolicVerdict:
    """``(M or I)^layers = T`` for every n (module docstring; ``modular``: first :mod:`.modular` where it applies)."""
    if modular and witness is not None and layers > 1:
        from hasse.solvers.symbolic.claims.modular import prove_modular

        out = prove_modular(mask, target, layers, witness, timeout=timeout, prove=prove_realises,
                            recheck=_recheck_proof, assume=assume, recheck_upto=recheck_upto)
        if out is not None:
            return out
    start = time.perf_counter()
    conds = _conditions_of(mask, target, extra=assume)
    params = _params_of(mask, target)
    through = f" through the witness {witness.name}" if witness is not None and layers > 1 else ""
    statement = _statement(mask, params, conds, f"(M or I)^{layers} = T (T = {target.name} or I), i.e. M ⊆ T and "
                                                f"every pair of T is reached within {layers} hops{through}")

    def verdict(v, reason, cx=None, recheck=None):
        return SymbolicVerdict("realises", v, statement, time.perf_counter() - start, cx, recheck, reason)

    _same_size(mask, target, conds, timeout)
    failed = _failing("realises", statement, start, timeout, [(mask, conds, params), (target, conds, params)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: prove_realises(
            mask, target, layers, witness, timeout=timeout, assume=[*assume, *below], recheck_upto=0))
    with _inner():
        pre = prove_dense(target, timeout=timeout, assume=conds, recheck_upto=0)
    if pre.verdict == REFUTED:
        raise InputError(f"--target {target.name} is not a preorder ({pre.reason}): a target must be reflexive "
                         "and transitive")
    if pre.verdict != PROVED:
        return verdict(UNKNOWN, f"whether the target is transitive is not decided: {pre.reason}")
    solver = _Query(mask, params, conds, timeout, lemmas)
    q, k = z3.Ints("q k")
    base = conds + [mask.inside(q, k)] + mask.facts([(q, k)]) + target.facts([(q, k)])
    cases = [[m, z3.Not(target.attends(q, k))] for m in _disjuncts(mask.allowed(q, k))]
    status, got, reason, note = solver.decide(base, cases, [q, k])
    if status == SAT:
        n, ps = _instance(mask, params, got)
        pair = [got["q"], got["k"]]
        cx = {"n": n, "params": ps, "pair": pair, "outside_target": True}
        return verdict(REFUTED, f"at n = {n}{_ptext(ps)}: M allows ({pair[0]}, {pair[1]}), a pair outside the "
                                f"target{_note(cx, note)}", cx,
                       _concrete(mask, target, layers, n, ps, pair, outside=True))
    if status != UNSAT:
        return verdict(UNKNOWN, f"M inside T: the solver said {reason or status}")
    if layers == 1 or witness is None:
        if layers == 1:
            cases = [[t, q != k, z3.Not(mask.attends(q, k))] for t in _disjuncts(target.allowed(q, k))]
            status, got, reason, note = solver.decide(base, cases, [q, k])
            if status == UNSAT:
                return verdict(PROVED, "M inside T, and every pair of T allowed by M or I (one layer: no walk "
                                       "needed)", recheck=_recheck_proof(mask, target, layers, conds, params,
                                                                         recheck_upto))
            if status != SAT:
                return verdict(UNKNOWN, f"T inside M or I: the solver said {reason or status}")
            return _lost(verdict, mask, target, layers, params, got, note, "")
        return _search(verdict, mask, target, layers, conds, params)
    return _through(verdict, solver, mask, target, layers, witness, conds, params, base, recheck_upto)


def _through(verdict, solver, mask, target, layers, witness, conds, params, base, recheck_upto):
    """Part (c) with a witness: its domain, its obligations, then the walk it gives for every pair of T."""
    q, k = z3.Ints("q k")
    ws = [z3.Int(f"w{i + 1}") for i in range(layers - 1)]
    if witness.conditions:
        status, _, reason, _ = _solve(conds + [z3.Not(z3.And(witness.conditions))], solver.timeout)
        if status != UNSAT:
            return verdict(UNKNOWN, f"the witness {witness.name}'s side conditions do not follow from the claim's "
                                    f"({'they exclude some n' if status == SAT else reason or status}): it proves "
                                    "nothing")
    pairs_of_t = [[t, q != k] for t in _disjuncts(target.allowed(q, k))]
    cannot = None  # where the witness program cannot run (the smallest), if anywhere
    if witness.obligations:
        fails = z3.Or([z3.Not(ob) for ob, _ in witness.obligations_at(q, k)])
        status, got, reason, note = solver.decide(base, [case + [fails] for case in pairs_of_t], [q, k])
        if status == SAT:
            cannot = (got, note)
        elif status != UNSAT:
            return verdict(UNKNOWN, f"whether the witness can run is not decided: the solver said {reason or status}")
    chain = [k, *ws, q]
    hops = [mask.attends(chain[i + 1], chain[i]) for i in range(layers)]
    facts = mask.facts([(chain[i + 1], chain[i]) for i in range(layers)])
    broken = [z3.Not(mask.inside(*ws))] + [z3.Not(h) for h in hops]  # the walk fails at one of these
    cases = [case + facts + [witness.at(q, k, ws), b] for case in pairs_of_t for b in broken]
    status, got, reason, note = solver.decide(base, cases, [q, k], ws)
    if cannot is not None and (status != SAT or solver._key(cannot[0], [q, k]) <= solver._key(got, [q, k])):
        undecided = "" if status in (SAT, UNSAT) else f"the walks were not decided ({reason or status})"
        return _witness_fails(verdict, mask, target, layers, params, cannot[0],
                              "the witness program cannot run there", cannot[1] or undecided)
    if status == UNSAT:
        return verdict(PROVED, f"M inside T (T transitive), and for every pair (q, k) of T the witness gives a walk "
                               f"of {layers} hops inside M or I",
                       recheck=_recheck_proof(mask, target, layers, conds, params, recheck_upto))
    if status != SAT:
        return verdict(UNKNOWN, f"the walks through the witness: the solver said {reason or status}")
    return _witness_fails(verdict, mask, target, layers, params, got,
                          "its walk " + " -> ".join(str(got.get(str(x), "?")) for x in chain) + " is not in M or I",
                          note)


def _disjuncts(e, limit: int = 32) -> list:
    """The top-level disjuncts of ``e`` (simplified), one case each; ``[e]`` past ``limit`` of them."""
    out, todo = [], [z3.simplify(e)]
    while todo:
        x = todo.pop(0)
        if z3.is_or(x):
            todo = list(x.children()) + todo
        else:
            out.append(x)
    return out if len(out) <= limit else [e]


def _instance(mask, params, got) -> tuple[int, dict]:
    n = mask.n.as_long() if z3.is_int_value(mask.n) else got[str(mask.n)]
    return n, {p: got.get(str(t), 0) for p, t in sorted(params.items())}


def _note(cx: dict, note: str) -> str:
    if not note:
        return ""
    cx["smallest"] = False
    return f" (an n; smaller may exist: {note})"


def _lost(verdict, mask, target, layers, params, got, note, how):
    n, ps = _instance(mask, params, got)
    pair = [got["q"], got["k"]]
    cx = {"n": n, "params": ps, "pair": pair, "lost": True}
    return verdict(REFUTED, f"at n = {n}{_ptext(ps)}: the pair ({pair[0]}, {pair[1]}) of T is not reached within "
                            f"{layers} layer(s){how}{_note(cx, note)}", cx,
                   _concrete(mask, target, layers, n, ps, pair))


def _witness_fails(verdict, mask, target, layers, params, got, what, note=""):
    """The witness fails at the smallest ``(n, q, k)``: below it the mask realises T; the concrete engine decides there."""
    n, ps = _instance(mask, params, got)
    pair = (got["q"], got["k"])
    at = f"the witness fails at n = {n}{_ptext(ps)}, pair ({pair[0]}, {pair[1]}): {what}"
    try:
        grids = _grids(mask, target, n, ps)
    except Exception as exc:  # noqa: BLE001 - a program that cannot run here decides nothing
        return verdict(UNKNOWN, f"{at}; the concrete engine could not decide there ({' '.join(str(exc).split())})")
    if grids is None:
        return verdict(UNKNOWN, f"{at}; too large for the concrete engine; the mask may still realise the target: "
                                "give a witness that works")
    m, t = grids
    reached = _reach(m, layers)
    if reached[pair] or np.array_equal(reached, t):
        lost = np.argwhere(t & ~reached)
        if not lost.size:
            return verdict(UNKNOWN, f"{at}; the mask may still realise the target: give a witness that works "
                                    f"(the concrete engine at n = {n} finds every pair of T reached)")
        pair = tuple(int(x) for x in lost[0])
    cx = {"n": n, "params": ps, "pair": list(pair), "lost": True}
    smallest = "" if not note else _note(cx, note)
    return verdict(REFUTED, f"at n = {n}{_ptext(ps)}: the pair ({pair[0]}, {pair[1]}) of T is not reached within "
                            f"{layers} layers (the concrete engine; the witness works below n = {n}){smallest}", cx,
                   _concrete(mask, target, layers, n, ps, list(pair)))


def _search(verdict, mask, target, layers, conds, params):
    """No witness, ``L >= 2``: the smallest n <= :data:`SEARCH_UPTO` where the concrete engine finds T not realised."""
    from hasse.solvers.symbolic.recheck import prefetch_grids

    instances = _small_instances(mask, conds, SEARCH_UPTO, params, limit=4 * SEARCH_UPTO)
    try:
        prefetch_grids([mask, target], [(n, tuple(sorted(ps.items()))) for n, ps in instances])
        for n, ps in instances:
            grids = _grids(mask, target, n, ps)
            if grids is None:
                break
            m, t = grids
            reached = _reach(m, layers)
            bad = np.argwhere(reached != t)
            if bad.size:
                pair = [int(x) for x in bad[0]]
                cx = {"n": n, "params": ps, "pair": pair, "lost": bool(t[tuple(pair)])}
                what = "is not reached" if cx["lost"] else "is reached, outside T"
                return verdict(REFUTED, f"at n = {n}{_ptext(ps)}: the pair ({pair[0]}, {pair[1]}) {what} within "
                                        f"{layers} layers (the concrete engine, by increasing n)", cx,
                               _concrete(mask, target, layers, n, ps, pair, outside=not cx["lost"]))
    except Exception as exc:  # noqa: BLE001 - the search decides nothing then
        return verdict(UNKNOWN, f"needs --witness FILE.py:fn (the concrete search stopped: "
                                f"{' '.join(str(exc).split())})")
    top = max((n for n, _ in instances), default=0)
    return verdict(UNKNOWN, f"needs --witness FILE.py:fn: within {layers} layers a walk's intermediate positions must "
                            f"be given for a proof for every n (M inside T is proved; the concrete engine finds T "
                            f"realised at every n <= {top})")


def _same_size(mask, target, conds, timeout) -> None:
    status, model, _, _ = _solve(conds + [mask.size != target.size], timeout)
    if status == UNSAT:
        return
    at = f" (they differ at n = {_value(model, mask.n)})" if status == SAT and not z3.is_int_value(mask.n) else ""
    raise InputError(f"MASK {mask.name} has size {mask.size} and --target {target.name} size {target.size}: they "
                     f"must be the same for every n{at}")


def _grids(mask, target, n, ps):
    from hasse.solvers.symbolic.recheck import mask_grid

    size = mask.size_at(n, **{p: v for p, v in ps.items() if p in mask.params})
    if size > GRID_UPTO:
        return None
    m = np.asarray(mask_grid(mask, n, ps), dtype=bool)
    t = np.asarray(mask_grid(target, n, ps), dtype=bool) | np.eye(size, dtype=bool)
    return m, t


def _reach(m: np.ndarray, layers: int) -> np.ndarray:
    from hasse.theory.reach import reach

    return np.asarray(reach(m, layers), dtype=bool)


def _concrete(mask, target, layers, n, ps, pair, *, outside: bool = False) -> str:
    """A refutation at ``(n, ps)`` re-checked: :func:`theory.synthesis.realises` on the programs' grids is False there."""
    from hasse.theory.synthesis import realises

    try:
        grids = _grids(mask, target, n, ps)
        if grids is None:
            return not_rechecked(f"the grid at n = {n} is too large")
        m, t = grids
        says = realises(m, t, layers)
    except Exception as exc:  # noqa: BLE001 - a re-check that cannot run is said, never hidden
        return not_rechecked(f"{type(exc).__name__}: {' '.join(str(exc).split())}")
    q, k = pair
    where = f"n = {n}{_ptext(ps)}"
    if says:
        return disagreement(f"the concrete engine finds the mask realising the target at {where}")
    if outside and not (m[q, k] and not t[q, k]):
        return disagreement(f"the concrete engine finds ({q}, {k}) not a pair of M outside T at {where}")
    if not outside and (not t[q, k] or _reach(m, layers)[q, k]):
        return disagreement(f"the concrete engine finds ({q}, {k}) reached (or not in T) at {where}")
    return "confirmed"


def _recheck_proof(mask, target, layers, conds, params, upto) -> str | None:
    def one(n, ps):
        from hasse.theory.synthesis import realises

        grids = _grids(mask, target, n, ps)
        if grids is None:
            return "confirmed"
        m, t = grids
        return "confirmed" if realises(m, t, layers) else disagreement(
            f"proved, but the concrete engine finds the mask not realising the target at n = {n}{_ptext(ps)}")

    return _recheck_small(mask, conds, upto, one, params, masks=[mask, target])

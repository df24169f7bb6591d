"""A modular ``realises`` proof: the chain lemma proved once, then the composite with the chain as uninterpreted functions.

The sparse Butterfly and Block Two-Stream masks (:mod:`theory.masks.sparse_spanners`) call the
chain formula ``C = chain_rule(a, c, L, t)`` on stream indices, and their witnesses the chain
walk ``W = chain_path(a, c, L, t)`` (:mod:`theory.spanner_formulas`). Bit-blasting ``C`` and ``W``
inside the composite query is too slow, so:

1. The CHAIN LEMMA for ``(L, t)`` is proved by :func:`~.realises.prove_realises` itself on the
   REAL functions, over two index ranges: ``D+ = [0, 2^31 - 1]`` (the mask ``C(q, k) or q == k``
   realises ``causal`` through the witness ``W(q, k)``, for every ``n <= 2^31``) and
   ``D- = [-2^32, -1]`` (the mask ``C(~q, ~k) or q == k`` on ``2n`` positions realises
   ``k >= q`` through ``~W(~q, ~k)``; Butterfly's backward stream uses ``~position``).
   Each proof says, for ``a, c`` both in ``D+`` or both in ``D-``:
   (i) ``C(a, c) -> c <= a`` (part (b): M inside T);
   (ii) ``c < a -> `` with ``v_0 = c``, ``v_i = W_i(a, c)``, ``v_L = a``: every ``v_i`` in the same
   range and every hop ``v_{i+1} == v_i or C(v_{i+1}, v_i)`` (part (c): the walk).
2. The mask and its witness are traced again with ``chain_rule`` and ``chain_path`` replaced
   (:func:`opaque`, a context manager swapping the module attributes while tracing) by
   uninterpreted Z3 functions ``C_L_t(a, c)`` and ``W_i_L_t(a, c)``. Every query of the claim
   gets (i) at each application of ``C`` and (ii) at each application of ``W`` in it (and (i) at
   the ``C`` terms (ii) adds), each guarded by the range condition: linear arithmetic and UF.

Soundness: the real ``C``, ``W`` satisfy every instance added (by the lemma's proof, done in the
same run; an unproved lemma range adds no instance), so any counterexample of the real query
interpreted with the real functions satisfies the abstract query: its unsat is the real one's.
A satisfiable abstract query proves nothing (the functions are only constrained): the claim then
falls back to the concrete engine's search on the real program (refuted only there) or unknown.
The re-checks at small n run the real program (the mask's ``program``, evaluated outside
:func:`opaque`). Any catalogue formula built from a registered component (:data:`COMPONENTS`) with its own
witness uses it, but those in :data:`DIRECT` (``sparse_causal`` is the chain formula: proved directly).
"""

from __future__ import annotations

import contextlib
import importlib
import time
from dataclasses import replace

import z3

from hasse.theory.verdicts import PROVED

# (module, rule function, walk function): the walk's lemma is proved against the rule
COMPONENTS = (("hasse.theory.masks.sparse_spanners", "chain_rule", "hasse.theory.spanner_formulas", "chain_path"),
              # the same two functions, imported by name where theory.masks.sparse_chains and its walks call them
              ("hasse.theory.masks.sparse_chains", "chain_rule", "hasse.theory.chain_formulas", "chain_path"))
DIRECT = ("sparse_causal",)  # its mask is the chain formula itself (its proof is the lemma's D+): proved directly
POSITIVE = (0, 2 ** 31 - 1)
NEGATIVE = (-2 ** 32, -1)
INT64 = (-2 ** 63, 2 ** 63 - 1)


def _rule_fn(layers: int, tile: int):
    return z3.Function(f"chain_rule_L{layers}_t{tile}", z3.IntSort(), z3.IntSort(), z3.BoolSort())


def _walk_fn(i: int, layers: int, tile: int):
    return z3.Function(f"chain_path{i}_L{layers}_t{tile}", z3.IntSort(), z3.IntSort(), z3.IntSort())


def _standins(real_rule, real_walk):
    from hasse.solvers.symbolic.terms import Sym, SymBool, SymInt, as_int
    from hasse.solvers.symbolic.terms.dtypes import BOOL, INT64 as I64
    from hasse.solvers.symbolic.terms.sym import _tracer_of

    def concrete(*xs):
        return not any(isinstance(x, Sym) for x in xs)

    def rule(a, c, layers, tile):
        if concrete(a, c) or not (isinstance(layers, int) and isinstance(tile, int)):
            return real_rule(a, c, layers, tile)
        tensor = any(isinstance(x, Sym) and x.dtype is not None for x in (a, c))
        return SymBool(_rule_fn(layers, tile)(as_int(a), as_int(c)), _tracer_of(a, c), BOOL if tensor else None)

    def walk(a, c, layers, tile):
        if concrete(a, c) or not (isinstance(layers, int) and isinstance(tile, int)) or layers <= 1:
            return real_walk(a, c, layers, tile)
        tensor = any(isinstance(x, Sym) and x.dtype is not None for x in (a, c))
        tracer = _tracer_of(a, c)
        return tuple(SymInt(_walk_fn(i + 1, layers, tile)(as_int(a), as_int(c)), tracer, I64 if tensor else None,
                            INT64) for i in range(layers - 1))

    return rule, walk


@contextlib.contextmanager
def opaque():
    """While tracing inside: each registered rule and walk replaced by its uninterpreted stand-in."""
    saved = []
    try:
        for rmod, rname, wmod, wname in COMPONENTS:
            rm, wm = importlib.import_module(rmod), importlib.import_module(wmod)
            rule, walk = _standins(getattr(rm, rname), getattr(wm, wname))
            saved += [(rm, rname, getattr(rm, rname)), (wm, wname, getattr(wm, wname))]
            setattr(rm, rname, rule)
            setattr(wm, wname, walk)
        yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


def _apps(query: list) -> list:
    """The applications of the stand-ins' functions in ``query``: ``(kind, layers, tile, index, args)``."""
    out, todo, seen = [], list(query), set()
    while todo:
        e = todo.pop()
        if not z3.is_app(e) or e.get_id() in seen:
            continue
        seen.add(e.get_id())
        name = e.decl().name()
        if e.decl().kind() == z3.Z3_OP_UNINTERPRETED and e.num_args() == 2 and name.startswith("chain_"):
            head, _, rest = name.partition("_L")
            layers, _, tile = rest.partition("_t")
            if head == "chain_rule":
                out.append(("rule", int(layers), int(tile), 0, tuple(e.children())))
            elif head.startswith("chain_path"):
                out.append(("walk", int(layers), int(tile), int(head[len("chain_path"):]), tuple(e.children())))
        todo.extend(e.children())
    return out


class Lemmas:
    """The proved ranges of the chain lemma per ``(layers, tile)``, and its instances for a query."""

    def __init__(self):
        self.ranges: dict[tuple, list] = {}  # (layers, tile) -> proved ranges
        self.seconds: dict[tuple, float] = {}
        self.reasons: dict[tuple, str] = {}

    def _inside(self, key, *xs):
        return z3.Or([z3.And([z3.And(lo <= x, x <= hi) for x in xs]) for lo, hi in self.ranges.get(key, [])] or
                     [z3.BoolVal(False)])

    def instances(self, query: list) -> list:
        out, rules, walks = [], {}, {}
        for kind, layers, tile, _, args in _apps(query):
            key = (layers, tile)
            ids = tuple(a.get_id() for a in args)
            (rules if kind == "rule" else walks).setdefault((key, ids), args)
        for (key, _), (a, c) in walks.items():
            layers, tile = key
            vs = [c] + [_walk_fn(i + 1, layers, tile)(a, c) for i in range(layers - 1)] + [a]
            hops = []
            for x, y in zip(vs, vs[1:]):
                hop = _rule_fn(layers, tile)(y, x)
                rules.setdefault((key, (y.get_id(), x.get_id())), (y, x))
                hops.append(z3.Or(y == x, hop))
            for lo, hi in self.ranges.get(key, []):
                inside = [z3.And(lo <= v, v <= hi) for v in vs[1:-1]]
                out.append(z3.Implies(z3.And(lo <= c, c < a, a <= hi), z3.And(inside + hops)))
        for (key, _), (a, c) in rules.items():
            out.append(z3.Implies(z3.And(self._inside(key, a, c), _rule_fn(*key)(a, c)), c <= a))
        return out


def _lemma_masks(layers: int, tile: int, negative: bool, timeout):
    """The lemma's mask, target and witness on one range (the real functions, traced outside :func:`opaque`)."""
    from hasse.solvers.symbolic.mask import from_rule
    from hasse.solvers.symbolic.witness import witness_of_factory
    from hasse.theory import spanner_formulas as sf
    from hasse.theory.masks import sparse_spanners as ss

    def make_mask(n):
        def rule(q, k):
            return (ss.chain_rule(~q, ~k, layers, tile) if negative else ss.chain_rule(q, k, layers, tile)) | (q == k)
        return rule

    def make_target(n):
        def rule(q, k):
            return (k >= q) if negative else (k <= q)
        return rule

    def make_witness(n):
        def witness(q_idx, kv_idx):
            if negative:
                return tuple(~w for w in sf.chain_path(~q_idx, ~kv_idx, layers, tile))
            return tuple(sf.chain_path(q_idx, kv_idx, layers, tile))
        return witness

    size = (lambda n: 2 * n) if negative else None
    tag = f"chain lemma L={layers} t={tile} {'on ~positions' if negative else 'on positions'}"
    mask = from_rule(tag, make_mask, params={"n": None}, size=size)
    target = from_rule(tag + " target", make_target, params={"n": None}, size=size)
    from hasse.solvers.symbolic.claims.solve import _conditions_of

    witness = witness_of_factory(tag + " witness", make_witness, {"n": mask.n}, size=mask.size, n=mask.n,
                                 conditions=_conditions_of(mask, target), hops=layers - 1)
    return mask, target, witness


_PROVED: dict[tuple, tuple] = {}  # (the real functions, layers, tile, range) proved in this process: (range, seconds)


def prove_lemmas(keys, timeout, prove) -> Lemmas:
    """The chain lemma for each ``(layers, tile)`` on both ranges, by :func:`~.realises.prove_realises` (no modular step).

    ``prove``: :func:`~.realises.prove_realises` (passed in: no import loop). A range proved once in this
    process for the same function objects is not proved again."""
    from hasse.theory import spanner_formulas as sf
    from hasse.theory.masks import sparse_spanners as ss

    lemmas = Lemmas()
    for key in sorted(keys):
        start = time.perf_counter()
        for negative, rng in ((False, POSITIVE), (True, NEGATIVE)):
            memo = (ss.chain_rule, ss.chain_edges, sf.chain_path, sf.chain_walk, ss.smear, ss.pick, *key, rng)  # the objects: kept alive
            if memo in _PROVED:
                lemmas.ranges.setdefault(key, []).append(rng)
                continue
            mask, target, witness = _lemma_masks(*key, negative, timeout)
            v = prove(mask, target, key[0], witness, timeout=timeout, recheck_upto=8, modular=False)
            if v.verdict == PROVED:
                lemmas.ranges.setdefault(key, []).append(rng)
                _PROVED[memo] = (rng, v.seconds)
            else:
                lemmas.reasons[key] = f"{'D-' if negative else 'D+'}: {v.verdict} ({v.reason})"
        lemmas.seconds[key] = time.perf_counter() - start
    return lemmas


def abstract_parts(mask, layers: int, witness, timeout):
    """The catalogue mask and its own witness traced with the components opaque, or None (not applicable)."""
    from hasse.solvers.symbolic.catalog import symbolic_mask
    from hasse.solvers.symbolic.claims.solve import _conditions_of
    from hasse.solvers.symbolic.witness import known_design, witness_for

    try:
        known = known_design(mask.name)
    except Exception:  # noqa: BLE001 - not a catalogue spec: nothing modular to do
        return None
    if known is None or witness is None or witness.name != f"{known['entry'].name}'s witness" \
            or known["entry"].name in DIRECT:
        return None
    with opaque():
        amask = symbolic_mask(known["spec"])
        amask = replace(amask, conditions=list(mask.conditions))
        awitness = witness_for(known["spec"], None, known, amask, _conditions_of(amask), layers, timeout)
    if awitness is None:
        return None
    keys = {(a[1], a[2]) for a in _apps([amask.formula, awitness.relation])}
    return (amask, awitness, keys) if keys else None


def prove_modular(mask, target, layers: int, witness, *, timeout, prove, recheck, assume=(), recheck_upto: int = 0):
    """The modular proof (module docstring), or None where MASK calls no registered component.

    Proved: the lemma on every range proved and the abstract composite unsat everywhere, re-checked on
    the REAL program at small n. Otherwise the concrete engine's search on the real program (refuted
    there only), else unknown; an abstract model never refutes. ``prove``, ``recheck``: realises's
    ``prove_realises`` and ``_recheck_proof`` (passed in: no import loop)."""
    from hasse.solvers.symbolic.claims.solve import _conditions_of, _params_of
    from hasse.theory.verdicts import REFUTED, UNKNOWN

    start = time.perf_counter()
    parts = abstract_parts(mask, layers, witness, timeout)
    if parts is None:
        return None
    amask, awitness, keys = parts
    lemmas = prove_lemmas(keys, timeout, prove)
    said = "; ".join(f"chain lemma L={k[0]} t={k[1]}: {'D+ and D- proved' if len(lemmas.ranges.get(k, [])) == 2 else lemmas.reasons.get(k, '')}"
                     f" in {lemmas.seconds[k]:.1f} s" for k in sorted(keys))
    v = prove(amask, target, layers, awitness, timeout=timeout, assume=assume, recheck_upto=0,
                       modular=False, lemmas=lemmas)
    if v.verdict == PROVED and all(len(lemmas.ranges.get(k, [])) == 2 for k in keys):
        conds = _conditions_of(mask, target, extra=assume)
        checked = recheck(mask, target, layers, conds, _params_of(mask, target), recheck_upto)
        return replace(v, seconds=time.perf_counter() - start, recheck=checked,
                       reason=f"{v.reason} (modular: the chain formula and its walk as uninterpreted functions "
                              f"constrained by the chain lemma, proved first: {said})")
    why = f"the modular proof did not close ({v.verdict}: {v.reason}; {said})"
    try:
        found = concrete_search(mask, target, layers, _conditions_of(mask, target, extra=assume),
                                _params_of(mask, target))
    except Exception as exc:  # noqa: BLE001 - a program that cannot run decides nothing
        return replace(v, verdict=UNKNOWN, counterexample=None, recheck=None, seconds=time.perf_counter() - start,
                       reason=f"{why}; the concrete search stopped: {' '.join(str(exc).split())}")
    if found is None:
        return replace(v, verdict=UNKNOWN, counterexample=None, recheck=None, seconds=time.perf_counter() - start,
                       reason=f"{why}; the concrete engine finds T realised at every n <= {SEARCH_UPTO} it ran")
    cx, checked = found
    what = "is not reached" if cx["lost"] else "is reached, outside T"
    return replace(v, verdict=REFUTED, counterexample=cx, recheck=checked, seconds=time.perf_counter() - start,
                   reason=f"at n = {cx['n']}: the pair ({cx['pair'][0]}, {cx['pair'][1]}) {what} within {layers} "
                          f"layers (the concrete engine on the real program, by increasing n); {why}")


SEARCH_UPTO = 64


def concrete_search(mask, target, layers, conds, params):
    """The smallest instance with n <= :data:`SEARCH_UPTO` (at most 4096 positions) where the REAL program does not
    realise T: ``(counterexample, re-check)``, the re-check by :func:`theory.synthesis.realises`; else None."""
    import numpy as np

    from hasse.solvers.symbolic.claims.concrete import _small_instances
    from hasse.solvers.symbolic.recheck import mask_grid
    from hasse.theory.reach import reach
    from hasse.theory.synthesis import realises
    from hasse.theory.verdicts import disagreement

    for n, ps in _small_instances(mask, conds, SEARCH_UPTO, params, limit=4 * SEARCH_UPTO):
        size = mask.size_at(n, **{p: v for p, v in ps.items() if p in mask.params})
        if size > 4096:
            return None
        m = np.asarray(mask_grid(mask, n, ps), dtype=bool)
        t = np.asarray(mask_grid(target, n, ps), dtype=bool) | np.eye(size, dtype=bool)
        bad = np.argwhere(np.asarray(reach(m, layers), dtype=bool) != t)
        if bad.size:
            pair = [int(x) for x in bad[0]]
            cx = {"n": n, "params": ps, "pair": pair, "lost": bool(t[tuple(pair)])}
            return cx, ("confirmed" if not realises(m, t, layers) else
                        disagreement(f"the concrete engine finds the mask realising the target at n = {n}"))
    return None

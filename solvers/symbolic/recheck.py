"""The re-check of a symbolic verdict by running the user's own program (issue 21, item 3).

A proof is about the formula the tracer made of the program; a mis-trace makes it a proof
about another mask. So every verdict is re-checked on the **program**: a
:class:`~solvers.symbolic.programs.Program` (``SymbolicMask.program``; the programs live in
:mod:`solvers.symbolic.programs`) evaluates it concretely —

- :class:`MaskModProgram`: a ``FILE.py:fn`` mask_mod through the path of ``hasse analyze
  FILE.py:fn --n N`` (:func:`theory.mask_mod.evaluate_mask_mod`: numpy first, the torch
  fallback the command line passes in), every instance of one re-check in **one** bounded
  child run (:func:`theory.user_code.run`: the file imported once); large ``n`` on sampled
  index vectors (``rows[:, None]``, ``cols[None, :]``);
- :class:`CatalogProgram`: a catalogue spec through its builder (:func:`theory.catalog.build_mask`),
  and at large ``n`` its rule (the code the tracer read) on sampled index vectors.

:func:`plan` says where: every ``n <= 64``; ``n`` within ±2 of every constant of the program
(``SymbolicMask.constants`` and the integer literals of the formula, size and side
conditions); ``2^k - 1, 2^k, 2^k + 1`` for ``k <= 20`` (on a sampled sub-grid of at most
256 x 256 positions: 0, 1, 2, the last ones, the stream starts and constants ± 2, and
seeded random positions with their neighbours); the parameters at every value in
``-2 … 8``, within ±2 of the constants and of ``n`` (a bounded, seeded choice per ``n``),
each instance satisfying the side conditions. :func:`check_program` compares program and
formula (:mod:`solvers.symbolic.evaluate`) at every point: a difference is the loud
``DISAGREES: the traced formula and the program differ …`` (a bug of the kit). The claim
itself is then checked on the program's own grids at small ``n`` by the callers
(:mod:`solvers.symbolic.claims`).

A program that cannot be run at all gives ``"not re-checked: …"``; for a proof, the command
line turns that into the verdict unknown (exit 3): a proof whose program never ran is not
confirmed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import z3

from hasse.solvers.symbolic.evaluate import Unevaluable, evaluate, evaluate_partial
from hasse.solvers.symbolic.programs import (  # noqa: F401  (the programs, importable from here too)
    CatalogProgram,
    MaskModProgram,
    Point,
    Program,
    ProgramFailure,
    TaskProgram,
    _one_line,
    point,
)
from hasse.theory.errors import InputError
from hasse.theory.verdicts import disagreement

SMALL_N = 64  # every n up to this, full grids
CLAIM_N = 12  # the claim itself on the program at instances up to this n
LARGE_K = 20  # 2^k ± 1 up to this k
FULL_UPTO = 256  # a grid of at most this many positions is evaluated whole; larger ones sampled
SAMPLE = 256  # rows (and columns) of a sampled sub-grid
MAX_SMALL = 600  # instances with n <= SMALL_N
MAX_CLAIM = 48  # instances the claim is re-checked at
PER_LARGE_N = 2  # parameter choices per large n
MAX_N = 2 ** 31  # the domain bound of every statement (theory.limits.MAX_SYMBOLIC_VALUE)
CHUNK = 1 << 21  # lanes of one batched evaluation of a formula


# ---------------------------------------------------------------- the formula at a point


_NAMES: dict = {}  # id(term) -> (term kept alive, its name)


def _nm(term) -> str:
    """The name of a Z3 constant (its declaration's, cached: str() runs Z3's printer, and even decl() is slow)."""
    hit = _NAMES.get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    if len(_NAMES) > 4096:
        _NAMES.clear()
    name = term.name() if isinstance(term, z3.FuncDeclRef) else term.decl().name()
    _NAMES[id(term)] = (term, name)
    return name


def _env(mask, p: Point) -> dict:
    env = {}
    if not z3.is_int_value(mask.n):
        env[_nm(mask.n)] = p.n
    for key, value in p.params:
        term = mask.params.get(key)
        if term is not None and not z3.is_int_value(term):
            env[_nm(term)] = value
    for index in mask.indexes:
        values = dict(p.lists).get(index.name)
        if values is None:
            continue
        env[_nm(index.function)] = np.asarray(values, dtype=np.int64)
        relation = getattr(index, "relation", None)
        if relation is not None:  # an ancestry: anc(i, j), j is i or an ancestor of i
            from hasse.solvers.symbolic.catalog import _ancestors

            table = np.zeros((len(values), len(values)), dtype=bool)
            for i, anc in enumerate(_ancestors(values)):
                table[i, sorted(anc)] = True
            env[_nm(relation)] = table
    return env


_SIZES: dict = {}  # (id(size term), n, params, lists) -> (term kept alive, size)


def size_at(mask, p: Point) -> int:
    key = (id(mask.size), p.n, p.params, p.lists)
    hit = _SIZES.get(key)
    if hit is not None and hit[0] is mask.size:
        return hit[1]
    if len(_SIZES) > 65536:
        _SIZES.clear()
    size = int(evaluate(mask.size, _env(mask, p)))
    _SIZES[key] = (mask.size, size)
    return size


def formula_at(mask, p: Point, rows=None, cols=None):
    """``(values, undefined)`` of the traced formula at ``p`` on the rows x cols of positions (default: all)."""
    env, rows, cols = _grid_env(mask, p, rows, cols)
    return evaluate_partial(mask.formula, env, shape=(len(rows), len(cols)))


def _grid_env(mask, p: Point, rows=None, cols=None) -> tuple[dict, np.ndarray, np.ndarray]:
    """The evaluation environment at ``p`` with ``q``, ``k`` on the rows x cols of positions (default: all),
    and those rows and cols as arrays."""
    size = size_at(mask, p)
    rows = np.arange(size) if rows is None else np.asarray(rows, dtype=np.int64)
    cols = np.arange(size) if cols is None else np.asarray(cols, dtype=np.int64)
    env = _env(mask, p)
    env[_nm(mask.q)] = rows[:, None]
    env[_nm(mask.k)] = cols[None, :]
    return env, rows, cols


def formula_grid(mask, n: int, params: dict | None = None, lists: dict | None = None) -> np.ndarray:
    """The formula's ``(size, size)`` grid (fast :mod:`evaluate`, not Z3); Unevaluable where it is undefined."""
    values, undef = formula_at(mask, point(n, params, lists))
    if undef is not None:
        q, k = (int(x) for x in np.argwhere(undef)[0])
        raise Unevaluable(f"the formula of {mask.name} is undefined at n = {n}, pair ({q}, {k}) (a divisor 0?)")
    return np.array(values, dtype=bool)


def mask_grid(mask, n: int, params: dict | None = None, lists: dict | None = None) -> np.ndarray:
    """The mask at ``n``: the program's grid when the mask has one, else the formula's."""
    program = getattr(mask, "program", None)
    own = {k: v for k, v in (params or {}).items() if k in mask.params}
    if program is not None:
        return program.grid(n, own, lists)
    return formula_grid(mask, n, own, lists)


# ---------------------------------------------------------------- the plan


def constants_of(mask, extra: Sequence = ()) -> list[int]:
    """The integer constants of the program: ``mask.constants`` and the literals of its formula, size, conditions."""
    out = set(int(c) for c in getattr(mask, "constants", set()) or () if isinstance(c, int))
    todo = [mask.formula, mask.size, *mask.conditions, *extra]
    todo = [t for t in todo if isinstance(t, z3.ExprRef)]
    seen = set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_int_value(e):
            out.add(e.as_long())
        elif not z3.is_quantifier(e):
            todo.extend(e.children())
    return sorted(c for c in out if abs(c) <= MAX_N)


def _holds(conds: list, envs: list[dict]) -> list[bool]:
    """Which of the assignments ``envs`` satisfy every condition (vectorised; Z3 where it does not evaluate)."""
    if not conds:
        return [True] * len(envs)
    cond = z3.And(conds)
    names = sorted({k for e in envs for k in e})
    try:
        env = {k: np.array([e.get(k, 0) for e in envs], dtype=object) for k in names}
        values, undef = evaluate_partial(cond, env, shape=(len(envs),))
        ok = np.asarray(values, dtype=bool)
        if undef is not None:
            ok = ok & ~undef
        return [bool(x) for x in ok]
    except Unevaluable:
        out = []
        for e in envs:
            s = z3.simplify(z3.substitute(cond, *[(z3.Int(k), z3.IntVal(v)) for k, v in e.items()]))
            out.append(z3.is_true(s))
        return out


@dataclass
class Plan:
    """Where a re-check evaluates: full grids (small ``n``), sampled sub-grids (large ``n``), and words for it."""

    grids: list  # Points without rows
    samples: list  # Points with rows/cols
    claim: list  # Points (n <= CLAIM_N) the claim itself is re-checked at
    words: str  # what was covered, for the re-check's text


def _rng_choice(rng, items: list, k: int) -> list:
    if len(items) <= k:
        return list(items)
    head = items[: max(1, k // 2)]
    rest = [x for x in items if x not in head]
    return head + rng.sample(rest, k - len(head))


def plan(masks: list, conds: list, params: dict, *, seed: int = 0, small_n: int = SMALL_N,
         large_k: int = LARGE_K, lists_per_n: int = 3) -> Plan:
    """The instances of a re-check of ``masks`` (module docstring); ``params``: name -> Z3 term of every parameter."""
    rng = random.Random(seed)
    mask = masks[0]
    fixed_n = z3.is_int_value(mask.n)
    consts = sorted(set(c for m in masks for c in constants_of(m, conds)))
    names = sorted(params)
    n_term = None if z3.is_int_value(mask.n) else _nm(mask.n)
    if fixed_n:
        small = [mask.n.as_long()] if mask.n.as_long() <= FULL_UPTO else []
        large = [] if small else [mask.n.as_long()]
    else:
        near = {c + d for c in consts for d in range(-2, 3)}
        powers = {(1 << k) + d for k in range(1, large_k + 1) for d in (-1, 0, 1)}
        small = list(range(1, small_n + 1))
        large = sorted(x for x in near | powers if small_n < x <= MAX_N)
    base_values = set(range(-2, 9)) | {c + d for c in consts for d in range(-2, 3)}

    def candidates(n: int) -> list[dict]:
        if not names:
            return [{}]
        per = []
        for _name in names:
            vals = sorted(v for v in base_values | {n + d for d in range(-2, 3)} | {n // 2} if abs(v) <= MAX_N)
            per.append(vals)
        combos: list[dict] = []
        total = 1
        for vals in per:
            total *= len(vals)
        if total <= 4000:
            import itertools

            combos = [dict(zip(names, c)) for c in itertools.product(*per)]
        else:
            combos = [dict(zip(names, [rng.choice(v) for v in per])) for _ in range(4000)]
            combos.insert(0, dict(zip(names, [min((x for x in v if x >= 0), default=v[0]) for v in per])))
        return combos

    def valid(n: int, combos: list[dict]) -> list[dict]:
        envs = []
        for c in combos:
            env = {} if fixed_n else {n_term: n}
            env.update({_nm(params[k]): v for k, v in c.items()})
            envs.append(env)
        return [c for c, ok in zip(combos, _holds(conds, envs)) if ok]

    grids: list[Point] = []
    claim: list[Point] = []
    per_small = max(1, MAX_SMALL // max(1, len(small)))
    indexed = [ix for m in masks for ix in m.indexes]
    for n in small:
        found = valid(n, candidates(n))
        found.sort(key=lambda c: [abs(c[k]) for k in names])
        chosen = _rng_choice(rng, found, per_small)
        for c in chosen:
            for lists in _lists(masks, n, lists_per_n if n <= 16 else 1, indexed):
                grids.append(point(n, c, lists))
                if n <= CLAIM_N:
                    claim.append(point(n, c, lists))
    if len(claim) > MAX_CLAIM:
        claim = _rng_choice(rng, claim, MAX_CLAIM)
    samples: list[Point] = []
    large_done: list[int] = []
    if not indexed:
        for n in large:
            found = valid(n, candidates(n))
            found.sort(key=lambda c: [abs(c[k]) for k in names])
            for c in _rng_choice(rng, found, PER_LARGE_N):
                sizes = [size_at(m, point(n, c)) for m in masks]
                size = sizes[0]
                if size <= FULL_UPTO:
                    grids.append(point(n, c))
                else:
                    idx = _sample_positions(rng, size, consts, c, masks, n)
                    samples.append(point(n, c, None, idx, idx))
                if n not in large_done:
                    large_done.append(n)
    words = _words(grids, samples, small, large_done, consts, bool(indexed))
    return Plan(grids, samples, sorted(set(claim), key=lambda p: (p.n, p.params, p.lists)), words)


def _lists(masks: list, n: int, count: int, indexed: list) -> list[dict]:
    if not indexed:
        return [{}]
    from hasse.solvers.symbolic.catalog import index_instances

    carrier = max(masks, key=lambda m: len(m.indexes))
    return index_instances(carrier, n, limit=count)


def _sample_positions(rng, size: int, consts: list, params: dict, masks: list, n: int) -> list[int]:
    """At most SAMPLE positions: the ends, stream starts and constants ± 2, then seeded random ones with neighbours."""
    special = {0, 1, 2, size - 1, size - 2, size - 3, n - 1, n, n + 1}
    for c in list(consts) + list(params.values()):
        special |= {c + d for d in range(-2, 3)}
    for m in masks:
        for _name, start in m.streams:
            try:
                s = int(evaluate(start, _env(m, point(n, params)))) if isinstance(start, z3.ExprRef) else int(start)
            except Unevaluable:
                continue
            special |= {s + d for d in range(-2, 3)}
    chosen = sorted(x for x in special if 0 <= x < size)
    chosen = chosen[:3] + chosen[3:][-(SAMPLE // 2 - 3):] if len(chosen) > SAMPLE // 2 else chosen
    out = set(chosen)
    while len(out) < min(SAMPLE, size) - 2:
        c = rng.randrange(size)
        out |= {x for x in (c - 1, c, c + 1) if 0 <= x < size}
    return sorted(out)


def _span(values: list[int]) -> str:
    """``1…64`` or ``998…1002, 2047…2049``: runs of consecutive integers."""
    values = sorted(set(values))
    runs, start, prev = [], None, None
    for v in values:
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            runs.append((start, prev))
            start = prev = v
    if start is not None:
        runs.append((start, prev))
    parts = [f"{a}…{b}" if b > a else f"{a}" for a, b in runs]
    return ", ".join(parts[:6]) + (f", … ({len(parts) - 6} more runs)" if len(parts) > 6 else "")


def _words(grids, samples, small, large, consts, indexed) -> str:
    ns = sorted({p.n for p in grids if p.n <= SMALL_N})
    parts = [f"n = {_span(ns)}"] if ns else []
    near = sorted({p.n for p in grids + samples if p.n > SMALL_N and any(abs(p.n - c) <= 2 for c in consts)})
    if near:
        parts.append(f"constants and bounds ± 2 (n = {_span(near)})")
    powers = sorted({p.n for p in grids + samples if p.n > SMALL_N and p.n not in near})
    if powers:
        parts.append(f"2^k ± 1 up to n = {max(powers)}")
    text = ", ".join(parts)
    if samples:
        text += f"; {len(samples)} of them sampled on at most {SAMPLE} x {SAMPLE} positions"
    if indexed:
        text += "; index tensors: a few instances at each n"
    return f"{len(grids) + len(samples)} instances ({text})"


# ---------------------------------------------------------------- program = formula


def _describe(v) -> str:
    return "allowed" if bool(v) else "blocked"


def check_program(masks: list, the_plan: Plan) -> str | None:
    """The program of each mask against its formula at every point of the plan: None (they agree), or
    ``"DISAGREES: …"``, or ``"not re-checked: …"`` when a program cannot be run at all."""
    points = the_plan.grids + the_plan.samples
    for mask in masks:
        program = getattr(mask, "program", None)
        if program is None:
            continue
        own = [Point(p.n, tuple((k, v) for k, v in p.params if k in mask.params),
                     tuple((k, v) for k, v in p.lists if k in {ix.name for ix in mask.indexes}), p.rows, p.cols)
               for p in points if p.rows is None or program.can_sample]
        try:
            program.prefetch(own)
        except InputError as exc:  # the whole run failed: the file, a timeout
            return f"not re-checked: the program {program.name} could not be run ({_one_line(exc)})"
        for p in own:
            problem = _compare(mask, program, p)
            if problem:
                return problem
    return None


def _compare(mask, program, p: Point) -> str | None:
    try:
        got = program.result(p)
    except ProgramFailure as exc:
        return disagreement(f"the program raises at {p.where()} ({exc}) where the claim holds (a bug of the kit)")
    try:
        size = size_at(mask, p)
        if p.rows is None and got.shape != (size, size):
            return disagreement(f"the program gives {got.shape[0]} positions at {p.where()}, the formula's size is "
                   f"{size} (a bug of the kit)")
        want, undef = formula_at(mask, p, p.rows, p.cols)
        problem = _obligations(mask, p, p.rows, p.cols, got)
        if problem:
            return problem
    except Unevaluable as exc:
        return f"not re-checked: the formula of {mask.name} at {p.where()}: {exc}"
    rows = np.arange(size) if p.rows is None else np.asarray(p.rows)
    cols = np.arange(size) if p.cols is None else np.asarray(p.cols)
    if undef is not None:
        i, j = (int(x) for x in np.argwhere(undef)[0])
        return disagreement(f"the traced formula is undefined (a divisor 0) at {p.where()}, pair ({rows[i]}, "
               f"{cols[j]}), where the program says {_describe(got[i, j])} (a bug of the kit)")
    diff = np.asarray(want, dtype=bool) != got
    if diff.any():
        i, j = (int(x) for x in np.argwhere(diff)[0])
        return disagreement(f"the traced formula and the program differ at {p.where()}, pair ({rows[i]}, {cols[j]}): "
               f"the program says {_describe(got[i, j])}, the formula says {_describe(want[i, j])} (a bug of the kit)")
    return None


def _obligations(mask, p: Point, rows, cols, got) -> str | None:
    """An obligation (a divisor not 0, a lookup inside a tensor) false on the grid: the program fails there."""
    if not mask.obligations:
        return None
    env, rows, cols = _grid_env(mask, p, rows, cols)
    for ob, why in mask.obligations:
        try:
            values, undef = evaluate_partial(ob, env, shape=(len(rows), len(cols)))
        except Unevaluable:
            continue
        bad = ~np.asarray(values, dtype=bool)
        if undef is not None:
            bad = bad & ~undef
        if bad.any():
            i, j = (int(x) for x in np.argwhere(bad)[0])
            return disagreement(f"the program fails ({why}) at {p.where()}, pair ({rows[i]}, {cols[j]}), "
                   f"inside the claim's domain (a bug of the kit)")
    return None


def equal_programs(a, b, the_plan: Plan) -> str | None:
    """The two masks' programs (or formulas) give the same grids and samples at every point: None, or DISAGREES."""
    for p in the_plan.grids + the_plan.samples:
        try:
            if p.rows is None:
                ga, gb = mask_grid(a, p.n, p.param_dict, p.list_dict), mask_grid(b, p.n, p.param_dict, p.list_dict)
            else:
                ga, gb = _sample_of(a, p), _sample_of(b, p)
        except ProgramFailure as exc:
            return disagreement(f"a program raises at {p.where()} ({exc}) where the claim holds (a bug of the kit)")
        except (InputError, Unevaluable) as exc:
            return f"not re-checked: at {p.where()}: {_one_line(exc)}"
        if ga.shape != gb.shape:
            return disagreement(f"proved equivalent, but the programs have {ga.shape[0]} and {gb.shape[0]} positions "
                   f"at {p.where()}")
        diff = ga != gb
        if diff.any():
            i, j = (int(x) for x in np.argwhere(diff)[0])
            rows = np.arange(ga.shape[0]) if p.rows is None else np.asarray(p.rows)
            cols = np.arange(ga.shape[1]) if p.cols is None else np.asarray(p.cols)
            return disagreement(f"proved equivalent, but the programs differ at {p.where()}, pair ({rows[i]}, "
                   f"{cols[j]}): {a.name} says {_describe(ga[i, j])}, {b.name} says {_describe(gb[i, j])} "
                   f"(a bug of the kit)")
    return None


def _sample_of(mask, p: Point) -> np.ndarray:
    program = getattr(mask, "program", None)
    own = {k: v for k, v in p.params if k in mask.params}
    if program is not None:
        return program.sample(p.n, own, p.rows, p.cols)
    values, undef = formula_at(mask, point(p.n, own), p.rows, p.cols)
    if undef is not None:
        raise Unevaluable(f"the formula of {mask.name} is undefined at {p.where()}")
    return np.asarray(values, dtype=bool)


# ---------------------------------------------------------------- a model's index tensors, for a refutation


def lists_from_model(masks: list, model, n: int, pairs: Sequence) -> dict:
    """Concrete values of the masks' index tensors for a refutation's re-check: the model's values at every
    place the masks look up at ``pairs`` (position pairs), completed to a tensor of the declared property.

    The axioms hold only at the lookups, so the model's other values need not have the property;
    they are filled in: ``nondecreasing`` with the nearest earlier looked-up value (the first one
    before it), ``bijection`` with the unused values in order, ``backward`` with roots (-1),
    ``any`` with 0. An ancestry relation (a tree's) is not rebuilt here: left out.

    >>> n = z3.Int("n"); q, k = z3.Ints("q0 k0")
    >>> from hasse.solvers.symbolic.terms import SymIndex, SymInt
    >>> ix = SymIndex("doc", "nondecreasing", SymInt(n, None)); ix.lookups = [q, k]
    >>> class M: indexes, q, k = [ix], q, k
    >>> s = z3.Solver(); s.add(ix.function(z3.IntVal(1)) == 3, ix.function(z3.IntVal(4)) == 5); _ = s.check()
    >>> lists_from_model([M], s.model(), 6, [(4, 1)])
    {'doc': [3, 3, 3, 3, 5, 5]}
    """
    out: dict = {}
    for m in masks:
        for ix in m.indexes:
            if ix.name in out or getattr(ix, "relation", None) is not None:
                continue
            fixed: dict[int, int] = {}
            for pq, pk in pairs:
                for term in ix.lookups:
                    at = z3.substitute(term, (m.q, z3.IntVal(int(pq))), (m.k, z3.IntVal(int(pk))))
                    i, v = model.eval(at, model_completion=True), model.eval(ix.function(at), model_completion=True)
                    if z3.is_int_value(i) and z3.is_int_value(v) and 0 <= i.as_long() < n:
                        fixed[i.as_long()] = v.as_long()
            out[ix.name] = _complete(ix.prop, n, fixed)
    return out


def _complete(prop: str, n: int, fixed: dict[int, int]) -> list[int]:
    if prop == "nondecreasing":
        first = fixed[min(fixed)] if fixed else 0
        values, current = [], first
        for i in range(n):
            current = fixed.get(i, current)
            values.append(current)
        return values
    if prop == "bijection":
        free = iter(sorted(set(range(n)) - set(fixed.values())))
        return [fixed[i] if i in fixed else next(free) for i in range(n)]
    if prop == "backward":
        return [fixed.get(i, -1) for i in range(n)]
    return [fixed.get(i, 0) for i in range(n)]


def prefetch_grids(masks: list, instances: Sequence, limit: int = 4) -> None:
    """Evaluate each mask's program at these ``(n, params)`` (and ``limit`` index instances each, as the claims'
    re-checks read them) in one batch: one child run for a mask_mod instead of one per grid."""
    indexed = [ix for m in masks for ix in m.indexes]
    for mask in masks:
        program = getattr(mask, "program", None)
        if program is None:
            continue
        names = {ix.name for ix in mask.indexes}
        points = []
        for n, params in instances:
            own = {k: v for k, v in dict(params).items() if k in mask.params}
            for lists in _lists(masks, n, limit, indexed):
                points.append(point(n, own, {k: v for k, v in lists.items() if k in names}))
        try:
            program.prefetch(points)
        except InputError:  # the grids are asked for again one by one, and say why there
            pass

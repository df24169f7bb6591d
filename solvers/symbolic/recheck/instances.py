"""Where a re-check evaluates (:func:`plan`): every small ``n``, ``n`` near the constants, ``2^k ± 1``.

Every ``n <= 64``; ``n`` within ±2 of every constant of the program (``SymbolicMask.constants``
and the integer literals of the formula, size and side conditions); ``2^k - 1, 2^k, 2^k + 1``
for ``k <= 20`` (on a sampled sub-grid of at most 256 x 256 positions: 0, 1, 2, the last
ones, the stream starts and constants ± 2, and seeded random positions with their
neighbours); the parameters at every value in ``-2 … 8``, within ±2 of the constants and of
``n`` (a bounded, seeded choice per ``n``), each instance satisfying the side conditions.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import z3

from hasse.solvers.symbolic.catalog import index_instances
from hasse.solvers.symbolic.evaluate import Unevaluable, evaluate, evaluate_partial
from hasse.solvers.symbolic.programs import Point, point
from hasse.solvers.symbolic.recheck.grids import _env, _nm, size_at
from hasse.theory.errors import InputError

SMALL_N = 64  # every n up to this, full grids
CLAIM_N = 12  # the claim itself on the program at instances up to this n
LARGE_K = 20  # 2^k ± 1 up to this k
FULL_UPTO = 256  # a grid of at most this many positions is evaluated whole; larger ones sampled
SAMPLE = 256  # rows (and columns) of a sampled sub-grid
MAX_SMALL = 600  # instances with n <= SMALL_N
MAX_CLAIM = 48  # instances the claim is re-checked at
PER_LARGE_N = 2  # parameter choices per large n
MAX_N = 2 ** 31  # the domain bound of every statement (theory.limits.MAX_SYMBOLIC_VALUE)


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

    # parameters of several masks that share one symbol (conv:width=W, sliding_window:w=W) take one value
    shared: dict[str, list[str]] = {}
    for name in names:
        shared.setdefault(_nm(params[name]), []).append(name)
    groups = list(shared.values())

    def candidates(n: int) -> list[dict]:
        if not names:
            return [{}]
        per = []
        for _group in groups:
            vals = sorted(v for v in base_values | {n + d for d in range(-2, 3)} | {n // 2} if abs(v) <= MAX_N)
            per.append(vals)
        total = 1
        for vals in per:
            total *= len(vals)
        if total <= 4000:
            picks = list(itertools.product(*per))
        else:
            picks = [tuple(rng.choice(v) for v in per) for _ in range(4000)]
            picks.insert(0, tuple(min((x for x in v if x >= 0), default=v[0]) for v in per))
        out = [{name: value for group, value in zip(groups, pick) for name in group} for pick in picks]
        return [{name: c[name] for name in names} for c in out]  # in the names' order, as without sharing

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

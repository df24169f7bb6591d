"""symbolic_forms_match_programs — the formula the tracer makes of a mask program is the program, at every length checked.

Statement. For every length ``m = 1 … n``:

- every catalogue mask with a symbolic form (:func:`solvers.symbolic.catalog.names`, traced
  with every integer parameter and ``n`` left symbolic, and ``block_two_stream`` also with
  ``variant=clique``), at every parameter value of the list below: the side conditions of
  the symbolic form hold exactly when the catalogue's builder (:func:`theory.catalog.build_mask`,
  the program run concretely) accepts the values; then the size term is the built mask's
  size, the formula at every ``(q, k)`` of the grid is the built mask's entry, and every
  obligation (a divisor never 0, a lookup in range) holds there. Values: ``w = 0 … m+1``,
  ``d = 0 … m``, ``p = 0 … m+1``, ``l = 1 … m+1``, ``c = 0 … m+1``;
- the masks over index tensors, with the tensor fixed (:func:`~solvers.symbolic.catalog.fix_index`)
  to every value of its kind: ``document`` (both ``causal``) for every composition of ``m``
  as its lengths, ``xlnet`` for every order (a permutation of ``0 … m-1``), ``tree`` for
  every parent array (each node's parent ``-1`` or an earlier node) with prefix ``0, 1, 2``;
- the mask_mods of :data:`~proofs.symbolic_programs.PROGRAMS` (written to use what the
  tracer models: ``//`` and ``%`` of negative numbers, ``abs``, ``**``, ``if``/``else`` and ``and``/``or`` on symbolic
  values, chained comparisons, ``& | ^ ~``, ``np.where``, ``np.maximum``/``np.minimum``,
  ``np.logical_*``, ``np.clip``, a read of ``h`` over two heads), traced by
  :func:`solvers.symbolic.mask.from_mask_mod`: the formula at every ``(q, k)`` equals the
  program run on index arrays (``q`` a column, ``k`` a row: ``& | ~`` act on bool arrays, as
  on FlexAttention's tensors), and so does the kit's grid of it
  (:func:`theory.inputs.mask_mod.evaluate_mask_mod`); always the union over ``h``. A program that
  branches on its values (``if``, ``and``, chained comparisons) cannot run on tensors (torch
  and numpy raise): the tracer must refuse it as a tensor used as a truth value;
- a rule factory that branches on its parameter (:func:`~proofs.symbolic_programs.make_paths`: ``if``/``elif`` on ``w``
  and ``n``, Python values, so every path is run), traced with ``n`` and ``w`` symbolic, equals
  the factory run on index arrays at every ``w = 0 … m + 2``.

For ``n >= 6`` the orders and parent arrays are a seeded sample of 120 per length (the
verdict line says "sample … not a full proof"); everything else stays complete.

What a verdict covers. The tracer (:mod:`solvers.symbolic.trace`, :mod:`~solvers.symbolic.terms`),
the symbolic masks (:mod:`~solvers.symbolic.mask`) and the catalogue's symbolic forms
(:mod:`~solvers.symbolic.catalog`), and the concrete mask_mod grid, as they are in this
checkout, at those lengths and values. It says nothing about lengths above ``n``: that is
what ``hasse prove-mask`` proves, with these formulas.

The references here: the catalogue's builders and the programs run on integers; the
formula is evaluated by substituting numbers and simplifying with Z3 (never
``SymbolicMask.concrete``).

Counterexample: the mask (spec or program), ``m``, the values, and the first entry (or
condition, size, obligation) where the formula and the program differ.

Exhaustive method only (:mod:`proofs.engine_checks`): the tracer is Python. n = 4 takes
a few seconds (tracing the catalogue dominates).

References: design.md §5 (Proofs for every length); docs/architecture.md.
"""

from __future__ import annotations

import itertools
import time
from functools import lru_cache

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import NO_Z3, safely
from hasse.proofs.symbolic_programs import (PROGRAMS, first_difference, formula_problem, grid, make_paths, on_arrays,
                                            value, z3_module)
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Theorem
from hasse.solvers.task_sets import compositions

NAME = "symbolic_forms_match_programs"
STATEMENT = ("for every length up to n, every catalogue mask with a symbolic form at every parameter value (and "
             "every index tensor value) and a set of mask_mods equal, entry by entry, the programs run concretely; "
             "the side conditions hold exactly where the builders accept")
NOT_INVARIANT = ("the statement compares formulas and programs entry by entry at every position, not a property "
                 "of one mask up to relabelling")
FULL_UPTO = 5  # every order and parent array up to this length; a seeded sample beyond
SAMPLE = 120
SEED = 0


# --------------------------------------------------------------------------- the catalogue


def values_of(name: str, m: int) -> list[dict]:
    if name in ("causal", "bidirectional", "butterfly"):
        return [{}]
    if name == "sliding_window":
        return [{"window": w} for w in range(0, m + 2)]
    if name == "sliding_window_distance":
        return [{"d": d} for d in range(0, m + 1)]
    if name == "prefix_lm":
        return [{"prefix": p} for p in range(0, m + 2)]
    if name in ("block_causal", "bd3lm", "block_two_stream", "block_two_stream:variant=clique"):
        return [{"block": b} for b in range(1, m + 2)]
    if name in ("sparse_causal", "sparse_butterfly"):
        return [{"layers": layers, "tile": tile} for layers in (1, 2, 3) for tile in (0, 2)]
    if name == "sparse_block_two_stream":
        return [{"block": b, "layers": layers, "tile": tile} for b in range(1, m + 2) for layers in (1, 2, 3)
                for tile in (0, 2)]
    if name == "sparse_block_causal":
        return [{"block": b, "layers": layers, "units": u} for b in range(1, m + 2) for layers in (1, 2, 3)
                for u in (0, 2)]
    if name == "sparse_chunked":
        return [{"chunk": c, "layers": layers, "tile": tile} for c in range(1, m + 2) for layers in (1, 2, 3)
                for tile in (0, 2)]
    if name == "sparse_prefix_lm":
        return [{"prefix": p, "layers": layers} for p in range(0, m + 1) for layers in (1, 2, 3)]
    if name in ("chunked", "recurrent"):
        return [{"chunk": c} for c in range(0, m + 2)]
    if name == "conv":
        return [{"width": w} for w in range(0, m + 2)]
    raise ValueError(f"no parameter values written for {name}")


def spec_of(name: str, m: int, params: dict) -> str:
    base, _, extra = name.partition(":")
    return ",".join([f"{base}:n={m}"] + [f"{k}={v}" for k, v in params.items()] + ([extra] if extra else []))


@lru_cache(maxsize=None)
def traced(spec: str):
    from hasse.solvers.symbolic.catalog import symbolic_mask

    return symbolic_mask(spec)


def traced_names() -> list[str]:
    from hasse.solvers.symbolic.catalog import INDEXED, names

    out = [x for x in names() if x not in INDEXED]
    return out + ["block_two_stream:variant=clique"] if "block_two_stream" in out else out


def catalogue_problem(name: str, m: int, params: dict) -> dict | None:
    from hasse.theory.catalog import build_mask
    from hasse.theory.errors import InputError

    z3 = z3_module()
    spec = spec_of(name, m, params)
    sm, error = safely(lambda: traced(name))
    if error:
        return {"mask": name, "problem": f"tracing raised {error}"}
    subs = [(sm.n, z3.IntVal(m))] if not z3.is_int_value(sm.n) else []
    subs += [(sm.params[k], z3.IntVal(v)) for k, v in params.items() if k in sm.params]
    try:
        built = build_mask(spec).matrix
    except InputError:
        built = None
    accepted = [value(c, subs) for c in sm.conditions]
    where = {"mask": name, "spec": spec}
    if any(a is None for a in accepted):
        return where | {"problem": "a side condition does not reduce", "conditions": [str(c) for c in sm.conditions]}
    if all(accepted) != (built is not None):
        return where | {"problem": f"the side conditions {'accept' if all(accepted) else 'refuse'} the values, the "
                                   f"builder {'accepts' if built is not None else 'refuses'} them",
                        "conditions": [str(c) for c in sm.conditions]}
    if built is None:
        return None
    found = formula_problem(sm, subs, built)
    return where | found if found else None


def orders(m: int, rng):
    if m <= FULL_UPTO:
        yield from (list(p) for p in itertools.permutations(range(m)))
        return
    for _ in range(SAMPLE):
        yield [int(x) for x in rng.permutation(m)]


def parent_arrays(m: int, rng):
    if m <= FULL_UPTO:
        yield from (list(p) for p in itertools.product(*(range(-1, i) for i in range(m))))
        return
    for _ in range(SAMPLE):
        yield [int(rng.integers(-1, i)) for i in range(m)]


def fixed_problem(spec: str, sm, index: dict, prefix: int | None, built) -> dict | None:
    """The symbolic form ``sm`` with its index tensor fixed to ``index`` against the built mask."""
    from hasse.solvers.symbolic.catalog import fix_index

    z3 = z3_module()
    where = {"mask": spec, "index": index} | ({"prefix": prefix} if prefix is not None else {})
    fixed, error = safely(lambda: fix_index(sm, **index))
    if error:
        return where | {"problem": f"fix_index raised {error}"}
    subs = [(t, z3.IntVal(prefix)) for key, t in fixed.params.items() if key == "prefix"]
    found = formula_problem(fixed, subs, built)
    return where | found if found else None


def indexed_problems(m: int, rng, counter: list, ctx: Context) -> dict | None:
    from hasse.theory.catalog import build_mask

    for causal in ("false", "true"):
        sm = traced(f"document:causal={causal}")
        for lengths in compositions(m):
            if ctx.expired():
                return {"timeout": True}
            counter[0] += 1
            ids = [i for i, length in enumerate(lengths) for _ in range(length)]
            built = build_mask(f"document:lengths={'+'.join(map(str, lengths))},causal={causal}").matrix
            found = fixed_problem(f"document:causal={causal}", sm, {"doc": ids}, None, built)
            if found:
                return found
    sm = traced("xlnet")
    for order in orders(m, rng):
        if ctx.expired():
            return {"timeout": True}
        counter[0] += 1
        rank = [0] * m
        for place, token in enumerate(order):
            rank[token] = place
        built = build_mask(f"xlnet:order={'+'.join(map(str, order))}").matrix
        found = fixed_problem("xlnet", sm, {"rank": rank}, None, built)
        if found:
            return found
    sm = traced("tree")
    for parents in parent_arrays(m, rng):
        if ctx.expired():
            return {"timeout": True}
        for prefix in (0, 1, 2):
            counter[0] += 1
            built = build_mask(f"tree:parents={'+'.join(map(str, parents))},prefix={prefix}").matrix
            found = fixed_problem("tree", sm, {"parent": parents}, prefix, built)
            if found:
                return found
    return None


# --------------------------------------------------------------------------- mask_mods


@lru_cache(maxsize=None)
def traced_program(name: str):
    from hasse.solvers.symbolic.mask import from_mask_mod

    _, fn, heads, _ = next(p for p in PROGRAMS if p[0] == name)
    return from_mask_mod(name, fn, heads=heads)


def program_problem(name: str, m: int) -> dict | None:
    from hasse.theory.inputs.mask_mod import evaluate_mask_mod

    z3 = z3_module()
    _, fn, heads, arrays = next(p for p in PROGRAMS if p[0] == name)
    where = {"mask_mod": name, "m": m}
    sm, error = safely(lambda: traced_program(name))
    if not arrays:  # it branches on its tensors: torch raises there, so the tracer must refuse it
        _, raised = safely(lambda: on_arrays(fn, heads, max(m, 2)))
        if raised is None:
            return where | {"problem": "a program that branches on its values ran on index arrays"}
        if error is None or "truth value" not in error:
            return where | {"problem": f"traced a program that cannot run on tensors ({error or 'no error'})"}
        return None
    if error:
        return where | {"problem": f"tracing raised {error}"}
    want = on_arrays(fn, heads, m)
    subs = [(sm.n, z3.IntVal(m))]
    if not all(value(c, subs) is True for c in sm.conditions):
        return where | {"problem": f"the side conditions refuse n = {m}", "conditions": [str(c) for c in sm.conditions]}
    found = formula_problem(sm, subs, want, sized=False)
    if found:
        return where | found
    if arrays:
        union, error = safely(lambda: np.any([evaluate_mask_mod(fn, m, h=h) for h in range(heads or 1)], axis=0))
        if error or not np.array_equal(union, want):
            return where | {"problem": "the numpy grid differs from the program on integers",
                            "grid": error or union.astype(int).tolist(), "program": want.astype(int).tolist()}
    return None


@lru_cache(maxsize=None)
def traced_paths():
    from hasse.solvers.symbolic.mask import from_rule

    return from_rule("make_paths", make_paths, params={"n": None, "w": None})


def paths_problem(m: int) -> dict | None:
    """``make_paths`` traced with ``n`` and ``w`` symbolic equals the factory run on index arrays at ``w = 0 … m + 2``."""
    z3 = z3_module()
    sm, error = safely(traced_paths)
    if error:
        return {"factory": "make_paths", "problem": f"tracing raised {error}"}
    q, k = np.arange(m)[:, None], np.arange(m)[None, :]
    for w in range(m + 3):
        want = np.broadcast_to(np.asarray(make_paths(m, w)(q, k), dtype=bool), (m, m))
        got = grid(sm, [(sm.n, z3.IntVal(m)), (sm.params["w"], z3.IntVal(w))], m)
        if isinstance(got, str):
            return {"factory": "make_paths", "w": w, "problem": got}
        if not np.array_equal(got, want):
            return {"factory": "make_paths", "w": w} | first_difference(got, want)
    return None


def exhaustive_check(n: int, ctx: Context) -> Outcome:
    start = time.monotonic()
    rng = np.random.default_rng([SEED, n])
    details = {"methods": NO_Z3, "lengths": [1, n], "scope": "all" if n <= FULL_UPTO else "sample"}
    counter = [0]
    for m in range(1, n + 1):
        if ctx.expired():
            return Outcome(UNKNOWN, counter[0], reason=f"timeout after lengths 1 … {m - 1}", details=details)
        for name in traced_names():
            if ctx.expired():
                return Outcome(UNKNOWN, counter[0], reason=f"timeout at length {m}", details=details)
            for params in values_of(name, m):
                counter[0] += 1
                found = catalogue_problem(name, m, params)
                if found:
                    return Outcome(REFUTED, counter[0], counterexample={"m": m} | found, details=details)
        found = indexed_problems(m, rng, counter, ctx)
        if found and found.get("timeout"):
            return Outcome(UNKNOWN, counter[0], reason=f"timeout at length {m}", details=details)
        if found:
            return Outcome(REFUTED, counter[0], counterexample={"m": m} | found, details=details)
        for name, *_ in PROGRAMS:
            counter[0] += 1
            found = program_problem(name, m)
            if found:
                return Outcome(REFUTED, counter[0], counterexample={"m": m} | found, details=details)
        counter[0] += 1
        found = paths_problem(m)
        if found:
            return Outcome(REFUTED, counter[0], counterexample={"m": m} | found, details=details)
    details["engine_seconds"] = round(time.monotonic() - start, 4)
    reason = (f"sample: {SAMPLE} orders and parent arrays per length above {FULL_UPTO} (seed {SEED}), not a full "
              "proof" if n > FULL_UPTO else None)
    return Outcome(PROVED, counter[0], reason=reason, details=details | ({"sample": SAMPLE, "seed": SEED}
                                                                          if n > FULL_UPTO else {}))


THEOREM = Theorem(NAME, STATEMENT, exhaustive_check, None, not_invariant=NOT_INVARIANT)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

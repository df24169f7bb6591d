"""stack_flow_matches_products — the stack engine behind ``hasse analyze --stack`` and ``leak --stack`` gives the Boolean products of its layers.

Statement. For every stack of the class below (layers ``M_1 … M_d`` of size ``n``, zero
diagonal, ``A_i = M_i or I``, the stack repeated forever), with ``R(0) = I`` and
``R(L) = A_((L-1) mod d + 1) · R(L-1)`` (Boolean products), the engine of design.md §2
"Different masks per layer" returns exactly:

- :func:`theory.stack.propagate` (default: to convergence): ``first[q, k] = min{L : R(L)[q, k]}``
  (``-1`` never), the limit ``R*`` = the reflexive–transitive closure of ``M_1 or … or M_d``,
  ``converged = min{L : R(L) = R*}``, ``reach(L) = R(L)`` for every ``L`` up to
  ``converged + d + 1``, the receptive field of ``q`` (``min{L : R(L)[q] = R*[q]}``),
  ``first_sight``; the *interval* engine exactly when every ``A_i`` has rows that are one
  run ``lo[q] … hi[q]`` with ``lo`` and ``hi`` non-decreasing (else the product engine),
  and the other engine forced gives the same ``first`` (the interval engine forced on
  another stack is refused); ``until_converged=False`` for ``d`` layers: ``first`` cut at
  ``computed`` layers, ``converged`` none or the true one, ``reach`` beyond refused
  unless converged;
- :meth:`~theory.stack.StackFlow.witness` ``(k, q)``: a walk ``k = v_0 … v_m = q`` whose
  hop ``i`` is an edge of the layer it names (``M[v_(i+1), v_i]``, ``v_(i+1) ≠ v_i``, layer
  numbers strictly increasing, cycling the stack), arriving at layer ``first[q, k]``;
  refused when ``q`` never sees ``k``;
- :func:`theory.stack_leak.find_stack_leaks` on the task below, under ``attend-all``
  (every empty row of a layer, diagonal included, made all true, layer by layer) and
  ``attend-none``: a leak ``(p, t)`` iff some holder ``j`` of ``t`` has ``R*[p, j]``, with
  ``depth = min first[p, j]`` over holders, the source the holder seen first (then the
  smallest position), a valid witness with its ``hop_layers``; ``leaks_within(L)`` keeps
  depths ``<= L``; isolation likewise per position and foreign group; ``empty_rows`` the
  rows empty in some layer; ``leak_free``; :func:`~theory.stack_leak.find_stack_flows` from
  ``{0, n-1}`` to every position likewise, in sink order.

The class of stacks. For ``n <= 2``: every stack of one, two and three layers (4 + 16 + 64
at n = 2; the same mask object wherever a mask repeats, as ``causal x2`` builds it). For
``n >= 3``: a seeded sample of 512 stacks (seed ``[0, n]``), half of one to three uniform
masks (a third layer repeats the first layer's object), half of one to three
monotone-interval masks (random non-decreasing ``lo <= q <= hi``); the verdict line says
"sample … not a full proof". (Every stack of one or two layers at n = 3, 4,160 stacks,
takes about ten seconds of CPU with the leak checks: more than the rest of ``prove all
--n 3``.) The task: position ``i < n-1`` holds ``agg(x_i, x_(i+1))``, the last one ``x_0``; every position asks every
target; isolation groups ``{0}`` and ``{1 … n-2}`` (``{0}``, ``{1}`` at n = 2).

What a verdict covers. :mod:`theory.stack` (``propagate``, both engines, ``StackFlow``) and
:mod:`theory.stack_leak` (``apply_stack_policy``, ``find_stack_leaks``,
``find_stack_isolation``, ``find_stack_flows``) as they are in this checkout, on that class.
The references (:mod:`proofs.stack_reference`) share no code with them: integer matrix
products, a Warshall closure, runs read off each row.

Counterexample: the stack's layers, the quantity that differs (with the policy and task
where it applies), the engine's value and the definition's (an exception of the engine is
a difference too).

Exhaustive method only (:mod:`proofs.engine_checks`): the engine is Python, so no Z3
encoding can call it. The n = 4 sample takes about two seconds on one core.

References: design.md §2 (different masks per layer), §3 (leaks), §5; docs/architecture.md.
"""

from __future__ import annotations

import itertools
import time
from functools import lru_cache

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import NO_Z3, check_each, safely
from hasse.proofs.mask_checks import rows01
from hasse.proofs.stack_reference import definition, filled, nearest, reach_at, task_parts, walk_problem
from hasse.proofs.theorem import Context, Outcome, Theorem
from hasse.solvers import class_sizes
from hasse.theory import batch

NAME = "stack_flow_matches_products"
STATEMENT = ("for every stack of one to three masks (n <= 2; a seeded sample beyond), propagate/StackFlow (first "
             "arrival, R(L), convergence, receptive field, witnesses, both engines) and the stack leaks, isolation "
             "and flows equal the Boolean products of the layers' A_i = M_i or I")
NOT_INVARIANT = ("a stack's engine is code that could treat positions or layers differently, and a stack is "
                 "not one mask: no class enumeration applies")
FULL_UPTO = 2  # every stack of one to three layers up to this size; a seeded sample beyond
MAX_DEPTH = 3
SAMPLE = 512
SEED = 0
POLICIES = ("attend-all", "attend-none")


# --------------------------------------------------------------------------- the engine, compared


def _same(x, y) -> bool:
    return np.shape(x) == np.shape(y) and bool(np.array_equal(x, y))


def _j(value):
    if isinstance(value, np.ndarray):
        return value.astype(int).tolist()
    return value


def flow_problem(stack, layers: list[np.ndarray], ref: dict) -> dict | None:
    """The first quantity of ``propagate`` that differs from the definition, or None."""
    from hasse.theory.stack import propagate

    n, d = len(layers[0]), len(layers)
    flow, error = safely(lambda: propagate(stack))
    if error:
        return {"quantity": "propagate raised", "engine": error}
    got = {"engine": flow.engine, "converged": flow.converged, "first": np.asarray(flow.first),
           "limit": np.asarray(flow.limit), "receptive_field": np.asarray(flow.receptive_field()).tolist()}
    want = {"engine": ref["engine"], "converged": ref["converged"], "first": ref["first"], "limit": ref["limit"],
            "receptive_field": ref["receptive"]}
    for key, value in want.items():
        if not _same(got[key], value):
            return {"quantity": key, "engine": _j(got[key]), "definition": _j(value)}
    for L in range(ref["converged"] + d + 2):
        r, error = safely(lambda: np.asarray(flow.reach(L)))
        if error or not _same(r, reach_at(ref, L)):
            return {"quantity": f"R({L})", "engine": error or _j(r), "definition": _j(reach_at(ref, L))}
    for q in range(n):
        for k in range(n):
            f = int(ref["first"][q, k])
            sight = flow.first_sight(q, k)
            if sight != (None if f < 0 else f):
                return {"quantity": f"first_sight({q}, {k})", "engine": sight, "definition": None if f < 0 else f}
            got_w, error = safely(lambda: flow.witness(k, q))
            if f < 0:
                if error is None or not error.startswith("InputError"):
                    return {"quantity": f"witness({k}, {q})", "engine": error or repr(got_w),
                            "definition": f"refused: {q} never sees {k}"}
                continue
            if error:
                return {"quantity": f"witness({k}, {q})", "engine": error, "definition": f"a walk arriving at {f}"}
            problem = walk_problem(got_w[0], got_w[1], layers, k, q, f)
            if problem:
                return {"quantity": f"witness({k}, {q})", "engine": problem, "definition": f"a walk arriving at {f}"}
    other = "product" if ref["engine"] == "interval" else "interval"
    forced, error = safely(lambda: propagate(stack, engine=other))
    if other == "product":
        if error or not _same(np.asarray(forced.first), ref["first"]) or forced.converged != ref["converged"]:
            return {"quantity": "first (product engine forced)", "engine": error or _j(np.asarray(forced.first)),
                    "definition": _j(ref["first"])}
    elif error is None or not error.startswith("InputError"):
        return {"quantity": "interval engine forced on a stack that is not monotone-interval",
                "engine": error or "accepted", "definition": "refused"}
    cut, error = safely(lambda: propagate(stack, d, until_converged=False))
    if error:
        return {"quantity": "propagate(until_converged=False) raised", "engine": error}
    if cut.converged not in (None, ref["converged"]) or (cut.converged is None and cut.computed != d):
        return {"quantity": "computed, converged (until_converged=False)", "engine": [cut.computed, cut.converged],
                "definition": [d, f"None or {ref['converged']}"]}
    want_cut = np.where(ref["first"] <= cut.computed, ref["first"], -1)
    if not _same(np.asarray(cut.first), want_cut):
        return {"quantity": f"first within {cut.computed} layers", "engine": _j(np.asarray(cut.first)),
                "definition": _j(want_cut)}
    if cut.converged is None:
        beyond, error = safely(lambda: cut.reach(cut.computed + 1))
        if error is None or not error.startswith("InputError"):
            return {"quantity": f"R({cut.computed + 1}) of a flow cut at {cut.computed} layers",
                    "engine": error or "answered", "definition": "refused"}
    return None


def _violations_problem(found, expected: dict, key, layers, what: str) -> str | None:
    """``found`` (Leak or Flow objects) against ``expected``: {key: (depth, source)}."""
    seen = {}
    for x in found:
        kx = key(x)
        if kx in seen or kx not in expected:
            return f"{what} {x.to_json()} is {'repeated' if kx in seen else 'not a violation of the definition'}"
        seen[kx] = x
        depth, source = expected[kx]
        if (x.depth, x.source) != (depth, source):
            return f"{what} {x.to_json()}: definition depth {depth} from source {source}"
        problem = walk_problem(x.path, x.hop_layers, layers, source, x.position, depth)
        if problem:
            return f"{what} {x.to_json()}: {problem}"
    missing = sorted(set(expected) - set(seen))
    return f"{what}s {missing} not reported" if missing else None


@lru_cache(maxsize=8)
def the_task(n: int):
    from hasse.theory.task import make_task

    inputs, _, groups = task_parts(n)
    return make_task(n, inputs, [list(range(n))] * n, np.eye(n, dtype=bool), isolate=groups)


def leak_problem(stack, layers: list[np.ndarray], policy: str, ref: dict) -> dict | None:
    """What is wrong with ``find_stack_leaks`` and ``find_stack_flows`` under ``policy``, or None.

    ``ref``: the definition of the stack as given (reused when the policy reads the same masks).
    """
    from hasse.theory.stack_leak import find_stack_flows, find_stack_leaks

    n = len(layers[0])
    empty = tuple(sorted({q for m in layers for q in range(n) if not m[q].any()}))
    read = [filled(m) for m in layers] if policy == "attend-all" and empty else layers
    ref = ref if read is layers else definition(read)
    inputs, holds, groups = task_parts(n)
    where = {"policy": policy, "task": {"inputs": [list(x) for x in inputs], "isolate": groups}}
    task = the_task(n)
    report, error = safely(lambda: find_stack_leaks(task, stack, empty_rows=policy))
    if error:
        return where | {"problem": f"find_stack_leaks raised {error}"}
    if tuple(report.empty_rows) != empty:
        return where | {"problem": f"empty rows {list(report.empty_rows)}, definition {list(empty)}"}
    expected = {}
    for p in range(n):
        for t in range(n):
            hit = nearest(ref, p, [j for j in range(n) if t in holds[j]])
            if hit:
                expected[(p, t)] = hit
    problem = _violations_problem(report.leaks, expected, lambda x: (x.position, x.target), read, "leak")
    if problem:
        return where | {"problem": problem}
    for L in range(ref["converged"] + 2):
        within = sorted((x.position, x.target) for x in report.leaks_within(L))
        if within != sorted(k for k, (depth, _) in expected.items() if depth <= L):
            return where | {"problem": f"leaks_within({L}) = {within}"}
    group_of = {p: g for g, members in enumerate(groups) for p in members}
    isolation = {}
    for p, g in group_of.items():
        for h, members in enumerate(groups):
            hit = nearest(ref, p, members) if h != g else None
            if hit:
                isolation[(p, h)] = hit
    problem = _violations_problem(report.isolation, isolation, lambda x: (x.position, group_of.get(x.source)), read,
                                  "isolation flow")
    if problem:
        return where | {"problem": problem}
    if report.leak_free != (not expected and not isolation):
        return where | {"problem": f"leak_free = {report.leak_free}"}
    sources = sorted({0, n - 1})
    flows, error = safely(lambda: find_stack_flows(stack, sources, range(n), empty_rows=policy))
    where = {"policy": policy, "flow": f"from {sources} to every position"}
    if error:
        return where | {"problem": f"find_stack_flows raised {error}"}
    want = {(p, 0): hit for p in range(n) if (hit := nearest(ref, p, sources))}
    problem = _violations_problem(flows, want, lambda x: (x.position, 0), read, "flow")
    if problem:
        return where | {"problem": problem}
    if [x.position for x in flows] != sorted(x.position for x in flows):
        return where | {"problem": f"flows not in sink order: {[x.position for x in flows]}"}
    return None


def difference(layers: list[np.ndarray]) -> dict | None:
    """The first wrong answer of the stack engine on the stack ``layers`` (list of masks), or None."""
    from hasse.theory.stack import LayerStack, StackLayer

    objects: dict[int, StackLayer] = {}
    built = []
    for i, m in enumerate(layers):  # one StackLayer (one mask object) per distinct array, as `x2` builds it
        built.append(objects.setdefault(id(m), StackLayer(m, f"layer {i + 1}")))
    stack = LayerStack(tuple(built), ", ".join(layer.spec for layer in built))
    ref = definition(layers)
    found = flow_problem(stack, layers, ref)
    if found:
        return found
    for policy in POLICIES:
        found = leak_problem(stack, layers, policy, ref)
        if found:
            return found
    return None


# --------------------------------------------------------------------------- the class of stacks


def all_masks(n: int) -> list[np.ndarray]:
    from hasse.solvers import exhaustive as ex

    masks = batch.unpack(batch.masks_from_indices(n, np.arange(ex.space_size(n), dtype=np.uint64)), n)
    return [np.ascontiguousarray(m) for m in masks]


def interval_mask(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random monotone-interval mask (zero diagonal): non-decreasing ``lo[q] <= q <= hi[q]``."""
    lo = np.maximum.accumulate([int(rng.integers(0, q + 1)) for q in range(n)])
    hi = np.maximum.accumulate([int(rng.integers(q, n)) for q in range(n)])
    cols = np.arange(n)
    mask = (cols[None, :] >= lo[:, None]) & (cols[None, :] <= hi[:, None])
    mask[cols, cols] = False
    return mask


def stacks(n: int):
    """``(stacks, scope details)``: the class of the statement at ``n``, each a list of masks."""
    if n <= FULL_UPTO:
        masks = all_masks(n)

        def every():
            for depth in range(1, MAX_DEPTH + 1):
                for layers in itertools.product(masks, repeat=depth):
                    yield list(layers)  # a mask twice: one object, as `x2` builds it

        return every(), {"scope": "all", "stacks": space(n)}
    rng = np.random.default_rng([SEED, n])

    def sample():
        for i in range(SAMPLE):
            depth = 1 + int(rng.integers(0, 3))
            if i % 2:
                layers = [interval_mask(rng, n) for _ in range(min(depth, 2))]
            else:
                layers = list(rng.random((min(depth, 2), n, n)) < rng.uniform(0.2, 0.6))
                for m in layers:
                    m[np.arange(n), np.arange(n)] = False
            yield layers + ([layers[0]] if depth == 3 else [])

    return sample(), {"scope": "sample", "sample": SAMPLE, "seed": SEED,
                      "space": "stacks of 1-3 layers: half uniform masks, half monotone-interval masks"}


def space(n: int) -> int:
    """The stacks the check covers at ``n`` (counted without the generator)."""
    if n <= FULL_UPTO:
        return sum(class_sizes.masks(n) ** depth for depth in range(1, MAX_DEPTH + 1))
    return SAMPLE


def exhaustive_check(n: int, ctx: Context) -> Outcome:
    start = time.monotonic()
    listed, scope = stacks(n)
    total = space(n)
    return check_each(listed, total, ctx, difference, lambda layers: {"layers": [rows01(m) for m in layers]},
                      scope | {"methods": NO_Z3}, start, noun="stacks",
                      sample=f"seed {SEED}" if scope["scope"] == "sample" else None)


THEOREM = Theorem(NAME, STATEMENT, exhaustive_check, None, space=space, not_invariant=NOT_INVARIANT)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

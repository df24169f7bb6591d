"""Task families by formulas (solvers/symbolic/tasks/), against the concrete catalogue and by Z3.

- Each symbolic task equals the concrete task of the catalogue for every n <= 12 and its
  parameters (sizes, what each position holds and predicts, isolation groups, the mask),
  evaluated position by position (an independent reference: theory/tasks/*.py).
- Leak-free at every depth for all n through :func:`known_invariant`, checked here by plain
  Z3 queries of the three conditions (M ∨ I ⊆ I, I transitive, no target inside I), and
  packed documents isolated (I inside a document).
- Each bad design refuted by a walk of at most 3 hops, the smallest n equal to what
  theory.counterexample.find_counterexample finds.
- Planted bugs: a wrong formula is caught by the concrete comparison, a wrong invariant is
  refuted by one of the three conditions.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import z3

from hasse.solvers.symbolic.claims import known_invariant
from hasse.solvers.symbolic.tasks import evaluate, symbolic_task
from hasse.theory.counterexample import find_counterexample

MAX_N = 12


# --------------------------------------------------------------------------- the concrete comparison


def _truth(task, expr, n, params):
    value = evaluate(task, expr, n, **params)
    assert z3.is_true(value) or z3.is_false(value), (task.name, n, params, value)
    return z3.is_true(value)


def _mask_at(task, n, params):
    mask = task.mask
    size = mask.size_at(n, **{k: v for k, v in params.items() if isinstance(v, int)})
    fixed = evaluate(task, mask.formula, n, **params)
    out = np.zeros((size, size), dtype=bool)
    for q in range(size):
        row = z3.substitute(fixed, (mask.q, z3.IntVal(q)))
        for k in range(size):
            v = z3.simplify(z3.substitute(row, (mask.k, z3.IntVal(k))))  # index tensors already filled in
            assert z3.is_true(v) or z3.is_false(v), (task.name, n, params, q, k, v)
            out[q, k] = z3.is_true(v)
    return out


def assert_same_as_concrete(task, n, **params):
    """The symbolic task at n and params equals theory's task built by the catalogue (every entry)."""
    concrete = task.concrete(n, **params)
    size = concrete.size
    assert task.mask.size_at(n, **{k: v for k, v in params.items() if isinstance(v, int)}) == size, task.name
    assert concrete.tokens == n
    for p in range(size):
        sources = concrete.sources(p)
        labels = set(concrete.labels[p])
        for t in range(-1, n + 1):  # one token either side: nothing outside the sample
            P, T = z3.IntVal(p), z3.IntVal(t)
            assert _truth(task, task.holds(P, T), n, params) == (t in sources), (task.name, n, params, p, t, "holds")
            assert _truth(task, task.predicts(P, T), n, params) == (t in labels), (task.name, n, params, p, t,
                                                                                    "predicts")
    if concrete.isolate:
        assert task.group is not None
        ids = [evaluate(task, task.group(z3.IntVal(p)), n, **params).as_long() for p in range(size)]
        groups = {}
        for p, g in enumerate(ids):
            groups.setdefault(g, []).append(p)
        assert sorted(tuple(g) for g in groups.values()) == sorted(concrete.isolate), (task.name, n, params)
    else:
        assert task.group is None
    assert np.array_equal(_mask_at(task, n, params), concrete.mask), (task.name, n, params)
    conds = [evaluate(task, c, n, **params) for c in task.all_conditions()]
    assert all(z3.is_true(c) for c in conds), (task.name, n, params, conds)


def _compositions(n, rng, count):
    out = {(n,), (1,) * n}
    for _ in range(count):
        cuts = sorted(rng.sample(range(1, n), rng.randint(0, n - 1))) if n > 1 else []
        bounds = [0, *cuts, n]
        out.add(tuple(b - a for a, b in zip(bounds, bounds[1:])))
    return sorted(out)


def _divisors(n):
    return [b for b in range(1, n + 1) if n % b == 0]


@pytest.mark.parametrize("spec", ["butterfly", "causal_lm", "bad_butterfly_self", "bad_butterfly_crossed",
                                  "bad_mlm_unmasked"])
def test_n_only_tasks_equal_the_catalogue(spec):
    task = symbolic_task(spec)
    for n in range(1, MAX_N + 1):
        assert_same_as_concrete(task, n)


@pytest.mark.parametrize("spec", ["block_two_stream", "block_two_stream:variant=clique", "bd3lm",
                                  "bad_block_own_content", "bad_block_query_history"])
def test_block_tasks_equal_the_catalogue(spec):
    task = symbolic_task(spec)
    for n in range(1, MAX_N + 1):
        for block in _divisors(n):
            assert_same_as_concrete(task, n, block=block)


@pytest.mark.parametrize("sizes", [range(1, 7), pytest.param(range(7, MAX_N + 1), marks=pytest.mark.slow)])
def test_xlnet_equals_the_catalogue_over_orders(sizes):
    task = symbolic_task("xlnet")
    rng = random.Random(13)
    for n in sizes:
        orders = {tuple(range(n)), tuple(reversed(range(n)))}
        orders |= {tuple(rng.sample(range(n), n)) for _ in range(3)}
        for order in sorted(orders):
            assert_same_as_concrete(task, n, order=order)


def test_mlm_equals_the_catalogue_over_masked_sets():
    task = symbolic_task("mlm")
    rng = random.Random(7)
    for n in range(1, MAX_N + 1):
        sets = {(0,), (n - 1,), tuple(range(n))}
        sets |= {tuple(sorted(rng.sample(range(n), rng.randint(1, n)))) for _ in range(3)}
        for masked in sorted(sets):
            assert_same_as_concrete(task, n, masked=masked)


@pytest.mark.parametrize("sizes", [range(1, 7), pytest.param(range(7, MAX_N + 1), marks=pytest.mark.slow)])
@pytest.mark.parametrize("spec,windows", [("packed", (0, 1, 2, 3)), ("bad_packed_window", (1, 2, 3))])
def test_packed_equals_the_catalogue_over_lengths(spec, windows, sizes):
    task = symbolic_task(spec)
    rng = random.Random(3)
    for n in sizes:
        for lengths in _compositions(n, rng, 3):
            for window in windows:
                assert_same_as_concrete(task, n, lengths=lengths, window=window)


def test_specs_with_values_fix_them():
    assert_same_as_concrete(symbolic_task("xlnet:order=2+0+1"), 3, order=(2, 0, 1))
    assert_same_as_concrete(symbolic_task("packed:lengths=2+1,window=2"), 3, lengths=(2, 1), window=2)
    assert_same_as_concrete(symbolic_task("mlm:masked=1+3"), 5, masked=(1, 3))
    assert_same_as_concrete(symbolic_task("block_two_stream:block=2"), 6, block=2)
    task = symbolic_task("butterfly:n=3")
    assert task.mask.size_at(3) == 7
    assert symbolic_task("bd3lm").statement == "for all 1 <= n <= 2^31 and all 1 <= l <= 2^31 with l | n"
    assert symbolic_task("butterfly:n=3").statement == "at n = 3"


def test_bad_specs_are_one_line_input_errors():
    from hasse.theory.errors import InputError

    for spec, words in [("ar:n=3", "no symbolic form"), ("butterfly:m=2", "unknown parameter"),
                        ("block_two_stream:variant=star", "variant"), ("mlm:n=2,masked=5", "out of range"),
                        ("mlm:masked=1+1", "given twice"), ("xlnet:order=0+0", "permutation"),
                        ("block_two_stream:n=5,block=2", "does not divide"), ("packed:lengths=0+2", "positive"),
                        ("causal_lm:n=0", "positive"), ("bad_packed_window:window=0", "positive")]:
        with pytest.raises(InputError, match=words) as info:
            symbolic_task(spec)
        assert "\n" not in str(info.value)


def test_planted_formula_bug_is_caught_by_the_concrete_comparison():
    """P_k holding x_k instead of its neighbours (bad_butterfly_self's flaw) under butterfly's name."""
    good = symbolic_task("butterfly")
    wrong = dataclasses.replace(good, holds=symbolic_task("bad_butterfly_self").holds)
    with pytest.raises(AssertionError):
        assert_same_as_concrete(wrong, 3)
    shifted = dataclasses.replace(good, predicts=lambda p, t: good.predicts(p, t + 1))
    with pytest.raises(AssertionError):
        assert_same_as_concrete(shifted, 2)


# --------------------------------------------------------------------------- claims by plain Z3 queries


def _solver(task, conditions=()):
    s = z3.Solver()
    s.set("timeout", 60_000)
    s.add(*task.all_conditions(), *conditions)
    return s


def _unsat(s) -> bool:
    r = s.check()
    assert r != z3.unknown, s.reason_unknown()
    return r == z3.unsat


def invariant_conditions(task, invariant, conditions=()) -> dict[str, bool]:
    """Each of the three conditions of an inductive invariant, True where proved for all values."""
    mask = task.mask
    a, b, c, t = z3.Ints("a_ b_ c_ t_")
    out = {}
    s = _solver(task, conditions)
    s.add(mask.inside(a, b), mask.attends(a, b), z3.Not(invariant.allowed(a, b)),
          *mask.facts([(a, b)]), *invariant.facts([(a, b)]))
    out["contains the mask"] = _unsat(s)
    s = _solver(task, conditions)
    s.add(mask.inside(a, b, c), invariant.allowed(a, b), invariant.allowed(b, c), z3.Not(invariant.allowed(a, c)),
          *mask.facts([(a, b), (b, c), (a, c)]), *invariant.facts([(a, b), (b, c), (a, c)]))
    out["transitive"] = _unsat(s)
    s = _solver(task, conditions)
    s.add(mask.inside(a, b), invariant.allowed(a, b), task.holds(b, t), task.predicts(a, t),
          *mask.facts([(a, b)]), *invariant.facts([(a, b)]))
    out["no target inside"] = _unsat(s)
    if task.group is not None:
        s = _solver(task, conditions)
        s.add(mask.inside(a, b), invariant.allowed(a, b), task.group(a) != task.group(b),
              *mask.facts([(a, b)]), *invariant.facts([(a, b)]))
        out["inside a group"] = _unsat(s)
    return out


def violation(task, hops: int, n: int | None = None, isolation: bool = False):
    """A walk p_0 -> … -> p_hops (each attending the one before) from a holder of t to its predictor, or
    across groups; returns the model or None."""
    mask = task.mask
    ps = z3.Ints(" ".join(f"w{i}_" for i in range(hops + 1)))
    t = z3.Int("t_")
    pairs = [(ps[i + 1], ps[i]) for i in range(hops)] or [(ps[0], ps[0])]
    s = _solver(task, [mask.n == n] if n is not None else [])
    s.add(mask.inside(*ps), *[mask.attends(q, k) for q, k in pairs], *mask.facts(pairs))
    if isolation:
        s.add(task.group(ps[0]) >= 0, task.group(ps[-1]) != task.group(ps[0]))
    else:
        s.add(task.holds(ps[0], t), task.predicts(ps[-1], t))
    return s.model() if s.check() == z3.sat else None


def smallest_n(task, max_n=8, max_hops=3, isolation=False):
    for n in range(1, max_n + 1):
        if any(violation(task, hops, n, isolation) is not None for hops in range(max_hops + 1)):
            return n
    return None


GOOD = ["butterfly", "block_two_stream", "block_two_stream:variant=clique", "bd3lm", "xlnet", "causal_lm", "mlm",
        "packed", "bad_block_query_history"]


@pytest.mark.parametrize("spec", GOOD)
def test_leak_free_at_every_depth_for_all_n(spec):
    task = symbolic_task(spec)
    verdicts = invariant_conditions(task, known_invariant(task))
    assert all(verdicts.values()), (spec, verdicts)


def test_sliding_window_is_leak_free_for_next_token_with_the_causal_invariant():
    from hasse.solvers.symbolic.mask import from_rule
    from hasse.theory.masks.sliding_window import make_sliding_window

    task = symbolic_task("causal_lm")
    window = from_rule("sliding_window", make_sliding_window, params={"w": None})
    through = dataclasses.replace(task, mask=window, name="causal_lm through sliding_window")
    verdicts = invariant_conditions(through, known_invariant(through))
    assert all(verdicts.values()), verdicts
    # the window's own closure is not an invariant (it is not transitive): the causal order is needed
    own = dataclasses.replace(window, formula=window.attends(window.q, window.k))
    assert not invariant_conditions(through, own)["transitive"]


def test_packed_documents_isolated_for_all_n():
    verdicts = invariant_conditions(symbolic_task("packed"), known_invariant(symbolic_task("packed")))
    assert verdicts["inside a group"] and all(verdicts.values()), verdicts


def test_good_tasks_have_no_short_walk_at_small_n():
    """A bounded cross-check of the invariant proofs: no leak within 2 hops for n <= 4."""
    for spec in GOOD:
        task = symbolic_task(spec)
        for n in range(1, 5):
            for hops in range(3):
                assert violation(task, hops, n) is None, (spec, n, hops)


BAD = [  # (symbolic spec, the concrete design find_counterexample searches, isolation)
    ("bad_butterfly_self", "bad_butterfly_self", False),
    ("bad_butterfly_crossed", "bad_butterfly_crossed", False),
    ("bad_mlm_unmasked", "bad_mlm_unmasked", False),
    ("bad_block_own_content", "bad_block_own_content:block=1", False),
    ("bad_block_own_content:block=2", "bad_block_own_content:block=2", False),
    ("bad_block_own_content:block=3", "bad_block_own_content:block=3", False),
]


@pytest.mark.parametrize("spec,design,isolation", BAD)
def test_bad_designs_refuted_at_the_smallest_n_of_the_concrete_search(spec, design, isolation):
    task = symbolic_task(spec)
    found = find_counterexample(design, 8)
    assert found.n is not None
    assert smallest_n(task, 8, 3, isolation) == found.n, (spec, found.n)
    assert not all(invariant_conditions(task, known_invariant(task)).values())


def test_bad_packed_window_isolation_violated_at_the_smallest_n():
    """Lengths are symbolic: the smallest total n with a violation is 2 (1+1 in a window of 2).
    The concrete search works at the size a lengths list fixes: it finds the violation at 1+1
    and none for the single document of length 1."""
    task = symbolic_task("bad_packed_window")
    assert smallest_n(task, 8, 1, isolation=True) == 2
    model = violation(task, 1, 2, isolation=True)
    assert model is not None and model.eval(task.mask.params["window"]).as_long() >= 2
    assert find_counterexample("bad_packed_window:lengths=1+1,window=2", 8).n == 2
    assert find_counterexample("bad_packed_window:lengths=1,window=2", 8).n is None
    fixed = symbolic_task("bad_packed_window:window=1")  # a window of 1 is self-attention: nothing crosses
    assert smallest_n(fixed, 6, 2, isolation=True) is None
    assert not invariant_conditions(task, known_invariant(task))["contains the mask"]


def test_planted_wrong_invariants_are_refuted():
    causal = symbolic_task("causal_lm")
    inv = known_invariant(causal)
    strict = dataclasses.replace(inv, formula=inv.k < inv.q)  # the diagonal left out
    assert not invariant_conditions(causal, strict)["contains the mask"]
    butterfly = symbolic_task("butterfly")
    inv = known_invariant(butterfly)
    n, q, k = butterfly.n, inv.q, inv.k
    reads_own = z3.Or(inv.formula, z3.And(q >= 2 * n - 2, k < n - 1, k <= q - (2 * n - 2)))  # P_k also reads F_k
    verdicts = invariant_conditions(butterfly, dataclasses.replace(inv, formula=reads_own))
    assert not verdicts["no target inside"], verdicts
    packed = symbolic_task("packed")
    inv = known_invariant(packed)
    crossing = dataclasses.replace(inv, formula=inv.k <= inv.q)  # causal over the whole sequence
    verdicts = invariant_conditions(packed, crossing)
    assert verdicts["no target inside"] and not verdicts["inside a group"], verdicts


def test_lists_from_model_rebuild_the_instance_of_a_witness():
    """A model's doc / rank values at the witness positions, turned into lengths / order, give a concrete
    task with the same pair (the re-check of a counterexample over a list)."""
    from hasse.solvers.symbolic.tasks import lists_from_model

    a, b = z3.Ints("a_ b_")
    task = symbolic_task("bad_packed_window")
    for n in range(2, 7):
        s = _solver(task, [task.n == n, task.mask.params["window"] == 2])
        s.add(task.mask.inside(a, b), task.mask.allowed(a, b), task.group(a) != task.group(b),
              *task.mask.facts([(a, b)]))
        assert s.check() == z3.sat
        m = s.model()
        qa, qb = m.eval(a).as_long(), m.eval(b).as_long()
        concrete = task.concrete(n, window=2, **lists_from_model(task, m, n, positions=[qa, qb]))
        assert concrete.mask[qa, qb]
        assert not any(qa in g and qb in g for g in concrete.isolate), (n, qa, qb, concrete.isolate)
    task = symbolic_task("xlnet")
    for n in range(2, 7):
        s = _solver(task, [task.n == n])
        s.add(task.mask.inside(a, b), a >= n, b < n, b != a - n - 1, task.mask.allowed(a, b),
              *task.mask.facts([(a, b)]))
        assert s.check() == z3.sat
        m = s.model()
        qa, qb = m.eval(a).as_long(), m.eval(b).as_long()
        concrete = task.concrete(n, **lists_from_model(task, m, n, positions=[qa % n, qb % n]))
        assert concrete.mask[qa, qb], (n, qa, qb, concrete.name)


# --------------------------------------------------------------------------- with the kit's claims (claims.py)

claims = pytest.importorskip("hasse.solvers.symbolic.claims")


@pytest.mark.parametrize("spec", GOOD)
def test_claims_prove_each_task_leak_free_at_every_depth(spec):
    task = symbolic_task(spec)
    verdict = claims.prove_leak_free(task, invariant=known_invariant(task))
    assert verdict.verdict == "proved", (spec, verdict.reason)
    assert verdict.recheck and verdict.recheck.startswith("confirmed"), verdict.recheck
    assert verdict.statement.startswith("for all 1 <= n <= 2^31"), verdict.statement


def test_claims_prove_packed_isolated_and_the_window_leak_free_through_catalogue_masks():
    task = symbolic_task("packed")
    verdict = claims.prove_isolation(task, invariant=known_invariant(task))
    assert verdict.verdict == "proved" and verdict.recheck.startswith("confirmed"), verdict
    catalog = pytest.importorskip("hasse.solvers.symbolic.catalog")
    causal = symbolic_task("causal_lm")
    window = catalog.symbolic_mask("sliding_window")
    through = dataclasses.replace(causal, mask=window, name="causal_lm through sliding_window")
    verdict = claims.prove_leak_free(through, invariant=known_invariant(through))
    assert verdict.verdict == "proved", verdict.reason
    for spec in ("butterfly", "block_two_stream", "block_two_stream:variant=clique", "bd3lm", "xlnet"):
        task = symbolic_task(spec)  # the same symbols as the catalogue's form, and the same pairs for all n
        mask = catalog.symbolic_mask(spec)
        assert str(mask.size) == str(task.mask.size) and set(mask.params) == set(task.mask.params), spec
        assert {str(v) for v in mask.params.values()} == {str(v) for v in task.mask.params.values()}, spec
        assert claims.check_equivalence(task.mask, mask).verdict == "proved", spec
        verdict = claims.prove_leak_free(dataclasses.replace(task, mask=mask), invariant=known_invariant(task))
        assert verdict.verdict == "proved", (spec, verdict.reason)


@pytest.mark.parametrize("spec,design,layers", [
    ("bad_butterfly_self", "bad_butterfly_self", 1),
    ("bad_butterfly_crossed", "bad_butterfly_crossed", 2),
    ("bad_mlm_unmasked", "bad_mlm_unmasked", 1),
    ("bad_block_own_content", "bad_block_own_content:block=1", 1),
    ("bad_block_own_content:block=2", "bad_block_own_content:block=2", 1),
])
def test_claims_refute_each_bad_design_at_the_smallest_n(spec, design, layers):
    task = symbolic_task(spec)
    verdict = claims.prove_leak_free(task, layers=layers)
    assert verdict.verdict == "refuted", verdict
    assert verdict.counterexample["n"] == find_counterexample(design, 8).n, verdict.counterexample
    assert verdict.recheck == "confirmed", verdict.recheck
    assert claims.prove_leak_free(task, invariant=known_invariant(task)).verdict == "unknown"  # never proved


def test_claims_refute_bad_packed_window_isolation_at_n_2():
    task = symbolic_task("bad_packed_window")
    verdict = claims.prove_isolation(task, layers=1)
    assert verdict.verdict == "refuted" and verdict.counterexample["n"] == 2, verdict
    assert verdict.counterexample["params"] == {"window": 2} and verdict.recheck == "confirmed", verdict
    assert find_counterexample("bad_packed_window:lengths=1+1,window=2", 8).n == 2


@pytest.mark.skipif(not hasattr(claims, "prove_consistent"), reason="no symbolic consistency in claims.py")
def test_claims_consistency_of_block_two_stream_and_bad_block_query_history():
    for spec, variant in (("block_two_stream", "chain"), ("block_two_stream:variant=clique", "clique")):
        mask = symbolic_task(spec).mask
        assert claims.prove_consistent(mask, **claims.block_two_stream_consistency(mask, variant)).verdict == "proved"
    mask = symbolic_task("bad_block_query_history").mask
    for block in (1, 2):  # the smallest n at each block size, as the concrete search with the block family
        verdict = claims.prove_consistent(mask, **claims.block_two_stream_consistency(mask, "chain"),
                                          assume=[mask.params["block"] == block])
        found = find_counterexample(f"bad_block_query_history:block={block}", 8, inference=f"block:block={block}")
        assert verdict.verdict == "refuted" and verdict.counterexample["n"] == found.n, (block, verdict, found.n)


def test_a_task_through_a_mask_of_another_size_is_refused():
    """XLNet's 2n positions read through an n-position mask: every query would lie outside it and a claim
    would hold vacuously (planted: the check removed, `hasse prove-mask bidirectional --task xlnet` proved)."""
    from hasse.solvers.symbolic.mask import from_rule
    from hasse.solvers.symbolic.tasks import check_same_size
    from hasse.theory.errors import InputError
    from hasse.theory.masks.sliding_window import make_sliding_window

    window = from_rule("sliding_window", make_sliding_window, params={"w": None})
    check_same_size(symbolic_task("causal_lm"), window)
    for spec in ("xlnet", "butterfly", "block_two_stream", "butterfly:n=3"):
        with pytest.raises(InputError, match="positions but the mask has"):
            check_same_size(symbolic_task(spec), window)
    check_same_size(symbolic_task("bd3lm"), symbolic_task("bad_block_own_content").mask)  # 2n and 2n


def test_cli_refuses_a_task_through_a_mask_of_another_size(capsys):
    from hasse.cli import main

    code = main(["prove-mask", "bidirectional", "--claim", "leak-free", "--task", "xlnet"])
    assert code == 2 and "2*n positions but the mask has n" in capsys.readouterr().err

"""Mask synthesis, optimised: CP-SAT against Z3 and the brute force, the heuristic's masks and bounds, relabelling.

References: the brute force (``brute_force_minimum``, n <= 6), Z3's ``minimum`` (a second
exact method), a breadth-first walk in plain loops (``walk_reach``) for every mask.
Targets: catalogue limits at small n, seeded random preorders (closures of seeded random
relations). Planted bugs (monkeypatched, each must make a check fail): the reach
implication's second half dropped in CP-SAT (with and without the re-check), a wrong LP
constraint (a middle dropped: the LP too strong), the classes bound over-counted, the
reverse-delete without its check, a relabelling that synthesises another order than it reports.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from hasse.solvers.synthesis import (OPTIMISE_MAX_N, SynthesisBug, brute_force_minimum, cpsat, heuristic, minimum,
                                     optimise, relabel)
from hasse.theory.errors import InputError
from hasse.theory.reach import reach
from hasse.theory.synthesis import necessary_pairs, realises, tile_counts
from tests.test_synthesis_exact import SHORTCUT, limit_of, walk_reach

pytestmark = pytest.mark.skipif(not cpsat.available(), reason="ortools (the synth extra) is not installed")

H = importlib.import_module("hasse.solvers.synthesis.heuristic")
B = importlib.import_module("hasse.solvers.synthesis.bounds")
R = importlib.import_module("hasse.solvers.synthesis.relabel")

SPECS = ("causal:n=5", "bidirectional:n=4", "sliding_window:n=5,w=2", "prefix_lm:n=5,prefix=2",
         "document:lengths=2+3", "block_causal:n=4,block=2", "chunked:n=5,chunk=2", "recurrent:n=4",
         "block_two_stream:n=2,block=1", "causal:n=6", "block_two_stream:n=4,block=2", "document:lengths=3+3")


def random_preorder(n: int, rng, density: float) -> np.ndarray:
    """The reflexive-transitive closure of a seeded random relation (mostly downward, a few cycles)."""
    rel = np.tril(rng.random((n, n)) < density, -1) | (rng.random((n, n)) < density / 8)
    return reach(rel, max(n, 1))


def seeded(count: int, sizes, seed: int) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(sizes[i % len(sizes)])
        out.append((f"random n={n} #{i}", random_preorder(n, rng, float(rng.uniform(0.15, 0.6)))))
    return out


SMALL = [(s, limit_of(s)) for s in SPECS] + [("shortcut", SHORTCUT)] + seeded(20, (3, 4, 5, 6), seed=2024)


def cpsat_disagreements(cases, cost: str = "pairs", block: int = 2) -> list[str]:
    """Cases where CP-SAT differs from Z3 or the brute force, fails a loop re-check, or claims a wrong status."""
    bad = []
    for name, t, layers in cases:
        try:
            got = cpsat.minimum_cpsat(t, layers, cost, block, workers=1)
        except SynthesisBug as exc:
            bad.append(f"{name} L={layers}: {exc}")
            continue
        z = minimum(t, layers, cost, block=block)
        ref = [z.cost]
        if cost == "pairs" or len(t) <= 4:
            ref.append(brute_force_minimum(t, layers, cost, block).minimum)
        value = got.pairs if cost == "pairs" else int(np.count_nonzero(tile_counts(got.mask, block)))
        if (any(r != got.cost for r in ref) or value != got.cost or got.status != "optimal"
                or got.lower_bound != got.cost or got.engine != "cp-sat"
                or not np.array_equal(walk_reach(got.mask, layers), t) or (got.mask & ~t).any()
                or np.diag(got.mask).any()):
            bad.append(f"{name} L={layers}: {got.cost} vs {ref}")
    return bad


CASES = [(name, t, layers) for name, t in SMALL for layers in (1, 2, 3)]


def test_cpsat_equals_z3_and_the_brute_force_on_pairs():
    assert cpsat_disagreements(CASES) == []


def test_cpsat_equals_z3_and_the_brute_force_on_tiles():
    assert cpsat_disagreements([c for c in CASES if len(c[1]) <= 5], cost="tiles") == []


def test_symmetry_breaking_keeps_the_cpsat_optimum():
    for name, t in SMALL:
        for layers in (2, 3):
            a = cpsat.minimum_cpsat(t, layers, symmetry=True, workers=1)
            b = cpsat.minimum_cpsat(t, layers, symmetry=False, workers=1)
            assert a.cost == b.cost, name


def test_optimise_uses_cpsat_and_falls_back_to_z3(monkeypatch):
    t = limit_of("causal:n=6")
    a = optimise(t, 2, workers=1)
    assert (a.engine, a.status) == ("cp-sat", "optimal")
    monkeypatch.setattr(cpsat, "available", lambda: False)
    b = optimise(t, 2)
    assert (b.engine, b.status, b.cost) == ("z3", "optimal", a.cost)
    with pytest.raises(InputError, match=str(OPTIMISE_MAX_N)):
        optimise(np.eye(OPTIMISE_MAX_N + 1, dtype=bool), 2)


def test_a_timeout_returns_a_realisation_a_bound_and_never_a_false_optimum():
    for t, cost, block in ((np.tril(np.ones((16, 16), dtype=bool)), "pairs", 4),
                           (np.tril(np.ones((16, 16), dtype=bool)), "tiles", 2),
                           (random_preorder(18, np.random.default_rng(5), 0.4), "pairs", 4)):
        got = cpsat.minimum_cpsat(t, 2, cost, block, timeout=0.05, workers=1)
        assert got.status in ("optimal", "unknown") and realises(got.mask, t, 2)
        assert np.array_equal(walk_reach(got.mask, 2), t)
        assert 0 <= got.lower_bound <= got.cost and got.gap >= 0
        assert (got.status == "optimal") == (got.lower_bound == got.cost)
        if cost == "pairs":
            assert got.lower_bound >= int(necessary_pairs(t, 2).sum())


def test_no_solution_in_time_returns_the_dense_mask_with_a_bound(monkeypatch):
    monkeypatch.setattr(cpsat, "_hint", lambda *args: None)  # no heuristic start: the search alone, 10 ms
    t = np.tril(np.ones((40, 40), dtype=bool))
    got = cpsat.minimum_cpsat(t, 3, timeout=0.01, workers=1)
    assert got.status == "unknown" and realises(got.mask, t, 3)
    assert int(necessary_pairs(t, 3).sum()) <= got.lower_bound < got.cost


def test_the_heuristic_on_a_timeout_still_realises():
    t = np.tril(np.ones((60, 60), dtype=bool))
    for layers, cost in ((2, "pairs"), (3, "pairs"), (2, "tiles")):
        got = heuristic(t, layers, cost, block=8, timeout=0.001)
        assert realises(got.mask, t, layers) and 0 <= got.lower_bound <= got.cost


def test_the_heuristic_realises_random_preorders_up_to_30():
    for name, t in seeded(18, (7, 12, 20, 30), seed=7) + [("causal:n=24", limit_of("causal:n=24"))]:
        for layers in (1, 2, 3):
            for cost in ("pairs", "tiles"):
                got = heuristic(t, layers, cost, block=4)
                assert got.status == "heuristic" and got.engine == "greedy", name
                assert np.array_equal(walk_reach(got.mask, layers), t), (name, layers, cost)
                assert not (got.mask & ~t).any() and not np.diag(got.mask).any()
                assert 0 <= got.lower_bound <= got.cost, (name, layers, cost)


def bound_excesses(cases) -> list[str]:
    """Cases where a lower bound of the heuristic exceeds the exact optimum (CP-SAT, checked above against Z3)."""
    bad = []
    for name, t, layers in cases:
        best = cpsat.minimum_cpsat(t, layers, workers=1).cost
        bounds = {"classes": B._classes_and_covers(t), "pair_bound": B.pair_bound(t, layers)[0]}
        bounds["lp"] = B._lp_bound(t, float("inf"), layers)
        try:
            h = heuristic(t, layers)
            bounds["heuristic"] = h.lower_bound
        except SynthesisBug as exc:
            bad.append(f"{name} L={layers}: {exc}")
            continue
        over = {k: v for k, v in bounds.items() if v is not None and v > best}
        if over or h.cost < best:
            bad.append(f"{name} L={layers}: {over} over {best} (heuristic {h.cost})")
    return bad


BOUND_CASES = ([(name, t, layers) for name, t in SMALL for layers in (1, 2, 3)]
               + [(name, t, 2) for name, t in seeded(10, (7, 8), seed=11)]
               + [("causal:n=8", limit_of("causal:n=8"), 2), ("block_two_stream:n=4,block=2",
                                                           limit_of("block_two_stream:n=4,block=2"), 2)])


def test_the_bounds_are_at_most_the_optimum():
    assert bound_excesses(BOUND_CASES) == []
    named = {heuristic(t, layers).bound_how for _, t, layers in BOUND_CASES}
    assert "LP relaxation (GLOP)" in named  # the LP is used, and is at times the strongest


def test_the_heuristic_bound_is_at_most_the_brute_force():
    for name, t in SMALL:
        for layers in (2, 3):
            assert heuristic(t, layers).lower_bound <= brute_force_minimum(t, layers).minimum, name
            if len(t) <= 4:
                tiles = heuristic(t, layers, "tiles", block=2)
                assert tiles.lower_bound <= brute_force_minimum(t, layers, "tiles", 2).minimum <= tiles.cost, name


def interleaved(n: int) -> np.ndarray:
    """Two documents whose positions alternate: q attends the earlier positions of its parity."""
    t = np.zeros((n, n), dtype=bool)
    for q in range(n):
        t[q, q % 2:q + 1:2] = True
    return t


def test_relabelling_realises_the_permuted_target_and_never_adds_tiles():
    cases = [("interleaved 16", interleaved(16), 4)] + [(n, t, 2) for n, t in seeded(6, (6, 9, 12), seed=3)]
    for name, t, block in cases:
        for layers in (2, 3):
            r = relabel(t, layers, block=block, timeout=30)
            perm = np.array(r.perm)
            assert sorted(r.perm) == list(range(len(t))), name
            assert np.array_equal(walk_reach(r.synthesis.mask, layers), t[np.ix_(perm, perm)]), name
            back = np.argsort(perm)
            assert realises(r.synthesis.mask[np.ix_(back, back)], t, layers), name
            assert r.tiles_after <= r.tiles_before, name
            assert r.tiles_after == int(np.count_nonzero(tile_counts(r.synthesis.mask, block)))


def test_relabelling_interleaved_documents_strictly_helps():
    for n, block in ((16, 4), (32, 4)):
        t = interleaved(n)
        r = relabel(t, 2, block=block)
        assert r.tiles_after < r.tiles_before, (n, r.tiles_before, r.tiles_after)
        same = [int(p) % 2 for p in r.perm]
        assert same == sorted(same) or same == sorted(same, reverse=True)  # each document contiguous


# --- planted bugs: each must make a check fail --------------------------------------------------------------


PLANT_CASES = [(name, t, layers) for name, t in SMALL if len(t) >= 5 for layers in (2, 3)]


def test_planted_reach_implication_half_dropped_is_caught(monkeypatch):
    def half(model, a, b):
        w = model.new_bool_var("")
        model.add_implication(w, a)  # the second half (w -> r_{l-1}) dropped
        return w
    monkeypatch.setattr(cpsat, "_way", half)
    assert cpsat_disagreements(PLANT_CASES)


def test_planted_reach_implication_half_dropped_without_the_recheck_is_caught(monkeypatch):
    def half(model, a, b):
        w = model.new_bool_var("")
        model.add_implication(w, a)
        return w
    monkeypatch.setattr(cpsat, "_way", half)
    monkeypatch.setattr(cpsat, "realises", lambda mask, target, layers: True)
    assert cpsat_disagreements(PLANT_CASES)


def test_planted_wrong_lp_constraint_is_caught(monkeypatch):
    real = B._ways
    monkeypatch.setattr(B, "_ways", lambda t, q, k, layers, cap: real(t, q, k, layers, cap)[:-1])  # a way forgotten
    assert bound_excesses([c for c in BOUND_CASES if c[2] == 2])
    assert bound_excesses([c for c in BOUND_CASES if c[2] == 3])


def test_the_lp_bound_at_three_layers_beats_classes_and_covers_somewhere():
    better = []
    for name, t, layers in BOUND_CASES:
        if layers == 3:
            lp = B._lp_bound(t, float("inf"), 3)
            if lp is not None and lp > max(B._classes_and_covers(t), int(B.necessary_pairs(t, 3).sum())):
                better.append(name)
    assert better


def test_planted_classes_overcounted_is_caught(monkeypatch):
    real = B._classes_and_covers
    monkeypatch.setattr(B, "_classes_and_covers", lambda t: real(t) + 1)
    assert bound_excesses(BOUND_CASES)


def test_planted_unchecked_reverse_delete_is_caught(monkeypatch):
    def reckless(mask, target, order, fixed, deadline):
        for a, b in order[: len(order) // 2 + 1]:
            mask[a, b] = False
    monkeypatch.setattr(H, "_delete_two", reckless)
    with pytest.raises(SynthesisBug):
        for _, t in seeded(10, (8, 12), seed=7):
            heuristic(t, 2)


def test_planted_misordered_target_is_caught(monkeypatch):
    real = R._synthesise

    def off_by_one(t, *args):  # the synthesis sees positions shifted by one from the order it reports
        shift = np.roll(np.arange(len(t)), 1)
        return real(t[np.ix_(shift, shift)], *args)
    monkeypatch.setattr(R, "_synthesise", off_by_one)
    with pytest.raises(SynthesisBug):
        relabel(interleaved(16), 2, block=4)

"""Mask synthesis, exact: the Z3 optimiser against the brute force, and the brute force against plain loops.

Targets: the limits of catalogue masks at small n and seeded random preorders
(solvers/preorders.py), each at L = 1, 2, 3. References: the brute force
(``brute_force_minimum``), itself checked against an unpruned enumeration of every
mask inside the target, and ``realises`` against a breadth-first walk in plain loops.
Planted bugs (monkeypatched, each must make a check fail): the upper bound dropped
(candidate pairs outside T), the re-check skipped with it, one layer fewer, an unsound
symmetry breaking (every pair of positions treated as twins), a wrong necessary pair.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hasse.solvers.preorders import preorder_masks
from hasse.solvers.synthesis import SynthesisBug, brute_force_minimum, exact, minimum, problem
from hasse.solvers.synthesis.symmetry import automorphisms
from hasse.theory import batch_rows, synthesis
from hasse.theory.catalog import build_mask
from hasse.theory.errors import InputError
from hasse.theory.reach import reach
from hasse.theory.synthesis import check_target, necessary_pairs, realises, tile_counts

SPECS = ("causal:n=5", "bidirectional:n=4", "sliding_window:n=5,w=2", "prefix_lm:n=5,prefix=2",
         "document:lengths=2+3", "block_causal:n=4,block=2", "chunked:n=5,chunk=2", "conv:n=5,width=2",
         "recurrent:n=4", "bd3lm:n=2,block=1", "block_two_stream:n=2,block=1", "butterfly:n=2",
         "causal:n=3", "bidirectional:n=2")
SPECS_6 = ("causal:n=6", "block_two_stream:n=4,block=2", "prefix_lm:n=6,prefix=2", "sliding_window:n=6,w=3",
           "document:lengths=3+3")


def limit_of(spec: str) -> np.ndarray:
    mask = build_mask(spec).matrix
    return reach(mask, mask.shape[0])


def random_preorders(n: int, count: int, seed: int) -> list[np.ndarray]:
    every = np.concatenate([batch_rows.unpack(rows, n) for rows in preorder_masks(n)])
    pick = np.random.default_rng(seed).choice(len(every), size=min(count, len(every)), replace=False)
    return [every[i] | np.eye(n, dtype=bool) for i in sorted(pick)]


# A preorder whose optimum within 3 layers gets strictly cheaper once pairs outside T are allowed and the upper
# bound dropped (found by a seeded search): it makes the planted upper-bound bug fail whatever optimum Z3 picks.
SHORTCUT = np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 0], [1, 1, 0, 0, 1]], dtype=bool)

TARGETS = ([(s, limit_of(s)) for s in SPECS] + [("shortcut", SHORTCUT)]
           + [(f"random n={n} #{i}", t) for n, c in ((1, 1), (2, 4), (3, 29), (4, 16), (5, 30))
              for i, t in enumerate(random_preorders(n, c, seed=24 + n))])


def walk_reach(mask: np.ndarray, layers: int) -> np.ndarray:
    """Loops: q reaches k within ``layers`` hops of ``M or I`` (breadth first from each q)."""
    n = len(mask)
    out = np.zeros((n, n), dtype=bool)
    for q in range(n):
        frontier, seen = {q}, {q}
        for _ in range(layers):
            frontier = {k for j in frontier for k in range(n) if mask[j][k] and k not in seen}
            seen |= frontier
        for k in seen:
            out[q, k] = True
    return out


def every_realisation(target: np.ndarray, layers: int) -> list[np.ndarray]:
    """Every mask inside ``T`` minus the diagonal that realises it, unpruned (small n)."""
    pairs = [tuple(p) for p in np.argwhere(target & ~np.eye(len(target), dtype=bool))]
    out = []
    for bits in itertools.product((False, True), repeat=len(pairs)):
        mask = np.zeros_like(target)
        for on, (q, k) in zip(bits, pairs):
            mask[q, k] = on
        if np.array_equal(walk_reach(mask, layers), target):
            out.append(mask)
    return out


def disagreements(cases) -> list[str]:
    """The cases where ``minimum`` differs from the brute force, fails its own re-check, or leaves T."""
    bad = []
    for name, target, layers in cases:
        ref = brute_force_minimum(target, layers)
        try:
            got = minimum(target, layers)
        except SynthesisBug as exc:
            bad.append(f"{name} L={layers}: {exc}")
            continue
        if (got.cost != ref.minimum or got.status != "optimal" or got.lower_bound != got.cost
                or not np.array_equal(walk_reach(got.mask, layers), target) or (got.mask & ~target).any()
                or np.diag(got.mask).any() or got.pairs != int(got.mask.sum())):
            bad.append(f"{name} L={layers}: {got.cost} vs {ref.minimum}")
    return bad


CASES = [(name, t, layers) for name, t in TARGETS for layers in (1, 2, 3)]
PLANT_CASES = [(name, t, layers) for name, t in TARGETS if len(t) == 5 for layers in (2, 3)]


def test_check_target_refuses_what_is_no_preorder():
    for bad, words in (([[0, 0], [0, 1]], "not reflexive"), ([[1, 1, 0], [0, 1, 1], [0, 0, 1]], "not transitive"),
                       ([[1, 0, 0]], "square"), ([[1, 2], [0, 1]], "0/1")):
        with pytest.raises(InputError, match=words) as err:
            check_target(bad)
        assert "\n" not in str(err.value)
    for name, t in TARGETS:
        assert check_target(t) is not None, name
    with pytest.raises(InputError, match="layers"):
        minimum(np.eye(2, dtype=bool), 0)
    with pytest.raises(InputError, match="cost"):
        brute_force_minimum(np.eye(2, dtype=bool), 1, cost="flops")


def test_realises_matches_a_walk_in_loops():
    rng = np.random.default_rng(7)
    for name, t in TARGETS:
        n = len(t)
        for _ in range(6):
            mask = (rng.random((n, n)) < 0.4) & t
            for layers in (1, 2, 3, 5):
                assert realises(mask, t, layers) == np.array_equal(walk_reach(mask, layers), t), name
        assert not realises(np.ones((n, n), dtype=bool), t, 2) or t.all()


def test_tile_cost_counts_each_tile_against_loops():
    rng = np.random.default_rng(3)
    for n, block in ((5, 2), (4, 2), (7, 3), (6, 6), (3, 4)):
        mask = rng.random((n, n)) < 0.5
        full = partial = 0
        for a in range(0, n, block):
            for b in range(0, n, block):
                allowed = sum(bool(mask[q, k]) for q in range(a, min(a + block, n)) for k in range(b, min(b + block, n)))
                full += allowed == block * block
                partial += 0 < allowed < block * block
        assert synthesis.tile_cost(mask, block) == (full, partial)
        assert synthesis.pair_cost(mask) == sum(map(int, mask.ravel()))


@pytest.mark.parametrize("layers", (1, 2, 3))
def test_necessary_pairs_and_the_brute_force_against_every_mask(layers):
    """Up to n = 4: every realisation (unpruned) holds the necessary pairs, and the brute force's minimum and count
    are those of the unpruned list."""
    for name, t in TARGETS:
        if len(t) > 4 or int(t.sum()) - len(t) > 9:
            continue
        every = every_realisation(t, layers)
        assert every, name
        common = np.logical_and.reduce(every)
        assert not (necessary_pairs(t, layers) & ~common).any(), name
        sizes = [int(m.sum()) for m in every]
        ref = brute_force_minimum(t, layers)
        assert (ref.minimum, ref.count) == (min(sizes), sizes.count(min(sizes))), name
        assert np.array_equal(walk_reach(ref.mask, layers), t)
        if layers == 1:
            assert np.array_equal(necessary_pairs(t, 1), t & ~np.eye(len(t), dtype=bool))


def test_the_optimiser_equals_the_brute_force():
    assert disagreements(CASES) == []


def test_one_layer_is_the_dense_target():
    for name, t in TARGETS:
        got = minimum(t, 1)
        assert np.array_equal(got.mask, t & ~np.eye(len(t), dtype=bool)), name


@pytest.mark.parametrize("spec", SPECS_6)
def test_n6_against_the_brute_force(spec):
    t = limit_of(spec)
    assert disagreements([(spec, t, 2), (spec, t, 3)]) == []


def test_symmetry_breaking_keeps_the_optimum():
    symmetric = [(name, t) for name, t in TARGETS if automorphisms(t)[0]]
    assert len(symmetric) >= 10
    for name, t in symmetric:
        for layers in (2, 3):
            a, b = minimum(t, layers, symmetry=True), minimum(t, layers, symmetry=False)
            assert a.cost == b.cost == brute_force_minimum(t, layers).minimum, name


def test_the_constrained_permutations_are_automorphisms_by_loops():
    for name, t in TARGETS:
        n = len(t)
        for p in automorphisms(t)[0]:
            assert all(t[q, k] == t[p[q], p[k]] for q in range(n) for k in range(n)), name


def test_tiles_against_the_brute_force():
    for name, t in TARGETS:
        if len(t) > 4:
            continue
        for layers in (2, 3):
            ref = brute_force_minimum(t, layers, cost="tiles", block=2)
            got = minimum(t, layers, cost="tiles", block=2)
            assert got.cost == ref.minimum == int(np.count_nonzero(tile_counts(got.mask, 2))), name
            assert sum(got.tiles) == got.cost and realises(got.mask, t, layers)


def test_a_timeout_returns_a_realisation_and_a_bound():
    t = np.tril(np.ones((14, 14), dtype=bool))
    got = minimum(t, 2, timeout=0.2)
    assert got.status in ("optimal", "unknown")
    assert realises(got.mask, t, 2)
    assert int(necessary_pairs(t, 2).sum()) <= got.lower_bound <= got.cost == int(got.mask.sum())
    if got.status == "optimal":
        assert got.lower_bound == got.cost


# --- planted bugs: each must make the comparison fail ---------------------------------------------------------


def test_planted_upper_bound_dropped_is_caught(monkeypatch):
    monkeypatch.setattr(exact, "_candidate_pairs", lambda t: ~np.eye(len(t), dtype=bool))
    assert disagreements(PLANT_CASES)


def test_planted_upper_bound_dropped_without_the_recheck_is_caught(monkeypatch):
    monkeypatch.setattr(exact, "_candidate_pairs", lambda t: ~np.eye(len(t), dtype=bool))
    monkeypatch.setattr(exact, "realises", lambda mask, target, layers: True)
    assert disagreements(PLANT_CASES)


def test_planted_one_layer_fewer_is_caught(monkeypatch):
    real = exact._Encoding.__init__
    monkeypatch.setattr(exact._Encoding, "__init__", lambda self, t, layers: real(self, t, max(1, layers - 1)))
    monkeypatch.setattr(exact, "realises", lambda mask, target, layers: True)
    assert disagreements(PLANT_CASES)


def test_planted_unsound_symmetry_is_caught(monkeypatch):
    def every_swap(t):  # every transposition of neighbours, automorphism or not
        out = []
        for a in range(len(t) - 1):
            p = np.arange(len(t))
            p[[a, a + 1]] = p[[a + 1, a]]
            out.append(p)
        return out
    monkeypatch.setattr(exact, "lex_leader_perms", every_swap)
    assert disagreements(PLANT_CASES)


def test_planted_wrong_necessary_pair_is_caught(monkeypatch):
    def too_many(target, layers=2):
        return check_target(target) & ~np.eye(len(target), dtype=bool)  # every pair "necessary"
    monkeypatch.setattr(problem, "necessary_pairs", too_many)
    bad = 0
    for name, t in TARGETS:
        if len(t) <= 4 and int(t.sum()) - len(t) <= 9:
            sizes = [int(m.sum()) for m in every_realisation(t, 2)]
            bad += brute_force_minimum(t, 2).minimum != min(sizes)
    assert bad

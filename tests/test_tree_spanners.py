"""Forest (tree-mask) constructions: realised within their depth, every witness walk checked hop by hop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hasse.solvers.synthesis import brute_force_minimum
from hasse.theory.catalog import build_mask
from hasse.theory.errors import InputError
from hasse.theory.spanners import chain
from hasse.theory.synthesis import realises
from hasse.theory.tree_spanners import forest, forest_target


def _shapes(n: int, seed: int) -> dict[str, list[int]]:
    rng = np.random.default_rng(seed)
    return {
        "random": [-1] + [int(rng.integers(0, i)) for i in range(1, n)],
        "path": list(range(-1, n - 1)),
        "star": [-1] + [0] * (n - 1),
        "binary": [-1] + [(i - 1) // 2 for i in range(1, n)],
        "caterpillar": [-1] + [i - 1 if i % 2 else max(i - 2, 0) for i in range(1, n)],
        "several roots": [-1 if i % 7 == 0 else int(rng.integers(i - i % 7, i)) for i in range(n)],
        "shuffled": _shuffled([-1] + [int(rng.integers(0, i)) for i in range(1, n)], rng),
    }


def _shuffled(parent: list[int], rng) -> list[int]:
    perm = rng.permutation(len(parent))  # node i is renamed perm[i]
    out = [0] * len(parent)
    for i, p in enumerate(parent):
        out[int(perm[i])] = -1 if p < 0 else int(perm[p])
    return out


def _walks_hold(c, depth: int) -> bool:
    a = c.mask | np.eye(c.n, dtype=bool)
    for q, k in zip(*np.nonzero(c.target)):
        walk = [int(k)] + [int(w) for w in c.witness(int(q), int(k))] + [int(q)]
        if len(walk) - 1 > depth or not all(a[y, x] for x, y in zip(walk, walk[1:])):
            return False
    return True


@pytest.mark.parametrize("n, seed", [(1, 0), (2, 1), (9, 2), (40, 3), (150, 4)])
@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_every_shape_is_realised_and_every_walk_holds(n, seed, depth):
    for name, parent in _shapes(n, seed).items():
        c = forest(parent, depth)
        assert np.array_equal(c.target, forest_target(parent)), name
        assert not c.mask.diagonal().any() and not (c.mask & ~c.target).any(), name
        assert realises(c.mask, c.target, depth), name
        assert _walks_hold(c, depth), name


def test_the_target_is_ancestry_by_loops():
    parent = _shapes(30, 7)["shuffled"]
    t = forest_target(parent)
    for q in range(30):
        up, v = {q}, q
        while parent[v] >= 0:
            v = parent[v]
            up.add(v)
        assert set(np.flatnonzero(t[q]).tolist()) == up


def test_a_dropped_pair_is_caught():
    c = forest(_shapes(60, 5)["random"], 2)
    q, k = map(int, np.argwhere(c.mask)[len(np.argwhere(c.mask)) // 2])
    c.mask[q, k] = False
    assert not realises(c.mask, c.target, 2)
    assert not _walks_hold(c, 2)


def test_small_forests_never_beat_the_brute_force_minimum():
    worst = 1.0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 7))
        parent = [-1] + [int(rng.integers(-1, i)) for i in range(1, n)]
        c = forest(parent, 2)
        best = brute_force_minimum(forest_target(parent), 2).minimum
        assert c.pairs >= best
        worst = max(worst, c.pairs / max(best, 1))
    assert worst <= 2


def test_two_hops_stay_within_n_log_n():
    for name, parent in _shapes(2048, 11).items():
        n = len(parent)
        assert forest(parent, 2).pairs <= n * (math.log2(n) + 1), name


def test_the_catalogue_tree_target_is_a_forest():
    t = build_mask("tree:parents=-1+0+0+1+1+2,prefix=3").matrix
    n = len(t)
    parent = [-1] + [int(np.flatnonzero(t[q] & ~np.eye(n, dtype=bool)[q])[np.argmax(
        t[np.flatnonzero(t[q] & ~np.eye(n, dtype=bool)[q])].sum(axis=1))]) for q in range(1, n)]
    assert np.array_equal(forest_target(parent), t)


@pytest.mark.parametrize("parent, words", [([1, 0], "cycle"), ([-1, 5], "not -1 or a node"), ([], "non-empty"),
                                           ([-1, 0.5], "integers"), ([[-1]], "integers")])
def test_bad_parents_are_one_line(parent, words):
    with pytest.raises(InputError, match=words):
        forest(parent, 2)


def test_three_hops_and_more_are_cheaper_and_near_the_chain_on_a_path():
    shapes = _shapes(1024, 13)
    path = shapes["path"]
    for depth in (3, 4):
        assert forest(path, depth).pairs <= 1.2 * chain(1024, depth).pairs
    for name in ("random", "binary", "caterpillar"):
        assert forest(shapes[name], 3).pairs < forest(shapes[name], 2).pairs, name


def test_a_dropped_pair_is_caught_at_three_hops():
    c = forest(_shapes(300, 17)["caterpillar"], 3)
    assert realises(c.mask, c.target, 3) and _walks_hold(c, 3)
    q, k = 299, 0
    walk = [k, *c.witness(q, k), q]
    a, b = next((x, y) for x, y in zip(walk, walk[1:]) if x != y)
    c.mask[b, a] = False  # the planted bug: a hop the witness uses is gone
    assert not _walks_hold(c, 3)

"""theory.spanner_structure: recognised shapes realise their targets, checked against independent references.

The references: :func:`hasse.theory.synthesis.realises` (the concrete engine), a walk-by-walk check of every
pair's witness written here, the brute-force minimum (n <= 6) and :func:`hasse.theory.spanners.block_causal`.
Targets are random unions of chains of classes and products of chains, with random class sizes and
the positions shuffled.
"""

from __future__ import annotations

import numpy as np
import pytest

from hasse.solvers.synthesis import brute_force_minimum
from hasse.theory.spanner_structure import (
    Construction, bad_witness, classes, components, grid_coordinates, structured)
from hasse.theory.spanners import block_causal_pairs
from hasse.theory.synthesis import realises
from hasse.theory.tree_spanners import forest_target


def walks_ok(c: Construction, target: np.ndarray) -> bool:
    """Every pair of ``target`` has a witness walk of at most ``depth`` hops, each an edge of ``M or I``."""
    edge = c.mask | np.eye(c.n, dtype=bool)
    for q, k in np.argwhere(target):
        walk = [int(k), *c.witness(int(q), int(k)), int(q)]
        if len(walk) - 1 > c.depth or any(not edge[b, a] for a, b in zip(walk, walk[1:])):
            return False
    return True


def lifted(order: np.ndarray, sizes) -> np.ndarray:
    """The order on classes ``order`` with class ``c`` made of ``sizes[c]`` equivalent positions."""
    cls = np.repeat(np.arange(len(sizes)), sizes)
    return order[np.ix_(cls, cls)]


def chain_order(m: int) -> np.ndarray:
    return np.tril(np.ones((m, m), dtype=bool))


def product_order(a: int, b: int) -> np.ndarray:
    i, j = np.divmod(np.arange(a * b), b)
    return (i[None, :] <= i[:, None]) & (j[None, :] <= j[:, None])


def block_diagonal(parts) -> np.ndarray:
    n = sum(len(p) for p in parts)
    t, at = np.zeros((n, n), dtype=bool), 0
    for p in parts:
        t[at:at + len(p), at:at + len(p)] = p
        at += len(p)
    return t


def shuffled(t: np.ndarray, rng) -> np.ndarray:
    perm = rng.permutation(len(t))
    return t[np.ix_(perm, perm)]


def random_part(kind: str, rng) -> np.ndarray:
    m = int(rng.integers(1, 7))
    if kind == "chain":
        order = chain_order(m)
    elif kind in ("forest", "reversed forest"):
        order = forest_target([-1] + [int(rng.integers(-1, i)) for i in range(1, m + 2)])
        order = order.T.copy() if kind == "reversed forest" else order
    else:
        order = product_order(int(rng.integers(2, 4)), int(rng.integers(2, 4)))
    return lifted(order, rng.integers(1, 4, size=len(order)))


def random_target(kinds, rng) -> np.ndarray:
    return shuffled(block_diagonal([random_part(k, rng) for k in kinds]), rng)


KINDS = ["chain", "product", "forest", "reversed forest"]


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
@pytest.mark.parametrize("kind", KINDS)
def test_random_unions_are_recognised_and_their_construction_realises(kind, depth):
    rng = np.random.default_rng(100 * depth + KINDS.index(kind))
    for _ in range(6):
        kinds = [kind] * int(rng.integers(1, 3)) + list(rng.choice(KINDS, size=int(rng.integers(0, 2))))
        t = random_target(kinds, rng)
        s = structured(t, depth)
        assert s is not None, kinds
        c = s.construction
        assert np.array_equal(c.target, t) and not c.mask.diagonal().any() and not (c.mask & ~t).any()
        assert realises(c.mask, t, depth)
        assert walks_ok(c, t) and bad_witness(c, t) is None
        assert len(s.lifts) == len(components(classes(t)[2]))


def test_catalogue_shapes_get_constructions_and_descriptions():
    block = lifted(chain_order(3), [4, 4, 4])
    assert structured(block, 3).description == "chain of 3 classes (4+4+4), stars"
    docs = block_diagonal([chain_order(3), chain_order(3), np.ones((2, 2), bool)])
    assert structured(docs, 2).description == "3 components: 2 x chain of 3 positions; one class of 2 positions"
    assert structured(product_order(2, 3), 2).description in ("product of chains 2 x 3 of 6 positions",
                                                              "product of chains 3 x 2 of 6 positions")


def test_other_shapes_are_not_recognised():
    diamond_top = product_order(2, 2)
    diamond_top = np.pad(diamond_top, ((0, 1), (0, 1)))
    diamond_top[4, :] = True  # the diamond plus one element above it
    n_shape = np.eye(4, dtype=bool)
    n_shape[2, 0] = n_shape[2, 1] = n_shape[3, 1] = True  # 0 < 2 > 1 < 3
    for t in (diamond_top, n_shape, block_diagonal([chain_order(3), n_shape])):
        assert structured(t, 2) is None
    assert grid_coordinates(diamond_top) is None and grid_coordinates(n_shape) is None


def test_trees_and_their_reverse_are_forests():
    tree = np.eye(4, dtype=bool)
    tree[1:, 0] = tree[3, 1] = True  # 0 below 1, 2, 3 and 1 below 3
    assert structured(tree, 2).description == "forest of 4 positions"
    assert structured(tree.T.copy(), 2).description == "reversed forest of 4 positions"


def test_the_witness_check_catches_a_dropped_pair():
    rng = np.random.default_rng(7)
    for depth in (2, 3):
        t = random_target(["chain", "product", "chain"], rng)
        c = structured(t, depth).construction
        for q, k in np.argwhere(c.mask)[:: max(1, int(c.mask.sum()) // 10)]:
            mask = c.mask.copy()
            mask[q, k] = False  # the planted bug: one pair of the construction less
            broken = Construction(mask, c.target, c.depth, c.witness)
            assert bad_witness(broken, t) is not None and not walks_ok(broken, t)


def test_the_witness_check_catches_a_walk_too_long():
    c = structured(chain_order(8), 2).construction
    assert bad_witness(Construction(c.mask, c.target, 1, c.witness), chain_order(8)) is not None


def test_no_cheaper_than_the_brute_force_minimum():
    rng = np.random.default_rng(3)
    for _ in range(12):
        t = random_target(list(rng.choice(["chain", "product"], size=2)), rng)
        if len(t) > 6 or (t.sum() - len(t)) > 16:
            continue
        for depth in (1, 2, 3):
            assert structured(t, depth).construction.pairs >= brute_force_minimum(t, depth).minimum


@pytest.mark.parametrize("n, block", [(64, 8), (100, 7), (256, 16), (30, 4)])
def test_never_worse_than_block_causal(n, block):
    t = lifted(chain_order(-(-n // block)), [min(block, n - s) for s in range(0, n, block)])
    for depth in (1, 2, 3, 4):
        c = structured(t, depth).construction
        assert c.pairs <= block_causal_pairs(n, block, depth)
        assert realises(c.mask, t, depth)


def test_classes_follow_the_first_position():
    t = shuffled(lifted(chain_order(3), [2, 1, 3]), np.random.default_rng(1))
    cls, first, order = classes(t)
    assert np.array_equal(first, [int(np.flatnonzero(cls == c)[0]) for c in range(3)])
    assert all(np.array_equal(t[q, k], order[cls[q], cls[k]]) for q in range(6) for k in range(6))

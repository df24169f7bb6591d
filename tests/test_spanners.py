"""Sparse constructions of chains, block-causal chains, unions and products (theory/spanners.py).

References are independent of the module: the targets are written out by loops or
comparisons of indices, ``R(L)`` is checked by ``theory.reach.reach`` (bitset engine)
and, for small sizes, by integer matrix powers; the pair counts by recurrences written
again here; the optimum for ``n <= 5`` by a brute force over every mask inside the
target. Each test is named after the bug it catches (planted by hand while writing it).
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
import pytest

from hasse.theory.errors import InputError
from hasse.theory.reach import reach
from hasse.theory.spanners import (block_causal, block_causal_pairs, chain, chain_pairs, chain_product,
                                   documents, sequential, tensor, union)

DEPTHS = (1, 2, 3, 4, 8)


def _power(mask: np.ndarray, layers: int) -> np.ndarray:
    """``(M or I)^L`` by integer matrix products (the plain definition)."""
    a = (mask | np.eye(mask.shape[0], dtype=bool)).astype(np.int64)
    r = np.eye(mask.shape[0], dtype=np.int64)
    for _ in range(layers):
        r = np.minimum(a @ r, 1)
    return r.astype(bool)


@lru_cache(maxsize=None)
def _f(depth: int, s: int) -> int:
    """The chain recurrence of the module docstring, written again."""
    if s <= 1:
        return 0
    if s - 1 <= depth:
        return s - 1
    if depth == 1:
        return s * (s - 1) // 2
    if depth == 2:
        return s - 1 + _f(2, s // 2) + _f(2, s - 1 - s // 2)
    best = _f(depth - 1, s)
    for b in range(2, min(s - 1, 2 * math.isqrt(s) + 1) + 1):
        sizes = [min(b, s - start) for start in range(0, s, b)]
        reps, rest_of_later = len(sizes), sum(size - 1 for size in sizes[1:])
        cost = (s - reps) + rest_of_later + _f(depth - 2, reps) + sum(_f(depth, size - 1) for size in sizes)
        best = min(best, cost)
    return best


def _check_realises(c, target: np.ndarray, depth: int, plain: bool = False) -> None:
    n = target.shape[0]
    assert c.mask.shape == (n, n) and c.depth == depth
    assert np.array_equal(c.target, target)
    assert not np.diagonal(c.mask).any()
    assert not (c.mask & ~target).any(), "an entry outside the target"
    assert np.array_equal(reach(c.mask, depth), target), "not every pair reached within L"
    assert np.array_equal(reach(c.mask, depth + 3), target)
    if plain:
        assert np.array_equal(_power(c.mask, depth), target)


def _check_witness(c, target: np.ndarray) -> None:
    a = c.mask | np.eye(c.n, dtype=bool)
    for q, k in zip(*np.nonzero(target)):
        walk = [int(k)] + c.witness(int(q), int(k)) + [int(q)]
        assert len(walk) - 1 <= c.depth, (q, k, walk)
        for lo, hi in zip(walk, walk[1:]):
            assert a[hi, lo], f"hop {lo} -> {hi} of the walk of ({q}, {k}) is not an edge"


def test_chain_reached_within_L_and_count_is_the_recurrence():
    for depth in DEPTHS:
        for n in range(1, 201):
            c = chain(n, depth)
            target = np.array([[k <= q for k in range(n)] for q in range(n)])
            _check_realises(c, target, depth, plain=n <= 40)
            assert c.pairs == chain_pairs(n, depth) == _f(depth, n), (n, depth)
    for n in range(2, 201):
        assert chain_pairs(n, 1) == n * (n - 1) // 2  # L = 1: the dense lower triangle
        assert chain_pairs(n, n - 1) == n - 1  # enough layers: the path


def test_chain_witness_every_pair_within_L_hops():
    for depth in DEPTHS:
        for n in list(range(1, 41)) + [64, 97, 128, 200]:
            _check_witness(chain(n, depth), np.tril(np.ones((n, n), dtype=bool)))


@pytest.mark.parametrize("n", [1024, 4096])
def test_chain_large_reached_and_counted(n):
    target = np.tril(np.ones((n, n), dtype=bool))
    rng = np.random.default_rng(n)
    for depth in (2, 3, 4, 8):
        c = chain(n, depth)
        _check_realises(c, target, depth)
        assert c.pairs == _f(depth, n)
        a = c.mask | np.eye(n, dtype=bool)
        for _ in range(300):  # a sample of pairs: every hop an edge
            k, q = sorted(rng.integers(0, n, size=2).tolist())
            walk = [k] + c.witness(q, k) + [q]
            assert len(walk) - 1 <= depth and all(a[hi, lo] for lo, hi in zip(walk, walk[1:]))


def test_chain_counts_fall_with_depth_and_stay_near_the_bounds():
    for n in (1024, 4096):
        counts = [chain_pairs(n, depth) for depth in (1, 2, 3, 4, 8)]
        assert counts == sorted(counts, reverse=True)
        assert counts[1] <= n * math.log2(n)  # 2 hops: O(n log n)
        assert counts[2] <= 3 * n * math.log2(math.log2(n))  # 3 hops: O(n log log n), as built here


def _brute_optimum(target: np.ndarray, depth: int) -> int:
    """The fewest off-diagonal entries inside ``target`` realising it within ``depth`` (every subset)."""
    n = target.shape[0]
    cells = [(q, k) for q in range(n) for k in range(n) if q != k and target[q, k]]
    for size in range(len(cells) + 1):
        for chosen in itertools.combinations(cells, size):
            m = np.zeros((n, n), dtype=bool)
            for q, k in chosen:
                m[q, k] = True
            if np.array_equal(_power(m, depth), target):
                return size
    raise AssertionError("the target itself realises it")


def test_small_counts_not_below_the_brute_force_optimum():
    for n in range(1, 6):
        target = np.tril(np.ones((n, n), dtype=bool))
        for depth in (1, 2, 3):
            optimum = _brute_optimum(target, depth)
            assert chain_pairs(n, depth) >= optimum
            if depth == 1 or n <= 4:
                assert chain_pairs(n, depth) == optimum  # dense and the path are optimal
    for n, block in ((4, 2), (5, 2), (4, 3)):
        blk = np.arange(n) // block
        target = blk[None, :] <= blk[:, None]
        for depth in (1, 2, 3):
            assert block_causal_pairs(n, block, depth) >= _brute_optimum(target, depth)


def test_against_the_exact_optimum_and_the_synthesis_check():
    """The exact optimiser (solvers/synthesis, Z3) as the reference: never below it; at 2 hops the
    centre point meets it for n <= 8; ``theory.synthesis.realises`` agrees with the bitset engine."""
    exact = pytest.importorskip("hasse.solvers.synthesis.exact")
    from hasse.theory.synthesis import realises

    for n in range(1, 9):
        target = np.tril(np.ones((n, n), dtype=bool))
        for depth in (1, 2, 3, 4):
            optimum = exact.minimum(target, depth, timeout=30)
            assert optimum.status == "optimal"
            assert chain_pairs(n, depth) >= optimum.cost
            if depth <= 2:
                assert chain_pairs(n, depth) == optimum.cost
            assert realises(chain(n, depth).mask, target, depth)
    for n, block, depth in ((6, 2, 2), (6, 3, 3), (7, 2, 4)):
        c = block_causal(n, block, depth)
        assert realises(c.mask, c.target, depth)
        assert c.pairs >= exact.minimum(c.target, depth, timeout=30).cost


def _block_count(n: int, block: int, depth: int) -> int:
    sizes = [min(block, n - start) for start in range(0, n, block)]
    if block == 1:
        return _f(depth, n)

    def centre(part):
        if not part:
            return 0
        m = len(part) // 2
        return sum(part) + part[m] - 2 + centre(part[:m]) + centre(part[m + 1:])

    if depth == 1:
        return sum(size * sum(sizes[:j + 1]) for j, size in enumerate(sizes)) - n
    if depth == 2:
        return centre(sizes)
    return min(centre(sizes), 2 * (n - len(sizes)) + _f(depth - 2, len(sizes)))


def test_block_causal_reached_witnessed_and_counted():
    for depth in (1, 2, 3, 4, 8):
        for n in range(1, 49):
            for block in (1, 2, 3, 5, 8):
                c = block_causal(n, block, depth)
                target = np.array([[k // block <= q // block for k in range(n)] for q in range(n)])
                _check_realises(c, target, depth, plain=n <= 24)
                _check_witness(c, target)
                assert c.pairs == block_causal_pairs(n, block, depth) == _block_count(n, block, depth)
    for depth in (2, 3, 4):  # block 1 is the chain
        assert np.array_equal(block_causal(300, 1, depth).mask, chain(300, depth).mask)


def test_documents_isolated_reached_and_witness_offsets():
    rng = np.random.default_rng(0)
    for depth in (1, 2, 3, 4):
        for _ in range(30):
            lengths = rng.integers(1, 25, size=rng.integers(1, 6)).tolist()
            c = documents(lengths, depth)
            doc = np.repeat(np.arange(len(lengths)), lengths)
            pos = np.arange(len(doc))
            target = (doc[:, None] == doc[None, :]) & (pos[None, :] <= pos[:, None])
            _check_realises(c, target, depth)
            _check_witness(c, target)
            assert c.pairs == sum(_f(depth, length) for length in lengths)
    mixed = union([chain(3, 1), block_causal(4, 2, 2)])
    assert mixed.depth == 2
    with pytest.raises(InputError):
        mixed.witness(4, 0)


def _product_target(n1: int, n2: int) -> np.ndarray:
    n = n1 * n2
    t = np.zeros((n, n), dtype=bool)
    for (i, j), (a, b) in itertools.product(itertools.product(range(n1), range(n2)), repeat=2):
        t[i * n2 + j, a * n2 + b] = a <= i and b <= j
    return t


def test_products_tensor_and_sequential_realise_the_product_order():
    for n1, n2 in ((1, 1), (1, 5), (4, 1), (3, 4), (7, 5), (9, 9)):
        target = _product_target(n1, n2)
        for depth in (1, 2, 3, 4):
            t = tensor(chain(n1, depth), chain(n2, depth))
            _check_realises(t, target, depth, plain=True)
            _check_witness(t, target)
            assert t.pairs == (_f(depth, n1) + n1) * (_f(depth, n2) + n2) - n1 * n2
            for d1 in range(1, depth):
                s = sequential(chain(n1, d1), chain(n2, depth - d1))
                _check_realises(s, target, depth, plain=True)
                _check_witness(s, target)
                assert s.pairs == _f(d1, n1) * n2 + n1 * _f(depth - d1, n2)
            best = chain_product(n1, n2, depth)
            _check_realises(best, target, depth)
            _check_witness(best, target)
            options = [(_f(depth, n1) + n1) * (_f(depth, n2) + n2) - n1 * n2]
            options += [_f(d, n1) * n2 + n1 * _f(depth - d, n2) for d in range(1, depth)]
            assert best.pairs == min(options)


def test_bad_sizes_are_input_errors():
    for bad in (0, -3, 2.5, True):
        with pytest.raises(InputError):
            chain(bad, 2)
        with pytest.raises(InputError):
            chain(4, bad)
        with pytest.raises(InputError):
            block_causal(4, bad, 2)
    with pytest.raises(InputError):
        documents([], 2)

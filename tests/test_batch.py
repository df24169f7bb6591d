"""hasse.theory.batch (vectorised over many masks) against the per-mask engine.

References: theory.reach.reach / hop_distances / power_cycle, theory.order.mask_to_order
(closure, classes, Hasse edges, convergence depth) and theory.sparse.sparse_realisation,
one mask at a time. Random batches for n = 1 … 12 (uint8 and uint16 rows), every
mask for n <= 3 (2^(n(n-1)) = 1, 4, 64), the shared cases of tests/cases.py.
"""

import numpy as np
import pytest

from tests.cases import MASK_CASES, SWAP2
from hasse.theory import batch
from hasse.theory.order import mask_to_order
from hasse.theory.reach import hop_distances, power_cycle, reach
from hasse.theory.sparse import sparse_realisation


def random_masks(n, b, seed, density=None):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.6, size=(b, 1, 1)) if density is None else density
    return rng.random((b, n, n)) < p


def every_mask(n):
    idx = np.arange(2 ** (n * (n - 1)), dtype=np.uint64)
    return batch.unpack(batch.masks_from_indices(n, idx), n)


def mask_sets():
    for n in range(1, 13):
        yield n, random_masks(n, 40, seed=n)
    for n in (1, 2, 3):
        yield n, every_mask(n)
    for name, (m, *_rest) in MASK_CASES.items():
        yield len(m), m[None]


CASES = list(mask_sets())
IDS = [f"n{n}-{len(ms)}" for n, ms in CASES]


@pytest.mark.parametrize("n,masks", CASES, ids=IDS)
def test_reach_and_depth_match_engine(n, masks):
    rows = batch.pack(masks)
    assert np.array_equal(batch.unpack(rows, n), masks)
    ps = batch.powers(rows, n + 1)
    depth = batch.convergence_depth(rows)
    hops = batch.hop_distances(rows)
    longest = batch.max_hop_distance(rows)
    for b, m in enumerate(masks):
        for level in range(n + 2):
            assert np.array_equal(batch.unpack(ps[level], n)[b], reach(m, level)), (b, level)
        order = mask_to_order(m)
        assert depth[b] == order.convergence_depth
        assert np.array_equal(hops[b], hop_distances(m))
        assert longest[b] == hop_distances(m).max()


@pytest.mark.parametrize("n,masks", CASES, ids=IDS)
def test_order_and_hasse_match_engine(n, masks):
    rows = batch.pack(masks)
    limit = batch.closure(rows)
    classes = batch.unpack(batch.equivalence(limit), n)
    rep = batch.representatives(batch.equivalence(limit))
    hasse = batch.unpack(batch.covering(limit), n)
    closure = batch.unpack(limit, n)
    for b, m in enumerate(masks):
        order = mask_to_order(m)
        assert np.array_equal(closure[b], order.closure())
        same = order.class_of[:, None] == order.class_of[None, :]
        assert np.array_equal(classes[b], same)
        assert [rep[q, b] for q in range(n)] == [order.classes[c][0] for c in order.class_of]
        edges = {(int(order.class_of[k]), int(order.class_of[q])) for q, k in zip(*np.nonzero(hasse[b]))}
        assert edges == set(order.hasse_edges)
        for lo, up in order.hasse_edges:  # every member of the upper class gets every member of the lower
            assert hasse[b][np.ix_(order.classes[up], order.classes[lo])].all()


@pytest.mark.parametrize("n,masks", CASES, ids=IDS)
def test_sparse_realisation_matches_engine(n, masks):
    sparse = batch.unpack(batch.sparse_realisation(batch.pack(masks)), n)
    for b, m in enumerate(masks):
        assert np.array_equal(sparse[b], sparse_realisation(m))


@pytest.mark.parametrize("n", range(1, 6))
def test_power_cycle_matches_engine(n):
    masks = random_masks(n, 60, seed=100 + n, density=0.3)
    masks[0] = np.roll(np.eye(n, dtype=bool), 1, axis=1)  # a permutation: period n
    pre, per = batch.power_cycle(batch.pack(masks))
    for b, m in enumerate(masks):
        cycle = power_cycle(m)
        assert (pre[b], per[b]) == (cycle.preperiod, cycle.period)
    pre, per = batch.power_cycle(batch.pack(SWAP2[None]))
    assert (pre[0], per[0]) == (0, 2)


@pytest.mark.parametrize("n", range(1, 5))
@pytest.mark.parametrize("diagonal", [False, True])
def test_masks_from_indices_enumerates_each_mask_once(n, diagonal):
    # 2^(n(n-1)) masks without the diagonal (1, 4, 64, 4096), 2^(n^2) with it (n <= 3 here).
    if diagonal and n > 3:
        pytest.skip("2^16 masks: enough with n <= 3")
    bits = n * n if diagonal else n * (n - 1)
    idx = np.arange(2**bits, dtype=np.uint64)
    masks = batch.unpack(batch.masks_from_indices(n, idx, diagonal=diagonal), n)
    assert len({m.tobytes() for m in masks}) == 2**bits
    if not diagonal:
        assert not masks[:, np.arange(n), np.arange(n)].any()
    # decoding is bitwise: decode(i | j) = decode(i) | decode(j) on disjoint bits
    lo, hi = idx & np.uint64(5), idx & ~np.uint64(5)
    assert np.array_equal(batch.masks_from_indices(n, idx, diagonal=diagonal),
                          batch.masks_from_indices(n, lo, diagonal=diagonal)
                          | batch.masks_from_indices(n, hi, diagonal=diagonal))


def test_row_dtype_and_large_n():
    assert batch.row_dtype(8) == np.uint8 and batch.row_dtype(33) == np.uint64
    with pytest.raises(ValueError):
        batch.row_dtype(65)
    masks = random_masks(40, 3, seed=7, density=0.05)
    rows = batch.pack(masks)
    for b, m in enumerate(masks):
        assert np.array_equal(batch.unpack(batch.closure(rows), 40)[b], mask_to_order(m).closure())

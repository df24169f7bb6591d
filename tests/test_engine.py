"""The engine (theory.order / theory.reach / theory.analysis) against independent references.

References: explicit Boolean matrix powers (numpy integer matmul) and the
networkx pipeline of theory.reference. Exhaustive for n <= 4 (the diagonal does
not matter under the residual, so 2^(n(n-1)) masks: 1, 4, 64, 4096), random
(hypothesis) up to n = 64.
"""

import itertools
import subprocess
import sys
import textwrap

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tests.cases import MASK_CASES, SWAP2
from hasse.theory import hop_distances, mask_to_analysis, mask_to_order, power_cycle
from hasse.theory.reach import reach
from hasse.theory.reference import depth_by_powers, flow_graph, reference_order

# ---------------------------------------------------------------- references


def powers(mask, residual=True):
    """A^0, A^1, ... as explicit Boolean matrices until the first repeat (inclusive)."""
    a = np.asarray(mask, dtype=bool).copy()
    if residual:
        a |= np.eye(len(a), dtype=bool)
    out = [np.eye(len(a), dtype=bool)]
    while True:
        nxt = (a.astype(np.int64) @ out[-1].astype(np.int64)) > 0
        for i, p in enumerate(out):
            if np.array_equal(p, nxt):
                return out, i, len(out) - i
        out.append(nxt)


def reference_canonical(mask):
    """Canonical class order via networkx: lexicographic topological sort of the condensation by min member."""
    cond = nx.condensation(flow_graph(mask))
    key = {c: min(cond.nodes[c]["members"]) for c in cond.nodes}
    order = nx.lexicographical_topological_sort(cond, key=lambda c: key[c])
    return tuple(tuple(sorted(cond.nodes[c]["members"])) for c in order)


def check_against_references(mask):
    mask = np.asarray(mask, dtype=bool)
    n = len(mask)
    order = mask_to_order(mask)
    ref = reference_order(mask)
    assert order.classes == reference_canonical(mask)
    assert frozenset(frozenset(c) for c in order.classes) == ref.classes
    edges = frozenset((frozenset(order.classes[a]), frozenset(order.classes[b])) for a, b in order.hasse_edges)
    assert edges == ref.hasse_edges
    assert all(a < b for a, b in order.hasse_edges), "lower class must come first in canonical order"
    assert np.array_equal(order.closure(), ref.closure)
    assert order.dense == ref.dense
    seq, first, _ = powers(mask)
    assert order.convergence_depth == first == ref.convergence_depth
    assert order.convergence_depth <= max(n - 1, 0)
    assert np.array_equal(order.closure(), seq[first])
    # height = classes on the longest chain of the Hasse diagram
    dag = nx.DiGraph(order.hasse_edges)
    dag.add_nodes_from(range(len(order.classes)))
    assert order.height == nx.dag_longest_path_length(dag) + 1


# ---------------------------------------------------------------- exhaustive


def all_masks(n):
    off = [(q, k) for q in range(n) for k in range(n) if q != k]
    for bits in itertools.product((False, True), repeat=len(off)):
        mask = np.zeros((n, n), dtype=bool)
        for (q, k), b in zip(off, bits):
            mask[q, k] = b
        yield mask


@pytest.mark.parametrize("n", [1, 2, 3])
def test_every_mask_small(n):
    for mask in all_masks(n):
        check_against_references(mask)


def test_every_mask_n4():  # 4096 masks, about 3 s
    for mask in all_masks(4):
        check_against_references(mask)


# ---------------------------------------------------------------- random, up to n = 64

mask_strategy = st.integers(1, 64).flatmap(
    lambda n: st.sampled_from([0.02, 0.05, 0.1, 0.3]).flatmap(
        lambda p: st.integers(0, 2**32 - 1).map(lambda seed: _random_mask(n, p, seed))
    )
)


def _random_mask(n, p, seed):
    rng = np.random.default_rng(seed)
    mask = rng.random((n, n)) < p
    if seed % 2:  # half of them acyclic, where long paths are common
        mask = np.tril(mask)
    return mask


@settings(max_examples=150, deadline=None)
@given(mask_strategy)
def test_random_masks(mask):
    check_against_references(mask)


@settings(max_examples=60, deadline=None)
@given(mask_strategy, st.integers(0, 6))
def test_reach_is_boolean_power(mask, depth):
    seq, first, _ = powers(mask)
    expected = seq[min(depth, first)]
    assert np.array_equal(reach(mask, depth), expected)


@settings(max_examples=60, deadline=None)
@given(mask_strategy)
def test_hop_distances_match_networkx(mask):
    dist = hop_distances(mask)
    expected = np.full(dist.shape, -1)
    for k, lengths in nx.all_pairs_shortest_path_length(flow_graph(mask)):
        for q, d in lengths.items():
            expected[q, k] = d
    assert np.array_equal(dist, expected)
    finite = dist[dist >= 0]
    assert mask_to_order(mask).convergence_depth == finite.max()


# ---------------------------------------------------------------- named cases


@pytest.mark.parametrize("name", sorted(MASK_CASES))
def test_named_cases(name):
    mask, classes, edges, depth, dense = MASK_CASES[name]
    a = mask_to_analysis(mask)
    assert (a.classes, a.hasse_edges, a.convergence_depth, a.dense) == (classes, edges, depth, dense)
    check_against_references(mask)


def test_depth_by_powers_reference_agrees():
    for name, (mask, *_rest, depth, _dense) in MASK_CASES.items():
        assert depth_by_powers(mask) == depth, name


# ---------------------------------------------------------------- no residual


def test_swap_has_period_two_and_no_limit():
    a = mask_to_analysis(SWAP2, residual=False)
    assert (a.preperiod, a.period, a.convergence_depth) == (0, 2, None)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_power_cycle_exhaustive(n):
    # every mask, diagonal included this time: 2^(n^2) = 2, 16, 512
    for bits in itertools.product((False, True), repeat=n * n):
        mask = np.array(bits, dtype=bool).reshape(n, n)
        _, first, period = powers(mask, residual=False)
        cycle = power_cycle(mask)
        assert (cycle.preperiod, cycle.period) == (first, period)
        a = mask_to_analysis(mask, residual=False)
        assert (a.preperiod, a.period) == (first, period)
        assert a.convergence_depth == (first if period == 1 else None)


def test_power_cycle_random_larger():
    rng = np.random.default_rng(5)
    for _ in range(100):
        n = int(rng.integers(2, 9))
        mask = rng.random((n, n)) < 0.3
        _, first, period = powers(mask, residual=False)
        assert power_cycle(mask) == type(power_cycle(mask))(first, period)


def test_reach_without_residual_and_layerwise():
    seq, *_ = powers(SWAP2, residual=False)
    assert np.array_equal(reach(SWAP2, 1, residual=False), SWAP2)
    assert np.array_equal(reach(SWAP2, 2, residual=False), np.eye(2, dtype=bool))
    # different masks per layer: first layer 1 <- 0, second layer 2 <- 1
    l1 = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0]], dtype=bool)
    l2 = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 0]], dtype=bool)
    r = reach([l1, l2], 2)
    assert r[2, 0] and not reach([l2, l1], 2)[2, 0]


def test_layers_gives_reachability():
    mask = MASK_CASES["chain4"][0]
    for depth in range(5):
        a = mask_to_analysis(mask, layers=depth)
        seq, first, _ = powers(mask)
        assert np.array_equal(a.reachability, seq[min(depth, first)])


def test_empty_rows():
    mask = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=bool)
    assert mask_to_analysis(mask).empty_rows == (0,)


# ---------------------------------------------------------------- imports


def test_theory_imports_without_torch_and_z3():
    code = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('torch', 'z3', 'matplotlib'):
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
        import hasse.theory.order, hasse.theory.reach, hasse.theory.analysis, hasse.theory.reference
        from hasse import theory
        import pkgutil, importlib
        for mod in pkgutil.walk_packages(theory.__path__, 'hasse.theory.'):
            importlib.import_module(mod.name)
        assert not any(m.split('.')[0] in ('torch', 'z3') for m in sys.modules)
        print('ok')
        """
    )
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"

"""Leak, isolation and flow analysis against an independent brute force (explicit Boolean powers)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hasse.theory.leak import find_flows, find_isolation, find_leaks, nearest_sources
from hasse.theory.task import make_task


def powers_until_stable(mask):
    """R(0), R(1), … (with the residual) as explicit Boolean matrices, until the limit."""
    a = mask | np.eye(len(mask), dtype=bool)
    seq = [np.eye(len(mask), dtype=bool)]
    while True:
        nxt = (a.astype(np.int64) @ seq[-1].astype(np.int64)) > 0
        if np.array_equal(nxt, seq[-1]):
            return seq
        seq.append(nxt)


def brute_depth(seq, p, holders):
    """Smallest L with R(L)[p, j] for some holder j, or None."""
    for depth, r in enumerate(seq):
        if any(r[p, j] for j in holders):
            return depth
    return None


def assert_real_path(mask, path, start_ok, end):
    assert path[-1] == end and start_ok(path[0])
    for a, b in zip(path, path[1:]):
        assert a != b and mask[b, a], f"{a} -> {b} is not an attention edge"


def random_task(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 14))
    tokens = int(rng.integers(1, 6))
    mask = rng.random((size, size)) < rng.choice([0.08, 0.2, 0.4])
    if seed % 3 == 0:
        mask = np.tril(mask)
    inputs = []
    for p in range(size):
        kind = rng.integers(0, 4)
        if kind == 0:
            inputs.append(("[MASK]", p))
        elif kind == 1:
            inputs.append((f"x{rng.integers(tokens)}", p))
        else:
            picks = sorted(set(rng.integers(0, tokens, size=2).tolist()))
            inputs.append(("agg(" + ",".join(f"x{i}" for i in picks) + ")", p))
    labels = [None if rng.random() < 0.4 else sorted(set(rng.integers(0, tokens, size=2).tolist()))
              for _ in range(size)]
    perm = rng.permutation(size).tolist()
    isolate = [perm[: size // 2], perm[size // 2 :]] if size >= 2 and seed % 2 else []
    return make_task(tokens, inputs, labels, mask, isolate=isolate)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(["attend-none", "attend-all"]))
def test_leaks_match_brute_force(seed, policy):
    task = random_task(seed)
    mask = task.mask.copy()
    if policy == "attend-all":  # the definition of the policy: an empty row attends every key
        mask[~mask.any(axis=1)] = True
    seq = powers_until_stable(mask)
    sources = task.all_sources()
    report = find_leaks(task, empty_rows=policy)
    found = {(x.position, x.target): x for x in report.leaks}
    for p in task.supervised:
        for t in task.labels[p]:
            holders = [j for j in range(task.size) if t in sources[j]]
            depth = brute_depth(seq, p, holders)
            if depth is None:
                assert (p, t) not in found
                continue
            leak = found[(p, t)]
            assert leak.depth == depth == len(leak.path) - 1
            assert leak.source == leak.path[0] and t in sources[leak.source]
            assert_real_path(mask, leak.path, lambda j: t in sources[j], p)
    assert len(found) == len(report.leaks)
    # --layers boundaries: a leak of depth d is absent at L = d - 1 and present at L = d
    for leak in report.leaks:
        assert leak in report.leaks_within(leak.depth)
        assert leak not in report.leaks_within(leak.depth - 1)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**31))
def test_isolation_matches_brute_force(seed):
    task = random_task(seed | 1)
    if not task.isolate:
        return
    seq = powers_until_stable(task.mask)
    got = {(f.position, next(g for g, m in enumerate(task.isolate) if f.source in m)): f
           for f in find_isolation(task.mask, task.isolate)}
    for g, members in enumerate(task.isolate):
        for p in members:
            for h, other in enumerate(task.isolate):
                if h == g:
                    continue
                depth = brute_depth(seq, p, other)
                if depth is None:
                    assert (p, h) not in got
                else:
                    f = got[(p, h)]
                    assert f.depth == depth and f.source in other
                    assert_real_path(task.mask, f.path, lambda j: j in other, p)


def test_flow_between_sets():
    causal = np.tril(np.ones((5, 5), dtype=bool))
    window = causal & ~np.tri(5, k=-2, dtype=bool)  # each query sees itself and the one before
    flows = find_flows(window, sources=[0], sinks=[3, 4])
    assert [(f.position, f.path, f.depth) for f in flows] == [(3, (0, 1, 2, 3), 3), (4, (0, 1, 2, 3, 4), 4)]
    assert find_flows(window, sources=[4], sinks=[0, 1, 2]) == ()
    (self_flow,) = find_flows(window, sources=[2], sinks=[2])
    assert self_flow.depth == 0 and self_flow.path == (2,)


def test_coverage_and_density():
    task = make_task(4, [("x0", 0), ("[MASK]", 1), ("[MASK]", 2)], [None, 1, [2, 3]],
                     np.tril(np.ones((3, 3), dtype=bool)))
    report = find_leaks(task)
    assert report.leak_free
    assert report.target_coverage == 3 / 4 and report.label_density == 2 / 3


def test_dense_shortcut_agrees_with_propagation():
    # the same reachability realised densely and sparsely must give the same depths where they coincide
    n = 6
    chain = np.eye(n, dtype=bool) | np.eye(n, k=-1, dtype=bool)
    dense = np.tril(np.ones((n, n), dtype=bool))
    colours = [[0]] + [[] for _ in range(n - 1)]
    sparse_paths = nearest_sources(chain, colours, [(p, 0) for p in range(n)])
    dense_paths = nearest_sources(dense, colours, [(p, 0) for p in range(n)])
    assert all(len(sparse_paths[(p, 0)]) - 1 == p for p in range(n))
    assert all(dense_paths[(p, 0)] == ((0, p) if p else (0,)) for p in range(n))

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


# --- the witness engine against a search per pair (issue 20, item 9) -------------------------------------------
#
# The reference is written from the rule of nearest_sources alone: a breadth-first search per (position, colour)
# from the colour's holders along plain adjacency lists gives the hop distance of every position; the witness is
# then taken back from p, each step to the smallest attended position one hop nearer the holders. networkx checks
# the length on its own.

import networkx as nx

from hasse.theory import leak as leak_module
from hasse.theory.catalog import build_task
from hasse.theory.reference import flow_graph


def reference_paths(mask, colours, queries):
    """nearest_sources by one BFS per query (the per-source search the engine replaces)."""
    n = len(mask)
    preds = [[u for u in range(n) if u != q and mask[q, u]] for q in range(n)]
    succs = [[q for q in range(n) if q != k and mask[q, k]] for k in range(n)]
    out = {}
    for p, c in queries:
        dist = {v: 0 for v in range(n) if c in colours[v]}
        frontier = sorted(dist)
        while frontier and p not in dist:
            nxt = []
            for k in frontier:
                for q in succs[k]:
                    if q not in dist:
                        dist[q] = dist[k] + 1
                        nxt.append(q)
            frontier = nxt
        if p not in dist:
            continue
        path = [p]
        while dist[path[-1]]:
            cur = path[-1]
            path.append(min(u for u in preds[cur] if dist.get(u) == dist[cur] - 1))
        out[(p, c)] = tuple(reversed(path))
    return out


def check_paths(mask, colours, queries, got):
    """``got`` is the reference's answer, each path real and as short as networkx says."""
    assert got == reference_paths(mask, colours, queries)
    graph = flow_graph(mask)
    for (p, c), path in got.items():
        holders = [v for v in range(len(mask)) if c in colours[v]]
        assert c in colours[path[0]] and path[-1] == p
        assert all(a != b and mask[b, a] for a, b in zip(path, path[1:]))
        lengths = nx.multi_source_dijkstra_path_length(graph, holders)
        assert len(path) - 1 == lengths[p]


def random_colouring(rng, n, colours, holders_per_colour):
    held = [[] for _ in range(n)]
    for c in range(colours):
        for v in rng.choice(n, size=min(n, holders_per_colour), replace=False).tolist():
            held[v].append(c)
    return held


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([0.01, 0.03, 0.1, 0.3, 0.6, 0.95]), st.booleans())
def test_witnesses_match_a_search_per_pair(seed, density, lower):
    """Random sparse and dense masks up to 90 positions: wide levels go through the numpy OR, narrow ones not."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90))
    mask = rng.random((n, n)) < density
    if lower:
        mask = np.tril(mask)
    held = random_colouring(rng, n, int(rng.integers(1, 8)), int(rng.integers(1, 4)))
    queries = [(p, c) for p in range(n) for c in range(8) if rng.random() < 0.3]
    check_paths(mask, held, queries, nearest_sources(mask, held, queries))


@pytest.mark.parametrize("n, w", [(60, 2), (200, 3), (400, 30)])
def test_witnesses_on_long_bidirectional_windows(n, w):
    """Deep searches (hop distances up to n - 1), both sides of the bidirectional search growing many levels."""
    idx = np.arange(n)
    mask = np.abs(idx[:, None] - idx[None, :]) < w
    held = [[0] if v == 0 else [1] if v == n - 1 else [] for v in range(n)]
    queries = [(p, c) for p in range(n) for c in (0, 1)]
    got = nearest_sources(mask, held, queries)
    assert len(got) == 2 * n
    check_paths(mask, held, queries, got)


BAD_DESIGNS = ["bad_butterfly_self:n=5", "bad_butterfly_crossed:n=6", "bad_butterfly_crossed:n=33",
               "bad_block_own_content:n=6,block=2", "bad_mlm_unmasked:n=5", "bad_packed_window:lengths=3+4,window=3",
               "bad_packed_window:lengths=9+7+12,window=4", "bad_block_query_history:n=6,block=2"]


@pytest.mark.parametrize("spec", BAD_DESIGNS)
def test_bad_designs_leak_as_the_search_per_pair_says(spec):
    task = build_task(spec)
    report = find_leaks(task, empty_rows="attend-none")
    sources = task.all_sources()
    queries = [(p, t) for p in task.supervised for t in task.labels[p]]
    want = reference_paths(task.mask, sources, queries)
    assert {(x.position, x.target): x.path for x in report.leaks} == want
    assert all(x.depth == len(x.path) - 1 and x.source == x.path[0] for x in report.leaks)
    check_paths(task.mask, sources, queries, want)
    if task.isolate:
        group_of = {p: g for g, members in enumerate(task.isolate) for p in members}
        colours = [[group_of[p]] if p in group_of else [] for p in range(task.size)]
        iso = [(p, h) for g, members in enumerate(task.isolate) for p in members
               for h in range(len(task.isolate)) if h != g]
        assert {(f.position, group_of[f.source]): f.path for f in report.isolation} == \
            reference_paths(task.mask, colours, iso)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31))
def test_flows_match_a_search_per_pair(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    mask = rng.random((n, n)) < rng.choice([0.03, 0.1, 0.4])
    mask[~mask.any(axis=1), 0] = True  # no empty rows: the policy is not under test here
    sources = rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False).tolist()
    sinks = rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False).tolist()
    colours = [[0] if v in sources else [] for v in range(n)]
    want = reference_paths(mask, colours, [(p, 0) for p in sorted(sinks)])
    assert {f.position: f.path for f in find_flows(mask, sources, sinks)} == {p: path for (p, _), path in want.items()}


def test_leak_check_does_not_compute_the_convergence_depth(monkeypatch):
    """The leaks need the closure only: L* (O(edges · n) on a sparse acyclic mask, 36 s of the 39 s that
    `hasse leak bad_butterfly_crossed:n=2048` took) is left to whoever asks for it."""
    from hasse.theory import order

    def refuse(*_):
        raise AssertionError("the convergence depth was computed")

    monkeypatch.setattr(order, "_acyclic_depth", refuse)
    monkeypatch.setattr(order, "propagate", refuse)
    task = build_task("bad_butterfly_crossed:n=8")
    assert find_leaks(task).leaks and find_flows(task.mask, [0], range(task.size))


def test_witness_search_expands_the_balls_not_the_edges(monkeypatch):
    """On bad_butterfly_crossed every leak is found by ORing a handful of rows (the holders' and P_m's), however
    large n is: the per-level cost is the positions expanded, not the mask's edges (Θ(n²) here)."""
    expanded = []
    union = leak_module._BitRows.union

    def counting(self, x):
        expanded.append(x.bit_count())
        return union(self, x)

    monkeypatch.setattr(leak_module._BitRows, "union", counting)
    for n in (16, 128):
        expanded.clear()
        report = find_leaks(build_task(f"bad_butterfly_crossed:n={n}"))
        assert len(report.leaks) == n - 1
        assert sum(expanded) <= 6 * len(report.leaks)


def test_lazy_convergence_depth_reads_the_mask_as_it_was():
    """L* is computed on first use from the order's own copy: changing the array afterwards changes nothing."""
    from hasse.theory.order import mask_to_order
    from hasse.theory.reference import reference_order

    n = 7
    chain = np.eye(n, dtype=bool) | np.eye(n, k=-1, dtype=bool)
    order = mask_to_order(chain)
    chain[:] = np.tril(np.ones((n, n), dtype=bool))
    assert order.convergence_depth == n - 1 == reference_order(np.eye(n, dtype=bool) | np.eye(n, k=-1, dtype=bool)
                                                               ).convergence_depth


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(["causal", "bidirectional", "blocks"]))
def test_dense_witnesses_match_a_search_per_pair(seed, shape):
    """Dense limits (one hop reaches everything reachable): the smallest attended holder, several per colour."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 70))
    idx = np.arange(n)
    mask = {"causal": idx[:, None] >= idx[None, :], "bidirectional": np.ones((n, n), dtype=bool),
            "blocks": idx[:, None] // 5 >= idx[None, :] // 5}[shape]
    held = random_colouring(rng, n, int(rng.integers(1, 5)), int(rng.integers(1, 6)))
    queries = [(p, c) for p in range(n) for c in range(5)]
    assert leak_module.mask_to_order(mask).dense
    check_paths(mask, held, queries, nearest_sources(mask, held, queries))


# --- stack leaks, isolation and flows (theory/stack_leak.py) against the definitions -----------------------------
#
# First arrivals from plain numpy products (theory.stack.reach_reference), the nearest position by (layers, position),
# the witness walked back by the rule of StackFlow.witness with plain loops.

from hasse.theory.stack import LayerStack, StackLayer, reach_reference
from hasse.theory.stack_leak import find_stack_flows, find_stack_isolation, find_stack_leaks


def reference_first(masks, depth):
    n = len(masks[0])
    first = np.full((n, n), -1)
    for layers in range(depth + 1):
        first[(first < 0) & reach_reference(masks, layers) if layers else np.eye(n, dtype=bool)] = layers
    return first


def reference_stack_flow(masks, first, k, q):
    """(path, hop layers, depth) of the earliest arrival of k at q, ties to the fewest layers, then smallest."""
    path, hops, cur = [q], [], q
    while cur != k:
        arrival = int(first[cur, k])
        layer = masks[(arrival - 1) % len(masks)]
        v = min((int(first[u, k]), u) for u in range(len(layer))
                if u != cur and layer[cur, u] and 0 <= first[u, k] <= arrival - 1)[1]
        hops.append(arrival)
        path.append(v)
        cur = v
    return tuple(reversed(path)), tuple(reversed(hops)), int(first[q, k])


def reference_nearest(first, p, candidates):
    seen = [(int(first[p, k]), k) for k in candidates if first[p, k] >= 0]
    return min(seen)[1] if seen else None


def random_stack(rng, n):
    masks = []
    for _ in range(int(rng.integers(1, 4))):
        m = rng.random((n, n)) < rng.choice([0.05, 0.15, 0.4])
        m[~m.any(axis=1), 0] = True  # no empty rows: the policy is not under test here
        masks.append(m)
    return masks, LayerStack(tuple(StackLayer(m, f"layer{i}") for i, m in enumerate(masks)), "random")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31))
def test_stack_isolation_and_flows_match_the_definitions(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 22))
    masks, stack = random_stack(rng, n)
    first = reference_first(masks, len(masks) * (n + 1))
    groups = [sorted(set(rng.integers(0, n, size=int(rng.integers(0, 6))).tolist())) for _ in range(rng.integers(0, 6))]
    want = []
    for g, members in enumerate(groups):
        for p in members:
            for h, others in enumerate(groups):
                if h != g and (k := reference_nearest(first, p, others)) is not None:
                    want.append((p, k, *reference_stack_flow(masks, first, k, p)))
    assert [(f.position, f.source, f.path, f.hop_layers, f.depth) for f in find_stack_isolation(stack, groups)] == want
    sources = sorted(set(rng.integers(0, n, size=int(rng.integers(1, n + 1))).tolist()))
    sinks = sorted(set(rng.integers(0, n, size=int(rng.integers(1, n + 1))).tolist()))
    want = [(p, k, *reference_stack_flow(masks, first, k, p)) for p in sinks
            if (k := reference_nearest(first, p, sources)) is not None]
    got = find_stack_flows(stack, sources, sinks)
    assert [(f.position, f.source, f.path, f.hop_layers, f.depth) for f in got] == want
    for f in got:  # each hop an edge of the layer it names, the layers increasing
        assert all(masks[(layer - 1) % len(masks)][b, a] for a, b, layer in zip(f.path, f.path[1:], f.hop_layers))
        assert list(f.hop_layers) == sorted(set(f.hop_layers)) and (not f.hop_layers or f.hop_layers[-1] == f.depth)


@pytest.mark.parametrize("spec", ["bad_butterfly_crossed:n=7", "bad_packed_window:lengths=3+4+5,window=3",
                                  "bad_block_own_content:n=6,block=2"])
def test_stack_leaks_of_bad_designs_match_the_definitions(spec):
    task = build_task(spec)
    masks = [task.mask, np.tril(task.mask)]
    masks[1][~masks[1].any(axis=1), 0] = True
    stack = LayerStack(tuple(StackLayer(m, f"layer{i}") for i, m in enumerate(masks)), "two")
    first = reference_first(masks, 2 * (task.size + 1))
    sources = task.all_sources()
    want = []
    for p in task.supervised:
        for t in task.labels[p]:
            if (j := reference_nearest(first, p, [v for v in range(task.size) if t in sources[v]])) is not None:
                want.append((p, t, j, *reference_stack_flow(masks, first, j, p)))
    report = find_stack_leaks(task, stack, empty_rows="attend-none")
    assert [(x.position, x.target, x.source, x.path, x.hop_layers, x.depth) for x in report.leaks] == want

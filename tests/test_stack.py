"""Stacks of different masks per layer (theory/stack.py, stack_spec.py, stack_leak.py, presets.py).

References are independent of the engines under test: ``R(L)`` by plain numpy products
of ``I or M_i`` (``reach_reference``, written again here as ``_product``), first arrivals
by a breadth-first search over (position, layer) states, receptive fields and preset
patterns written out by hand from the cited configurations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hasse.theory.catalog import build_mask
from hasse.theory.errors import InputError
from hasse.theory.stack import LayerStack, StackLayer, _interval_form, propagate
from hasse.theory.stack_leak import find_stack_flows, find_stack_isolation, find_stack_leaks
from hasse.theory.inputs.stacks import build_stack, split_stack
from hasse.theory.task import make_task
from tests.stack_reference import arrivals

PRESETS = ("gemma2", "gemma3", "llama4", "gpt_oss", "mistral", "hybrid")


def _product(masks, layers):
    """R(layers) of ``masks`` cycled, by integer matrix products (the plain definition)."""
    n = masks[0].shape[0]
    r = np.eye(n, dtype=np.int64)
    for i in range(layers):
        a = np.asarray(masks[i % len(masks)], dtype=np.int64) | np.eye(n, dtype=np.int64)
        r = ((a @ r) > 0).astype(np.int64)
    return r.astype(bool)


def _stack(masks, spec="test"):
    return LayerStack(tuple(StackLayer(np.asarray(m, dtype=bool), f"m{i}") for i, m in enumerate(masks)), spec)


def _random_masks(rng, n, depth, density):
    return [rng.random((n, n)) < density for _ in range(depth)]


def _random_interval_masks(rng, n, depth):
    out = []
    for _ in range(depth):
        width = rng.integers(1, n + 1)
        kind = rng.integers(0, 3)
        q = np.arange(n)[:, None]
        k = np.arange(n)[None, :]
        if kind == 0:  # a causal window
            m = (k <= q) & (k > q - width)
        elif kind == 1:  # chunks, causal inside
            m = (k // width == q // width) & (k <= q)
        else:  # documents of random lengths, bidirectional inside
            cuts = np.sort(rng.choice(np.arange(1, n), size=rng.integers(0, max(n // 2, 1)), replace=False))
            doc = np.searchsorted(cuts, np.arange(n), side="right")
            m = doc[:, None] == doc[None, :]
        out.append(m)
    return out


# --------------------------------------------------------------------------- the engines


@pytest.mark.parametrize("seed", range(12))
def test_product_engine_matches_the_definition(seed):
    rng = np.random.default_rng(seed)
    n, depth = int(rng.integers(2, 9)), int(rng.integers(1, 4))
    masks = _random_masks(rng, n, depth, density=rng.uniform(0.05, 0.4))
    flow = propagate(_stack(masks), engine="product")
    for layers in range(0, depth * n + 2):
        assert np.array_equal(flow.reach(layers), _product(masks, layers)), layers
    assert flow.converged is not None
    limit = _product(masks, depth * n)
    assert np.array_equal(flow.limit, limit)
    assert np.array_equal(_product(masks, flow.converged), limit)
    if flow.converged > 0:
        assert not np.array_equal(_product(masks, flow.converged - 1), limit)


@pytest.mark.parametrize("seed", range(12))
def test_interval_engine_matches_the_product_engine(seed):
    rng = np.random.default_rng(100 + seed)
    n, depth = int(rng.integers(2, 14)), int(rng.integers(1, 5))
    masks = _random_interval_masks(rng, n, depth)
    stack = _stack(masks)
    fast, slow = propagate(stack, engine="interval"), propagate(stack, engine="product")
    assert fast.engine == "interval"
    assert np.array_equal(fast.first, slow.first)
    assert fast.converged == slow.converged


def test_interval_form_is_refused_where_it_does_not_hold():
    assert _interval_form(np.tril(np.ones((4, 4), dtype=bool))) is not None
    gap = np.eye(4, dtype=bool)
    gap[3, 0] = True  # row 3 is {0, 3}: not one run
    assert _interval_form(gap) is None
    backwards = np.eye(3, dtype=bool)
    backwards[0, 2] = True  # hi = 2, 1, 2: not monotone
    assert _interval_form(backwards) is None
    with pytest.raises(InputError, match="interval engine"):
        propagate(_stack([gap]), engine="interval")


def test_without_propagating_to_convergence_deeper_reach_is_refused():
    flow = propagate(_stack([build_mask("sliding_window:n=6,window=2").matrix]), 2, until_converged=False)
    assert flow.converged is None and flow.computed == 2
    assert np.array_equal(flow.reach(2), _product([build_mask("sliding_window:n=6,window=2").matrix], 2))
    with pytest.raises(InputError, match="only 2 were propagated"):
        flow.reach(3)


# --------------------------------------------------------------------------- presets


def _expected_pattern(name, n, scale, layers):
    """The presets' layer patterns written out from the cited configurations (not from theory/presets.py)."""
    q = np.arange(n)[:, None]
    k = np.arange(n)[None, :]
    causal = k <= q

    def window(w):
        return causal & (k > q - w)

    if name == "gemma2":
        return [causal if i % 2 == 1 else window(max(1, 4096 // scale)) for i in range(layers)]
    if name == "gemma3":
        return [causal if i % 6 == 5 else window(max(1, 1024 // scale)) for i in range(layers)]
    if name == "llama4":
        c = max(1, 8192 // scale)
        return [causal if i % 4 == 3 else causal & (k // c == q // c) for i in range(layers)]
    if name == "gpt_oss":
        return [causal if i % 2 == 1 else window(max(1, 128 // scale)) for i in range(layers)]
    if name == "mistral":
        return [window(max(1, 4096 // scale))] * layers
    if name == "hybrid":
        return [causal] * layers  # Mamba layers are causal, so are the attention layers
    raise AssertionError(name)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_reach_is_the_product_of_its_layers(name):
    n, scale = 40, 512 if name != "llama4" else 1024
    spec = f"{name}:n={n},scale={scale},layers=9" if name != "hybrid" else f"{name}:n={n},layers=9,period=4,offset=1"
    stack = build_stack(spec)
    expected = _expected_pattern(name, n, scale, 9)
    assert [bool(np.array_equal(layer.mask, m)) for layer, m in zip(stack.layers, expected)] == [True] * 9
    flow = propagate(stack)
    for layers in range(0, 10):
        assert np.array_equal(flow.reach(layers), _product([layer.mask for layer in stack.layers], layers)), layers
    if name == "hybrid":
        kinds = [layer.kind for layer in stack.layers]
        assert kinds == ["attention" if i % 4 == 1 else "recurrent" for i in range(9)]
    assert stack.note  # every preset cites its configuration


def test_gemma3_receptive_field_by_hand():
    # gemma3:n=24,scale=256 -> window 1024/256 = 4 keys: each sliding layer reaches 3 further back,
    # layer 6 is global. Position q sees position 0 after ceil(q/3) sliding layers if that is <= 5,
    # else at the global layer 6.
    flow = propagate(build_stack("gemma3:n=24,scale=256"))
    expected = [math.ceil(q / 3) if math.ceil(q / 3) <= 5 else 6 for q in range(24)]
    assert flow.receptive_field().tolist() == expected
    assert flow.first_sight(23, 0) == 6 and flow.first_sight(15, 0) == 5
    assert flow.converged == 6


def test_gpt_oss_receptive_field_by_hand():
    # gpt_oss:n=16,scale=32 -> window 128/32 = 4 keys at layer 1, full causal at layer 2.
    flow = propagate(build_stack("gpt_oss:n=16,scale=32"))
    assert flow.receptive_field().tolist() == [0, 1, 1, 1] + [2] * 12
    assert flow.converged == 2


def test_mistral_window_stack_converges_as_the_window_allows():
    # window 4 at every layer: q sees 0 after ceil(q/3) layers; the last of 20 after 7
    flow = propagate(build_stack("mistral:n=20,scale=1024"))
    assert flow.receptive_field().tolist() == [math.ceil(q / 3) for q in range(20)]
    assert flow.converged == 7


def test_preset_at_real_size_is_fast_enough_to_use_the_interval_engine():
    flow = propagate(build_stack("gemma3:n=4096"))
    assert flow.engine == "interval"
    assert flow.first_sight(4095, 0) == 5  # 5 windows of 1024 keys reach 5 * 1023 = 5115 back


# --------------------------------------------------------------------------- witnesses and leaks


def _valid_witness(stack, path, hops, depth):
    assert path and len(hops) == len(path) - 1
    assert list(hops) == sorted(set(hops)), "hop layers must increase"
    for (a, b), layer in zip(zip(path, path[1:]), hops):
        assert a != b and stack.layer(layer - 1).mask[b, a], f"hop {a}->{b} is not an edge of layer {layer}"
    assert not hops or hops[-1] == depth


@pytest.mark.parametrize("seed", range(8))
def test_first_arrival_and_witnesses_against_a_search(seed):
    rng = np.random.default_rng(300 + seed)
    n, depth = int(rng.integers(3, 9)), int(rng.integers(1, 4))
    masks = _random_masks(rng, n, depth, density=0.15)
    stack = _stack(masks)
    flow = propagate(stack)
    for k in range(n):
        assert flow.first[:, k].tolist() == arrivals(masks, k, depth * n + 1)
        for q in range(n):
            if flow.first[q, k] > 0:
                path, hops = flow.witness(k, q)
                assert path[0] == k and path[-1] == q
                _valid_witness(stack, path, hops, int(flow.first[q, k]))


def test_a_leak_that_appears_only_at_the_bidirectional_layer():
    n = 5
    causal = build_mask(f"causal:n={n}").matrix
    full = build_mask(f"bidirectional:n={n}").matrix
    stack = build_stack(f"causal x3, bidirectional:n={n}", n=n)
    task = make_task(n, [(f"x{i}", i) for i in range(n)], [i + 1 for i in range(n - 1)] + [None], causal)
    report = find_stack_leaks(task, stack)
    assert {leak.position for leak in report.leaks} == set(range(n - 1))
    for leak in report.leaks:
        assert leak.depth == 4 and leak.hop_layers == (4,) and leak.path == (leak.target, leak.position)
        _valid_witness(stack, leak.path, leak.hop_layers, leak.depth)
    assert report.leaks_within(3) == () and len(report.leaks_within(4)) == n - 1
    assert find_stack_leaks(task, build_stack("causal x4", n=n)).leaks == ()
    assert full.all()


def test_isolation_in_packed_documents_under_a_window_that_ignores_boundaries():
    # documents 0-2 and 3-5, a window of 2 keys at every layer: 3 sees 2 at layer 1, 4 sees 2 at layer 2
    stack = build_stack("sliding_window:w=2 x3", n=6)
    flows = find_stack_isolation(stack, [[0, 1, 2], [3, 4, 5]])
    by_position = {f.position: f for f in flows}
    assert sorted(by_position) == [3, 4, 5]
    assert [(by_position[p].source, by_position[p].depth) for p in (3, 4, 5)] == [(2, 1), (2, 2), (2, 3)]
    assert by_position[5].path == (2, 3, 4, 5) and by_position[5].hop_layers == (1, 2, 3)
    clean = build_stack("document:lengths=3+3,causal=true x3", n=6)
    assert find_stack_isolation(clean, [[0, 1, 2], [3, 4, 5]]) == ()


def test_flows_name_the_earliest_source():
    stack = build_stack("sliding_window:w=2, causal", n=6)
    (flow,) = find_stack_flows(stack, [0, 4], [5])
    assert (flow.source, flow.depth, flow.path, flow.hop_layers) == (4, 1, (4, 5), (1,))
    (far,) = find_stack_flows(stack, [0], [5])
    assert (far.depth, far.path, far.hop_layers) == (2, (0, 5), (2,))


def test_empty_rows_are_read_per_layer():
    empty = np.zeros((3, 3), dtype=bool)
    stack = _stack([empty])
    task = make_task(3, [("x0", 0), ("x1", 1), ("[MASK]", 2)], [None, None, 1], empty)
    assert find_stack_leaks(task, stack).leaks[0].depth == 1  # attend-all: the empty row sees every key
    assert find_stack_leaks(task, stack, empty_rows="attend-none").leaks == ()
    with pytest.raises(InputError, match="empty row"):
        find_stack_leaks(task, stack, empty_rows="error")


# --------------------------------------------------------------------------- the spec language


def test_split_stack_syntax():
    assert split_stack("sliding_window:n=16,w=4 x5, causal x1") == [("sliding_window:n=16,w=4", 5), ("causal", 1)]
    assert split_stack("a.npy; b.py:fn(3) x2") == [("a.npy", 1), ("b.py:fn(3)", 2)]
    assert split_stack("document:lengths=3+2,causal=true x2") == [("document:lengths=3+2,causal=true", 2)]


@pytest.mark.parametrize("text, message", [
    ("", "empty stack"),
    ("causal x0", "positive integer"),
    ("causal,, causal", "empty layer"),
    ("nope x2", "unknown mask"),
    ("causal:n=4, causal:n=5", "the stack has 4"),
    ("gemma3:n=8,scale=0", "scale"),
])
def test_bad_stacks_are_refused_in_one_line(text, message):
    with pytest.raises(InputError, match=message) as caught:
        build_stack(text, n=None if "n=" in text else 4)
    assert "\n" not in str(caught.value)


def test_repeat_expands_the_whole_list():
    stack = build_stack("sliding_window:w=2, causal", n=4, repeat=3)
    assert stack.depth == 6 and [layer.spec.split(":")[0] for layer in stack.layers] == [
        "sliding_window", "causal"] * 3
    with pytest.raises(InputError, match="repeat"):
        build_stack("causal", n=4, repeat=0)
    assert build_stack("gemma3:n=8,layers=6", repeat=2).depth == 12


# --------------------------------------------------------------------------- stack files


def test_a_json_stack_file_gives_the_same_stack_as_the_text(tmp_path):
    np.save(tmp_path / "tri.npy", np.tril(np.ones((5, 5), dtype=bool)))
    (tmp_path / "stack.json").write_text(
        '{"layers": ["sliding_window:w=2 x2", {"mask": "causal", "count": 2}], "repeat": 2, "n": 5}')
    from_file = build_stack(str(tmp_path / "stack.json"))
    from_text = build_stack("sliding_window:w=2 x2, causal x2", n=5, repeat=2)
    assert [layer.spec for layer in from_file.layers] == [layer.spec for layer in from_text.layers]
    assert np.array_equal(propagate(from_file).first, propagate(from_text).first)


def test_a_stack_file_reads_mask_files_beside_it(tmp_path):
    from hasse.theory.inputs.read import read

    np.save(tmp_path / "tri.npy", np.tril(np.ones((4, 4), dtype=bool)))
    (tmp_path / "stack.json").write_text('{"layers": [{"mask": "tri.npy", "count": 3}]}')
    stack = read(str(tmp_path / "stack.json"), accept=("preset", "stack")).stack
    assert stack.depth == 3 and stack.n == 4 and stack.layers[0].mask.sum() == 10


@pytest.mark.parametrize("body, message", [
    ('{"layers": []}', "at least one layer"),
    ('{"layers": ["causal"], "depth": 3}', "unknown field"),
    ('{"layers": [{"mask": "causal", "count": 0}]}', "count must be a positive integer"),
    ('{"layers": [3]}', "must be a string"),
    ('{"layers": ["causal"], "n": 0}', "n must be a positive integer"),
    ('{"layers": ["causal"',  "line 1"),
])
def test_bad_stack_files_are_refused_in_one_line(tmp_path, body, message):
    path = tmp_path / "bad.json"
    path.write_text(body)
    with pytest.raises(InputError, match=message) as caught:
        build_stack(str(path), n=4)
    assert "\n" not in str(caught.value) and "bad.json" in str(caught.value)
    with pytest.raises(InputError, match="no such stack file"):
        build_stack(str(tmp_path / "missing.json"), n=4)

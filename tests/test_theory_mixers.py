"""Token mixers that are not attention (issue 23): ``conv``, ``recurrent`` reset at documents, the Qwen3-Next
and Kimi Linear presets.

References are independent of the code under test: masks by plain Python loops over ``(q, k)`` from the
definitions (a kernel of ``K`` reads ``q - K < k <= q``; a recurrence reads its segment's prefix), ``R(L)``
and first arrivals by explicit integer matrix products, convergence depths by hand (a window of ``K``
reaches ``K - 1`` further back per layer), the presets' layer patterns from the transformers configuration
classes themselves (and written out by hand where transformers is absent).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hasse.theory.catalog import build_mask, resolve_spec
from hasse.theory.errors import InputError
from hasse.theory.inputs.stacks import build_stack
from hasse.theory.stack import LayerStack, StackLayer, _interval_form, propagate
from hasse.theory.stack_leak import find_stack_isolation
from tests.cli_run import run, schema_problems


def doc_of(n, documents):
    """The document of each position, by a loop (one document when ``documents`` is empty)."""
    out, d = [], 0
    for length in documents or (n,):
        out += [d] * length
        d += 1
    assert len(out) == n
    return out


def conv_loop(n, width, documents=()):
    doc = doc_of(n, documents)
    return np.array([[q - width < k <= q and doc[q] == doc[k] for k in range(n)] for q in range(n)])


def recurrent_loop(n, chunk=0, documents=()):
    doc = doc_of(n, documents)
    c = chunk or n
    return np.array([[k <= q and k // c == q // c and doc[q] == doc[k] for k in range(n)] for q in range(n)])


def first_arrivals(masks, max_layers):
    """F[q, k] of the repeated stack by explicit products (-1: never)."""
    n = masks[0].shape[0]
    first = np.where(np.eye(n, dtype=bool), 0, -1)
    reach = np.eye(n, dtype=np.int64)
    for layer in range(1, max_layers + 1):
        a = (np.asarray(masks[(layer - 1) % len(masks)], dtype=bool) | np.eye(n, dtype=bool)).astype(np.int64)
        reach = ((a @ reach) > 0).astype(np.int64)
        first[(reach > 0) & (first < 0)] = layer
    return first


def random_documents(rng, n):
    cuts = sorted(rng.choice(np.arange(1, n), size=int(rng.integers(0, n // 2 + 1)), replace=False)) if n > 1 else []
    bounds = [0, *map(int, cuts), n]
    return tuple(b - a for a, b in zip(bounds, bounds[1:]))


def plus(values):
    return "+".join(map(str, values))


# --------------------------------------------------------------------------- the catalogue entries


@pytest.mark.parametrize("seed", range(10))
def test_conv_and_recurrent_equal_the_loops(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 14))
    width, chunk, documents = int(rng.integers(1, n + 2)), int(rng.integers(0, n + 1)), random_documents(rng, n)
    assert np.array_equal(build_mask(f"conv:n={n},width={width}").matrix, conv_loop(n, width))
    assert np.array_equal(build_mask(f"conv:n={n},width={width},documents={plus(documents)}").matrix,
                          conv_loop(n, width, documents))
    assert np.array_equal(build_mask(f"recurrent:n={n},chunk={chunk}").matrix, recurrent_loop(n, chunk))
    assert np.array_equal(build_mask(f"recurrent:n={n},chunk={chunk},documents={plus(documents)}").matrix,
                          recurrent_loop(n, chunk, documents))


def test_existing_recurrent_specs_keep_their_canonical_text():
    assert resolve_spec("recurrent:n=8").canonical == "recurrent:n=8,chunk=0"
    assert resolve_spec("recurrent:chunk=4,n=8").canonical == "recurrent:n=8,chunk=4"
    assert [layer.spec for layer in build_stack("recurrent:chunk=4, recurrent", n=8).layers] == [
        "recurrent:n=8,chunk=4", "recurrent:n=8,chunk=0"]
    assert build_stack("hybrid:n=8").layers[0].spec == "recurrent:n=8,chunk=0"
    assert resolve_spec("recurrent:n=5,documents=2+3").canonical == "recurrent:n=5,chunk=0,documents=2+3"
    assert resolve_spec("conv:n=5,kernel=2").canonical == "conv:n=5,width=2"
    assert build_mask("conv:n=5,width=2,documents=2+3").spec == "conv:n=5,width=2,documents=2+3"


@pytest.mark.parametrize("spec, words", [
    ("conv:n=4,width=0", "width must be a positive integer, got 0"),
    ("conv:n=4", "missing required parameter 'width'"),
    ("conv:n=5,width=2,documents=2+2", "documents = 2+2 add up to 4, not n = 5"),
    ("conv:n=4,width=2,documents=2+0+2", "lengths must be positive"),
    ("recurrent:n=4,documents=3", "documents = 3 add up to 3, not n = 4"),
    ("recurrent:n=4,chunk=-1,documents=4", "chunk must be a positive integer"),
    ("conv:n=4,width=2,documents=", "documents must be integers"),
])
def test_bad_mixer_specs_one_line(spec, words):
    with pytest.raises(InputError) as info:
        build_mask(spec)
    text = str(info.value)
    assert "\n" not in text and words in text and text.startswith(spec), text


# --------------------------------------------------------------------------- layer kinds and engines


def test_conv_is_a_layer_kind_of_its_own():
    stack = build_stack("conv:width=3,documents=4+4, recurrent:documents=4+4, causal", n=8)
    assert [layer.kind for layer in stack.layers] == ["convolution", "recurrent", "attention"]
    LayerStack((StackLayer(conv_loop(3, 2), "c", "convolution"),), "s")  # accepted
    with pytest.raises(InputError, match="kind must be one of"):
        LayerStack((StackLayer(conv_loop(3, 2), "c", "mamba"),), "s")


@pytest.mark.parametrize("seed", range(10))
def test_interval_engine_takes_mixers_and_equals_the_product_engine(seed):
    rng = np.random.default_rng(50 + seed)
    n = int(rng.integers(2, 15))
    documents = random_documents(rng, n)
    layers = []
    for _ in range(int(rng.integers(1, 5))):
        width = int(rng.integers(1, n + 1))
        choice = int(rng.integers(0, 4))
        layers.append([f"conv:width={width},documents={plus(documents)}", f"conv:width={width}",
                       f"recurrent:chunk={int(rng.integers(0, n))},documents={plus(documents)}",
                       f"document:lengths={plus(documents)},causal=true"][choice])
    stack = build_stack(", ".join(layers), n=n)
    for layer in stack.layers:
        assert _interval_form(layer.mask) is not None, layer.spec
    fast, slow = propagate(stack), propagate(stack, engine="product")
    assert fast.engine == "interval"
    assert np.array_equal(fast.first, slow.first) and fast.converged == slow.converged
    masks = [layer.mask for layer in stack.layers]
    want = first_arrivals(masks, stack.depth * (n + 1))
    assert np.array_equal(fast.first, want)
    assert fast.converged == int(want.max())


@pytest.mark.parametrize("n, width, documents", [(12, 3, ()), (12, 2, ()), (13, 4, (5, 8)), (9, 1, (4, 5)),
                                                 (16, 5, (3, 3, 10))])
def test_conv_convergence_depth_by_hand(n, width, documents):
    spec = f"conv:width={width}" + (f",documents={plus(documents)}" if documents else "")
    flow = propagate(build_stack(spec, n=n))
    longest = max(documents or (n,))
    by_hand = 0 if width == 1 or longest == 1 else math.ceil((longest - 1) / (width - 1))
    assert flow.converged == by_hand
    assert int(first_arrivals([conv_loop(n, width, documents)], n + 1).max()) == by_hand


def test_a_conv_that_ignores_the_boundaries_breaks_isolation():
    """Planted: the window without documents reaches K - 1 positions into the previous document, at layer 1."""
    groups = [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert find_stack_isolation(build_stack("conv:width=3,documents=4+4 x3, recurrent:documents=4+4", n=8),
                                groups) == ()
    flows = find_stack_isolation(build_stack("conv:width=3 x3, recurrent:documents=4+4", n=8), groups)
    first = {f.position: f.depth for f in flows}
    leak = first_arrivals([conv_loop(8, 3)] * 3 + [recurrent_loop(8, 0, (4, 4))], 4)
    assert first == {q: int(min(d for d in leak[q, :4] if d >= 0)) for q in range(4, 8) if (leak[q, :4] >= 0).any()}
    assert first[4] == 1 and first[5] == 1 and first[7] == 2
    assert first == {4: 1, 5: 1, 6: 2, 7: 2}


# --------------------------------------------------------------------------- presets

PRESETS = ("qwen3_next", "kimi_linear")


def config_pattern(name, layers):
    """``layer_types`` of the transformers configuration class ("full_attention" / "linear_attention")."""
    try:
        import transformers
    except ImportError:  # written out by hand from the same classes (transformers 5.24)
        if name == "qwen3_next":
            return ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)]
        return ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(layers)]
    config = (transformers.Qwen3NextConfig if name == "qwen3_next" else transformers.KimiLinearConfig)(
        num_hidden_layers=layers)
    return list(config.layer_types)


def test_preset_defaults_are_the_configurations():
    try:
        import transformers
    except ImportError:
        pytest.skip("transformers is not installed")
    qwen, kimi = transformers.Qwen3NextConfig(), transformers.KimiLinearConfig()
    assert build_stack("qwen3_next:n=4").depth == qwen.num_hidden_layers == 48
    assert build_stack("kimi_linear:n=4").depth == kimi.num_hidden_layers == 27
    for name, config in (("qwen3_next", qwen), ("kimi_linear", kimi)):
        stack = build_stack(f"{name}:n=4")
        kinds = ["attention" if t == "full_attention" else "recurrent" for t in config.layer_types]
        assert [layer.kind for layer in stack.layers] == kinds, name
    checkpoint = transformers.KimiLinearConfig(num_hidden_layers=8, linear_attn_config={
        "full_attn_layers": [4, 8], "kda_layers": [1, 2, 3, 5, 6, 7]})
    stack = build_stack("kimi_linear:n=4,layers=8,full=4+8")
    assert [layer.kind == "attention" for layer in stack.layers] == [t == "full_attention"
                                                                      for t in checkpoint.layer_types]


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("documents", [(), (5, 3, 8)])
def test_preset_reach_is_the_product_of_its_layers(name, documents):
    n, depth = 16, 9
    spec = f"{name}:n={n},layers={depth}" + (f",documents={plus(documents)}" if documents else "")
    stack = build_stack(spec)
    q, k = np.indices((n, n))
    doc = np.array(doc_of(n, documents))
    inside = (k <= q) & (doc[q] == doc[k])  # full attention and the recurrence: causal within the document
    types = config_pattern(name, depth)
    assert [layer.kind for layer in stack.layers] == [
        "attention" if t == "full_attention" else "recurrent" for t in types]
    for layer in stack.layers:
        assert np.array_equal(layer.mask, inside), layer.spec
    flow = propagate(stack)
    masks = [layer.mask for layer in stack.layers]
    want = first_arrivals(masks, depth * (n + 1))
    assert np.array_equal(flow.first, want) and flow.engine == "interval"
    assert np.array_equal(flow.first, propagate(stack, engine="product").first)
    assert flow.converged == int(want.max()) == 1
    assert stack.note and ("Qwen3NextConfig" in stack.note or "KimiLinearConfig" in stack.note)
    if documents:
        groups = [list(np.flatnonzero(doc == d)) for d in range(len(documents))]
        assert find_stack_isolation(stack, groups) == ()


def test_preset_parameters():
    stack = build_stack("qwen3_next:n=4,layers=6,interval=3")
    assert [layer.kind for layer in stack.layers] == ["recurrent", "recurrent", "attention"] * 2
    assert stack.spec == "qwen3_next:n=4,layers=6,interval=3"
    assert build_stack("kimi_linear:n=6,layers=5,documents=2+4").spec == "kimi_linear:n=6,layers=5,documents=2+4"
    for bad, words in (("qwen3_next:n=4,interval=0", "interval must be a positive integer"),
                       ("qwen3_next:n=4,documents=2+3", "add up to 5, not n = 4"),
                       ("kimi_linear:n=4,layers=8,full=9", "full lists layer numbers 1 … 8"),
                       ("kimi_linear:n=4,layers=0", "layers must be a positive integer")):
        with pytest.raises(InputError) as info:
            build_stack(bad)
        assert words in str(info.value) and "\n" not in str(info.value), bad


# --------------------------------------------------------------------------- the commands


def test_catalog_lists_the_mixers_and_presets(capsys):
    code, out, _ = run(capsys, "catalog")
    assert code == 0
    for usage in ("  conv:n=N,width=WIDTH[,documents=A+B+…]", "  recurrent:n=N[,chunk=CHUNK][,documents=A+B+…]",
                  "  qwen3_next:n=N", "  kimi_linear:n=N"):
        assert usage in out, usage


@pytest.mark.parametrize("name", PRESETS)
def test_analyze_a_preset(capsys, name):
    code, out, err = run(capsys, "analyze", f"{name}:n=12,layers=8", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert schema_problems("analyze", data) == []
    assert data["stack"]["depth"] == 8 and data["stack"]["converged_depth"] == 1
    assert data["stack"]["receptive_field"] == [0] + [1] * 11  # every layer is causal: one layer sees all
    kinds = [run_["kind"] for run_ in data["stack"]["layers"]]
    assert set(kinds) == {"recurrent", "attention"}
    code, out, _ = run(capsys, "analyze", f"{name}:n=12,layers=8")
    assert code == 0 and "recurrent: enters as its dependency pattern, causal" in out


def test_analyze_a_conv_stack_against_the_products(capsys):
    spec = "conv:width=3,documents=6+6, recurrent:documents=6+6, conv:width=2"
    code, out, err = run(capsys, "analyze", "--stack", spec, "--n", "12", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert schema_problems("analyze", data) == []
    assert [r["kind"] for r in data["stack"]["layers"]] == ["convolution", "recurrent", "convolution"]
    masks = [conv_loop(12, 3, (6, 6)), recurrent_loop(12, 0, (6, 6)), conv_loop(12, 2)]
    first = first_arrivals(masks, 3 * 13)
    assert data["stack"]["converged_depth"] == int(first.max())
    assert data["stack"]["receptive_field"] == first.max(axis=1).tolist()
    assert data["stack"]["last_sees_first"] == int(first[11, 0])
    code, out, _ = run(capsys, "analyze", "--stack", spec, "--n", "12")
    assert "convolution: enters as its dependency pattern, the 3 positions q - 3 < k <= q, reset at each of 2 " \
           "documents (6+6)" in out


def test_flow_catches_a_conv_that_ignores_the_documents(capsys):
    code, out, err = run(capsys, "flow", "--stack", "conv:width=3 x4", "--n", "8", "--from", "0-3", "--to", "4-7",
                         "--json")
    assert code == 1, err
    data = json.loads(out)
    assert schema_problems("flow", data) == []
    want = first_arrivals([conv_loop(8, 3)], 4)
    assert {x["position"]: x["depth"] for x in data["flows"]} == {
        q: int(want[q, :4][want[q, :4] >= 0].min()) for q in range(4, 8)}
    code, out, err = run(capsys, "flow", "--stack", "conv:width=3,documents=4+4 x4", "--n", "8", "--from", "0-3",
                         "--to", "4-7", "--json")
    assert code == 0, err
    assert json.loads(out)["flows"] == []


def test_analyze_says_what_a_convolution_layer_is(capsys):
    code, out, _ = run(capsys, "analyze", "--stack", "conv:width=2, causal", "--n", "6")
    assert code == 0 and "convolution layers are not attention" in out and "recurrent layers are not" not in out


def test_gpu_check_runs_a_convolution_layer_on_the_cpu(capsys):
    """The new kind end to end through hasse gpu-check: the measured dependency is R(L) of the products."""
    pytest.importorskip("torch")
    from hasse.cli import main

    code = main(["gpu-check", "--stack", "conv:width=2,documents=3+3, causal, recurrent:documents=3+3", "--n", "6",
                 "--seeds", "1", "--device", "cpu"])
    out = capsys.readouterr().out
    masks = [conv_loop(6, 2, (3, 3)), np.tril(np.ones((6, 6), dtype=bool)), recurrent_loop(6, 0, (3, 3))]
    reachable = int((first_arrivals(masks, 3) >= 0).sum())
    assert code == 0 and "verdict: PASS" in out
    assert f"observed == R(3) on all 36 pairs ({reachable} reachable" in out
    assert "(convolution: the backend on its window mask (the same dependency))" in out


def test_equiv_proves_conv_is_the_window_and_the_recheck_confirms(capsys):
    """conv:width=W and sliding_window:w=W share the symbol W under two parameter names: the concrete re-check
    must give both the same value (it once tried width = 0 beside window = 1 and called the kit wrong)."""
    pytest.importorskip("z3")
    code, out, err = run(capsys, "equiv", "conv:width=W", "sliding_window:w=W")
    assert code == 0, err
    assert "PROVED" in out and "re-check by the concrete engine: confirmed" in out
    code, out, _ = run(capsys, "equiv", "conv:width=W", "sliding_window_distance:d=W")
    assert code == 1 and "re-check by the concrete engine: confirmed" in out

"""``hasse analyze`` of a stack of layers (issue 12): text, JSON, receptive fields, errors.

References are independent of hasse.theory.stack: receptive fields of the presets are
written by hand from their configurations (window w reaches w - 1 positions back per
layer, a global layer reaches everything), and random stacks are checked against a
plain loop of explicit Boolean matrix products (``first_arrivals`` below).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.cli_run import run


def analyze_text(capsys, *argv) -> str:
    code, out, err = run(capsys, "analyze", *argv)
    assert code == 0, err
    return out


def analyze_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, "analyze", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# ----------------------------------------------------------------------------- independent reference


def window(n: int, w: int) -> np.ndarray:
    q, k = np.indices((n, n))
    return (k <= q) & (k > q - w)


def causal(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n), dtype=bool))


def first_arrivals(masks: list[np.ndarray], max_layers: int) -> np.ndarray:
    """F[q, k]: the fewest layers of the repeated stack after which q depends on k (-1: never), by products."""
    n = masks[0].shape[0]
    first = np.where(np.eye(n, dtype=bool), 0, -1)
    reach = np.eye(n, dtype=np.int64)
    for layer in range(1, max_layers + 1):
        a = (masks[(layer - 1) % len(masks)] | np.eye(n, dtype=bool)).astype(np.int64)
        reach = ((a @ reach) > 0).astype(np.int64)
        first[(reach > 0) & (first < 0)] = layer
    return first


def reference(masks: list[np.ndarray]) -> dict:
    """receptive field, last-sees-first and convergence depth of the repeated stack, from ``first_arrivals``."""
    n = masks[0].shape[0]
    first = first_arrivals(masks, len(masks) * (n + 1))
    return {"receptive_field": first.max(axis=1).tolist(),
            "last_sees_first": None if first[n - 1, 0] < 0 else int(first[n - 1, 0]),
            "converged_depth": int(first.max())}


# ----------------------------------------------------------------------------- presets, hand-computed


def test_gemma3_small_receptive_field_by_hand(capsys):
    # window 1024/256 = 4 keys: each sliding layer reaches 3 positions back; layers 1-5 sliding, layer 6 global
    data = analyze_json(capsys, "gemma3:n=24,scale=256")
    rf = [math.ceil(q / 3) if math.ceil(q / 3) <= 5 else 6 for q in range(24)]
    assert rf[:8] == [0, 1, 1, 1, 2, 2, 2, 3] and rf[15:17] == [5, 6]
    stack = data["stack"]
    assert stack["receptive_field"] == rf
    assert stack["depth"] == 34
    assert stack["converged_depth"] == 6 and stack["converged_by_model_depth"] is True
    assert stack["last_sees_first"] == 6  # 23 > 15 = 5 * 3: the global layer 6 carries it
    assert stack["note"].startswith("Gemma 3") and "1024/256" in stack["note"]
    # layer i (1-based) global iff i % 6 == 0, written out from the configuration
    expect, i = [], 1
    while i <= 34:
        if i % 6 == 0:
            expect.append({"first": i, "last": i, "spec": "causal:n=24", "kind": "attention"})
            i += 1
        else:
            last = min(i + (5 - (i - 1) % 6) - 1, 34)
            expect.append({"first": i, "last": last, "spec": "sliding_window:n=24,window=4", "kind": "attention"})
            i = last + 1
    assert stack["layers"] == expect
    assert data["convergence_depth"] == 6 and data["dense"] is False
    assert data["spec"] == "gemma3:n=24,scale=256,layers=34" and data["input"] == "gemma3:n=24,scale=256"


def test_gemma3_small_text(capsys):
    out = analyze_text(capsys, "gemma3:n=24,scale=256")
    assert "layers 1-5:  sliding_window:n=24,window=4 (attention)" in out
    assert "layer 6:     causal:n=24 (attention)" in out
    assert "(layers 1-6 repeated: 5 times, then layers 1-4 of it; 34 layers)" in out
    assert "Gemma 3 4B: 5 sliding-window layers (4 = 1024/256 keys) then 1 global" in out
    assert "the flow stops changing after 6 layers; converged by the model's depth (34 layers)" in out
    assert "the last position (23) first sees the first (0) after 6 layers" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("  ") and len(line.split()) == 2]
    table = [r for r in rows if r[1].isdigit() and (r[0].isdigit() or "-" in r[0])]
    assert table == [["0", "0"], ["1-3", "1"], ["4-6", "2"], ["7-9", "3"], ["10-12", "4"], ["13-15", "5"],
                     ["16-23", "6"]]


def test_gpt_oss_small_receptive_field_by_hand(capsys):
    # window 128/32 = 4 then full, alternating: q <= 3 sees all of 0..q after layer 1, the rest after layer 2
    stack = analyze_json(capsys, "gpt_oss:n=16,scale=32")["stack"]
    assert stack["receptive_field"] == [0, 1, 1, 1] + [2] * 12
    assert stack["converged_depth"] == 2 and stack["last_sees_first"] == 2 and stack["depth"] == 36
    assert stack["layers"][:3] == [
        {"first": 1, "last": 1, "spec": "sliding_window:n=16,window=4", "kind": "attention"},
        {"first": 2, "last": 2, "spec": "causal:n=16", "kind": "attention"},
        {"first": 3, "last": 3, "spec": "sliding_window:n=16,window=4", "kind": "attention"}]
    assert len(stack["layers"]) == 36


def test_gemma3_at_4096_is_fast_and_short(capsys):
    """n = 4096, 34 layers: O(n) per layer and nothing n^2 printed (rf by hand: 1023 positions back per layer)."""
    out = analyze_text(capsys, "gemma3:n=4096")
    assert "the last position (4095) first sees the first (0) after 5 layers (within the model's depth)" in out
    assert "converged by the model's depth (34 layers)" in out
    assert len(out) < 8000
    stack = analyze_json(capsys, "gemma3:n=4096")["stack"]
    assert stack["receptive_field"] == [min(math.ceil(q / 1023), 6) for q in range(4096)]


def test_hybrid_says_recurrent_layers_are_dependency_patterns(capsys):
    out = analyze_text(capsys, "hybrid:n=8")
    assert "layers 1-4:  recurrent:n=8,chunk=0 (recurrent: enters as its dependency pattern, causal)" in out
    assert "linear attention and state-space layers (the paper's future work) are exact this way" in out
    assert "Jamba v0.1" in out
    code, out, _ = run(capsys, "analyze", "--stack", "recurrent:chunk=4, causal", "--n", "8")
    assert "causal within chunks of 4" in out


# ----------------------------------------------------------------------------- hand-written stacks


def test_small_stack_text_json_and_reachability(capsys):
    spec = "sliding_window:w=2 x3, causal"
    out = analyze_text(capsys, "--stack", spec, "--n", "8", "--layers", "2")
    assert "layers 1-3:  sliding_window:n=8,window=2 (attention)" in out
    assert "layer 4:     causal:n=8 (attention)" in out
    assert "the flow stops changing after 4 layers; converged by the model's depth (4 layers)" in out
    assert "the last position (7) first sees the first (0) after 4 layers (within the model's depth)" in out
    data = analyze_json(capsys, "--stack", spec, "--n", "8", "--layers", "2")
    masks = [window(8, 2)] * 3 + [causal(8)]
    ref = reference(masks)
    stack = data["stack"]
    assert stack["receptive_field"] == ref["receptive_field"] == [0, 1, 2, 3, 4, 4, 4, 4]
    assert stack["converged_depth"] == ref["converged_depth"] == 4
    assert stack["converged_by_model_depth"] is True  # 4 layers, converged at 4: the boundary case
    assert stack["last_sees_first"] == 4
    assert stack["layers"] == [{"first": 1, "last": 3, "spec": "sliding_window:n=8,window=2", "kind": "attention"},
                               {"first": 4, "last": 4, "spec": "causal:n=8", "kind": "attention"}]
    r2 = (first_arrivals(masks, 2) >= 0).astype(int).tolist()
    assert data["layers"] == 2 and data["reachability"] == r2
    assert data["classes"] == [[q] for q in range(8)] and len(data["hasse_edges"]) == 7


def test_not_converged_by_model_depth_and_never(capsys):
    code, out, _ = run(capsys, "analyze", "--stack", "sliding_window:w=2 x2", "--n", "8")
    assert "NOT converged by the model's depth (2 layers): 5 more needed" in out
    stack = analyze_json(capsys, "--stack", "sliding_window:w=2 x2", "--n", "8")["stack"]
    assert stack["converged_depth"] == 7 and stack["converged_by_model_depth"] is False
    assert stack["receptive_field"] == list(range(8))
    code, out, _ = run(capsys, "analyze", "--stack", "chunked:chunk=4 x3", "--n", "8")
    assert code == 0 and "first sees the first (0) never" in out
    data = analyze_json(capsys, "--stack", "chunked:chunk=4 x3", "--n", "8")
    assert data["stack"]["last_sees_first"] is None
    assert data["classes"] == [[q] for q in range(8)] and len(data["hasse_edges"]) == 6  # two chains of 4


def test_repeat(capsys):
    stack = analyze_json(capsys, "--stack", "sliding_window:w=2, causal", "--repeat", "3", "--n", "6")["stack"]
    assert stack["depth"] == 6
    assert [(r["first"], r["last"], r["spec"]) for r in stack["layers"]] == [
        (i, i, "sliding_window:n=6,window=2" if i % 2 else "causal:n=6") for i in range(1, 7)]
    assert analyze_json(capsys, "gemma3:n=24,scale=256", "--repeat", "2")["stack"]["depth"] == 68


@pytest.mark.parametrize("seed", range(6))
def test_random_stacks_against_products(capsys, tmp_path, seed):
    """Stacks mixing catalogue layers and a random (non-interval) mask file, against the plain product loop."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    rand = rng.random((n, n)) < 0.2
    path = tmp_path / "rand.npy"
    np.save(path, rand)
    catalogue = {"sliding_window:w=2": window(n, 2), "causal": causal(n), "chunked:chunk=2": window(n, n) &
                 (np.arange(n)[:, None] // 2 == np.arange(n)[None, :] // 2), str(path): rand}
    names = list(catalogue)
    picks = [names[i] for i in rng.integers(0, len(names), int(rng.integers(1, 5)))]
    data = analyze_json(capsys, "--stack", "; ".join(picks), "--n", n, "--layers", 3)
    masks = [catalogue[p] for p in picks]
    ref = reference(masks)
    stack = data["stack"]
    assert stack["receptive_field"] == ref["receptive_field"]
    assert stack["last_sees_first"] == ref["last_sees_first"]
    assert stack["converged_depth"] == ref["converged_depth"]
    assert data["reachability"] == (first_arrivals(masks, 3) >= 0).astype(int).tolist()


# ----------------------------------------------------------------------------- outputs, schema, catalogue


def test_png_and_dot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png, dot = tmp_path / "rf.png", tmp_path / "rf.dot"
    code, out, _ = run(capsys, "analyze", "gpt_oss:n=16,scale=32", "--png", png, "--dot", dot)
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG" and "digraph" in dot.read_text()
    assert f"picture written to {png}" in out


def test_json_schema(capsys):
    pytest.importorskip("jsonschema")
    from tests.test_json_schema import problems

    for argv in (["gemma3:n=24,scale=256", "--layers", "3"], ["--stack", "recurrent:chunk=4, causal x2", "--n", "8"],
                 ["hybrid:n=6"]):
        data = analyze_json(capsys, *argv)
        assert problems("analyze", data) == []
    data["stack"]["layers"][0]["kind"] = "mamba"  # the schema must be able to fail
    data["stack"]["extra"] = 1
    assert len(problems("analyze", data)) == 2


def test_catalog_lists_presets(capsys):
    code, out, _ = run(capsys, "catalog")
    assert code == 0
    for name in ("gemma2", "gemma3", "llama4", "gpt_oss", "mistral", "hybrid"):
        assert f"  {name}:n=N" in out


@pytest.mark.parametrize("argv, message", [
    (["--stack", "nope:w=2", "--n", "8"], "unknown mask 'nope'"),
    (["--stack", "causal x0", "--n", "8"], "a layer count must be a positive integer, got 0"),
    (["--stack", "causal:n=8, causal:n=6"], "this layer has 6 positions, the stack has 8"),
    (["--stack", "sliding_window:w=2 x2"], "this layer has no size: give n (--n N)"),
    (["causal:n=4", "--stack", "causal", "--n", "4"], "give a MASK or --stack SPEC, not both"),
    (["causal:n=4", "--repeat", "2"], "--repeat R repeats a --stack SPEC or a model preset"),
    ([], "give a MASK, or a stack of layers with --stack SPEC"),
    (["--stack", "causal", "--n", "4", "--repeat", "0"], "--repeat must be a positive integer"),
    (["--stack", "causal", "--n", "4", "--no-residual"], "--no-residual does not apply to a stack"),
    (["gemma3:n=8", "--n", "6"], "the preset has 8 positions, not n = 6"),
    (["gemma3:n=8", "--layers", "-1"], "--layers must be >= 0"),
])
def test_bad_stacks_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, "analyze", *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err


def test_single_mask_analyze_unchanged(capsys):
    data = analyze_json(capsys, "causal:n=4")
    assert "stack" not in data and data["convergence_depth"] == 1


def test_empty_rows_read_per_layer(capsys, tmp_path):
    # layer 1: row 0 = {0}, row 1 empty, row 2 = {0, 1, 2}; layer 2: causal
    path = tmp_path / "e.txt"
    path.write_text("1 0 0\n0 0 0\n1 1 1\n")
    spec = f"{path}, causal"
    code, out, err = run(capsys, "analyze", "--stack", spec, "--n", 3, "--json")
    assert code == 0 and "1 position(s) with an empty row in some layer" in err
    data = json.loads(out)
    # as given: 1 attends nothing in layer 1, sees 0 through the causal layer 2
    assert data["stack"]["receptive_field"] == [0, 2, 1] and data["empty_rows"]["rows"] == [1]
    # attend-all: row 1 of layer 1 attends every key, so 1 sees 0 and 2 after one layer
    data = analyze_json(capsys, "--stack", spec, "--n", 3, "--empty-rows", "attend-all")
    assert data["stack"]["receptive_field"] == [0, 1, 1]
    code, out, err = run(capsys, "analyze", "--stack", spec, "--n", 3, "--strict")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--empty-rows attend-all" in err

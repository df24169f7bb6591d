"""`hasse leak`, `hasse flow` and `hasse counterexample` with --stack (issue 12 part 1).

The reference is independent of theory/stack.py: each layer's mask is an explicit Boolean
matrix written to a .npy file, and the first layer count at which content reaches a
position comes from a breadth-first search over (position, layer) states, one layer at a
time (``_arrivals``). Every witness the commands print is checked edge by edge against
the layer its hop names (``_check_witness``); a planted bug (each hop named one layer
late) must make that check fire.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

jsonschema = pytest.importorskip("jsonschema")

from tests.cli_run import run, schema_problems  # noqa: E402
from tests.stack_reference import arrivals as _arrivals  # noqa: E402


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code in (0, 1), err
    data = json.loads(out)
    assert schema_problems(argv[0], data) == []
    return code, data


# --------------------------------------------------------------------------- the independent reference


def _check_witness(masks, item):
    """The witness of a JSON leak / flow item is a walk through the stack: hop ``i`` is an edge of the layer
    it names, layers strictly increase, the last is the item's depth, source first and position last."""
    path, hops, depth = item["path"], item.get("hop_layers", []), item["depth"]
    assert path[0] == item["source"] and path[-1] == item["position"], item
    assert len(hops) == len(path) - 1, item
    assert all(a < b for a, b in zip(hops, hops[1:])), f"hop layers must increase: {item}"
    for (a, b), layer in zip(zip(path, path[1:]), hops):
        assert masks[(layer - 1) % len(masks)][b][a], f"hop {a}->{b} is not an edge of layer {layer}: {item}"
    assert (hops[-1] if hops else 0) == depth, item


def _random_stack(rng, tmp: Path, n: int, depth: int):
    """``(masks, spec)``: ``depth`` random layers (some repeated with ``xK``), each written to a .npy file."""
    distinct = [rng.random((n, n)) < 0.2 for _ in range(int(rng.integers(1, depth + 1)))]
    for m in distinct:
        m[np.arange(n), rng.integers(0, n, size=n)] = True  # no empty row: every policy reads it the same
    items, masks = [], []
    while len(masks) < depth:
        i = int(rng.integers(0, len(distinct)))
        count = int(rng.integers(1, depth - len(masks) + 1))
        path = tmp / f"layer{i}.npy"
        np.save(path, distinct[i])
        items.append(f"{path} x{count}" if count > 1 else str(path))
        masks.extend([distinct[i]] * count)
    return masks, ", ".join(items)


def _random_task(rng, tmp: Path, n: int) -> tuple[dict, Path]:
    """A task file: random token inputs, labels and two isolate groups; its own mask (causal) is ignored."""
    tokens = int(rng.integers(2, n + 1))
    inputs = [[f"x{int(rng.integers(0, tokens))}", p] if rng.random() < 0.6 else ["[MASK]", p] for p in range(n)]
    labels = [int(rng.integers(0, tokens)) if rng.random() < 0.5 else None for _ in range(n)]
    cut = int(rng.integers(1, n))
    task = {"tokens": tokens, "inputs": inputs, "labels": labels, "mask": f"causal:n={n}",
            "isolate": [list(range(cut)), list(range(cut, n))]}
    path = tmp / "task.json"
    path.write_text(json.dumps(task))
    return task, path


def _expected(masks, task, limit):
    """The reference's leaks ``{(position, target): depth}`` and isolation ``{(position, group): depth}``."""
    n = masks[0].shape[0]
    first = [_arrivals(masks, j, limit) for j in range(n)]  # first[j][q]
    holders: dict[int, list[int]] = {}
    for j, (symbol, _) in enumerate(task["inputs"]):
        if symbol.startswith("x"):
            holders.setdefault(int(symbol[1:]), []).append(j)
    leaks = {}
    for p, t in enumerate(task["labels"]):
        depths = [first[j][p] for j in holders.get(t, []) if first[j][p] >= 0] if t is not None else []
        if depths:
            leaks[(p, t)] = min(depths)
    isolation = {}
    groups = task["isolate"]
    for g, members in enumerate(groups):
        for p in members:
            for h, others in enumerate(groups):
                depths = [first[k][p] for k in others if first[k][p] >= 0] if h != g else []
                if depths:
                    isolation[(p, h)] = min(depths)
    return leaks, isolation


# --------------------------------------------------------------------------- against the reference


@pytest.mark.parametrize("seed", range(10))
def test_leak_with_a_random_stack_matches_the_layer_by_layer_search(capsys, tmp_path, seed):
    rng = np.random.default_rng(1200 + seed)
    n, depth = int(rng.integers(3, 8)), int(rng.integers(1, 5))
    masks, spec = _random_stack(rng, tmp_path, n, depth)
    task, path = _random_task(rng, tmp_path, n)
    layers = int(rng.integers(0, 2 * depth + 1))
    limit = len(masks) * (n + 1)
    leaks, isolation = _expected(masks, task, limit)
    code, data = run_json(capsys, "leak", path, "--stack", spec, "--layers", layers)
    got = {(x["position"], x["target"]): x["depth"] for x in data["leaks"] + data["leaks_beyond_layers"]}
    assert got == leaks
    assert {k for k, d in got.items() if d <= layers} == {(x["position"], x["target"]) for x in data["leaks"]}
    group = {p: g for g, members in enumerate(task["isolate"]) for p in members}
    iso = {(x["position"], group[x["source"]]): x["depth"] for x in data["isolation"]}
    assert iso == {k: d for k, d in isolation.items() if d <= layers}
    for item in data["leaks"] + data["leaks_beyond_layers"] + data["isolation"]:
        _check_witness(masks, item)
    for item in data["leaks"] + data["leaks_beyond_layers"]:  # the source holds the target
        assert task["inputs"][item["source"]][0] == f"x{item['target']}"
    assert data["stack"]["depth"] == depth and data["layers"] == layers
    assert data["leak_free_in_limit"] == (not leaks and not isolation)
    assert code == (0 if not data["leaks"] and not data["isolation"] else 1)


@pytest.mark.parametrize("seed", range(6))
def test_flow_with_a_random_stack_matches_the_layer_by_layer_search(capsys, tmp_path, seed):
    rng = np.random.default_rng(2400 + seed)
    n, depth = int(rng.integers(3, 8)), int(rng.integers(1, 5))
    masks, spec = _random_stack(rng, tmp_path, n, depth)
    sources = sorted({int(x) for x in rng.integers(0, n, size=2)})
    sinks = sorted({int(x) for x in rng.integers(0, n, size=3)})
    first = [_arrivals(masks, k, len(masks) * (n + 1)) for k in sources]
    expected = {q: min(f[q] for f in first if f[q] >= 0) for q in sinks if any(f[q] >= 0 for f in first)}
    code, data = run_json(capsys, "flow", "--stack", spec, "--from", ",".join(map(str, sources)),
                          "--to", ",".join(map(str, sinks)))
    assert data["layers"] == depth  # the default: a model of the stack's own depth
    got = {x["position"]: x["depth"] for x in data["flows"] + data["flows_beyond_layers"]}
    assert got == expected
    assert sorted(x["position"] for x in data["flows"]) == sorted(q for q, d in expected.items() if d <= depth)
    for item in data["flows"] + data["flows_beyond_layers"]:
        _check_witness(masks, item)
    assert code == (1 if data["flows"] else 0) and data["flow_free_in_limit"] == (not expected)


def test_a_planted_wrong_hop_layer_is_caught_by_the_witness_check(capsys, tmp_path, monkeypatch):
    """Plant the bug the witness check is named after: every hop named one layer late."""
    from hasse.theory import stack as stack_module

    honest = stack_module.StackFlow.witness

    def late(self, k, q):
        path, hops = honest(self, k, q)
        return path, tuple(h + 1 for h in hops)

    rng = np.random.default_rng(7)
    masks, spec = _random_stack(rng, tmp_path, 6, 3)
    task, path = _random_task(rng, tmp_path, 6)
    _, data = run_json(capsys, "leak", path, "--stack", spec)
    items = data["leaks"] + data["leaks_beyond_layers"] + data["isolation"]
    assert any(len(x["path"]) > 1 for x in items), "the seed must give a witness with a hop"
    for item in items:
        _check_witness(masks, item)
    monkeypatch.setattr(stack_module.StackFlow, "witness", late)
    _, data = run_json(capsys, "leak", path, "--stack", spec)
    items = data["leaks"] + data["leaks_beyond_layers"] + data["isolation"]
    caught = 0
    for item in items:
        if len(item["path"]) > 1:
            with pytest.raises(AssertionError):
                _check_witness(masks, item)
            caught += 1
    assert caught


# --------------------------------------------------------------------------- hand-made cases


def test_a_leak_that_appears_only_at_layer_4(capsys):
    """causal x3 then bidirectional: next-token prediction leaks at layer 4, and the hop names layer 4."""
    code, data = run_json(capsys, "leak", "--stack", "causal x3, bidirectional", "--n", 5)
    assert code == 1 and data["objective"] == "next-token" and data["input"] is None
    assert [(x["position"], x["target"], x["path"], x["depth"], x["hop_layers"]) for x in data["leaks"]] == \
        [(q, q + 1, [q + 1, q], 4, [4]) for q in range(4)]
    assert data["stack"] == {"spec": "causal:n=5 x3, bidirectional:n=5", "depth": 4, "converged_depth": 4, "note": None}
    code, data = run_json(capsys, "leak", "--stack", "causal x3, bidirectional", "--n", 5, "--layers", 3)
    assert code == 0 and data["leaks"] == [] and len(data["leaks_beyond_layers"]) == 4
    assert data["leak_free"] and not data["leak_free_in_limit"]
    code, out, _ = run(capsys, "leak", "--stack", "causal x3, bidirectional", "--n", 5, "--ascii")
    assert code == 1
    assert "verdict: LEAK within L = 4 layers, the stack's depth (first at layer 4)" in out
    assert "in the limit of the repeated stack: LEAK (first at layer 4)" in out
    assert "2 -[layer 4]-> 1" in out
    code, out, _ = run(capsys, "leak", "--stack", "causal x3, bidirectional", "--n", 5, "--layers", 3)
    assert code == 0 and "LEAK-FREE within L = 3 layers" in out
    assert "in the limit of the repeated stack: LEAK (first at layer 4)" in out


def test_a_two_hop_witness_names_both_layers(capsys):
    """Two 2-key windows then a causal layer: 0 reaches 2 in two hops, one per window layer; 0 reaches 5 only
    at layer 3, in one causal hop (worked by hand)."""
    code, data = run_json(capsys, "flow", "--stack", "sliding_window:w=2 x2, causal", "--n", 6,
                          "--from", 0, "--to", 2, "--layers", 2)
    assert code == 1
    (item,) = data["flows"]
    assert item["path"] == [0, 1, 2] and item["hop_layers"] == [1, 2] and item["depth"] == 2
    code, data = run_json(capsys, "flow", "--stack", "sliding_window:w=2 x2, causal", "--n", 6,
                          "--from", 0, "--to", 5)
    (item,) = data["flows"]
    assert item["path"] == [0, 5] and item["hop_layers"] == [3] and item["depth"] == 3  # causal layer 3 in one hop


def test_packed_documents_through_a_window_that_ignores_boundaries(capsys):
    """Documents 0-2 and 3-6 under a 3-key window at every layer: 3 and 4 see document 1 at layer 1, 5 and 6
    through them at layer 2 (worked by hand); the documents' own mask as the stack keeps them apart."""
    code, data = run_json(capsys, "leak", "packed:lengths=3+4,w=2", "--stack", "sliding_window:w=3 x2")
    assert code == 1 and data["objective"] == "task" and data["leaks"] == []
    got = [(x["position"], x["source"], x["depth"], x["path"], x["hop_layers"]) for x in data["isolation"]]
    assert got == [(3, 1, 1, [1, 3], [1]), (4, 2, 1, [2, 4], [1]),
                   (5, 1, 2, [1, 3, 5], [1, 2]), (6, 2, 2, [2, 4, 6], [1, 2])]
    code, data = run_json(capsys, "leak", "packed:lengths=3+4,w=2", "--stack", "document:lengths=3+4,causal=true x4")
    assert code == 0 and data["isolation"] == [] and data["leak_free_in_limit"]
    code, data = run_json(capsys, "leak", "packed:lengths=3+4,w=2")  # without --stack: the task's own mask
    assert code == 0


def test_repeat_cycles_the_stack(capsys):
    code, data = run_json(capsys, "leak", "--stack", "causal x3, bidirectional", "--n", 4, "--repeat", 2)
    assert data["stack"]["depth"] == 8 and data["layers"] == 8 and code == 1
    assert {x["depth"] for x in data["leaks"]} == {4}


# --------------------------------------------------------------------------- counterexample


def test_counterexample_through_a_stack(capsys, tmp_path):
    code, data = run_json(capsys, "counterexample", "causal_lm", "--stack", "causal x3, bidirectional", "--n", 4)
    assert code == 1 and data["tokens"] == 2 and data["property"] == "leak" and data["layers"] == 4
    assert {k: data["stack"][k] for k in ("spec", "depth")} == {"spec": "causal:n=2 x3, bidirectional:n=2", "depth": 4}
    _, leak = run_json(capsys, "leak", "causal_lm:n=2", "--stack", "causal x3, bidirectional")
    assert data["stack"] == leak["stack"]  # one shape of a stack in every command's JSON, converged_depth too
    assert data["leaks"] == [{"position": 0, "target": 1, "source": 1, "path": [1, 0], "depth": 4,
                              "hop_layers": [4]}]
    cex = tmp_path / "cex.json"
    cex.write_text(json.dumps(data))
    code, again = run_json(capsys, "leak", cex, "--stack", "causal x3, bidirectional")  # the task file reproduces it
    assert code == 1 and again["leaks"] == data["leaks"]
    code, data = run_json(capsys, "counterexample", "causal_lm", "--stack", "causal x3, bidirectional", "--n", 4,
                          "--layers", 3)
    assert code == 0 and data["tokens"] is None and data["checked"] == [1, 2, 3, 4]
    code, out, _ = run(capsys, "counterexample", "causal_lm", "--stack", "causal x3, bidirectional", "--n", 4,
                       "--ascii")
    assert code == 1 and "smallest counterexample within L = 4 layers, the stack's depth at n = 2" in out
    assert "1 -[layer 4]-> 0" in out


def _layer(name: str, n: int) -> np.ndarray:
    """The hand-written masks of the stacks below (row = query, column = key)."""
    causal = np.tril(np.ones((n, n), dtype=bool))
    return {"causal": causal, "bidirectional": np.ones((n, n), dtype=bool),
            "window2": causal & ~np.tril(np.ones((n, n), dtype=bool), -2)}[name]


@pytest.mark.parametrize("stack, layers, hand", [
    ("causal x2, bidirectional", None, ["causal", "causal", "bidirectional"]),
    ("causal x2, bidirectional", 2, ["causal", "causal", "bidirectional"]),
    ("sliding_window:w=2 x3", None, ["window2"] * 3),
    ("sliding_window:w=2, bidirectional x2", 2, ["window2", "bidirectional", "bidirectional"]),
])
def test_counterexample_smallest_n_matches_the_reference(capsys, stack, layers, hand):
    """causal_lm (x_q at q predicts x_{q+1}) through a stack: the smallest n from the layer-by-layer search."""
    limit = len(hand) if layers is None else layers
    expected = None
    for n in range(1, 6):
        masks = [_layer(name, n) for name in hand]
        depths = [_arrivals(masks, q + 1, limit)[q] for q in range(n - 1)]
        if any(d >= 0 for d in depths):
            expected = (n, min(d for d in depths if d >= 0))
            break
    extra = [] if layers is None else ["--layers", layers]
    code, data = run_json(capsys, "counterexample", "causal_lm", "--stack", stack, "--n", 5, *extra)
    assert data["layers"] == limit
    if expected is None:
        assert code == 0 and data["tokens"] is None
    else:
        assert code == 1 and (data["tokens"], data["leaks"][0]["depth"]) == expected
        masks = [_layer(name, expected[0]) for name in hand]
        for item in data["leaks"]:
            _check_witness(masks, item)


# --------------------------------------------------------------------------- refusals: exit 2, one line


@pytest.mark.parametrize("argv, needle", [
    (["leak", "causal:n=4", "--stack", "causal x2"], "give a TASK"),
    (["leak", "packed:lengths=3+4,w=2", "--stack", "causal:n=5 x2"], "at the task's 7 positions"),
    (["leak", "butterfly:n=3", "--repeat", "2"], "--repeat repeats the layers of --stack"),
    (["leak", "--stack", "causal x2", "--n", "4", "--repeat", "0"], "--repeat must be a positive integer"),
    (["leak", "--stack", "causal x2", "--n", "4", "--png", "x.png"], "--png draws one mask"),
    (["leak", "--stack", "causal x2", "--n", "4", "--batch", "2"], "--batch does not apply to --stack"),
    (["leak"], "give a TASK or MASK"),
    (["flow", "causal:n=4", "--stack", "causal x2", "--from", "0", "--to", "1"], "leave MASK out"),
    (["flow", "--from", "0", "--to", "1"], "give a MASK"),
    (["counterexample", "causal_lm", "--stack", "causal x2", "--method", "z3"], "--method z3 is not for --stack"),
    (["counterexample", "causal_lm", "--stack", "causal x2", "--inference", "block:block=2"],
     "--inference is not for --stack"),
    (["counterexample", "causal_lm", "--repeat", "2"], "--repeat repeats the layers of --stack"),
    (["counterexample", "causal_lm", "--stack", "causal:n=4 x2", "--n", "3"], "positions"),
])
def test_bad_stack_input_exits_2_with_one_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err


def test_flow_json_through_a_stack_is_a_task_file_with_the_same_flows(capsys, tmp_path):
    """flow --stack --json writes the union of the layers as the mask: hasse leak on it finds the same flows in
    the limit, and with --stack again the same first layers and witnesses."""
    stack = "sliding_window:w=2 x2, causal"
    code, data = run_json(capsys, "flow", "--stack", stack, "--n", 6, "--from", "0,1", "--to", "3-5")
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(data))
    _, limit = run_json(capsys, "leak", path)
    assert {x["position"] for x in limit["leaks"]} == \
        {x["position"] for x in data["flows"] + data["flows_beyond_layers"]}
    _, layered = run_json(capsys, "leak", path, "--stack", stack)
    nearest: dict[int, int] = {}  # one leak per (position, source token): the flow is the earliest of them
    for x in layered["leaks"]:
        nearest[x["position"]] = min(x["depth"], nearest.get(x["position"], x["depth"]))
    assert nearest == {x["position"]: x["depth"] for x in data["flows"]}
    assert {(x["position"], x["source"], tuple(x["hop_layers"])) for x in data["flows"]} <= \
        {(x["position"], x["source"], tuple(x["hop_layers"])) for x in layered["leaks"]}


def test_a_model_preset_as_mask_means_stack(capsys):
    """As in hasse analyze: gemma3 given as TASK|MASK (leak) or MASK (flow) is --stack gemma3."""
    code, data = run_json(capsys, "leak", "gemma3:n=16,scale=256")
    _, same = run_json(capsys, "leak", "--stack", "gemma3:n=16,scale=256")
    assert data["stack"] == same["stack"] and data["leaks"] == same["leaks"]
    assert data["input"] == "gemma3:n=16,scale=256"
    assert data["stack"]["depth"] == 34 and code == 0  # sliding windows and global layers never look ahead
    code, data = run_json(capsys, "flow", "gemma3:n=16,scale=256", "--from", 0, "--to", 15)
    (item,) = data["flows"]
    causal = np.tril(np.ones((16, 16), dtype=bool))
    window = causal & ~np.tril(np.ones((16, 16), dtype=bool), -4)  # 1024/256 = 4 keys, Gemma 3's 5:1 pattern
    masks = [window] * 5 + [causal]
    assert code == 1 and item["depth"] == 5 and item["hop_layers"] == [1, 2, 3, 4, 5]  # 3 back per window layer
    assert _arrivals(masks, 0, 34)[15] == 5
    _check_witness(masks, item)


def test_counterexample_isolation_through_a_stack_from_a_file_design(capsys, tmp_path):
    """Two documents (first half, second half) under a 2-key window that ignores the boundary: n = 2 already
    breaks isolation at layer 1; within 0 layers nothing can (each position holds only itself)."""
    design = tmp_path / "docs.py"
    design.write_text(
        "def make(n):\n"
        "    half = max(n // 2, 1)\n"
        "    return {'tokens': n, 'inputs': [[f'x{i}', i] for i in range(n)], 'labels': [None] * n,\n"
        "            'mask': f'causal:n={n}', 'isolate': [list(range(half)), list(range(half, n))] if n > 1 else []}\n")
    code, data = run_json(capsys, "counterexample", f"{design}:make", "--stack", "sliding_window:w=2 x2", "--n", 5)
    assert code == 1 and data["tokens"] == 2 and data["property"] == "isolation"
    assert data["isolation"] == [{"position": 1, "source": 0, "path": [0, 1], "depth": 1, "hop_layers": [1]}]
    code, data = run_json(capsys, "counterexample", f"{design}:make", "--stack", "causal x2", "--n", 5,
                          "--layers", 0)
    assert code == 0 and data["layers"] == 0


@pytest.mark.parametrize("policy, code, leaks", [("attend-all", 1, [(0, [1, 0], [1]), (1, [2, 0, 1], [1, 2])]),
                                                 ("attend-none", 0, [])])
def test_empty_rows_of_a_layer_are_read_by_the_policy_and_named(capsys, tmp_path, policy, code, leaks):
    """Layer 1: causal with query 0 attending nothing. Read as attending every key, 0 sees 1 and 2 at layer 1
    (and 1 sees 2 through 0 at layer 2); read as attending nothing, next-token prediction is clean."""
    mask = np.tril(np.ones((3, 3), dtype=bool))
    mask[0, 0] = False
    np.save(tmp_path / "empty.npy", mask)
    got, data = run_json(capsys, "leak", "--stack", f"{tmp_path / 'empty.npy'}, causal", "--empty-rows", policy)
    assert got == code and data["empty_rows"]["rows"] == [0] and data["empty_rows"]["policy"] == policy
    assert [(x["position"], x["path"], x["hop_layers"]) for x in data["leaks"]] == leaks
    got, out, err = run(capsys, "leak", "--stack", f"{tmp_path / 'empty.npy'}, causal", "--empty-rows", "error")
    assert got == 2 and "empty row" in err and len(err.strip().splitlines()) == 1

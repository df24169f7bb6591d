"""Every command's --json output against docs/schema.json (one JSON Schema, a $def per command).

Each case runs a command in-process with --json and validates the object against the
$def named as the command. The coverage test walks hasse.cli.build_parser()'s
subcommands: a command that takes --json but has no $def or no case here fails it.
The round trips check the decisions of design.md §7: counterexample, flow and merge
write task files that `hasse leak` reads, and --out FILE holds the same object.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from hasse.cli import main
from tests.cli_parsers import commands

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "docs" / "schema.json").read_text(encoding="utf-8"))

MASK_MOD = "def heads(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & ((h == 0) | (kv_idx == q_idx))\n"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def validator(command: str):
    """A validator for the $def of ``command`` (its name may hold a space: certificate verify)."""
    schema = {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": "#/$defs/" + quote(command)}
    return jsonschema.Draft202012Validator(schema)


def problems(command: str, data) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in validator(command).iter_errors(data)]


def cases(tmp: Path) -> list[tuple[str, list[str]]]:
    """(command, argv without --json): at least one per command, and the variants of each object's shape."""
    mod = tmp / "heads.py"
    mod.write_text(MASK_MOD)
    cert = tmp / "cert.json"
    return [
        ("analyze", ["analyze", "butterfly:n=3"]),
        ("analyze", ["analyze", "sliding_window:n=6,w=2", "--layers", "2", "--no-residual"]),
        ("analyze", ["analyze", f"{mod}:heads", "--n", "4", "--heads", "2"]),
        ("analyze", ["analyze", f"{mod}:heads", "--n", "4", "--heads", "2", "--batch", "2"]),
        ("leak", ["leak", "bad_butterfly_crossed:n=3"]),
        ("leak", ["leak", "butterfly:n=3", "--layers", "1"]),
        ("leak", ["leak", "packed:lengths=2+2,w=2"]),
        ("flow", ["flow", "document:lengths=3+4", "--from", "0-2", "--to", "3-6"]),
        ("flow", ["flow", "sliding_window:n=8,w=2", "--from", "0", "--to", "7", "--layers", "3"]),
        ("flow", ["flow", f"{mod}:heads", "--n", "4", "--heads", "2", "--from", "0", "--to", "3"]),
        ("flow", ["flow", f"{mod}:heads", "--n", "4", "--heads", "2", "--batch", "2", "--from", "0", "--to", "3"]),
        ("counterexample", ["counterexample", "bad_butterfly_crossed", "--n", "4"]),
        ("counterexample", ["counterexample", "butterfly", "--n", "3"]),
        ("counterexample", ["counterexample", "bad_butterfly_crossed", "--n", "3", "--method", "both"]),
        ("counterexample", ["counterexample", "bad_block_query_history:block=2", "--inference", "block:n=4,block=2",
                            "--method", "both"]),
        ("counterexample", ["counterexample", "bad_block_own_content:block=2", "--layers", "0"]),
        ("merge", ["merge", "infill:n=3", "--sparse"]),
        ("merge", ["merge", "block:n=4,block=2"]),
        ("derive", ["derive", "block:n=4,block=2"]),  # layout, minimum, both proofs
        ("derive", ["derive", "mae:n=3", "--no-proof"]),  # no layout at these values
        ("derive", ["derive", "mtp:n=4,k=2", "--export", "flex", "--out", str(tmp / "mtp.py")]),  # the export, proved
        ("derive", ["derive", "ar:n=3", "--export", "npy", "--out", str(tmp / "ar.npy"), "--minimum", "no"]),
        ("consistent", ["consistent", "bad_block_query_history:n=4,block=2", "--inference", "block:n=4,block=2"]),
        ("consistent", ["consistent", "block_two_stream:n=4,block=2", "--inference", "block:n=4,block=2"]),
        ("prove", ["prove", "reach_stable_by_n_minus_1", "--n", "3", "--certificate", str(cert)]),
        ("certificate verify", ["certificate", "verify", str(cert)]),  # after prove wrote it
        ("catalog", ["catalog"]),
        ("prove-mask", ["prove-mask", "causal", "--claim", "dense"]),
        ("prove-mask", ["prove-mask", "sliding_window", "--claim", "dense", "--param-range", "w=1..8"]),
        ("equiv", ["equiv", "sliding_window:w=3", "sliding_window_distance:d=3"]),
        ("synthesize", ["synthesize", "causal:n=5", "--layers", "2", "--no-gpu-check"]),
        ("synthesize", ["synthesize", "causal:n=64", "--layers", "2", "--cost", "tiles", "--block", "8",
                        "--no-gpu-check"]),  # a formula, the hand-made patterns
        ("synthesize", ["synthesize", "document:lengths=2+3", "--layers", "2", "--cost", "tiles", "--block", "2",
                        "--relabel", "--no-gpu-check"]),
    ]


def gpu_cases() -> list[tuple[str, list[str]]]:
    return [
        ("gpu-check", ["gpu-check", "causal:n=4", "--layers", "1", "--seeds", "1", "--device", "cpu"]),
        ("gpu-check", ["gpu-check", "bad_butterfly_self:n=3", "--layers", "1", "--seeds", "1", "--device", "cpu"]),
        ("gpu-check", ["gpu-check", "butterfly:n=3", "--layers", "1", "--seeds", "1", "--backend", "flex",
                       "--device", "cpu"]),  # forward perturbations: the measured noise rule
        ("gpu-check", ["gpu-check", "butterfly:n=3", "--train-demo", "--steps", "3", "--vocab", "4", "--layers", "1",
                       "--device", "cpu"]),
    ]


def hf_cases() -> list[tuple[str, list[str]]]:
    """hasse audit (needs the hf extra: transformers)."""
    return [
        ("audit", ["audit", "llama", "--n", "4", "--seeds", "1", "--backend", "eager"]),
        ("audit", ["audit", "llama", "--n", "4", "--seeds", "1", "--backend", "flex_attention"]),  # perturbation
        ("audit", ["audit", "llama", "--scenario", "packed", "--documents", "2+2", "--seeds", "1", "--compare",
                   "eager,sdpa"]),
        ("audit", ["audit", "llama", "--scenario", "left_pad", "--n", "5", "--seeds", "1", "--backend", "sdpa"]),
        ("audit", ["audit", "lfm2", "--scenario", "packed", "--documents", "2+3", "--seeds", "1", "--backend", "eager"]),
        ("audit", ["audit", "llama", "--scenario", "decode", "--n", "5", "--seeds", "1", "--drop-cache-position", "1"]),
        ("audit", ["audit", "--families"]),
    ]


def json_commands() -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command of ``hasse`` that takes --json, by the name its JSON's "command" carries."""
    return {name: p for name, p in commands().items() if any("--json" in a.option_strings for a in p._actions)}


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_every_command_with_json_has_a_def_and_a_case(tmp_path):
    commands = set(json_commands())
    assert commands >= {"analyze", "leak", "flow", "counterexample", "merge", "consistent", "prove",
                        "certificate verify", "gpu-check", "catalog"}
    covered = {c for c, _ in cases(tmp_path) + gpu_cases() + hf_cases()}
    assert commands - set(SCHEMA["$defs"]) == set(), "a command with --json has no $def in docs/schema.json"
    assert commands - covered == set(), "a command with --json has no case in tests/test_json_schema.py"
    assert {r["$ref"].rsplit("/", 1)[1].replace("%20", " ") for r in SCHEMA["oneOf"]} == commands


def test_every_command_output_matches_its_def(capsys, tmp_path):
    seen = set()
    for command, argv in cases(tmp_path):
        code, out, err = run(capsys, *argv, "--json")
        assert code in (0, 1), (argv, err)
        data = json.loads(out)
        assert data["command"] == command and data["version"] and "input" in data and "spec" in data, argv
        assert problems(command, data) == [], (argv, problems(command, data))
        seen.add(command)
    assert len(seen) == 13


def test_gpu_check_output_matches_its_def(capsys):
    pytest.importorskip("torch")
    for command, argv in gpu_cases():
        code, out, err = run(capsys, *argv, "--json")
        assert code in (0, 1), (argv, err)
        data = json.loads(out)
        assert problems(command, data) == [], (argv, problems(command, data))


def test_audit_output_matches_its_def(capsys):
    pytest.importorskip("transformers")
    for command, argv in hf_cases():
        code, out, err = run(capsys, *argv, "--json")
        assert code in (0, 1), (argv, err)
        data = json.loads(out)
        assert problems(command, data) == [], (argv, problems(command, data))


@pytest.mark.parametrize("command, data, needle", [
    ("analyze", {"n": 3}, "'n' was unexpected"),  # the old key: additionalProperties catch the drift
    ("counterexample", {"n": 2}, "'n' was unexpected"),
    ("leak", {"witness": []}, "'witness' was unexpected"),
])
def test_drift_is_caught(capsys, command, data, needle):
    argv = {"analyze": ["analyze", "causal:n=3"], "counterexample": ["counterexample", "bad_butterfly_crossed",
                                                                      "--n", "3"],
            "leak": ["leak", "bad_butterfly_crossed:n=3"]}[command]
    _, out, _ = run(capsys, *argv, "--json")
    obj = json.loads(out)
    assert problems(command, obj) == []
    obj.update(data)
    assert any(needle in p for p in problems(command, obj))


def test_shared_names(capsys):
    """positions is the number of positions everywhere; input and spec name the argument."""
    _, out, _ = run(capsys, "analyze", "sliding_window:w=2,n=6", "--json")
    a = json.loads(out)
    _, out, _ = run(capsys, "leak", "bad_butterfly_crossed:n=3", "--json")
    lk = json.loads(out)
    _, out, _ = run(capsys, "flow", "sliding_window:n=6,w=2", "--from", "0", "--to", "5", "--json")
    f = json.loads(out)
    assert a["positions"] == 6 and lk["positions"] == 3 * 3 - 2 and f["positions"] == 6
    assert a["input"] == "sliding_window:w=2,n=6" and a["spec"] == "sliding_window:n=6,window=2"
    assert lk["spec"] == "bad_butterfly_crossed:n=3" and f["spec"] == "sliding_window:n=6,window=2"
    _, out, _ = run(capsys, "analyze", "sliding_window:n=6,window=2", "--json")
    assert json.loads(out)["spec"] == a["spec"]


# ------------------------------------------------------------------ round trips: JSON outputs are task files


def leak_of(capsys, path: Path, *extra):
    code, out, err = run(capsys, "leak", path, "--json", *extra)
    assert code in (0, 1), err
    return code, json.loads(out)


@pytest.mark.parametrize("design, extra", [
    ("bad_butterfly_crossed", ()),
    ("bad_block_own_content:block=2", ()),
    ("bad_mlm_unmasked", ()),
    ("bad_butterfly_crossed:n=4", ("--layers", "2")),
    ("bad_butterfly_crossed", ("--method", "both")),
])
def test_counterexample_json_is_a_task_that_leaks_the_same_way(capsys, tmp_path, design, extra):
    code, out, err = run(capsys, "counterexample", design, "--json", *extra)
    cex = json.loads(out)
    assert code == 1 and cex["property"] == "leak", err
    path = tmp_path / "cex.json"
    path.write_text(out)
    layers = ["--layers", cex["layers"]] if cex["layers"] is not None else []
    code, leak = leak_of(capsys, path, *layers)
    assert code == 1 and not leak["leak_free"]
    assert leak["leaks"] == cex["leaks"][:len(leak["leaks"])] or leak["leaks"][0] == cex["leaks"][0]
    assert leak["positions"] == cex["positions"] and leak["tokens"] == cex["tokens"]
    # the labels are written as the task file format says: null, an int, or a list of several
    assert all(x is None or isinstance(x, int) or (isinstance(x, list) and len(x) > 1) for x in cex["labels"])


def test_counterexample_layers_and_fixed_n(capsys):
    # bad_butterfly_crossed leaks first at depth 2: no counterexample within one layer
    code, out, _ = run(capsys, "counterexample", "bad_butterfly_crossed:n=4", "--layers", "1", "--json")
    data = json.loads(out)
    assert code == 0 and data["tokens"] is None and data["checked"] == [4] and data["layers"] == 1
    code, out, _ = run(capsys, "counterexample", "bad_butterfly_crossed", "--layers", "2", "--json", "--n", "4")
    data = json.loads(out)
    assert code == 1 and data["tokens"] == 2 and all(x["depth"] <= 2 for x in data["leaks"])
    code, out, _ = run(capsys, "counterexample", "bad_butterfly_crossed", "--layers", "1", "--json", "--n", "4",
                       "--method", "both")
    data = json.loads(out)
    assert code == 0 and data["agree"] and data["tokens"] is None


@pytest.mark.parametrize("mask, sources, sinks, layers, flows", [
    ("document:lengths=3+4", "0-2", "3-6", None, False),
    ("sliding_window:n=12,w=3", "0", "11", "4", False),
    ("sliding_window:n=12,w=3", "0", "11", None, True),
    ("causal:n=5", "1,3", "0,2,4", None, True),
    ("causal:n=5", "3", "3", None, True),  # a position in both sets depends on itself
])
def test_flow_json_is_a_task_whose_leaks_are_the_flows(capsys, tmp_path, mask, sources, sinks, layers, flows):
    extra = ["--layers", layers] if layers else []
    code, out, err = run(capsys, "flow", mask, "--from", sources, "--to", sinks, "--json", *extra)
    flow = json.loads(out)
    assert code == (1 if flows else 0) and flow["flow_free"] is not flows, err
    path = tmp_path / "flow.json"
    path.write_text(out)
    code, leak = leak_of(capsys, path, *extra)
    assert code == (1 if flows else 0) and leak["leak_free"] is not flows
    nearest: dict[int, int] = {}  # a leak per (position, target); a flow per position, its nearest source
    for x in leak["leaks"]:
        nearest[x["position"]] = min(nearest.get(x["position"], x["depth"]), x["depth"])
    assert nearest == {x["position"]: x["depth"] for x in flow["flows"]}
    pairs = {(x["position"], x["source"], x["depth"]) for x in leak["leaks"]}
    assert all((x["position"], x["source"], x["depth"]) in pairs for x in flow["flows"])


def test_flow_json_keeps_heads_and_empty_rows(capsys, tmp_path):
    """A mask_mod's union over heads, and rows left empty under attend-none, as the flow saw them."""
    mod = tmp_path / "heads.py"
    mod.write_text(MASK_MOD + "def lonely(b, h, q_idx, kv_idx):\n    return (kv_idx < q_idx)\n")
    for argv in ([f"{mod}:heads", "--n", "4", "--heads", "2", "--from", "0", "--to", "1-3"],
                 [f"{mod}:lonely", "--n", "4", "--from", "3", "--to", "0", "--empty-rows", "attend-none"],
                 [f"{mod}:lonely", "--n", "4", "--from", "0", "--to", "0-3", "--empty-rows", "attend-none"]):
        code, out, _ = run(capsys, "flow", *argv, "--json")
        flow = json.loads(out)
        path = tmp_path / "f.json"
        path.write_text(out)
        code2, leak = leak_of(capsys, path)
        assert code2 == code
        assert {(x["position"], x["depth"]) for x in leak["leaks"]} == {(x["position"], x["depth"]) for x in
                                                                       flow["flows"]}


def test_merge_json_and_out_are_the_same_task_file(capsys, tmp_path):
    out_file = tmp_path / "merged.json"
    code, out, _ = run(capsys, "merge", "infill:n=3", "--json", "--out", out_file)
    assert code == 0 and json.loads(out) == json.loads(out_file.read_text())
    code, leak = leak_of(capsys, out_file)
    assert code == 0 and leak["positions"] == json.loads(out)["positions"]


@pytest.mark.parametrize("argv", [
    ["analyze", "butterfly:n=3"],
    ["leak", "bad_butterfly_crossed:n=3"],
    ["flow", "causal:n=4", "--from", "0", "--to", "3"],
    ["counterexample", "bad_butterfly_crossed", "--n", "3"],
    ["merge", "infill:n=3"],
    ["consistent", "block_two_stream:n=4,block=2", "--inference", "block:n=4,block=2"],
    ["catalog"],
])
def test_out_writes_the_json_and_the_terminal_gets_the_report(capsys, tmp_path, argv):
    path = tmp_path / "o.json"
    code_json, out_json, _ = run(capsys, *argv, "--json")
    code, out, err = run(capsys, *argv, "--out", path)
    assert code == code_json, err
    written = json.loads(path.read_text())
    assert written["command"] == json.loads(out_json)["command"]
    strip = lambda d: {k: v for k, v in d.items() if k not in ("seconds", "methods")}  # noqa: E731
    assert strip(written) == strip(json.loads(out_json))
    assert not out.lstrip().startswith("{")  # the text report, not JSON
    assert problems(written["command"], written) == []


def test_out_never_overwrites_an_input(capsys, tmp_path):
    task = tmp_path / "t.json"
    run(capsys, "counterexample", "bad_butterfly_crossed", "--n", "3", "--out", task)
    before = task.read_text()
    code, _, err = run(capsys, "leak", task, "--out", task)
    assert code == 2 and "--out would overwrite the input" in err and task.read_text() == before

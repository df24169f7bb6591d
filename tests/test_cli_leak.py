"""`hasse leak`, `hasse flow`, `hasse counterexample`: verdicts, depths, exit codes, bad task input."""

import json

import numpy as np
import pytest

from hasse.cli import main
from hasse.theory.catalog import build_task

# design.md §4: every bad design and the depth of the counterexample it must produce
BAD_DESIGNS = {
    "bad_butterfly_self:n=5": ("leaks", 0),
    "bad_butterfly_crossed:n=5": ("leaks", 2),
    "bad_block_own_content:n=4,block=2": ("leaks", 1),
    "bad_mlm_unmasked:n=4": ("leaks", 0),
    "bad_packed_window:lengths=3+4,window=3": ("isolation", 1),
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def leak_json(capsys, *argv, expect=None):
    code, out, err = run(capsys, "leak", *argv, "--json")
    if expect is not None:
        assert code == expect, err
    return code, json.loads(out)


@pytest.mark.parametrize("spec", ["butterfly:n=8", "block_two_stream:n=8,block=2",
                                  "block_two_stream:n=8,block=4,variant=clique", "causal_lm:n=6",
                                  "mlm:n=6,masked=1,4", "bd3lm:n=4,block=2", "xlnet:order=2+0+3+1",
                                  "packed:lengths=3+2+4", "bad_block_query_history:n=6,block=2"])
def test_clean_tasks_exit_0(capsys, spec):
    _, data = leak_json(capsys, spec, expect=0)
    assert data["leak_free"] and data["leaks"] == [] and data["isolation"] == []


def test_butterfly_full_coverage(capsys):
    _, data = leak_json(capsys, "butterfly:n=8", expect=0)
    assert data["target_coverage"] == 1.0
    assert data["positions"] == 22 and len(data["supervised"]) == 8


@pytest.mark.parametrize("spec", sorted(BAD_DESIGNS))
def test_bad_designs_report_their_counterexample(capsys, spec):
    kind, depth = BAD_DESIGNS[spec]
    _, data = leak_json(capsys, spec, expect=1)
    found = data[kind if kind == "isolation" else "leaks"]
    assert found and min(x["depth"] for x in found) == depth
    task = build_task(spec)
    for x in found:  # every witness is a real path of the stated depth
        path = x["path"]
        assert len(path) - 1 == x["depth"] and path[-1] == x["position"]
        for a, b in zip(path, path[1:]):
            assert task.mask[b, a]


def test_bad_butterfly_self_leaks_at_every_prediction(capsys):
    _, data = leak_json(capsys, "bad_butterfly_self:n=5", expect=1)
    p_positions = {2 * 5 - 2 + k for k in range(5)}
    assert {x["position"] for x in data["leaks"] if x["depth"] == 0} == p_positions


def test_bad_butterfly_crossed_path_shape(capsys):
    _, data = leak_json(capsys, "bad_butterfly_crossed:n=4", expect=1)
    task = build_task("bad_butterfly_crossed:n=4")
    for x in data["leaks"]:
        names = [task.names[v] for v in x["path"]]
        assert [s[0] for s in names] == ["B", "F", "P"]  # B_m -> F_j -> P_m


def test_layers_boundary(capsys):
    # a leak of depth 2 is absent at L = 1 and present at L = 2
    code, data = leak_json(capsys, "bad_butterfly_crossed:n=4", "--layers", "1")
    assert code == 0 and data["leak_free"] and data["leaks_beyond_layers"]
    code, data = leak_json(capsys, "bad_butterfly_crossed:n=4", "--layers", "2")
    assert code == 1 and data["leaks"]
    code, out, _ = run(capsys, "leak", "bad_butterfly_crossed:n=4", "--layers", "1")
    assert "greater depth" in out


def test_human_report_marks_the_path(capsys):
    code, out, _ = run(capsys, "leak", "bad_block_own_content:n=4,block=2", "--ascii")
    assert code == 1 and "verdict: LEAK" in out and "@" in out and "C0(0) -> Q0(4)" in out


def test_png_with_path(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "leak.png"
    code, _, err = run(capsys, "leak", "bad_butterfly_crossed:n=3", "--png", str(png))
    assert code == 1 and png.read_bytes()[:4] == b"\x89PNG"


def test_counterexample_finds_n2(capsys):
    code, out, _ = run(capsys, "counterexample", "bad_butterfly_crossed", "--n", "8", "--json")
    data = json.loads(out)
    assert code == 1 and data["tokens"] == 2 and data["property"] == "leak"
    assert data["leaks"][0]["depth"] == 2 and len(data["mask"]) == 3 * 2 - 2
    code, out, _ = run(capsys, "counterexample", "bad_butterfly_crossed", "--n", "8")
    assert code == 1 and "n = 2" in out and "agg(x0)" in out


def test_counterexample_with_fixed_parameter_and_none(capsys):
    code, out, _ = run(capsys, "counterexample", "bad_block_own_content:block=2", "--json")
    data = json.loads(out)
    assert code == 1 and data["tokens"] == 2 and data["skipped"][0]["tokens"] == 1
    code, out, _ = run(capsys, "counterexample", "butterfly", "--n", "6", "--json")
    data = json.loads(out)
    assert code == 0 and data["tokens"] is None and data["checked"] == [1, 2, 3, 4, 5, 6]
    code, out, _ = run(capsys, "counterexample", "infill", "--n", "5", "--json")
    assert code == 0 and json.loads(out)["tokens"] is None


def test_counterexample_of_a_design_sized_by_its_other_parameters(capsys):
    # bad_packed_window has no n: its lengths fix 6 tokens, so that size only is checked
    code, out, _ = run(capsys, "counterexample", "bad_packed_window:lengths=3+3,window=2", "--json")
    data = json.loads(out)
    assert code == 1 and data["tokens"] == 6 and data["property"] == "isolation" and data["checked"] == [6]
    assert data["isolation"][0]["path"] == [2, 3] and data["isolation"][0]["depth"] == 1
    code, out, _ = run(capsys, "counterexample", "bad_packed_window:lengths=3+3,window=1", "--json")
    assert code == 0 and json.loads(out)["tokens"] is None  # a window of one key crosses nothing


def test_counterexample_from_python_file(capsys, tmp_path):
    src = tmp_path / "designs.py"
    src.write_text(
        "def shifted_lm(n):\n"
        "    # labels shifted the wrong way round: position i predicts token i - 1\n"
        "    mask = [[int(k <= q) for k in range(n)] for q in range(n)]\n"
        "    return {'tokens': n, 'inputs': [[f'x{i}', i] for i in range(n)],\n"
        "            'labels': [None] + list(range(n - 1)), 'mask': mask}\n"
    )
    code, out, _ = run(capsys, "counterexample", f"{src}:shifted_lm", "--json")
    data = json.loads(out)
    assert code == 1 and data["tokens"] == 2 and data["leaks"][0]["path"] == [0, 1]


def test_flow(capsys):
    code, out, _ = run(capsys, "flow", "document:lengths=3+4", "--from", "0-2", "--to", "3-6", "--json")
    assert code == 0 and json.loads(out)["flow_free"]
    code, out, _ = run(capsys, "flow", "sliding_window:n=12,w=3", "--from", "0", "--to", "11", "--json")
    data = json.loads(out)
    assert code == 1 and data["flows"][0]["depth"] == 6 and data["flows"][0]["path"][0] == 0
    code, out, _ = run(capsys, "flow", "sliding_window:n=12,w=3", "--from", "0", "--to", "11", "--layers", "5")
    assert code == 0 and "greater depth" in out


# ---------------------------------------------------------------- bad task input: exit 2, one line


def task_file(tmp_path, name, **overrides):
    data = {"tokens": 3, "inputs": [["x0", 0], ["[MASK]", 1], ["x2", 2]], "labels": [None, 1, None],
            "mask": [[1, 0, 0], [1, 1, 0], [1, 1, 1]]}
    data.update(overrides)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


BAD_TASKS = {
    "label_range.json": ({"labels": [None, 7, None]}, "label 7"),
    "agg_range.json": ({"inputs": [["x0", 0], ["agg(x1,x9)", 1], ["x2", 2]]}, "token 9"),
    "symbol.json": ({"inputs": [["x0", 0], ["<pad>", 1], ["x2", 2]]}, "unknown input symbol"),
    "sizes.json": ({"mask": "causal:n=4"}, "different sizes"),
    "overlap.json": ({"isolate": [[0, 1], [1, 2]]}, "overlap"),
    "missing.json": ({"isolate": [[0], [5]]}, "position 5"),
    "labels_count.json": ({"labels": [None]}, "labels"),
}


@pytest.mark.parametrize("name", sorted(BAD_TASKS))
def test_bad_task_input_exit_2(capsys, tmp_path, name):
    overrides, needle = BAD_TASKS[name]
    path = task_file(tmp_path, name, **overrides)
    code, out, err = run(capsys, "leak", str(path))
    assert code == 2 and needle in err and name in err and err.count("\n") == 1, err
    assert out == ""


def test_malformed_task_json(capsys, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"tokens": 3,\n  "inputs": [["x0", 0]\n')
    code, _, err = run(capsys, "leak", str(path))
    assert code == 2 and "line 3 column 1" in err and "broken.json" in err


def test_task_file_roundtrip_and_mask_reference(capsys, tmp_path):
    np.save(tmp_path / "m.npy", np.tril(np.ones((3, 3), dtype=bool)))
    path = task_file(tmp_path, "ok.json", mask="m.npy", isolate=[[0, 1], [2]])
    code, data = leak_json(capsys, str(path))
    assert code == 1 and data["isolation"][0]["position"] == 2 and data["leaks"] == []


@pytest.mark.parametrize("argv, needle", [
    (["leak", "butterfly:n=4", "--layers", "-2"], "layers"),
    (["leak", "nosuch:n=3"], "unknown"),
    (["flow", "causal:n=4", "--from", "0", "--to", "9"], "outside"),
    (["flow", "causal:n=4", "--from", "a", "--to", "1"], "not a position"),
    (["counterexample", "bad_butterfly_crossed:n=3", "--n", "5"], "the design fixes n = 3; leave out --n"),
    (["counterexample", "bad_block_own_content"], "block"),
])
def test_bad_arguments_exit_2(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2 and needle in err and err.count("\n") == 1, err


def _additive(rows):
    """A (B, 1, 4, 4) float32 additive mask (0 attends, -inf blocks) from 0/1 matrices, one per batch row."""
    return np.stack([np.where(np.asarray(r, dtype=bool), 0.0, -np.inf) for r in rows]).astype(np.float32)[:, None]


def test_every_batch_row_names_its_empty_rows_and_the_policy(capsys, tmp_path):
    """Issue 20, item 7: batch row 1 of a (2, 1, 4, 4) additive mask has an empty row; the report named none
    (empty_rows.rows: []). Reference: each batch row given alone, as a 2-D mask."""
    causal = np.tril(np.ones((4, 4), dtype=bool))
    lonely = causal.copy()
    lonely[2] = False  # query 2 attends no key: read as every key (attend-all), it sees its target x3
    tail = causal.copy()
    tail[3] = False  # query 3 attends no key: it has no target, so row 0 stays leak-free
    for rows, worst in (([causal, lonely], 1), ([tail, lonely], 1), ([lonely, tail], 0)):
        np.save(tmp_path / "batch.npy", _additive(rows))
        alone = []
        for b, r in enumerate(rows):
            np.save(tmp_path / f"row{b}.npy", _additive([r])[0, 0])
            alone.append(leak_json(capsys, str(tmp_path / f"row{b}.npy"))[1])
        code, data = leak_json(capsys, str(tmp_path / "batch.npy"), expect=1)
        assert data["batch_row"] == worst
        assert data["empty_rows"] == alone[worst]["empty_rows"] and data["empty_rows"]["rows"]
        assert [r["empty_rows"] for r in data["batch_rows"]] == [a["empty_rows"] for a in alone]
        assert [r["leak_free"] for r in data["batch_rows"]] == [a["leak_free"] for a in alone]
        code, out, _ = run(capsys, "leak", str(tmp_path / "batch.npy"))
        lines = out.splitlines()
        for b, a in enumerate(alone):  # every row's empty rows, in the text too, with the policy
            if a["empty_rows"]["rows"]:
                said = "empty rows (queries attending no key): " + ", ".join(map(str, a["empty_rows"]["rows"]))
                prefix = "" if b == worst else f"batch row {b}: "
                assert any(x.startswith(prefix + said) and "(--empty-rows attend-all)" in x for x in lines), out


def test_a_task_with_nothing_to_check_is_refused(capsys, tmp_path):
    """No supervised position and no isolate group: refused (exit 2, one line), never a vacuous LEAK-FREE;
    the same task with an isolate group is checked."""
    base = {"tokens": 3, "inputs": [["x0", 0], ["x1", 1], ["x2", 2]], "labels": [None, None, None],
            "mask": "causal:n=3"}
    (tmp_path / "none.json").write_text(json.dumps(base))
    code, _, err = run(capsys, "leak", str(tmp_path / "none.json"))
    assert code == 2 and "nothing to check" in err and err.count("\n") == 1, err
    (tmp_path / "iso.json").write_text(json.dumps(base | {"isolate": [[0], [1, 2]]}))
    code, data = leak_json(capsys, str(tmp_path / "iso.json"))
    assert code == 1 and data["isolation"] and data["supervised"] == []

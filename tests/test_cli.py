"""The `hasse` command line: outputs of analyze/catalog/demo and exit codes for bad input."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hasse.cli import main
from hasse.theory.catalog import build_mask
from hasse.theory.reference import reference_order

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def analyze_json(capsys, *argv):
    code, out, err = run(capsys, "analyze", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_butterfly_n4_json(capsys):
    data = analyze_json(capsys, "butterfly:n=4")
    assert data["convergence_depth"] == 1
    assert len(data["classes"]) == 10
    assert data["positions"] == 10 and data["dense"] is True and data["residual"] is True
    # check the JSON against the networkx reference, not against the engine
    ref = reference_order(build_mask("butterfly:n=4").matrix)
    assert {frozenset(c) for c in data["classes"]} == set(ref.classes)
    edges = {(frozenset(data["classes"][a]), frozenset(data["classes"][b])) for a, b in data["hasse_edges"]}
    assert edges == set(ref.hasse_edges)
    assert sorted(p for c in data["classes"] for p in c) == list(range(10))


def test_swap_no_residual_reports_period_two(capsys, tmp_path):
    path = tmp_path / "swap.txt"
    path.write_text("0 1\n1 0\n")
    data = analyze_json(capsys, str(path), "--no-residual")
    assert data["period"] == 2 and data["convergence_depth"] is None
    code, out, _ = run(capsys, "analyze", str(path), "--no-residual")
    assert code == 0 and "period 2" in out and "no limit" in out


def test_layers_reachability_rows(capsys):
    data = analyze_json(capsys, "sliding_window:n=6,w=2", "--layers", "2")
    r = np.array(data["reachability"], dtype=bool)
    expected = np.zeros((6, 6), dtype=bool)
    for q in range(6):
        expected[q, max(0, q - 2) : q + 1] = True
    assert np.array_equal(r, expected)
    assert data["layers"] == 2 and data["convergence_depth"] == 5


def test_json_is_the_only_stdout(capsys):
    code, out, err = run(capsys, "analyze", "causal:n=3", "--json")
    assert code == 0
    json.loads(out)  # exactly one object, nothing else
    assert out.count("\n") == 1


def test_human_report(capsys):
    code, out, _ = run(capsys, "analyze", "butterfly:n=3")
    assert code == 0
    assert "convergence depth L* = 1" in out and "P2" in out


def test_dot_output(capsys, tmp_path):
    dot = tmp_path / "b.dot"
    code, _, err = run(capsys, "analyze", "causal:n=4", "--dot", str(dot))
    assert code == 0, err
    text = dot.read_text()
    assert text.lstrip().startswith("digraph")
    edges = [line.strip() for line in text.splitlines() if line.strip().startswith("c") and "->" in line]
    assert edges == ["c0 -> c1;", "c1 -> c2;", "c2 -> c3;"]  # the chain 0 -> 1 -> 2 -> 3
    code, out, _ = run(capsys, "analyze", "causal:n=4", "--dot", "-")
    assert code == 0 and out == text


def test_png_output(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "b.png"
    code, _, err = run(capsys, "analyze", "butterfly:n=4", "--png", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 5000


def test_empty_rows_warn_and_strict(capsys, tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("0 0\n1 1\n")
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 0 and "empty row" in err
    code, out, err = run(capsys, "analyze", str(path), "--strict")
    assert code == 2 and "empty row" in err and err.count("\n") == 1


def test_catalog_lists_every_entry(capsys):
    code, out, _ = run(capsys, "catalog")
    assert code == 0
    for name in ("causal", "bidirectional", "sliding_window", "prefix_lm", "document", "block_causal",
                 "bd3lm", "xlnet", "tree", "block_two_stream", "butterfly"):
        assert f"  {name}:" in out or f"  {name} " in out
    code, out, _ = run(capsys, "catalog", "--json")
    assert {e["name"] for e in json.loads(out)["entries"]} >= {"butterfly", "xlnet"}


def test_demo_runs_and_checks(capsys):
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert "FAIL" not in out and "every check holds" in out


# ---------------------------------------------------------------- bad input: exit 2, one line

BAD_FILES = {
    "nonsquare.txt": ("0 1\n1 0\n1 1\n", "--queries separate"),  # Q > K: not a KV cache (issue 11)
    "values.txt": ("0 2\n1 0\n", "2"),
    "empty.txt": ("", "empty"),
    "ragged.txt": ("0 1\n1\n", "row"),
    "bad.json": ('{"mask": [[0, 1],\n [1, 0]', "line 2 column"),
    "nomask.json": ('{"rows": [[0]]}', "mask"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_mask_files_exit_2(capsys, tmp_path, name):
    text, needle = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(text)
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 2
    assert err.count("\n") == 1 and name in err and needle in err.lower()
    assert "Traceback" not in err


def test_bad_npy_inputs(capsys, tmp_path):
    cube = tmp_path / "cube.npy"
    np.save(cube, np.zeros((2, 2, 2, 2, 2)))  # 3-D and 4-D are heads and batch rows (tests/test_mask_forms.py)
    nan = tmp_path / "nan.npy"
    np.save(nan, np.array([[1.0, np.nan], [0.0, 1.0]]))
    zero = tmp_path / "zero.npy"
    np.save(zero, np.zeros((0, 0)))
    for path, needle in ((cube, "2-d"), (nan, "nan"), (zero, "n = 0")):
        code, _, err = run(capsys, "analyze", str(path))
        assert code == 2 and needle in err.lower() and err.count("\n") == 1, err


def test_bad_mask_mods(capsys, tmp_path):
    src = tmp_path / "mods.py"
    src.write_text(
        "def raises(b, h, q, k):\n    raise RuntimeError('boom')\n"
        "def wrong_shape(b, h, q, k):\n    return (q >= k)[:2]\n"
        "def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n"
    )
    code, _, err = run(capsys, "analyze", f"{src}:raises", "--n", "4")
    assert code == 2 and "boom" in err and err.count("\n") == 1
    code, _, err = run(capsys, "analyze", f"{src}:wrong_shape", "--n", "4")
    assert code == 2 and "shape" in err
    code, _, err = run(capsys, "analyze", f"{src}:causal")
    assert code == 2 and "--n" in err
    code, _, err = run(capsys, "analyze", f"{src}:missing", "--n", "4")
    assert code == 2 and "missing" in err
    code, _, err = run(capsys, "analyze", f"{src}:causal", "--n", "10000000")
    assert code == 2 and "GB" in err
    data = analyze_json(capsys, f"{src}:causal", "--n", "5")
    assert data["convergence_depth"] == 1 and len(data["classes"]) == 5


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["analyze", "nosuchmask:n=3"], "unknown"),
        (["analyze", "causal:n=0"], "n"),
        (["analyze", "block_causal:n=5,block=2"], "divide"),
        (["analyze", "causal:n=10000000"], "GB"),
        (["analyze", "missing_file.npy"], "missing_file.npy"),
        (["analyze", "causal:n=3", "--layers", "-1"], "layers"),
        (["analyze"], "MASK"),
        (["nonsense"], "invalid choice"),
    ],
)
def test_bad_specs_and_usage_exit_2(capsys, argv, needle):
    with pytest.raises(SystemExit) as info:
        raise SystemExit(main(argv))
    assert info.value.code == 2
    _, err = capsys.readouterr()
    assert needle in err and "Traceback" not in err


def test_console_entry_point_and_module():
    out = subprocess.run([sys.executable, "-m", "hasse", "analyze", "causal:n=2", "--json"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["positions"] == 2
    out = subprocess.run([sys.executable, "-m", "hasse", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "analyze" in out.stdout and "catalog" in out.stdout

"""Reading masks from files, specs and FlexAttention mask_mods (theory.mask_io, gpu_check.mask_mod)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from hasse.theory.errors import InputError, TooLargeError
from tests.mask_reading import load_mask
from hasse.theory.mask import NamedMask
from hasse.theory.user_code import ARGUMENT

CAUSAL_4 = np.tril(np.ones((4, 4), dtype=bool))
ROWS_4 = CAUSAL_4.astype(int).tolist()

MASK_MODS = textwrap.dedent(
    """
    import numpy  # noqa: F401  (a mask file may import what it likes)

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def sliding_window(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < 4)

    def uses_torch(b, h, q_idx, kv_idx):
        import torch
        return torch.where(q_idx >= kv_idx, True, False)

    def vmap_only(b, h, q_idx, kv_idx):
        import torch
        # stacking (n, 1) with (1, n) fails; on FlexAttention's scalars it is max(q, kv) == q
        return torch.stack([q_idx, kv_idx]).max(0).values == q_idx

    def everything(b, h, q_idx, kv_idx):
        return True

    def first_rows(b, h, q_idx, kv_idx):
        return q_idx < 2

    def raises(b, h, q_idx, kv_idx):
        return 1 / 0

    def wrong_shape(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx)[..., None]

    def returns_none(b, h, q_idx, kv_idx):
        return None

    def returns_two(b, h, q_idx, kv_idx):
        return 2 * (q_idx >= kv_idx)

    not_a_function = 3
    """
)


@pytest.fixture
def mods(tmp_path):
    path = tmp_path / "masks.py"
    path.write_text(MASK_MODS)
    return str(path)


def expect_error(source, *phrases, **kwargs):
    """load_mask(source) raises InputError whose single line contains every phrase (a mask_mod named as an argument)."""
    with pytest.raises(InputError) as info:
        load_mask(str(source), **{"code": ARGUMENT, **kwargs})
    message = str(info.value)
    assert "\n" not in message
    for phrase in phrases:
        assert str(phrase) in message, message
    return info.value


# --- each form round-trips --------------------------------------------------------------


@pytest.mark.parametrize("dtype", [bool, np.int64, np.uint8, np.float32])
def test_npy_round_trip(tmp_path, dtype):
    path = tmp_path / "m.npy"
    np.save(path, CAUSAL_4.astype(dtype))
    mask = load_mask(str(path))
    assert isinstance(mask, NamedMask)
    assert mask.matrix.dtype == bool and mask.matrix.flags.c_contiguous
    assert np.array_equal(mask.matrix, CAUSAL_4)
    assert mask.names == ("0", "1", "2", "3") and mask.spec == str(path)


@pytest.mark.parametrize(
    "name, text",
    [
        ("m.txt", "1 0 0 0\n1 1 0 0\n1 1 1 0\n1 1 1 1\n"),
        ("m.csv", "1,0,0,0\n1,1,0,0\n1,1,1,0\n1,1,1,1\n"),
        ("m.csv", "# causal, n = 4\n\n1, 0, 0, 0\n1 ,1,0 ,0,\n  # comment\n1 1 1 0\n1,1,1,1\n\n"),
        ("m.txt", "true false false false\nTrue True False False\nTRUE true true false\n1 true 1 true\n"),
    ],
)
def test_text_round_trip(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert np.array_equal(load_mask(str(path)).matrix, CAUSAL_4)


def test_text_reads_savetxt_output(tmp_path):
    path = tmp_path / "m.txt"
    np.savetxt(path, CAUSAL_4.astype(float))  # '1.000000000000000000e+00 ...' with the default format
    assert np.array_equal(load_mask(str(path)).matrix, CAUSAL_4)


@pytest.mark.parametrize("rows", [ROWS_4, CAUSAL_4.tolist()])
def test_json_rows_round_trip(tmp_path, rows):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"mask": rows}))
    mask = load_mask(str(path))
    assert np.array_equal(mask.matrix, CAUSAL_4) and mask.names == ("0", "1", "2", "3")


def test_json_names_are_used_when_they_fit(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"mask": ROWS_4, "names": ["C0", "C1", "Q0", "Q1"]}))
    assert load_mask(str(path)).names == ("C0", "C1", "Q0", "Q1")
    path.write_text(json.dumps({"mask": ROWS_4, "names": ["C0", "C1"]}))  # wrong length: ignored
    assert load_mask(str(path)).names == ("0", "1", "2", "3")


def test_json_task_file_gives_its_mask(tmp_path):
    task = {
        "name": "toy",
        "tokens": 4,
        "inputs": [["x0", 0], ["agg(x0,x2)", 1], ["x2", 2], ["x3", 3]],
        "labels": [None, 1, None, None],
        "mask": ROWS_4,
        "isolate": [[0, 1], [2, 3]],
    }
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    assert np.array_equal(load_mask(str(path)).matrix, CAUSAL_4)


def test_json_mask_as_spec_uses_resolve_spec(tmp_path):
    asked = []

    def resolve(spec):
        asked.append(spec)
        return NamedMask(CAUSAL_4, ("a", "b", "c", "d"), spec)

    path = tmp_path / "task.json"
    path.write_text(json.dumps({"inputs": [["x0", 0]] * 4, "mask": "causal:n=4"}))
    mask = load_mask(str(path), resolve_spec=resolve)
    assert asked == ["causal:n=4"]
    assert np.array_equal(mask.matrix, CAUSAL_4) and mask.names == ("a", "b", "c", "d")


def test_json_mask_as_relative_path(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "m.npy", CAUSAL_4)
    (tmp_path / "task.json").write_text(json.dumps({"mask": "data/m.npy"}))
    monkeypatch.chdir("/")  # relative to the JSON file's folder, not the working directory
    assert np.array_equal(load_mask(str(tmp_path / "task.json")).matrix, CAUSAL_4)


def test_json_mask_never_names_a_mask_mod(tmp_path, mods):
    """Issue 10: only the command line may name code to run; a JSON file naming one is refused, unrun."""
    (tmp_path / "ran.py").write_text(f"open({str(tmp_path / 'RAN')!r}, 'w').close()\ndef causal(b, h, q, k):\n    return q >= k\n")
    for value in ("masks.py:causal", "ran.py:causal", "ran.py"):
        (tmp_path / "task.json").write_text(json.dumps({"mask": value}))
        expect_error(tmp_path / "task.json", "task.json", "names Python code", n=4)
    assert not (tmp_path / "RAN").exists()


def test_spec_uses_resolve_spec():
    mask = load_mask("causal:n=4", resolve_spec=lambda spec: ROWS_4)
    assert np.array_equal(mask.matrix, CAUSAL_4) and mask.spec == "causal:n=4"
    named = NamedMask(CAUSAL_4, tuple("abcd"), "causal:n=4")
    assert load_mask("causal:n=4", resolve_spec=lambda spec: named) is named
    assert load_mask("bidirectional", resolve_spec=lambda spec: ROWS_4).n == 4  # no ':' and no suffix


def test_spec_without_catalogue_is_an_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "hasse.theory.catalog", None)  # makes the import fail
    expect_error("causal:n=4", "causal:n=4", "hasse.theory.catalog")


def test_mask_mod_causal(mods):
    mask = load_mask(f"{mods}:causal", n=4, code=ARGUMENT)
    assert np.array_equal(mask.matrix, CAUSAL_4)
    assert mask.spec == f"{mods}:causal" and mask.names == ("0", "1", "2", "3")


def test_mask_mod_sliding_window(mods):
    q, k = np.indices((9, 9))
    expected = (q >= k) & (q - k < 4)
    assert np.array_equal(load_mask(f"{mods}:sliding_window", n=9, code=ARGUMENT).matrix, expected)


def test_mask_mod_results_that_broadcast(mods):
    assert load_mask(f"{mods}:everything", n=3, code=ARGUMENT).matrix.all()  # a scalar True is the all-true mask
    rows = load_mask(f"{mods}:first_rows", n=4, code=ARGUMENT).matrix  # (n, 1) depends on the query only
    assert rows[:2].all() and not rows[2:].any()


def test_mask_mod_with_torch_ops_goes_through_the_fallback(mods):
    pytest.importorskip("torch")
    from hasse.gpu_check.mask_mod import evaluate_mask_mod_torch, torch_fallback_or_none

    assert torch_fallback_or_none() is evaluate_mask_mod_torch
    mask = load_mask(f"{mods}:uses_torch", n=4, code=ARGUMENT, fallback=torch_fallback_or_none())
    assert np.array_equal(mask.matrix, CAUSAL_4)


def test_torch_evaluation_falls_back_to_vmap_like_flex(mods):
    pytest.importorskip("torch")
    from hasse.gpu_check.mask_mod import evaluate_mask_mod_torch

    mask = load_mask(f"{mods}:vmap_only", n=5, code=ARGUMENT, fallback=evaluate_mask_mod_torch)
    assert np.array_equal(mask.matrix, np.tril(np.ones((5, 5), dtype=bool)))


def test_torch_evaluation_reports_errors_with_the_file(mods):
    pytest.importorskip("torch")
    from hasse.gpu_check.mask_mod import evaluate_mask_mod_torch

    expect_error(f"{mods}:raises", "masks.py:raises", "ZeroDivisionError", n=4, fallback=evaluate_mask_mod_torch)


def test_torch_evaluation_with_a_wrong_shape(tmp_path):
    pytest.importorskip("torch")
    from hasse.gpu_check.mask_mod import evaluate_mask_mod_torch

    (tmp_path / "t.py").write_text("import torch\ndef three(b, h, q, kv):\n    return q.new_ones(3, dtype=torch.bool)\n")
    expect_error(f"{tmp_path}/t.py:three", "t.py:three: the mask_mod returned shape (3,)", n=4,
                 fallback=evaluate_mask_mod_torch)


def test_torch_missing_says_how_to_install(monkeypatch):
    from hasse.gpu_check.mask_mod import evaluate_mask_mod_torch

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(InputError, match=r"pip install 'hasse-attention\[torch\]'"):
        evaluate_mask_mod_torch(lambda b, h, q, kv: q >= kv, 3)


def test_given_n_must_match_a_file(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, CAUSAL_4)
    assert load_mask(str(path), n=4).n == 4
    expect_error(path, "m.npy", "n = 5 was given but the mask has n = 4", n=5)


# --- bad input: one InputError, one line naming the file and the problem ----------------


@pytest.mark.parametrize("name", ["missing.npy", "missing.txt", "missing.csv", "missing.json", "sub/missing"])
def test_missing_file(tmp_path, name):
    expect_error(tmp_path / name, name, "no such file")


def test_missing_mask_mod_file(tmp_path):
    expect_error(f"{tmp_path}/missing.py:causal", "missing.py", "no such file", n=4)


def test_unknown_file_type(tmp_path):
    path = tmp_path / "m.xlsx"
    path.write_text("1")
    expect_error(path, "m.xlsx", "unknown mask file type '.xlsx'")


@pytest.mark.parametrize("name, content", [("m.npy", ""), ("m.txt", ""), ("m.csv", "  \n\n"), ("m.json", " \n")])
def test_empty_file(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    expect_error(path, name, "empty file")


def test_text_with_only_comments(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("# nothing here\n\n")
    expect_error(path, "m.txt", "empty file", "no mask rows")


@pytest.mark.parametrize(
    "name, write",
    [
        ("m.txt", lambda p: p.write_text("1 0\n1 1\n0 1\n")),
        ("m.npy", lambda p: np.save(p, np.ones((3, 2), dtype=bool))),
        ("m.json", lambda p: p.write_text(json.dumps({"mask": [[1, 0], [1, 1], [0, 1]]}))),
    ],
)
def test_non_square(tmp_path, name, write):
    """More queries than keys (3 x 2) cannot be read with the queries last (issue 11: Q <= K is a KV cache,
    tests/test_non_square.py); the error says to read it as cross-attention."""
    write(tmp_path / name)
    expect_error(tmp_path / name, name, "3 query rows but 2 key columns", "queries=separate")


@pytest.mark.parametrize("shape", [(2, 2, 2, 2, 2), (4,), ()])  # 3-D and 4-D: heads and batch rows (test_mask_forms)
def test_npy_not_2d(tmp_path, shape):
    path = tmp_path / "m.npy"
    np.save(path, np.ones(shape, dtype=bool))
    expect_error(path, "m.npy", "2-D", f"{len(shape)}-D")


@pytest.mark.parametrize(
    "name, content, where",
    [
        ("m.txt", "1 0\n# comment\n1 2\n", ["'2'", "line 3", "[1, 1]"]),
        ("m.csv", "1,yes\n1,1\n", ["'yes'", "line 1", "[0, 1]"]),
        ("m.json", json.dumps({"mask": [[1, 0], [2, 1]]}), ["found 2", "[1, 0]"]),
        ("m.json", json.dumps({"mask": [[1, "yes"], [1, 1]]}), ['found "yes"', "[0, 1]"]),
        ("m.json", json.dumps({"mask": [[1, None], [1, 1]]}), ["found null", "[0, 1]"]),
    ],
)
def test_values_other_than_0_1(tmp_path, name, content, where):
    (tmp_path / name).write_text(content)
    expect_error(tmp_path / name, name, "0/1 or true/false", *where)


def test_npy_values_other_than_0_1(tmp_path):
    np.save(tmp_path / "m.npy", np.array([[1, 0], [3, 1]]))
    expect_error(tmp_path / "m.npy", "m.npy", "found 3 at [1, 0]")


@pytest.mark.parametrize(
    "name, write, where",
    [
        ("m.npy", lambda p: np.save(p, np.array([[1.0, np.nan], [1.0, 1.0]])), "[0, 1]"),
        ("m.txt", lambda p: p.write_text("1 0\n1 NaN\n"), "line 2 at [1, 1]"),
        ("m.json", lambda p: p.write_text('{"mask": [[1, 0], [NaN, 1]]}'), "[1, 0]"),
    ],
)
def test_nan(tmp_path, name, write, where):
    write(tmp_path / name)
    expect_error(tmp_path / name, name, "NaN", where)


def test_ragged_rows_text(tmp_path):
    (tmp_path / "m.txt").write_text("# header\n1 0 0\n1 1\n1 1 1\n")
    expect_error(tmp_path / "m.txt", "m.txt", "ragged rows", "line 3 has 2 entries, line 2 has 3")


def test_ragged_rows_json(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"mask": [[1, 0, 0], [1, 1], [1, 1, 1]]}))
    expect_error(tmp_path / "m.json", "m.json", "ragged rows", "row 1 has 2 entries")


def test_n_zero_npy(tmp_path):
    np.save(tmp_path / "m.npy", np.zeros((0, 0), dtype=bool))
    expect_error(tmp_path / "m.npy", "m.npy", "n = 0")


def test_n_zero_json(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"mask": []}))
    expect_error(tmp_path / "m.json", "m.json", "n = 0")


def test_n_zero_mask_mod(mods):
    expect_error(f"{mods}:causal", "masks.py:causal", "n = 0", n=0)


def test_malformed_json_gives_line_and_column(tmp_path):
    (tmp_path / "m.json").write_text('{\n  "mask": [[1, 0],\n    [1 1]]\n}\n')
    expect_error(tmp_path / "m.json", "m.json", "malformed JSON", "line 3 column 8")


def test_json_without_mask_field(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"inputs": [["x0", 0]], "labels": [None]}))
    expect_error(tmp_path / "m.json", "m.json", "no 'mask' field")


def test_json_family_file_is_not_a_mask(tmp_path):
    (tmp_path / "f.json").write_text(json.dumps({"tokens": 2, "tasks": []}))
    expect_error(tmp_path / "f.json", "f.json", "no 'mask' field", "task family")


def test_json_that_is_not_an_object(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps(ROWS_4))
    expect_error(tmp_path / "m.json", "m.json", "expected a JSON object with a 'mask' field, got a list")


def test_json_mask_of_the_wrong_type(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"mask": 4}))
    expect_error(tmp_path / "m.json", "m.json", "'mask' must be a list of 0/1 rows, a spec or a file path")


def test_json_that_refers_to_itself(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"mask": "b.json"}))
    (tmp_path / "b.json").write_text(json.dumps({"mask": "a.json"}))
    expect_error(tmp_path / "a.json", "a.json", "refers back to itself")


def test_json_relative_path_missing(tmp_path):
    (tmp_path / "task.json").write_text(json.dumps({"mask": "nowhere/m.npy"}))
    expect_error(tmp_path / "task.json", "task.json: 'mask': ", "nowhere/m.npy: no such file")


def test_pickled_npy(tmp_path):
    np.save(tmp_path / "m.npy", np.array([[1, None], [1, 1]], dtype=object), allow_pickle=True)
    expect_error(tmp_path / "m.npy", "m.npy", "pickled")


def test_npy_that_is_not_npy(tmp_path):
    (tmp_path / "m.npy").write_text("1 0\n1 1\n")
    expect_error(tmp_path / "m.npy", "m.npy", "not a valid .npy file")


def test_npz_under_an_npy_name(tmp_path):
    with open(tmp_path / "m.npy", "wb") as f:
        np.savez(f, mask=CAUSAL_4)
    expect_error(tmp_path / "m.npy", "m.npy", "archive of arrays (.npz)")


def test_json_spec_error_names_the_json_file(tmp_path):
    def resolve(spec):
        raise InputError("n must be an integer, got 'abc'", spec)

    (tmp_path / "task.json").write_text(json.dumps({"mask": "causal:n=abc"}))
    message = "task.json: 'mask': causal:n=abc: n must be an integer"
    expect_error(tmp_path / "task.json", message, resolve_spec=resolve)


def test_npy_too_large_is_refused_from_its_header(tmp_path):
    path = tmp_path / "huge.npy"
    with open(path, "wb") as f:  # a header that promises 10^10 entries, and no data
        header = {"descr": "|b1", "fortran_order": False, "shape": (100_000, 100_000)}
        np.lib.format.write_array_header_1_0(f, header)
    error = expect_error(path, "huge.npy", "n = 100000", "GB")
    assert isinstance(error, TooLargeError)


def test_mask_mod_needs_n(mods):
    expect_error(f"{mods}:causal", "masks.py:causal", "needs n,")


def test_mask_mod_too_large_is_refused_before_evaluation(tmp_path):
    (tmp_path / "m.py").write_text("def never(b, h, q, kv):\n    raise RuntimeError('evaluated')\n")
    error = expect_error(f"{tmp_path}/m.py:never", "m.py:never", "n = 1000000", "GB", n=10**6)
    assert isinstance(error, TooLargeError)  # the function was never called


def test_mask_mod_that_raises(mods):
    expect_error(f"{mods}:raises", "masks.py:raises", "raises raised ZeroDivisionError", "division by zero", n=4)


def test_mask_mod_using_torch_without_fallback(mods):
    pytest.importorskip("torch")
    expect_error(f"{mods}:uses_torch", "masks.py:uses_torch", "uses_torch raised TypeError", n=4)


@pytest.mark.parametrize(
    "function, problem",
    [
        ("wrong_shape", "returned shape (4, 4, 1), which does not broadcast to (4, 4)"),
        ("returns_none", "returned NoneType, not booleans or 0/1"),
        ("returns_two", "found 2 at [0, 0]"),
    ],
)
def test_mask_mod_with_a_bad_result(mods, function, problem):
    expect_error(f"{mods}:{function}", f"masks.py:{function}", problem, n=4)


def test_mask_mod_unknown_function(mods):
    expect_error(f"{mods}:causl", "masks.py", "no function 'causl'", "causal", n=4)


def test_mask_mod_not_a_function(mods):
    expect_error(f"{mods}:not_a_function", "masks.py", "not a function", n=4)


def test_mask_mod_file_that_does_not_import(tmp_path):
    (tmp_path / "broken.py").write_text("def causal(b, h, q, kv)\n    return q >= kv\n")
    expect_error(f"{tmp_path}/broken.py:causal", "broken.py", "importing it raised SyntaxError", n=4)


# --- issue 20, item 7: the API takes what hasse.load_mask takes ---------------------------------------------------


def _next_token_reference(matrix):
    """find_leaks of the next-token task built here by hand (x_q at q, label q+1), not through the API's loaders."""
    from hasse.theory.leak import find_leaks as theory_find_leaks
    from hasse.theory.task import make_task

    n = matrix.shape[0]
    task = make_task(n, [(f"x{q}", q) for q in range(n)], [q + 1 if q + 1 < n else None for q in range(n)],
                     np.asarray(matrix, dtype=bool))
    return theory_find_leaks(task)


def _mask_forms():
    causal = np.tril(np.ones((4, 4), dtype=bool))
    window = causal & ~np.tril(np.ones((4, 4), dtype=bool), -2)
    dense = np.ones((4, 4), dtype=bool)
    forms = {
        "bool": (causal, causal), "rows": (dense.astype(int).tolist(), dense), "int": (window.astype(np.int64), window),
        "additive": (np.where(window, 0.0, -np.inf), window), "heads": (np.stack([causal, dense]), dense),
        "named": (NamedMask(causal, tuple("0123"), "x"), causal),
    }
    try:
        import torch
        from torch.nn.attention.flex_attention import create_block_mask
    except ImportError:
        return forms
    forms["tensor"] = (torch.from_numpy(dense), dense)
    forms["blockmask"] = (create_block_mask(lambda b, h, q, k: q >= k, None, None, 4, 4, device="cpu"), causal)
    return forms


@pytest.mark.parametrize("form", sorted(_mask_forms()))
def test_find_leaks_and_find_flows_take_what_load_mask_takes(form):
    """Before: find_leaks refused a numpy array, a tensor or a BlockMask ('unknown task', 'no such file')."""
    import hasse

    value, matrix = _mask_forms()[form]
    assert np.array_equal(hasse.load_mask(value).matrix, matrix)  # load_mask accepts it: so must the rest
    want = _next_token_reference(matrix)
    got = hasse.find_leaks(value)
    assert got.leak_free == want.leak_free and [x.to_json() for x in got.leaks] == [x.to_json() for x in want.leaks]
    reach = hasse.reach(value, 10)
    assert [f.position for f in hasse.find_flows(value, [0], [1, 2, 3])] == [d for d in (1, 2, 3) if reach[d, 0]]


def test_find_flows_reads_each_heads_empty_rows_as_the_command_line(tmp_path, capsys):
    """Head 1's query 0 attends no key: under attend-all it sees every key, so x3 flows to 0 (as `hasse flow` says);
    the union over heads taken first would hide it."""
    import hasse
    from hasse.cli import main

    causal = np.tril(np.ones((4, 4), dtype=bool))
    lonely = causal.copy()
    lonely[0] = False
    heads = np.stack([causal, lonely])
    np.save(tmp_path / "h.npy", heads)
    assert main(["flow", str(tmp_path / "h.npy"), "--from", "3", "--to", "0", "--json"]) == 1
    cli = json.loads(capsys.readouterr().out)
    assert [f["position"] for f in cli["flows"]] == [0]
    assert [f.position for f in hasse.find_flows(heads, [3], [0])] == [0]
    assert hasse.find_flows(heads, [3], [0], empty_rows="attend-none") == ()


# --- issue 20: who may run a mask_mod, and the bounded runner it runs in (theory.user_code) ---------------------------


def test_a_mask_mod_runs_only_with_a_permission(tmp_path):
    """Below the command line nothing grants one by default: a name with no permission is refused, unrun."""
    from hasse.theory.user_code import TRUSTED

    (tmp_path / "m.py").write_text(f"open({str(tmp_path / 'RAN')!r}, 'w').close()\n"
                                   "def causal(b, h, q, k):\n    return q >= k\n")
    expect_error(f"{tmp_path / 'm.py'}:causal", "--trust-code", n=4, code=None)
    assert not (tmp_path / "RAN").exists()
    assert np.array_equal(load_mask(f"{tmp_path / 'm.py'}:causal", n=4, code=TRUSTED).matrix, CAUSAL_4)
    assert (tmp_path / "RAN").exists()


def test_a_stack_files_layers_get_no_permission_and_typed_layers_the_callers():
    import pathlib
    import tempfile

    from hasse.theory.inputs.stacks import build_stack

    seen = []

    def loader(text, n, permission):
        seen.append((text, permission))
        return CAUSAL_4, text, "attention"

    build_stack("a.py:f x2, b.py:g", n=4, load=loader, code=ARGUMENT)
    assert seen == [("a.py:f", ARGUMENT), ("b.py:g", ARGUMENT)]
    folder = pathlib.Path(tempfile.mkdtemp())
    (folder / "s.json").write_text(json.dumps({"layers": ["a.py:f", {"mask": "b.py:g"}], "n": 4}))
    seen.clear()
    build_stack(str(folder / "s.json"), load=loader, code=ARGUMENT)
    assert [p for _, p in seen] == [None, None]


def test_the_runner_returns_results_and_keeps_input_errors_whole():
    from hasse.theory.inputs.mask_mod import RangeNeeded
    from hasse.theory.user_code import run

    assert np.array_equal(run(lambda: CAUSAL_4, source="t"), CAUSAL_4)

    def needs_heads():
        raise RangeNeeded("h", 2, "m.py:f")

    with pytest.raises(RangeNeeded) as info:  # its class and fields come back from the child
        run(needs_heads, source="m.py:f")
    assert info.value.axis == "h" and info.value.value == 2 and info.value.source == "m.py:f"


def test_the_runner_stops_sleeps_exits_and_allocations(capfd):
    import os
    import time

    from hasse.theory.user_code import UserCodeTimeout, limits, run

    with limits(seconds=0.5), pytest.raises(UserCodeTimeout, match="did not finish within 0.5 s"):
        run(lambda: time.sleep(60), source="t", what="mask_mod")
    with pytest.raises(InputError, match=r"ended the process \(os._exit\(7\)\) without an answer"):
        run(lambda: os._exit(7), source="t", what="mask_mod")
    with limits(memory=64 << 20), pytest.raises(InputError, match="ran out of memory"):
        run(lambda: bytearray(1 << 30), source="t", what="mask_mod")
    assert run(lambda: print("from the user's code") or 3, source="t") == 3
    out, err = capfd.readouterr()
    assert "from the user's code" in err and "from the user's code" not in out  # --json stays one object


def test_torch_mask_mod_runs_after_the_parent_used_torchs_thread_pool(tmp_path):
    # A forked child inherits the state of torch's OpenMP pool but not its threads: before the
    # runner set the child to one thread, a torch mask_mod loaded after any parallel torch op in
    # the parent hung until the time limit (the suite's order made three tests fail that way).
    pytest.importorskip("torch")
    (tmp_path / "tm.py").write_text("import torch\n\ndef m(b, h, q, kv):\n"
                                    "    return torch.logical_or(q >= kv, torch.zeros_like(q, dtype=torch.bool))\n")
    code = textwrap.dedent(f"""
        import torch
        torch.randn(600, 600) @ torch.randn(600, 600)  # the parent's pool is running now
        from hasse.gpu_check.torch_masks import register_input_hooks
        from hasse.theory.inputs.read import Reading, read
        register_input_hooks()
        mask = read({str(tmp_path / 'tm.py')!r} + ":m", Reading(n=8), accept=("mask",)).mask
        print(int(mask.matrix.sum()))
        """)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert proc.stdout.strip() == str(8 * 9 // 2)

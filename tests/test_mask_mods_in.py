"""Mask_mods as users have them (issue 11, points 1 and 2): factory calls with literal arguments,
baked-in sizes, ``hasse leak`` on a bare mask (next-token prediction) and task files naming a
mask_mod (``--trust-code``).

Every verdict is compared with an independent reference: the same mask written as numpy rows
(or a built-in spec), and leaks found by a plain transitive closure (Floyd–Warshall on
``A = M ∨ I``), not by the kit's reach code.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hasse
from hasse.cli import main
from hasse.theory.errors import InputError
from hasse.theory.inputs.forms import form_of
from hasse.theory.inputs.calls import parse_call, split_function
from tests.cli_run import run, written

ATTN_GYM = '''\
"""An attention-gym style file: factories that return FlexAttention mask_mods."""
import torch

with open(__file__ + ".imported", "a") as marker:  # records every import of this file
    marker.write("x")


def generate_sliding_window(window_size):
    def sliding_window_causal(b, h, q_idx, kv_idx):
        causal_mask = q_idx >= kv_idx
        window_mask = q_idx - kv_idx <= window_size
        return causal_mask & window_mask

    sliding_window_causal.__name__ = f"sliding_window_{window_size}"
    return sliding_window_causal


def generate_prefix_lm_mask(prefix_length):
    def prefix_lm_causal(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) | (kv_idx < prefix_length)

    return prefix_lm_causal


def generate_doc_mask(lengths=(3, 5), causal=True, window=None):
    """Documents of the given lengths (a tuple), causal or bidirectional inside each, optionally windowed."""
    starts = [0]
    for length in lengths:
        starts.append(starts[-1] + length)

    def doc_of(i):
        return sum((i >= s) * 1 for s in starts[1:])

    def mask(b, h, q_idx, kv_idx):
        same = doc_of(q_idx) == doc_of(kv_idx)
        if causal:
            same = same & (kv_idx <= q_idx)
        if window is not None:
            same = same & (abs(q_idx - kv_idx) <= window)
        return same

    return mask


def bidirectional(b, h, q_idx, kv_idx):
    return q_idx >= 0


def not_a_mask_mod(n):
    return 3
'''

BAKED = '''\
import numpy as np
import torch

DOC_NP = np.arange(32) // 8          # document ids of 32 positions, baked into the closure
DOC_T = torch.arange(32) // 8


def docs_numpy(b, h, q_idx, kv_idx):
    return (DOC_NP[q_idx] == DOC_NP[kv_idx]) & (kv_idx <= q_idx)


def docs_torch(b, h, q_idx, kv_idx):
    return (DOC_T[q_idx] == DOC_T[kv_idx]) & torch.as_tensor(kv_idx <= q_idx)


def last_two(b, h, q_idx, kv_idx):
    return kv_idx >= q_idx.shape[0] - 2    # reads the grid's size: not a mask_mod FlexAttention can run
'''


gym = written("attn_gym_masks.py", ATTN_GYM)
baked = written("baked.py", BAKED)


# --- independent references ----------------------------------------------------------------


def ref_sliding(n: int, w: int) -> np.ndarray:
    q, k = np.indices((n, n))
    return (k <= q) & (q - k <= w)


def ref_prefix_lm(n: int, prefix: int) -> np.ndarray:
    q, k = np.indices((n, n))
    return (k <= q) | (k < prefix)


def ref_docs(lengths, causal=True, window=None) -> np.ndarray:
    doc = np.repeat(np.arange(len(lengths)), lengths)
    n = len(doc)
    q, k = np.indices((n, n))
    m = doc[q] == doc[k]
    if causal:
        m &= k <= q
    if window is not None:
        m &= abs(q - k) <= window
    return m


def closure(mask: np.ndarray) -> np.ndarray:
    """Floyd–Warshall on A = M ∨ I: R[q, k] iff k reaches q in some number of hops."""
    r = np.array(mask, dtype=bool) | np.eye(len(mask), dtype=bool)
    for m in range(len(r)):
        r |= r[:, [m]] & r[[m], :]
    return r


def next_token_leaks(mask: np.ndarray) -> list[int]:
    """Positions q < n-1 that depend on position q+1 (the only one holding their target x_{q+1})."""
    r = closure(mask)
    return [q for q in range(len(mask) - 1) if r[q, q + 1]]


def check_witness(path, mask: np.ndarray, position: int, source: int) -> None:
    assert path[0] == source and path[-1] == position
    for a, b in zip(path, path[1:]):
        assert mask[b, a], f"hop {a} -> {b} is not allowed by the mask"


# --- naming a mask_mod: split and parse, never eval ------------------------------------------


def test_form_of_classifies_factory_calls():
    assert form_of("f.py:g(3)") == "function"
    assert form_of('f.py:g(window=3, s="a:b")') == "function"
    assert split_function('dir/f.py:g(window=3, s="x.py:h(1)")') == ("dir/f.py", 'g(window=3, s="x.py:h(1)")')
    assert split_function("f.py:g") == ("f.py", "g")
    assert form_of("causal:n=4") == "spec" and split_function("causal:n=4") is None


def test_parse_call_literals_only():
    assert parse_call("g(3, -2.5, None, True, (1, 2), [3, 'a'], w=4, s='a:b')", "s") == (
        "g", (3, -2.5, None, True, (1, 2), [3, "a"]), {"w": 4, "s": "a:b"})
    for bad, word in [("g(x)", "not a literal"), ("g(1 + 2j)", "complex"), ("g({1: 2})", "dict"),
                      ("g(*a)", "*a"), ("g(**k)", "**k"), ("g(2 ** 99)", "not a literal"),
                      ("g(lambda: 1)", "not a literal"), ("g(1)(2)", "expected name(arguments)"),
                      ("g(" * 2000, "characters long")]:
        with pytest.raises(InputError, match=None) as info:
            parse_call(bad, "s")
        assert word in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("call", [
    "generate_sliding_window(__import__('os').system('touch {marker}'))",
    "generate_sliding_window(window_size=open('{marker}', 'w'))",
    "generate_sliding_window([x for x in ().__class__.__base__.__subclasses__()])",
])
def test_malicious_arguments_are_refused_without_running_anything(capsys, tmp_path, gym, call):
    marker = tmp_path / "pwned"
    code, out, err = run(capsys, "analyze", f"{gym}:{call.format(marker=marker)}", "--n", 8)
    assert code == 2 and "not a literal" in err and len(err.strip().splitlines()) == 1
    assert not marker.exists()
    assert not (tmp_path / "attn_gym_masks.py.imported").exists()  # the file was not even imported


# --- factories through the API and the CLI -------------------------------------------------


@pytest.mark.parametrize("call, reference", [
    ("generate_sliding_window(3)", ref_sliding(12, 3)),
    ("generate_sliding_window(window_size=2)", ref_sliding(12, 2)),
    ("generate_doc_mask((4, 8))", ref_docs((4, 8))),
    ("generate_doc_mask(lengths=[5, 7], causal=False)", ref_docs((5, 7), causal=False)),
    ("generate_doc_mask(lengths=(2, 10), causal=False, window=1)", ref_docs((2, 10), causal=False, window=1)),
])
def test_factory_calls_load_the_reference_mask(gym, call, reference):
    named = hasse.load_mask(f"{gym}:{call}", n=12)
    assert named.matrix.shape == (12, 12)
    assert np.array_equal(named.matrix, reference)


def test_factory_is_called_once_per_load(tmp_path):
    path = tmp_path / "counting.py"
    path.write_text(textwrap.dedent(f'''
        def make(w):
            with open({str(tmp_path / "calls")!r}, "a") as f:
                f.write("x")
            return lambda b, h, q, kv: (kv <= q) & (q - kv <= w)
    '''))
    hasse.load_mask(f"{path}:make(2)", n=6)
    assert (tmp_path / "calls").read_text() == "x"


def test_analyze_factory_matches_the_same_mask_as_rows(capsys, tmp_path, gym):
    rows = tmp_path / "rows.npy"
    np.save(rows, ref_docs((3, 5), causal=False, window=2))
    code, out, err = run(capsys, "analyze", f"{gym}:generate_doc_mask(lengths=(3, 5), causal=False, window=2)",
                         "--n", 8, "--json")
    assert code == 0, err
    from_factory = json.loads(out)
    code, out, err = run(capsys, "analyze", rows, "--json")
    assert code == 0, err
    from_rows = json.loads(out)
    for key in ("classes", "hasse_edges", "convergence_depth", "dense", "height"):
        assert from_factory[key] == from_rows[key], key


def test_flow_with_a_factory_call(capsys, gym):
    # documents (3, 5): nothing flows from the first document into the second
    code, out, err = run(capsys, "flow", f"{gym}:generate_doc_mask((3, 5))", "--n", 8, "--from", "0-2", "--to", "3-7")
    assert code == 0, err
    code, out, err = run(capsys, "flow", f"{gym}:generate_sliding_window(1)", "--n", 8, "--from", 0, "--to", 7,
                         "--json")
    assert code == 1, err
    flow = json.loads(out)["flows"][0]
    check_witness(flow["path"], ref_sliding(8, 1), 7, 0)
    assert flow["depth"] == 7  # a window of 1 moves one position per layer


def test_factory_named_without_its_call(capsys, gym):
    code, out, err = run(capsys, "leak", f"{gym}:generate_sliding_window", "--n", 8)
    assert code == 2
    line = err.strip()
    assert "\n" not in line
    assert "'generate_sliding_window' takes (window_size) — it looks like a factory; call it: " in line
    assert line.endswith(f"{gym}:generate_sliding_window(3)")
    with pytest.raises(InputError, match="takes \\(lengths=\\(3, 5\\), causal=True, window=None\\)"):
        hasse.load_mask(f"{gym}:generate_doc_mask", n=8)


def test_factory_that_returns_no_mask_mod(capsys, gym):
    code, out, err = run(capsys, "analyze", f"{gym}:not_a_mask_mod(3)", "--n", 8)
    assert code == 2 and "not_a_mask_mod(3) returned int (3), not a mask_mod" in err
    code, out, err = run(capsys, "analyze", f"{gym}:generate_sliding_window(1, 2)", "--n", 8)
    assert code == 2 and "generate_sliding_window(1, 2) raised TypeError" in err
    code, out, err = run(capsys, "analyze", f"{gym}:no_such(1)", "--n", 8)
    assert code == 2 and "no function 'no_such'" in err


# --- baked-in sizes -------------------------------------------------------------------------


@pytest.mark.parametrize("function", ["docs_numpy", "docs_torch"])
def test_baked_in_size_is_reported_not_sliced(capsys, baked, function):
    if function == "docs_torch":
        pytest.importorskip("torch")
    code, out, err = run(capsys, "analyze", f"{baked}:{function}", "--n", 8)
    assert code == 2, out
    assert "its size seems baked in" in err and "it works up to n = 32" in err and err.strip().endswith("--n 32")
    code, out, err = run(capsys, "analyze", f"{baked}:{function}", "--n", 32, "--json")
    assert code == 0, err
    assert json.loads(out)["classes"] == [[i] for i in range(32)]  # causal inside each document: a chain each
    code, out, err = run(capsys, "leak", f"{baked}:{function}", "--n", 8)
    assert code == 2 and "--n 32" in err
    with pytest.raises(ValueError, match="baked in"):  # the helper for users' tests checks it too
        from hasse.testing import assert_no_leak
        assert_no_leak(f"{baked}:{function}", labels=[None] * 8, n=8)


def test_mask_mod_reading_the_grid_size_differs_in_the_corner(capsys, baked):
    code, out, err = run(capsys, "analyze", f"{baked}:last_two", "--n", 8)
    assert code == 2
    assert "answer at n = 8 differs from the top-left corner of its answer at n = 16 at [0, 6]" in err


def test_size_check_passes_for_ordinary_mask_mods_with_heads(capsys, gym):
    code, out, err = run(capsys, "analyze", f"{gym}:generate_sliding_window(2)", "--n", 10, "--heads", 2)
    assert code == 0, err


# --- hasse leak on a bare mask: next-token prediction ----------------------------------------


@pytest.mark.parametrize("call, n, reference", [
    ("generate_sliding_window(4)", 32, ref_sliding(32, 4)),
    ("generate_doc_mask((10, 22), window=3)", 32, ref_docs((10, 22), window=3)),
    ("generate_prefix_lm_mask(4)", 16, ref_prefix_lm(16, 4)),
    ("generate_doc_mask((3, 5), causal=False)", 8, ref_docs((3, 5), causal=False)),
    ("bidirectional", 6, np.ones((6, 6), dtype=bool)),
])
def test_leak_on_a_flex_attention_mask_mod(capsys, gym, call, n, reference):
    expected = next_token_leaks(reference)
    code, out, err = run(capsys, "leak", f"{gym}:{call}", "--n", n)
    assert code == (1 if expected else 0), err
    assert out.splitlines()[0] == ("checked as next-token prediction (position q predicts x_{q+1}); "
                                   "give a task file for other objectives")
    assert ("LEAK-FREE" in out) == (not expected)
    code, out, err = run(capsys, "leak", f"{gym}:{call}", "--n", n, "--json")
    data = json.loads(out)
    assert sorted(x["position"] for x in data["leaks"]) == expected
    for leak in data["leaks"]:
        assert leak["target"] == leak["position"] + 1
        check_witness(leak["path"], reference, leak["position"], leak["position"] + 1)


def test_leak_on_a_spec_or_mask_file_and_n(capsys, tmp_path):
    np.save(tmp_path / "window.npy", ref_sliding(10, 2).T)  # transposed: sees the future
    code, out, err = run(capsys, "leak", tmp_path / "window.npy")
    assert code == 1 and out.startswith("checked as next-token prediction")
    code, out, err = run(capsys, "leak", "sliding_window:n=10,w=3")
    assert code == 0, err
    code, out, err = run(capsys, "leak", "sliding_window:n=10,w=3", "--n", 9)
    assert code == 2 and "n = 9" in err
    code, out, err = run(capsys, "leak", "butterfly:n=4", "--n", 4)  # a task: --n is its positions
    assert code == 2 and "the task has 10 positions" in err
    code, out, err = run(capsys, "leak", "butterfly:n=4", "--n", 10)
    assert code == 0 and not out.startswith("checked as")


# --- task files naming a mask_mod: --trust-code -----------------------------------------------


def write_task(folder, mask: str, tokens: int = 6, name: str = "task.json"):
    path = folder / name
    path.write_text(json.dumps({
        "tokens": tokens,
        "inputs": [[f"x{i}", i] for i in range(tokens)],
        "labels": [i + 1 for i in range(tokens - 1)] + [None],
        "mask": mask,
    }))
    return path


@pytest.mark.parametrize("mask, reference", [
    ("attn_gym_masks.py:generate_sliding_window(2)", ref_sliding(6, 2)),
    ("attn_gym_masks.py:generate_doc_mask(lengths=(2, 4), causal=False)", ref_docs((2, 4), causal=False)),
    ("attn_gym_masks.py:bidirectional", np.ones((6, 6), dtype=bool)),
])
def test_task_json_with_a_mask_mod(capsys, tmp_path, gym, monkeypatch, mask, reference):
    task = write_task(tmp_path, mask)
    monkeypatch.chdir("/")  # the mask_mod is found beside the JSON file, not in the working folder
    marker = tmp_path / "attn_gym_masks.py.imported"
    code, out, err = run(capsys, "leak", task)
    assert code == 2 and "names Python code" in err and "pass --trust-code to run it" in err
    assert len(err.strip().splitlines()) == 1 and not marker.exists()
    with pytest.raises(InputError, match="pass --trust-code"):
        hasse.load_task(str(task))
    assert not marker.exists()

    expected = next_token_leaks(reference)
    code, out, err = run(capsys, "leak", task, "--trust-code", "--json")  # no --n: the inputs fix 6 positions
    assert code == (1 if expected else 0), err
    assert sorted(x["position"] for x in json.loads(out)["leaks"]) == expected
    assert marker.exists()
    loaded = hasse.load_task(str(task), trust_code=True)
    assert np.array_equal(loaded.mask, reference)
    code, out, err = run(capsys, "leak", task, "--trust-code", "--n", 7)
    assert code == 2 and "--n 7 was given but the task has 6 positions" in err
    code, out, err = run(capsys, "leak", task, "--trust-code", "--n", 6)
    assert code == (1 if expected else 0)


def test_mask_json_with_a_mask_mod_needs_trust_and_n(capsys, tmp_path, gym):
    path = tmp_path / "mask.json"
    path.write_text(json.dumps({"mask": "attn_gym_masks.py:generate_prefix_lm_mask(2)"}))
    code, out, err = run(capsys, "leak", path, "--n", 5)
    assert code == 2 and "pass --trust-code" in err
    code, out, err = run(capsys, "leak", path, "--n", 5, "--trust-code")
    assert code == 1, err
    from hasse.testing import assert_no_leak
    with pytest.raises(ValueError, match="pass --trust-code"):
        assert_no_leak(str(path), labels=[1, 2, 3, 4, None], n=5)
    with pytest.raises(AssertionError, match="position 0 \\(target 1\\)"):
        assert_no_leak(str(path), labels=[1, 2, 3, 4, None], n=5, trust_code=True)


def test_analyze_and_flow_take_trust_code(capsys, tmp_path, gym):
    path = tmp_path / "mask.json"
    path.write_text(json.dumps({"mask": "attn_gym_masks.py:generate_sliding_window(1)"}))
    code, out, err = run(capsys, "analyze", path, "--n", 6)
    assert code == 2 and "pass --trust-code" in err
    code, out, err = run(capsys, "analyze", path, "--n", 6, "--trust-code", "--json")
    assert code == 0, err
    assert json.loads(out)["classes"] == [[i] for i in range(6)]
    code, out, err = run(capsys, "flow", path, "--n", 6, "--trust-code", "--from", 0, "--to", 5, "--json")
    assert code == 1, err
    check_witness(json.loads(out)["flows"][0]["path"], ref_sliding(6, 1), 5, 0)


def test_merge_consistent_and_gpu_check_take_trust_code(capsys, tmp_path, gym):
    def family(mask, name):
        tasks = [{"inputs": [[f"x{i}", i] for i in range(k)] + [["[MASK]", k]],
                  "labels": [None] * k + [k], "mask": mask(k + 1)} for k in (1, 2, 3)]
        path = tmp_path / name
        path.write_text(json.dumps({"tokens": 4, "tasks": tasks}))
        return path

    by_code = family(lambda size: "attn_gym_masks.py:generate_sliding_window(10)", "code.json")
    by_rows = family(lambda size: ref_sliding(size, 10).astype(int).tolist(), "rows.json")
    code, out, err = run(capsys, "merge", by_code, "--json")
    assert code == 2 and "pass --trust-code" in err
    code, out, err = run(capsys, "merge", by_code, "--json", "--trust-code")
    assert code == 0, err
    merged = json.loads(out)
    code, out, err = run(capsys, "merge", by_rows, "--json")
    reference = json.loads(out)
    for key in ("nodes", "hasse_edges", "mask", "labels"):
        assert merged[key] == reference[key], key
    train = write_task(tmp_path, "attn_gym_masks.py:generate_sliding_window(10)", tokens=4, name="train.json")
    train_rows = tmp_path / "train_rows.json"
    train_rows.write_text(json.dumps(dict(json.loads(train.read_text()), mask=ref_sliding(4, 10).astype(int).tolist())))
    code, out, err = run(capsys, "consistent", train, "--inference", by_code, "--trust-code", "--json")
    by_code_report = json.loads(out)
    assert code in (0, 1), err
    code_rows, out, err = run(capsys, "consistent", train_rows, "--inference", by_rows, "--json")
    assert code == code_rows and by_code_report["consistent"] == json.loads(out)["consistent"]
    code, out, err = run(capsys, "consistent", train, "--inference", by_rows)
    assert code == 2 and "pass --trust-code" in err
    pytest.importorskip("torch")
    code, out, err = run(capsys, "gpu-check", train, "--layers", 1, "--seeds", 1)
    assert code == 2 and "pass --trust-code" in err
    code, out, err = run(capsys, "gpu-check", train, "--layers", 1, "--seeds", 1, "--trust-code")
    assert code in (0, 1) and "pass --trust-code" not in err, err


def test_baked_in_size_on_a_query_by_key_grid(tmp_path):
    path = tmp_path / "decode.py"
    path.write_text("import numpy as np\nCACHE = np.arange(12) // 4  # 12 keys: 11 cached + the new one\n"
                    "def decode(b, h, q_idx, kv_idx):\n    return CACHE[kv_idx] <= CACHE[q_idx + 11]\n")
    named = hasse.load_mask(f"{path}:decode", n=1, kv_len=12)  # the sizes baked in: accepted
    assert named.matrix.shape == (12, 12) and named.key_only == tuple(range(11))  # the query sees all 12 keys
    assert named.matrix[11].all()
    with pytest.raises(InputError, match="works at 1 x 6 but fails at 1 x 14 .*it works up to 1 x 12: its size "
                                         "seems baked in; give --kv-len 12"):
        hasse.load_mask(f"{path}:decode", n=1, kv_len=6)
    with pytest.raises(InputError, match="raised IndexError"):  # fails at the size given: smaller ones not probed
        hasse.load_mask(f"{path}:decode", n=3, kv_len=12)


def test_find_leaks_api_takes_trust_code(tmp_path, gym):
    task = write_task(tmp_path, "attn_gym_masks.py:generate_prefix_lm_mask(3)")
    with pytest.raises(InputError, match="pass --trust-code"):
        hasse.find_leaks(str(task))
    report = hasse.find_leaks(str(task), trust_code=True)
    assert sorted(x.position for x in report.leaks) == next_token_leaks(ref_prefix_lm(6, 3))


def test_an_output_onto_the_factory_file_is_refused_even_with_a_colon_in_an_argument(tmp_path, capsys):
    # hasse/output._input_paths once split on the last ':', so 'f.py:make(s="a:b")' hid f.py.
    src = tmp_path / "f.py"
    src.write_text("def make(s):\n    return lambda b, h, q, k: q >= k\n")
    before = src.read_text()
    code = main(["analyze", f'{src}:make(s="a:b")', "--n", "4", "--json", "--out", str(src)])
    assert code == 2
    assert src.read_text() == before
    assert "f.py" in capsys.readouterr().err


@pytest.mark.parametrize("subject, objective", [("causal:n=5", "next-token"), ("butterfly:n=4", "task")])
def test_leak_json_says_what_objective_was_checked(subject, objective, capsys):
    code = main(["leak", subject, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["objective"] == objective
    assert code == 0 and data["leak_free"]


HEADED = '''
def by_head(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) | ((h == 1) & (kv_idx == q_idx + 1))   # head 1 sees the next token

def by_batch(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) | ((b == 2) & (kv_idx == q_idx + 1))   # batch row 2 sees the next token
'''


def test_leak_on_a_mask_mod_that_reads_h_or_b_checks_every_head_and_batch_row(tmp_path, capsys):
    src = tmp_path / "headed.py"
    src.write_text(HEADED)
    assert main(["leak", f"{src}:by_head", "--n", "6"]) == 2  # undeclared h: refused, never h = 0 silently
    assert "--heads" in capsys.readouterr().err
    assert main(["leak", f"{src}:by_head", "--n", "6", "--heads", "1"]) == 0  # head 0 alone is causal
    capsys.readouterr()
    assert main(["leak", f"{src}:by_head", "--n", "6", "--heads", "2", "--json"]) == 1  # the union leaks
    data = json.loads(capsys.readouterr().out)
    # by hand: through head 1 every q < n-1 reads x_{q+1}, its own target, in one hop
    n = 6
    assert sorted(leak["position"] for leak in data["leaks"]) == list(range(n - 1))
    assert all(leak["depth"] == 1 for leak in data["leaks"])
    assert main(["leak", f"{src}:by_batch", "--n", "6", "--batch", "3", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [r["leak_free"] for r in data["batch_rows"]] == [True, True, False]
    assert data["batch_row"] == 2 and not data["leak_free"]
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[1] / "docs" / "schema.json").read_text())
    jsonschema.validate(data, {**schema, "$ref": "#/$defs/leak"})


# --- issue 20, item 7: file.py:factory(…) for a file inside a package -----------------------------------------------

PACKAGE_FILES = {  # attention-gym's layout: the window file imports its sibling absolutely and relatively
    "fakegym/__init__.py": "",
    "fakegym/masks/__init__.py": "from fakegym.masks.causal import causal_mask\n",
    "fakegym/masks/causal.py": "def causal_mask(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n",
    "fakegym/masks/sliding_window.py": textwrap.dedent('''\
        from fakegym.masks import causal_mask
        from .causal import causal_mask as relative_causal_mask


        def generate_sliding_window(window_size):
            def sliding_window(b, h, q_idx, kv_idx):
                both = causal_mask(b, h, q_idx, kv_idx) & relative_causal_mask(b, h, q_idx, kv_idx)
                return both & (q_idx - kv_idx <= window_size)

            return sliding_window
        '''),
}


@pytest.fixture()
def package(tmp_path, monkeypatch):
    """A fake attention-gym package under tmp_path/src; the working directory is elsewhere, no PYTHONPATH."""
    for name, text in PACKAGE_FILES.items():
        path = tmp_path / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return tmp_path / "src" / "fakegym" / "masks" / "sliding_window.py"


def window_rows(n: int, w: int) -> list[list[int]]:
    """The reference: k <= q and q - k <= w, written out by hand."""
    return [[int(k <= q and q - k <= w) for k in range(n)] for q in range(n)]


def test_a_factory_inside_a_package_is_imported_as_its_package(package, capsys):
    """Before: "importing it raised ModuleNotFoundError: No module named 'fakegym'" unless PYTHONPATH was set."""
    code = main(["analyze", f"{package}:generate_sliding_window(2)", "--n", "7", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = json.loads(out)
    assert np.array_equal(hasse.load_mask(f"{package}:generate_sliding_window(2)", n=7).matrix.astype(int),
                          window_rows(7, 2)), rows.get("spec")


def test_a_package_file_is_traced_for_every_n_too(package, capsys):
    code = main(["equiv", f"{package}:generate_sliding_window(3)", "sliding_window_distance:d=3"])
    out, err = capsys.readouterr()
    assert code == 0, (out, err)  # the same pairs as the catalogue's distance window for every n


def test_package_of_finds_the_root_and_the_dotted_name(package):
    from hasse.theory.inputs.user_files import package_of

    root, dotted = package_of(str(package))
    assert dotted == "fakegym.masks.sliding_window" and Path(root) == package.parents[2]
    assert package_of(str(package.parents[2] / "alone.py")) is None  # a file beside the package: no package


def test_two_packages_of_the_same_name_in_one_process(package, tmp_path, capsys):
    """The tracer imports in this process: a second fakegym elsewhere must be its own, not the first one cached."""
    other = tmp_path / "other"
    for name, text in PACKAGE_FILES.items():
        path = other / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("q_idx - kv_idx <= window_size", "q_idx - kv_idx < window_size"))
    assert main(["equiv", f"{package}:generate_sliding_window(3)", "sliding_window_distance:d=3"]) == 0
    second = other / "fakegym" / "masks" / "sliding_window.py"
    assert main(["equiv", f"{second}:generate_sliding_window(3)", "sliding_window_distance:d=2"]) == 0
    capsys.readouterr()

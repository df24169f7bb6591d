"""Empty rows read as kernels read them (design.md §2, issue 10 point 6).

A query that attends no key depends on every key under ``attend-all`` (additive
masks), on itself only under ``attend-none`` (zero-returning kernels), and is
refused under ``error``. Every expectation here comes from an independent
reference: the closure of the mask with the policy's definition applied by hand
(``reference_closure``), or the XLNet rule written out from its factorisation order.
The last tests plant the bug "ignore the policy" and watch the checks fire.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hasse.cli import main
from hasse.testing import assert_no_leak
from hasse.theory import empty_rows as er
from hasse.theory import leak as leak_module
from hasse.theory.leak import find_flows, find_leaks
from hasse.theory.inputs.tasks import load_task

DATA = Path(__file__).resolve().parent / "data"
XLNET_LIBRARY = DATA / "xlnet_library.json"
XLNET_DESIGN = DATA / "xlnet_library_design.py"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def read_as(mask: np.ndarray, policy: str) -> np.ndarray:
    """The policy's definition, by hand: attend-all makes every all-false row all true."""
    mask = np.array(mask, dtype=bool)
    if policy == "attend-all":
        mask[[q for q in range(len(mask)) if not any(mask[q])]] = True
    return mask


def reference_closure(mask: np.ndarray) -> np.ndarray:
    """R* by Warshall's algorithm on M or I (independent of the engine)."""
    r = np.array(mask, dtype=bool) | np.eye(len(mask), dtype=bool)
    for k in range(len(r)):
        r = r | (r[:, [k]] & r[[k], :])
    return r


def xlnet_library_mask(order) -> np.ndarray:
    """XLNet two-stream as Hugging Face transformers builds it (all tokens predicted, no memory).

    ``perm_mask[i, j] = 1`` (i may not attend j) iff rank(j) >= rank(i); the content
    stream adds its own position back (``non_tgt_mask``), the query stream does not, and
    query-stream keys are the content stream.
    """
    n = len(order)
    rank = {t: r for r, t in enumerate(order)}
    m = np.zeros((2 * n, 2 * n), dtype=bool)
    for i in range(n):
        for j in range(n):
            m[i, j] = rank[j] <= rank[i]
            m[n + i, j] = rank[j] < rank[i]
    return m


# --------------------------------------------------------------- the policy itself


@pytest.mark.parametrize("seed", range(40))
def test_flows_match_reference_under_each_policy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    mask = rng.random((n, n)) < 0.25
    mask[rng.integers(n)] = False  # at least one empty row
    sources = sorted(set(rng.integers(0, n, size=2).tolist()))
    for policy in ("attend-all", "attend-none"):
        closure = reference_closure(read_as(mask, policy))
        expected = {d for d in range(n) if closure[d, sources].any()}
        got = {f.position for f in find_flows(mask, sources, range(n), empty_rows=policy)}
        assert got == expected, (policy, mask.astype(int).tolist(), sources)
    with pytest.raises(er.InputError, match="empty row"):
        find_flows(mask, sources, range(n), empty_rows="error")


def test_apply_policy_rows_and_unknown_policy():
    m = np.array([[0, 0, 0], [1, 1, 0], [0, 0, 0]], dtype=bool)
    filled, found = er.apply_empty_row_policy(m, "attend-all")
    assert found.rows == (0, 2) and filled.astype(int).tolist() == [[1, 1, 1], [1, 1, 0], [1, 1, 1]]
    assert m[0].sum() == 0  # the input is not changed
    assert found.to_json()["kernels"] == list(er.KERNELS["attend-all"])
    with pytest.raises(er.InputError, match="empty_rows must be one of"):
        er.apply_empty_row_policy(m, "attend-some")


# --------------------------------------------------------------- XLNet, the case of the issue


def test_library_xlnet_file_is_the_library_rule():
    task = load_task(str(XLNET_LIBRARY))
    assert np.array_equal(task.mask, xlnet_library_mask((1, 0, 2)))
    first = 3 + 1  # the query row of token order[0] = 1
    assert not task.mask[first].any() and er.empty_rows(task.mask) == (first,)


def test_catalogue_xlnet_gives_the_first_query_its_own_state():
    """The catalogue form lets g_i attend itself, so its first-in-order row is not empty; without that
    diagonal it is exactly the library form."""
    task = load_task("xlnet:order=1+0+2")
    assert er.empty_rows(task.mask) == ()
    stripped = task.mask.copy()
    stripped[range(3, 6), range(3, 6)] = False
    assert np.array_equal(stripped, xlnet_library_mask((1, 0, 2)))
    for policy in ("attend-all", "attend-none"):
        assert find_leaks(task, empty_rows=policy).leak_free


def xlnet_verdicts(capsys) -> dict:
    """Exit status and JSON of ``hasse leak`` on the library XLNet under each policy."""
    out = {}
    for policy in ("attend-all", "attend-none"):
        code, text, err = run(capsys, "leak", XLNET_LIBRARY, "--json", "--empty-rows", policy)
        out[policy] = (code, json.loads(text))
    return out


def check_xlnet(capsys) -> None:
    """The library XLNet leaks under the default reading and is leak-free only under attend-none."""
    task = load_task(str(XLNET_LIBRARY))
    verdicts = xlnet_verdicts(capsys)
    code, report = verdicts["attend-all"]
    # reference: under attend-all, g1 (position 4) reaches c1 (position 1), which holds its target 1
    assert reference_closure(read_as(task.mask, "attend-all"))[4, 1]
    assert code == 1 and not report["leak_free"], report
    assert {(x["position"], x["target"], x["depth"]) for x in report["leaks"]} == {(4, 1, 1)}
    assert report["empty_rows"]["rows"] == [4] and report["empty_rows"]["policy"] == "attend-all"
    assert any("additive" in k for k in report["empty_rows"]["kernels"])
    code, report = verdicts["attend-none"]
    assert not reference_closure(read_as(task.mask, "attend-none"))[4, 1]
    assert code == 0 and report["leak_free"] and report["empty_rows"]["policy"] == "attend-none"
    assert any("FlexAttention" in k for k in report["empty_rows"]["kernels"])
    # the default is attend-all
    code, text, _ = run(capsys, "leak", XLNET_LIBRARY, "--json")
    assert code == 1 and json.loads(text)["empty_rows"]["policy"] == "attend-all"


def test_library_xlnet_leaks_by_default_and_only_attend_none_is_clean(capsys):
    check_xlnet(capsys)


def test_leak_human_report_names_rows_and_kernels(capsys):
    code, out, _ = run(capsys, "leak", XLNET_LIBRARY)
    assert code == 1 and "verdict: LEAK" in out
    assert "empty rows (queries attending no key): g1 (4)" in out and "Hugging Face eager" in out
    code, out, _ = run(capsys, "leak", XLNET_LIBRARY, "--empty-rows", "attend-none")
    assert code == 0 and "LEAK-FREE" in out and "FlexAttention" in out


def test_error_policy_exits_2_naming_the_rows(capsys):
    code, out, err = run(capsys, "leak", XLNET_LIBRARY, "--empty-rows", "error")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "1 empty row(s)" in err and ": 4;" in err and "--empty-rows attend-all" in err


# --------------------------------------------------------------- the other commands


@pytest.fixture
def lonely(tmp_path):
    """Row 0 attends nothing; 1 attends 0 and itself; 2 attends itself."""
    path = tmp_path / "lonely.txt"
    path.write_text("0 0 0\n1 1 0\n0 0 1\n")
    return path


def classes(analysis: dict) -> set:
    return {tuple(sorted(c)) for c in analysis["classes"]}


def reference_classes(mask) -> set:
    closure = reference_closure(mask)
    return {tuple(int(j) for j in np.flatnonzero(closure[i] & closure[:, i])) for i in range(len(mask))}


def test_analyze_default_describes_the_mask_as_given(capsys, lonely):
    raw = np.loadtxt(lonely, dtype=int).astype(bool)
    code, out, err = run(capsys, "analyze", lonely, "--json")
    a = json.loads(out)
    assert code == 0 and "empty row" in err and a["empty_rows"]["rows"] == [0]
    assert a["empty_rows"]["policy"] == "attend-none"
    assert classes(a) == reference_classes(raw)
    code, out, err = run(capsys, "analyze", lonely, "--json", "--empty-rows", "attend-all")
    a = json.loads(out)
    assert code == 0 and a["empty_rows"]["policy"] == "attend-all"
    assert classes(a) == reference_classes(read_as(raw, "attend-all")) != reference_classes(raw)
    code, out, _ = run(capsys, "analyze", lonely)
    assert "empty rows (queries attending no key): 0; read as attending nothing" in out
    for flags in (("--empty-rows", "error"), ("--strict",)):
        code, out, err = run(capsys, "analyze", lonely, *flags)
        assert code == 2 and "empty row" in err and err.count("\n") == 1


def test_flow_reads_empty_rows_like_leak(capsys, lonely):
    code, out, _ = run(capsys, "flow", lonely, "--from", "2", "--to", "0", "--json")
    report = json.loads(out)
    assert code == 1 and report["flows"][0]["path"] == [2, 0] and report["empty_rows"]["rows"] == [0]
    code, out, _ = run(capsys, "flow", lonely, "--from", "2", "--to", "0", "--json", "--empty-rows", "attend-none")
    assert code == 0 and json.loads(out)["flow_free"]
    code, _, err = run(capsys, "flow", lonely, "--from", "2", "--to", "0", "--empty-rows", "error")
    assert code == 2 and "empty row" in err


def test_counterexample_flag_both_methods_agree(capsys):
    design = f"{XLNET_DESIGN}:make_task"
    code, out, err = run(capsys, "counterexample", design, "--n", "3", "--method", "both", "--json")
    found = json.loads(out)
    assert code == 1 and found["tokens"] == 1 and found["agree"], err
    assert found["empty_rows"] == {"rows": [1], "policy": "attend-all", "kernels": list(er.KERNELS["attend-all"])}
    code, out, err = run(capsys, "counterexample", design, "--n", "3", "--method", "both", "--json",
                         "--empty-rows", "attend-none")
    assert code == 0 and json.loads(out)["tokens"] is None, err
    code, _, err = run(capsys, "counterexample", design, "--n", "3", "--empty-rows", "error")
    assert code == 2 and "empty row" in err and "--empty-rows" in err


def test_assert_no_leak_reads_empty_rows():
    mask = xlnet_library_mask((0, 1))  # g0 (position 2) attends nothing
    sources = [0, 1, None, None]
    labels = [None, None, 0, 1]
    with pytest.raises(AssertionError, match="position 2 \\(target 0\\)[^\n]*\n  empty rows"):
        assert_no_leak(mask, labels, sources)
    assert_no_leak(mask, labels, sources, empty_rows="attend-none")
    with pytest.raises(ValueError, match="empty row"):
        assert_no_leak(mask, labels, sources, empty_rows="error")


# --------------------------------------------------------------- planted bugs


def test_planted_ignore_the_policy_is_caught(monkeypatch, capsys):
    """Plant: the leak search reads the mask as given whatever the policy. The XLNet check must fail."""
    def ignore(mask, policy, source=None):
        mask = np.asarray(mask, dtype=bool)
        return mask, er.EmptyRows(er.empty_rows(mask), policy)

    monkeypatch.setattr(leak_module, "apply_empty_row_policy", ignore)
    with pytest.raises(AssertionError):
        check_xlnet(capsys)
    with pytest.raises(AssertionError):
        test_flows_match_reference_under_each_policy(0)


def test_planted_default_attend_none_is_caught(monkeypatch, capsys):
    """Plant: the leak command's default becomes attend-none. The default-is-conservative check must fail."""
    from hasse import cli

    real = cli.build_parser

    def parser():
        p = real()
        sub = next(a for a in p._actions if a.dest == "command")
        sub.choices["leak"].set_defaults(empty_rows="attend-none")
        return p

    monkeypatch.setattr(cli, "build_parser", parser)
    with pytest.raises(AssertionError):
        check_xlnet(capsys)


# --------------------------------------------------------------- real kernels (gpu_check)


def direct_behaviour(backend: str, device: str) -> str:
    """What the kernel itself gives for a fully masked row, measured here with plain torch calls."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    dtype = torch.float64 if device == "cpu" else torch.float32
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 1, 3, 4, generator=gen, dtype=torch.float64).to(device, dtype) for _ in range(3))
    m = torch.tensor([[1, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=torch.bool, device=device)
    if backend == "manual":
        s = (q @ k.transpose(-1, -2)) / 2
        o = torch.where(m, s, float("-inf")).softmax(-1) @ v
    elif backend == "sdpa":
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    elif backend in ("additive", "sdpa_float"):
        bias = torch.zeros(3, 3, dtype=dtype, device=device).masked_fill(~m, torch.finfo(dtype).min)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    else:  # flex
        import warnings

        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        block = create_block_mask(lambda b, h, qi, ki: m[qi, ki], None, None, 3, 3, device=device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            o = flex_attention(q, k, v, block_mask=block)
    row = o[0, 0, 1]
    if torch.isnan(row).any():
        return "nan"
    if (row == 0).all():
        return "zeros"
    return "attend-all" if torch.allclose(row, v[0, 0].mean(0), rtol=1e-4, atol=1e-5) else "other"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("backend", ["manual", "sdpa", "flex", "additive", "sdpa_float"])
def test_probe_matches_the_kernel_measured_directly(backend, device):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from hasse.gpu_check.empty_rows import probe_empty_rows

    mask = np.array([[1, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=bool)
    probe = probe_empty_rows(mask, backend, device)
    assert probe.rows == (1,) and probe.behaviour == direct_behaviour(backend, device)
    # what the design expects of the additive masks and FlexAttention holds on every torch version
    if backend in ("additive", "sdpa_float"):
        assert probe.behaviour == "attend-all" and probe.policy == "attend-all"
    if backend == "flex":
        assert probe.behaviour == "zeros" and probe.policy == "attend-none"
    if backend == "manual":
        assert probe.behaviour == "nan"


def gpu_pattern(backend: str, device: str = "cpu"):
    from hasse.gpu_check.check import run_check
    from hasse.gpu_check.config import StackConfig

    mask = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0], [0, 1, 0, 1]], dtype=bool)
    return mask, run_check(mask, 1, backend, device, seeds=2, config=StackConfig(width=8, heads=2))


@pytest.mark.parametrize("backend", ["additive", "sdpa_float", "flex", "sdpa"])
def test_real_layer_pattern_is_the_policy_pattern(backend):
    pytest.importorskip("torch")
    mask, result = gpu_pattern(backend)
    policy = result.empty_rows.policy
    expected = read_as(mask, policy) | np.eye(4, dtype=bool)  # R(1) of the mask read that way
    assert np.array_equal(result.report.observed, expected) and result.passed
    if policy == "attend-all":  # nonzero gradient from every key into the empty row, in every seed
        assert (result.report.norms[:, 1, :] != 0).all()


def test_nan_kernel_fails_the_check():
    pytest.importorskip("torch")
    _, result = gpu_pattern("manual")
    assert result.empty_rows.behaviour == "nan" and not result.passed


def test_gpu_check_xlnet_library_leaks_only_with_additive_masks(capsys):
    pytest.importorskip("torch")
    code, out, err = run(capsys, "gpu-check", XLNET_LIBRARY, "--backend", "additive", "--device", "cpu", "--json")
    report = json.loads(out)
    assert code == 1 and report["empty_rows"]["behaviour"] == "attend-all", err
    nonzero = {(g["position"], s["source"]) for g in report["leak_gradients"] for s in g["gradients"]
               if s["dependent"]}
    assert nonzero == {(4, 1)}  # g1 moves with c1, the content of its own target
    code, out, err = run(capsys, "gpu-check", XLNET_LIBRARY, "--backend", "flex", "--device", "cpu", "--json")
    report = json.loads(out)
    assert code == 0 and report["empty_rows"]["behaviour"] == "zeros" and report["passed"], err


def test_planted_probe_that_always_says_zeros_is_caught(monkeypatch):
    """Plant: gpu-check assumes zeros whatever the kernel does. The additive check must fail."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from hasse.gpu_check import check as check_module

    real = check_module.probe_empty_rows
    monkeypatch.setattr(check_module, "probe_empty_rows",
                        lambda *a, **k: replace(real(*a, **k), behaviour="zeros"))
    with pytest.raises(AssertionError):
        test_real_layer_pattern_is_the_policy_pattern("additive")

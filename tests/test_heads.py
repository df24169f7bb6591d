"""Heads and batches (design.md §2, issue 10 point 7).

A mask_mod that reads ``h`` or ``b`` is evaluated over the declared ranges; a
layer's mask is the union over its heads (each head's empty rows read by the
policy first); batch rows are checked one by one; a mask_mod that depends on an
undeclared range is refused. The reference is brute force: the mask_mod called
once per ``(b, h, q, kv)`` with Python ints, unions and closures written out here.
The last tests plant "evaluate only h = 0" and "no dependence check" and watch the
checks fire.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from hasse.cli import main
from hasse.testing import assert_no_leak
from hasse.theory import heads as heads_module
from hasse.theory.inputs import mask_mod as mask_mod_module
from hasse.theory.errors import InputError
from hasse.theory.heads import layer_mask, mask_mod_grid
from hasse.theory.inputs.mask_mod import RangeNeeded, mask_mod_to_mask

ISSUE_MOD = "def m(b, h, q, kv):\n    return (q >= kv) | (h == 1)\n"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def brute(fn, n: int, b: int, h: int) -> np.ndarray:
    """``fn`` called once per (q, kv) with Python ints."""
    return np.array([[bool(fn(b, h, q, k)) for k in range(n)] for q in range(n)])


def brute_layer(fn, n: int, b: int, heads: int, policy: str) -> np.ndarray:
    """Union over heads, each head's empty rows made all true under attend-all."""
    union = np.zeros((n, n), dtype=bool)
    for h in range(heads):
        m = brute(fn, n, b, h)
        if policy == "attend-all":
            for q in range(n):
                if not m[q].any():
                    m[q] = True
        union |= m
    return union


def closure(mask) -> np.ndarray:
    r = np.array(mask, dtype=bool) | np.eye(len(mask), dtype=bool)
    for k in range(len(r)):
        r = r | (r[:, [k]] & r[[k], :])
    return r


@pytest.fixture
def issue_mod(tmp_path):
    path = tmp_path / "per_head.py"
    path.write_text(ISSUE_MOD)
    return f"{path}:m"


def issue_fn(b, h, q, kv):
    return (q >= kv) | (h == 1)


# --------------------------------------------------------------- the issue's example


def check_issue_example(capsys, source: str) -> None:
    """Head 1 is bidirectional, so the 2-head layer is too; without --heads the mask_mod is refused."""
    n = 5
    code, out, err = run(capsys, "analyze", source, "--n", n, "--heads", 2, "--json")
    assert code == 0, err
    a = json.loads(out)
    reference = brute_layer(issue_fn, n, 0, 2, "attend-none")
    assert reference.all()  # head 1 attends every key
    assert a["classes"] == [list(range(n))]  # one class: every position sees every other
    assert [s["shape"].split(" ")[0] for s in a["head_masks"]] == ["causal", "bidirectional"]
    assert [s["pairs"] for s in a["head_masks"]] == [int(brute(issue_fn, n, 0, h).sum()) for h in range(2)]
    code, out, err = run(capsys, "analyze", source, "--n", n)
    assert code == 2 and out == "" and "mask_mod depends on h; give --heads H" in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(AssertionError, match="depends on position 1"):
        assert_no_leak(issue_fn, labels=[1, 2, 3, 4, None], n=n, heads=2)
    with pytest.raises(ValueError, match="depends on h; give heads=H"):
        assert_no_leak(issue_fn, labels=[1, 2, 3, 4, None], n=n)
    assert_no_leak(issue_fn, labels=[1, 2, 3, 4, None], n=n, heads=1)  # head 0 alone is causal: clean


def test_issue_example_is_bidirectional_on_head_1(capsys, issue_mod):
    check_issue_example(capsys, issue_mod)
    code, out, _ = run(capsys, "analyze", issue_mod, "--n", 4, "--heads", 2)
    assert "head 1: bidirectional" in out and "head 0: causal" in out


def test_heads_on_a_spec_or_file_is_refused(capsys):
    code, _, err = run(capsys, "analyze", "causal:n=4", "--heads", 2)
    assert code == 2 and "apply to a file.py:mask_mod" in err
    code, _, err = run(capsys, "analyze", "causal:n=4", "--heads", 0)
    assert code == 2 and "--heads must be a positive integer" in err


# --------------------------------------------------------------- against brute force


@pytest.mark.parametrize("seed", range(25))
def test_random_per_head_tables_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, heads, batch = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
    table = rng.random((batch, heads, n, n)) < 0.3
    table[rng.integers(batch), rng.integers(heads), rng.integers(n)] = False  # an empty row in some head

    def fn(b, h, q, kv):
        return table[b, h, q, kv]

    grid = mask_mod_grid(fn, n, heads, batch)
    for b in range(batch):
        for h in range(heads):
            assert np.array_equal(grid.masks[b, h], brute(fn, n, b, h))
        for policy in ("attend-all", "attend-none"):
            layer, found = grid.layer(b, policy)
            assert np.array_equal(layer, brute_layer(fn, n, b, heads, policy)), (seed, b, policy)
            assert set(found.rows) == {q for h in range(heads) for q in range(n) if not table[b, h, q].any()}


def test_empty_row_in_one_head_is_read_per_head():
    """Head 0: query 0 attends itself; head 1: query 0 attends nothing. Under attend-all head 1's row 0
    attends every key, so the layer's row 0 does, although the union of the raw masks would not."""
    def fn(b, h, q, kv):
        return (q == kv) & (h == 0) | ((h == 1) & (q > 0) & (kv <= q))

    n = 3
    grid = mask_mod_grid(fn, n, heads=2)
    assert brute(fn, n, 0, 1)[0].sum() == 0
    assert grid.layer(0, "attend-all")[0][0].all()
    assert grid.layer(0, "attend-none")[0][0].tolist() == [True, False, False]
    with pytest.raises(InputError, match="1 empty row"):
        grid.layer(0, "error")
    assert np.array_equal(layer_mask(list(grid.masks[0]), "attend-all")[0], brute_layer(fn, n, 0, 2, "attend-all"))


def test_batch_rows_are_checked_one_by_one(capsys, tmp_path):
    path = tmp_path / "per_batch.py"
    path.write_text("def m(b, h, q, kv):\n    return (kv <= q) | (b == 1)\n")
    source = f"{path}:m"
    code, _, err = run(capsys, "flow", source, "--n", 4, "--from", "3", "--to", "0")
    assert code == 2 and "mask_mod depends on b; give --batch B" in err
    code, out, err = run(capsys, "flow", source, "--n", 4, "--batch", 2, "--from", "3", "--to", "0", "--json")
    report = json.loads(out)
    expected = [bool(closure(brute(lambda b, h, q, kv: (kv <= q) | (b == 1), 4, b, 0))[0, 3]) for b in range(2)]
    assert expected == [False, True]
    assert [not x["flow_free"] for x in report["batches"]] == expected
    assert code == 1 and not report["flow_free"]  # the verdict is the worst batch row
    code, out, _ = run(capsys, "flow", source, "--n", 4, "--batch", 2, "--from", "3", "--to", "0")
    assert "batch row 0: no position" in out and "batch row 1: 1 position(s)" in out
    code, out, _ = run(capsys, "analyze", source, "--n", 4, "--batch", 2, "--json")
    a = json.loads(out)
    assert code == 0 and [len(x["classes"]) for x in a["batches"]] == [4, 1]
    with pytest.raises(AssertionError, match="^batch row 1: 3 leaks") as failed:
        assert_no_leak(source, labels=[1, 2, 3, None], n=4, batch=2)
    assert "batch row 0" not in str(failed.value)  # row 0 is causal: clean


def test_dependence_on_larger_head_index_is_detected():
    def later(b, h, q, kv):
        return (q >= kv) | (h == 3)

    with pytest.raises(RangeNeeded, match="h = 0 and h = 3"):
        mask_mod_to_mask(later, 4)


def test_torch_mask_mod_reading_h(tmp_path, capsys):
    pytest.importorskip("torch")
    path = tmp_path / "torch_head.py"
    path.write_text("import torch\n\ndef m(b, h, q, kv):\n    return torch.where(h == 1, q >= 0, q >= kv)\n")
    code, out, err = run(capsys, "analyze", f"{path}:m", "--n", 4, "--heads", 2, "--json")
    assert code == 0, err
    assert json.loads(out)["classes"] == [[0, 1, 2, 3]]
    code, _, err = run(capsys, "analyze", f"{path}:m", "--n", 4)
    assert code == 2 and "give --heads H" in err


# --------------------------------------------------------------- planted bugs


def test_planted_only_head_zero_is_caught(monkeypatch, capsys, issue_mod):
    """Plant: every head is evaluated at h = 0. The issue-example check must fail."""
    real = heads_module.evaluate_mask_mod

    def head_zero(fn, n, *, source="mask_mod", fallback=None, b=0, h=0):
        return real(fn, n, source=source, fallback=fallback, b=b, h=0)

    monkeypatch.setattr(heads_module, "evaluate_mask_mod", head_zero)
    with pytest.raises(AssertionError):
        check_issue_example(capsys, issue_mod)
    with pytest.raises(AssertionError):
        test_random_per_head_tables_match_brute_force(1)


def test_planted_no_dependence_check_is_caught(monkeypatch, capsys, issue_mod):
    """Plant: the probes are dropped, so h = 0 is chosen silently. The refusal check must fail."""
    monkeypatch.setattr(mask_mod_module, "PROBES", ())
    with pytest.raises(AssertionError):
        check_issue_example(capsys, issue_mod)


def test_planted_union_of_raw_masks_is_caught(monkeypatch):
    """Plant: the policy is applied to the union instead of each head. The per-head test must fail."""
    from hasse.theory.empty_rows import apply_empty_row_policy

    def union_first(head_masks, policy="attend-none", source=None):
        union = np.any(np.asarray(head_masks, dtype=bool), axis=0)
        return apply_empty_row_policy(union, policy, source)

    monkeypatch.setattr(heads_module, "layer_mask", union_first)
    with pytest.raises(AssertionError):
        test_empty_row_in_one_head_is_read_per_head()


# --- issue 20, item 7: gpu-check checks every batch row (it checked batch row 0 only) -----------------------------


def test_gpu_check_runs_every_batch_row(capsys, tmp_path):
    """Batch row 1 of a (2, 1, 4, 4) additive mask has an empty row: the manual backend's softmax over no key
    gives NaN there, so that row fails. Reference: each batch row checked alone as a 2-D mask."""
    pytest.importorskip("torch")
    causal = np.tril(np.ones((4, 4), dtype=bool))
    lonely = causal.copy()
    lonely[2] = False
    batch = np.stack([np.where(m, 0.0, -np.inf) for m in (causal, lonely)]).astype(np.float32)[:, None]
    np.save(tmp_path / "batch.npy", batch)
    alone = []
    for b in range(2):
        np.save(tmp_path / f"row{b}.npy", batch[b, 0])
        code, out, err = run(capsys, "gpu-check", str(tmp_path / f"row{b}.npy"), "--backend", "manual", "--json")
        alone.append((code, json.loads(out)))
    assert [c for c, _ in alone] == [0, 1]  # the reference itself: row 1 fails, row 0 passes
    code, out, err = run(capsys, "gpu-check", str(tmp_path / "batch.npy"), "--backend", "manual", "--json")
    data = json.loads(out)
    assert code == 1 and data["batch_row"] == 1, err
    assert [r["passed"] for r in data["batch_rows"]] == [a["passed"] for _, a in alone]
    assert [(r["unexpected"], r["missing"]) for r in data["batch_rows"]] == [
        (len(a["unexpected"]), len(a["missing"])) for _, a in alone]
    assert data["unexpected"] == alone[1][1]["unexpected"]
    code, out, _ = run(capsys, "gpu-check", str(tmp_path / "batch.npy"), "--backend", "manual")
    assert code == 1 and out.startswith("2 batch rows: 0: PASS, 1: FAIL; batch row 1 in full:"), out


def test_gpu_check_batch_evaluates_a_mask_mod_per_batch_row(capsys, tmp_path):
    """--batch B: a mask_mod reading b is evaluated for b < B and each row checked (without it, refused)."""
    pytest.importorskip("torch")
    (tmp_path / "m.py").write_text("def m(b, h, q, kv):\n    return (q >= kv) & ((b == 0) | (q != 2))\n")
    code, _, err = run(capsys, "gpu-check", f"{tmp_path}/m.py:m", "--n", "4", "--backend", "manual")
    assert code == 2 and "--batch" in err, err
    code, out, err = run(capsys, "gpu-check", f"{tmp_path}/m.py:m", "--n", "4", "--batch", "2", "--backend",
                         "manual", "--json")
    data = json.loads(out)
    assert code == 1 and [r["passed"] for r in data["batch_rows"]] == [True, False], err

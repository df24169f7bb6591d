"""Obligations are failures, statements name their bounds, the smallest n is the smallest (issue 21 items 2, 5).

A division by a value that can be 0 is where torch raises: the claim about such a program
is refuted at the n where REAL torch raises (computed here by running the program with
torch at n = 1, 2, …, the independent reference), or unknown, never proved. An invariant
that cannot run proves nothing. The headline n of an every-depth refutation found by a
walk is the smallest over every walk length (brute force with networkx over n), or it says
"an n; smaller may exist".
"""

from __future__ import annotations

import json
import textwrap

import networkx as nx
import numpy as np
import pytest

from tests.cli_run import run

torch = pytest.importorskip("torch")

PROGRAMS = '''\
import torch


def q_over_kv(b, h, q_idx, kv_idx):
    return (q_idx // kv_idx) >= 0


def zero_in_a_branch(b, h, q_idx, kv_idx):
    # where evaluates both branches: the divisor is 0 on the diagonal, where the condition picks the other one
    return torch.where(q_idx >= kv_idx, q_idx >= kv_idx, (1 // (q_idx - kv_idx)) == 0)


def constant_zero_in_a_branch(b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, q_idx >= kv_idx, (1 // (q_idx - q_idx)) == 0)


def minus_three(b, h, q_idx, kv_idx):
    return (q_idx // (kv_idx - 3)) <= q_idx


def leaks_where_it_divides_by_zero(b, h, q_idx, kv_idx):
    # causal; 1 // (q - 20) is never 7 where it runs, so only q = 20 (the divisor 0) could see q + 1:
    # a hypothesis "the divisor is not 0" drops exactly that pair, and Z3's 1 / 0 may be 7
    return (kv_idx <= q_idx) | ((kv_idx == q_idx + 1) & ((1 // (q_idx - 20)) == 7))


def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


def bogus_invariant(b, h, q_idx, kv_idx):
    return (q_idx // (kv_idx - q_idx)) == 5


def constant_bogus_invariant(b, h, q_idx, kv_idx):
    return ((q_idx - q_idx) // (q_idx - q_idx)) == 5


def seven_hops(b, h, q_idx, kv_idx):
    # q sees q + 2 and q - 11: a leak of q + 1 into q takes a 7-hop walk; q >= 45 also sees q + 1 (one hop)
    return (kv_idx == q_idx + 2) | (kv_idx == q_idx - 11) | ((kv_idx == q_idx + 1) & (q_idx >= 45))
'''


@pytest.fixture
def programs(tmp_path):
    path = tmp_path / "programs.py"
    path.write_text(PROGRAMS)
    namespace: dict = {}
    exec(compile(PROGRAMS, str(path), "exec"), namespace)  # the same programs, run with real torch
    return path, namespace


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    return code, json.loads(out), err


def torch_fails_from(fn, limit: int = 64):
    """The first n at which torch raises evaluating ``fn`` on the n x n index grid (as create_mask does); None."""
    for n in range(1, limit):
        q, k = torch.arange(n)[:, None], torch.arange(n)[None, :]
        try:
            fn(torch.tensor(0), torch.tensor(0), q, k)
        except (RuntimeError, ZeroDivisionError):
            return n
    return None


def torch_raises_at(fn, q: int, k: int) -> bool:
    try:
        fn(torch.tensor(0), torch.tensor(0), torch.tensor(q), torch.tensor(k))
    except (RuntimeError, ZeroDivisionError):
        return True
    return False


def torch_grid(fn, n: int) -> np.ndarray:
    q, k = torch.arange(n)[:, None], torch.arange(n)[None, :]
    return np.broadcast_to(fn(torch.tensor(0), torch.tensor(0), q, k).numpy(), (n, n)).astype(bool)


def reach(allowed: np.ndarray, hops: int | None) -> np.ndarray:
    """Pairs (q, k) with a walk of at most ``hops`` hops (None: any) from k to q through M or I."""
    a = allowed | np.eye(len(allowed), dtype=bool)
    out = a.copy()
    for _ in range(len(a) if hops is None else hops - 1):
        out = out | ((out.astype(int) @ a.astype(int)) > 0)
    return out


CLAIMS = {  # the claim at one n, by brute force on torch's grid
    "dense": lambda m: bool(((reach(m, 2) & ~reach(m, 1)) == 0).all()),
    "equiv causal": lambda m: bool((m == np.tril(np.ones_like(m))).all()),
    "leak-free": lambda m: not any(reach(m, None)[p, p + 1] for p in range(len(m) - 1)),
    "leak-free 2": lambda m: not any(reach(m, 2)[p, p + 1] for p in range(len(m) - 1)),
}


def first_bad_n(fn, claim: str, limit: int = 64):
    """The first n where torch raises or the claim fails on torch's grid (the independent reference)."""
    for n in range(1, limit):
        try:
            grid = torch_grid(fn, n)
        except (RuntimeError, ZeroDivisionError):
            return n
        if not CLAIMS[claim](grid):
            return n
    return None


def check_failure(data, fn, claim: str):
    """Refuted at the first n where torch raises or the claim fails (or unknown), never proved."""
    assert data["verdict"] in ("refuted", "unknown"), data
    if data["verdict"] == "unknown":
        return
    cx = data["counterexample"]
    assert cx["n"] == first_bad_n(fn, claim), (cx, data["reason"])
    if cx["n"] == torch_fails_from(fn):  # the program fails there: the pair is where torch raises
        q, k = cx["pair"]
        assert torch_raises_at(fn, q, k) and 0 <= q < cx["n"] and 0 <= k < cx["n"], cx
        assert "the program fails" in data["reason"] and cx["failure"] and cx["program"]


# ---------------------------------------------------------------- obligations are failures


@pytest.mark.parametrize("name", ["q_over_kv", "zero_in_a_branch", "minus_three"])
def test_a_divisor_that_can_be_zero_refutes_density_where_torch_raises(capsys, programs, name):
    path, ns = programs
    code, data, err = run_json(capsys, "prove-mask", f"{path}:{name}", "--claim", "dense")
    assert code in (1, 3), (code, data, err)
    check_failure(data, ns[name], "dense")


def test_a_divisor_zero_at_every_n_cannot_run(capsys, programs):
    path, ns = programs
    assert torch_fails_from(ns["constant_zero_in_a_branch"]) == 1
    code, out, err = run(capsys, "prove-mask", f"{path}:constant_zero_in_a_branch", "--claim", "dense")
    assert code in (1, 2, 3) and "PROVED" not in out, (code, out, err)
    if code == 2:
        assert err.count("\n") == 1 and "programs.py:" in err and "Traceback" not in err, err


@pytest.mark.parametrize("name", ["q_over_kv", "minus_three"])
def test_a_divisor_that_can_be_zero_refutes_equivalence(capsys, programs, name):
    path, ns = programs
    code, data, err = run_json(capsys, "equiv", f"{path}:causal", f"{path}:{name}")
    assert code in (1, 3), (code, data, err)
    check_failure(data, ns[name], "equiv causal")


@pytest.mark.parametrize("extra", [[], ["--layers", "2"]])
def test_a_leak_hidden_where_the_divisor_is_zero_is_refuted(capsys, programs, extra):
    path, ns = programs
    fn = ns["leaks_where_it_divides_by_zero"]
    assert torch_fails_from(fn) == 21  # the reference: torch raises once q = 20 exists
    code, data, err = run_json(capsys, "prove-mask", f"{path}:leaks_where_it_divides_by_zero", "--claim",
                               "leak-free", "--task", "causal_lm", *extra)
    assert code in (1, 3), (code, data, err)
    assert first_bad_n(fn, "leak-free 2" if extra else "leak-free") == 21  # no leak where the program runs
    check_failure(data, fn, "leak-free 2" if extra else "leak-free")


def test_an_invariant_that_cannot_run_proves_nothing(capsys, programs):
    path, ns = programs
    assert torch_fails_from(ns["bogus_invariant"]) == 1
    code, data, err = run_json(capsys, "prove-mask", "sliding_window:w=3", "--claim", "leak-free", "--task",
                               "causal_lm", "--invariant", f"{path}:bogus_invariant")
    assert code == 3 and data["verdict"] == "unknown", data  # the window is leak-free: no walk refutes it either
    assert "invariant" in data["reason"] and "fails" in data["reason"] and "proves nothing" in data["reason"]
    code, out, err = run(capsys, "prove-mask", "sliding_window:w=3", "--claim", "leak-free", "--task", "causal_lm",
                         "--invariant", f"{path}:constant_bogus_invariant")
    assert code in (2, 3) and "PROVED" not in out, (code, out, err)  # a divisor 0 everywhere: cannot run


def test_a_bogus_invariant_does_not_hide_a_real_leak(capsys, programs):
    path, ns = programs
    truth = _true_smallest_leak(ns["seven_hops"])
    code, data, err = run_json(capsys, "prove-mask", f"{path}:seven_hops", "--claim", "leak-free", "--task",
                               "causal_lm", "--invariant", f"{path}:bogus_invariant")
    assert code == 1 and data["verdict"] == "refuted" and data["counterexample"]["n"] == truth, data


def test_the_api_claims_check_obligations_first():
    from hasse.solvers.symbolic.claims import check_obligations, prove_dense
    from hasse.solvers.symbolic.mask import from_mask_mod

    m = from_mask_mod("q_over_kv_minus_5", lambda b, h, q, k: (q // (k - 5)) >= 0)
    v = prove_dense(m)
    assert v.verdict == "refuted" and v.counterexample["n"] == 6 and v.counterexample["pair"] == [0, 5], v
    assert check_obligations(m, list(m.conditions) + [m.n <= 5]) is None  # below n = 6 the program runs
    assert m.obligations and m.facts([(0, 5)]) == []  # no index tensor: no fact, and never the obligation


def test_a_check_on_a_position_is_refused_not_a_side_condition(capsys, tmp_path):
    path = tmp_path / "checks.py"
    path.write_text(textwrap.dedent('''\
        from hasse.theory.params import require_positive


        def checked(b, h, q_idx, kv_idx):
            require_positive("q", q_idx)
            return kv_idx <= q_idx
        '''))
    code, out, err = run(capsys, "prove-mask", f"{path}:checked", "--claim", "dense")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (code, out, err)


# ---------------------------------------------------------------- the statement names the bound


def test_statements_name_the_bound_on_n_and_the_parameters(capsys, programs):
    path, _ns = programs
    code, data, err = run_json(capsys, "prove-mask", f"{path}:causal", "--claim", "dense")
    assert code == 0 and data["statement"].startswith("for all 1 <= n <= 2^31:"), data
    code, data, err = run_json(capsys, "prove-mask", "sliding_window", "--claim", "dense")
    assert data["statement"].startswith("for all 1 <= n <= 2^31 and all 1 <= w <= 2^31:"), data
    code, data, err = run_json(capsys, "prove-mask", f"{path}:causal", "--claim", "dense", "--param-range", "n=1..36")
    assert code == 0 and data["statement"].startswith("for all 1 <= n <= 36:"), data


def test_a_mask_that_reads_b_names_b_in_the_statement(capsys, tmp_path):
    path = tmp_path / "batch.py"
    path.write_text("def by_row(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) | (b == 1)\n")
    code, data, err = run_json(capsys, "prove-mask", f"{path}:by_row", "--claim", "dense", "--batch", "2")
    assert "0 <= b < 2" in data["statement"] or "0 <= b <= 1" in data["statement"], (data, err)


# ---------------------------------------------------------------- the smallest n over every walk length


def _true_smallest_leak(fn, limit: int = 60):
    """Brute force: the first n where some position p sees token p + 1 through any walk (M or I, networkx)."""
    for n in range(1, limit):
        q, k = np.indices((n, n))
        allowed = np.asarray(fn(0, 0, q, k), dtype=bool) | np.eye(n, dtype=bool)
        graph = nx.DiGraph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((int(b), int(a)) for a, b in zip(*allowed.nonzero()))  # information flows k -> q
        if any(nx.has_path(graph, p + 1, p) for p in range(n - 1)):
            return n
    return None


@pytest.mark.parametrize("concrete", [True, False])
def test_an_every_depth_leak_is_reported_at_its_true_smallest_n(capsys, programs, monkeypatch, concrete):
    from hasse.solvers.symbolic.claims import search

    path, ns = programs
    truth = _true_smallest_leak(ns["seven_hops"])
    assert truth is not None and truth < 45  # longer than --search-layers' 4 hops, and far below the 1-hop leak
    if not concrete:
        monkeypatch.setattr(search, "CONCRETE_SEARCH_ENTRIES", 0)  # the symbolic search alone
    code, data, err = run_json(capsys, "prove-mask", f"{path}:seven_hops", "--claim", "leak-free", "--task",
                               "causal_lm")
    assert code == 1 and data["verdict"] == "refuted", data
    cx = data["counterexample"]
    assert cx["n"] == truth and cx.get("smallest") is not False, (cx, data["reason"])
    assert cx["depth"] > 4 and data["recheck"].startswith("confirmed"), data
    path_ = cx["path"]
    q, k = np.indices((truth, truth))
    allowed = np.asarray(ns["seven_hops"](0, 0, q, k), dtype=bool) | np.eye(truth, dtype=bool)
    assert all(allowed[b, a] for a, b in zip(path_, path_[1:])) and path_[0] == path_[-1] + 1


def test_a_search_that_cannot_finish_says_an_n_smaller_may_exist(capsys, programs, monkeypatch):
    from hasse.solvers.symbolic.claims import search

    path, ns = programs
    monkeypatch.setattr(search, "CONCRETE_SEARCH_ENTRIES", 0)
    monkeypatch.setattr(search, "MAX_WALK_LAYERS", 4)  # walks long enough for n <= 8 are not encoded
    code, data, err = run_json(capsys, "prove-mask", f"{path}:seven_hops", "--claim", "leak-free", "--task",
                               "causal_lm")
    assert code == 1 and data["verdict"] == "refuted", data
    cx = data["counterexample"]
    assert cx["smallest"] is False and "an n; smaller may exist" in data["reason"], data
    assert cx["n"] >= _true_smallest_leak(ns["seven_hops"])
    code, out, err = run(capsys, "prove-mask", f"{path}:seven_hops", "--claim", "leak-free", "--task", "causal_lm")
    assert code == 1 and "counterexample (an n; smaller may exist): n = " in out and "smallest counterexample" not in out


def test_an_obligation_at_another_head_than_0_refutes_the_union(capsys, tmp_path):
    path = tmp_path / "heads.py"
    path.write_text("def by_head(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & ((q_idx // (h - 1)) >= -5)\n")
    code, data, err = run_json(capsys, "prove-mask", f"{path}:by_head", "--claim", "dense", "--heads", "3")
    heads = torch.arange(3)
    with pytest.raises(RuntimeError):  # the reference: torch raises for the union over heads 0, 1, 2 at n = 1
        (torch.tensor(0) <= torch.tensor(0)) & ((torch.tensor(0) // (heads - 1)) >= -5)
    assert code == 1 and data["verdict"] == "refuted" and data["counterexample"]["n"] == 1, data
    assert data["counterexample"]["head"] == 1 and "head 1" in data["reason"], data


# --- a leak only along a walk longer than --search-layers (lead, issue 21 item 5) --------------------------

LONG_WALKS = '''\
def jump_6(b, h, q_idx, kv_idx):
    # 0 attends 6; 6 -> 5 -> ... -> 1 one step back each: 0 sees token 1 through 6 hops, from n = 7
    return ((kv_idx <= q_idx) & (q_idx - kv_idx < 2)) | (kv_idx == q_idx + 6)


def jump_9(b, h, q_idx, kv_idx):
    return ((kv_idx <= q_idx) & (q_idx - kv_idx < 2)) | (kv_idx == q_idx + 9)
'''


@pytest.mark.parametrize("name", ["jump_6", "jump_9"])
def test_a_leak_only_along_a_walk_longer_than_the_search_is_refuted_at_its_smallest_n(capsys, tmp_path, name):
    """The causal invariant fails and no walk of at most 4 hops (the default --search-layers) leaks: the
    concrete search by increasing n (complete at each n: every depth) finds the smallest n, which brute
    force on torch's grids confirms (before: UNKNOWN)."""
    path = tmp_path / "walks.py"
    path.write_text(LONG_WALKS)
    namespace: dict = {}
    exec(LONG_WALKS, namespace)
    code, data, err = run_json(capsys, "prove-mask", f"{path}:{name}", "--claim", "leak-free", "--task", "causal_lm")
    assert code == 1 and data["verdict"] == "refuted", data
    assert data["counterexample"]["n"] == first_bad_n(namespace[name], "leak-free"), data
    assert data["counterexample"].get("smallest", True) is not False and data["recheck"] == "confirmed", data

"""The seven mask-level theorems of design.md §5 (issue 5): both methods, deliberate bugs, shards, command line.

Every mask of size n has a zero diagonal (it plays no role under the residual):
2^(n(n-1)) = 1, 4, 64, 4096 masks for n = 1 … 4, 1,048,576 at n = 5 (a few seconds
vectorised), 2^30 at n = 6 (benchmarks/bench_proofs.py only). Z3 at n = 8 behind
the slow marker. The no-residual control enumerates 2^(n²) masks
with their diagonal and stops at its first witness.

Deliberate bugs: the engine's batched code (theory.batch) is monkeypatched — a
closure one squaring short, a covering relation that keeps transitive edges, a
sparse realisation without a cycle edge, a dependency without the residual,
classes without the transpose, an off-by-one hop distance, a period detector that
always says 1 — and the matching proof must report ``refuted`` with a mask that,
re-checked with numpy, really breaks the claim for that code.
"""

import dataclasses
import importlib
import json

import numpy as np
import pytest

from hasse.cli import main
from hasse.proofs import registry
from hasse.proofs.certificates.combine import combine
from hasse.proofs.registry import MASK_THEOREMS
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, run_theorem
from hasse.solvers import exhaustive as ex
from hasse.theory import batch
from tests.planted import closure_one_squaring_short

METHODS = ("exhaustive", "z3")


def prove(name, n, method, timeout=None, **options):
    return run_theorem(registry.get(name), n, method, Context(timeout=timeout, **options))


def module(name):
    import importlib

    return importlib.import_module(f"hasse.proofs.{name}")


def np_closure(mask):
    n = len(mask)
    a = (np.asarray(mask, dtype=bool) | np.eye(n, dtype=bool)).astype(np.int64)
    r = np.eye(n, dtype=np.int64)
    for _ in range(n):
        r = (a @ r > 0).astype(np.int64)
    return r.astype(bool)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- every theorem, both methods


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", MASK_THEOREMS)
@pytest.mark.parametrize("n", range(1, 5))
def test_proved_for_small_n(name, method, n):
    r = prove(name, n, method)
    if n < registry.get(name).min_n:  # the oscillation statement is false for n = 1
        assert r.verdict == UNKNOWN and "n >= 2" in r.reason
        return
    assert r.verdict == PROVED, (r.reason, r.counterexample)
    assert r.checked > 0 and r.counterexample is None
    if method == "exhaustive" and name != "no_residual_can_oscillate":
        assert r.checked == 2 ** (n * (n - 1)) == r.details["total"]
    if name == "no_residual_can_oscillate":
        assert r.witness["period"] >= 2 and r.witness["confirmed"]


@pytest.mark.parametrize("name", MASK_THEOREMS)
@pytest.mark.parametrize("n", range(2, 4))
def test_naive_encodings_prove_it_too(name, n):
    outcome = module(name).THEOREM.z3_check(n, Context(), encoding="naive")
    assert outcome.verdict == PROVED, outcome.reason


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", MASK_THEOREMS)
def test_proved_at_n5(name, method):  # 1,048,576 masks each, a few seconds in all
    r = prove(name, 5, method)
    assert r.verdict == PROVED, (r.reason, r.counterexample)


@pytest.mark.slow
@pytest.mark.parametrize("name", [t for t in MASK_THEOREMS if t != "no_residual_can_oscillate"])
def test_z3_proves_n8(name):
    assert prove(name, 8 if name != "sparse_realisation_keeps_hasse" else 6, "z3").verdict == PROVED


# ---------------------------------------------------------------- deliberate bugs in the code under test


def test_closure_one_squaring_short_is_refuted(monkeypatch):
    closure_one_squaring_short(monkeypatch)
    for n in (3, 4):
        r = prove("limit_is_preorder", n, "exhaustive")
        assert r.verdict == REFUTED and r.counterexample["part"] == "not transitive"
        mask = np.array(r.counterexample["mask"], dtype=bool)
        limit = batch.unpack(batch.closure(batch.pack(mask[None])), n)[0]  # what the buggy code computes
        q, j, k = r.counterexample["triple"]
        assert limit[q, j] and limit[j, k] and not limit[q, k]
        assert not np.array_equal(limit, np_closure(mask))
    # the Z3 check does not use the engine: it still proves, and `both` says the methods disagree
    assert prove("limit_is_preorder", 4, "z3").verdict == PROVED


def test_disagreement_is_loud(monkeypatch, capsys):
    real = batch.closure
    monkeypatch.setattr(batch, "closure", lambda rows, squarings=None: real(rows, 0))
    code, _, err = run(capsys, "prove", "limit_is_preorder", "--n", "3", "--method", "both")
    assert code == 1 and "METHODS DISAGREE" in err


def test_covering_that_keeps_transitive_edges_is_refuted(monkeypatch):
    monkeypatch.setattr(batch, "covering", batch.strict_order)
    r = prove("hasse_closure_is_limit", 3, "exhaustive")
    assert r.verdict == REFUTED and r.counterexample["part"] == "a Hasse edge is implied by the others"
    mask = np.array(r.counterexample["mask"], dtype=bool)
    lower, upper = r.counterexample["edge"]
    # re-check with numpy: with every strict pair as a "Hasse edge", drop that edge and the pair is still reached
    limit = np_closure(mask)
    g = limit.copy()  # strict order or classes = the whole limit
    g[np.ix_(upper, lower)] = False
    assert np_closure(g)[upper[0], lower[0]]
    path = r.counterexample["other_path"]
    assert path[0] in lower and path[-1] in upper and len(path) >= 3


def test_sparse_realisation_without_a_cycle_edge_is_refuted(monkeypatch):
    real = batch.sparse_realisation

    def dropping(rows):
        out = real(rows)
        classes = batch.equivalence(batch.closure(rows))
        out[0] &= ~(classes[0] & ~rows.dtype.type(1))  # position 0 no longer attends its class (the cycle's closing edge)
        return out

    monkeypatch.setattr(batch, "sparse_realisation", dropping)
    r = prove("sparse_realisation_keeps_hasse", 3, "exhaustive")
    assert r.verdict == REFUTED and r.counterexample["part"] == "R*(S) != R*(M)"
    mask = np.array(r.counterexample["mask"], dtype=bool)
    sparse = np.array(r.counterexample["sparse"], dtype=bool)
    assert np.array_equal(sparse, batch.unpack(dropping(batch.pack(mask[None])), 3)[0])
    assert not np.array_equal(np_closure(sparse), np_closure(mask))


def test_dependency_without_the_residual_is_refuted(monkeypatch):
    monkeypatch.setattr(batch, "dependency", lambda rows, residual=True: rows.copy())
    r = prove("reach_monotone_in_depth", 2, "exhaustive")
    assert r.verdict == REFUTED
    mask = np.array(r.counterexample["mask"], dtype=bool).astype(np.int64)
    level, (q, k) = r.counterexample["L"], r.counterexample["pair"]
    power = np.linalg.matrix_power(mask, level) > 0
    assert power[q, k] and not (np.linalg.matrix_power(mask, level + 1) > 0)[q, k]


def test_classes_without_the_transpose_are_refuted(monkeypatch):
    monkeypatch.setattr(batch, "equivalence", lambda limit: limit)
    r = prove("quotient_is_partial_order", 2, "exhaustive")
    assert r.verdict == REFUTED and r.counterexample["parts"]
    mask = np.array(r.counterexample["mask"], dtype=bool)
    limit = np_closure(mask)
    # the buggy "classes" put together positions whose rows of R* differ: the order is not well defined on them
    assert any(len({limit[p].tobytes() for p in c}) > 1 or len({limit[:, p].tobytes() for p in c}) > 1
               for c in r.counterexample["classes"])


def test_hop_distance_off_by_one_is_refuted(monkeypatch):
    real = batch.max_hop_distance
    monkeypatch.setattr(batch, "max_hop_distance", lambda rows: real(rows) + (real(rows) >= 2))
    r = prove("reach_stable_by_n_minus_1", 3, "exhaustive")
    assert r.verdict == REFUTED and r.counterexample["part"] == "L* != largest hop distance"
    mask = np.array(r.counterexample["mask"], dtype=bool)
    ps = [np.eye(3, dtype=bool)]
    for _ in range(4):
        ps.append(((mask | np.eye(3, dtype=bool)).astype(int) @ ps[-1].astype(int)) > 0)
    depth = next(L for L in range(4) if np.array_equal(ps[L], ps[L + 1]))
    assert r.counterexample["L*"] == depth != r.counterexample["largest_hop_distance"]


def test_period_detector_that_always_settles_refutes_the_existence(monkeypatch):
    monkeypatch.setattr(batch, "power_cycle", lambda rows: (np.zeros(rows.shape[1], int), np.ones(rows.shape[1], int)))
    r = prove("no_residual_can_oscillate", 2, "exhaustive")
    assert r.verdict == REFUTED and r.checked == 16 and "no mask" in r.counterexample["none"]


# ---------------------------------------------------------------- timeouts, progress, workers, shards


@pytest.mark.parametrize("method", METHODS)
def test_a_timeout_is_unknown_never_proved(method):
    r = prove("reach_stable_by_n_minus_1", 5, method, timeout=1e-6)
    assert r.verdict == UNKNOWN and "timeout" in r.reason
    assert r.checked < 2**20


def test_progress_is_reported_up_to_the_total():
    seen = []
    r = prove("limit_is_preorder", 4, "exhaustive", progress=lambda done, total: seen.append((done, total)))
    assert r.verdict == PROVED and seen and seen[-1] == (4096, 4096)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_workers_share_the_masks_and_find_the_same_counterexample(monkeypatch):
    monkeypatch.setattr(ex, "default_batch", lambda n: 256)  # 16 batches, so both workers have some
    r = prove("reach_stable_by_n_minus_1", 4, "exhaustive", workers=2)
    assert r.verdict == PROVED and r.checked == 4096 and r.details["workers"] == 2
    real = batch.closure
    monkeypatch.setattr(batch, "closure", lambda rows, squarings=None: real(rows, 0))
    one = prove("limit_is_preorder", 4, "exhaustive")
    two = prove("limit_is_preorder", 4, "exhaustive", workers=2)
    assert one.verdict == two.verdict == REFUTED
    assert one.counterexample["index"] == two.counterexample["index"]


def test_shards_add_up_and_combine_into_one_result():
    parts = [prove("reach_stable_by_n_minus_1", 4, "exhaustive", shard=(i, 3)) for i in range(3)]
    assert all(p.verdict == UNKNOWN and "partial" in p.reason for p in parts)
    assert sum(p.checked for p in parts) == 4096
    assert [p.details["range"] for p in parts] == [[0, 1365], [1365, 2730], [2730, 4096]]
    whole = combine([p.to_json() for p in parts])
    assert whole["verdict"] == PROVED and whole["checked"] == 4096 and whole["details"]["complete"]
    with pytest.raises(ValueError, match="masks 1,365 to 2,729 missing"):  # a gap is refused (issue 10)
        combine([parts[0].to_json(), parts[2].to_json()])
    with pytest.raises(ValueError, match="overlap"):
        combine([p.to_json() for p in parts] + [parts[1].to_json()])


def test_an_existence_witness_in_one_shard_proves_the_combination():
    parts = [prove("no_residual_can_oscillate", 2, "exhaustive", shard=(i, 4)) for i in range(4)]
    assert [p.verdict for p in parts] == [UNKNOWN, PROVED, UNKNOWN, UNKNOWN]  # the swap is mask 6 of 16
    whole = combine([p.to_json() for p in parts])
    assert whole["verdict"] == PROVED and whole["witness"]["mask"] == [[0, 1], [1, 0]]


def test_combine_from_the_command_line(capsys, tmp_path, monkeypatch):
    name = "limit_is_preorder"
    for i in range(2):
        code, _, _ = run(capsys, "prove", name, "--n", "4", "--method", "exhaustive", "--shard", f"{i}/2",
                         "--certificate", str(tmp_path / f"part{i}.json"))
        assert code == 3  # a shard alone is not a proof
    parts = [str(tmp_path / f"part{i}.json") for i in range(2)]
    code, out, _ = run(capsys, "prove", name, "--n", "4", "--combine", *parts, "--json",
                       "--certificate", str(tmp_path / "full.json"))
    result = json.loads(out)["results"][0]
    assert code == 0 and result["verdict"] == PROVED and result["checked"] == 4096
    assert json.loads((tmp_path / "full.json").read_text())["results"][0]["verdict"] == PROVED
    code, _, err = run(capsys, "prove", name, "--n", "4", "--combine", parts[0])
    assert code == 2 and "missing" in err  # one shard does not partition the space: refused
    code, _, err = run(capsys, "prove", name, "--n", "5", "--combine", *parts)
    assert code == 2 and "n = 4" in err
    (tmp_path / "bad.json").write_text("{")
    code, _, err = run(capsys, "prove", name, "--n", "4", "--combine", str(tmp_path / "bad.json"))
    assert code == 2 and "bad.json" in err
    # a refuted shard from a broken engine: its counterexample does not re-check, so it is refused
    real = batch.closure
    monkeypatch.setattr(batch, "closure", lambda rows, squarings=None: real(rows, 0))
    run(capsys, "prove", name, "--n", "4", "--method", "exhaustive", "--shard", "1/2",
        "--certificate", str(tmp_path / "bad1.json"))
    code, _, err = run(capsys, "prove", name, "--n", "4", "--combine", parts[0], str(tmp_path / "bad1.json"))
    assert code == 2 and "not confirmed when re-checked" in err
    # one that re-checks refutes the combination
    module = importlib.import_module(f"hasse.proofs.{name}")
    monkeypatch.setattr(module, "THEOREM", dataclasses.replace(module.THEOREM, recheck=lambda kind, n, obj: None))
    code, out, _ = run(capsys, "prove", name, "--n", "4", "--combine", parts[0], str(tmp_path / "bad1.json"),
                       "--json")
    assert code == 1 and json.loads(out)["results"][0]["verdict"] == REFUTED


# ---------------------------------------------------------------- command line and statement sheets


@pytest.mark.parametrize("name", MASK_THEOREMS)
def test_prove_json_fields_and_exit_code(capsys, name):
    code, out, _ = run(capsys, "prove", name, "--n", "3", "--json")
    data = json.loads(out)
    assert code == 0 and data["n"] == 3
    for r in data["results"]:
        assert {"theorem", "n", "method", "verdict", "checked", "seconds"} <= set(r)
        assert r["theorem"] == name and r["verdict"] == PROVED
        assert ("witness" in r) == (name == "no_residual_can_oscillate")
    assert [r["method"] for r in data["results"]] == list(METHODS)


def test_refuted_exit_code_and_counterexample(capsys, monkeypatch):
    monkeypatch.setattr(batch, "covering", batch.strict_order)
    code, out, _ = run(capsys, "prove", "hasse_closure_is_limit", "--n", "3", "--method", "exhaustive", "--json")
    r = json.loads(out)["results"][0]
    assert code == 1 and r["verdict"] == REFUTED and r["counterexample"]["mask"]


def test_tiny_timeout_exits_3_and_is_never_proved(capsys):
    code, out, _ = run(capsys, "prove", "sparse_realisation_keeps_hasse", "--n", "5", "--timeout", "0.000001",
                       "--json")
    assert code == 3 and {r["verdict"] for r in json.loads(out)["results"]} == {UNKNOWN}


def test_script_runs(capsys):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "hasse.proofs.reach_stable_by_n_minus_1", "--n", "3", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and {r["verdict"] for r in json.loads(proc.stdout)["results"]} == {PROVED}


@pytest.mark.parametrize("name", MASK_THEOREMS)
def test_statement_sheet(name):
    doc = module(name).__doc__
    assert doc.startswith(name)
    for part in ("Statement", "Notation", "Exhaustive method", "Z3 method", "naive", "better", "Largest n",
                 "References", "2606.09951", "design.md"):
        assert part in doc, (name, part)

"""hasse prove-mask and hasse equiv (issue 13): exit codes, JSON against docs/schema.json, statements,
counterexamples with their smallest n, certificates, bad input in one line.

Two kinds of tests:
- the command line's own logic (exit codes, a re-check that disagrees, the certificate, the
  flags) against a stand-in claims module, so it is tested whatever the solver says;
- end to end through solvers/symbolic (tracer, catalogue forms, claims), with the expected
  smallest n computed here by hand or by brute force on the concrete catalogue masks.
"""

from __future__ import annotations

import importlib
import json
import sys
import types

import numpy as np
import pytest

from hasse.cli import main
from hasse.solvers.symbolic.claims import Claim, SymbolicVerdict
from tests.cli_run import run, schema_problems, written

MASKS = '''\
def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


def window3(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 3)


def planted(b, h, q_idx, kv_idx):
    # causal, except that from n = 37 on the last query loses key 0 (a length-dependent bug)
    return (kv_idx <= q_idx) & ((q_idx < 36) | (kv_idx > 0))


def hard(b, h, q_idx, kv_idx):
    return (q_idx * q_idx * q_idx + kv_idx * kv_idx) % 7 == (q_idx * kv_idx * kv_idx) % 5


def xor(b, h, q_idx, kv_idx):
    return (q_idx ^ kv_idx) == 0


def floats(b, h, q_idx, kv_idx):
    return q_idx / 2 <= kv_idx


def heads(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((h == 0) | (kv_idx == q_idx))
'''


def _has(module: str) -> bool:
    try:
        importlib.import_module(f"hasse.solvers.symbolic.{module}")
    except ImportError:
        return False
    return True


needs_claims = pytest.mark.skipif(not _has("claims"), reason="solvers/symbolic/claims.py not there yet")
needs_catalog = pytest.mark.skipif(not (_has("claims") and _has("catalog")),
                                   reason="solvers/symbolic/catalog.py or claims.py not there yet")
needs_tasks = pytest.mark.skipif(not (_has("claims") and _has("catalog") and _has("tasks")),
                                 reason="solvers/symbolic/tasks.py, catalog.py or claims.py not there yet")


masks = written("masks.py", MASKS)
valid = schema_problems


# --- the command line against a stand-in claims module -----------------------------------------------------

class FakeClaims(types.ModuleType):
    """Stands in for solvers.symbolic.claims: returns the verdict it is given and records its calls."""

    def __init__(self, verdict: dict):
        super().__init__("hasse.solvers.symbolic.claims")
        self.verdict = verdict
        self.calls = []
        for name in ("prove_dense", "prove_leak_free", "prove_isolation", "check_equivalence", "prove_consistent"):
            setattr(self, name, self._claim(name))
        self.CLAIMS = {"dense": Claim("dense", False, self.prove_dense),
                       "leak-free": Claim("leak-free", True, self.prove_leak_free, walks=True),
                       "isolation": Claim("isolation", True, self.prove_isolation, walks=True),
                       "consistent": Claim("consistent", True, self.prove_consistent)}
        self.known_invariant = lambda subject, timeout=None: None

    def _claim(self, name):
        def claim(*args, timeout=None, **kwargs):
            self.calls.append((name, args, dict(kwargs, timeout=timeout)))
            return SymbolicVerdict(claim=name, **self.verdict)
        return claim


@pytest.fixture
def fake(monkeypatch):
    def install(**verdict):
        base = {"verdict": "proved", "statement": "for all n >= 1: M or I is transitive", "seconds": 0.01,
                "counterexample": None, "recheck": None, "reason": None}
        module = FakeClaims({**base, **verdict})
        package = importlib.import_module("hasse.solvers.symbolic")
        monkeypatch.setitem(sys.modules, "hasse.solvers.symbolic.claims", module)
        monkeypatch.setattr(package, "claims", module, raising=False)
        return module
    return install


@pytest.mark.parametrize("verdict, code", [("proved", 0), ("refuted", 1), ("unknown", 3)])
def test_exit_codes_follow_the_verdict(capsys, fake, masks, verdict, code):
    cx = {"n": 5, "params": {}, "positions": [4, 0], "path": [0, 2, 4]} if verdict == "refuted" else None
    claims = fake(verdict=verdict, counterexample=cx, recheck="confirmed" if cx else None,
                  reason="timeout" if verdict == "unknown" else None)
    got, out, err = run(capsys, "prove-mask", f"{masks}:causal", "--claim", "dense", "--timeout", "2")
    assert got == code, err
    assert claims.calls[0][0] == "prove_dense" and claims.calls[0][2]["timeout"] == 2.0
    assert {"proved": "PROVED", "refuted": "REFUTED", "unknown": "UNKNOWN"}[verdict] in out
    if cx:
        assert "smallest counterexample: n = 5" in out and "re-check by the concrete engine: confirmed" in out
    got, out, err = run(capsys, "prove-mask", f"{masks}:causal", "--claim", "dense", "--json")
    data = json.loads(out)
    assert got == code and data["verdict"] == verdict and valid("prove-mask", data) == []


def test_a_recheck_that_disagrees_is_loud_and_exit_1(capsys, fake, masks):
    from hasse.theory.verdicts import disagreement

    fake(verdict="refuted", counterexample={"n": 3, "params": {}}, recheck=disagreement("no leak at n = 3"))
    code, out, err = run(capsys, "prove-mask", f"{masks}:causal", "--claim", "dense")
    assert code == 1 and "DISAGREE" in err and "bug" in err
    fake(verdict="proved", recheck=disagreement("the concrete engine finds a leak at n = 4"))  # even on "proved"
    code, out, err = run(capsys, "prove-mask", f"{masks}:causal", "--claim", "dense")
    assert code == 1 and "DISAGREE" in err


def test_a_verdict_outside_the_three_words_is_a_bug_not_a_proof(capsys, fake, masks):
    fake(verdict="sat")
    with pytest.raises(RuntimeError, match="verdict 'sat'"):
        main(["prove-mask", f"{masks}:causal", "--claim", "dense"])


def test_param_range_narrows_the_statement_and_the_conditions(capsys, fake, masks):
    claims = fake()
    code, out, err = run(capsys, "prove-mask", f"{masks}:causal", "--claim", "dense", "--param-range", "n=2..40",
                         "--json")
    assert code == 0, err
    mask = claims.calls[0][1][0]
    assert "n >= 2" in [str(c) for c in mask.conditions] and "n <= 40" in [str(c) for c in mask.conditions]
    assert json.loads(out)["param_ranges"] == [{"name": "n", "lo": 2, "hi": 40}]


def test_certificate_is_json_with_claim_statement_formulas_and_versions(capsys, fake, masks, tmp_path):
    import z3

    fake(verdict="refuted", counterexample={"n": 37, "params": {}, "positions": [36, 0]}, recheck="confirmed")
    cert = tmp_path / "cert.json"
    code, out, err = run(capsys, "prove-mask", f"{masks}:planted", "--claim", "dense", "--certificate", cert)
    assert code == 1 and f"certificate written to {cert}" in out
    data = json.loads(cert.read_text())
    assert data["claim"] == "dense" and data["verdict"] == "refuted" and data["counterexample"]["n"] == 37
    assert data["statement"].startswith("for all n") and data["versions"]["z3"] == z3.get_version_string()
    formula = data["formulas"]["mask"]
    assert "q0" in formula["formula"] and len(formula["sha256"]) == 64 and data["argv"][0] == "prove-mask"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # atomic: no temporary left


@pytest.mark.parametrize("argv, needle", [
    (["prove-mask", "{m}:floats", "--claim", "dense"], "masks.py:"),  # the tracer's line: file and line number
    (["prove-mask", "{m}:causal", "--claim", "dense", "--param-range", "n=5"], "NAME=LO..HI"),
    (["prove-mask", "{m}:causal", "--claim", "dense", "--param-range", "w=1..3"], "not a symbolic parameter"),
    (["prove-mask", "{m}:causal", "--claim", "dense", "--layers", "2"], "neither --layers"),
    (["prove-mask", "{m}:causal", "--claim", "leak-free", "--layers", "0"], "--layers must be >= 1"),
    (["prove-mask", "{m}:causal", "--claim", "leak-free"], "needs a task"),
    (["prove-mask", "{m}:causal", "--claim", "dense", "--timeout", "0"], "--timeout"),
    (["prove-mask", "{m}:causal"], "--claim is required"),
    (["prove-mask", "docs/schema.json", "--claim", "dense"], "holds one size"),
    (["equiv", "{m}:causal", "{m}:floats"], "masks.py:"),
    (["equiv", "{m}:causal", "{m}:window3", "--param-range", "zz=1..2"], "not a symbolic parameter"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, fake, masks, argv, needle):
    fake()
    code, out, err = run(capsys, *[a.format(m=masks) for a in argv])
    assert code == 2 and needle in err and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_untraceable_program_names_the_operation_and_its_line(capsys, masks):
    # (q ^ kv is modelled now, as torch computes it: two's complement; floats are not)
    code, out, err = run(capsys, "prove-mask", f"{masks}:floats", "--claim", "dense")
    line = MASKS.splitlines().index("    return q_idx / 2 <= kv_idx") + 1
    assert code == 2 and err.count("\n") == 1
    assert f"masks.py:{line}:" in err and "division" in err, err


def test_help_teaches_for_all_n_and_invariants(capsys):
    with pytest.raises(SystemExit):
        main(["prove-mask", "--help"])
    text = capsys.readouterr().out
    assert "For all n" in text or "for all n" in text.lower()
    assert "An invariant is a relation" in text and "exit status" in text
    with pytest.raises(SystemExit):
        main(["equiv", "--help"])
    assert "smallest" in capsys.readouterr().out


# --- end to end through solvers/symbolic --------------------------------------------------------------------

def _concrete(spec: str) -> np.ndarray:
    from hasse.theory.catalog import build_mask

    return np.asarray(build_mask(spec).matrix, dtype=bool)


def _dense(m: np.ndarray) -> bool:
    a = m | np.eye(len(m), dtype=bool)
    two = (a.astype(int) @ a.astype(int)) > 0
    return not (two & ~a).any()


@needs_claims
def test_mask_mod_dense_proved_with_its_statement(capsys, masks):
    code, out, err = run(capsys, "prove-mask", f"{masks}:causal", "--claim", "dense", "--json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "proved" and valid("prove-mask", data) == [], err
    assert data["statement"].startswith("for all 1 <= n <= 2^31"), data["statement"]


@needs_claims
def test_planted_bug_refuted_at_exactly_n_37(capsys, masks):
    assert all(_dense(np.tril(np.ones((n, n), dtype=bool))) for n in range(1, 13))  # what a small n sees: causal
    code, out, err = run(capsys, "prove-mask", f"{masks}:planted", "--claim", "dense", "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "refuted", err
    assert data["counterexample"]["n"] == 37 and data["recheck"].startswith("confirmed"), data
    code, out, err = run(capsys, "prove-mask", f"{masks}:planted", "--claim", "dense", "--param-range", "n=1..36")
    assert code == 0 and "n <= 36" in out, out + err


@needs_claims
def test_tiny_timeout_is_unknown_exit_3(capsys, masks):
    code, out, err = run(capsys, "equiv", f"{masks}:hard", f"{masks}:causal", "--timeout", "0.001", "--json")
    data = json.loads(out)
    assert code == 3 and data["verdict"] == "unknown" and valid("equiv", data) == [], (out, err)


@needs_catalog
def test_equiv_window_of_w_keys_vs_distance_w(capsys):
    # By hand: a window of 3 keys lets q see q-2 … q; a distance of 3 lets it see q-3 … q. They differ first
    # at q = 3, k = 0, which needs n = 4 positions (checked on the concrete catalogue masks).
    assert not (_concrete("sliding_window:n=3,w=3") ^ _concrete("sliding_window_distance:n=3,d=3")).any()
    assert (_concrete("sliding_window:n=4,w=3") ^ _concrete("sliding_window_distance:n=4,d=3"))[3, 0]
    code, out, err = run(capsys, "equiv", "sliding_window:w=3", "sliding_window_distance:d=3", "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "refuted" and valid("equiv", data) == [], err
    cx = data["counterexample"]
    assert cx["n"] == 4 and data["recheck"].startswith("confirmed"), cx
    assert "3" in json.dumps(cx.get("positions", cx)) and "0" in json.dumps(cx.get("positions", cx))
    code, out, err = run(capsys, "equiv", "sliding_window:w=4", "sliding_window_distance:d=3")
    assert code == 0 and "PROVED" in out and "for all 1 <= n <= 2^31" in out, out + err


@needs_catalog
def test_dense_catalogue_masks_and_a_window_refuted_at_the_brute_force_n(capsys):
    code, out, err = run(capsys, "prove-mask", "causal", "--claim", "dense")
    assert code == 0 and "PROVED" in out and "for all 1 <= n <= 2^31" in out, out + err
    smallest = next(n for n in range(1, 20) if not _dense(_concrete(f"sliding_window:n={n},w=3")))
    code, out, err = run(capsys, "prove-mask", "sliding_window:w=3", "--claim", "dense", "--json")
    data = json.loads(out)
    assert code == 1 and data["counterexample"]["n"] == smallest == 4, (data, err)


@needs_tasks
def test_leak_free_with_a_task_and_an_invariant(capsys, masks):
    code, out, err = run(capsys, "prove-mask", "sliding_window:w=8", "--claim", "leak-free", "--task", "causal_lm")
    assert code == 0 and "PROVED" in out, out + err
    code, out, err = run(capsys, "prove-mask", "sliding_window:w=8", "--claim", "leak-free", "--task", "causal_lm",
                         "--invariant", f"{masks}:causal", "--json")
    data = json.loads(out)
    assert code == 0 and data["invariant"] == f"{masks}:causal" and valid("prove-mask", data) == [], err
    code, out, err = run(capsys, "prove-mask", "butterfly", "--claim", "leak-free", "--layers", "3")
    assert code == 0 and "PROVED" in out, out + err


@needs_tasks
def test_own_task_isolation_and_a_bad_design_within_layers(capsys, tmp_path):
    cert = tmp_path / "packed.json"
    code, out, err = run(capsys, "prove-mask", "packed", "--claim", "isolation", "--json", "--certificate", cert)
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "proved" and valid("prove-mask", data) == [], err
    formulas = json.loads(cert.read_text())["formulas"]
    assert formulas["task"]["group"] == "doc(p)" and "doc(p + 1) == doc(p)" in formulas["task"]["predicts"]
    assert set(formulas) == {"mask", "invariant", "task"}
    from hasse.theory.catalog import build_task
    from hasse.theory.leak import find_leaks

    smallest = next(n for n in range(1, 8) if find_leaks(build_task(f"bad_butterfly_crossed:n={n}"), layers=2).leaks)
    code, out, err = run(capsys, "prove-mask", "bad_butterfly_crossed", "--claim", "leak-free", "--layers", "2",
                         "--json")
    data = json.loads(out)
    assert code == 1 and data["counterexample"]["n"] == smallest, (data, err)


@needs_catalog
def test_param_range_by_key_or_symbol_is_in_the_statement(capsys):
    for name in ("block", "l"):
        code, out, err = run(capsys, "prove-mask", "block_causal", "--claim", "dense", "--param-range",
                             f"{name}=2..4", "--json")
        data = json.loads(out)
        assert code == 0 and "<= 4" in data["statement"], (data, err)


@needs_tasks
def test_task_is_read_through_mask(capsys):
    # causal_lm through a bidirectional mask: position 0 predicts x_1 and attends position 1 (n = 2, one layer)
    code, out, err = run(capsys, "prove-mask", "bidirectional", "--claim", "leak-free", "--task", "causal_lm",
                         "--layers", "1", "--json")
    data = json.loads(out)
    assert code == 1 and data["counterexample"]["n"] == 2 and data["recheck"].startswith("confirmed"), (data, err)


@needs_tasks
def test_bench_symbolic_runs_and_finds_the_refutation_where_the_sweep_does(capsys):
    from benchmarks import bench_symbolic

    bench_symbolic.main(["--only", "w=3 vs distance", "--repeats", "1"])
    row = capsys.readouterr().out.strip().splitlines()[-1]
    assert "refuted" in row and "| 4 |" in row and "finds it at n = 4" in row, row


@needs_claims
def test_equiv_of_two_files_finds_the_planted_length(capsys, masks):
    code, out, err = run(capsys, "equiv", f"{masks}:planted", f"{masks}:causal", "--json")
    data = json.loads(out)
    assert code == 1 and data["counterexample"]["n"] == 37 and valid("equiv", data) == [], (data, err)
    assert data["spec"] is None and data["mask_b"] == f"{masks}:causal"
    code, out, err = run(capsys, "equiv", f"{masks}:planted", f"{masks}:causal", "--param-range", "n=1..36")
    assert code == 0 and "n <= 36" in out, out + err


@needs_claims
def test_a_mask_mod_that_reads_h_needs_heads(capsys, masks):
    code, out, err = run(capsys, "prove-mask", f"{masks}:heads", "--claim", "dense")
    assert code == 2 and "--heads" in err and err.count("\n") == 1, err
    code, out, err = run(capsys, "prove-mask", f"{masks}:heads", "--claim", "dense", "--heads", "2")
    assert code == 0 and "PROVED" in out, out + err  # the union over heads is the causal mask


@needs_tasks
@pytest.mark.parametrize("design, claim", [("bad_butterfly_self", "leak-free"), ("bad_butterfly_crossed", "leak-free"),
                                           ("bad_mlm_unmasked", "leak-free"), ("bad_packed_window", "isolation")])
def test_bad_designs_refuted_at_every_depth_at_the_concrete_smallest_n(capsys, design, claim):
    from hasse.theory.catalog import build_task
    from hasse.theory.leak import find_leaks

    def spec(n):
        return f"{design}:lengths={'+'.join(['1'] * n)},window=2" if design == "bad_packed_window" else f"{design}:n={n}"

    def bad(n):
        report = find_leaks(build_task(spec(n)))  # in the limit: every depth
        return bool(report.isolation if claim == "isolation" else report.leaks)

    smallest = next(n for n in range(1, 9) if bad(n))
    code, out, err = run(capsys, "prove-mask", design, "--claim", claim, "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "refuted" and "at any depth" in data["statement"], (data, err)
    assert data["counterexample"]["n"] == smallest and data["recheck"].startswith("confirmed"), data
    code, out, err = run(capsys, "prove-mask", design, "--claim", claim, "--search-layers", "0")
    assert code == 3 and "UNKNOWN" in out and "fails" in out, out + err  # the failing invariant alone proves nothing


@needs_tasks
def test_witness_path_names_the_streams(capsys):
    # bad_butterfly_crossed at n = 2: B1 -> F0 -> P1 (F may read B: P1 sees x1 through F0), design §4's names
    code, out, err = run(capsys, "prove-mask", "bad_butterfly_crossed", "--claim", "leak-free")
    assert code == 1 and "path: [1, 0, 3]  (B1 -> F0 -> P1)" in out, out + err


@needs_claims
def test_out_file_holds_the_json_while_the_terminal_gets_the_report(capsys, masks, tmp_path):
    out_file = tmp_path / "v.json"
    code, out, err = run(capsys, "prove-mask", f"{masks}:planted", "--claim", "dense", "--out", out_file)
    assert code == 1 and "REFUTED" in out and f"JSON written to {out_file}" in out, out + err
    data = json.loads(out_file.read_text())
    assert data["counterexample"]["n"] == 37 and valid("prove-mask", data) == []
    code, out, err = run(capsys, "prove-mask", f"{masks}:planted", "--claim", "dense", "--out", masks)
    assert code == 2 and "would overwrite the input" in err, err  # never onto the mask_mod's own file


@needs_tasks
def test_a_task_through_a_mask_of_another_size_is_refused(capsys):
    code, out, err = run(capsys, "prove-mask", "causal", "--claim", "leak-free", "--task", "xlnet")
    assert code == 2 and "positions" in err and err.count("\n") == 1, err  # XLNet's 2n positions, causal's n


def test_the_claim_flag_offers_every_claim_of_the_table():
    """--claim's choices (kept in the parser so that building it imports no Z3) are the keys of claims.CLAIMS."""
    from hasse.cli import prove_mask
    from hasse.solvers.symbolic.claims import CLAIMS

    assert prove_mask.CLAIMS == tuple(CLAIMS)

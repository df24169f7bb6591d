"""The engine theorems (proofs bind to the engine, issue 10): proved on the clean kit, and each planted bug refuted.

Every bug of :data:`tests.mutations.MUTATIONS` is planted in a temporary copy of the kit
and its theorem is run there (``python -m hasse.proofs.NAME --n N --method exhaustive
--json``); it must come back refuted with a counterexample that is real: the clean code,
run here on the same mask or size, gives the definition's answer and shows no problem.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutations import (ENGINE_AREAS, MUTATIONS, PROVE_MISSES, Mutation, apply, by_name, line_of,  # noqa: E402
                       mutated_copy, run_kit, run_proof, run_tests)

from hasse.proofs import catalog_layouts_match_design as catalog  # noqa: E402
from hasse.proofs import engine_matches_definitions as engine  # noqa: E402
from hasse.proofs import leak_search_is_exact as leaks  # noqa: E402
from hasse.proofs import registry  # noqa: E402
from hasse.proofs import sparse_realisation_keeps_hasse as sparse_theorem  # noqa: E402
from hasse.proofs.cli import prove  # noqa: E402
from hasse.proofs.theorem import Context, run_theorem  # noqa: E402


SAMPLED_FROM_3 = {"stack_flow_matches_products"}  # complete up to n = 2 only (every stack of 1-3 layers)


@pytest.mark.parametrize("name", registry.ENGINE_THEOREMS)
@pytest.mark.parametrize("n", range(1, 4))  # 1, 4, 64 masks; n = 4 runs in `hasse prove all`
def test_engine_theorem_proved_on_the_clean_kit(name, n):
    result = run_theorem(registry.get(name), n, "exhaustive")
    assert result.verdict == "proved", result
    if name in SAMPLED_FROM_3 and n == 3:
        assert result.details["scope"] == "sample" and "not a full proof" in result.reason, result
    else:
        assert result.details.get("scope") != "sample"


def test_sample_beyond_full_size_says_so():
    theorem = registry.get("catalog_layouts_match_design")  # full at every n: no sample
    assert run_theorem(theorem, 2, "exhaustive").reason is None
    from hasse.proofs.engine_checks import engine_theorem

    sampled = engine_theorem("t", "", engine.flag, engine.explain, full_upto=2, sample=16)
    result = run_theorem(sampled, 3, "exhaustive")
    assert result.verdict == "proved" and result.checked == 16
    assert result.details["sample"] == 16 and result.details["class_size"] == 64 and "seed" in result.details
    assert "not a full proof" in result.reason


def test_both_runs_engine_theorems_exhaustively_and_says_so():
    results = prove(registry.get("engine_matches_definitions"), 2, "both", show_progress=False)
    assert [r.method for r in results] == ["exhaustive"]
    assert "no z3 check" in results[0].details["only"]
    asked = prove(registry.get("engine_matches_definitions"), 2, "z3", show_progress=False)
    assert asked[0].verdict == "unknown"


def test_every_mutation_applies_to_this_checkout():
    for mutation in MUTATIONS:
        text = (Path(__file__).resolve().parents[1] / mutation.path).read_text()
        assert apply(mutation, text) != text


def test_the_mutation_table_is_well_formed():
    names = [m.name for m in MUTATIONS]
    assert len(names) == len(set(names)) and len(MUTATIONS) >= 30
    for m in MUTATIONS:
        assert m.method in ("exhaustive", "z3") and m.verdict in ("refuted", "unknown"), m.name
        assert m.theorem in registry.NAMES, m.name
        assert "\n" not in m.original and "\n" not in m.mutated and m.original.strip() != m.mutated.strip(), m.name
        assert all(isinstance(a, str) for a in m.tests), m.name
        assert line_of(m) > 0, m.name
    areas = {m.path.split("/")[0] for m in MUTATIONS} | {m.path.split("/")[1] for m in MUTATIONS}
    assert {"theory", "solvers", "masks", "tasks"} <= areas
    assert sum(m.path.startswith("solvers/smt/") for m in MUTATIONS) >= 8


def run_mutated(mutation: Mutation, tmp_path: Path) -> dict:
    copy = mutated_copy(mutation, tmp_path / "kit")
    done = run_proof(copy, mutation.theorem, mutation.n, mutation.method, timeout=300)
    assert done.returncode == {"refuted": 1, "unknown": 3}[mutation.verdict], \
        (mutation.name, done.stdout[-2000:], done.stderr[-2000:])
    (result,) = json.loads(done.stdout)["results"]
    assert result["verdict"] == mutation.verdict, result
    if mutation.verdict == "unknown":
        assert result["reason"], result  # unknown says what is missing (a control, the scan's completeness)
        return {"reason": result["reason"]}
    assert result["counterexample"], result
    return result["counterexample"]


def confirm_with_clean_code(mutation: Mutation, cex: dict) -> None:
    """The counterexample is real: on it the clean code agrees with the definition and the mutated one did not."""
    if mutation.theorem == "engine_matches_definitions":
        mask = np.array(cex["mask"], dtype=bool)
        assert engine.explain(mask) == {}
        ref = engine.batch_definitions(engine.batch.pack(mask[None]))[0]
        clean = engine.engine(mask)[cex["quantity"]]
        assert engine._same(engine._json(clean), cex["definition"])
        assert not engine._same(cex["engine"], cex["definition"])
        assert engine._same(engine._json(engine.definition(ref)[cex["quantity"]]), cex["definition"])
    elif mutation.theorem == "leak_search_is_exact":
        mask = np.array(cex["mask"], dtype=bool)
        assert cex["problem"] and leaks.explain(mask) == {}
    elif mutation.theorem == "sparse_realisation_keeps_hasse" and mutation.method == "exhaustive":
        mask = np.array(cex["mask"], dtype=bool)
        assert not sparse_theorem.flag(sparse_theorem.batch.pack(mask[None]))[0]  # clean: every part holds
        from hasse.theory.sparse import sparse_realisation

        assert sparse_realisation(mask).astype(int).tolist() == cex["designed"]
        assert cex["sparse"] != cex["designed"]
    elif mutation.theorem == "catalog_layouts_match_design":
        m = cex["n"]
        assert catalog.layout_problems(m, [0]) is None and catalog.generator_problems(m) is None
        if "design" in cex:  # a layout: the clean catalogue builds the design's value
            assert cex["catalogue"] != cex["design"]
    else:  # the claim is a theorem: on the clean kit the same method proves it, so the bug made the refutation
        clean = clean_run(mutation.theorem, mutation.n, mutation.method)
        assert clean.verdict == "proved", clean


_CLEAN: dict = {}


def clean_run(name: str, n: int, method: str):
    """The theorem on the clean kit, once per session (several mutations share an engine theorem)."""
    if (name, n, method) not in _CLEAN:
        _CLEAN[(name, n, method)] = run_theorem(registry.get(name), n, method)
    return _CLEAN[(name, n, method)]


FAST = {  # run by `make test`; the others are marked slow (each starts a fresh interpreter on a copy of the kit)
    "order_ties_by_largest_member", "dense_depth_always_one", "height_without_plus_one", "analysis_reach_off_by_one",
    "sparse_hasse_edge_from_largest", "sparse_cycle_reversed", "batch_sparse_cycle_reversed",
    "leak_direct_attention_only", "leak_depth_plus_one", "isolation_counts_own_group", "compositions_empty",
    "block_specs_skip_whole_block", "infill_centre_drops_right", "butterfly_forward_window_2",
    "two_stream_query_sees_own_block", "xlnet_query_sees_own_content",
    # one per new area: Z3 mask and task encodings, the enumerator, batch, equivalence, merge, layouts
    "z3_column_power_drops_last_key", "z3_leak_walk_reversed", "scan_skips_first_of_batch",
    "batch_closure_one_squaring_short", "signature_ignores_inputs", "merge_labels_overwritten", "ar_label_off_by_one",
    # issue 20, item 8: one per engine `prove all` did not cover
    "stack_interval_layers_reversed", "additive_threshold_lets_through", "orbit_parts_overlap",
    "combine_orbit_part_twice", "copies_share_within_down_set", "tracer_skips_first_alternative",
}


@pytest.mark.parametrize("mutation", [m if m.name in FAST else pytest.param(m, marks=pytest.mark.slow)
                                      for m in MUTATIONS if m.name not in PROVE_MISSES], ids=lambda m: m.name)
def test_planted_bug_is_caught_by_its_theorem(mutation, tmp_path):
    """Refuted with a counterexample the clean code confirms, or unknown with the reason (controls, completeness)."""
    cex = run_mutated(mutation, tmp_path)
    if mutation.verdict == "refuted":
        confirm_with_clean_code(mutation, cex)


@pytest.mark.parametrize("name", sorted(PROVE_MISSES))
def test_what_prove_all_misses_its_tests_catch(name, tmp_path):
    """The few bugs `prove all` proves on are caught by the tests they name (run here on a mutated copy)."""
    mutation = by_name(name)
    assert mutation.tests, name
    copy = mutated_copy(mutation, tmp_path / "kit", with_tests=True)
    done = run_tests(copy, mutation.tests, timeout=600)
    assert done.returncode == 1 and "failed" in done.stdout.strip().splitlines()[-1], (name, done.stdout[-1500:])


def test_reversed_cycle_keeps_limit_and_depth_but_not_the_design():
    """Why the sparse check compares the whole mask: a reversed cycle fools R* and L* alone."""
    ring = np.ones((1, 3, 3), dtype=bool)
    rows = sparse_theorem.batch.pack(ring)
    designed = sparse_theorem.designed_realisation(rows)[0]
    reversed_ = designed.T.copy()
    b = sparse_theorem.batch
    assert b.equal_masks(b.closure(b.pack(reversed_[None])), b.closure(rows))[0]
    assert b.convergence_depth(b.pack(reversed_[None]))[0] == b.convergence_depth(b.pack(designed[None]))[0]
    assert not np.array_equal(reversed_, designed)


def test_engine_check_counts_an_exception_as_a_difference(monkeypatch):
    import hasse.theory.sparse as sparse

    def broken(mask, order=None):
        raise RuntimeError("planted")

    monkeypatch.setattr(sparse, "sparse_realisation", broken)
    result = run_theorem(registry.get("engine_matches_definitions"), 2, "exhaustive", Context())
    assert result.verdict == "refuted" and "planted" in result.counterexample["engine"]


def test_generator_count_checks_fire(monkeypatch):
    from hasse.solvers import task_sets

    monkeypatch.setattr(task_sets, "small_family_diagrams", lambda n: iter(()))
    assert any("lists 0 families" in p for p in task_sets.count_problems(3))
    assert by_name("compositions_empty").theorem == "catalog_layouts_match_design"


# ---------------------------------------------------------------- issue 20, item 8: the engines added since


NEW_ENGINE_THEOREMS = ("stack_flow_matches_products", "mask_arrays_read_as_defined",
                       "orbit_enumeration_covers_every_mask", "shard_combination_is_exact", "copy_choice_is_minimum",
                       "symbolic_forms_match_programs")


def test_every_engine_file_has_a_planted_bug_its_theorem_refutes():
    """Each file of the engines `prove all` did not cover has a one-line bug in the table, aimed at its theorem."""
    assert set(NEW_ENGINE_THEOREMS) <= set(registry.ENGINE_THEOREMS)
    assert set(ENGINE_AREAS.values()) == set(NEW_ENGINE_THEOREMS)
    for path, theorem in ENGINE_AREAS.items():
        planted = [m for m in MUTATIONS if m.path.startswith(path) and m.theorem == theorem]
        assert planted and all(m.n <= 4 and m.verdict in ("refuted", "unknown") for m in planted), path
        assert any(m.name in FAST for m in MUTATIONS if m.theorem == theorem), theorem  # one runs in `make test`
    assert not PROVE_MISSES & {m.name for m in MUTATIONS if m.theorem in NEW_ENGINE_THEOREMS}


def test_prove_all_runs_the_new_engine_theorems(capsys):
    """`prove all --method both` includes every engine theorem, each by its exhaustive check alone, all proved."""
    from hasse.cli import main

    code = main(["prove", "all", "--n", "2", "--method", "both", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, [r for r in data["results"] if r["verdict"] != "proved"]
    ran = {(r["theorem"], r["method"]) for r in data["results"]}
    assert {(name, "exhaustive") for name in registry.ENGINE_THEOREMS} <= ran
    assert not {name for name, method in ran if method == "z3"} & set(registry.ENGINE_THEOREMS)


def test_the_new_theorems_label_what_is_not_complete():
    """A sample says so in its verdict line; beyond their reach the cover and the combining checks are unknown."""
    r = run_theorem(registry.get("copy_choice_is_minimum"), 6, "exhaustive")
    assert r.verdict == "proved" and r.details["scope"] == "sample" and "not a full proof" in r.reason
    assert r.checked == registry.get("copy_choice_is_minimum").space(6) == 2000
    for name in ("orbit_enumeration_covers_every_mask", "shard_combination_is_exact"):
        r = run_theorem(registry.get(name), 6, "exhaustive")
        assert r.verdict == "unknown" and "checked for n <= 5" in r.reason, r


def _prove_all(copy: Path, n: int) -> tuple[int, list[dict]]:
    done = run_kit(copy, "prove", "all", "--n", str(n), "--method", "both", "--json", timeout=1800)
    return done.returncode, json.loads(done.stdout)["results"]


@pytest.mark.parametrize("n", [3, pytest.param(4, marks=pytest.mark.slow)])
def test_prove_all_reports_a_planted_engine_bug(n, tmp_path):
    """End to end: `hasse prove all --n N --method both` on a kit with a one-line bug in the symbolic tracer (which
    no theorem of `prove all` read before issue 20) exits 1 with that engine theorem refuted, the rest proved."""
    mutation = by_name("symbolic_heads_one_short")
    code, results = _prove_all(mutated_copy(mutation, tmp_path / "kit"), n)
    bad = {(r["theorem"], r["verdict"]) for r in results if r["verdict"] != "proved"}
    assert code == 1 and bad == {("symbolic_forms_match_programs", "refuted")}, bad
    assert {r["theorem"] for r in results} == set(registry.NAMES)


@pytest.mark.parametrize("name", NEW_ENGINE_THEOREMS)
def test_a_spent_time_limit_is_unknown_never_a_finding(name):
    """Stopped by --timeout: unknown, never refuted; a run that finishes within the limit anyway (the arrays
    theorem checks n = 4 in one batch; any theorem on a fast machine with warm caches) has checked everything."""
    result = run_theorem(registry.get(name), 4, "exhaustive", Context(timeout=0.05))
    if result.verdict == "proved":  # it finished within the limit (a fast machine, warm caches): all of it
        assert result.checked == run_theorem(registry.get(name), 4, "exhaustive", Context()).checked, result
    else:
        assert result.verdict == "unknown" and "timeout" in result.reason, result


def test_an_engine_that_runs_out_of_time_is_not_refuted(monkeypatch):
    """`safely` turns an engine's exception into a finding, but not a spent deadline (theory.deadline.tick)."""
    import hasse.theory.merge_copies as copies

    def out_of_time(*args, **kwargs):
        raise TimeoutError("the time limit of 1 s is spent")

    monkeypatch.setattr(copies, "minimum_embedding", out_of_time)
    result = run_theorem(registry.get("copy_choice_is_minimum"), 2, "exhaustive")
    assert result.verdict == "unknown" and "timeout" in result.reason, result


class _CountingClock:
    """A clock for :mod:`theory.deadline` that moves one second per read: a limit of ``k`` seconds strikes at
    the ``k``-th read, wherever that falls, on every machine (the sweep below never depends on real time)."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("name", registry.ENGINE_THEOREMS)
def test_a_time_limit_striking_at_any_check_is_unknown_never_a_finding(name, monkeypatch):
    """Issue 21's CI: the tracer turned the spent limit into TraceUnknown, which the symbolic theorem read as
    "a program the tracer cannot trace" and refuted. Here the limit strikes at every k-th deadline check of a
    run at n = 3 (k swept over the run's whole length): unknown with a timeout, or proved with everything."""
    from hasse.theory import deadline

    clock = _CountingClock()
    monkeypatch.setattr(deadline, "time", clock)
    with deadline.deadline(10.0 ** 9):
        full = run_theorem(registry.get(name), 3, "exhaustive", Context())
    reads = int(clock.now)
    assert full.verdict == "proved", full
    for k in sorted({1, 2, 3, reads // 4, reads // 2, reads - 2, reads - 1, reads, reads + 1} - {0}):
        clock.now = 0.0
        with deadline.deadline(float(k)):
            result = run_theorem(registry.get(name), 3, "exhaustive", Context())
        if result.verdict == "proved":
            assert result.checked == full.checked, (k, result)
        else:
            assert result.verdict == "unknown" and "timeout" in result.reason, (k, result)

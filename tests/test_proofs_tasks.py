"""The task-level theorems of issue 5 (design.md §5): both methods prove them for small n,
and each refutes a deliberately broken kit with a counterexample.

Sizes: the exhaustive classes grow fast (rooted labelled diagrams with <= n nodes:
2, 6, 22, 134, 1414; families with n nodes in all: 2, 11, 68, 469, 3640), so n <= 4
runs here and n = 5 is behind the ``slow`` marker.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from hasse.cli import main
from hasse.proofs import registry
from hasse.proofs.registry import TASK_THEOREMS
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, run_theorem
from hasse.solvers.dags import dag_to_task
from hasse.solvers.merge_search import min_merged_nodes
from hasse.solvers.posets import task_diagram
from hasse.solvers.smt.leak_walks import find_leak_path
from hasse.solvers.smt.merge_within import merge_within, merged_value_to_task
from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.theory.catalog import build_family
from hasse.theory.labelled import task_to_hasse
from hasse.theory.task import make_task
from tests.fresh_python import modules_after

METHODS = ("exhaustive", "z3")


def prove(name, n, method, timeout=None):
    return run_theorem(registry.get(name), n, method, Context(timeout=timeout))


# ---------------------------------------------------------------- every theorem, both methods, n = 1 … 4


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", TASK_THEOREMS)
@pytest.mark.parametrize("n", range(1, 5))
def test_proved_for_small_n(name, method, n):
    r = prove(name, n, method)
    if n < registry.get(name).min_n:  # ar:n needs n >= 2
        assert r.verdict == UNKNOWN and "n >= 2" in r.reason
        return
    assert r.verdict == PROVED, (r.reason, r.counterexample)
    assert r.checked > 0 and r.counterexample is None


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", [t for t in TASK_THEOREMS if t != "merge_is_minimum"])
def test_proved_at_n5(name, method):
    assert prove(name, 5, method).verdict == PROVED


# ---------------------------------------------------------------- the five-node family that once broke minimality


def shared_bottom_family():
    """a -> a, then {a, a -> a}. A lone a and the bottom of a chain lie in no common down-set,
    so they share one merged node: 2 nodes (one per group). An earlier merge that kept every
    node of a task apart made 4 here (found by merged_task_is_minimum, now merge_is_minimum, at n = 5)."""
    return [dag_to_task(((), (0,)), "aa"), dag_to_task(((), (), (1,)), "aaa")]


def test_equal_nodes_in_separate_down_sets_share_a_merged_node():
    import hasse.theory.merge as merge

    tasks = shared_bottom_family()
    assert merge.family_to_merged_task(tasks).nodes == 2
    smaller = min_merged_nodes([(h.inputs, h.lower) for h in map(task_to_hasse, tasks)], 2)
    assert smaller is None  # exhaustive: nothing below 2
    diagrams = [task_diagram(t) for t in tasks]
    assert merge_within(diagrams, 2).status == SAT and merge_within(diagrams, 1).status == UNSAT


def test_a_down_set_keeps_its_copies():
    # two equal a's both below one node cannot share a merged node: 3 nodes, not 2
    tasks = [dag_to_task(((), (), (0, 1)), "aab")]
    diagrams = [task_diagram(t) for t in tasks]
    assert merge_within(diagrams, 3).status == SAT and merge_within(diagrams, 2).status == UNSAT


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_merge_is_minimum_at_n5(method):
    r = prove("merge_is_minimum", 5, method)
    assert r.verdict == PROVED and r.details["scope"] == "all" and r.checked == registry.get("merge_is_minimum").space(5)


def test_merged_task_is_minimum_is_the_old_name():
    assert registry.get("merged_task_is_minimum") is registry.get("merge_is_minimum")
    assert prove("merged_task_is_minimum", 3, "exhaustive").theorem == "merge_is_minimum"


@pytest.mark.slow
def test_merge_is_minimum_at_n6_is_a_sample(capsys):
    from hasse.proofs.cli import format_result

    for method in METHODS:
        r = prove("merge_is_minimum", 6, method)
        assert r.verdict == PROVED and r.checked == 1000
        assert {k: r.details[k] for k in ("scope", "sample", "seed")} == {"scope": "sample", "sample": 1000, "seed": 0}
        assert r.details["class_size"] == 32898  # independent of the sampler: Burnside and the recurrence
        assert "proved on a random sample of 1,000 of 32,898 families" in format_result(r)


def test_merge_is_minimum_honours_the_timeout_at_n6():
    for method in METHODS:
        r = prove("merge_is_minimum", 6, method, timeout=0.5)
        assert r.verdict == UNKNOWN and "time" in r.reason, r.reason  # stopped by the limit, not by finishing


def first_free_copy_family():
    """Issue 10: a -> a, then [[], [], [1], [0, 2]], all a: 4 nodes suffice, the first free copy makes 5."""
    return [dag_to_task(((), (0,)), "aa"), dag_to_task(((), (), (1,), (0, 2)), "aaaa")]


def plant_first_free_copy(monkeypatch):
    """The greedy merge of old: every node takes the first free copy of its key (no exact search)."""
    import hasse.theory.merge as merge

    monkeypatch.setattr(merge, "minimum_embedding", lambda *a, **k: (None, True))


@pytest.mark.parametrize("method", METHODS)
def test_first_free_copy_is_refuted_on_the_issue_family(monkeypatch, method):
    import dataclasses

    import hasse.proofs.merge_is_minimum as proof

    tasks = first_free_copy_family()
    monkeypatch.setattr(proof, "families", lambda n, ctx: (iter([("issue 10", tasks)]), {"scope": "all"}, 1))
    one_family = dataclasses.replace(proof.THEOREM, space=lambda n: 1)
    assert run_theorem(one_family, 6, method).verdict == PROVED  # the exact merge: 4 nodes
    plant_first_free_copy(monkeypatch)
    r = run_theorem(one_family, 6, method)
    assert r.verdict == REFUTED
    cx = r.counterexample
    assert cx["family"] == "issue 10" and cx["kit_nodes"] == 5 and cx["smaller_nodes"] == 4
    assert [t["mask"] for t in cx["tasks"]] == [t.mask.astype(int).tolist() for t in tasks]


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_first_free_copy_is_refuted_by_the_n6_sample(monkeypatch, method):
    plant_first_free_copy(monkeypatch)
    r = prove("merge_is_minimum", 6, method)
    assert r.verdict == REFUTED and r.counterexample["kit_nodes"] == r.counterexample["smaller_nodes"] + 1


# ---------------------------------------------------------------- deliberate bugs


def test_equivalence_ignoring_inputs_is_refuted(monkeypatch):
    import hasse.theory.equivalence as eq

    def blind_signatures(self, h):
        out = []
        for c in range(h.size):
            key = ((), tuple(sorted(out[d] for d in h.lower[c])))
            out.append(self.ids.setdefault(key, len(self.ids)))
        return tuple(out)

    monkeypatch.setattr(eq.SignatureTable, "signatures", blind_signatures)
    monkeypatch.setattr(eq, "_match", lambda a, b: a["root"] == b["root"])
    for method in METHODS:
        r = prove("equivalence_preserves_upstream_inputs", 2, method)
        assert r.verdict == REFUTED
        cx = r.counterexample
        assert cx["fast_equivalent"] and not cx["isomorphic"]
        assert cx["first"]["labels"] != cx["second"]["labels"] and cx["upstream"][0] != cx["upstream"][1]


def test_merge_dropping_a_group_is_refuted(monkeypatch):
    import dataclasses

    import hasse.theory.merge as merge

    original = merge.family_to_merged_task

    def dropping(tasks, name="merged"):
        m = original(tasks)
        if m.nodes < 2:
            return m
        keep = [p for p in range(m.task.size) if p not in set(m.node_members[-1])]
        t = m.task
        task = make_task(t.tokens, [t.inputs[p] for p in keep], [list(t.labels[p]) or None for p in keep],
                         t.mask[np.ix_(keep, keep)])
        return dataclasses.replace(m, task=task)

    monkeypatch.setattr(merge, "family_to_merged_task", dropping)
    for method in METHODS:
        r = prove("merged_task_embeds_every_task", 3, method)
        assert r.verdict == REFUTED
        assert r.counterexample["family"] == "ar:n=3" and r.counterexample["labels"] == [[2]]


def _with_extra_edges(task, pairs):
    mask = task.mask.copy()
    for q, k in pairs:
        assert not mask[q, k]
        mask[q, k] = True
    return make_task(task.tokens, task.inputs, [list(x) or None for x in task.labels], mask, name=task.name,
                     names=task.names)


def test_butterfly_attending_its_own_backward_token_is_refuted(monkeypatch):
    import hasse.theory.tasks.case_studies as cs

    original = cs.butterfly_task

    def leaky(n):  # P_k also attends B_k
        t = original(n)
        return _with_extra_edges(t, [(t.names.index(f"P{k}"), t.names.index(f"B{k}")) for k in range(1, n)])

    monkeypatch.setattr(cs, "butterfly_task", leaky)
    for method in METHODS:
        r = prove("butterfly_is_leak_free_with_full_coverage", 3, method)
        assert r.verdict == REFUTED
        cx = r.counterexample
        k = cx["target"]
        assert cx["depth"] == 1 and cx["path"][0].startswith(f"B{k} ") and cx["path"][-1].startswith(f"P{k} ")


def test_block_query_seeing_its_own_block_content_is_refuted(monkeypatch):
    import hasse.theory.tasks.case_studies as cs

    original = cs.block_two_stream_task

    def leaky(n, block, variant="chain"):  # Q_t also attends C_j of its own block
        t = original(n, block, variant)
        pairs = [(q, c) for q, qn in enumerate(t.names) if qn.startswith("Q")
                 for c, cn in enumerate(t.names) if cn.startswith("C") and int(cn[1:]) // block == int(qn[1:]) // block]
        return _with_extra_edges(t, pairs)

    monkeypatch.setattr(cs, "block_two_stream_task", leaky)
    for method in METHODS:
        r = prove("block_two_stream_is_leak_free_and_consistent", 4, method)
        assert r.verdict == REFUTED
        cx = r.counterexample
        assert cx["property"] == "leak" and cx["depth"] == 1
        assert cx["path"][0].startswith(f"C{cx['target']} ") and cx["path"][-1].startswith(f"Q{cx['target']} ")


def test_block_query_history_is_refuted_as_inconsistent(monkeypatch):
    """The training design of bad_block_query_history is leak-free; only consistency catches it."""
    import hasse.theory.tasks.bad as bad
    import hasse.theory.tasks.case_studies as cs

    original = cs.block_two_stream_task

    def history(n, block, variant="chain"):
        return bad.bad_block_query_history(n, block) if variant == "chain" else original(n, block, variant)

    monkeypatch.setattr(cs, "block_two_stream_task", history)
    for method in METHODS:
        r = prove("block_two_stream_is_leak_free_and_consistent", 4, method)
        assert r.verdict == REFUTED and "consisten" in r.counterexample["why"]
        assert r.counterexample["target"] >= 1  # a query of a block after the first


# ---------------------------------------------------------------- the minimality encoding is tight


@pytest.mark.parametrize("family", ["ar:n=4", "infill:n=4", "block:n=4,block=2", "block:n=6,block=3,variant=clique"])
def test_merge_within_is_sat_at_the_minimum_and_unsat_below(family):
    import hasse.theory.equivalence as eq
    import hasse.theory.merge as merge

    tasks = build_family(family)
    nodes = merge.family_to_merged_task(tasks).nodes
    diagrams = [task_diagram(t) for t in tasks]
    assert merge_within(diagrams, nodes - 1).status == UNSAT
    tight = merge_within(diagrams, nodes)
    assert tight.status == SAT
    # the decoded merged task really embeds every task (checked with the kit's equivalence)
    decoded = merged_value_to_task(tight.value, diagrams, tasks[0].tokens)
    hm = task_to_hasse(decoded)
    for task in tasks:
        h = task_to_hasse(task)
        assert all(any(eq.equivalent_exact(h, c, hm, d) for d in range(hm.size)) for c in range(h.size))


def test_duplicate_copies_family_needs_four_nodes():
    # design.md §3: a down-set with two equal x0 nodes; Z3 and the search agree with the kit's 4
    t0 = make_task(2, [("x0", 0), ("x0", 0), ("[MASK]", 1)], [None, None, 1], [[1, 0, 0], [0, 1, 0], [1, 1, 1]])
    t1 = make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 1], [[1, 0], [1, 1]])
    diagrams = [task_diagram(t) for t in (t0, t1)]
    assert merge_within(diagrams, 4).status == SAT and merge_within(diagrams, 3).status == UNSAT
    assert min_merged_nodes([(h.inputs, h.lower) for h in map(task_to_hasse, (t0, t1))], 4) is None


def test_leak_walk_finds_the_shortest_path():
    from hasse.theory.catalog import build_task

    t = build_task("bad_butterfly_crossed:n=3")
    answer = find_leak_path(t.mask, t.inputs, t.labels)
    assert answer.status == SAT and answer.value["depth"] == 2
    path = [t.names[p] for p in answer.value["path"]]
    assert path[0].startswith("B") and path[1].startswith("F") and path[2].startswith("P")
    clean = build_task("butterfly:n=5")
    assert find_leak_path(clean.mask, clean.inputs, clean.labels).status == UNSAT


def test_unknown_is_never_proved():
    r = prove("equivalence_preserves_upstream_inputs", 5, "z3", timeout=0.05)
    assert r.verdict == UNKNOWN and "timeout" in r.reason


# ---------------------------------------------------------------- hasse counterexample --method


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("design, n, prop", [
    ("bad_block_own_content:block=2", 2, "leak"),
    ("bad_butterfly_crossed", 2, "leak"),
    ("bad_butterfly_self", 1, "leak"),
    ("bad_mlm_unmasked", 1, "leak"),
    ("infill", None, None),
    ("block:block=2", None, None),
])
def test_counterexample_methods_agree(capsys, design, n, prop):
    code, out, err = run(capsys, "counterexample", design, "--n", "6", "--method", "both", "--json")
    data = json.loads(out)
    assert data["agree"] and data["tokens"] == n and data["property"] == prop, err
    assert [m["tokens"] for m in data["methods"]] == [n, n] and code == (1 if n else 0)
    if n:
        z3 = data["methods"][1]["witness"]
        assert z3["path"][0] == z3["source"] and z3["path"][-1] == z3["position"]


def test_counterexample_z3_finds_the_inconsistent_design(capsys):
    code, out, _ = run(capsys, "counterexample", "bad_block_query_history:block=2", "--inference", "block:block=2",
                       "--method", "both", "--json")
    data = json.loads(out)
    assert code == 1 and data["agree"] and data["tokens"] == 4 and data["property"] == "inconsistency"
    code, out, _ = run(capsys, "counterexample", "block_two_stream:block=2", "--inference", "block:block=2",
                       "--method", "z3", "--n", "6")
    assert code == 0 and "no leak or isolation violation and no inconsistency" in out


def test_counterexample_text_and_disagreement(capsys, monkeypatch):
    code, out, _ = run(capsys, "counterexample", "bad_butterfly_crossed", "--method", "z3")
    assert code == 1 and "[z3]" in out and "n = 2" in out and "B1(1) → F0(0) → P1(3)" in out
    import hasse.solvers.smt.leak_walks as walks
    from hasse.solvers.smt.prove import Answer

    monkeypatch.setattr(walks, "find_leak_path", lambda *a, **k: Answer(UNSAT))  # a broken Z3 side
    code, out, err = run(capsys, "counterexample", "bad_butterfly_crossed", "--method", "both", "--n", "3")
    assert code == 1 and "METHODS DISAGREE" in err


def test_counterexample_help_documents_the_methods(capsys):
    with pytest.raises(SystemExit):
        main(["counterexample", "--help"])
    out = capsys.readouterr().out
    assert "--method" in out and "z3" in out and "both" in out and "--inference" in out


# ---------------------------------------------------------------- scripts, sheets, independence


def test_script_runs_and_prove_command(capsys):
    proc = subprocess.run([sys.executable, "-m", "hasse.proofs.butterfly_is_leak_free_with_full_coverage", "--n", "3",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and {r["verdict"] for r in json.loads(proc.stdout)["results"]} == {PROVED}
    code, out, _ = run(capsys, "prove", "causal_is_minimum_merge_of_ar", "--n", "3", "--method", "both", "--json")
    assert code == 0 and [r["method"] for r in json.loads(out)["results"]] == list(METHODS)


@pytest.mark.parametrize("name", TASK_THEOREMS)
def test_statement_sheet(name):
    import importlib

    doc = importlib.import_module(f"hasse.proofs.{name}").__doc__
    assert doc.startswith(name)
    for part in ("Statement", "Notation", "Exhaustive method", "Z3 method", "Largest n", "References",
                 "2606.09951", "design.md"):
        assert part in doc, (name, part)


def test_z3_encodings_do_not_import_the_code_they_check():
    loaded = modules_after("import hasse.solvers.smt.task_maps, hasse.solvers.smt.merge_within, "
                           "hasse.solvers.smt.leak_walks, hasse.solvers.smt.symbolic_equivalence, "
                           "hasse.solvers.smt.coverage, hasse.solvers.posets", timeout=60)
    checked = ("hasse.theory.order", "hasse.theory.leak", "hasse.theory.labelled", "hasse.theory.equivalence",
               "hasse.theory.merge", "hasse.theory.consistency")
    assert [m for m in checked if m in loaded] == []


# ---------------------------------------------------------------- the n = 6 sample of merge_is_minimum


def test_family_sample_decodes_the_listed_class():
    from hasse.solvers import class_sizes
    from hasse.solvers.family_sample import class_size, family_at
    from hasse.solvers.task_sets import small_families

    for n in range(1, 5):
        listed = [desc for desc, _ in small_families(n)]
        assert [family_at(n, r)[0] for r in range(len(listed))] == listed
    assert [class_size(n) for n in range(1, 6)] == [class_sizes.small_families(n) for n in range(1, 6)]


def chi_square_of_draws(draw, k, count, seed):
    """Chi-square of ``count`` draws of a k-node diagram against the uniform law on its isomorphism classes."""
    import collections

    from hasse.solvers.dags import canonical_form, labelled_dags

    rng = np.random.default_rng(seed)
    seen = collections.Counter(canonical_form(*draw(k, rng), root_last=False) for _ in range(count))
    classes = len(labelled_dags(k))
    assert set(seen) <= {canonical_form(*d, root_last=False) for d in labelled_dags(k)}
    expected = count / classes
    return sum((seen.get(c, 0) - expected) ** 2 / expected for c in
               {canonical_form(*d, root_last=False) for d in labelled_dags(k)}), classes


def test_rejection_sampler_is_uniform_over_isomorphism_classes():
    from hasse.solvers.dags import ALPHABET, hasse_shapes
    from hasse.solvers.family_sample import uniform_diagram

    chi2, classes = chi_square_of_draws(uniform_diagram, 4, 9600, seed=3)
    assert chi2 < classes + 4 * (2 * classes) ** 0.5  # df = classes - 1: far inside the tail

    def no_rejection(k, rng):  # the planted bug: accept every proposal (biased towards many linear extensions)
        shapes = hasse_shapes(k)
        return shapes[int(rng.integers(len(shapes)))], tuple(ALPHABET[int(b)] for b in rng.integers(2, size=k))

    biased, _ = chi_square_of_draws(no_rejection, 4, 9600, seed=3)
    assert biased > classes + 4 * (2 * classes) ** 0.5

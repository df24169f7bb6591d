"""Node equivalence, the minimal merged task, consistency and sparse realisations.

References: brute-force canonical forms of small rooted DAGs (all vertex
permutations), networkx VF2 on whole diagrams, and the catalogue's case-study
tasks built independently of the merge.
"""

import itertools
import json

import numpy as np
import pytest

from hasse.cli import main
from hasse.solvers.dags import canonical_form, rooted_hasse_diagrams
from hasse.theory.catalog import build_family, build_task
from hasse.theory.consistency import check_consistency
from hasse.theory.equivalence import SignatureTable, diagrams_isomorphic, equivalent, equivalent_exact, group_nodes
from hasse.theory.labelled import LabelledHasse, task_to_hasse
from hasse.theory.merge import family_to_merged_task
from hasse.theory.order import mask_to_order
from hasse.theory.sparse import sparse_realisation
from hasse.theory.task import make_task

# ---------------------------------------------------------------- labelled DAGs up to 5 nodes
# (every rooted labelled Hasse diagram, and brute-force canonical forms: solvers.dags)


def diagram(lower, labels) -> LabelledHasse:
    k = len(labels)
    inputs = tuple(((s, 0),) for s in labels)
    task = make_task(1, [(s if s.startswith("x") else "[MASK]", 0) for s in ["[MASK]"] * k], [None] * k,
                     np.eye(k, dtype=bool))
    return LabelledHasse(task, tuple((c,) for c in range(k)), inputs, lower)


def test_signature_never_splits_equivalent_nodes():
    table = SignatureTable()
    sig_of_form: dict = {}
    count = 0
    for k, lower, labels in rooted_hasse_diagrams():
        h = diagram(lower, labels)
        sig = table.signatures(h)[k - 1]
        form = canonical_form(lower, labels)
        assert sig_of_form.setdefault(form, sig) == sig, (lower, labels)
        count += 1
    assert count == 1414  # rooted Hasse diagrams on 1..5 topologically numbered nodes, times 2-symbol labellings
    # the signature may merge non-isomorphic down-sets (shared vs copied lower nodes): it does here
    assert len(set(sig_of_form.values())) < len(sig_of_form)


def test_fast_equivalence_agrees_with_vf2():
    items = [(diagram(lower, labels), k - 1) for k, lower, labels in rooted_hasse_diagrams(5)]
    table = SignatureTable()
    buckets: dict = {}
    for h, root in items:
        buckets.setdefault(table.signatures(h)[root], []).append((h, root))
    checked = 0
    for group in buckets.values():
        for (ha, u), (hb, v) in itertools.combinations(group[:12], 2):
            assert equivalent(ha, u, hb, v) == equivalent_exact(ha, u, hb, v)
            checked += 1
    assert checked > 100
    # and across buckets the exact test always says no
    firsts = [g[0] for g in buckets.values()][:40]
    for (ha, u), (hb, v) in itertools.combinations(firsts, 2):
        assert not equivalent_exact(ha, u, hb, v)


# ---------------------------------------------------------------- the case studies, n up to 12


def causal_reference(n):
    """Causal attention on n - 1 positions, x_i at position i predicting token i + 1."""
    size = n - 1
    return make_task(n, [(f"x{i}", i) for i in range(size)], [i + 1 for i in range(size)],
                     np.tril(np.ones((size, size), dtype=bool)))


def assert_isomorphic(merged_task, reference):
    assert merged_task.size == reference.size
    assert diagrams_isomorphic(task_to_hasse(merged_task), task_to_hasse(reference))


@pytest.mark.parametrize("n", range(2, 13))
def test_merge_of_ar_is_causal(n):
    merged = family_to_merged_task(build_family(f"ar:n={n}"))
    assert merged.nodes == merged.groups == n - 1 and not merged.copies
    assert_isomorphic(merged.task, causal_reference(n))


@pytest.mark.parametrize("n", range(1, 13))
def test_merge_of_infill_is_butterfly(n):
    merged = family_to_merged_task(build_family(f"infill:n={n}"))
    assert merged.task.size == 3 * n - 2
    assert_isomorphic(merged.task, build_task(f"butterfly:n={n}"))


@pytest.mark.parametrize("n", range(1, 13))
def test_merge_of_block_is_block_two_stream(n):
    for block in (b for b in range(1, n + 1) if n % b == 0):
        for variant in ("chain", "clique"):
            merged = family_to_merged_task(build_family(f"block:n={n},block={block},variant={variant}"))
            assert_isomorphic(merged.task, build_task(f"block_two_stream:n={n},block={block},variant={variant}"))


def test_a_wrong_reference_is_not_isomorphic():
    # the isomorphism test can fail: Butterfly with one extra edge, or the other block variant
    merged = family_to_merged_task(build_family("infill:n=4")).task
    ref = build_task("butterfly:n=4")
    extra = ref.mask.copy()
    p0, f0 = ref.names.index("P0"), ref.names.index("F0")
    assert not extra[p0, f0]
    extra[p0, f0] = True  # P0 also attends F0: one extra edge, a new upstream node
    bad = make_task(ref.tokens, ref.inputs, [list(ls) or None for ls in ref.labels], extra, names=ref.names)
    assert not diagrams_isomorphic(task_to_hasse(merged), task_to_hasse(bad))
    clique = family_to_merged_task(build_family("block:n=4,block=2,variant=clique")).task
    assert not diagrams_isomorphic(task_to_hasse(clique), task_to_hasse(build_task("block_two_stream:n=4,block=2")))


# ---------------------------------------------------------------- embedding and duplicate copies


def assert_embeds(tasks, merged):
    """Every node of every task has an equivalent merged node carrying its labels (checked by VF2)."""
    hm = task_to_hasse(merged.task)
    merged_node_of_pos = merged.node_of_position()
    # the merged task's own diagram nodes: map merge nodes -> diagram classes of the merged task
    class_of = hm.node_of_position
    for i, task in enumerate(tasks):
        h = task_to_hasse(task)
        for c in range(h.size):
            m = merged.node_of[i][c]
            d = class_of[merged.node_members[m][0]]
            assert equivalent_exact(h, c, hm, d), (task.name, c)
            for p in h.members[c]:
                for t in task.labels[p]:
                    assert any(merged.task.inputs[q] == task.inputs[p] and t in merged.task.labels[q]
                               for q in merged.node_members[m])
    assert all(merged_node_of_pos[q] == m for m, ps in enumerate(merged.node_members) for q in ps)


@pytest.mark.parametrize("family", ["ar:n=6", "infill:n=5", "block:n=6,block=3", "block:n=4,block=2,variant=clique"])
def test_merged_task_embeds_every_task(family):
    tasks = build_family(family)
    assert_embeds(tasks, family_to_merged_task(tasks))


def dup_family():
    """Task 0: two positions both holding x0 at pos 0 (equal, distinct nodes), both read by a [MASK] predicting 1.
    Task 1: one x0 at pos 0 read by a [MASK] predicting 1."""
    t0 = make_task(2, [("x0", 0), ("x0", 0), ("[MASK]", 1)], [None, None, 1],
                   [[1, 0, 0], [0, 1, 0], [1, 1, 1]])
    t1 = make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 1], [[1, 0], [1, 1]])
    return [t0, t1]


def test_duplicate_copies_are_kept_and_reported():
    tasks = dup_family()
    merged = family_to_merged_task(tasks)
    # groups: {x0 nodes (3 of them)}, {MASK above two x0}, {MASK above one x0}
    assert merged.groups == 3
    assert merged.nodes == 4 and merged.copies == ((0, 2),)
    assert_embeds(tasks, merged)


def first_free_copy_family():
    """Issue 10: a -> a, then the 4-node task with parents [[], [], [1], [0, 2]], every node x0 (the JSON form).
    Taking the first free copy for node 0 (the chain's bottom) forces node 2 onto a new chain: 5 nodes, 4 suffice."""
    from hasse.theory.inputs.tasks import task_from_dict

    return [task_from_dict(item, "family") for item in [
        {"tokens": 2, "inputs": [["x0", 0]] * 2, "labels": [None] * 2, "mask": [[1, 0], [1, 1]]},
        {"tokens": 2, "inputs": [["x0", 0]] * 4, "labels": [None] * 4,
         "mask": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 1]]}]]


def quotient_minimum(tasks) -> int:
    """The reference: the smallest merged diagram by the solvers' quotient search, on diagrams rebuilt from raw rows."""
    from hasse.solvers.merge_search import min_merged_nodes
    from hasse.solvers.posets import task_diagram

    diagrams = [(d.inputs, d.lower) for d in map(task_diagram, tasks)]
    return min_merged_nodes(diagrams, sum(len(d[0]) for d in diagrams) + 1).nodes


def test_duplicates_in_a_down_set_merge_into_the_minimum():
    tasks = first_free_copy_family()
    merged = family_to_merged_task(tasks)
    assert merged.nodes == quotient_minimum(tasks) == 4 and merged.minimum
    assert merged.groups == 3 and merged.copies == ((0, 2),)  # two lone x0, the chain top, the top
    assert_embeds(tasks, merged)
    again = family_to_merged_task(tasks)  # deterministic
    assert again.node_of == merged.node_of and np.array_equal(again.task.mask, merged.task.mask)


def test_the_first_free_copy_is_not_minimum(monkeypatch):
    # the planted greedy choice (no exact search) gives 5 nodes on the same family: the test above can fail
    import hasse.theory.merge as merge

    monkeypatch.setattr(merge, "minimum_embedding", lambda *a, **k: (None, True))
    assert family_to_merged_task(first_free_copy_family()).nodes == 5


def test_a_search_cut_by_its_budget_says_so(monkeypatch):
    import hasse.theory.merge_copies as copies

    monkeypatch.setattr(copies, "STEP_BUDGET", 3)
    tasks = first_free_copy_family()
    merged = family_to_merged_task(tasks)
    assert not merged.minimum and merged.nodes >= quotient_minimum(tasks)
    assert_embeds(tasks, merged)


def test_exact_merge_matches_the_quotient_search_on_families_with_duplicates():
    # many equal nodes (two inputs, dense random orders) so that down-sets hold duplicates
    rng = np.random.default_rng(10)
    with_copies = 0
    for _ in range(120):
        tasks = []
        for _ in range(int(rng.integers(2, 4))):
            size = int(rng.integers(1, 6))
            mask = np.tril(rng.random((size, size)) < 0.4) | np.eye(size, dtype=bool)
            inputs = [("x0", 0) if rng.random() < 0.7 else ("[MASK]", 1) for _ in range(size)]
            tasks.append(make_task(2, inputs, [None] * size, mask))
        merged = family_to_merged_task(tasks)
        assert merged.nodes == quotient_minimum(tasks) and merged.minimum
        assert_embeds(tasks, merged)
        with_copies += bool(merged.copies)
    assert with_copies >= 10  # the duplicate-copies case really occurred


def test_random_families_embed():
    rng = np.random.default_rng(3)
    for _ in range(30):
        tasks = []
        for _ in range(int(rng.integers(1, 4))):
            size = int(rng.integers(1, 6))
            mask = np.tril(rng.random((size, size)) < 0.5)
            inputs = [(["x0", "x1", "[MASK]"][int(rng.integers(3))], int(rng.integers(2))) for _ in range(size)]
            labels = [None if rng.random() < 0.5 else int(rng.integers(2)) for _ in range(size)]
            tasks.append(make_task(2, inputs, labels, mask))
        merged = family_to_merged_task(tasks)
        assert merged.nodes >= merged.groups
        assert_embeds(tasks, merged)


# ---------------------------------------------------------------- sparse realisation


@pytest.mark.parametrize("spec", ["butterfly:n=5", "block_two_stream:n=8,block=2,variant=clique", "causal:n=6"])
def test_sparse_realisation_keeps_the_limit(spec):
    from hasse.theory.catalog import build_mask

    mask = build_mask(spec).matrix
    sparse = sparse_realisation(mask)
    dense, thin = mask_to_order(mask), mask_to_order(sparse)
    assert np.array_equal(dense.closure(), thin.closure())
    assert thin.classes == dense.classes and thin.hasse_edges == dense.hasse_edges
    assert sparse.sum() <= mask.sum() and thin.convergence_depth >= dense.convergence_depth


# ---------------------------------------------------------------- consistency


def test_block_two_stream_is_consistent_and_bad_design_is_not():
    family = build_family("block:n=8,block=2")
    assert check_consistency(build_task("block_two_stream:n=8,block=2"), family).consistent
    bad = build_task("bad_block_query_history:n=8,block=2")
    report = check_consistency(bad, family)
    assert not report.consistent
    # the offending nodes are exactly the queries of blocks >= 1, and they see earlier blocks' queries
    assert sorted(m.input[1] for m in report.mismatches) == list(range(2, 8))
    for m in report.mismatches:
        assert m.extra_upstream == tuple(("[MASK]", u) for u in range(2 * (m.input[1] // 2)))
        assert m.missing_upstream == ()


# ---------------------------------------------------------------- the commands


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_merge_infill_6_json(capsys):
    code, out, _ = run(capsys, "merge", "infill:n=6", "--json")
    data = json.loads(out)
    assert code == 0 and data["positions"] == 16 and data["nodes"] == 16 and data["formulas_hold"]
    merged = make_task(data["tokens"], data["inputs"], data["labels"], data["mask"])  # labels as task files write them
    assert_isomorphic(merged, build_task("butterfly:n=6"))
    assert len(data["node_of_position"]) == 16 and len(data["mapping"]) == 6


def test_merge_out_is_a_task_file(capsys, tmp_path):
    out = tmp_path / "merged.json"
    code, _, _ = run(capsys, "merge", "block:n=6,block=2", "--out", str(out))
    assert code == 0
    code, text, _ = run(capsys, "leak", str(out), "--json")
    assert code == 0 and json.loads(text)["leak_free"]
    code, text, _ = run(capsys, "analyze", str(out), "--json")
    assert code == 0 and json.loads(text)["positions"] == 10


def test_merge_sparse_and_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "m.png"
    code, out, _ = run(capsys, "merge", "ar:n=5", "--sparse", "--png", str(png))
    assert code == 0 and "it needs L* = 3 layers" in out and png.read_bytes()[:4] == b"\x89PNG"
    code, out, _ = run(capsys, "merge", "ar:n=5", "--sparse", "--json")
    assert json.loads(out)["sparse"]["convergence_depth"] == 3


def test_consistent_command(capsys):
    code, out, _ = run(capsys, "consistent", "block_two_stream:n=8,block=2", "--inference", "block:n=8,block=2")
    assert code == 0 and "CONSISTENT" in out
    code, out, _ = run(capsys, "consistent", "bad_block_query_history:n=8,block=2", "--inference",
                       "block:n=8,block=2")
    assert code == 1 and "Q7" in out and "[MASK]@5" in out
    code, out, _ = run(capsys, "consistent", "bad_block_query_history:n=8,block=2", "--inference",
                       "block:n=8,block=2", "--json")
    data = json.loads(out)
    assert not data["consistent"] and {m["name"] for m in data["mismatches"]} == {f"Q{t}" for t in range(2, 8)}


def family_file(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


GOOD_TASK = {"inputs": [["x0", 0], ["[MASK]", 1]], "labels": [None, 1], "mask": [[1, 0], [1, 1]]}


@pytest.mark.parametrize("name, data, needle", [
    ("empty.json", {"tokens": 2, "tasks": []}, "empty family"),
    ("mixed.json", {"tasks": [{**GOOD_TASK, "tokens": 2}, {**GOOD_TASK, "tokens": 3}]}, "different token counts"),
    ("malformed.json", {"tokens": 2, "tasks": [GOOD_TASK, {**GOOD_TASK, "inputs": [["y", 0], ["x0", 1]]}]},
     "task 1"),
    ("broken.json", '{"tokens": 2, "tasks": [\n', "line 2 column 1"),
    ("single.json", {**GOOD_TASK, "tokens": 2}, "tasks"),
])
def test_bad_family_input_exit_2(capsys, tmp_path, name, data, needle):
    path = family_file(tmp_path, name, data)
    code, out, err = run(capsys, "merge", str(path))
    assert code == 2 and needle in err and name in err and err.count("\n") == 1, err


def test_family_file_merges(capsys, tmp_path):
    path = family_file(tmp_path, "fam.json", {"tokens": 2, "tasks": [GOOD_TASK, GOOD_TASK]})
    code, out, _ = run(capsys, "merge", str(path), "--json")
    data = json.loads(out)
    assert code == 0 and data["nodes"] == 2 and data["task_nodes"] == 4

"""The built-in tasks (theory.tasks): families, case studies, prior art and bad designs.

Every expected task below is written out by hand from the layouts of design.md §4 and
prior_art.md (mask rows are queries q, columns keys k, 1 = q attends k), not computed
by the code under test. The bad designs' flaws are checked directly on the matrix and
the inputs, with a small breadth-first search written here, not with theory.leak.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from hasse.theory.catalog import build_mask, build_spec, build_task, entries, get_entry
from hasse.theory.errors import InputError
from hasse.theory.masks import build_block_two_stream, build_butterfly
from hasse.theory.task import Task, parse_symbol
from hasse.theory.inputs.tasks import task_from_dict, task_to_dict
from hasse.theory.tasks import (
    ar_family,
    ar_task,
    bad_block_own_content,
    bad_block_query_history,
    bad_butterfly_crossed,
    bad_butterfly_self,
    bad_mlm_unmasked,
    bad_packed_window,
    block_family,
    block_task,
    block_two_stream_task,
    butterfly_task,
    infill_family,
    infill_task,
    packed,
)


def rows(text: str) -> np.ndarray:
    """``"10 11"`` -> [[1, 0], [1, 1]] as bool."""
    return np.array([[c == "1" for c in r] for r in text.split()], dtype=bool)


def X(*indices):
    """Clean tokens at their own position ids: X(0, 1) -> [("x0", 0), ("x1", 1)]."""
    return [(f"x{i}", i) for i in indices]


def MASKS(*positions):
    return [("[MASK]", p) for p in positions]


# spec -> (names, inputs, labels (None = unsupervised), mask rows, isolate)
EXPECTED = {
    "ar:n=4,k=2": (
        "0 1", X(0, 1), [None, 2],
        "10 "
        "11", ()),
    "block:n=4,block=2,b=0,variant=chain": (
        "Q0 Q1", MASKS(0, 1), [0, 1],
        "10 "
        "11", ()),
    "block:n=4,block=2,b=1,variant=chain": (
        "C0 C1 Q2 Q3", X(0, 1) + MASKS(2, 3), [None, None, 2, 3],
        "1000 "
        "1100 "
        "1110 "
        "1111", ()),
    "block:n=4,block=2,b=1,variant=clique": (
        "C0 C1 Q2 Q3", X(0, 1) + MASKS(2, 3), [None, None, 2, 3],
        "1000 "
        "1100 "
        "1111 "
        "1111", ()),
    # left arm empty; right arm B1 B2 B3 read anti-causally; centre last, one-sided
    "infill:n=4,k=0": (
        "B1 B2 B3 P0", X(1, 2, 3) + [("agg(x1)", 0)], [None, None, None, 0],
        "1110 "
        "0110 "
        "0010 "
        "1111", ()),
    "infill:n=4,k=2": (
        "F0 F1 B3 P2", X(0, 1, 3) + [("agg(x1,x3)", 2)], [None, None, None, 2],
        "1000 "
        "1100 "
        "0010 "
        "1111", ()),
    "infill:n=4,k=3": (
        "F0 F1 F2 P3", X(0, 1, 2) + [("agg(x2)", 3)], [None, None, None, 3],
        "1000 "
        "1100 "
        "1110 "
        "1111", ()),
    "infill:n=1,k=0": ("P0", MASKS(0), [0], "1", ()),
    "block_two_stream:n=4,block=2,variant=chain": (
        "C0 C1 Q0 Q1 Q2 Q3", X(0, 1) + MASKS(0, 1, 2, 3), [None, None, 0, 1, 2, 3],
        "100000 "
        "110000 "
        "001000 "
        "001100 "
        "110010 "
        "110011", ()),
    "butterfly:n=3": (
        "F0 F1 B1 B2 P0 P1 P2",
        X(0, 1, 1, 2) + [("agg(x1)", 0), ("agg(x0,x2)", 1), ("agg(x1)", 2)],
        [None, None, None, None, 0, 1, 2],
        "1000000 "  # F0: F0
        "1100000 "  # F1: F0 F1
        "0011000 "  # B1: B1 B2
        "0001000 "  # B2: B2
        "0011100 "  # P0: B1 B2, itself
        "1001010 "  # P1: F0, B2, itself
        "1100001", ()),  # P2: F0 F1, itself
    "butterfly:n=1": ("P0", MASKS(0), [0], "1", ()),
    "causal_lm:n=3": (
        "0 1 2", X(0, 1, 2), [1, 2, None],
        "100 "
        "110 "
        "111", ()),
    "mlm:n=4,masked=1+3": (
        "0 1 2 3", [("x0", 0), ("[MASK]", 1), ("x2", 2), ("[MASK]", 3)], [None, 1, None, 3],
        "1111 1111 1111 1111", ()),
    "bd3lm:n=4,block=2": (
        "xt0 xt1 xt2 xt3 x0_0 x0_1 x0_2 x0_3", MASKS(0, 1, 2, 3) + X(0, 1, 2, 3), [0, 1, 2, 3] + [None] * 4,
        "11000000 "
        "11000000 "
        "00111100 "  # xt2: own noised block, clean block 0
        "00111100 "
        "00001100 "
        "00001100 "
        "00001111 "
        "00001111", ()),
    # ranks: x2 first, then x0, then x1
    "xlnet:order=2+0+1": (
        "c0 c1 c2 g0 g1 g2", X(0, 1, 2) + MASKS(0, 1, 2), [None, None, None, 0, 1, 2],
        "101000 "
        "111000 "
        "001000 "
        "001100 "
        "101010 "
        "000001", ()),
    "packed:lengths=2+3,window=0": (
        "0 1 2 3 4", X(0, 1, 2, 3, 4), [1, None, 3, 4, None],
        "10000 "
        "11000 "
        "00100 "
        "00110 "
        "00111", ((0, 1), (2, 3, 4))),
    "packed:lengths=2+3,window=2": (
        "0 1 2 3 4", X(0, 1, 2, 3, 4), [1, None, 3, 4, None],
        "10000 "
        "11000 "
        "00100 "
        "00110 "
        "00011", ((0, 1), (2, 3, 4))),
    # ---- bad designs
    "bad_butterfly_self:n=2": (
        "F0 B1 P0 P1", X(0, 1, 0, 1), [None, None, 0, 1],
        "1000 "
        "0100 "
        "0110 "
        "1001", ()),
    "bad_butterfly_crossed:n=3": (
        "F0 F1 B1 B2 P0 P1 P2",
        X(0, 1, 1, 2) + [("agg(x1)", 0), ("agg(x0,x2)", 1), ("agg(x1)", 2)],
        [None, None, None, None, 0, 1, 2],
        "1011000 "  # F0: F0 and every B
        "1111000 "  # F1: F0 F1 and every B
        "0011000 "
        "0001000 "
        "0011100 "
        "1001010 "
        "1100001", ()),
    "bad_block_own_content:n=4,block=2": (
        "C0 C1 C2 C3 Q0 Q1 Q2 Q3", X(0, 1, 2, 3) + MASKS(0, 1, 2, 3), [None] * 4 + [0, 1, 2, 3],
        "10000000 "
        "11000000 "
        "11100000 "
        "11110000 "
        "11001000 "  # Q0: C0 C1 (its own block), itself
        "11001100 "
        "11110010 "
        "11110011", ()),
    "bad_mlm_unmasked:n=3": ("0 1 2", X(0, 1, 2), [0, 1, 2], "111 111 111", ()),
    "bad_packed_window:lengths=2+2,window=2": (
        "0 1 2 3", X(0, 1, 2, 3), [1, None, 3, None],
        "1000 "
        "1100 "
        "0110 "  # 2 (document 1) attends 1 (document 0)
        "0011", ((0, 1), (2, 3))),
    "bad_block_query_history:n=4,block=2": (
        "C0 C1 Q0 Q1 Q2 Q3", X(0, 1) + MASKS(0, 1, 2, 3), [None, None, 0, 1, 2, 3],
        "100000 "
        "110000 "
        "001000 "
        "001100 "
        "111110 "  # Q2 also sees Q0 Q1
        "111111", ()),
}


@pytest.mark.parametrize("spec", EXPECTED)
def test_task_matches_hand_written(spec):
    names, inputs, labels, mask, isolate = EXPECTED[spec]
    task = build_task(spec)
    assert task.name == spec
    assert task.names == tuple(names.split())
    assert task.inputs == tuple(inputs)
    assert task.labels == tuple(() if t is None else (t,) for t in labels)
    assert task.mask.astype(int).tolist() == rows(mask).astype(int).tolist()
    assert task.isolate == isolate


@pytest.mark.parametrize("spec", EXPECTED)
def test_builder_names_its_task_by_the_canonical_spec(spec):
    """Built from Python, a task carries the same name (and is the same task) as built from its spec."""
    entry_spec, built = build_spec(spec, "task")
    assert entry_spec.canonical == spec
    assert built == build_task(spec)


@pytest.mark.parametrize("spec", EXPECTED)
def test_task_json_round_trip(spec):
    task = build_task(spec)
    assert task_from_dict(task_to_dict(task), "t.json") == task
    assert len(set(task.names)) == task.size


# ---------------------------------------------------------------------------- sizes


@pytest.mark.parametrize("n", range(1, 8))
def test_infill_members_have_n_positions(n):
    for k in range(n):
        task = infill_task(n, k)
        assert task.size == n and task.tokens == n
        assert task.supervised == (n - 1,) and task.labels[-1] == (k,)


@pytest.mark.parametrize("n", range(1, 9))
def test_butterfly_has_3n_minus_2_positions(n):
    task = butterfly_task(n)
    assert task.size == 3 * n - 2
    assert task.names == build_butterfly(n).names
    assert np.array_equal(task.mask, build_butterfly(n).matrix)  # the catalogue mask, unchanged
    assert sorted(t for ts in task.labels for t in ts) == list(range(n))  # every token predicted once


@pytest.mark.parametrize("n", range(1, 9))
def test_block_two_stream_sizes(n):
    for block in (d for d in range(1, n + 1) if n % d == 0):
        for variant in ("chain", "clique"):
            task = block_two_stream_task(n, block, variant)
            assert task.size == 2 * n - block
            assert np.array_equal(task.mask, build_block_two_stream(n, block, variant).matrix)
            for b in range(n // block):
                member = block_task(n, block, b, variant)
                assert member.size == b * block + block
                assert member.supervised == tuple(range(b * block, b * block + block))


@pytest.mark.parametrize("n", range(2, 8))
def test_family_sizes_and_members(n):
    assert ar_family(n) == tuple(ar_task(n, k) for k in range(1, n))
    assert len(ar_family(n)) == n - 1
    assert [t.size for t in ar_family(n)] == list(range(1, n))
    assert infill_family(n) == tuple(infill_task(n, k) for k in range(n))
    assert len(infill_family(n)) == n
    for block in (d for d in range(1, n + 1) if n % d == 0):
        family = block_family(n, block, "clique")
        assert len(family) == n // block
        assert family == tuple(block_task(n, block, b, "clique") for b in range(n // block))
    assert all(t.tokens == n for t in ar_family(n) + infill_family(n))


def test_family_entries_build_tuples_of_tasks():
    _, family = build_spec("infill:n=3", "family")
    assert family == infill_family(3)
    _, family = build_spec("block:n=4,block=2", "family")
    assert [t.name for t in family] == ["block:n=4,block=2,b=0,variant=chain", "block:n=4,block=2,b=1,variant=chain"]
    _, family = build_spec("ar:n=3", "family")
    assert all(isinstance(t, Task) for t in family) and len(family) == 2


# ---------------------------------------------------------------------------- catalogue


def test_catalogue_builds_tasks_and_keeps_masks_first():
    task = build_task("infill:n=5,k=2")
    assert task.name == "infill:n=5,k=2" and task.size == 5 and task.labels[-1] == (2,)
    mask = build_mask("butterfly:n=4")  # a mask entry too: the mask wins where a MASK is expected
    assert mask.spec == "butterfly:n=4" and np.array_equal(mask.matrix, build_butterfly(4).matrix)
    assert get_entry("butterfly").kind == "mask"
    assert get_entry("butterfly", "task").kind == "task"
    assert np.array_equal(build_mask("infill:n=4,k=2").matrix, infill_task(4, 2).mask)  # a task used as a MASK


def test_every_entry_is_registered_with_a_one_line_summary():
    tasks = {e.name: e for e in entries("task")}
    families = {e.name: e for e in entries("family")}
    assert set(tasks) == {
        "ar", "ar_merged", "block", "infill", "block_two_stream", "butterfly", "causal_lm", "mlm", "bd3lm", "xlnet", "packed",
        "bad_butterfly_self", "bad_butterfly_crossed", "bad_block_own_content", "bad_mlm_unmasked",
        "bad_packed_window", "bad_block_query_history",
        # the families of `hasse derive` (issue 25): members, derived layouts, published designs
        "mae", "mae2d", "masked_diffusion", "masked_context", "mae_published",
        "any_order", "any_order_two_stream", "sigma_gpt", "fim", "fim_causal", "fim_published",
        "mtp", "mtp_registers", "mutor", "mtp_heads", "block_mixture", "block_mixture_merged", "bd3lm_batch",
    }
    assert set(families) == {"ar", "block", "infill", "mae", "mae2d", "masked_diffusion", "any_order", "fim", "mtp",
                             "block_mixture"}
    for entry in (*tasks.values(), *families.values()):
        assert entry.summary and "\n" not in entry.summary
    for name, entry in tasks.items():
        if name.startswith("bad_"):
            assert "must find" in entry.summary or "inconsistent" in entry.summary
    assert [p.name for p in tasks["mlm"].params] == ["n", "masked"] and tasks["mlm"].params[1].kind == "int_list"
    assert tasks["packed"].param("window").default == 0


BAD_SPECS = {
    "ar:n=4,k=0": "k = 0 is out of range",
    "ar:n=4,k=4": "k = 4 is out of range",
    "ar:n=1,k=1": "n must be at least 2",
    "block:n=4,block=2,b=2": "b = 2 is out of range",
    "block:n=4,block=3,b=0": "block = 3 does not divide n = 4",
    "block:n=4,block=2,b=0,variant=star": "variant must be one of chain, clique",
    "infill:n=3,k=3": "k = 3 is out of range",
    "infill:n=3,k=-1": "k = -1 is out of range",
    "infill:n=0,k=0": "n must be a positive integer",
    "block_two_stream:n=6,block=4": "block = 4 does not divide n = 6",
    "butterfly:n=0": "n must be a positive integer",
    "causal_lm:n=0": "n must be a positive integer",
    "mlm:n=3,masked=3": "masked index 3 is out of range",
    "mlm:n=3,masked=1+1": "masked index 1 is given twice",
    "bd3lm:n=3,block=2": "block = 2 does not divide n = 3",
    "xlnet:order=0+2": "order must be a permutation",
    "packed:lengths=2+0": "lengths must be positive",
    "packed:lengths=2+2,window=-1": "window must be a non-negative integer",
    "bad_packed_window:lengths=2+2,window=0": "window must be a positive integer",
    "bad_block_own_content:n=4,block=3": "block = 3 does not divide n = 4",
    "bad_block_query_history:n=2,block=4": "block = 4 does not divide n = 2",
    "bad_butterfly_crossed:n=0": "n must be a positive integer",
}


@pytest.mark.parametrize("spec", BAD_SPECS)
def test_bad_task_spec_raises_input_error_naming_the_spec(spec):
    with pytest.raises(InputError) as info:
        build_task(spec)
    assert str(info.value).startswith(spec + ": ")
    assert BAD_SPECS[spec] in str(info.value)


@pytest.mark.parametrize("spec, words", [
    ("ar:n=1", "n must be at least 2"),
    ("block:n=5,block=2", "block = 2 does not divide n = 5"),
    ("infill:n=0", "n must be a positive integer"),
])
def test_bad_family_spec_raises_input_error_naming_the_spec(spec, words):
    with pytest.raises(InputError) as info:
        build_spec(spec, "family")
    assert str(info.value).startswith(spec + ": ") and words in str(info.value)


# ---------------------------------------------------------------------------- the flaws, checked directly


def hops_from_holders(task: Task, target: int) -> list[float]:
    """Fewest attention edges from any position holding ``target`` to each position (inf if none).

    A plain breadth-first search over ``k -> q`` for ``M[q, k]``, written here so the
    tests do not depend on the kit's leak code.
    """
    dist = [float("inf")] * task.size
    queue = deque()
    for p, (symbol, _) in enumerate(task.inputs):
        if target in parse_symbol(symbol).sources:
            dist[p] = 0
            queue.append(p)
    while queue:
        k = queue.popleft()
        for q in np.flatnonzero(task.mask[:, k]):
            if dist[q] == float("inf"):
                dist[q] = dist[k] + 1
                queue.append(int(q))
    return dist


def leak_depths(task: Task) -> dict[int, float]:
    """Position -> fewest hops from a holder of one of its targets (inf when it is clean)."""
    return {p: min(hops_from_holders(task, t)[p] for t in task.labels[p]) for p in task.supervised}


@pytest.mark.parametrize("n", range(1, 7))
def test_good_case_studies_have_no_path_from_a_target(n):
    assert set(leak_depths(butterfly_task(n)).values()) == {float("inf")}
    for k in range(n):
        assert set(leak_depths(infill_task(n, k)).values()) == {float("inf")}
    for block in (d for d in range(1, n + 1) if n % d == 0):
        assert set(leak_depths(block_two_stream_task(n, block)).values()) == {float("inf")}
        assert set(leak_depths(bad_block_query_history(n, block)).values()) == {float("inf")}  # leak-free too


@pytest.mark.parametrize("n", range(1, 7))
def test_bad_butterfly_self_holds_its_target_at_every_p(n):
    task = bad_butterfly_self(n)
    good = butterfly_task(n)
    assert np.array_equal(task.mask, good.mask) and task.labels == good.labels
    for p in task.supervised:
        (k,) = task.labels[p]
        assert task.inputs[p] == (f"x{k}", k) and task.names[p] == f"P{k}"
    assert set(leak_depths(task).values()) == {0}


@pytest.mark.parametrize("n", range(1, 7))
def test_bad_butterfly_crossed_leaks_through_the_forward_stream_at_depth_2(n):
    task = bad_butterfly_crossed(n)
    at = {name: p for p, name in enumerate(task.names)}
    M = task.mask
    good = butterfly_task(n).mask
    extra = np.argwhere(M & ~good)
    assert {(task.names[q][0], task.names[k][0]) for q, k in extra} <= {("F", "B")}
    assert len(extra) == (n - 1) ** 2  # F_i -> B_j for every i, j
    depths = leak_depths(task)
    for m in range(1, n):
        p = at[f"P{m}"]
        # the witness B_m -> F_j -> P_m exists for every j < m ...
        assert all(M[at[f"F{j}"], at[f"B{m}"]] and M[p, at[f"F{j}"]] for j in range(m))
        # ... and no shorter path: nothing P_m attends (itself included) holds x_m
        assert not any(m in parse_symbol(task.inputs[k][0]).sources for k in np.flatnonzero(M[p]))
        assert depths[p] == 2
    assert depths[at["P0"]] == float("inf")  # P_0 attends no forward position
    smallest = min(n for n in range(1, 7) if min(leak_depths(bad_butterfly_crossed(n)).values()) < float("inf"))
    assert smallest == 2


@pytest.mark.parametrize("n, block", [(1, 1), (2, 1), (2, 2), (4, 2), (6, 3), (6, 2)])
def test_bad_block_own_content_lets_q_t_attend_c_t(n, block):
    task = bad_block_own_content(n, block)
    assert task.size == 2 * n
    for t in range(n):
        c, q = t, n + t
        assert task.inputs[c] == (f"x{t}", t) and task.inputs[q] == ("[MASK]", t)
        assert task.mask[q, c]  # the flaw: its own content, one hop away
        assert task.labels[q] == (t,)
    assert set(leak_depths(task).values()) == {1}


@pytest.mark.parametrize("n", range(1, 5))
def test_bad_mlm_unmasked_labels_clean_tokens(n):
    task = bad_mlm_unmasked(n)
    assert task.mask.all()
    assert task.inputs == tuple((f"x{i}", i) for i in range(n)) and task.labels == tuple((i,) for i in range(n))
    assert set(leak_depths(task).values()) == {0}


@pytest.mark.parametrize("lengths", [(2, 2), (1, 1), (3, 1, 2), (2, 3)])
@pytest.mark.parametrize("window", [1, 2, 3])
def test_bad_packed_window_crosses_document_boundaries(lengths, window):
    task = bad_packed_window(lengths, window)
    good = packed(lengths)
    assert (task.inputs, task.labels, task.isolate) == (good.inputs, good.labels, good.isolate)
    doc = {p: d for d, group in enumerate(task.isolate) for p in group}
    crossing = [(q, k) for q, k in np.argwhere(task.mask) if doc[q] != doc[k]]
    assert not [(q, k) for q, k in np.argwhere(good.mask) if doc[q] != doc[k]]
    if window == 1:
        assert not crossing
    else:  # the first position of each later document attends the last one of the document before it
        for group, previous in zip(task.isolate[1:], task.isolate):
            assert (group[0], previous[-1]) in {(int(q), int(k)) for q, k in crossing}
    assert set(leak_depths(task).values()) <= {float("inf")}  # isolation, not a leak


@pytest.mark.parametrize("n, block", [(2, 1), (4, 2), (6, 2), (6, 3), (3, 3)])
def test_bad_block_query_history_adds_exactly_earlier_block_queries(n, block):
    task = bad_block_query_history(n, block)
    good = block_two_stream_task(n, block, "chain")
    assert (task.inputs, task.labels, task.names) == (good.inputs, good.labels, good.names)
    added = {(task.names[q], task.names[k]) for q, k in np.argwhere(task.mask & ~good.mask)}
    expected = {(f"Q{t}", f"Q{u}") for t in range(n) for u in range(n) if u // block < t // block}
    assert added == expected
    assert not (good.mask & ~task.mask).any()


def test_each_module_prints_its_examples(capsys):
    from hasse.theory.tasks import bad, case_studies, families, prior_art

    for module in (families, case_studies, prior_art, bad):
        module.main()
    out = capsys.readouterr().out
    assert "row q attends column k" in out and "bad_block_query_history:n=4,block=2" in out

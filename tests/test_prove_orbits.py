"""``hasse prove NAME --n N --orbits`` (issue 14): invariance declared and checked, same verdicts as the labelled run.

- every mask and engine theorem declares whether its statement is invariant under
  relabelling positions, with a sentence; those that claim it give the same flag on
  M and on P M Pᵀ for random masks and permutations (and a planted non-invariant
  predicate fails that check);
- the representatives cover every labelled mask exactly once per class at n <= 4,
  checked against a brute-force canonical form written here;
- --orbits at n = 4 and 5 gives the verdicts of the labelled exhaustive run;
  a planted bug (closure one squaring short) is still refuted via the orbits;
  a theorem that is not invariant is refused (exit 2); an incomplete enumeration
  or a predicate that changes under relabelling is never proved.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from hasse.cli import main
from hasse.proofs import orbit_cover as cover
from hasse.proofs import orbits_check as oc
from hasse.proofs import registry
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, run_theorem
from hasse.solvers import exhaustive as ex
from hasse.solvers import orbits
from hasse.theory import batch
from hasse.theory.errors import InputError
from tests.planted import closure_one_squaring_short

LEVEL = registry.MASK_THEOREMS + registry.ENGINE_THEOREMS
PREORDERS = (1, 1, 4, 29, 355, 6942, 209527, 9535241)  # OEIS A000798, written out here
INVARIANT = [x for x in LEVEL if registry.get(x).invariant is not None]
RUNNABLE = [x for x in INVARIANT if oc.refusal(registry.get(x)) is None]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def random_masks(rng, n, count, diagonal=False):
    masks = rng.random((count, n, n)) < rng.uniform(0.1, 0.6)
    if not diagonal:
        masks[:, np.arange(n), np.arange(n)] = False
    return masks


def flags_agree_under_relabelling(flag, n, rng, count=256, diagonal=False) -> bool:
    """The independent invariance check: ``flag`` on M and on P M Pᵀ, random M and random P."""
    masks = random_masks(rng, n, count, diagonal)
    base = np.asarray(flag(batch.pack(masks)), dtype=bool)
    for _ in range(4):
        p = rng.permutation(n)
        moved = masks[:, p][:, :, p]
        if not np.array_equal(np.asarray(flag(batch.pack(moved)), dtype=bool), base):
            return False
    return True


def brute_canonical(n):
    """Smallest index over all n! relabellings, for every zero-diagonal mask of size n (the reference)."""
    total = ex.space_size(n)
    masks = batch.unpack(batch.masks_from_indices(n, np.arange(total, dtype=np.uint64)), n)
    best = np.full(total, np.iinfo(np.uint64).max, dtype=np.uint64)
    for perm in itertools.permutations(range(n)):
        p = np.array(perm)
        idx, ok = ex.encode(n, batch.pack(masks[:, p][:, :, p]))
        assert ok.all()
        np.minimum(best, idx, out=best)
    return best


# ---------------------------------------------------------------- invariance declared and checked

@pytest.mark.parametrize("name", LEVEL)
def test_every_mask_level_theorem_says_whether_it_is_invariant(name):
    t = registry.get(name)
    assert (t.invariant is None) != (t.not_invariant is None), "exactly one of invariant / not_invariant"
    why = t.invariant or t.not_invariant
    assert isinstance(why, str) and len(why.split()) >= 8 and "\n" not in why


@pytest.mark.parametrize("name", INVARIANT)
def test_invariant_theorems_give_the_same_flag_on_relabelled_masks(name):
    t = registry.get(name)
    rng = np.random.default_rng(14)
    for n in (2, 3, 4, 5, 6):
        assert flags_agree_under_relabelling(t.flag, n, rng, diagonal=t.diagonal), (name, n)


@pytest.mark.parametrize("name", LEVEL)
def test_the_statement_sheet_says_why(name, capsys):
    from hasse.proofs.cli import script_main

    t = registry.get(name)
    with pytest.raises(SystemExit):
        script_main(t, ["--help"])
    text = " ".join(capsys.readouterr().out.split())
    why = t.invariant or t.limit_only or t.not_invariant
    assert "relabelling" in text and " ".join(why.split())[:60] in text


ENGINE_FLAGS = [x for x in registry.ENGINE_THEOREMS if registry.get(x).flag is not None]


@pytest.mark.parametrize("name", ENGINE_FLAGS)
def test_engine_theorems_agree_on_relabelled_masks_but_stay_refused(name):
    """The engine theorems pass the same random relabelling check; it cannot make them eligible (next test)."""
    t = registry.get(name)
    rng = np.random.default_rng(14)
    for n in (3, 4, 5):
        assert flags_agree_under_relabelling(t.flag, n, rng, count=24), (name, n)
    assert oc.refusal(t) is not None and "could treat positions differently" in oc.refusal(t)


def test_a_position_dependent_engine_bug_is_what_the_refusal_guards_against(monkeypatch):
    """A bug in the engine that only a labelling triggers: the class representative misses it, the labels do not."""
    from hasse.theory import sparse

    real = sparse.sparse_realisation

    def buggy(mask):  # wrong only when position 0 attends position n-1 and nothing else attends n-1
        out = np.array(real(mask), dtype=bool)
        m = np.asarray(mask, dtype=bool)
        if m[0, -1] and m[:, -1].sum() == 1:
            out[0, 0] = False
        return out

    monkeypatch.setattr(sparse, "sparse_realisation", buggy)
    t = registry.get("engine_matches_definitions")
    assert not flags_agree_under_relabelling(t.flag, 4, np.random.default_rng(3), count=48)


def test_the_invariance_check_fires_on_a_planted_non_invariant_predicate():
    def position_zero_attends(rows):  # M[0, 1]: depends on which position is called 0
        return (rows[0] & 2) != 0

    assert not flags_agree_under_relabelling(position_zero_attends, 4, np.random.default_rng(0))


def test_not_invariant_theorems_are_named():
    assert "sparse_realisation_keeps_hasse" not in INVARIANT
    assert not set(registry.ENGINE_THEOREMS) & set(INVARIANT)
    assert set(RUNNABLE) >= {"reach_monotone_in_depth", "limit_is_preorder", "hasse_closure_is_limit"}


def test_every_mask_level_theorem_runs_with_orbits():
    """Issue 14's done criterion: every mask-level theorem of design §5 has an enumeration under --orbits."""
    kinds = {name: cover.kind_of(registry.get(name)) for name in registry.MASK_THEOREMS}
    assert None not in kinds.values(), kinds
    assert kinds["sparse_realisation_keeps_hasse"] == cover.LIMITS
    assert kinds["no_residual_can_oscillate"] == cover.LOOPS


# ---------------------------------------------------------------- the cover argument, against brute force

@pytest.mark.parametrize("method", ["fallback", "auto"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_representatives_are_one_per_class(n, method):
    canon = brute_canonical(n)
    classes = np.unique(canon)
    reps = np.concatenate([ex.encode(n, rows)[0] for rows in cover.orbit_batches(n, method)])
    assert reps.size == classes.size == cover.expected(n, method)
    assert np.array_equal(np.unique(canon[reps.astype(np.int64)]), classes)  # every class, once


# ---------------------------------------------------------------- same verdicts as the labelled run

@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("name", registry.MASK_THEOREMS)
def test_orbits_give_the_labelled_verdict(name, n):
    t = registry.get(name)
    labelled = run_theorem(t, n, "exhaustive")
    via = oc.run_orbits(t, n)
    assert via.method == "exhaustive-orbits" and via.verdict == labelled.verdict == PROVED
    kind = cover.kind_of(t)
    assert via.space == cover.expected(n, "auto", kind) == {cover.CLASSES: orbits.CLASS_COUNTS[n],
                                                         cover.LOOPS: orbits.CLASS_COUNTS[n] * 2 ** n,
                                                         cover.LIMITS: PREORDERS[n]}[kind]
    if t.existence:  # proved by a witness, which the labelled re-check confirms
        assert t.recheck("witness", n, via.witness) is None
    else:
        assert via.checked == via.space
    assert ("invariant under relabelling" if kind != cover.LIMITS else "only through its limit") in via.details["cover"]


def test_fallback_enumeration_gives_the_same_verdicts():
    for name in RUNNABLE:
        r = oc.run_orbits(registry.get(name), 4, method="fallback")
        assert r.verdict == PROVED and r.details["enumeration"].startswith("canonical")
        assert r.checked == (218 if not r.details["existence"] else r.checked)


def test_a_planted_bug_is_still_refuted_via_orbits(monkeypatch):
    closure_one_squaring_short(monkeypatch)
    t = registry.get("limit_is_preorder")
    for n in (3, 4):
        labelled = run_theorem(t, n, "exhaustive")
        via = oc.run_orbits(t, n)
        assert labelled.verdict == via.verdict == REFUTED
        mask = np.array(via.counterexample["mask"], dtype=bool)
        assert np.array_equal(ex.decode(n, via.counterexample["index"]), mask)
        limit = batch.unpack(batch.closure(batch.pack(mask[None])), n)[0]  # what the buggy code computes
        q, j, k = via.counterexample["triple"]
        assert limit[q, j] and limit[j, k] and not limit[q, k]
    # the theorem's independent re-check (a correct closure) does not confirm it: the bug is in the engine
    assert t.recheck("counterexample", n, via.counterexample) == "the counterexample is not confirmed when re-checked"


def test_a_non_invariant_theorem_is_refused():
    t = registry.get("sparse_realisation_keeps_hasse")
    with pytest.raises(InputError, match="--orbits refused"):
        oc.run_orbits(dataclasses.replace(t, limit_only=None), 4)
    fake = dataclasses.replace(registry.get("limit_is_preorder"), invariant=None, not_invariant="planted")
    with pytest.raises(InputError, match="planted"):
        oc.run_orbits(fake, 4)


def test_a_predicate_that_changes_under_relabelling_is_never_proved():
    t = dataclasses.replace(registry.get("limit_is_preorder"), flag=lambda rows: (rows[0] & 2) != 0)
    r = oc.run_orbits(t, 4)
    assert r.verdict == UNKNOWN and "not invariant" in r.reason


def test_an_incomplete_enumeration_is_never_proved():
    t = registry.get("limit_is_preorder")
    batches = cover.collect(4)
    first = batches[0][:, 1:]  # one representative left out
    r = oc.run_orbits(t, 4, Context(), batches=[first, *batches[1:]])
    assert r.verdict == UNKNOWN and "scan incomplete" in r.reason
    twice = oc.run_orbits(t, 4, Context(), batches=[batches[0][:, :1], *batches])  # one repeated: not more
    assert twice.verdict == PROVED and twice.checked == 218
    missing = oc.run_orbits(t, 4, Context(), batches=[np.concatenate([batches[0][:, :1], first], axis=1)[:, :-1]])
    assert missing.verdict == UNKNOWN


# ---------------------------------------------------------------- the command line

def test_cli_prove_all_orbits(capsys, tmp_path):
    cert = tmp_path / "c.json"
    code, out, err = run(capsys, "prove", "all", "--n", "4", "--orbits", "--certificate", str(cert))
    assert code == 0, out + err
    assert "exhaustive-orbits" in out and "engine_matches_definitions" in err and "not run" in err
    results = json.loads(cert.read_text())["results"]
    assert {r["theorem"] for r in results} == set(registry.MASK_THEOREMS)
    assert all(r["method"] == "exhaustive-orbits" and r["verdict"] == PROVED and r["details"]["cover"]
               for r in results)
    assert {r["checked"] for r in results if r["details"]["kind"] == cover.CLASSES} == {218}
    code, out, err = run(capsys, "certificate", "verify", str(cert))
    assert code == 0, out + err


@pytest.mark.parametrize("argv", [["leak_search_is_exact", "--n", "4", "--orbits"],
                                  ["engine_matches_definitions", "--n", "3", "--orbits"],
                                  ["limit_is_preorder", "--n", "4", "--orbits", "--method", "z3"],
                                  ["limit_is_preorder", "--n", "4", "--orbits", "--shard", "2/2"],
                                  ["limit_is_preorder", "--n", "4", "--orbits", "--combine", "part.json"],
                                  ["limit_is_preorder", "--n", "9", "--orbits"]])
def test_cli_refusals_are_one_line_exit_2(capsys, argv):
    code, out, err = run(capsys, "prove", *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_existence_statements_via_orbits():
    base = registry.get("limit_is_preorder")
    n = 4
    full = (1 << n) - 1

    def complete(rows):  # invariant: every off-diagonal entry set (one class)
        return np.all([(rows[q] | (1 << q)) == full for q in range(n)], axis=0)

    found = oc.run_orbits(dataclasses.replace(base, existence=True, flag=complete), n)
    assert found.verdict == PROVED and np.array(found.witness["mask"]).sum() == n * (n - 1)
    none = oc.run_orbits(dataclasses.replace(base, existence=True, flag=lambda rows: np.zeros(rows.shape[1], bool)), n)
    assert none.verdict == REFUTED and none.checked == 218
    cut = oc.run_orbits(dataclasses.replace(base, existence=True, flag=lambda rows: np.zeros(rows.shape[1], bool)),
                        n, Context(), batches=[cover.collect(n)[0][:, 1:]])
    assert cut.verdict == UNKNOWN  # no witness among an incomplete enumeration: not refuted


# ---------------------------------------------------------------- masks with loops; limits (preorders)

def brute_canonical_with_loops(n):
    """Smallest index (diagonal numbering) over all relabellings, for every mask of size n with its diagonal."""
    total = ex.space_size(n, diagonal=True)
    masks = batch.unpack(batch.masks_from_indices(n, np.arange(total, dtype=np.uint64), diagonal=True), n)
    best = np.full(total, np.iinfo(np.uint64).max, dtype=np.uint64)
    for perm in itertools.permutations(range(n)):
        p = np.array(perm)
        idx, ok = ex.encode(n, batch.pack(masks[:, p][:, :, p]), diagonal=True)
        np.minimum(best, idx, out=best)
    return best


@pytest.mark.parametrize("n", [1, 2, 3])
def test_representatives_with_loops_cover_every_mask(n):
    canon = brute_canonical_with_loops(n)
    reps = np.concatenate([ex.encode(n, rows, diagonal=True)[0] for rows in cover.orbit_batches(n, "auto", cover.LOOPS)])
    assert reps.size == np.unique(reps).size == cover.expected(n, "auto", cover.LOOPS)
    assert np.array_equal(np.unique(canon[reps.astype(np.int64)]), np.unique(canon))  # every class present


def test_a_diagonal_statement_is_proved_only_on_the_whole_loops_cover():
    base = registry.get("no_residual_can_oscillate")
    n = 3
    never = dataclasses.replace(base, existence=False, flag=lambda rows: np.zeros(rows.shape[1], bool))
    r = oc.run_orbits(never, n)
    assert r.verdict == PROVED and r.checked == 16 * 8
    cut = oc.run_orbits(never, n, Context(), batches=list(cover.orbit_batches(n, "auto", cover.LOOPS))[:-1])
    assert cut.verdict == UNKNOWN and "scan incomplete" in cut.reason  # one set of loops left out


def test_the_limits_are_every_closure():
    """The preorder masks at n <= 4 are exactly the limits of every mask, each once (brute force)."""
    for n in range(1, 5):
        every = batch.masks_from_indices(n, np.arange(ex.space_size(n), dtype=np.uint64))
        limits = batch.closure(every) & ~batch.identity(n, every.shape[1])
        want = np.unique(ex.encode(n, limits)[0])
        got = np.concatenate([ex.encode(n, rows)[0] for rows in cover.orbit_batches(n, "auto", cover.LIMITS)])
        assert got.size == np.unique(got).size == PREORDERS[n]
        assert np.array_equal(np.sort(got), want)


def test_sparse_realisation_reads_a_mask_only_through_its_limit():
    """The declaration behind LIMITS, checked independently on random masks of sizes 2 … 7."""
    t = registry.get("sparse_realisation_keeps_hasse")
    rng = np.random.default_rng(14)
    for n in range(2, 8):
        masks = batch.pack(random_masks(rng, n, 300))
        limits = batch.closure(masks) & ~batch.identity(n, masks.shape[1])
        assert np.array_equal(t.flag(masks), t.flag(limits))


def test_the_limit_control_fires_on_a_predicate_reading_the_mask():
    t = registry.get("sparse_realisation_keeps_hasse")
    planted = dataclasses.replace(t, flag=lambda rows: t.flag(rows) | ((rows[0] & 2) != 0) & ((rows[1] & 1) == 0))
    r = oc.run_orbits(planted, 4)
    assert r.verdict == UNKNOWN and "more of a mask than its limit" in r.reason


def test_a_planted_bug_in_the_sparse_realisation_is_refuted_via_limits(monkeypatch):
    real = batch.sparse_realisation

    def reversed_cycles(rows):  # every class's cycle run the other way (keeps R*, breaks (0) and (b))
        out = real(rows)
        n = rows.shape[0]
        masks = batch.unpack(out, n)
        eye = np.eye(n, dtype=bool)
        limit = batch.unpack(batch.closure(rows), n)
        same = limit & limit.transpose(0, 2, 1)
        inner = masks & same & ~eye
        return batch.pack((masks & ~inner) | inner.transpose(0, 2, 1) | eye)

    monkeypatch.setattr(batch, "sparse_realisation", reversed_cycles)
    t = registry.get("sparse_realisation_keeps_hasse")
    labelled = run_theorem(t, 4, "exhaustive")
    via = oc.run_orbits(t, 4)
    assert labelled.verdict == via.verdict == REFUTED
    mask = np.array(via.counterexample["mask"], dtype=bool)
    assert np.array_equal(ex.decode(4, via.counterexample["index"]), mask)
    assert t.flag(batch.pack(mask[None]))[0]


@pytest.mark.parametrize("n", [5, 6, pytest.param(7, marks=pytest.mark.slow)])
def test_preorder_counts(n):
    rows = list(cover.orbit_batches(n, "auto", cover.LIMITS))
    assert sum(r.shape[1] for r in rows) == PREORDERS[n]
    index = np.concatenate([ex.encode(n, r)[0] for r in rows])
    assert np.unique(index).size == PREORDERS[n]
    for r in rows[:3]:  # each is the zero-diagonal mask of a preorder: its own limit
        assert np.array_equal(batch.closure(r) & ~batch.identity(n, r.shape[1]), r)


def test_the_count_only_path_of_n_7_is_never_proved_on_a_short_enumeration(monkeypatch):
    """Above DISTINCT_LIMIT (n = 7) masks are counted, not deduplicated: a dropped one is still caught."""
    monkeypatch.setattr(oc, "DISTINCT_LIMIT", 0)
    t = registry.get("limit_is_preorder")
    batches = cover.collect(4)
    whole = oc.run_orbits(t, 4, Context(), batches=batches)
    assert whole.verdict == PROVED and whole.checked == 218 and "nauty" in whole.details["completeness"]
    short = oc.run_orbits(t, 4, Context(), batches=[batches[0][:, 1:], *batches[1:]])
    assert short.verdict == UNKNOWN and "checked 217 masks of the 218" in short.reason


# ---------------------------------------------------------------- the content of a part (issue 20)

@pytest.mark.parametrize("n, kind, k", [(4, cover.CLASSES, 3), (5, cover.CLASSES, 7), (3, cover.LOOPS, 4), (4, cover.LIMITS, 5),
                                        (2, cover.CLASSES, 5)])
def test_the_parts_partition_the_enumeration_and_their_digests_are_recomputed(n, kind, k):
    """Parts are disjoint, their union is the enumeration; ``contents`` (one pass) equals ``content`` part by part."""
    whole = np.concatenate([ex.encode(n, rows, diagonal=kind == cover.LOOPS)[0] for rows in cover.orbit_batches(n, "auto", kind)])
    mine = [[ex.encode(n, rows, diagonal=kind == cover.LOOPS)[0] for rows in cover.orbit_batches(n, "auto", kind, (i, k))]
            for i in range(k)]
    mine = [np.concatenate(m) if m else np.zeros(0, np.uint64) for m in mine]
    assert sum(m.size for m in mine) == whole.size == cover.expected(n, "auto", kind)
    assert np.array_equal(np.sort(np.concatenate(mine)), np.sort(whole))  # every mask in exactly one part
    each = [cover.content(n, "auto", kind, (i, k)) for i in range(k)]
    assert cover.contents(n, "auto", kind, k) == each
    assert [size for size, _ in each] == [m.size for m in mine]
    prefixes = [max(m.size - 1, 0) for m in mine]  # the first masks up to a hit
    assert cover.contents(n, "auto", kind, k, prefixes) == [cover.content(n, "auto", kind, (i, k), prefixes[i])
                                                         for i in range(k)]


def test_a_run_records_the_digest_of_what_it_checked():
    t = registry.get("limit_is_preorder")
    whole = oc.run_orbits(t, 4)
    assert whole.details["digest"] == {"sha256": cover.content(4)[1], "masks": 218}
    parts = oc.run_many([t], 4, [Context()], part=(1, 3))[0]
    assert parts.details["digest"]["sha256"] == cover.content(4, part=(1, 3))[1] != whole.details["digest"]["sha256"]
    cut = oc.run_orbits(t, 4, Context(), batches=[cover.collect(4)[0][:, 1:]])  # another set of masks: another digest
    assert cut.details["digest"]["sha256"] != whole.details["digest"]["sha256"]

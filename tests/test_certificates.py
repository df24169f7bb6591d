"""Complete or not proved, and certificates that check themselves (issue 10, points 2 and 3).

Every checker here is shown able to fail: the two enumeration bugs of the issue
are planted (a scan that skips the first mask of every later batch, a decoder that
never sets M[q, q+1]) and come out ``unknown``; generator bugs of the task-level
classes come out ``unknown``; and forged certificates — a three-line hand-written
file, wrong n, checked != range, overlapping and gapped ranges, mixed theorems,
methods, n and fingerprints, a refuted part with its counterexample deleted, a
bogus counterexample, an all-zero witness, missing fields, wrong types, huge
integers, deep nesting — are each refused with one line and exit 2 (or, by
``hasse certificate verify``, reported with exit 1). Expected sizes come from
closed forms and independent enumerations, never from the code under test.
"""

from __future__ import annotations

import copy
import json
import os

import numpy as np
import pytest

from hasse.cli import main
from hasse.proofs import fingerprint as fp
from hasse.proofs import registry
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, run_theorem
from hasse.solvers import class_sizes, dags, task_sets
from hasse.solvers import exhaustive as ex
from hasse.theory import batch

STABLE = "reach_stable_by_n_minus_1"
OSC = "no_residual_can_oscillate"


@pytest.fixture(autouse=True)
def frozen_sources(monkeypatch):
    """Others edit the tree while tests run: one snapshot of the sources per test keeps fingerprints stable."""
    snapshot = fp.source_hashes()
    monkeypatch.setattr(fp, "source_hashes", lambda: dict(snapshot))


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def prove(name, n, method="exhaustive", **ctx):
    return run_theorem(registry.get(name), n, method, Context(**ctx))


# ---------------------------------------------------------------- complete or not proved: masks


def skip_first_of_later_batches(monkeypatch):
    real = ex._rows

    def rows(n, diagonal, a, b, size):
        out = real(n, diagonal, a, b, size)
        return out[:, 1:] if a > 0 and a % size == 0 else out

    monkeypatch.setattr(ex, "_rows", rows)


def never_set_q_q1(monkeypatch):
    real = batch.masks_from_indices

    def decode(n, indices, *, diagonal=False):
        rows = real(n, indices, diagonal=diagonal)
        for q in range(n - 1):
            rows[q] &= ~rows.dtype.type(1 << (q + 1))
        return rows

    monkeypatch.setattr(batch, "masks_from_indices", decode)
    ex._low_rows.cache_clear()


def test_a_full_scan_is_proved_with_the_closed_form_count():
    r = prove(STABLE, 4)
    assert r.verdict == PROVED and r.checked == r.space == 2 ** (4 * 3)


def test_planted_skip_of_the_first_mask_of_every_later_batch_is_unknown(monkeypatch):
    skip_first_of_later_batches(monkeypatch)
    r = prove(STABLE, 5)
    batches = 2 ** 20 // ex.default_batch(5)
    assert r.verdict == UNKNOWN and r.checked == 2 ** 20 - (batches - 1)
    assert r.reason == f"scan incomplete: checked {2 ** 20 - (batches - 1):,} of {2 ** 20:,}"  # 1,048,561


def test_planted_skip_in_the_scan_loop_is_unknown(monkeypatch):
    """The same bug one level up: the loop steps one past the end of each batch."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(ex._scan))
    assert source.count("        pos = end\n") == 1
    namespace = dict(vars(ex))
    exec(source.replace("        pos = end\n", "        pos = end + 1 if end < b else end\n"), namespace)
    monkeypatch.setattr(ex, "_scan", namespace["_scan"])
    r = prove(STABLE, 5)
    batches = 2 ** 20 // ex.default_batch(5)
    assert r.verdict == UNKNOWN and r.reason == f"scan incomplete: checked {2 ** 20 - (batches - 1):,} of {2 ** 20:,}"


def test_planted_skip_is_caught_with_workers_too(monkeypatch):
    monkeypatch.setattr(ex, "default_batch", lambda n: 256)  # 16 batches of n = 4, spread over two workers
    skip_first_of_later_batches(monkeypatch)
    r = prove(STABLE, 4, workers=2)
    assert r.verdict == UNKNOWN and r.checked == 4096 - 15 and "scan incomplete" in r.reason


def test_planted_decoder_that_never_sets_m_q_q_plus_1_is_unknown(monkeypatch):
    never_set_q_q1(monkeypatch)
    for n in (4, 5):
        r = prove(STABLE, n)
        # the masks the broken decoder can reach: n - 1 of the n(n-1) bits are stuck at 0
        assert r.verdict == UNKNOWN and r.checked == 2 ** (n * (n - 1) - (n - 1)), r
        assert r.reason.startswith("scan incomplete")
    ex._low_rows.cache_clear()


def test_an_existence_statement_needs_the_whole_space_to_be_refuted(monkeypatch):
    never_set_q_q1(monkeypatch)
    monkeypatch.setattr(batch, "power_cycle", lambda rows: (np.zeros(rows.shape[1], int),) * 2)  # no witness
    r = prove(OSC, 2)
    assert r.verdict == UNKNOWN and "scan incomplete" in r.reason
    ex._low_rows.cache_clear()


def test_encode_is_the_inverse_of_the_numbering():
    for n, diagonal in ((3, False), (3, True), (4, False)):
        total = class_sizes.masks(n, diagonal)
        idx = np.arange(min(total, 4096), dtype=np.uint64)
        got, ok = ex.encode(n, batch.masks_from_indices(n, idx, diagonal=diagonal), diagonal)
        assert ok.all() and (got == idx).all()
    rows = batch.masks_from_indices(3, np.arange(4, dtype=np.uint64))
    rows[1] |= 2  # a diagonal entry: not a mask of the zero-diagonal class
    assert not ex.encode(3, rows)[1][0]


# ---------------------------------------------------------------- complete or not proved: task classes


def test_class_sizes_match_independent_enumerations_and_known_sequences():
    assert [class_sizes.natural_posets(k) for k in range(7)] == [1, 1, 2, 7, 40, 357, 4824]  # OEIS A006455
    assert [class_sizes.coloured_posets(k, 1) for k in range(1, 6)] == [1, 2, 5, 16, 63]  # OEIS A000112
    assert [len(class_sizes._labelled_orders(k)) for k in range(1, 6)] == [1, 3, 19, 219, 4231]  # OEIS A001035
    for k in range(1, 5):
        assert class_sizes.coloured_posets(k) == len(dags.labelled_dags(k))
        assert class_sizes.natural_posets(k) == len(dags.hasse_shapes(k))  # closures vs covers: a bijection
    for n in range(1, 5):
        assert class_sizes.small_families(n) == sum(1 for _ in task_sets.small_families(n))
        assert class_sizes.rooted_diagrams(n) == sum(1 for _ in dags.rooted_hasse_diagrams(n))
        assert class_sizes.builtin_families(n) == len(task_sets.builtin_families(n))


def test_planted_empty_composition_class_is_unknown(monkeypatch):
    def compositions(n):  # the bug: range(1, n) drops the one-part composition (n) at every level
        if n == 0:
            yield ()
            return
        for first in range(1, n):
            for rest in compositions(n - first):
                yield (first, *rest)

    monkeypatch.setattr(task_sets, "compositions", compositions)
    r = prove("merged_task_embeds_every_task", 3)
    assert r.verdict == UNKNOWN and r.reason.startswith("scan incomplete")
    assert r.space == class_sizes.builtin_families(3) + 68


def test_planted_block_specs_without_l_equal_n_is_unknown(monkeypatch):
    real = task_sets.block_specs
    monkeypatch.setattr(task_sets, "block_specs", lambda n: [s for s in real(n) if f"block={n}," not in s])
    r = prove("block_two_stream_is_leak_free_and_consistent", 4)
    assert r.verdict == UNKNOWN and r.reason == f"scan incomplete: checked 3 of {class_sizes.block_designs(4)}"


# ---------------------------------------------------------------- certificates: genuine ones


@pytest.fixture
def shards(tmp_path, capsys):
    """Three exhaustive shards of reach_stable_by_n_minus_1 at n = 4, and their paths."""
    paths = []
    for i in range(3):
        path = tmp_path / f"part{i}.json"
        code, _, _ = cli(capsys, "prove", STABLE, "--n", "4", "--method", "exhaustive", "--shard", f"{i}/3",
                         "--certificate", str(path))
        assert code == 3
        paths.append(path)
    return paths


def edit(path, change, out=None):
    data = json.loads(path.read_text())
    change(data)
    target = out or path
    target.write_text(json.dumps(data))
    return target


def combine(capsys, *paths, n=4, name=STABLE, extra=()):
    return cli(capsys, "prove", name, "--n", str(n), "--combine", *map(str, paths), *extra)


def combined(capsys, certificate, *paths, n=4, name=STABLE):
    """``hasse prove NAME --n N --combine PATHS --certificate CERTIFICATE --json``: (exit code, its one result,
    stderr)."""
    code, out, err = combine(capsys, *paths, n=n, name=name, extra=("--certificate", str(certificate), "--json"))
    return code, json.loads(out)["results"][0], err


def verified(capsys, path, fraction):
    """``hasse certificate verify PATH --recheck FRACTION --json``: (exit code, the report, stdout and stderr)."""
    code, out, err = cli(capsys, "certificate", "verify", str(path), "--recheck", fraction, "--json")
    return code, json.loads(out), out + err


def refused(capsys, *paths, n=4, name=STABLE, match=""):
    code, out, err = combine(capsys, *paths, n=n, name=name)
    assert code == 2 and "PROVED" not in out, (code, out, err)
    assert len(err.strip().splitlines()) == 1 and match in err, err
    return err


def test_genuine_shards_combine_and_verify(shards, capsys, tmp_path):
    full = tmp_path / "full.json"
    code, result, _ = combined(capsys, full, *shards)
    assert code == 0 and result["verdict"] == PROVED and result["checked"] == result["space"] == 4096
    for fraction in ("0", "0.5", "1.0"):
        code, report, _ = verified(capsys, full, fraction)
        assert code == 0 and report["agrees"]
    assert report["results"][0]["rechecked"] == 4096


def test_shards_of_method_both_combine_per_method(tmp_path, capsys):
    paths = []
    for i in range(2):
        paths.append(tmp_path / f"both{i}.json")
        cli(capsys, "prove", STABLE, "--n", "3", "--method", "both", "--shard", f"{i}/2", "--certificate",
            str(paths[-1]))
    code, out, _ = cli(capsys, "prove", STABLE, "--n", "3", "--combine", *map(str, paths), "--json")
    results = {r["method"]: r for r in json.loads(out)["results"]}
    assert code == 0 and set(results) == {"exhaustive", "z3"}
    assert results["exhaustive"]["checked"] == 64 and results["z3"]["verdict"] == PROVED


# ---------------------------------------------------------------- certificates: forgeries, each refused


def test_forged_three_line_file(tmp_path, capsys):
    f = tmp_path / "f.json"
    f.write_text('{"certificate": "hasse proof", "results": [\n{"theorem": "reach_stable_by_n_minus_1", "n": 6, '
                 '"method": "exhaustive", "verdict": "proved", "checked": 1073741824,\n'
                 '"details": {"total": 1073741824, "range": [0, 1073741824], "complete": true}}]}\n')
    refused(capsys, f, n=6)
    assert cli(capsys, "certificate", "verify", str(f))[0] == 2


def test_forged_wrong_n(shards, capsys):
    refused(capsys, *shards, n=5, match="n = 4")
    edit(shards[1], lambda d: d["results"][0].update(n=5))  # one part claims another n
    refused(capsys, *shards, match="n = 5")


def test_forged_checked_not_equal_to_the_range(shards, capsys):
    edit(shards[1], lambda d: d["results"][0].update(checked=d["results"][0]["checked"] - 1))
    refused(capsys, *shards, match="checked 1,364 of the 1,365 masks")
    edit(shards[1], lambda d: d["results"][0].update(checked=5000))
    refused(capsys, *shards, match="more than")


def test_forged_overlapping_and_gapped_ranges(shards, capsys):
    edit(shards[1], lambda d: d["results"][0]["details"].update(range=[1000, 2730]))
    refused(capsys, *shards, match="overlap")
    edit(shards[1], lambda d: d["results"][0].update(checked=1330, details={"range": [1400, 2730], "partial": True}))
    refused(capsys, *shards, match="missing")
    refused(capsys, shards[0], shards[2], match="masks 1,365 to 2,729 missing")


def test_forged_mixed_theorems_methods_n_and_fingerprints(shards, capsys, tmp_path):
    other = tmp_path / "other.json"
    cli(capsys, "prove", "limit_is_preorder", "--n", "4", "--method", "exhaustive", "--shard", "1/3",
        "--certificate", str(other))
    refused(capsys, shards[0], other, shards[2], match="mixed theorems")
    both = tmp_path / "both.json"
    cli(capsys, "prove", STABLE, "--n", "4", "--method", "both", "--shard", "1/3", "--certificate", str(both))
    refused(capsys, shards[0], both, shards[2], match="mixed methods")
    small = tmp_path / "small.json"
    cli(capsys, "prove", STABLE, "--n", "3", "--method", "exhaustive", "--shard", "1/3", "--certificate", str(small))
    refused(capsys, shards[0], small, shards[2], match="n = 3")
    edit(shards[1], lambda d: d["results"][0]["fingerprint"].update(sha256="0" * 64))
    refused(capsys, *shards, match="mixed fingerprints")
    for p in shards:  # all parts agree with each other, but ran other code than this checkout
        edit(p, lambda d: d["results"][0]["fingerprint"].update(sha256="0" * 64))
    refused(capsys, *shards, match="other code than this checkout")
    edit(shards[1], lambda d: d["results"][0]["versions"].update(hasse="9.9"))
    refused(capsys, *shards, match="mixed kit versions")


def refuted_shard(tmp_path, capsys, monkeypatch, path):
    """A shard refuted by a planted engine bug (its counterexample is bogus: the theorem is true)."""
    real = batch.closure
    monkeypatch.setattr(batch, "closure", lambda rows, squarings=None: real(rows, 0))
    cli(capsys, "prove", "limit_is_preorder", "--n", "4", "--method", "exhaustive", "--shard", "1/2",
        "--certificate", str(path))
    monkeypatch.setattr(batch, "closure", real)
    assert json.loads(path.read_text())["results"][0]["verdict"] == REFUTED
    return path


def test_forged_refuted_part_without_counterexample_or_with_a_bogus_one(tmp_path, capsys, monkeypatch):
    good = tmp_path / "good.json"
    cli(capsys, "prove", "limit_is_preorder", "--n", "4", "--method", "exhaustive", "--shard", "0/2",
        "--certificate", str(good))
    bad = refuted_shard(tmp_path, capsys, monkeypatch, tmp_path / "bad.json")
    refused(capsys, good, bad, name="limit_is_preorder", match="counterexample is not flagged when re-checked")
    deleted = edit(bad, lambda d: d["results"][0].pop("counterexample"), tmp_path / "deleted.json")
    refused(capsys, good, deleted, name="limit_is_preorder", match="refuted without a counterexample")
    moved = edit(bad, lambda d: d["results"][0]["counterexample"].update(index=3000), tmp_path / "moved.json")
    refused(capsys, good, moved, name="limit_is_preorder", match="decodes to another mask")
    code, out, _ = cli(capsys, "certificate", "verify", str(bad))
    assert code == 1 and "not flagged when re-checked" in out


def test_forged_all_zero_witness(tmp_path, capsys):
    cert = tmp_path / "osc.json"
    assert cli(capsys, "prove", OSC, "--n", "3", "--certificate", str(cert))[0] == 0
    assert cli(capsys, "certificate", "verify", str(cert), "--recheck", "1.0")[0] == 0
    for i in (0, 1):  # the exhaustive witness (with its index) and the Z3 one (mask only)
        zero = edit(cert, lambda d: d["results"][i]["witness"].update(mask=[[0] * 3] * 3), tmp_path / f"z{i}.json")
        code, out, _ = cli(capsys, "certificate", "verify", str(zero))
        assert code == 1 and "witness" in out
    zero = edit(cert, lambda d: [d["results"].pop(1), d["results"][0]["witness"].update(index=0, mask=[[0] * 3] * 3)],
                tmp_path / "zero.json")
    refused(capsys, zero, n=3, name=OSC, match="witness is not flagged")


@pytest.mark.parametrize("change, match", [
    (lambda r: r.pop("verdict"), "missing field 'verdict'"),
    (lambda r: r.pop("fingerprint"), "missing field 'fingerprint'"),
    (lambda r: r.update(n="4"), "'n' must be int"),
    (lambda r: r.update(checked=1365.0), "'checked' must be int"),
    (lambda r: r.update(n=True), "'n' must be int"),
    (lambda r: r["details"].update(range=["0", "1365"]), "details.range"),
    (lambda r: r.update(verdict="PROVEN"), "verdict must be"),
    (lambda r: r.update(theorem="all_masks_are_fine"), "unknown theorem"),
    (lambda r: r.update(checked=10 ** 30), ""),  # huge integers: refused by the JSON reader or the field check
    (lambda r: r.update(n=10 ** 30), ""),
    (lambda r: r["details"].update(range=[0, 2 ** 200]), ""),
    (lambda r: r.update(n=9), "out of range"),  # beyond a numbered scan
    (lambda r: r["details"].update(range=[0, 5000]), "details.range"),  # beyond the 4,096 masks of n = 4
    (lambda r: r.update(seconds=float("inf")), "seconds"),
    (lambda r: r["fingerprint"].update(sha256="not hex"), "fingerprint.sha256"),
])
def test_forged_fields(shards, capsys, change, match):
    edit(shards[0], lambda d: change(d["results"][0]))
    refused(capsys, *shards, match=match)
    code, _, err = cli(capsys, "certificate", "verify", str(shards[0]))
    assert code == 2 and match in err


@pytest.mark.parametrize("text", ['{"certificate": "hasse proof", "format": 2, "results": [{"n": ' + "9" * 5000 + "}]}",
                                  "[" * 100_000 + "]" * 100_000, "", '{"results": []}', "[1, 2]",
                                  '{"certificate": "hasse proof", "format": 1, "results": [{}]}'])
def test_forged_files_huge_integers_deep_nesting_and_other_shapes(tmp_path, capsys, text):
    f = tmp_path / "f.json"
    f.write_text(text)
    refused(capsys, f)
    assert cli(capsys, "certificate", "verify", str(f))[0] == 2


# ---------------------------------------------------------------- verify: fingerprints, re-runs


def test_verify_names_the_files_that_differ(tmp_path, capsys):
    cert = tmp_path / "c.json"
    cli(capsys, "prove", STABLE, "--n", "3", "--method", "exhaustive", "--certificate", str(cert))

    def tamper(d):
        d["sources"]["theory/reach.py"] = "0" * 64
        d["results"][0]["fingerprint"]["sha256"] = "1" * 64

    edit(cert, tamper)
    code, out, _ = cli(capsys, "certificate", "verify", str(cert))
    assert code == 1 and "fingerprint differs" in out and "theory/reach.py changed" in out


def test_verify_reruns_catch_a_changed_engine(tmp_path, capsys, monkeypatch):
    cert = tmp_path / "c.json"
    assert cli(capsys, "prove", "limit_is_preorder", "--n", "4", "--method", "exhaustive", "--certificate",
               str(cert))[0] == 0
    real = batch.closure
    monkeypatch.setattr(batch, "closure", lambda rows, squarings=None: real(rows, 0))  # the checkout now disagrees
    assert cli(capsys, "certificate", "verify", str(cert))[0] == 0  # nothing re-run: nothing to see
    code, out, _ = cli(capsys, "certificate", "verify", str(cert), "--recheck", "1.0")
    assert code == 1 and "re-run of masks" in out


def test_verify_samples_a_fraction_of_the_chunks(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ex, "default_batch", lambda n: 256)  # 16 chunks at n = 4
    cert = tmp_path / "c.json"
    cli(capsys, "prove", STABLE, "--n", "4", "--method", "exhaustive", "--certificate", str(cert))
    code, out, _ = cli(capsys, "certificate", "verify", str(cert), "--recheck", "0.25", "--seed", "7", "--json")
    report = json.loads(out)["results"][0]
    assert code == 0 and report["reruns"] == 4 and report["rechecked"] == 4 * 256
    for bad in ("1.5", "-0.1", "nan"):
        assert cli(capsys, "certificate", "verify", str(cert), "--recheck", bad)[0] == 2


# ---------------------------------------------------------------- writing certificates


def test_certificate_never_overwrites_an_input(shards, capsys):
    before = shards[1].read_bytes()
    code, _, err = cli(capsys, "prove", STABLE, "--n", "4", "--combine", *map(str, shards), "--certificate",
                       str(shards[1]))
    assert code == 2 and "would overwrite the input" in err and shards[1].read_bytes() == before
    link = shards[1].parent / "link.json"
    os.symlink(shards[1], link)
    assert cli(capsys, "prove", STABLE, "--n", "4", "--combine", *map(str, shards), "--certificate", str(link))[0] == 2


def test_certificate_is_written_atomically(tmp_path, capsys, monkeypatch):
    cert = tmp_path / "c.json"
    cli(capsys, "prove", STABLE, "--n", "3", "--method", "exhaustive", "--certificate", str(cert))
    before = cert.read_bytes()

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    code, _, err = cli(capsys, "prove", STABLE, "--n", "2", "--method", "exhaustive", "--certificate", str(cert))
    assert code == 2 and "No space left" in err
    assert cert.read_bytes() == before and os.listdir(tmp_path) == ["c.json"]  # old file intact, no temporary left


def test_certificate_refuses_a_fifo_and_a_missing_folder(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = cli(capsys, "prove", STABLE, "--n", "2", "--method", "exhaustive", "--certificate", str(fifo))
    assert code == 2 and "not a regular file" in err
    code, _, err = cli(capsys, "prove", STABLE, "--n", "2", "--certificate", str(tmp_path / "no" / "c.json"))
    assert code == 2 and "cannot write" in err
    assert cli(capsys, "certificate", "verify", str(fifo))[0] == 2


def test_a_copy_of_a_genuine_result_keeps_its_structure(tmp_path, capsys):
    """Sanity of the forgery tests: an unedited round trip is accepted (so each refusal above is the edit's)."""
    cert = tmp_path / "c.json"
    cli(capsys, "prove", STABLE, "--n", "3", "--method", "exhaustive", "--certificate", str(cert))
    copy_ = edit(cert, lambda d: copy.deepcopy(d), tmp_path / "copy.json")
    assert cli(capsys, "certificate", "verify", str(copy_), "--recheck", "1")[0] == 0


# ---------------------------------------------------------------- --orbits parts bound to their content (issue 20)

ORB = "limit_is_preorder"
CLASSES_5 = 9608  # OEIS A000273: isomorphism classes of loopless digraphs on 5 nodes, written out here
ORB_FORGERIES = ["relabelled", "part 0 twice", "digest edited", "digest of another part", "part missing"]


@pytest.fixture
def orbit_shards(tmp_path):
    """The three --orbits parts of limit_is_preorder at n = 5, each in its own certificate."""
    from hasse.proofs import orbits_check as oc
    from hasse.proofs.certificates.format import write_certificate

    paths = []
    for i in range(3):
        path = tmp_path / f"orbits{i}.json"
        write_certificate(str(path), oc.run_many([registry.get(ORB)], 5, [Context()], part=(i, 3)))
        paths.append(path)
    return paths


def results_in(path) -> list[dict]:
    return json.loads(path.read_text())["results"]


def with_results(template, results, out):
    """A certificate like ``template`` holding ``results`` instead (written to ``out``)."""
    return edit(template, lambda d: d.update(results=results), out)


def forged_orbit_parts(orbit_shards, forgery):
    from tests.orbit_forgeries import forgeries

    forged = forgeries([results_in(p)[0] for p in orbit_shards]).get(forgery)
    if forged is None:
        pytest.skip("every part has part 0's size here: a copy with another part's digest is that part's claim")
    return forged


def test_genuine_orbit_parts_combine_and_verify(orbit_shards, capsys, tmp_path):
    full = tmp_path / "full.json"
    code, result, err = combined(capsys, full, *orbit_shards, n=5, name=ORB)
    assert code == 0, err
    assert (result["verdict"], result["checked"], result["space"]) == (PROVED, CLASSES_5, CLASSES_5)
    assert [p["part"] for p in result["details"]["parts"]] == [[i, 3] for i in range(3)]
    for path in (full, *orbit_shards):
        for fraction in ("0", "1.0"):
            code, report, said = verified(capsys, path, fraction)
            assert code == 0 and report["agrees"], said
    # the command line writes the same part: hasse prove --orbits --shard i/k
    cli_part = tmp_path / "cli1.json"
    assert cli(capsys, "prove", ORB, "--n", "5", "--orbits", "--shard", "1/3", "--certificate", str(cli_part))[0] == 3
    got, want = results_in(cli_part)[0], results_in(orbit_shards[1])[0]
    assert (got["checked"], got["details"]["digest"], got["details"]["part"]) == \
        (want["checked"], want["details"]["digest"], [1, 3])


@pytest.mark.parametrize("forgery", ORB_FORGERIES)
def test_forged_orbit_parts_are_refused_by_combine(orbit_shards, capsys, tmp_path, forgery):
    forged = forged_orbit_parts(orbit_shards, forgery)
    paths = [with_results(orbit_shards[0], [r], tmp_path / f"forged{i}.json") for i, r in enumerate(forged)]
    err = refused(capsys, *paths, n=5, name=ORB)
    assert "cannot combine" in err


@pytest.mark.parametrize("forgery", ORB_FORGERIES)
def test_forged_orbit_parts_are_refused_by_verify(orbit_shards, capsys, tmp_path, forgery):
    """The forgery as the parts listed in a combined certificate, and each forged part's own certificate."""
    from hasse.proofs.certificates.format import write_certificate
    from hasse.proofs.distributed import combine_orbits

    forged = forged_orbit_parts(orbit_shards, forgery)
    full = tmp_path / "full.json"  # as the Dask engine writes it (hasse prove --orbits --engine dask)
    write_certificate(str(full), [combine_orbits(ORB, 5, [results_in(p)[0] for p in orbit_shards], 3)])
    assert cli(capsys, "certificate", "verify", str(full))[0] == 0
    listing = [{"part": r["details"]["part"], "verdict": r["verdict"], "checked": r["checked"],
                "seconds": r["seconds"], "digest": r["details"]["digest"]} for r in forged]
    combined = edit(full, lambda d: d["results"][0]["details"].update(parts=listing), tmp_path / "combined.json")
    code, out, err = cli(capsys, "certificate", "verify", str(combined))
    assert code == 1 and "DIFFERS" in out, out + err
    genuine = [results_in(p)[0] for p in orbit_shards]
    for i, r in enumerate(forged):
        if r in genuine:
            continue
        alone = with_results(orbit_shards[0], [r], tmp_path / f"alone{i}.json")
        code, out, err = cli(capsys, "certificate", "verify", str(alone))
        assert code == 1 and ("digest" in out or "holds" in out), out + err


def test_forged_whole_orbit_results_are_refused(orbit_shards, capsys, tmp_path):
    """A hand-made --orbits result claiming every class: without a digest, with too few masks, with a part's digest."""
    full = tmp_path / "full.json"
    assert cli(capsys, "prove", ORB, "--n", "5", "--orbits", "--certificate", str(full))[0] == 0
    assert cli(capsys, "certificate", "verify", str(full))[0] == 0
    part0 = results_in(orbit_shards[0])[0]["details"].get("digest")
    for name, change in (("nodigest", lambda r: r["details"].pop("digest", None)),
                         ("few", lambda r: r.update(checked=5)),
                         ("partdigest", lambda r: r["details"].update(digest=part0))):
        forged = edit(full, lambda d: change(d["results"][0]), tmp_path / f"{name}.json")
        code, out, err = cli(capsys, "certificate", "verify", str(forged))
        assert code == 1 and "DIFFERS" in out, (name, out + err)
        refused(capsys, forged, n=5, name=ORB)


# ---------------------------------------------------------------- labelled shards: gaps, counts, labels (issue 20)


def span_shard(tmp_path, a, b, name=STABLE, n=4):
    from hasse.proofs.certificates.format import write_certificate

    path = tmp_path / f"span{a}.json"
    write_certificate(str(path), [prove(name, n, span=(a, b))])
    return path


def test_a_one_mask_gap_between_two_shards_is_refused(tmp_path, capsys):
    refused(capsys, span_shard(tmp_path, 0, 2000), span_shard(tmp_path, 2001, 4096), match="masks 2,000 to 2,000 missing")
    assert combine(capsys, span_shard(tmp_path, 0, 2000), span_shard(tmp_path, 2000, 4096))[0] == 0  # no gap


def test_a_one_mask_gap_is_refused_by_the_counts_too(tmp_path, capsys, monkeypatch):
    """Issue 20 (item 8): the partition loop planted one mask short; the counts still refuse the gap."""
    import inspect
    import textwrap

    from hasse.proofs.certificates import combine as cc

    source = textwrap.dedent(inspect.getsource(cc._combine_ranges))
    assert source.count("        if a > pos:\n") == 1
    namespace = dict(vars(cc))
    exec(source.replace("        if a > pos:\n", "        if a > pos + 1:\n"), namespace)
    monkeypatch.setattr(cc, "_combine_ranges", namespace["_combine_ranges"])
    refused(capsys, span_shard(tmp_path, 0, 2000), span_shard(tmp_path, 2001, 4096),
            match="the parts checked 4,095 masks of the 4,096")


def test_a_relabelled_labelled_shard_is_refused(shards, capsys, tmp_path):
    """A shard's label must name its range; a copy under another label covers nothing new."""
    copied = edit(shards[0], lambda d: d["results"][0]["details"].update(shard="1/3"), tmp_path / "copy.json")
    refused(capsys, shards[0], copied, shards[2], match="overlap")
    label = edit(shards[1], lambda d: d["results"][0]["details"].update(shard="0/3"), tmp_path / "label.json")
    refused(capsys, shards[0], label, shards[2], match="its shard 0/3 is masks")


def test_hostile_orbit_part_numbers_and_sizes_are_refused_at_once(orbit_shards, capsys, tmp_path):
    """A part count of 10^12, a listing that claims 10^12 parts, n beyond --orbits: one line, no enumeration of it."""
    huge = edit(orbit_shards[1], lambda d: d["results"][0]["details"].update(part=[1, 10 ** 12]), tmp_path / "k.json")
    refused(capsys, orbit_shards[0], huge, orbit_shards[2], n=5, name=ORB, match="mixed part counts")
    alone = [edit(p, lambda d: d["results"][0]["details"].update(part=[i, 10 ** 12]), tmp_path / f"k{i}.json")
             for i, p in enumerate(orbit_shards)]
    refused(capsys, *alone, n=5, name=ORB, match="missing")
    full = tmp_path / "full.json"
    assert cli(capsys, "prove", ORB, "--n", "5", "--combine", *map(str, orbit_shards), "--certificate",
               str(full))[0] == 0
    many = edit(full, lambda d: [x.update(part=[x["part"][0], 10 ** 12]) for x in d["results"][0]["details"]["parts"]],
                tmp_path / "many.json")
    code, out, _ = cli(capsys, "certificate", "verify", str(many))
    assert code == 1 and "details.parts is not" in out
    far = edit(full, lambda d: d["results"][0].update(n=8), tmp_path / "far.json")
    code, out, _ = cli(capsys, "certificate", "verify", str(far))
    assert code == 1 and "beyond --orbits" in out

"""``hasse prove … --engine dask`` (issue 14): the distributed engine gives the one-machine verdicts.

- a cluster run of ``limit_is_preorder`` n = 4 (labelled shards) and of
  ``reach_monotone_in_depth`` n = 5 (``--orbits`` parts) equals the one-machine run:
  verdict, checked, space, and the certificate without seconds and details;
- the kill test: three worker processes, slow units, one worker killed with SIGKILL
  in the middle of the run: the scheduler runs its units again elsewhere and the
  verdict and certificate are those of the one-machine run;
- a planted false theorem (at most four entries per mask) is refuted at the same
  smallest index as the one-machine labelled run;
- the combiners refuse planted bugs: a dropped part, a part counted twice, a part's
  count doubled, a tampered counterexample (unknown, never proved);
- the command line: flags that do not combine are one line and exit 2.

The cluster tests are skipped when dask[distributed] is not installed; the
combiner tests run without it (the units run in this process).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import threading
import time
import types

import numpy as np
import pytest

from hasse.cli import main
from hasse.proofs import distributed as dist
from hasse.proofs import orbit_cover, orbits_check, registry
from hasse.proofs.certificates.format import write_certificate
from hasse.proofs.dask_cluster import local_cluster
from hasse.proofs.cli import prove
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context

HAVE_DASK = importlib.util.find_spec("distributed") is not None and importlib.util.find_spec("dask") is not None
WHY = "dask[distributed] is not installed (pip install 'hasse-attention[dist]')"
needs_dask = pytest.mark.skipif(not HAVE_DASK, reason=WHY)
SAME = ("theorem", "n", "method", "verdict", "checked", "space", "counterexample", "witness", "fingerprint",
        "versions")
PLANTED = "planted_at_most_four_entries"


def certified(results, path) -> list[dict]:
    """The results as written in a certificate, without seconds and details."""
    write_certificate(str(path), results)
    with open(path) as fh:
        return [{k: r.get(k) for k in SAME} for r in json.load(fh)["results"]]


def one_machine(name: str, n: int, method: str = "exhaustive"):
    return prove(registry.get(name), n, method, show_progress=False)


def plant() -> None:
    """Register the planted false theorem (here and on each worker): every mask has at most four entries."""
    from hasse.proofs import mask_checks
    from hasse.theory import batch

    if PLANTED in registry.NAMES:
        return

    def flag(rows):
        return batch.popcount(rows).sum(axis=0) >= 5

    def explain(mask):
        return {"entries": int(np.asarray(mask).sum())}

    def confirm(mask, at=None):
        return {"confirmed": int(np.asarray(mask).sum()) >= 5}

    module = types.ModuleType(f"hasse.proofs.{PLANTED}")
    module.THEOREM = mask_checks.mask_theorem(PLANTED, "every mask has at most four entries (false from n = 3)",
                                              flag, explain, lambda n, e: [], confirm,
                                              invariant="the number of entries does not depend on the labels")
    sys.modules[module.__name__] = module
    registry.NAMES = registry.NAMES + (PLANTED,)


@pytest.fixture(scope="module")
def cluster():
    """Three worker processes, one thread each, shared by the cluster tests (the kill test runs last)."""
    if not HAVE_DASK:
        pytest.skip(WHY)
    import cloudpickle
    from distributed import Client

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # plant() runs on workers that cannot import tests/
    with local_cluster(3) as c, Client(c) as client:
        yield c, client


# -- one cluster run equals one machine -------------------------------------------------------------------------


@needs_dask
def test_labelled_shards_equal_one_machine(cluster, tmp_path):
    c, _ = cluster
    seen = []
    got = dist.run_dask(["limit_is_preorder"], 4, units=5, scheduler=c.scheduler_address,
                        progress=lambda done, total: seen.append((done, total)))
    want = one_machine("limit_is_preorder", 4)
    assert [(r.verdict, r.checked, r.space) for r in got] == [(PROVED, 4096, 4096)]
    assert certified(got, tmp_path / "a.json") == certified(want, tmp_path / "b.json")
    engine = got[0].details["engine"]
    assert engine["name"] == "dask" and engine["units"] == 5 and engine["workers"] == 3
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5] and {s[1] for s in seen} == {5}
    assert engine["re-run"] == 0 and sum(engine["by_worker"].values()) == 5
    assert [p["shard"] for p in got[0].details["combined"]] == [f"{i}/5" for i in range(5)]


@needs_dask
def test_orbits_parts_equal_one_machine(cluster, tmp_path):
    c, _ = cluster
    got = dist.run_dask(["reach_monotone_in_depth"], 5, orbits=True, units=4, scheduler=c.scheduler_address)
    want = orbits_check.run_many([registry.get("reach_monotone_in_depth")], 5, [Context()])
    assert (got[0].verdict, got[0].checked, got[0].space) == (want[0].verdict, want[0].checked, want[0].space)
    assert got[0].checked == orbit_cover.expected(5) == 9608
    assert certified(got, tmp_path / "a.json") == certified(want, tmp_path / "b.json")
    assert [p["part"] for p in got[0].details["parts"]] == [[i, 4] for i in range(4)]


@needs_dask
def test_planted_refutation_same_index(cluster, monkeypatch, tmp_path):
    c, client = cluster
    monkeypatch.setattr(registry, "NAMES", registry.NAMES)  # undone after the test (plant() extends it)
    plant()
    client.run(plant)
    want = one_machine(PLANTED, 3)[0]
    assert want.verdict == REFUTED and want.counterexample["index"] == 31  # the first mask with five entries
    got = dist.run_dask([PLANTED], 3, units=5, scheduler=c.scheduler_address)[0]
    assert (got.verdict, got.counterexample["index"], got.space) == (REFUTED, 31, want.space)
    # checked: what the units did check (as --combine adds it up): every shard to its end or its first hit
    assert got.checked >= want.checked == 32
    hits = [p for p in got.details["combined"] if p["verdict"] == REFUTED]
    assert len(hits) >= 3  # several shards found one; the smallest index won
    orbits = dist.run_dask([PLANTED], 3, orbits=True, units=3, scheduler=c.scheduler_address)[0]
    assert orbits.verdict == REFUTED and int(np.asarray(orbits.counterexample["mask"]).sum()) >= 5


@needs_dask
def test_all_theorems_both_methods_equal_one_machine(cluster):
    """``prove all --n 3``: numbered shards, Z3 and the engine and task theorems as whole units, the witness."""
    c, _ = cluster
    got = dist.run_dask(list(registry.NAMES), 3, method="both", units=3, scheduler=c.scheduler_address)
    want = [r for name in registry.NAMES for r in one_machine(name, 3, "both")]
    key = ("theorem", "method", "verdict", "space", "counterexample")
    assert [{k: r.to_json().get(k) for k in key} for r in got] == [{k: r.to_json().get(k) for k in key} for r in want]
    only = [r.details.get("only") for r in got]
    assert only == [r.details.get("only") for r in want] and any(only)
    # checked: equal, except an existence statement's, which counts every shard up to its own first witness
    for a, b in zip(got, want):
        assert a.checked == b.checked or (registry.get(a.theorem).existence and a.checked >= b.checked)
        assert (a.witness or {}).get("index") == (b.witness or {}).get("index")


# -- the kill test ----------------------------------------------------------------------------------------------


@needs_dask
def test_a_killed_worker_changes_nothing(cluster, tmp_path):
    c, _ = cluster
    killed, first_done = [], threading.Event()

    def kill_one(client, futures):
        pids = client.run(os.getpid)

        def later():
            first_done.wait(30)  # a unit (one second each) came back: every worker is inside its second unit
            time.sleep(0.4)
            pid = sorted(pids.values())[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

        threading.Thread(target=later, daemon=True).start()

    got = dist.run_dask(["limit_is_preorder"], 4, units=9, scheduler=c.scheduler_address, delay=1.0,
                        on_start=kill_one, progress=lambda done, total: first_done.set())
    assert killed, "no worker was killed"
    want = one_machine("limit_is_preorder", 4)
    assert [(r.verdict, r.checked, r.space) for r in got] == [(PROVED, 4096, 4096)], (got[0].reason, got[0].details)
    assert certified(got, tmp_path / "a.json") == certified(want, tmp_path / "b.json")
    engine = got[0].details["engine"]
    assert "failed" not in engine
    assert engine["re-scheduled"] >= 1 and engine["re-run"] >= 1  # the killed worker's unit ran again elsewhere
    assert sum(engine["by_worker"].values()) == 9


# -- the combiners refuse planted bugs (no cluster needed) ------------------------------------------------------


def orbit_parts(name: str, n: int, k: int) -> list[dict]:
    out = []
    for i in range(k):
        unit = dist.Unit("orbits", (name,), n, orbits_check.METHOD, (i, k))
        out += dist.run_unit(unit)["results"]
    return out


def test_orbits_combiner_refuses_planted_bugs():
    parts = orbit_parts("limit_is_preorder", 5, 3)
    total = orbit_cover.expected(5)
    assert all(p["checked"] > 0 for p in parts) and sum(p["checked"] for p in parts) == total
    good = dist.combine_orbits("limit_is_preorder", 5, parts, 3)
    assert (good.verdict, good.checked, good.space) == (PROVED, total, total)
    assert [p["digest"] for p in good.details["parts"]] == [p["details"]["digest"] for p in parts]
    for i in range(3):
        dropped = dist.combine_orbits("limit_is_preorder", 5, parts[:i] + parts[i + 1:], 3)
        assert dropped.verdict == UNKNOWN and f"part {i}/3 missing" in dropped.reason
    twice = dist.combine_orbits("limit_is_preorder", 5, [parts[0], parts[0], parts[2]], 3)
    assert twice.verdict == UNKNOWN and "twice" in twice.reason
    doubled = [dict(p, checked=2 * p["checked"]) if i == 0 else p for i, p in enumerate(parts)]
    doubled = dist.combine_orbits("limit_is_preorder", 5, doubled, 3)
    assert doubled.verdict == UNKNOWN and "part 0/3 checked" in doubled.reason
    assert dist.combine_orbits("limit_is_preorder", 5, parts, 4).verdict == UNKNOWN  # another k
    timed_out = [dict(p, reason="timeout") if i == 0 else p for i, p in enumerate(parts)]
    assert dist.combine_orbits("limit_is_preorder", 5, timed_out, 3).verdict == UNKNOWN


@pytest.mark.parametrize("forgery", ["relabelled", "part 0 twice", "digest edited", "digest of another part",
                                     "part missing"])
def test_orbits_combiner_refuses_forged_parts(forgery):
    """Issue 20, item 2: each part is bound to its content (its digest, recomputed here), not to its label alone."""
    from tests.orbit_forgeries import forgeries

    parts = orbit_parts("limit_is_preorder", 5, 3)
    forged = forgeries(parts).get(forgery)
    if forged is None:
        pytest.skip("every part has part 0's size here: a copy with another part's digest is that part's claim")
    got = dist.combine_orbits("limit_is_preorder", 5, forged, 3)
    assert got.verdict == UNKNOWN and got.reason.startswith("distributed: "), got.reason
    if forgery == "relabelled":
        assert "name the same masks" in got.reason
    if forgery == "digest edited":
        assert "part 1/3: its digest is not that of the masks part 1/3 holds" in got.reason


def test_orbits_combiner_recomputes_each_part_from_the_enumeration(monkeypatch):
    """A relabelled copy with a digest of its own (not a copy's) is still refused: the digest is recomputed."""
    from tests.orbit_forgeries import as_part

    parts = orbit_parts("limit_is_preorder", 4, 3)
    assert dist.combine_orbits("limit_is_preorder", 4, parts, 3).verdict == PROVED
    fake = as_part(parts[0], 1, 3)
    fake["details"]["digest"]["sha256"] = "f" * 64  # no longer the same as part 0's: only recomputing catches it
    bad = dist.combine_orbits("limit_is_preorder", 4, [parts[0], fake, parts[2]], 3)
    assert bad.verdict == UNKNOWN and "part 1/3: its digest is not that of the masks" in bad.reason
    # the digest is of the masks in enumeration order (the reference: sha256 over the encoded indices, here)
    import hashlib

    from hasse.solvers import exhaustive as ex

    want = hashlib.sha256(b"hasse orbit masks: n=4, kind=classes\n")
    for rows in orbit_cover.orbit_batches(4, part=(2, 3)):
        want.update(ex.encode(4, rows)[0].astype("<u8").tobytes())
    assert parts[2]["details"]["digest"] == {"sha256": want.hexdigest(), "masks": parts[2]["checked"]}


def test_orbits_combiner_rechecks_the_hit(monkeypatch):
    monkeypatch.setattr(registry, "NAMES", registry.NAMES)
    plant()
    parts = orbit_parts(PLANTED, 3, 2)
    good = dist.combine_orbits(PLANTED, 3, parts, 2)
    assert good.verdict == REFUTED and good.details["hit_part"] == min(
        i for i, p in enumerate(parts) if p["verdict"] == REFUTED)
    first = good.details["hit_part"]
    tampered = json.loads(json.dumps(parts))
    tampered[first]["counterexample"]["mask"] = [[0] * 3 for _ in range(3)]  # a mask the predicate does not flag
    bad = dist.combine_orbits(PLANTED, 3, tampered, 2)
    assert bad.verdict == UNKNOWN and "does not re-check" in bad.reason


def test_labelled_combiner_refuses_planted_bugs():
    shards = []
    for i in range(4):
        unit = dist.Unit("shard", ("limit_is_preorder",), 3, "exhaustive", (i, 4))
        shards += dist.run_unit(unit)["results"]
    assert dist.combine_labelled("limit_is_preorder", 3, shards, 4).verdict == PROVED
    dropped = dist.combine_labelled("limit_is_preorder", 3, shards[:3], 4)
    assert dropped.verdict == UNKNOWN and "3 of 4 shards" in dropped.reason
    twice = dist.combine_labelled("limit_is_preorder", 3, shards[:3] + [shards[2]], 4)
    assert twice.verdict == UNKNOWN and "overlap" in twice.reason


def test_units_that_ran_other_code_are_not_combined():
    """A unit whose sources differ from the checkout's at the start of the run (another version, an edit) is unknown."""
    from hasse.proofs import fingerprint as fp

    work = dist.plan(["limit_is_preorder"], 3, "exhaustive", orbits=False, units=2)
    outputs = [dist.run_unit(u) for u in work]
    here = fp.source_hashes()
    engine = {"name": "dask"}
    ok = dist._combine_all(["limit_is_preorder"], 3, "exhaustive", False, 2, work, outputs, engine, 0.1, here)
    assert ok[0].verdict == PROVED
    outputs[1]["fingerprints"]["limit_is_preorder"] = "0" * 64
    bad = dist._combine_all(["limit_is_preorder"], 3, "exhaustive", False, 2, work, outputs, engine, 0.1, here)
    assert bad[0].verdict == UNKNOWN and "other code" in bad[0].reason


# -- the command line -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, words", [
    (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --engine dask"),
    (["--units", "4"], "--units needs --engine dask"),
    (["--engine", "dask", "--units", "0"], "--units must be >= 1"),
    (["--engine", "dask", "--shard", "0/2"], "does not combine with --shard"),
    (["--engine", "dask", "--method", "z3"], "does not combine with --method z3"),
    (["--engine", "dask", "--scheduler", "tcp://127.0.0.1:8786", "--workers", "2"], "has its own workers"),
])
def test_cli_refusals(capsys, argv, words):
    assert main(["prove", "limit_is_preorder", "--n", "3", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_cli_without_dask(capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    assert main(["prove", "limit_is_preorder", "--n", "3", "--engine", "dask"]) == 2
    assert "pip install 'hasse-attention[dist]'" in capsys.readouterr().err


@needs_dask
def test_cli_local_cluster_certificate(capsys, tmp_path):
    """The default LocalCluster of --workers processes, through the command line, with a certificate."""
    path = tmp_path / "dask.json"
    assert main(["prove", "reach_stable_by_n_minus_1", "--n", "3", "--engine", "dask", "--workers", "2",
                 "--units", "3", "--certificate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 results: 2 proved" in out
    with open(path) as fh:
        results = json.load(fh)["results"]
    assert [r["method"] for r in results] == ["exhaustive", "z3"]
    assert results[0]["details"]["engine"]["workers"] == 2 and results[0]["details"]["engine"]["units"] == 3
    want = certified(one_machine("reach_stable_by_n_minus_1", 3, "both"), tmp_path / "one.json")
    assert [{k: r.get(k) for k in SAME} for r in results] == want

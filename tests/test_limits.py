"""Limits and bad input (issue 10, point 8): every command refuses bad input with exit 2 and one line.

The table below holds bad inputs for every command (timeouts, sizes beyond the guards,
malformed and hostile JSON, FIFOs, outputs onto inputs, Python code named inside JSON,
huge integers and depths); each runs in-process through ``hasse.cli.main`` and must
exit 2 with exactly one line on stderr and no traceback. The other tests check the
limits that are not refusals: ``--timeout`` while an encoding is built, a depth of
``10^12`` computed from the period, outputs written atomically, workers that die
with their parent, and ``assert_no_leak``'s argument checks.
"""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from hasse.cli import main

HUGE = "1000000000000"  # 10^12


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Bad (and a few good) input files, by name."""
    d = tmp_path_factory.mktemp("limits")
    task = {"tokens": 2, "inputs": [["x0", 0], ["x1", 1]], "labels": [None, 1], "mask": [[1, 0], [1, 1]]}

    def task_with(**kw):
        return json.dumps(task | kw)

    texts = {
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "deep64.json": '{"mask": ' + "[" * 70 + "]" * 70 + "}",
        "deepmask.json": '{"mask": ' + "[" * 5000 + "]" * 5000 + "}",
        "bigint.json": '{"mask": [[' + "1" * 5000 + ", 0], [0, 1]]}",
        "int70.json": '{"mask": [[' + "1" * 70 + ", 0], [0, 1]]}",
        "inf.json": '{"mask": [[1e400, 0], [0, 1]]}',
        "nan.json": '{"mask": [[NaN, 0], [0, 1]]}',
        "trunc.json": '{"mask": [[1, 0], [0, 1]',
        "list.json": "[1, 2, 3]",
        "nomask.json": '{"rows": [[1]]}',
        "pymask.json": '{"mask": "code.py:causal"}',
        "pyfile.json": '{"mask": "code.py"}',
        "strrows.json": '{"mask": ["ab", "cd"]}',
        "cube.json": '{"mask": [[[1]], [[0]]]}',
        "badnames.json": '{"mask": [[1, 0], [0, 1]], "names": [1, {"a": 2}]}',
        "code.py": f"open({str(d / 'RAN')!r}, 'w').close()\ndef causal(b, h, q, kv):\n    return q >= kv\n",
        "ok.txt": "1 0\n1 1\n",
        "ok_task.json": json.dumps(task),
        "task_py.json": task_with(mask="code.py:causal"),
        "task_bigtokens.json": '{"tokens": ' + "9" * 5000 + ', "inputs": [], "labels": [], "mask": [[1]]}',
        "task_hugetokens.json": task_with(tokens=10 ** 12),
        "task_names.json": task_with(names=5),
        "task_label_str.json": task_with(labels=[None, "a"]),
        "task_label_float.json": task_with(labels=[None, 1.5]),
        "task_label_range.json": task_with(labels=[None, 7]),
        "task_input_short.json": task_with(inputs=[["x0"], ["x1", 1]]),
        "task_symbol.json": task_with(inputs=[["y0", 0], ["x1", 1]]),
        "task_symbol_digits.json": task_with(inputs=[["x" + "9" * 5000, 0], ["x1", 1]]),
        "task_pos_huge.json": task_with(inputs=[["x0", 2 ** 40], ["x1", 1]]),
        "task_pos_neg.json": task_with(inputs=[["x0", -1], ["x1", 1]]),
        "task_isolate.json": task_with(isolate=[[0, 99]]),
        "task_isolate_str.json": task_with(isolate="ab"),
        "task_tokens_str.json": task_with(tokens="2"),
        "task_tokens_bool.json": task_with(tokens=True),
        "task_size.json": task_with(mask=[[1]]),
        "task_unknown_field.json": task_with(extra=1),
        "fam_item.json": json.dumps({"tokens": 2, "tasks": [5]}),
        "fam_deep.json": '{"tokens": 2, "tasks": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "fam_empty.json": json.dumps({"tokens": 2, "tasks": []}),
        "fam_py.json": json.dumps({"tokens": 2, "tasks": [task | {"mask": "code.py:causal"}]}),
        "cert_deep.json": '{"certificate": "hasse proof", "results": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "cert_bigint.json": '{"certificate": "hasse proof", "results": [{"checked": ' + "9" * 6000 + "}]}",
        "cert_list.json": "[]",
        "empty.json": "",
    }
    for name, text in texts.items():
        (d / name).write_text(text)
    os.mkfifo(d / "fifo.json")
    os.mkfifo(d / "fifo.txt")
    os.mkfifo(d / "out_fifo.png")
    return d


# (argv with {d} for the files' folder) — every one must exit 2 with one line on stderr
BAD = [
    # --timeout: positive and finite, on every command that has one
    "prove limit_is_preorder --n 3 --timeout nan",
    "prove limit_is_preorder --n 3 --timeout inf",
    "prove limit_is_preorder --n 3 --timeout -inf",
    "prove limit_is_preorder --n 3 --timeout 0",
    "prove limit_is_preorder --n 3 --timeout -1",
    "prove limit_is_preorder --n 3 --timeout 1e400",
    "prove limit_is_preorder --n 3 --timeout abc",
    "counterexample bad_mlm_unmasked --timeout nan",
    "counterexample bad_mlm_unmasked --timeout inf",
    "counterexample bad_mlm_unmasked --timeout 0",
    # prove: size guards, with an estimate, before any work
    "prove reach_stable_by_n_minus_1 --n 9 --method exhaustive",
    "prove reach_stable_by_n_minus_1 --n 8 --method exhaustive",
    "prove all --n 9",
    "prove reach_stable_by_n_minus_1 --n 1000000000 --method z3",
    "prove reach_stable_by_n_minus_1 --n 1000000000",
    "prove sparse_realisation_keeps_hasse --n 200 --method z3",
    "prove equivalence_preserves_upstream_inputs --n 7 --method exhaustive",
    "prove causal_is_minimum_merge_of_ar --n 100000 --method z3",
    "prove all --n 0",
    "prove all --n -3",
    "prove all --n x",
    "prove all --n 3 --workers 0",
    "prove all --n 3 --workers 100000",
    "prove all --n 3 --shard 5/3",
    "prove all --n 3 --shard a/b",
    "prove nosuchtheorem --n 3",
    # prove --combine: certificate readers
    "prove limit_is_preorder --n 3 --combine {d}/cert_deep.json",
    "prove limit_is_preorder --n 3 --combine {d}/cert_bigint.json",
    "prove limit_is_preorder --n 3 --combine {d}/cert_list.json",
    "prove limit_is_preorder --n 3 --combine {d}/fifo.json",
    "prove limit_is_preorder --n 3 --combine {d}/empty.json",
    "prove limit_is_preorder --n 3 --combine {d}/missing.json",
    # analyze: masks and their files
    "analyze causal:n=4 --layers -1",
    "analyze causal:n=1000000000",
    "analyze causal:n=0",
    "analyze {d}/deep.json",
    "analyze {d}/deep64.json",
    "analyze {d}/deepmask.json",
    "analyze {d}/bigint.json",
    "analyze {d}/int70.json",
    "analyze {d}/inf.json",
    "analyze {d}/nan.json",
    "analyze {d}/trunc.json",
    "analyze {d}/list.json",
    "analyze {d}/nomask.json",
    "analyze {d}/pymask.json",
    "analyze {d}/pyfile.json",
    "analyze {d}/task_py.json",
    "analyze {d}/strrows.json",
    "analyze {d}/cube.json",
    "analyze {d}/badnames.json",
    "analyze {d}/fifo.json",
    "analyze {d}/fifo.txt",
    "analyze /dev/null",
    "analyze {d}",
    "analyze {d}/empty.json",
    "analyze {d}/code.py:causal --n 1000000000",
    "analyze {d}/code.py:causal --n -1",
    "analyze {d}/ok.txt --png {d}/ok.txt",
    "analyze {d}/ok.txt --dot {d}/ok.txt",
    "analyze {d}/ok.txt --dot {d}/fifo.txt",
    "analyze {d}/ok.txt --png {d}/out_fifo.png",
    "analyze {d}/ok.txt --dot {d}",
    "analyze {d}/code.py:causal --n 3 --dot {d}/code.py",
    # leak: task readers
    "leak {d}/task_py.json",
    "leak {d}/task_bigtokens.json",
    "leak {d}/task_hugetokens.json",
    "leak {d}/task_names.json",
    "leak {d}/task_label_str.json",
    "leak {d}/task_label_float.json",
    "leak {d}/task_label_range.json",
    "leak {d}/task_input_short.json",
    "leak {d}/task_symbol.json",
    "leak {d}/task_symbol_digits.json",
    "leak {d}/task_pos_huge.json",
    "leak {d}/task_pos_neg.json",
    "leak {d}/task_isolate.json",
    "leak {d}/task_isolate_str.json",
    "leak {d}/task_tokens_str.json",
    "leak {d}/task_tokens_bool.json",
    "leak {d}/task_size.json",
    "leak {d}/task_unknown_field.json",
    "leak {d}/deep.json",
    "leak {d}/fifo.json",
    "leak {d}/ok_task.json --layers -1",
    "leak {d}/ok_task.json --png {d}/ok_task.json",
    # flow: position sets
    "flow causal:n=4 --from 0-" + HUGE + " --to 1",
    "flow causal:n=4 --from 0 --to 2-99999999999999999999999999",
    "flow causal:n=4 --from 0-" + "9" * 5000 + " --to 1",
    "flow causal:n=4 --from 9 --to 1",
    "flow causal:n=4 --from 3-1 --to 1",
    "flow causal:n=4 --from -1 --to 1",
    "flow causal:n=4 --from a --to 1",
    "flow causal:n=4 --from 0 --to 1 --layers -5",
    # merge and consistent: family readers and generation
    "merge {d}/fam_item.json",
    "merge {d}/fam_deep.json",
    "merge {d}/fam_empty.json",
    "merge {d}/fam_py.json",
    "merge {d}/deep.json",
    "merge {d}/fifo.json",
    "merge ar:n=1000000000",
    "merge infill:n=100000",
    "merge ar:n=4 --out {d}/fifo.json",
    "consistent {d}/ok_task.json --inference {d}/fam_item.json",
    "consistent {d}/ok_task.json --inference {d}/deep.json",
    "consistent {d}/ok_task.json --inference block:n=100000,block=2",
    "consistent {d}/fifo.json --inference ar:n=3",
    # counterexample
    "counterexample bad_mlm_unmasked --max-n -1",
    "counterexample bad_mlm_unmasked --max-n 0",
    "counterexample nosuchdesign",
    # gpu-check: sizes and vocabularies, refused before torch is needed
    "gpu-check causal:n=4 --layers " + HUGE,
    "gpu-check causal:n=4 --layers -1",
    "gpu-check causal:n=4 --seeds 1000000000",
    "gpu-check causal:n=4 --seeds 0",
    "gpu-check butterfly:n=4 --train-demo --vocab " + HUGE,
    "gpu-check butterfly:n=4 --train-demo --vocab 0",
    "gpu-check butterfly:n=4 --train-demo --steps " + HUGE,
    "gpu-check butterfly:n=4 --train-demo --steps -1",
    "gpu-check {d}/deep.json",
    "gpu-check {d}/fifo.json",
    # usage errors are one line too
    "nonsense",
    "analyze",
    "analyze causal:n=3 --layers x",
]


@pytest.mark.parametrize("argv", BAD)
def test_bad_input_exits_2_with_one_line(argv, files, capsys):
    args = [a.replace("{d}", str(files)) for a in argv.split()]
    with pytest.raises(SystemExit) as info:
        raise SystemExit(main(args))
    _, err = capsys.readouterr()
    assert info.value.code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert not (files / "RAN").exists(), "a mask_mod named inside JSON (or beyond the size guard) was run"


def test_the_table_covers_every_command_and_is_large():
    commands = {argv.split()[0] for argv in BAD}
    assert {"analyze", "leak", "flow", "merge", "consistent", "prove", "counterexample", "gpu-check"} <= commands
    assert len(BAD) >= 60


def test_the_size_guard_names_the_estimate(capsys):
    assert main(["prove", "reach_stable_by_n_minus_1", "--n", "9", "--method", "exhaustive"]) == 2
    assert "2^72 ≈ 4.7e+21 masks" in capsys.readouterr().err


def test_outputs_onto_inputs_leave_the_input_untouched(files, capsys):
    before = (files / "ok.txt").read_bytes()
    assert main(["analyze", str(files / "ok.txt"), "--png", str(files / "ok.txt")]) == 2
    assert (files / "ok.txt").read_bytes() == before


def test_outputs_are_written_atomically(tmp_path, monkeypatch, capsys):
    """A write that fails half-way leaves the old file whole and no temporary file behind."""
    from hasse.views import output

    target = tmp_path / "out.dot"
    target.write_text("old\n")

    def broken_open(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("builtins.open", broken_open)
    with pytest.raises(Exception, match="No space left"):
        output.write_text(str(target), "new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.dot"]
    output.write_text(str(target), "new\n")
    assert target.read_text() == "new\n"


def test_a_depth_of_10_to_the_12_is_computed_from_the_period(tmp_path, capsys):
    """No residual: A^L for L = 10^12 from the power cycle (reference: plain numpy powers up to the period)."""
    from hasse.theory.reach import power_cycle, reach

    rng = np.random.default_rng(3)
    for _ in range(20):
        m = rng.random((6, 6)) < 0.3
        cycle = power_cycle(m)
        depth = 10 ** 12
        reduced = depth if depth < cycle.preperiod else cycle.preperiod + (depth - cycle.preperiod) % cycle.period
        p = np.eye(6, dtype=bool)
        for _ in range(reduced):
            p = (m.astype(int) @ p.astype(int)) > 0
        assert np.array_equal(reach(m, depth, residual=False), p)
    # the command line answers too, at once: the swap without the residual has period 2
    (tmp_path / "swap.txt").write_text("0 1\n1 0\n")
    assert main(["analyze", str(tmp_path / "swap.txt"), "--no-residual", "--layers", HUGE, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reachability"] == [[1, 0], [0, 1]]  # 10^12 is even


def test_timeout_is_honoured_while_the_encoding_is_built(capsys):
    """reach_stable at n = 60 takes tens of seconds to encode; --timeout 1 makes it unknown (exit 3)."""
    assert main(["prove", "reach_stable_by_n_minus_1", "--n", "60", "--method", "z3", "--timeout", "1",
                 "--json"]) == 3
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["verdict"] == "unknown" and result["reason"].startswith("timeout")


def test_the_deadline_fires_inside_loops():
    from hasse.theory.deadline import deadline, tick

    with pytest.raises(TimeoutError):
        with deadline(0.05):
            while True:
                tick()
    tick()  # outside the block: no limit


def test_killing_the_parent_of_workers_leaves_no_worker(tmp_path):
    """SIGKILL the parent of `prove --workers 2`: its forked workers must exit too (they did not before)."""
    proc = subprocess.Popen([sys.executable, "-m", "hasse", "prove", "reach_stable_by_n_minus_1", "--n", "6",
                             "--method", "exhaustive", "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def children():
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == proc.pid and fields[0] != "Z":
                    out.append(int(entry))
        return out

    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc")
    kids = []
    for _ in range(300):
        kids = children()
        if len(kids) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert len(kids) >= 2, "the workers did not start"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    alive = kids
    for _ in range(50):
        alive = [k for k in kids if os.path.exists(f"/proc/{k}")
                 and open(f"/proc/{k}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
        if not alive:
            break
        time.sleep(0.1)
    for k in alive:  # clean up what this test started before failing
        os.kill(k, signal.SIGKILL)
    assert not alive


def test_assert_no_leak_checks_its_arguments():
    from hasse.testing import assert_no_leak

    leaky = np.ones((3, 3), dtype=bool)
    with pytest.raises(ValueError, match="layers"):
        assert_no_leak(leaky, labels=[0, None, None], layers=-1)
    with pytest.raises(ValueError, match="labels"):
        assert_no_leak(np.tril(np.ones((3, 3), dtype=bool)), labels=[None, None, 7])
    with pytest.raises(AssertionError):
        assert_no_leak(leaky, labels=[0, None, None], layers=10 ** 12)


def test_json_readers_refuse_deep_and_huge_values(tmp_path):
    from hasse.theory.errors import InputError
    from hasse.theory.inputs.json_file import read_json

    for text, phrase in (("[" * 10 ** 5 + "]" * 10 ** 5, "nested deeper"), ("[" * 65 + "]" * 65, "nested deeper"),
                         ("[" + "7" * 5000 + "]", "too long"), ("[" + "7" * 30 + "]", "64 bits")):
        (tmp_path / "x.json").write_text(text)
        with pytest.raises(InputError, match=phrase):
            read_json(str(tmp_path / "x.json"))
    (tmp_path / "ok.json").write_text("[" * 60 + "9223372036854775807" + "]" * 60)
    read_json(str(tmp_path / "ok.json"))  # the limits themselves are fine


# ==== issue 20, items 5 (Dask, audit, leak tasks, certificate sources) and 6 (outputs) =========================
# Each argv (a list: some arguments hold spaces or are empty) must exit 2 with one line on stderr, no traceback.


@pytest.fixture(scope="module")
def files20(tmp_path_factory):
    """Inputs for the issue-20 rows: tasks with odd isolate fields, forged certificates, indirect inputs."""
    d = tmp_path_factory.mktemp("limits20")
    task = {"tokens": 3, "inputs": [["x0", 0], ["x1", 1], ["x2", 2]], "labels": [None, 0, 1], "mask": "causal:n=3"}
    texts = {
        "isolate_int.json": json.dumps(task | {"isolate": 3}),
        "isolate_zero.json": json.dumps(task | {"isolate": 0}),
        "isolate_true.json": json.dumps(task | {"isolate": True}),
        "isolate_false.json": json.dumps(task | {"isolate": False}),
        "unsupervised.json": json.dumps(task | {"labels": [None, None, None]}),
        "jm.json": json.dumps({"mask": "m.npy"}),
        "jm_task.json": json.dumps(task | {"mask": "m3.npy"}),
        "stack.json": json.dumps({"layers": ["m.npy", "m.npy"]}),
        "cfg_deep.json": '{"model_type": "llama", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "cfg_bigint.json": '{"model_type": "llama", "rms_norm_eps": ' + "1" * 5000 + "}",
        "cfg_type.json": json.dumps({"model_type": "llama", "rms_norm_eps": "small"}),
    }
    for name, text in texts.items():
        (d / name).write_text(text)
    np.save(d / "m.npy", np.tril(np.ones((4, 4), dtype=bool)))
    np.save(d / "m3.npy", np.tril(np.ones((3, 3), dtype=bool)))
    os.mkfifo(d / "cfg_fifo.json")
    (d / "sub").mkdir()
    os.symlink(d / "same.json", d / "alias.json")  # dangling: names same.json, which does not exist yet
    assert main(["prove", "limit_is_preorder", "--n", "3", "--method", "exhaustive", "--certificate",
                 str(d / "cert.json")]) == 0
    cert = json.loads((d / "cert.json").read_text())
    own = sorted(cert["sources"])
    forged = {"etc": {"/etc/passwd": "0" * 64}, "zero": {"/dev/zero": "0" * 64},
              "dots": {"theory/../../../etc/passwd": "0" * 64}, "dot": {"./theory/order.py": "0" * 64},
              "foreign": {"theory/not_in_the_kit.py": "0" * 64}, "drive": {"C:/kit/theory/order.py": "0" * 64},
              "many": {f"theory/x{i}.py": "0" * 64 for i in range(300_000)}}
    for name, extra in forged.items():
        (d / f"cert_{name}.json").write_text(json.dumps(cert | {"sources": {**cert["sources"], **extra}}))
    assert own and all(not p.startswith("/") for p in own)
    return d


DASK_ADDRESSES = ["tcp://127.0.0.1:abc", "http://127.0.0.1:8786", "inproc://x", "garbage", "", " ",
                  "tcp://127.0.0.1:70000", "tcp://127.0.0.1:0", "tcp://127.0.0.1:" + "9" * 5000, "127.0.0.1:8786",
                  "tcp://:8786", "tcp://a b:8786"]

BAD20 = [
    # Dask: every address that is not tcp:// or tls:// HOST:PORT, 1 <= PORT <= 65535 (refused before dask is needed)
    *[["prove", "limit_is_preorder", "--n", "3", "--engine", "dask", "--scheduler", a] for a in DASK_ADDRESSES],
    ["prove", "limit_is_preorder", "--n", "3", "--scheduler", ""],  # no --engine dask: never silently ignored
    # leak: isolate must be a list of groups; a task with nothing to check is refused, not LEAK-FREE
    ["leak", "{d}/isolate_int.json"], ["leak", "{d}/isolate_zero.json"], ["leak", "{d}/isolate_true.json"],
    ["leak", "{d}/isolate_false.json"], ["leak", "{d}/unsupervised.json"],
    ["leak", "{d}/isolate_int.json", "--stack", "causal x2"], ["leak", "{d}/unsupervised.json", "--stack", "causal x3"],
    ["gpu-check", "{d}/isolate_true.json"],
    # certificate verify and --combine: sources name only the kit's own relative source paths
    *[["certificate", "verify", f"{{d}}/cert_{name}.json"] for name in
      ("etc", "zero", "dots", "dot", "foreign", "drive", "many")],
    ["prove", "limit_is_preorder", "--n", "3", "--combine", "{d}/cert_etc.json"],
    # outputs: two output flags onto one file (also through a link), before any work
    ["prove", "limit_is_preorder", "--n", "3", "--certificate", "{d}/same.json", "--out", "{d}/same.json"],
    ["prove", "limit_is_preorder", "--n", "3", "--certificate", "{d}/same.json", "--out", "{d}/alias.json"],
    ["prove-mask", "causal", "--claim", "dense", "--certificate", "{d}/same.json", "--out", "{d}/same.json"],
    ["analyze", "causal:n=4", "--out", "{d}/same.json", "--dot", "{d}/same.json"],
    ["analyze", "causal:n=4", "--out", "{d}/same.json", "--dot", "{d}/sub/../same.json"],
    ["analyze", "causal:n=4", "--out", "{d}/alias.json", "--png", "{d}/same.json"],
    # outputs onto files named inside input files (JSON masks, task masks, stack layers, stack files)
    ["analyze", "{d}/jm.json", "--out", "{d}/m.npy"],
    ["analyze", "{d}/jm.json", "--dot", "{d}/m.npy"],
    ["analyze", "--stack", "{d}/m.npy x2", "--out", "{d}/m.npy"],
    ["analyze", "--stack", "causal:n=4, {d}/jm.json", "--out", "{d}/m.npy"],
    ["analyze", "--stack", "{d}/stack.json", "--out", "{d}/m.npy"],
    ["leak", "{d}/jm_task.json", "--out", "{d}/m3.npy"],
    ["leak", "{d}/jm.json", "--out", "{d}/m.npy"],
    ["flow", "{d}/jm.json", "--from", "0", "--to", "1", "--out", "{d}/m.npy"],
]


def _argv20(argv, d):
    return [a.replace("{d}", str(d)) for a in argv]


@pytest.mark.parametrize("argv", BAD20, ids=lambda a: " ".join(a)[:80])
def test_issue20_bad_input_exits_2_with_one_line(argv, files20, capsys):
    before = {p.name: p.read_bytes() for p in files20.iterdir() if p.suffix == ".npy"}
    code = main(_argv20(argv, files20))
    _, err = capsys.readouterr()
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert {p.name: p.read_bytes() for p in files20.iterdir() if p.suffix == ".npy"} == before, "an input was overwritten"
    assert not (files20 / "same.json").exists(), "an output was written before the refusal"


def test_issue20_the_scheduler_address_check_agrees_with_a_reference():
    """Reference: urllib's own reading of the address (scheme, host, port), independent of the checker."""
    from urllib.parse import urlsplit

    from hasse.proofs.dask_cluster import scheduler_address
    from hasse.theory.errors import InputError

    for text in [*DASK_ADDRESSES, "tcp://10.0.0.5:8786", "tls://sched.example:1", "tcp://[::1]:65535",
                 "tcp://localhost:65536", "tls://h:8786/extra"]:
        try:
            parts = urlsplit(text)
            want = (parts.scheme, parts.hostname, parts.port) if (
                parts.scheme in ("tcp", "tls") and parts.hostname and " " not in text and parts.port
                and not parts.path and text == f"{parts.scheme}://{parts.netloc}") else None
        except ValueError:  # urllib refuses a port out of range or not a number
            want = None
        try:
            got = scheduler_address(text)
        except InputError as exc:
            got = None
            assert "\n" not in str(exc)
        assert got == want, text


class _Server:
    """A TCP server on 127.0.0.1 in a thread: ``silent`` accepts and never answers, ``garbage`` writes random bytes."""

    def __init__(self, mode: str):
        import socket
        import threading

        self.mode, self.conns = mode, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        rng = np.random.default_rng(20)
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.mode == "garbage":
                try:
                    conn.sendall(rng.integers(0, 256, 1 << 16, dtype=np.uint8).tobytes())
                except OSError:
                    pass

    def close(self):
        for c in [*self.conns, self.sock]:
            c.close()


@pytest.mark.parametrize("mode", ["silent", "garbage"])
def test_issue20_a_scheduler_that_never_answers_or_answers_garbage_is_one_line(mode, capsys):
    """Before: ``silent`` hung (Dask waited on the handshake), ``garbage`` asked numpy for exabytes (a traceback)."""
    pytest.importorskip("distributed")
    server = _Server(mode)
    try:
        code = main(["prove", "limit_is_preorder", "--n", "3", "--engine", "dask", "--scheduler", server.address,
                     "--timeout", "2"])
    finally:
        server.close()
    _, err = capsys.readouterr()
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and server.address in err, err
    assert ("no Dask handshake" if mode == "silent" else "does not answer as a Dask scheduler") in err, err


AUDIT20 = [
    ["audit", "{d}/cfg_fifo.json"],
    ["audit", "{d}/cfg_deep.json"],
    ["audit", "{d}/cfg_bigint.json"],
    ["audit", "{d}/cfg_type.json"],
    ["audit", "llama", "--set", "hidden_size=abc"],
    ["audit", "llama", "--set", "hidden_size=" + HUGE],
    ["audit", "llama", "--set", "hidden_size=1" + "0" * 5000],
    ["audit", "llama", "--set", "hidden_size=" + "[" * 5000 + "]" * 5000],
    ["audit", "llama", "--set", "use_cache=maybe"],
    ["audit", "llama", "--set", "rms_norm_eps=tiny"],
    ["audit", "llama", "--set", "no_such_field=1"],
    ["audit", "llama", "--set", "num_hidden_layers=" + HUGE],
]


@pytest.mark.parametrize("argv", AUDIT20, ids=lambda a: " ".join(a)[:60])
def test_issue20_audit_bad_configurations_exit_2_with_one_line(argv, files20, capsys):
    """Before: a FIFO blocked, deep JSON raised RecursionError, a text hidden_size a TypeError."""
    pytest.importorskip("transformers")
    code = main(_argv20(argv, files20))
    _, err = capsys.readouterr()
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_issue20_certificate_sources_of_the_kit_itself_still_verify(tmp_path, capsys):
    cert = str(tmp_path / "cert.json")
    assert main(["prove", "limit_is_preorder", "--n", "3", "--method", "exhaustive", "--certificate", cert]) == 0
    assert main(["certificate", "verify", cert]) == 0, capsys.readouterr()
    capsys.readouterr()


def test_issue20_outputs_onto_indirect_inputs_leave_them_untouched_and_distinct_outputs_work(files20, tmp_path,
                                                                                            capsys):
    before = (files20 / "m.npy").read_bytes()
    assert main(["analyze", str(files20 / "jm.json"), "--out", str(files20 / "m.npy")]) == 2
    assert (files20 / "m.npy").read_bytes() == before
    capsys.readouterr()
    out, dot = tmp_path / "a.json", tmp_path / "a.dot"  # two different outputs beside an indirect input: fine
    assert main(["analyze", str(files20 / "jm.json"), "--out", str(out), "--dot", str(dot)]) == 0
    assert json.loads(out.read_text())["command"] == "analyze" and dot.read_text().startswith("digraph")
    capsys.readouterr()


# ==== issue 20, items 4 (code named inside data files) and 5 (user code that loops, raises or exits) ===========
# Own fixtures and names (code20, CODE_IN_DATA20, USER_CODE20). A file that writes a marker when imported must
# stay unimported by every data format without --trust-code; user code runs bounded (theory/user_code.py).

EVIL20 = """\
import pathlib
pathlib.Path(__file__).with_name("RAN").write_text("imported")


def mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def make(w):
    return mask
"""

TASK20 = {"tokens": 4, "inputs": [["x0", 0], ["x1", 1], ["x2", 2], ["x3", 3]], "labels": [None, 0, 1, 2]}


@pytest.fixture()
def code20(tmp_path):
    """Data files that name evil.py (relative, absolute, as a factory call), by name; evil.py writes RAN."""
    (tmp_path / "evil.py").write_text(EVIL20)
    evil = str(tmp_path / "evil.py")

    def js(name, obj):
        (tmp_path / name).write_text(json.dumps(obj))
        return str(tmp_path / name)

    found = {
        "evil": evil,
        "stack_dict": js("stack_dict.json", {"layers": [{"mask": "evil.py:mask"}], "n": 4}),
        "stack_call": js("stack_call.json", {"layers": [{"mask": "evil.py:make(3)", "count": 2}], "n": 4}),
        "stack_abs": js("stack_abs.json", {"layers": [f"{evil}:mask x2"], "n": 4}),
        "stack_abs_call": js("stack_abs_call.json", {"layers": ["causal", f"{evil}:make(3)"], "n": 4}),
        "stack_no_n": js("stack_no_n.json", {"layers": [{"mask": "evil.py:mask"}]}),
        "mask_json": js("m.json", {"mask": "evil.py:mask"}),
        "mask_json_abs": js("m_abs.json", {"mask": f"{evil}:make(3)"}),
        "stack_of_json": js("stack_json.json", {"layers": [{"mask": "m.json"}], "n": 4}),
        "task": js("task.json", {**TASK20, "mask": "evil.py:make(3)"}),
        "family": js("family.json", {"tokens": 4, "tasks": [{**TASK20, "mask": f"{evil}:mask"}]}),
    }
    found["ran"] = tmp_path / "RAN"
    return found


CODE_IN_DATA20 = [
    ["analyze", "--stack", "{stack_dict}"],
    ["analyze", "--stack", "{stack_call}"],
    ["analyze", "--stack", "{stack_abs}"],
    ["analyze", "--stack", "{stack_abs_call}"],
    ["analyze", "--stack", "{stack_of_json}"],
    ["analyze", "--stack", "{stack_dict}", "--heads", "2"],
    ["leak", "--stack", "{stack_dict}"],
    ["leak", "causal_lm:n=4", "--stack", "{stack_call}"],
    ["flow", "--stack", "{stack_abs}", "--from", "0", "--to", "3"],
    ["counterexample", "causal_lm", "--stack", "{stack_no_n}", "--n", "3"],
    ["analyze", "{mask_json}"],
    ["analyze", "{mask_json_abs}", "--n", "4"],
    ["flow", "{mask_json}", "--from", "0", "--to", "3"],
    ["leak", "{task}"],
    ["merge", "{family}"],
    ["consistent", "{task}", "--inference", "{family}"],
]


def _argv_code20(argv, files):
    return [a.format(**files) for a in argv]


@pytest.mark.parametrize("argv", CODE_IN_DATA20, ids=lambda a: " ".join(a))
def test_issue20_code_named_in_a_data_file_never_runs(argv, code20, capsys):
    """Before: a stack file's layer 'evil.py:mask' (or a factory call, or an absolute path) imported and ran it."""
    code = main(_argv_code20(argv, code20))
    _, err = capsys.readouterr()
    assert not code20["ran"].exists(), "the data file's code ran"
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "--trust-code" in err and "Traceback" not in err, err


def test_issue20_the_command_line_and_trust_code_still_run_code(code20, capsys):
    """The marker works (the refusals above are real), and the two leaves that exist still run the file."""
    assert main(["analyze", "--stack", f"{code20['evil']}:mask x2", "--n", "4"]) == 0  # typed on the command line
    assert code20["ran"].exists()
    code20["ran"].unlink()
    assert main(["analyze", "--stack", code20["stack_call"], "--trust-code"]) == 0
    assert code20["ran"].exists()
    code20["ran"].unlink()
    assert main(["leak", code20["task"], "--trust-code"]) in (0, 1)
    assert code20["ran"].exists()
    capsys.readouterr()


def test_issue20_the_importer_itself_refuses_without_a_permission(code20):
    """The one place: import_function refuses None before the file runs, whoever calls it."""
    from hasse.theory.errors import InputError
    from hasse.theory.inputs.user_files import import_function

    with pytest.raises(InputError, match="--trust-code"):
        import_function(code20["evil"], "mask", f"{code20['evil']}:mask", None)
    assert not code20["ran"].exists()


BAD20 = """\
import os
import sys
import time


def loops(b, h, q_idx, kv_idx):
    while True:  # loops
        pass


def sleeps(b, h, q_idx, kv_idx):
    time.sleep(3600)  # sleeps


def swallows(b, h, q_idx, kv_idx):
    while True:
        try:
            time.sleep(3600)  # swallows
        except BaseException:
            pass


def grows(b, h, q_idx, kv_idx):
    hoard = []
    while True:
        hoard.append(bytearray(1 << 24))  # grows


def divides(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx + 1 // 0  # divides


def looks_up(b, h, q_idx, kv_idx):
    return {}["no such key"]  # looks_up


def asserts(b, h, q_idx, kv_idx):
    assert False, "a user's assertion"  # asserts


def fails(b, h, q_idx, kv_idx):
    raise RuntimeError("a user's error")  # fails


def exits(b, h, q_idx, kv_idx):
    sys.exit(0)  # exits


def hard_exits(b, h, q_idx, kv_idx):
    os._exit(0)  # hard_exits


def interrupts(b, h, q_idx, kv_idx):
    raise KeyboardInterrupt  # interrupts


def make_loop(w):
    while True:  # make_loop
        pass


def make_fail(w):
    raise AssertionError("the factory says no")  # make_fail


def make_exit(w):
    sys.exit(0)  # make_exit


def symbolic_loop(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    while d >= 4:  # symbolic_loop
        d -= 4
    return d >= 0


def design_loop(n):
    while True:  # design_loop
        pass


def design_exit(n):
    sys.exit(0)  # design_exit
"""


def _line20(name: str) -> int:
    """The line of BAD20 marked ``# name`` (read from the text, not from the kit)."""
    return next(i for i, line in enumerate(BAD20.splitlines(), 1) if line.rstrip().endswith(f"# {name}"))


STOPPED = "did not finish within 2 s"
# (argv with {bad} for the file, exit code, phrases of the one line, the marker whose line it must name or None)
USER_CODE20 = [
    (["analyze", "{bad}:loops", "--n", "8"], 3, ["unknown", STOPPED], None),
    (["analyze", "{bad}:sleeps", "--n", "8"], 3, ["unknown", STOPPED], None),
    (["analyze", "{bad}:swallows", "--n", "8"], 3, ["unknown", STOPPED], None),
    (["leak", "{bad}:loops", "--n", "4"], 3, ["unknown", STOPPED], None),
    (["analyze", "{bad}:make_loop(3)", "--n", "8"], 3, ["unknown", STOPPED], None),
    (["analyze", "{bad}:loops", "--n", "8", "--heads", "2"], 3, ["unknown", STOPPED], None),
    (["counterexample", "{bad}:design_loop", "--n", "3"], 3, ["unknown", STOPPED], None),
    (["analyze", "{bad}:exits", "--n", "8"], 2, ["mask_mod", "sys.exit(0)"], "exits"),
    (["analyze", "{bad}:make_exit(3)", "--n", "8"], 2, ["sys.exit(0)"], "make_exit"),
    (["counterexample", "{bad}:design_exit", "--n", "3"], 2, ["sys.exit(0)"], "design_exit"),
    (["analyze", "{bad}:hard_exits", "--n", "8"], 2, ["ended the process", "without an answer"], None),
    (["analyze", "{bad}:interrupts", "--n", "8"], 2, ["raised KeyboardInterrupt"], "interrupts"),
    (["prove-mask", "{bad}:symbolic_loop", "--claim", "dense"], 2, ["cannot run", "truth value"], "symbolic_loop"),  # a loop over a tensor: torch raises (issue 21)
    (["prove-mask", "{bad}:exits", "--claim", "dense"], 2, ["sys.exit(0)"], "exits"),
    (["prove-mask", "{bad}:hard_exits", "--claim", "dense"], 2, ["ended the process"], None),
    (["equiv", "{bad}:exits", "causal"], 2, ["sys.exit(0)"], "exits"),
]


@pytest.mark.parametrize("argv, want, phrases, marker", USER_CODE20, ids=lambda a: " ".join(a)
                         if isinstance(a, list) else None)
def test_issue20_user_code_that_loops_or_ends_the_process_is_one_line(argv, want, phrases, marker, tmp_path):
    """Before: loops and sleeps hung, sys.exit(0) ended the command with exit 0 and no output, os._exit killed it.

    Each runs as its own process (a hang or an os._exit would take the test run with it): --timeout 2 where the
    code never returns, a generous one where it ends by itself (a loaded machine must not turn it into a timeout).
    """
    (tmp_path / "bad.py").write_text(BAD20)
    limit = "2" if want == 3 else "120"
    cmd = [sys.executable, "-m", "hasse", *[a.format(bad=tmp_path / "bad.py") for a in argv], "--timeout", limit]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    err = proc.stderr.strip()
    assert proc.returncode == want, (proc.returncode, err, proc.stdout[-500:])
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for phrase in phrases:
        assert phrase in err, err
    if marker:
        assert f"bad.py:{_line20(marker)}" in err, err


def test_issue20_prove_mask_on_a_looping_mask_mod_or_invariant_is_unknown(tmp_path):
    """prove-mask and equiv: user code stopped at --timeout is the verdict unknown (exit 3), with the reason."""
    (tmp_path / "bad.py").write_text(BAD20)
    bad = str(tmp_path / "bad.py")
    for argv in (["prove-mask", f"{bad}:loops", "--claim", "dense"],
                 ["prove-mask", "causal", "--claim", "leak-free", "--task", "causal_lm", "--invariant", f"{bad}:loops"],
                 ["equiv", "causal", f"{bad}:sleeps"]):
        proc = subprocess.run([sys.executable, "-m", "hasse", *argv, "--timeout", "2", "--json"], capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 3, (argv, proc.stderr)
        data = json.loads(proc.stdout)
        assert data["verdict"] == "unknown" and STOPPED in data["reason"], data


@pytest.mark.parametrize("name, exception", [("divides", "ZeroDivisionError"), ("looks_up", "KeyError"),
                                             ("asserts", "AssertionError"), ("fails", "RuntimeError")])
def test_issue20_a_mask_mod_that_raises_names_the_users_file_and_line(name, exception, tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD20)
    code = main(["analyze", f"{tmp_path / 'bad.py'}:{name}", "--n", "8"])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"raised {exception} at bad.py:{_line20(name)}" in err, err


def test_issue20_a_factory_and_a_traced_mask_mod_that_raise_name_the_line(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD20)
    bad = tmp_path / "bad.py"
    assert main(["analyze", f"{bad}:make_fail(3)", "--n", "8"]) == 2
    err = capsys.readouterr().err
    assert f"raised AssertionError at bad.py:{_line20('make_fail')}: the factory says no" in err, err
    assert main(["prove-mask", f"{bad}:divides", "--claim", "dense"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"bad.py:{_line20('divides')}:" in err, err  # the line, then
    assert "the program raises ZeroDivisionError" in err, err  # what it raises (issue 21's wording of the tracer)


def test_issue20_a_mask_mod_that_allocates_without_bound_is_one_line(tmp_path):
    """The child's address space is limited: a MemoryError, one line at the user's line, not the machine's memory.

    The subprocess runs under RLIMIT_AS too (so that, before the fix, it failed instead of eating the machine),
    and the runner's own limit is lowered to 256 MiB (theory.user_code.limits) to keep the test small.
    """
    resource = pytest.importorskip("resource")
    (tmp_path / "bad.py").write_text(BAD20)
    script = ("import sys\nfrom hasse.cli import main\nfrom hasse.theory.user_code import limits\n"
              f"with limits(memory=256 << 20):\n    sys.exit(main(['analyze', {str(tmp_path / 'bad.py')!r} + ':grows',"
              " '--n', '8', '--timeout', '120']))\n")

    def cap():  # 4 GiB of address space for the whole process (Python and numpy map about 1 GiB)
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))

    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          preexec_fn=cap)
    err = proc.stderr.strip()
    assert proc.returncode == 2 and len(err.splitlines()) == 1, (proc.returncode, err[-800:])
    assert f"ran out of memory at bad.py:{_line20('grows')}" in err, err


# ==== issue 20, item 5 (sizes and counts, integers, prove-mask): one size limit for every form ==================
# Every row below must exit 2 with one short line on stderr and no traceback. Rows that hung or exhausted memory
# before run through hasse.cli.main in a forked copy of this process, with a generous wall-clock bound and a memory
# limit (a bound on a hang, not a timing assertion); gpu-check rows run in a subprocess (torch is not fork-safe).

import re as _re  # noqa: E402
import shlex as _shlex  # noqa: E402

from tests.bounded_run import bounded_main  # noqa: E402

SIZE_DIGITS = "9" * 5000  # Python's int-str limit is 4,300 digits
SIZE_400 = "9" * 400  # beyond 64 bits and beyond a float


def _primes(limit):
    return [p for p in range(2, limit) if all(p % d for d in range(2, int(p ** 0.5) + 1))]


def _prime_cycles(n=2000, cross=False):
    """A permutation mask made of cycles of distinct prime lengths (2, 3, 5, … while they fit), fixed points after."""
    perm, start = [], 0
    lengths = []
    for p in _primes(n):
        if start + p > n:
            break
        perm += [start + (i + 1) % p for i in range(p)]
        lengths.append(p)
        start += p
    perm += list(range(start, n))
    mask = np.zeros((n, n), dtype=bool)
    mask[np.arange(n), perm] = True
    if cross:
        mask[0, 2] = True  # an edge from the 2-cycle into the 3-cycle
    return mask, lengths


@pytest.fixture(scope="module")
def sizes20(tmp_path_factory):
    """Inputs that ask for more than fits: long rows, forged array shapes, deep stacks, prime cycles, a mask_mod."""
    d = tmp_path_factory.mktemp("sizes20")
    (d / "row.txt").write_text("1 " * 10 ** 6 + "\n")
    (d / "row.csv").write_text(",".join(["1"] * 10 ** 6) + "\n")
    (d / "rowtrue.txt").write_text(" ".join(["true"] * 10 ** 6) + "\n")  # the slow (per-token) reader
    (d / "two_rows.txt").write_text(("1 " * 60_000 + "\n") * 2)  # (2, 60000): a KV cache of 59,998 keys
    (d / "row.json").write_text(json.dumps({"mask": [[1] * 10 ** 6]}))
    for name, shape in (("h50k.npy", (50000, 50000)), ("h31.npy", (2 ** 31, 2 ** 31))):
        with open(d / name, "wb") as f:  # a header only: the shape is what counts
            np.lib.format.write_array_header_1_0(f, {"descr": "|b1", "fortran_order": False, "shape": shape})
    try:
        import torch

        one = torch.ones(1, dtype=torch.bool)
        torch.save(one.expand(2 ** 31, 2 ** 31), d / "z31.pt")  # stride 0: a few bytes on disk
        torch.save(one.expand(50000, 50000), d / "z50k.pt")
        torch.save(one.expand(1, 50000, 50000), d / "z50k_heads.pt")
        torch.save({"mask": one.expand(1, 1, 2 ** 40, 2 ** 20)}, d / "z40.pt")
    except ImportError:  # without torch a .pt file is refused (the extra is named): still one line, exit 2
        for name in ("z31.pt", "z50k.pt", "z50k_heads.pt", "z40.pt"):
            (d / name).write_bytes(b"not a tensor")
    stacks = {"stack_count": {"layers": [{"mask": "causal", "count": 10 ** 12}], "n": 4},
              "stack_repeat": {"layers": [{"mask": "causal"}], "n": 4, "repeat": 10 ** 12},
              "stack_both": {"layers": ["causal x1000000"], "n": 4, "repeat": 1000000},
              "stack_wide": {"layers": ["causal x2"], "n": 50000}}
    for name, data in stacks.items():
        (d / f"{name}.json").write_text(json.dumps(data))
    np.save(d / "primecycles2000.npy", _prime_cycles()[0])
    np.save(d / "primecycles_crossed.npy", _prime_cycles(cross=True)[0])
    (d / "heads.py").write_text("def m(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) | (h == 1)\n")
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for argv in (["analyze", "causal:n=3"], ["leak", "causal_lm:n=3"], ["prove-mask", "causal", "--claim", "dense"],
                     ["analyze", "--stack", "causal x2", "--n", "3"], ["merge", "ar:n=3"]):
            main(argv)  # the modules every row needs, imported once here rather than in each forked child
    return d


SIZES20 = [
    # positions: every form passes the one limit (n x n x 4 bytes within 8.6 GB: at most 46,340 positions)
    "analyze butterfly:n=30000", "leak butterfly:n=30000", "analyze butterfly:n=15448",  # 3n - 2 = 46,342
    "flow butterfly:n=30000 --from 0 --to 1", "analyze bd3lm:n=23171,block=1", "analyze causal:n=46341",
    "analyze document:lengths=1000000000+1", "leak packed:lengths=1000000000+1",
    "analyze {d}/row.txt", "analyze {d}/row.csv", "analyze {d}/rowtrue.txt", "analyze {d}/two_rows.txt",
    "analyze {d}/row.json",
    "analyze {d}/z31.pt", "analyze {d}/z50k.pt", "analyze {d}/z50k_heads.pt", "analyze {d}/z40.pt",
    "flow {d}/z50k.pt --from 0 --to 1",
    # stacks and presets: counts times repeats expand to at most 10,000 layers, checked before any is built
    "analyze --stack 'causal x1000000000' --n 4", "analyze --stack 'causal x99999999999999999999' --n 4",
    f"analyze --stack 'causal x{SIZE_DIGITS}' --n 4", "analyze --stack causal:n=4 --repeat 1000000000000",
    "analyze --stack 'causal x5000, bidirectional x5001' --n 4", "analyze --stack 'causal x100' --n 4 --repeat 101",
    "leak causal_lm:n=4 --stack causal --repeat 1000000000000", "analyze --stack {d}/stack_count.json",
    "analyze --stack {d}/stack_repeat.json", "analyze --stack {d}/stack_both.json",
    "analyze --stack {d}/stack_wide.json", "analyze --stack 'causal x2' --n 50000",
    "analyze gemma3:n=64,layers=100000000", "analyze gemma2:n=8,layers=1000000000000",
    "analyze llama4:n=8 --repeat 1000000", "leak causal_lm:n=8 --stack gemma3:n=8,layers=100000000",
    # counts of work: units, documents, the sizes of a search
    "prove limit_is_preorder --n 3 --engine dask --units 1000000000000",
    "audit --scenario packed --documents 999999999+1", "audit --documents 999999999+1",
    f"audit --scenario packed --documents 3+{SIZE_DIGITS}",
    "counterexample butterfly --n 100000", "counterexample causal_lm --n 1000000000000", "counterexample butterfly:n=100000",
    f"counterexample butterfly:n={SIZE_DIGITS}",
    # integers beyond 64 bits (a 5,000-digit one is past Python's int-str limit) in specs, ranges, options, shards
    f"analyze causal:n={SIZE_DIGITS}", f"analyze causal:n={SIZE_400}", f"analyze sliding_window:n=8,w={SIZE_DIGITS}",
    f"analyze document:lengths=2+{SIZE_DIGITS}", f"analyze gemma3:n=64,layers={SIZE_DIGITS}",
    f"merge ar:n={SIZE_400}", f"leak causal_lm:n={SIZE_DIGITS}", f"analyze causal:n=4 --layers {SIZE_DIGITS}",
    f"leak causal_lm:n=4 --heads {SIZE_DIGITS}", f"prove all --n 3 --shard 0/{SIZE_DIGITS}",
    f"prove-mask sliding_window --claim dense --param-range w=1..{SIZE_DIGITS}",
    "prove-mask sliding_window --claim dense --param-range w=1..99999999999999999999",
    f"prove-mask sliding_window:w={SIZE_DIGITS} --claim dense",
    f"equiv sliding_window sliding_window --param-range w=1..{SIZE_DIGITS}",
    # prove-mask: walks, heads and spec values
    "prove-mask sliding_window:w=4 --claim leak-free --task causal_lm --layers 1000000000 --timeout 20",
    "prove-mask bad_butterfly_crossed --claim leak-free --layers 1000000000 --timeout 20",
    "prove-mask bad_butterfly_crossed --claim leak-free --search-layers 1000000000 --timeout 20",
    "prove-mask {d}/heads.py:m --claim dense --heads 1000000000 --timeout 20",
    "prove-mask causal --claim dense --heads 0", "prove-mask causal --claim dense --heads -3",
    "prove-mask {d}/heads.py:m --claim dense --heads 0", "prove-mask causal --claim dense --heads 1000000000",
    "prove-mask sliding_window:w=abc --claim dense", "prove-mask sliding_window:w=four --claim leak-free --task "
    "causal_lm", "equiv sliding_window:w=abc sliding_window",
    # without the residual: a period too long to step through, on components joined by an edge
    "analyze {d}/primecycles_crossed.npy --no-residual",
]
SIZES20_SUBPROCESS = ["gpu-check causal:n=2000", "gpu-check --stack 'causal x4' --n 1000 --device cpu"]


def _bounded_main(argv, seconds=180.0, memory=4 << 30):
    """``(exit code, stderr)`` of ``main(argv)`` run in a forked copy of this process; None past ``seconds``.

    The child may use ``memory`` bytes more address space than the parent holds (so a size that
    used to be allocated fails there, not on the machine); a traceback is caught and returned.
    """
    result = bounded_main(argv, seconds, memory=memory, died="the child died (out of memory?)")
    return None if result is None else (result[0], result[2])


def _one_short_line(result, argv):
    assert result is not None, f"{argv}: still running after the bound (a hang)"
    code, err = result
    assert code == 2 and "Traceback" not in err, f"{argv}: exit {code}: {err[-2000:]}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 1000, f"{argv}: {len(lines)} lines: {err[:1000]}"
    return lines[0]


@pytest.mark.parametrize("argv", SIZES20, ids=lambda a: a[:70])
def test_issue20_sizes_counts_and_integers_exit_2_with_one_line(argv, sizes20):
    args = _shlex.split(argv.replace("{d}", str(sizes20)))
    line = _one_short_line(_bounded_main(args), argv)
    if "--documents" in argv:  # it said "--n must be a positive integer, got None" without a packed scenario
        assert "--documents" in line, line


@pytest.mark.parametrize("argv", SIZES20_SUBPROCESS)
def test_issue20_gpu_check_sizes_exit_2_with_one_line(argv, sizes20):
    args = _shlex.split(argv.replace("{d}", str(sizes20)))
    try:
        done = subprocess.run([sys.executable, "-m", "hasse", *args], capture_output=True, text=True, timeout=300)
        result = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        result = None
    _one_short_line(result, argv)


def test_issue20_every_array_form_meets_the_same_limit(sizes20, capsys):
    """A stride-0 .pt tensor is refused in the words of the .npy of the same shape (it was analysed, or crashed)."""
    said = {}
    for name in ("h50k.npy", "z50k.pt", "h31.npy", "z31.pt"):
        assert main(["analyze", str(sizes20 / name)]) == 2
        said[name] = capsys.readouterr().err.replace(name, "FILE")
    if "needs torch" not in said["z50k.pt"]:
        assert said["z50k.pt"] == said["h50k.npy"] and said["z31.pt"] == said["h31.npy"]
    assert "n = 50000 needs about 10.0 GB" in said["h50k.npy"]


def test_issue20_the_limit_is_one_number_for_every_form(tmp_path):
    """At the limit a mask of every form is accepted by the size check, one position more is refused (no matrix built)."""
    from hasse.theory.errors import TooLargeError
    from hasse.theory.limits import MAX_POSITIONS, MEMORY_BYTES, check_positions
    from hasse.theory.inputs.arrays import check_rank

    assert MAX_POSITIONS ** 2 * 4 <= MEMORY_BYTES < (MAX_POSITIONS + 1) ** 2 * 4  # the reference: 4 bytes an entry
    check_positions(MAX_POSITIONS)
    check_rank((MAX_POSITIONS, MAX_POSITIONS))
    for shape in ((MAX_POSITIONS + 1,) * 2, (1, 1, MAX_POSITIONS + 1, 3), (2 ** 40, 2 ** 40), (8, 30000, 30000)):
        with pytest.raises(TooLargeError):
            check_rank(shape)
    with pytest.raises(TooLargeError, match="about 10\\^"):  # a huge n is named, not converted to a float
        check_positions(10 ** 400)


def test_issue20_a_stack_deeper_than_it_may_be_built_is_answered_by_layers(capsys):
    """The decision: a stack is built layer by layer (at most 10,000), but R(L) of its repeated pattern at any depth
    is computed: --layers 10^12 of 'causal:n=4' equals the limit, found here by plain products to convergence."""
    from hasse.theory.stack import reach_reference

    assert main(["analyze", "--stack", "sliding_window:n=6,w=2", "--layers", HUGE, "--json"]) == 0
    got = np.array(json.loads(capsys.readouterr().out)["reachability"], dtype=bool)
    window = np.tril(np.ones((6, 6), dtype=bool)) & ~np.tril(np.ones((6, 6), dtype=bool), -2)
    assert np.array_equal(got, reach_reference([window], 6))  # converged by n layers: the same at 10^12
    assert main(["analyze", "--stack", "causal x10000", "--n", "4"]) == 0  # the limit itself is allowed
    capsys.readouterr()


def test_issue20_the_no_residual_period_of_prime_cycles_is_computed_at_once(sizes20):
    """analyze primecycles2000.npy --no-residual: cycles of distinct primes; period = lcm of the cycle lengths
    (from the permutation, by a plain walk), pre-period 0 (a permutation's powers come back to I)."""
    _, lengths = _prime_cycles()
    mask = np.load(sizes20 / "primecycles2000.npy")
    perm = mask.argmax(axis=1)
    walked = set()
    for start in range(len(perm)):
        q, k = perm[start], 1
        while q != start:
            q, k = perm[q], k + 1
        walked.add(k)
    assert sorted(walked - {1}) == lengths
    result = _bounded_main(["analyze", str(sizes20 / "primecycles2000.npy"), "--no-residual", "--json"])
    assert result is not None, "still running after the bound"
    code, err = result
    assert code == 0, err


def test_issue20_the_power_cycle_matches_plain_powers():
    """Pre-period and period against the first repeat among plain numpy powers (random masks, disjoint cycles)."""
    from hasse.theory.reach import power_cycle

    def reference(m):
        seen, p, t = {}, np.eye(len(m), dtype=bool), 0
        while p.tobytes() not in seen:
            seen[p.tobytes()] = t
            p, t = (m.astype(np.int64) @ p.astype(np.int64)) > 0, t + 1
        return seen[p.tobytes()], t - seen[p.tobytes()]

    rng = np.random.default_rng(20)
    masks = [rng.random((n, n)) < rng.uniform(0.05, 0.5) for n in rng.integers(1, 9, 150)]
    for n in (5, 9, 12):  # disjoint cycles and a tail into them: the block-by-block path and the joined one
        m = np.zeros((n, n), dtype=bool)
        cut = sorted(rng.choice(np.arange(1, n), 2, replace=False))
        for a, b in zip([0, *cut], [*cut, n]):
            m[np.arange(a, b), np.roll(np.arange(a, b), 1)] = True
        masks += [m, m | np.eye(n, k=-1, dtype=bool) * (rng.random((n, n)) < 0.3)]
    for m in masks:
        cycle = power_cycle(m)
        assert (cycle.preperiod, cycle.period) == reference(m), m.astype(int)


def test_issue20_every_integer_option_has_the_one_parser_type():
    """Every integer option of every subcommand is parsers.integer: 64-bit text, and its lower bound checked."""
    import argparse

    from hasse.cli.parsers import check_integers
    from hasse.theory.errors import InputError
    from tests.cli_parsers import commands

    seen = 0
    for name, parser in commands().items():
        for action in parser._actions:
            assert action.type is not int, f"hasse {name} {action.option_strings}: type=int (use parsers.integer)"
            if getattr(action.type, "__name__", "") != "integer":
                continue
            seen += 1
            assert action.type.flag in action.option_strings
            for text in ("abc", "1.5", SIZE_DIGITS, "9223372036854775808", ""):
                with pytest.raises(argparse.ArgumentTypeError):
                    action.type(text)
            assert action.type("7") == 7
            low = action.type.low
            if low is not None:
                bad = argparse.Namespace(**{action.dest: low - 1})
                with pytest.raises(InputError, match=_re.escape(action.type.flag)):
                    check_integers(parser, bad)
    assert seen >= 30


# --- issue 20, item 5: --timeout bounds the kit's own work in merge and consistent -------------
# (infill:n=2000 passes the family's memory estimate but its merge runs for hours; each case
# below runs for more than a minute here without the limit, so a faster machine still hits it)

@pytest.mark.parametrize("argv", [
    ["merge", "infill:n=2000", "--timeout", "1"],  # hours without the limit
    ["consistent", "block_two_stream:n=2000,block=2", "--inference", "block:n=2000,block=2", "--timeout", "1"],  # > 60 s
])
def test_issue20_timeout_bounds_the_merge_itself(argv):
    proc = subprocess.run([sys.executable, "-m", "hasse", *argv], capture_output=True, text=True, timeout=300)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 3, proc.stderr[-1000:]
    assert len(lines) == 1 and lines[0].startswith("hasse: unknown:") and "--timeout" in lines[0], lines
    assert proc.stdout == ""

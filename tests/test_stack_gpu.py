"""gpu-check --stack: a real model whose block i runs layer i of a stack, against the stack's R(L).

- the scan of the recurrent layer equals the plain loop s_t = a_t s_{t-1} + u_t;
- a mixed stack (sliding window x2, causal, recurrent) at n = 12 on the CPU in float64,
  with every CPU backend: zero unexpected, zero missing, and the observed pattern equal
  to theory.stack.reach_reference (a plain numpy product, independent of the engine);
- planted bugs, each caught as exactly the unexpected pairs the reference predicts for
  the buggy model: a layer given the wrong (transposed) mask, the recurrence without its
  state reset, the layers run in reverse order;
- a TASK run through a stack: leak gradients where theory.stack_leak finds leaks;
- the command line: exit codes 0 / 1 / 2 and the JSON against docs/schema.json;
- the prepared device run (gpu_check.run_gpu) with a stack subject, on the CPU;
- CUDA: the mixed stack on the GPU's backends (skipped without a device).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hasse.cli import main  # noqa: E402
from hasse.gpu_check import recurrence as recurrence_module  # noqa: E402
from hasse.gpu_check import check as check_module  # noqa: E402
from hasse.gpu_check.check import dependency_check, run_check  # noqa: E402
from hasse.gpu_check.config import StackConfig, torch_threads  # noqa: E402
from hasse.gpu_check.recurrence import linear_scan, segment_starts  # noqa: E402
from hasse.theory.catalog import build_task  # noqa: E402
from hasse.theory.errors import InputError  # noqa: E402
from hasse.theory.stack import reach_reference  # noqa: E402
from hasse.theory.stack_leak import find_stack_leaks  # noqa: E402
from hasse.theory.inputs.stacks import build_stack  # noqa: E402

N = 12
MIXED = "sliding_window:w=2 x2, causal, recurrent:chunk=4"
# no causal layer: every layer's boundary matters (a causal layer would make R(L) the whole lower triangle)
LOCAL = "recurrent:chunk=4, sliding_window:w=2 x2"
CPU_BACKENDS = ("manual", "sdpa", "flex", "mha")
SMALL = StackConfig(width=8, heads=2)
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with torch_threads(1):
        yield


def masks_of(stack) -> list[np.ndarray]:
    return [layer.mask for layer in stack.layers]


def pairs(matrix: np.ndarray) -> set[tuple[int, int]]:
    return set(map(tuple, np.argwhere(matrix).tolist()))


def causal(n: int) -> np.ndarray:
    return np.tri(n, dtype=bool)


# --------------------------------------------------------------------------- the recurrence


def test_linear_scan_equals_the_plain_loop():
    gen = torch.Generator().manual_seed(3)
    for t in (1, 2, 5, 12, 33):
        a = torch.rand(2, t, 3, generator=gen, dtype=torch.float64)
        a[:, ::5] = 0  # resets
        u = torch.randn(2, t, 3, generator=gen, dtype=torch.float64)
        s, want = torch.zeros(2, 3, dtype=torch.float64), []
        for i in range(t):
            s = a[:, i] * s + u[:, i]
            want.append(s)
        assert torch.allclose(linear_scan(a, u), torch.stack(want, dim=1), rtol=1e-12, atol=1e-12)


def test_segment_starts_of_recurrent_patterns():
    assert segment_starts(causal(5)).tolist() == [True, False, False, False, False]
    chunked = build_stack("recurrent:chunk=3", n=7).layers[0].mask
    assert np.flatnonzero(segment_starts(chunked)).tolist() == [0, 3, 6]
    with pytest.raises(InputError, match="causal within segments"):
        segment_starts(build_stack("sliding_window:w=2", n=4).layers[0].mask)  # not a recurrence's pattern


# --------------------------------------------------------------------------- clean stacks


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_mixed_stack_agrees_with_the_numpy_reference(backend):
    stack = build_stack(MIXED, n=N)
    assert [layer.kind for layer in stack.layers] == ["attention"] * 3 + ["recurrent"]
    report = dependency_check(stack, backend=backend, config=SMALL, seeds=2)
    want = reach_reference(masks_of(stack), stack.depth)
    assert report.layers == 4
    assert report.unexpected == () and report.missing == ()
    assert np.array_equal(report.theory, want)
    assert np.array_equal(report.observed, want)
    assert report.method == ("perturbation" if backend == "flex" else "vjp")


@pytest.mark.parametrize("backend", ("manual", "sdpa"))
@pytest.mark.parametrize("layers", (1, 3, 5))
def test_local_stack_at_other_depths_cycles_its_layers(backend, layers):
    stack = build_stack(LOCAL, n=N)
    report = dependency_check(stack, layers, backend, config=SMALL, seeds=2)
    want = reach_reference(masks_of(stack), layers)
    assert report.agrees and np.array_equal(report.observed, want)
    assert not want[N - 1, 0]  # the pattern has zeros for the checks below to read


def test_repeated_stack_through_the_api():
    stack = build_stack(LOCAL, n=N, repeat=2)
    result = run_check(stack, config=SMALL, seeds=1)
    assert result.passed and result.kind == "stack" and result.report.layers == 6
    assert np.array_equal(result.report.observed, reach_reference(masks_of(stack), 6))


# --------------------------------------------------------------------------- planted bugs


def test_planted_wrong_mask_is_caught(monkeypatch):
    """The causal layer given its transpose (keys and queries swapped): future pairs show up, past ones go."""
    stack = build_stack(MIXED, n=N)
    real = check_module.layer_attention

    def wrong(layer, backend, device="cpu", **kw):
        if layer.spec.startswith("causal"):
            layer = type(layer)(layer.mask.T.copy(), layer.spec, layer.kind)
        return real(layer, backend, device, **kw)

    monkeypatch.setattr(check_module, "layer_attention", wrong)
    report = dependency_check(stack, config=SMALL, seeds=2)
    buggy = [m.T if layer.spec.startswith("causal") else m for m, layer in zip(masks_of(stack), stack.layers)]
    expected = reach_reference(buggy, 4) & ~reach_reference(masks_of(stack), 4)
    assert expected.any()
    assert set(report.unexpected) == pairs(expected)
    lost = reach_reference(masks_of(stack), 4) & ~reach_reference(buggy, 4)  # the lower triangle it no longer reads
    assert set(report.missing) == pairs(lost)


@pytest.mark.parametrize("backend", ("manual", "flex"))
def test_planted_recurrence_without_reset_is_caught(monkeypatch, backend):
    stack = build_stack(LOCAL, n=N)
    assert dependency_check(stack, backend=backend, config=SMALL, seeds=1).agrees

    def no_reset(mask, source=None):
        starts = np.zeros(np.asarray(mask).shape[0], dtype=bool)
        starts[0] = True
        return starts

    monkeypatch.setattr(recurrence_module, "segment_starts", no_reset)
    report = dependency_check(stack, backend=backend, config=SMALL, seeds=1)
    buggy = [causal(N) if layer.kind == "recurrent" else layer.mask for layer in stack.layers]
    expected = reach_reference(buggy, 3) & ~reach_reference(masks_of(stack), 3)
    assert expected.any()
    assert set(report.unexpected) == pairs(expected)


def test_planted_reversed_layer_order_is_caught(monkeypatch):
    stack = build_stack(LOCAL, n=N)
    real = check_module.layer_attentions
    monkeypatch.setattr(check_module, "layer_attentions", lambda *a, **kw: real(*a, **kw)[::-1])
    report = dependency_check(stack, config=SMALL, seeds=2)
    expected = reach_reference(masks_of(stack)[::-1], 3) & ~reach_reference(masks_of(stack), 3)
    assert expected.any()
    assert set(report.unexpected) == pairs(expected)


# --------------------------------------------------------------------------- a task through a stack


def test_task_through_a_stack_leaks_where_theory_says():
    task = build_task("butterfly:n=3")
    stack = build_stack("causal x2", n=task.size)
    result = run_check(task, stack=stack, config=SMALL, seeds=2)
    theory = find_stack_leaks(task, stack, 2)
    assert result.kind == "task" and result.report.agrees and result.gradients_match_theory
    assert {(x.position, x.source) for x in theory.leaks_within()} == {(x.position, x.source)
                                                                       for x in result.theory_leaks}
    assert theory.leaks_within() and result.leaking and not result.passed
    seen = {(g.position, s.source) for g in result.leak_gradients for s in g.gradients if s.dependent}
    assert {(x.position, x.source) for x in result.theory_leaks} <= seen


def test_task_of_another_size_is_refused():
    with pytest.raises(InputError, match="positions"):
        run_check(build_task("butterfly:n=3"), stack=build_stack("causal", n=4), seeds=1)


# --------------------------------------------------------------------------- command line


def cli(capsys, *argv):
    code = main(["gpu-check", *map(str, argv), "--device", "cpu"])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_clean_stack_exit_0_and_report(capsys):
    code, out, err = cli(capsys, "--stack", MIXED, "--n", N, "--seeds", 1)
    assert code == 0, err
    assert "(stack, 12 positions)" in out and "L = 4" in out
    assert "blocks 1-2" in out and "recurrent: a gated linear recurrence" in out
    assert "verdict: PASS" in out


def test_cli_task_through_leaky_stack_exit_1(capsys):
    code, out, _ = cli(capsys, "butterfly:n=3", "--stack", "causal x2", "--seeds", 1)
    assert code == 1 and "the design leaks" in out and "--stack SPEC" in out


@pytest.mark.parametrize("argv, message", [
    (["causal:n=4", "--stack", "causal x2"], "give a TASK with it"),
    (["--stack", "causal x2"], "no size"),
    (["causal:n=4", "--repeat", "2"], "--repeat"),
    ([], "give a MASK or TASK"),
    (["--stack", "causal x0", "--n", 4], "positive"),
    (["--stack", "nosuchmask", "--n", 4], "nosuchmask"),
    (["butterfly:n=3", "--stack", "causal", "--n", 5], "positions"),
    (["--stack", "causal:n=4, causal:n=5"], "positions"),
    (["--stack", "causal", "--n", 4, "--train-demo"], "--train-demo"),
    (["gemma3:n=8", "--layers", 65], "--layers"),
])
def test_cli_bad_stack_input_exit_2(capsys, argv, message):
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_stack_layer_with_an_empty_row_exit_2(capsys, tmp_path):
    mask = causal(6)
    mask[2] = False
    np.save(tmp_path / "empty_row.npy", mask)
    code, _, err = cli(capsys, "--stack", f"causal, {tmp_path / 'empty_row.npy'}", "--n", 6)
    assert code == 2 and "layer 2" in err and "empty row" in err and len(err.strip().splitlines()) == 1


def test_public_api_takes_a_stack():
    from hasse.api import check_gradients

    stack = build_stack(LOCAL, n=N)
    result = check_gradients(stack, seeds=1)
    assert result.passed and result.stack is stack
    assert np.array_equal(result.report.observed, reach_reference(masks_of(stack), stack.depth))


def stack_json_cases():
    return [
        ["--stack", MIXED, "--n", N, "--seeds", 1],
        ["--stack", LOCAL, "--n", N, "--repeat", 2, "--seeds", 1, "--backend", "flex"],
        ["gpt_oss:n=8,scale=32", "--layers", 3, "--seeds", 1],
        ["butterfly:n=3", "--stack", "causal x2", "--seeds", 1],
    ]


@pytest.mark.parametrize("argv", stack_json_cases())
def test_cli_json_matches_schema(capsys, argv):
    pytest.importorskip("jsonschema")
    from tests.test_json_schema import problems

    code, out, err = cli(capsys, *argv, "--json")
    data = json.loads(out)
    assert problems("gpu-check", data) == []
    assert code == (0 if data["passed"] else 1), err
    assert data["stack"]["depth"] >= 1 and data["stack"]["spec"]
    assert data["kind"] == ("task" if argv[0] == "butterfly:n=3" else "stack")
    if data["kind"] == "stack":  # the header as analyze writes it: the stack as given, its canonical spec
        assert data["input"] in (argv[0], argv[1]) and data["spec"] == data["stack"]["spec"]
    else:
        assert (data["input"], data["spec"]) == ("butterfly:n=3", "butterfly:n=3")


def test_cli_json_without_stack_has_no_stack_field(capsys):
    code, out, _ = cli(capsys, "causal:n=4", "--layers", 1, "--seeds", 1, "--json")
    assert code == 0 and "stack" not in json.loads(out)


def test_prepared_device_run_takes_a_stack_subject(tmp_path):
    from hasse.gpu_check import run_gpu

    out = tmp_path / "run.json"
    code = run_gpu.main([str(out), "--n", str(N), "--device", "cpu", "--naive-sample", "0", "--backends", "manual,flex",
                         "--subject", f"stack:{LOCAL}"])
    data = json.loads(out.read_text())
    assert code == 0 and data["all_agree"] and data["finished"]
    (entry,) = data["subjects"]
    assert entry["kind"] == "stack" and entry["agreement_skipped"]
    assert [(d["backend"], d["layers"], d["agrees"]) for d in entry["dependency"]] == [("manual", 3, True),
                                                                                       ("flex", 3, True)]


# --------------------------------------------------------------------------- CUDA


@CUDA
@pytest.mark.parametrize("backend", ("manual", "sdpa", "flex", "mha"))
def test_cuda_mixed_stack_agrees(backend):
    stack = build_stack(MIXED, n=N)
    report = dependency_check(stack, backend=backend, device="cuda", config=StackConfig(width=32, heads=2),
                                    seeds=2)
    assert report.method == "vjp" and report.agrees
    assert np.array_equal(report.observed, reach_reference(masks_of(stack), stack.depth))

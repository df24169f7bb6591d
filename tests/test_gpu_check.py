"""gpu_check: real attention layers against the theory (CPU here; CUDA tests skip without a device).

- every backend agrees with the manual reference on values and gradients;
- FlexAttention on the CPU (forward only): perturbing an unreachable input moves
  outputs by no more than the kernel's own noise (measured in the same run),
  perturbing a reachable one moves them above it;
- the noise rule: a clean mask passes on a noisy kernel, a masked key given weight
  1e-6 is caught; VJPs stay exact; norms across batchings agree to round-off;
- the observed dependency pattern equals R(L) on the case studies for every backend,
  including a sliding window checked at fewer layers than its depth;
- MultiheadAttention given the kit's mask uninverted is caught;
- leak gradients: exact zeros for the clean designs, nonzeros exactly where theory
  puts a leak path for every bad design of design.md §4;
- missing vs cancellation, empty rows, the command line, no torch, the train demo.
"""

import doctest
import importlib
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hasse.gpu_check import check as check_module  # noqa: E402
from hasse.gpu_check import dependency as dependency_module  # noqa: E402
from hasse.gpu_check.backends import make_attention, to_mha_mask  # noqa: E402
from hasse.gpu_check.check import dependency_check, run_check  # noqa: E402
from hasse.gpu_check.compare import compare_backends  # noqa: E402
from hasse.gpu_check.config import StackConfig, torch_threads  # noqa: E402
from hasse.gpu_check.dependency import (  # noqa: E402
    NOISE_MARGIN,
    EmptyRowsError,
    classify,
    dependent,
    noise_thresholds,
    observe_dependencies,
    observe_perturbation,
    random_input,
)
from hasse.gpu_check.model import build_stack  # noqa: E402
from hasse.gpu_check.train_demo import DemoConfig, bad_twin, clean_twin, train_demo  # noqa: E402
from hasse.cli import main  # noqa: E402
from hasse.theory.catalog import build_mask, build_task  # noqa: E402
from hasse.theory.leak import find_leaks  # noqa: E402
from hasse.theory.reach import reach  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CPU_BACKENDS = ("manual", "sdpa", "flex", "mha")
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
SMALL = StackConfig(width=8, heads=2)
WIDE = StackConfig(width=32, heads=2)  # head dim 16: Triton kernels (compiled flex) want >= 16


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Small tensors: one intra-op thread (many times faster on a busy 2-core machine)."""
    with torch_threads(1):
        yield


def mask_of(spec):
    return build_mask(spec).matrix


# ---------------------------------------------------------------- backends vs the reference

@pytest.mark.parametrize("spec", ["butterfly:n=4", "block_two_stream:n=6,block=2", "sliding_window:n=10,w=3",
                                  "document:lengths=3+4"])
def test_backends_agree_with_reference_on_values_and_gradients(spec):
    results = compare_backends(mask_of(spec), ["sdpa", "flex", "mha"], "cpu", layers=2, config=SMALL)
    by_name = {a.backend: a for a in results}
    for a in results:
        assert a.error is None and a.agrees, a
        assert a.value_error < 1e-12
    assert by_name["sdpa"].grad_error < 1e-12 and by_name["mha"].grad_error < 1e-12
    assert by_name["flex"].grad_error is None  # FlexAttention has no backward on the CPU


def test_mha_mask_is_inverted():
    m = mask_of("causal:n=3")
    assert np.array_equal(to_mha_mask(torch.tensor(m)).numpy(), ~m)


def test_flex_cpu_has_no_backward_so_the_check_uses_perturbations():
    report = dependency_check(mask_of("causal:n=5"), 1, "flex", "cpu", seeds=1, config=SMALL)
    assert report.method == "perturbation" and report.agrees


def test_flex_forward_perturbation_moves_exactly_the_reachable_outputs():
    """Perturbing one input by hand (separate forward calls, no kit code) moves out_q above the noise iff R(L).

    Not bit-identity: a kernel may round a row differently from call to call or by its
    place in a batch. The noise floor is the one observe_perturbation measures in the
    same run, and the hand-made changes are decided by the same rule.
    """
    mask = mask_of("sliding_window:n=12,w=3")
    layers = 2
    theory = reach(mask, layers)
    stack = build_stack(StackConfig(layers=layers, width=8, heads=2))
    attention = make_attention("flex", mask)
    x = random_input(12, 8, 0, "cpu")
    measured = observe_perturbation(stack, attention, x, chunk=5)
    thresholds, _ = noise_thresholds(measured.noise[None], measured.scale[None])
    thresholds = thresholds[0]  # (T,)
    assert np.array_equal(dependent(measured.norms, thresholds), theory)
    with torch.no_grad():
        base = stack(x, attention)[0]  # (T, C)
        for k in (0, 5, 11):
            moved = x.clone()
            moved[0, k] += torch.randn(8, dtype=x.dtype)  # not a constant: LayerNorm removes constant shifts
            change = (stack(moved, attention)[0] - base).norm(dim=-1).numpy()  # (T,)
            assert np.array_equal(change > thresholds, theory[:, k]), k


# ---------------------------------------------------------------- dependency pattern == R(L)

CASES = [("butterfly:n=4", 1), ("butterfly:n=4", 2), ("block_two_stream:n=8,block=2", 1),
         ("block_two_stream:n=6,block=3,variant=clique", 2),
         ("sliding_window:n=16,w=3", 2), ("sliding_window:n=16,w=3", 3)]  # depth 8: L < L*


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("spec,layers", CASES)
def test_dependency_pattern_equals_reach(spec, layers, backend):
    mask = mask_of(spec)
    report = dependency_check(mask, layers, backend, "cpu", seeds=2, config=SMALL)
    assert report.agrees, (report.unexpected[:5], report.missing[:5])
    assert np.array_equal(report.observed, reach(mask, layers))
    if spec.startswith("sliding_window"):
        assert not report.theory.all(axis=1).any()  # zeros that are there only because L is small


def test_vmap_replicated_and_looped_vjps_give_the_same_norms():
    mask = mask_of("butterfly:n=4")
    stack = build_stack(StackConfig(layers=2, width=8, heads=2))
    x = random_input(mask.shape[0], 8, 0, "cpu")
    for backend in ("manual", "sdpa", "mha"):
        attention = make_attention(backend, mask)
        a = dependency_module.observe_vjp(stack, attention, x, chunk=3, batched="vmap")
        for b in (dependency_module.observe_vjp(stack, attention, x, chunk=4, batched="replicate"),
                  dependency_module.observe_vjp(stack, attention, x, batched="loop")):
            assert np.array_equal(a != 0, b != 0) and same_norms(a, b)
        some = dependency_module.observe_vjp(stack, attention, x, chunk=2, positions=[1, 4, 7])
        assert np.array_equal(some[[1, 4, 7]] != 0, a[[1, 4, 7]] != 0) and same_norms(some[[1, 4, 7]], a[[1, 4, 7]])
        assert not some[[0, 2, 3]].any()


def same_norms(a: np.ndarray, b: np.ndarray, ulps: int = 4096) -> bool:
    """Equal up to round-off: within ``ulps`` units of the dtype's precision at the largest norm measured.

    The structure (zero or not) is compared exactly by the callers: a VJP is exactly
    zero where no path exists, whatever the batching. The nonzero values need not be
    bit-identical across batchings: vmap, replicated copies and one backward per
    position run the same sums in other orders (other blocking and kernels, another
    CPU). Reordering a sum of m terms moves it by at most about 2 m eps times the sum
    of their magnitudes; along the forward and backward of 2 blocks (some 40
    operations, each summing at most 16 terms here) that compounds to at most a few
    thousand ulps of the largest magnitude, hence 4,096 ulps (9e-13 in float64) of the
    largest norm, not of each entry (a small entry carries the absolute round-off of
    the large terms it was computed from). A real disagreement (a wrong row, a
    dropped key) is of the order of the norms themselves.
    """
    eps = np.finfo(np.result_type(a, b)).eps
    scale = max(float(np.abs(a).max(initial=0.0)), float(np.abs(b).max(initial=0.0)))
    return bool(np.all(np.abs(a - b) <= ulps * eps * scale))


def test_uninverted_mha_mask_is_reported_as_unexpected_dependencies():
    mask = mask_of("butterfly:n=4")
    wrong = run_check(mask, 1, "mha", invert_mha=False, config=SMALL).report
    assert not wrong.agrees and wrong.unexpected
    assert all(not mask[q, k] and q != k for q, k in wrong.unexpected)  # reads exactly the blocked keys
    right = run_check(mask, 1, "mha", config=SMALL).report
    assert right.agrees


# ---------------------------------------------------------------- the noise rule (issue 20)

def noisy(attention, relative: float = 1e-15, seed: int = 0):
    """A nondeterministic backend: ``attention`` with random relative noise on every call (each element, each call).

    What a kernel whose reduction order changes from run to run (threads) or with a
    row's place in a batch does to its outputs, at a few ulps in float64.
    """
    gen = torch.Generator().manual_seed(seed)

    def call(attn, h):
        out = attention(attn, h)
        return out * (1 + relative * torch.randn(out.shape, generator=gen, dtype=out.dtype))

    return call


def leaky(mask: np.ndarray, query: int, key: int, weight: float = 1e-6):
    """The reference attention, except that ``query`` gives the masked ``key`` attention weight ``weight``."""
    from hasse.gpu_check.backends import manual_attention, merge_heads, split_heads

    assert not mask[query, key]
    m = torch.tensor(mask)

    def kernel(q, k, v):  # (B, H, T, D) each
        o = manual_attention(q, k, v, m)
        leak = torch.zeros_like(o)
        leak[..., query, :] = weight * (v[..., key, :] - o[..., query, :])  # (1 - w) o_q + w v_k
        return o + leak

    return lambda attn, h: merge_heads(attn, kernel(*split_heads(attn, h)))


@pytest.mark.parametrize("method", ["perturbation", "vjp"])
def test_a_clean_mask_passes_when_the_forward_is_noisy(method):
    """Random ~1e-15 relative noise on every forward: round-off, not a leak (before issue 20: every masked pair)."""
    mask = mask_of("causal:n=6")
    for layers in (1, 2):
        theory = reach(mask, layers)
        report = observe_dependencies(noisy(make_attention("manual", mask)), theory, "manual", "cpu",
                                      config=StackConfig(layers=layers, width=8, heads=2), method=method)
        assert report.agrees and np.array_equal(report.observed, theory), report.unexpected
        if method == "perturbation":  # the noise was measured, and it is what the rule decided against
            assert 0 < report.noise_json()["largest"] and report.noise_json()["rule"] == "measured"
            assert 0 < report.detection_limit < 1e-12
            assert (report.norms[:, ~theory] > 0).any()  # the masked pairs do move (by noise) ...
            assert (report.norms[:, ~theory] <= report.thresholds[:, :, None].repeat(6, 2)[:, ~theory]).all()
        else:  # a VJP is exact: the noise multiplies the gradient, a zero stays exactly zero
            assert report.thresholds is None and (report.norms[:, ~theory] == 0).all()


@pytest.mark.parametrize("method", ["perturbation", "vjp"])
@pytest.mark.parametrize("noise", [0.0, 1e-15])
def test_a_masked_key_with_weight_1e_6_is_caught(method, noise):
    """Plant: output 2 reads the future key 5 with weight 1e-6 — a leak, on a clean and on a noisy backend."""
    mask = mask_of("causal:n=6")
    theory = reach(mask, 1)
    attention = leaky(mask, 2, 5)
    if noise:
        attention = noisy(attention, noise)
    report = observe_dependencies(attention, theory, "manual", "cpu", config=StackConfig(layers=1, width=8, heads=2),
                                  method=method)
    assert report.unexpected == ((2, 5),) and not report.missing
    assert report.detection_limit < 1e-6 * report.norms[:, 2, 5].min()  # far above the noise in every seed


def test_the_noise_rule_by_hand():
    """noise_thresholds and dependent against the rule written out (design.md §9)."""
    noise = np.array([[0.0, 1e-15, 0.0], [2e-15, 0.0, np.nan]])  # (S, T); NaN: a NaN output
    scale = np.array([[4.0, 2.0, 0.0], [1.0, 8.0, 3.0]])
    thresholds, rho = noise_thresholds(noise, scale)
    assert rho == max(1e-15 / 2.0, 2e-15 / 1.0)
    want = NOISE_MARGIN * np.array([[rho * 4.0, max(1e-15, rho * 2.0), 0.0], [max(2e-15, rho), rho * 8.0, rho * 3.0]])
    assert np.allclose(thresholds, want, rtol=1e-15, atol=0)
    norms = np.array([[[1e-20, 1.0], [0.0, np.nan]]])  # (1, 2, 2)
    assert dependent(norms, np.array([[1e-15, 1.0]])).tolist() == [[[False, True], [False, True]]]
    assert dependent(norms).tolist() == [[[True, True], [False, True]]]  # no threshold: any nonzero, NaN
    theory = np.array([[1, 0], [1, 1]], dtype=bool)
    assert classify(theory, norms, np.array([[1e-15, 1.0]])) == (((0, 1),), ((0, 0), (1, 0)), 0)
    assert np.all(noise_thresholds(np.zeros((2, 3)), scale)[0] == 0)  # bit-reproducible: the exact rule


def test_cli_states_the_noise_and_passes_a_clean_mask_on_a_noisy_kernel(capsys, monkeypatch):
    """The report of issue 20 (`causal:n=6 --backend flex`: 5 -> 4 norm 6.99e-16, FAIL) on a noisy FlexAttention."""
    real = check_module.make_attention
    monkeypatch.setattr(check_module, "make_attention", lambda *a, **k: noisy(real(*a, **k)))
    code, out, err = cli(capsys, "causal:n=6", "--backend", "flex", "--device", "cpu")
    assert code == 0 and "verdict: PASS" in out, out + err
    assert "noise: the forward twice and with a zero perturbation differ by up to" in out
    code, out, err = cli(capsys, "butterfly:n=4", "--backend", "flex", "--device", "cpu", "--json")
    data = json.loads(out)
    assert code == 0 and data["passed"] and data["noise"]["rule"] == "measured" and data["noise"]["largest"] > 0
    assert len(data["noise"]["per_position"]) == data["positions"]
    assert not any(s["dependent"] for g in data["leak_gradients"] for s in g["gradients"])
    monkeypatch.setattr(check_module, "make_attention", real)
    code, out, err = cli(capsys, "butterfly:n=4", "--device", "cpu", "--json")
    assert code == 0 and json.loads(out)["noise"]["rule"] == "exact" and json.loads(out)["noise"]["margin"] is None


# ---------------------------------------------------------------- missing vs cancellation

def test_classify_missing_only_when_every_seed_is_zero():
    theory = np.array([[1, 0], [1, 1]], dtype=bool)
    cancelled_once = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [2.0, 1.0]]])
    assert classify(theory, cancelled_once) == ((), (), 1)
    zero_everywhere = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])
    assert classify(theory, zero_everywhere) == ((), ((1, 0),), 0)
    leak_in_one_seed = np.array([[[1.0, 0.0], [1.0, 1.0]], [[1.0, 1e-300], [1.0, 1.0]]])
    assert classify(theory, leak_in_one_seed) == (((0, 1),), (), 0)
    nan = np.array([[[1.0, np.nan], [1.0, 1.0]]])
    assert classify(theory, nan)[0] == ((0, 1),)  # NaN counts as nonzero


def test_dependency_check_reports_missing_only_if_all_seeds_agree(monkeypatch):
    real = dependency_module.observe_vjp
    mask = mask_of("causal:n=4")

    def zero_in_seeds(seeds):
        def observe(stack, attention, x, *, seed, **kw):
            norms = real(stack, attention, x, seed=seed, **kw)
            if seed in seeds:
                norms[3, 0] = 0.0  # pretend a cancellation at a reachable pair
            return norms
        return observe

    monkeypatch.setattr(dependency_module, "observe_vjp", zero_in_seeds({0}))
    report = dependency_check(mask, 1, seeds=3, config=SMALL)
    assert report.agrees and report.missing == () and report.cancelled == 1
    monkeypatch.setattr(dependency_module, "observe_vjp", zero_in_seeds({0, 1, 2}))
    report = dependency_check(mask, 1, seeds=3, config=SMALL)
    assert report.missing == ((3, 0),) and not report.agrees


def test_out_of_memory_halves_the_chunk_and_missing_vmap_rules_fall_back(monkeypatch):
    real = dependency_module.observe_vjp
    chunks = []

    def picky(stack, attention, x, *, chunk, batched, **kw):
        chunks.append(chunk)
        if chunk > 2:
            raise torch.OutOfMemoryError("pretend")
        if batched == "vmap":
            raise RuntimeError("pretend: no batching rule")
        return real(stack, attention, x, chunk=chunk, batched=batched, **kw)

    monkeypatch.setattr(dependency_module, "observe_vjp", picky)
    report = dependency_check(mask_of("causal:n=6"), 2, "sdpa", seeds=2, config=SMALL, chunk=8)
    assert report.agrees and report.batching == "replicate" and chunks[:3] == [8, 4, 2]


def test_empty_rows_are_detected_before_running(monkeypatch):
    mask = mask_of("causal:n=4").copy()
    mask[2] = False
    monkeypatch.setattr(dependency_module, "build_stack", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(EmptyRowsError, match="1 empty row.*2"):
        dependency_check(mask, 1)


# ---------------------------------------------------------------- leak gradients

def nonzero_pairs(result):
    return {(g.position, s.source) for g in result.leak_gradients for s in g.gradients if s.dependent}


def theory_pairs(task, layers):
    """(position, source) with a target of position held by source and a path within L layers."""
    r = reach(task.mask, layers)
    sources = task.all_sources()
    return {(p, j) for p in task.supervised for t in task.labels[p] for j in range(task.size)
            if t in sources[j] and r[p, j]}


@pytest.mark.parametrize("backend", ["manual", "sdpa", "mha"])
@pytest.mark.parametrize("spec", ["butterfly:n=5", "block_two_stream:n=8,block=2",
                                  "block_two_stream:n=6,block=3,variant=clique"])
def test_clean_designs_have_exactly_zero_leak_gradients(spec, backend):
    result = run_check(build_task(spec), 2, backend, config=SMALL)
    assert result.passed and result.report.agrees
    assert all(s.norm == 0.0 for g in result.leak_gradients for s in g.gradients)
    assert len(result.leak_gradients) == len(build_task(spec).supervised)


BAD = [("bad_butterfly_self:n=4", 1), ("bad_butterfly_crossed:n=4", 2), ("bad_butterfly_crossed:n=4", 1),
       ("bad_block_own_content:n=4,block=2", 1), ("bad_mlm_unmasked:n=4", 1),
       ("bad_block_query_history:n=6,block=2", 2)]


@pytest.mark.parametrize("spec,layers", BAD)
def test_bad_designs_leak_exactly_where_theory_says(spec, layers):
    task = build_task(spec)
    result = run_check(task, layers, "sdpa", config=SMALL)
    leaks = find_leaks(task, layers).leaks_within()
    assert result.report.agrees
    assert nonzero_pairs(result) == theory_pairs(task, layers)
    assert {(x.position, x.source) for x in leaks} <= nonzero_pairs(result)  # every witness `hasse leak` names
    leaking_targets = {(g.position, s.target) for g in result.leak_gradients for s in g.gradients if s.dependent}
    assert leaking_targets == {(x.position, x.target) for x in leaks}
    assert result.passed == (not leaks)


def test_crossed_butterfly_leaks_only_from_depth_two():
    task = build_task("bad_butterfly_crossed:n=4")
    assert not run_check(task, 1, config=SMALL).leaking
    assert run_check(task, 2, config=SMALL).leaking


def test_packed_window_breaks_isolation_in_gradients():
    task = build_task("bad_packed_window:lengths=3+4,window=3")
    result = run_check(task, 2, "sdpa", config=SMALL)
    r = reach(task.mask, 2)
    group = {p: g for g, members in enumerate(task.isolate) for p in members}
    expected = {(p, j) for p in group for j in group if group[p] != group[j] and r[p, j]}
    assert {(x.position, x.source) for x in result.isolation_gradients} == expected
    assert {(x.position, x.source) for x in find_leaks(task, 2).isolation_within()} <= expected
    assert not result.passed and result.report.agrees


# ---------------------------------------------------------------- command line

def cli(capsys, *argv):
    try:
        code = main(["gpu-check", *argv])
    except SystemExit as exc:  # a usage error found by the parser (parsers.integer): exit 2, one line
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_fields_clean_task(capsys):
    code, out, _ = cli(capsys, "butterfly:n=4", "--json", "--device", "cpu")
    data = json.loads(out)
    assert code == 0
    for field in ("backend", "device", "dtype", "layers", "agrees", "unexpected", "missing", "leak_gradients",
                  "seconds"):
        assert field in data
    assert (data["backend"], data["device"], data["dtype"], data["kind"]) == ("manual", "cpu", "float64", "task")
    assert (data["method"], data["batching"], data["seeds"]) == ("vjp", "loop", 3)
    assert data["agrees"] and data["unexpected"] == [] and data["missing"] == []
    assert len(data["leak_gradients"]) == 4 and all(g["max_norm"] == 0 for g in data["leak_gradients"])


def test_cli_bad_design_exits_1_with_leak_gradients(capsys):
    code, out, _ = cli(capsys, "bad_butterfly_self:n=4", "--json", "--backend", "sdpa")
    data = json.loads(out)
    assert code == 1 and data["agrees"] and not data["passed"]
    assert all(g["max_norm"] > 0 for g in data["leak_gradients"])
    named = {(x["position"], x["source"]) for x in data["theory_leaks"]}
    seen = {(g["position"], s["source"]) for g in data["leak_gradients"] for s in g["gradients"] if s["norm"]}
    assert named and named <= seen


def test_cli_mask_and_human_report(capsys, tmp_path):
    code, out, _ = cli(capsys, "causal:n=5", "--json", "--layers", "2", "--backend", "mha")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "mask" and data["leak_gradients"] is None and data["layers"] == 2
    np.save(tmp_path / "m.npy", mask_of("sliding_window:n=8,w=2"))
    code, out, _ = cli(capsys, str(tmp_path / "m.npy"), "--layers", "3", "--backend", "flex")
    assert code == 0 and "forward perturbations" in out and "PASS" in out


def test_cli_task_json_file_is_a_task(capsys, tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"tokens": 2, "inputs": [["x0", 0], ["[MASK]", 1]], "labels": [None, 1],
                                "mask": [[1, 0], [1, 1]]}))
    code, out, _ = cli(capsys, str(path), "--json")
    assert code == 0 and json.loads(out)["kind"] == "task"
    path.write_text(json.dumps({"tokens": 2, "inputs": [["x0", 0], ["x1", 1]], "labels": [1, None],
                                "mask": [[1, 1], [1, 1]]}))
    assert cli(capsys, str(path), "--json")[0] == 1


@pytest.mark.parametrize("argv,words", [
    (["causal:n=4", "--layers", "-1"], "--layers"),
    (["causal:n=4", "--seeds", "0"], "--seeds"),
    (["butterfly:n=4", "--png", "x.png"], "--train-demo"),
    (["nosuch:n=4"], "nosuch"),
    (["butterfly:n=0"], "n must be"),
    (["causal:n=4", "--train-demo"], "not a task"),
])
def test_cli_bad_input_exits_2_with_one_line(capsys, argv, words):
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err


def test_cli_empty_row_is_checked_not_refused(capsys, tmp_path):
    """Empty rows are run and reported (tests/test_empty_rows.py checks each kernel's behaviour)."""
    (tmp_path / "e.txt").write_text("1 0 0\n0 0 0\n1 1 1\n")
    code, out, _ = cli(capsys, str(tmp_path / "e.txt"))
    assert code == 1 and "empty rows 1: backend manual on cpu gives NaN" in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cli_cuda_without_device_exits_2(capsys):
    code, _, err = cli(capsys, "causal:n=4", "--device", "cuda")
    assert code == 2 and "no CUDA device" in err


BLOCK_TORCH = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'torch':
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
"""


def test_without_torch_gpu_check_names_the_extra():
    code = BLOCK_TORCH + "from hasse.cli import main\nsys.exit(main(['gpu-check', 'butterfly:n=4']))\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert "hasse-attention[torch]" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_without_torch_the_demo_skips_its_gpu_section():
    code = BLOCK_TORCH + "from hasse.cli import main\nsys.exit(main(['demo']))\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    assert "Real attention layers: skipped" in out.stdout and "hasse-attention[torch]" in out.stdout


def test_only_gpu_check_imports_torch():
    code = textwrap.dedent("""
        import sys, importlib, pkgutil
        import hasse
        from hasse import theory
        for pkg in (theory, hasse):
            for mod in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):
                if not mod.name.endswith('__main__'):
                    importlib.import_module(mod.name)
        from hasse.cli import build_parser
        build_parser()
        print('torch' in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- the training demonstration

def test_train_demo_clean_stays_at_ln_v_and_leaky_falls():
    config = DemoConfig(steps=80, vocab=8, batch=32, width=16, layers=1)
    demo = train_demo(build_task("butterfly:n=4"), build_task(bad_twin("butterfly:n=4")), config)
    assert demo.ln_vocab == pytest.approx(math.log(8))
    assert demo.clean.final >= demo.ln_vocab - 0.15
    assert demo.leaky.final <= demo.ln_vocab - 1.0
    assert len(demo.clean.losses) == len(demo.leaky.losses) == 80


def test_train_demo_cli_json_and_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "curves.png"
    code, out, _ = cli(capsys, "block_two_stream:n=4,block=2", "--train-demo", "--steps", "60", "--vocab", "8",
                       "--layers", "1", "--json", "--png", str(png))
    data = json.loads(out)
    assert data["leaky"]["task"] == "bad_block_own_content:n=4,block=2"
    assert data["ln_vocab"] == pytest.approx(math.log(8)) and len(data["clean"]["losses"]) == 60
    assert code == (0 if data["shows_leak"] else 1)
    assert png.stat().st_size > 1000


def test_twin_names():
    assert bad_twin("block_two_stream:n=8,block=2") == "bad_block_own_content:n=8,block=2"
    assert clean_twin("bad_butterfly_self:n=5") == "butterfly:n=5"
    with pytest.raises(Exception, match="--twin"):
        bad_twin("mlm:n=4,masked=1")  # bad_mlm_unmasked takes other parameters: --twin


def test_train_demo_cli_given_a_bad_design_trains_its_clean_twin(capsys):
    code, out, _ = cli(capsys, "bad_butterfly_self:n=3", "--train-demo", "--steps", "5", "--json")
    data = json.loads(out)
    assert (data["clean"]["task"], data["leaky"]["task"]) == ("butterfly:n=3", "bad_butterfly_self:n=3")


# ---------------------------------------------------------------- the prepared device script, docstrings

def test_run_gpu_script_at_small_n_on_cpu(tmp_path):
    from hasse.gpu_check import run_gpu

    out = tmp_path / "run.json"
    code = run_gpu.main([str(out), "--n", "10", "--device", "cpu", "--layers", "2", "--naive-sample", "4",
                         "--backends", "manual,sdpa,flex,flex_compiled,mha"])
    data = json.loads(out.read_text())
    assert code == 0 and data["finished"] and data["all_agree"]
    assert [s["subject"] for s in data["subjects"]] == ["butterfly:n=4", "bad_butterfly_self:n=4",
                                                        "sliding_window:n=10,w=2"]
    deps = {d["backend"]: d for d in data["subjects"][1]["dependency"]}
    assert deps["flex_compiled"]["skipped"] and deps["flex"]["method"] == "perturbation"
    assert deps["sdpa"]["leaking"] and deps["sdpa"]["gradients_match_theory"]
    assert data["naive_baseline"]["positions_timed"] == 4


@pytest.mark.parametrize("name", ["config", "model", "backends", "dependency", "embedding", "compare",
                                  "train_demo", "mask_mod"])
def test_gpu_check_docstring_examples(name):
    module = importlib.import_module(f"hasse.gpu_check.{name}")
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0


# ---------------------------------------------------------------- CUDA (skipped without a device)

@CUDA
@pytest.mark.parametrize("spec", ["butterfly:n=8", "sliding_window:n=64,w=8"])
def test_cuda_flex_backward_eager_and_compiled_agree_with_reference(spec):
    results = compare_backends(mask_of(spec), ["sdpa", "flex", "flex_compiled", "mha"], "cuda", layers=2,
                               config=WIDE)
    for a in results:
        assert a.error is None and a.grad_error is not None and a.agrees, a


@CUDA
@pytest.mark.parametrize("backend", ["manual", "sdpa", "flex", "flex_compiled", "mha"])
def test_cuda_dependency_pattern_equals_reach(backend):
    mask = mask_of("sliding_window:n=64,w=8")
    report = dependency_check(mask, 3, backend, "cuda", seeds=2, config=WIDE)
    assert report.method == "vjp" and report.dtype == "float32" and report.agrees


@CUDA
def test_cuda_leak_gradients():
    assert run_check(build_task("butterfly:n=8"), 2, "flex", "cuda", config=WIDE).passed
    bad = run_check(build_task("bad_butterfly_self:n=8"), 2, "flex", "cuda", config=WIDE)
    assert bad.report.agrees and all(g.leaks for g in bad.leak_gradients)

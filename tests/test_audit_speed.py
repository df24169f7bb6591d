"""The audit's batched measure against its per-row baseline, chunk independence, and the device path (correctness only, never timing).

- :func:`gpu_check.audit.trace.measure_loop` (one backward per output row and tensor) and
  :func:`gpu_check.audit.trace.measure_vjp` (vmapped cotangents, or the probes riding in
  the batch) give the same zero pattern and the same values (1e-9 relative) for every
  block output, every operator output and every operator's own pattern, on a hybrid
  family (LFM2: a short convolution layer and an attention layer) and on Llama;
- the whole audit does not depend on how many rows one backward carries (chunk 1, 3, 8);
- the device handling (model, batch and inputs moved to ``device``, results back on the
  host) runs with ``device="cpu"`` named explicitly, and on CUDA at 4096 positions where
  there is a GPU (skipped otherwise).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from hasse.gpu_check.audit.engine import _measure_one, family_subject  # noqa: E402
from hasse.gpu_check.audit.measure import random_embeddings  # noqa: E402
from hasse.gpu_check.audit.models import ModelSpec  # noqa: E402
from hasse.gpu_check.audit.operators import blocks_of, find_operators  # noqa: E402
from hasse.gpu_check.audit.report import Setup, audit  # noqa: E402
from hasse.gpu_check.audit.scenarios import make_scenario  # noqa: E402
from hasse.gpu_check.audit.trace import measure_loop, measure_vjp, runner  # noqa: E402

LENGTHS = (5, 4, 3)  # three packed documents, 12 positions
CUDA = torch.cuda.is_available()


def close(a: np.ndarray, b: np.ndarray, what: str) -> None:
    """Same zero pattern, values within 1e-9 of the largest."""
    assert a.shape == b.shape, what
    assert np.array_equal(a != 0, b != 0), f"{what}: zero patterns differ at {np.argwhere((a != 0) != (b != 0))[:5]}"
    scale = max(float(np.abs(b).max(initial=0.0)), 1e-300)
    assert float(np.abs(a - b).max(initial=0.0)) / scale < 1e-9, what


def measured(family: str, backend: str = "eager", device: str = "cpu"):
    """``(run, x, rows, operators)`` for a 2-layer ``family`` built small in float64, three packed documents."""
    layout = make_scenario("packed", lengths=LENGTHS)
    subject = family_subject(ModelSpec(family, 2, max_positions=32), layout, dtype="float64", device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = subject.build(backend, 0)
    blocks = blocks_of(built.model)
    operators = find_operators(blocks)
    run, recorder = runner(built, blocks, operators, layout.n)
    x = random_embeddings(layout.n, 64, 1, torch.float64).to(device)
    return run, recorder, x, np.flatnonzero(layout.real), operators


@pytest.mark.parametrize("family", ["lfm2", "llama"])
def test_the_batched_measure_equals_the_per_row_loop(family):
    run, recorder, x, rows, operators = measured(family)
    try:
        rows = rows[1:]  # a row left out stays 0 in both
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loop = measure_loop(run, x, rows, seed=3)
            every = {(mode, chunk): measure_vjp(run, x, rows, seed=3, chunk=chunk, batched=mode)
                     for mode, chunk in (("vmap", 4), ("vmap", 32), ("replicate", 5))}
    finally:
        recorder.close()
    layers, ops, own, own_ok = loop
    assert layers.shape[0] == 2 and ops.shape[0] == len(operators)
    assert (own_ok == 2).any() and (layers[:, 0] == 0).all()
    assert (layers[-1] != 0).any() and (own[own_ok == 2] != 0).any()  # something was measured
    for (mode, chunk), (l2, o2, w2, ok2) in every.items():
        close(l2, layers, f"{family} {mode}/{chunk}: block outputs")
        close(o2, ops, f"{family} {mode}/{chunk}: operator outputs")
        close(w2, own, f"{family} {mode}/{chunk}: own patterns")
        assert np.array_equal(ok2, own_ok)


def test_the_loop_is_the_direct_autograd_of_one_row():
    """The baseline itself, against autograd written out: block 1's output row q against every input k."""
    from hasse.gpu_check.dependency import random_probes

    run, recorder, x, rows, _ = measured("lfm2")
    try:
        layers = measure_loop(run, x, rows, seed=0)[0]
        q = int(rows[-1])
        leaf = x.clone().requires_grad_(True)
        out = run(leaf)[0][1]  # block 1 (the second tensor: probes seeded 0 + 7919)
        probe = random_probes(x.shape[1], out.shape[-1], 7_919, out)[q]
        (grad,) = torch.autograd.grad((out[0, q] * probe).sum(), leaf)
    finally:
        recorder.close()
    close(layers[1, q], grad[0].norm(dim=-1).double().numpy(), "row q")


def audit_at(chunk: int, family: str = "lfm2", **setup):
    layout = make_scenario("packed", lengths=LENGTHS)
    return audit(Setup(ModelSpec(family, 2, max_positions=32), layout, seeds=2, chunk=chunk, dtype="float64",
                       **setup), ["eager"])


def test_the_audit_does_not_depend_on_the_chunk():
    results = {chunk: audit_at(chunk) for chunk in (1, 3, 8)}
    first = results[1].backends[0]
    assert first.unexpected  # LFM2's convolution and attention do not reset at documents here
    for chunk, result in results.items():
        b = result.backends[0]
        close(b.norms, first.norms, f"chunk {chunk}: norms")
        assert b.unexpected == first.unexpected and b.missing == first.missing, chunk
        assert [(g.kind, g.pairs, g.operator) for g in b.groups] == [
            (g.kind, g.pairs, g.operator) for g in first.groups], chunk
        assert len(b.operators) == len(first.operators)
        for mine, theirs in zip(b.operators, first.operators):
            assert mine.op == theirs.op and mine.isolated == theirs.isolated, chunk
            assert (mine.own is None) == (theirs.own is None)
            if mine.own is not None:
                assert np.array_equal(mine.own, theirs.own), (chunk, mine.op.path)


def on_device(tree, device: str) -> bool:
    return all(t.device.type == device for t in tree if isinstance(t, torch.Tensor))


def test_the_device_path_with_cpu_named():
    """family_subject(device=…) moves the model and the batch; the measure comes back as host numpy arrays."""
    layout = make_scenario("packed", lengths=LENGTHS)
    subject = family_subject(ModelSpec("llama", 2, max_positions=32), layout, dtype="float64", device="cpu")
    built = subject.build("sdpa", 0)
    assert on_device(built.model.parameters(), "cpu") and on_device(built.batch.values(), "cpu")
    blocks = blocks_of(built.model)
    result = _measure_one(built, blocks, find_operators(blocks), layout, 0, 4, "sdpa")
    assert all(isinstance(a, np.ndarray) for a in result[:4])  # layers, ops, own, own_measured: on the host
    named = audit_at(4, "llama", device="cpu").backends[0]
    default = audit_at(4, "llama").backends[0]
    assert np.array_equal(named.norms, default.norms) and named.unexpected == default.unexpected


@pytest.mark.skipif(not CUDA, reason="no CUDA device (torch.cuda.is_available() is False)")
def test_cuda_matches_the_cpu():
    cpu, cuda = audit_at(4, "llama").backends[0], audit_at(4, "llama", device="cuda").backends[0]
    assert np.array_equal(cpu.norms != 0, cuda.norms != 0) and cpu.unexpected == cuda.unexpected


@pytest.mark.skipif(not CUDA, reason="no CUDA device (torch.cuda.is_available() is False)")
def test_cuda_audit_at_4096_positions():
    """``hasse audit llama --device cuda --n 4096 --seeds 1 --backend sdpa``: causal, clean, every pair measured."""
    n = 4096
    result = audit(Setup(ModelSpec("llama", 2, max_positions=2 * n), make_scenario("plain", n), seeds=1,
                         device="cuda"), ["sdpa"])
    b = result.backends[0]
    assert b.clean, (b.unexpected[:5], b.missing[:5])
    assert np.array_equal(b.measured[-1], np.tril(np.ones((n, n), bool)))

"""The observed dependency pattern of a real stack, compared with ``R(L)`` from theory.

Definitions (design.md §9). For a stack with output ``out`` (T, C) on input ``x``
(T, C), the *observed dependency* of output ``q`` on input ``k`` is

- ``vjp``: ``‖u_qᵀ ∂out_q/∂x_k‖`` for a random probe ``u_q`` (one per output position
  and seed), read from batched vector–Jacobian products — row ``q`` of one VJP with
  cotangent ``u_q`` at position ``q`` gives every ``k`` at once. It is exactly zero
  whenever the Jacobian block ``∂out_q/∂x_k`` is (masked probabilities are exact
  zeros), and nonzero with probability one otherwise;
- ``perturbation`` (backends without a backward, FlexAttention on the CPU):
  ``‖out_q(x + δ e_k) − out_q(x)‖`` for a random ``δ``, with both outputs computed in
  the same batch.

*The noise rule.* A VJP at an unreachable pair is a sum of products with exact-zero
probabilities: round-off cannot make it nonzero, so any nonzero counts (threshold 0).
A forward perturbation compares two forward passes, and a kernel need not give
bit-identical rows for identical inputs (reduction order, the row's place in a
batched matmul, threads). So the same run measures the backend's own *noise* at every
output position ``q``: the unperturbed forward twice, and each batch shape once with
every perturbation zero (:func:`observe_perturbation`). With ``noise_q`` the largest
change of ``out_q`` seen between identical inputs and ``ρ`` the largest ``noise_q /
‖out_q‖`` of the run (round-off scales with magnitude), a change counts as a
dependency when it exceeds ``NOISE_MARGIN · max(noise_q, ρ ‖out_q‖)``
(:func:`noise_thresholds`). A kernel that is bit-reproducible measures 0 and keeps
the exact rule; a leak smaller than the threshold (the report's detection limit)
cannot be told from noise and is not claimed either way.

Theory says ``out_q`` can depend on ``x_k`` only if ``R(L)[q, k]``. An ``unexpected``
pair is a dependency (above the threshold) in some seed where ``R(L)[q, k]`` is false:
an implementation leak. A ``missing`` pair is reachable but at or below the threshold
in *every* seed; in some seeds only is a cancellation (a one-key softmax is constant
in its score, a probe can be orthogonal) and is counted, not reported. NaN counts as
a dependency.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple

import numpy as np
import torch

from hasse.gpu_check.backends import backend_info, device_kind
from hasse.gpu_check.config import StackConfig, dtype_for
from hasse.gpu_check.model import Stack, build_stack
from hasse.theory.empty_rows import empty_rows
from hasse.theory.errors import InputError

Pair = tuple[int, int]  # (q, k): output q, input k

# A forward-perturbation change counts as a dependency above NOISE_MARGIN times the noise
# floor measured in the same run. A change at an unreachable pair and a noise sample are
# the same quantity (out_q of identical inputs, computed twice), so a bit-reproducible
# kernel needs a margin of 1; a kernel with run-to-run noise can give a new sample above
# the largest measured one, and 16 (4 bits) covers that for round-off of a few ulps while
# keeping the detection limit near 1e-14 relative in float64 (a leaked weight of 1e-6 is
# eight orders above it).
NOISE_MARGIN = 16.0


class EmptyRowsError(InputError):
    """The mask has queries that attend nothing; real kernels disagree on them."""


@dataclass(frozen=True)
class DependencyReport:
    """Observed dependencies of an ``L``-layer stack beside ``R(L)``."""

    backend: str
    device: str
    dtype: str  # "float64" / "float32"
    layers: int  # L
    method: str  # "vjp" or "perturbation"
    batching: str | None  # how the VJPs were batched: "vmap", "replicate" or "loop" (None: perturbation)
    theory: np.ndarray  # (T, T) bool, R(L)
    norms: np.ndarray  # (S, T, T) float, per seed: the observed dependency of out_q on x_k
    unexpected: tuple[Pair, ...]  # a dependency in some seed, R(L) false: an implementation leak
    missing: tuple[Pair, ...]  # R(L) true, no dependency in any seed
    cancelled: int  # R(L) true, a dependency in some but not all seeds (not reported as missing)
    seconds: float
    noise: np.ndarray | None = None  # (S, T): largest change of out_q between identical inputs (None: exact, vjp)
    thresholds: np.ndarray | None = None  # (S, T): a norm counts as a dependency above this (None: above 0)
    relative_noise: float = 0.0  # ρ, the largest noise_q / ‖out_q‖ of the run

    @property
    def agrees(self) -> bool:
        """The observed pattern equals ``R(L)``."""
        return not self.unexpected and not self.missing

    @property
    def dependent(self) -> np.ndarray:
        """(S, T, T) bool: per seed, ``out_q`` depends on ``x_k`` (above the threshold, or NaN)."""
        return dependent(self.norms, self.thresholds)

    @property
    def observed(self) -> np.ndarray:
        """(T, T) bool: a dependency in some seed (NaN counts as one)."""
        return self.dependent.any(axis=0)

    @property
    def detection_limit(self) -> float:
        """The largest threshold of the run: smaller changes cannot be told from noise (0: any nonzero counts)."""
        return 0.0 if self.thresholds is None else float(self.thresholds.max(initial=0.0))

    def noise_json(self) -> dict:
        """The noise measured and the rule the verdict used (design.md §9)."""
        exact = self.thresholds is None
        per_q = None if self.noise is None else self.noise.max(axis=0)
        limit = None if exact else self.thresholds.max(axis=0)
        return {"rule": "exact" if exact else "measured",
                "margin": None if exact else NOISE_MARGIN,
                "largest": 0.0 if per_q is None else float(per_q.max(initial=0.0)),
                "relative": self.relative_noise,
                "detection_limit": self.detection_limit,
                "per_position": None if per_q is None else [float(v) for v in per_q],
                "threshold_per_position": None if limit is None else [float(v) for v in limit]}


EMPTY_ROWS_WHY = ("attention kernels disagree there (NaN, zeros or every key): give the empty-row policy to check "
                  "against")


def check_no_empty_rows(mask: np.ndarray, source: str | None = None, why: str = EMPTY_ROWS_WHY) -> None:
    """Raise :class:`EmptyRowsError` if some query attends nothing (its row, diagonal included, is all false).

    Kernels disagree on such rows (the reference gives NaN, SDPA and FlexAttention
    zeros, additive masks every key); a caller that does not say which reading to
    check against (``gpu_check.check.dependency_check(empty_rows=...)``) has them
    refused, ``why`` saying what to do instead.
    """
    rows = empty_rows(mask)
    if rows:
        shown = ", ".join(map(str, rows[:10])) + (" …" if len(rows) > 10 else "")
        raise EmptyRowsError(f"{len(rows)} empty row(s) (queries attending no key: {shown}); {why}", source)


def dependent(norms: np.ndarray, thresholds: np.ndarray | None = None) -> np.ndarray:
    """``norms`` (…, Q, K) above ``thresholds`` (…, Q), one per output row, or NaN; above 0 when None.

    >>> dependent(np.array([[0., 1e-15, 1e-3, np.nan]]), np.array([1e-14])).tolist()
    [[False, False, True, True]]
    """
    norms = np.asarray(norms)
    floor = 0.0 if thresholds is None else np.asarray(thresholds)[..., None]
    return np.isnan(norms) | (norms > floor)


def noise_thresholds(noise: np.ndarray, scale: np.ndarray, margin: float = NOISE_MARGIN) -> tuple[np.ndarray, float]:
    """``(thresholds, ρ)``: ``margin · max(noise_q, ρ ‖out_q‖)`` per entry, ρ the run's largest ``noise_q / ‖out_q‖``.

    ``noise`` and ``scale`` (``‖out_q‖``) have one shape (seeds, …, positions). A NaN or
    infinite noise sample (a NaN output) gives no floor there: its changes are NaN and count anyway.

    >>> t, rho = noise_thresholds(np.array([[0., 2e-16]]), np.array([[4., 1.]]))
    >>> rho, t.tolist()
    (2e-16, [[1.28e-14, 3.2e-15]])
    """
    noise = np.where(np.isfinite(noise), noise, 0.0)
    ok = np.isfinite(scale) & (scale > 0)
    rho = float((noise[ok] / scale[ok]).max(initial=0.0))
    return margin * np.maximum(noise, rho * np.where(ok, scale, 0.0)), rho


def classify(theory: np.ndarray, norms: np.ndarray,
             thresholds: np.ndarray | None = None) -> tuple[tuple[Pair, ...], tuple[Pair, ...], int]:
    """``(unexpected, missing, cancelled)`` from ``R(L)`` (T, T) and per-seed norms (S, T, T).

    A norm is a dependency when it is above its row's threshold (``thresholds`` (S, T);
    None: above 0) or NaN (:func:`dependent`).

    >>> theory = np.array([[1, 0], [1, 1]], dtype=bool)
    >>> norms = np.array([[[1., 0.], [0., 2.]], [[1., 3.], [0., 2.]]])  # seed 1 leaks 1 -> 0
    >>> classify(theory, norms)
    (((0, 1),), ((1, 0),), 0)
    >>> classify(theory, norms, np.full((2, 2), 5.0))[0]  # below a noise threshold of 5: not a dependency
    ()
    """
    dep = dependent(norms, thresholds)  # (S, T, T)
    any_seed = dep.any(axis=0)
    every_seed = dep.all(axis=0)
    unexpected = tuple(map(tuple, np.argwhere(~theory & any_seed).tolist()))
    missing = tuple(map(tuple, np.argwhere(theory & ~any_seed).tolist()))
    cancelled = int((theory & any_seed & ~every_seed).sum())
    return unexpected, missing, cancelled


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def random_probes(t: int, c: int, seed: int, like: torch.Tensor) -> torch.Tensor:
    """(T, C) probe vectors ``u_q``, seeded, drawn on the CPU and moved to ``like``'s device and dtype."""
    return torch.randn(t, c, generator=_generator(seed), dtype=torch.float64).to(like)


def observe_vjp(stack: Stack, attention: Callable, x: torch.Tensor, *, seed: int = 0, chunk: int = 32,
                batched: str = "vmap", positions=None) -> np.ndarray:
    """(T, T) ``‖u_qᵀ ∂out_q/∂x_k‖`` for ``x`` of shape (1, T, C): row q from the VJP of probe ``u_q``.

    How the T vector–Jacobian products are batched (all give the same matrix):

    - ``"vmap"``: one forward, the backward vmapped over ``chunk`` probes at a time
      (``autograd.grad(…, is_grads_batched=True)``);
    - ``"replicate"``: the probes ride in the batch dimension (``chunk`` copies of
      ``x``, one forward and one backward per chunk), for kernels whose backward
      has no batching rule (FlexAttention) — the default on CUDA;
    - ``"loop"``: single-sequence autograd, one forward then one backward per output
      position (``chunk`` unused) — the naive baseline, and the fastest for the
      materialising reference on the CPU, where batched (chunk, H, T, T)
      temporaries fall out of the cache (benchmarks/bench_gpu_check.py).

    ``positions`` limits the probed output positions (default: all); other rows stay 0.
    """
    _, t, c = x.shape
    probes = random_probes(t, c, seed, x)  # (T, C)
    rows_all = list(range(t)) if positions is None else [int(q) for q in positions]
    norms = torch.zeros(t, t, dtype=torch.float64)
    if batched not in ("vmap", "replicate", "loop"):
        raise ValueError(f"batched must be 'vmap', 'replicate' or 'loop', got {batched!r}")
    if batched != "replicate":
        leaf = x.detach().requires_grad_(True)  # (1, T, C)
        out = stack(leaf, attention)  # (1, T, C)
    if batched == "loop":
        for q in rows_all:
            (grad,) = torch.autograd.grad(out[0, q] @ probes[q], leaf, retain_graph=True)  # (1, T, C)
            norms[q] = grad[0].norm(dim=-1).double().cpu()  # (T,)
        return norms.numpy()
    for start in range(0, len(rows_all), chunk):
        rows = torch.tensor(rows_all[start:start + chunk], device=x.device)
        b = len(rows)
        cot = torch.zeros(b, t, c, dtype=x.dtype, device=x.device)  # (b, T, C)
        cot[torch.arange(b, device=x.device), rows] = probes[rows]
        if batched == "vmap":
            (grad,) = torch.autograd.grad(out, leaf, cot[:, None], retain_graph=True,
                                          is_grads_batched=True)  # (b, 1, T, C)
            grad = grad[:, 0]  # (b, T, C)
        else:
            copies = x.detach().expand(b, t, c).clone().requires_grad_(True)  # (b, T, C)
            (grad,) = torch.autograd.grad(stack(copies, attention), copies, cot)  # (b, T, C)
        norms[rows.cpu()] = grad.norm(dim=-1).double().cpu()  # (b, T): row q_b, every k
    return norms.numpy()


def default_batching(backend: str, device: str) -> str:
    """How :func:`observe_vjp` batches for a backend on a device (measured on the CPU; CUDA: replicate)."""
    if device_kind(device) != "cpu":
        return "replicate"  # every kernel supports a batch; fused kernels' backward may lack vmap rules
    if backend == "manual":
        return "loop"
    return "vmap" if backend_info(backend).vmap_backward else "replicate"


class Perturbation(NamedTuple):
    """What :func:`observe_perturbation` measures for one seed."""

    norms: np.ndarray  # (T, T): ‖out_q(x + δ e_k) − out_q(x)‖, row q, column k
    noise: np.ndarray  # (T,): the largest change of out_q between identical inputs
    scale: np.ndarray  # (T,): ‖out_q(x)‖


def observe_perturbation(stack: Stack, attention: Callable, x: torch.Tensor, *, seed: int = 0,
                         chunk: int = 32) -> Perturbation:
    """``‖out_q(x + δ e_k) − out_q(x)‖`` for ``x`` (1, T, C), forward passes only, and the kernel's noise.

    Each batch holds the unperturbed ``x`` as element 0 and ``chunk`` copies with one
    input position perturbed each. The noise of output ``q`` is the largest change of
    ``out_q`` between identical inputs in the same run, always between two results of
    one batch shape (as each change is): the unperturbed forward twice; every batch
    once more with every perturbation zero, copy ``i`` against copy 0 (the comparison
    each perturbed copy gets); and element 0, unperturbed in both, of that batch
    against the perturbed one. A change at an unreachable pair is the same quantity,
    so a kernel that rounds a row differently by its place in the batch, or from call
    to call, shows it here too (the module's noise rule decides against it). Results
    of different batch shapes are never compared: a kernel may round them
    differently, and no change is measured across them.
    """
    _, t, c = x.shape
    deltas = random_probes(t, c, seed + 10_007, x)  # (T, C)
    norms = torch.zeros(t, t, dtype=torch.float64)

    def change(a, b):  # (…, T, C) pair -> (…, T) float64 on the CPU
        return (a - b).norm(dim=-1).double().cpu()

    with torch.no_grad():
        base = stack(x, attention)[0]  # (T, C)
        noise = change(stack(x, attention)[0], base)  # (T,): the same forward twice
        for start in range(0, t, chunk):
            keys = torch.arange(start, min(start + chunk, t), device=x.device)
            b = len(keys)
            batch = x.expand(1 + b, t, c).clone()  # (1 + b, T, C); element 0 unperturbed
            same = stack(batch, attention)  # every perturbation zero
            batch[1 + torch.arange(b, device=x.device), keys] += deltas[keys]
            out = stack(batch, attention)  # (1 + b, T, C)
            slots = change(same[1:], same[:1]).amax(dim=0)  # copy i vs copy 0 of one call
            noise = torch.stack([noise, slots, change(out[0], same[0])]).amax(dim=0)  # and call vs call
            norms[:, start:start + b] = change(out[1:], out[:1]).T  # (T, b): perturbed key k_b, every output q
    return Perturbation(norms.numpy(), noise.numpy(), base.norm(dim=-1).double().cpu().numpy())


def random_input(t: int, width: int, seed: int, device: str) -> torch.Tensor:
    """(1, T, C) standard normal inputs, seeded, in the device's check precision."""
    return torch.randn(1, t, width, generator=_generator(seed + 7919), dtype=torch.float64).to(
        device=device, dtype=dtype_for(device))


def observe_dependencies(
    attention,
    theory: np.ndarray,
    backend: str,
    device: str,
    *,
    seeds: int = 3,
    config: StackConfig,
    inputs: Callable[[int, StackConfig], torch.Tensor] | None = None,
    method: str | None = None,
    chunk: int | None = None,
) -> DependencyReport:
    """The observed pattern of ``config.layers`` seeded blocks running ``attention``, compared with ``theory``.

    The measurement behind :func:`gpu_check.check.dependency_check`: ``attention`` is
    one callable for every block or a sequence with one per block
    (:meth:`gpu_check.model.Stack.forward`); ``theory`` is ``R(L)`` (T, T) bool;
    ``backend`` names the kernel, for its default method and batching.
    """
    if seeds < 1:
        raise InputError(f"seeds must be >= 1, got {seeds}")
    info = backend_info(backend)
    layers = config.layers
    method = method or ("vjp" if info.has_backward(device) else "perturbation")
    if method == "vjp" and not info.has_backward(device):
        raise InputError(f"backend {backend} has no backward on {device}; use method 'perturbation'")
    t = theory.shape[0]
    chunk = chunk or default_chunk(t, backend, device, config.heads)
    batched = default_batching(backend, device)
    start = time.perf_counter()
    per_seed, noise, scale = [], [], []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
        for s in range(seeds):
            seeded = replace(config, seed=config.seed + s)
            stack = build_stack(seeded, device)
            x = inputs(s, seeded) if inputs is not None else random_input(t, config.width, config.seed + s, device)
            while True:
                try:
                    if method == "perturbation":
                        norms, seed_noise, seed_scale = observe_perturbation(stack, attention, x,
                                                                             seed=config.seed + s, chunk=chunk)
                        noise.append(seed_noise)
                        scale.append(seed_scale)
                    else:
                        norms = observe_vjp(stack, attention, x, seed=config.seed + s, chunk=chunk, batched=batched)
                    break
                except torch.OutOfMemoryError:  # fewer probes at a time
                    if chunk == 1:
                        raise
                    chunk = max(1, chunk // 2)
                    if device_kind(device) == "cuda":
                        torch.cuda.empty_cache()
                except RuntimeError:  # no batching rule for this kernel's backward: probes in the batch instead
                    if batched != "vmap" or method != "vjp":
                        raise
                    batched = "replicate"
            per_seed.append(norms)
    norms = np.stack(per_seed)  # (S, T, T)
    if method == "perturbation":  # decided against the noise measured in this run (the module's noise rule)
        noise = np.stack(noise)  # (S, T)
        thresholds, relative = noise_thresholds(noise, np.stack(scale))
    else:  # a VJP is exact: an unreachable pair's is a sum of exact zeros
        noise, thresholds, relative = None, None, 0.0
    unexpected, missing, cancelled = classify(theory, norms, thresholds)
    return DependencyReport(backend, device, str(dtype_for(device)).removeprefix("torch."), layers, method,
                            batched if method == "vjp" else None, theory, norms, unexpected, missing, cancelled,
                            time.perf_counter() - start, noise, thresholds, relative)


def default_chunk(t: int, backend: str, device: str, heads: int = 2) -> int:
    """Output positions per batched backward (or perturbed inputs per forward).

    The reference and eager FlexAttention materialise (chunk, H, T, T) score
    tensors: keep them near the cache on the CPU (8 MiB) and within a few GiB on
    CUDA. Fused kernels take 32 (CPU) or 64 (CUDA) probes at a time.
    """
    cpu = device_kind(device) == "cpu"
    if backend in ("manual", "flex"):
        budget = (8 << 20) if cpu else (4 << 30)
        return int(max(1, min(t, 64, budget // (heads * t * t * 8))))
    return max(1, min(t, 32 if cpu else 64))

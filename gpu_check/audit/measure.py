"""Measuring a transformers model's dependencies: each layer's hidden states against the input embeddings.

For one row of inputs ``x`` (1, n, C) (``inputs_embeds``) and a scenario's other
model arguments, :func:`layer_outputs` gives ``run(x) -> [h^1, …, h^L]``; then

- :func:`measure_vjp`: ``‖u_qᵀ ∂h^l_q/∂x_k‖`` for a random probe ``u_q`` per output
  row, by batched vector–Jacobian products (vmapped cotangents, or the input
  replicated along the batch);
- :func:`measure_loop`: the same, one backward per output position (the baseline of
  benchmarks/bench_audit.py);
- :func:`measure_perturbation`: ``‖h^l_q(x + δ e_k) − h^l_q(x)‖``, forward passes only
  (FlexAttention on the CPU has no backward), with the kernel's own noise measured in
  the same run.

A VJP is exactly zero where no path exists (masked probabilities are exact zeros); a
perturbation is decided against the measured noise (:mod:`gpu_check.dependency`'s
noise rule).
"""

from __future__ import annotations

import numpy as np
import torch

from hasse.gpu_check.audit.scenarios import Scenario
from hasse.gpu_check.dependency import Perturbation, random_probes
from hasse.theory.errors import InputError


def model_inputs(scenario: Scenario, batch: int, device, use_cache: bool | None, dtype) -> dict:
    """The keyword arguments of ``model(...)`` for ``batch`` copies of the scenario's row."""
    kwargs: dict = {}
    if scenario.position_ids is not None:
        kwargs["position_ids"] = torch.as_tensor(scenario.position_ids, device=device).expand(batch, -1)
    if scenario.attention_mask is not None:
        kwargs["attention_mask"] = torch.as_tensor(scenario.attention_mask, device=device).expand(batch, -1)
    if scenario.mask4d is not None:
        kwargs["attention_mask"] = torch.as_tensor(scenario.mask4d, device=device)[None, None].expand(
            batch, 1, -1, -1)  # (B, 1, n, n) bool, True = attend
    if scenario.perm_mask is not None:
        kwargs["perm_mask"] = torch.as_tensor(scenario.perm_mask, dtype=dtype, device=device).expand(batch, -1, -1)
    if use_cache is not None:
        kwargs["use_cache"] = use_cache
    return kwargs


def layer_outputs(model, scenario: Scenario, use_cache: bool | None = None):
    """``run(x) -> [h^1, …, h^L]``: the hidden states after each layer for inputs_embeds ``x`` (B, n, C)."""

    def run(x: torch.Tensor) -> list[torch.Tensor]:
        out = model(inputs_embeds=x, output_hidden_states=True,
                    **model_inputs(scenario, x.shape[0], x.device, use_cache, x.dtype))
        states = list(out.hidden_states[1:])  # L tensors (B, n, C); [0] is the embedding output
        if any(h.shape[:2] != x.shape[:2] for h in states):
            raise InputError(f"{type(model).__name__}'s hidden states are not (batch, positions, width)")
        return states

    return run


def measure_vjp(run, x: torch.Tensor, rows, *, seed: int, chunk: int = 8, final_only: bool = False,
                batched: str = "vmap") -> np.ndarray:
    """(L, n, n) ``‖u_qᵀ ∂h^l_q/∂x_k‖`` for the output rows ``rows`` (other rows 0), ``chunk`` rows at a time.

    - ``"vmap"``: one forward; per chunk and layer one backward vmapped over the
      ``chunk`` cotangents (``autograd.grad(…, is_grads_batched=True)``);
    - ``"replicate"``: the probes ride in the batch: ``chunk`` copies of ``x``, copy
      ``i`` carrying ``u_q`` at its own output ``q_i``, one forward and one backward
      per layer (for kernels whose backward has no batching rule).

    ``final_only`` measures the last layer only (the others stay 0). On the CPU at
    256 positions vmap by 8 beats the loop of :func:`measure_loop` (docs/benchmarks.md).
    """
    _, n, c = x.shape
    probes = random_probes(n, c, seed, x)  # (n, C)
    rows = [int(q) for q in rows]
    if batched == "vmap":
        leaf = x.detach().clone().requires_grad_(True)  # (1, n, C)
        outs = run(leaf)  # L x (1, n, C)
    elif batched != "replicate":
        raise ValueError(f"batched must be 'vmap' or 'replicate', got {batched!r}")
    norms = None
    for start in range(0, len(rows), chunk):
        part = torch.tensor(rows[start:start + chunk])
        b = len(part)
        cot = torch.zeros(b, n, c, dtype=x.dtype)  # (b, n, C): cotangent i is u_q at q = part[i]
        cot[torch.arange(b), part] = probes[part]
        if batched == "replicate":
            leaf = x.detach().expand(b, n, c).clone().requires_grad_(True)  # (b, n, C)
            outs = run(leaf)  # L x (b, n, C)
        if norms is None:
            norms = torch.zeros(len(outs), n, n, dtype=torch.float64)
        wanted = [len(outs) - 1] if final_only else range(len(outs))
        for layer in wanted:
            last = layer == len(outs) - 1 and batched == "replicate"
            if batched == "vmap":
                (grad,) = torch.autograd.grad(outs[layer], leaf, cot[:, None], retain_graph=True,
                                              is_grads_batched=True)  # (b, 1, n, C)
                grad = grad[:, 0]
            else:
                (grad,) = torch.autograd.grad(outs[layer], leaf, cot, retain_graph=not last)  # (b, n, C)
            norms[layer, part] = grad.norm(dim=-1).double()  # (b, n): row q_i, every k
    return norms.numpy()


def measure_loop(run, x: torch.Tensor, rows, *, seed: int) -> np.ndarray:
    """(L, n, n) as :func:`measure_vjp`, one backward per output position and layer (the baseline)."""
    _, n, c = x.shape
    probes = random_probes(n, c, seed, x)
    leaf = x.detach().clone().requires_grad_(True)
    outs = run(leaf)
    norms = torch.zeros(len(outs), n, n, dtype=torch.float64)
    for layer, out in enumerate(outs):
        for q in rows:
            (grad,) = torch.autograd.grad(out[0, q] @ probes[q], leaf, retain_graph=True)  # (1, n, C)
            norms[layer, q] = grad[0].norm(dim=-1).double()
    return norms.numpy()


def measure_perturbation(run, x: torch.Tensor, rows, *, seed: int, chunk: int = 32) -> Perturbation:
    """(L, n, n) ``‖h^l_q(x + δ e_k) − h^l_q(x)‖`` of ``run(x) -> [h^1, …]``, forward passes only, and the noise.

    :func:`gpu_check.audit.trace.measure_perturbation` on the list ``run`` returns (the
    noise measured in the same run; the audit and the schedules decide by the same rule).
    """
    from hasse.gpu_check.audit.trace import measure_perturbation as perturb

    return Perturbation(*perturb(run, x, rows, seed=seed, chunk=chunk))


def random_embeddings(n: int, width: int, seed: int, dtype) -> torch.Tensor:
    """(1, n, C) standard normal input embeddings, seeded."""
    gen = torch.Generator().manual_seed(seed + 7919)
    return torch.randn(1, n, width, generator=gen, dtype=torch.float64).to(dtype)


def has_backward(backend: str) -> bool:
    """FlexAttention has no backward on the CPU: it is measured by perturbation there."""
    return backend != "flex_attention"

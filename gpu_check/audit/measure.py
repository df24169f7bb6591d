"""The model arguments of an audited row, its seeded input embeddings, and the layer-list perturbation measure.

- :func:`model_inputs`: the keyword arguments of ``model(...)`` for ``batch`` copies of a
  scenario's row (``position_ids``, ``attention_mask``, a 4-D boolean mask, XLNet's
  ``perm_mask``, ``use_cache``), created on the model's device;
- :func:`random_embeddings`: (1, n, C) seeded standard normal input embeddings (drawn on
  the CPU, whatever the device, so that every device measures at the same input);
- :func:`measure_perturbation`: ``‖h^l_q(x + δ e_k) − h^l_q(x)‖`` of a list of layer
  outputs, forward passes only, with the noise measured in the same run (the form the
  schedules use; :func:`gpu_check.audit.trace.measure_perturbation` does the work).

The VJP measure of every block and operator and its per-row baseline are
:func:`gpu_check.audit.trace.measure_vjp` and :func:`gpu_check.audit.trace.measure_loop`
(benchmarks/bench_audit.py times them side by side).
"""

from __future__ import annotations

import torch

from hasse.gpu_check.audit.scenarios import Scenario
from hasse.gpu_check.dependency import Perturbation


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

"""Every backend beside the reference, on values and on gradients.

Definition. For one seeded stack, input ``x`` (1, T, C) and random weights ``w``
(1, T, C), each backend computes ``out`` and, where it has a backward on the
device, the gradients of ``sum(w * out)`` with respect to ``x`` and to every
parameter. The *value error* is ``max |out − out_ref| / max |out_ref|``, the
*gradient error* the same over all gradients (scaled by the largest reference
gradient), with the ``manual`` backend on the same device as the reference. A
backend agrees when both errors are within the tolerance of the precision:
1e-10 in float64, 1e-3 in float32 (FlexAttention may use TF32-like reductions).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
import torch

from hasse.gpu_check.backends import backend_info, make_attention
from hasse.gpu_check.config import StackConfig
from hasse.gpu_check.dependency import check_no_empty_rows, random_input, random_probes
from hasse.gpu_check.model import build_stack

TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-3}


@dataclass(frozen=True)
class Agreement:
    """One backend against the reference."""

    backend: str
    device: str
    value_error: float  # scaled max |out - out_ref|
    grad_error: float | None  # scaled max gradient difference; None: no backward on this device
    tolerance: float
    error: str | None = None  # the exception text if the backend failed to run

    @property
    def agrees(self) -> bool:
        if self.error is not None:
            return False
        return self.value_error <= self.tolerance and (self.grad_error is None or self.grad_error <= self.tolerance)


def _run(stack, attention, x, w, with_grad: bool):
    """``(out, [grad_x, grad_params…])`` of ``sum(w * out)``; gradients only when ``with_grad``."""
    if not with_grad:
        with torch.no_grad():
            return stack(x, attention), None
    leaf = x.detach().requires_grad_(True)
    out = stack(leaf, attention)
    params = [p for p in stack.parameters()]
    grads = torch.autograd.grad((w * out).sum(), [leaf, *params], allow_unused=True)
    return out.detach(), [g if g is not None else torch.zeros_like(p) for g, p in zip(grads, [leaf, *params])]


def _scaled(diffs, refs) -> float:
    top = max(float(r.abs().max()) for r in refs)
    return max(float(d.abs().max()) for d in diffs) / (top if top > 0 else 1.0)


def compare_backends(mask: np.ndarray, backends, device: str = "cpu", *, layers: int = 2,
                     config: StackConfig | None = None, seed: int = 0) -> tuple[Agreement, ...]:
    """Each of ``backends`` against ``manual`` on one seeded stack (values; gradients where supported).

    >>> m = np.tril(np.ones((5, 5), bool))
    >>> [a.agrees for a in compare_backends(m, ["sdpa", "mha"], config=StackConfig(width=4, heads=2))]
    [True, True]
    """
    mask = np.asarray(mask, dtype=bool)
    check_no_empty_rows(mask)
    config = replace(config or StackConfig(), layers=layers, seed=seed)
    stack = build_stack(config, device)
    t = mask.shape[0]
    x = random_input(t, config.width, seed, device)  # (1, T, C)
    w = random_probes(t, config.width, seed + 1, x)[None]  # (1, T, C)
    ref_out, ref_grads = _run(stack, make_attention("manual", mask, device), x, w, True)
    tol = TOLERANCE[x.dtype]
    out = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
        for name in backends:
            with_grad = backend_info(name).has_backward(device)
            try:
                values, grads = _run(stack, make_attention(name, mask, device), x, w, with_grad)
            except Exception as exc:  # a kernel that fails to run is reported, not raised
                out.append(Agreement(name, device, float("nan"), None, tol, f"{type(exc).__name__}: {exc}"))
                continue
            value_error = _scaled([values - ref_out], [ref_out])
            grad_error = _scaled([g - r for g, r in zip(grads, ref_grads)], ref_grads) if with_grad else None
            out.append(Agreement(name, device, value_error, grad_error, tol))
    return tuple(out)

"""What a real attention kernel does with an empty row, observed rather than assumed.

Definition (design.md §2). An *empty row* is a query whose mask row is all false. Its
attention output is decided by the kernel. :func:`probe_empty_rows` runs one
attention call of a backend (:mod:`gpu_check.backends`) on seeded random
``q, k, v`` (one head, identity output projection, so the call returns the kernel's
output ``o`` itself) and classifies each empty row's output:

- ``"nan"`` -- some entry is NaN (``softmax`` of an all ``-inf`` row);
- ``"zeros"`` -- exactly zero (FlexAttention, safe-softmax SDPA): the query keeps only
  its residual, the theory's ``attend-none``;
- ``"attend-all"`` -- equal (to rounding) to the mean of ``v`` over every key, or to the
  unmasked softmax over every key (an additive finite mask): the theory's ``attend-all``;
- ``"other"`` -- anything else (reported, never matched to a policy).

:data:`POLICY_OF` maps a behaviour to the empty-row policy whose ``R(L)`` the
dependency check must then match (``nan``: the attend-all pattern, which NaN
gradients can only contradict, so the check fails, as it should for a model that
produces NaN).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from hasse.gpu_check.backends import make_attention
from hasse.gpu_check.config import dtype_for
from hasse.theory.empty_rows import empty_rows

POLICY_OF = {"attend-all": "attend-all", "zeros": "attend-none", "nan": "attend-all", "other": "attend-all"}


@dataclass(frozen=True)
class EmptyRowProbe:
    """The empty rows of a mask and what one backend's kernel gave there."""

    rows: tuple[int, ...]
    backend: str
    device: str
    behaviour: str  # nan | zeros | attend-all | other (the first row that is not like the others wins)
    per_row: tuple[str, ...]  # behaviour of each empty row

    @property
    def policy(self) -> str:
        """The empty-row policy the theory uses for this kernel (:data:`POLICY_OF`)."""
        return POLICY_OF[self.behaviour]

    def to_json(self) -> dict:
        return {"rows": list(self.rows), "backend": self.backend, "device": self.device,
                "behaviour": self.behaviour, "policy": self.policy, "per_row": list(self.per_row)}


def _classify(o: torch.Tensor, uniform: torch.Tensor, softmax_all: torch.Tensor) -> str:
    if torch.isnan(o).any():
        return "nan"
    if (o == 0).all():
        return "zeros"
    tol = dict(rtol=1e-4, atol=1e-5)
    if torch.allclose(o, uniform, **tol) or torch.allclose(o, softmax_all, **tol):
        return "attend-all"
    return "other"


def probe_empty_rows(mask, backend: str, device: str = "cpu", *, width: int = 8, seed: int = 0) -> EmptyRowProbe | None:
    """Run one attention call of ``backend`` under ``mask`` and classify its empty rows (None if there are none).

    >>> m = np.array([[0, 0], [1, 1]], dtype=bool)
    >>> probe_empty_rows(m, "manual").behaviour, probe_empty_rows(m, "additive").behaviour
    ('nan', 'attend-all')
    """
    mask = np.asarray(mask, dtype=bool)
    rows = empty_rows(mask)
    if not rows:
        return None
    t = mask.shape[0]
    dtype = dtype_for(device)
    gen = torch.Generator().manual_seed(seed)
    attn = nn.MultiheadAttention(width, 1, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        attn.in_proj_weight.copy_(torch.randn(3 * width, width, generator=gen, dtype=torch.float64))
        attn.in_proj_bias.copy_(torch.randn(3 * width, generator=gen, dtype=torch.float64))
        attn.out_proj.weight.copy_(torch.eye(width, dtype=torch.float64))  # the output is the kernel's o
        attn.out_proj.bias.zero_()
    attn = attn.to(device=device, dtype=dtype)
    h = torch.randn(1, t, width, generator=gen, dtype=torch.float64).to(device=device, dtype=dtype)  # (1, T, C)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
        o = make_attention(backend, mask, device)(attn, h)[0]  # (T, C)
        q, k, v = (x[0] for x in (h @ attn.in_proj_weight.T + attn.in_proj_bias).chunk(3, dim=-1))  # (T, C) each
        softmax_all = ((q @ k.T) / width ** 0.5).softmax(dim=-1) @ v  # (T, C): every key, unmasked
        uniform = v.mean(dim=0)  # (C,)
    per_row = tuple(_classify(o[e], uniform, softmax_all[e]) for e in rows)
    behaviour = per_row[0] if len(set(per_row)) == 1 else next(b for b in per_row if b != per_row[0])
    return EmptyRowProbe(rows, backend, device, behaviour, per_row)

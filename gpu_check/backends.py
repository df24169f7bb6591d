"""Masked multi-head attention behind one interface: the reference and the real kernels.

Definition. Given the kit's (T, T) bool mask ``M`` (``M[q, k]`` iff query q attends
key k, design.md §2), a backend builds ``attention(attn, h)``: with ``attn`` an
``nn.MultiheadAttention`` holding the weights and ``h`` of shape (B, T, C),

    q, k, v = heads(h @ W_in.T + b_in)                      # (B, H, T, D) each
    o[q] = sum_k softmax_{k : M[q, k]}(q . k / sqrt(D)) v[k]
    out  = out_proj(concat_heads(o))                        # (B, T, C)

Backends (:data:`BACKENDS`):

- ``manual`` — the readable reference: ``where(M, scores, -inf)`` then softmax;
- ``sdpa`` — ``F.scaled_dot_product_attention`` with the boolean mask (True = attend);
- ``flex`` — FlexAttention with ``create_block_mask(mask_mod, …, device=…)``, where
  ``mask_mod`` reads ``M`` itself, so masking is token-exact; eager (unfused). On
  the CPU this torch version runs FlexAttention forward only (no backward);
- ``flex_compiled`` — the same under ``torch.compile`` (CUDA only here);
- ``mha`` — ``nn.MultiheadAttention`` itself, whose boolean ``attn_mask`` means the
  opposite (True = *blocked*): the mask is converted by :func:`to_mha_mask`;
- ``additive`` — eager attention with an additive float mask, ``scores + B`` with
  ``B = 0`` where allowed and ``finfo(dtype).min`` elsewhere (Hugging Face's eager path);
- ``sdpa_float`` — ``F.scaled_dot_product_attention`` with that float mask ``B``.

Empty rows (a query with no key) are where kernels disagree: the reference gives NaN,
FlexAttention and SDPA's boolean mask zeros, the additive masks attention over every
key (:mod:`gpu_check.empty_rows` observes which).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from hasse.theory.errors import InputError


@dataclass(frozen=True)
class BackendInfo:
    """What a backend can do on a device."""

    name: str
    summary: str
    backward_devices: tuple[str, ...]  # devices on which gradients flow through it
    devices: tuple[str, ...] = ("cpu", "cuda")  # devices on which it runs at all
    vmap_backward: bool = True  # is_grads_batched (vmap over the backward) works through it

    def has_backward(self, device: str) -> bool:
        return device_kind(device) in self.backward_devices

    def runs_on(self, device: str) -> bool:
        return device_kind(device) in self.devices


BACKENDS = {
    "manual": BackendInfo("manual", "reference: where(M, scores, -inf), softmax", ("cpu", "cuda")),
    "sdpa": BackendInfo("sdpa", "F.scaled_dot_product_attention, boolean attn_mask", ("cpu", "cuda")),
    "flex": BackendInfo("flex", "FlexAttention (eager), create_block_mask(device=...)", ("cuda",),
                        vmap_backward=False),
    "flex_compiled": BackendInfo("flex_compiled", "torch.compile(flex_attention)", ("cuda",), ("cuda",),
                                 vmap_backward=False),
    "mha": BackendInfo("mha", "nn.MultiheadAttention, attn_mask inverted (True = blocked)", ("cpu", "cuda")),
    "additive": BackendInfo("additive", "eager: scores + where(M, 0, finfo.min), softmax", ("cpu", "cuda")),
    "sdpa_float": BackendInfo("sdpa_float", "F.scaled_dot_product_attention, float mask 0 / finfo.min",
                              ("cpu", "cuda")),
}
CLI_BACKENDS = ("manual", "sdpa", "flex", "mha", "additive", "sdpa_float")


def device_kind(device) -> str:
    """``"cpu"`` or ``"cuda"`` (the type of a device name such as ``cuda:0``)."""
    return torch.device(device).type


def backend_info(name: str) -> BackendInfo:
    try:
        return BACKENDS[name]
    except KeyError:
        raise InputError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}") from None


def to_mha_mask(mask: torch.Tensor) -> torch.Tensor:
    """``nn.MultiheadAttention``'s boolean ``attn_mask`` for the kit's mask: ``~M``.

    MultiheadAttention reads True as "this query may *not* attend this key", the
    opposite of the kit, SDPA and FlexAttention. Passing ``M`` unconverted is a
    real and silent mistake; the dependency check catches it as unexpected pairs.

    >>> to_mha_mask(torch.tensor([[True, False], [True, True]])).tolist()
    [[False, True], [False, False]]
    """
    return ~mask


def split_heads(attn: nn.MultiheadAttention, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Project ``h`` (B, T, C) with ``attn``'s input weights into q, k, v of shape (B, H, T, D)."""
    b, t, c = h.shape
    heads = attn.num_heads
    qkv = F.linear(h, attn.in_proj_weight, attn.in_proj_bias)  # (B, T, 3C)
    q, k, v = qkv.chunk(3, dim=-1)  # (B, T, C) each
    return tuple(x.view(b, t, heads, c // heads).transpose(1, 2) for x in (q, k, v))  # (B, H, T, D)


def merge_heads(attn: nn.MultiheadAttention, o: torch.Tensor) -> torch.Tensor:
    """Concatenate heads of ``o`` (B, H, T, D) and apply ``attn.out_proj``: (B, T, C)."""
    b, heads, t, d = o.shape
    return attn.out_proj(o.transpose(1, 2).reshape(b, t, heads * d))  # (B, T, C)


def manual_attention(q, k, v, mask: torch.Tensor) -> torch.Tensor:
    """The reference: (B, H, T, D) inputs, (T, T) bool mask, (B, H, T, D) output."""
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-1, -2)  # (B, H, T, T)
    scores = torch.where(mask, scores, float("-inf"))  # masked keys get -inf, so probability exactly 0
    return scores.softmax(dim=-1) @ v  # (B, H, T, D)


def additive_bias(mask: torch.Tensor, dtype) -> torch.Tensor:
    """(T, T) float mask: 0 where ``mask`` allows, ``finfo(dtype).min`` elsewhere (added to the scores).

    >>> additive_bias(torch.tensor([[True, False]]), torch.float32).tolist()
    [[0.0, -3.4028234663852886e+38]]
    """
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, torch.finfo(dtype).min)


def additive_attention(q, k, v, mask: torch.Tensor) -> torch.Tensor:
    """Eager attention with an additive mask: (B, H, T, D) inputs, (T, T) bool mask, (B, H, T, D) output.

    A masked score becomes ``score + finfo.min``: its probability is exactly 0 beside any
    allowed key, and a row with no allowed key is uniform over every key.
    """
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-1, -2)  # (B, H, T, T)
    return (scores + additive_bias(mask, scores.dtype)).softmax(dim=-1) @ v  # (B, H, T, D)


def flex_block_mask(mask: torch.Tensor):
    """A FlexAttention ``BlockMask`` on ``mask.device`` whose ``mask_mod`` reads ``mask`` itself.

    The block structure only lets kernels skip empty blocks; inside a block the
    kernel calls ``mask_mod``, so masking stays token-exact. (Never read a token
    mask back with ``BlockMask.to_dense()``: that is block-granular.)
    """
    from torch.nn.attention.flex_attention import create_block_mask

    t = mask.shape[0]

    def kit_mask(b, h, q_idx, kv_idx):
        return mask[q_idx, kv_idx]

    return create_block_mask(kit_mask, None, None, t, t, device=mask.device)


_COMPILED_FLEX = None


def _flex_function(compiled: bool):
    global _COMPILED_FLEX
    from torch.nn.attention import flex_attention as fa

    if not compiled:
        return fa.flex_attention
    if _COMPILED_FLEX is None:
        _COMPILED_FLEX = torch.compile(fa.flex_attention, dynamic=False)
    return _COMPILED_FLEX


def make_attention(name: str, mask, device: str = "cpu", *, invert_mha: bool = True) -> Callable:
    """``attention(attn, h) -> (B, T, C)`` for backend ``name`` with the kit's (T, T) ``mask``.

    ``invert_mha=False`` passes the kit's mask to ``nn.MultiheadAttention``
    unconverted — the mistake the checks must catch; only for demonstrations.

    >>> m = np.array([[1, 0], [1, 1]], dtype=bool)
    >>> attn = nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64)
    >>> h = torch.randn(1, 2, 4, dtype=torch.float64)
    >>> a, b = make_attention("manual", m)(attn, h), make_attention("sdpa", m)(attn, h)
    >>> bool(torch.allclose(a, b))
    True
    """
    info = backend_info(name)
    if not info.runs_on(device):
        raise InputError(f"backend {name} does not run on {device} (it needs {' or '.join(info.devices)})")
    m = torch.tensor(np.array(mask, dtype=bool), device=device)  # (T, T)

    def check(h):
        if h.shape[-2] != m.shape[0]:
            raise ValueError(f"attention built for T = {m.shape[0]}, got T = {h.shape[-2]}")

    if name == "mha":
        blocked = to_mha_mask(m) if invert_mha else m  # MultiheadAttention: True = blocked

        def mha(attn, h):
            check(h)
            return attn(h, h, h, attn_mask=blocked, need_weights=False)[0]  # (B, T, C)

        return mha

    if name == "manual":
        kernel = lambda q, k, v: manual_attention(q, k, v, m)  # noqa: E731
    elif name == "sdpa":
        kernel = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=m)  # noqa: E731
    elif name == "additive":
        kernel = lambda q, k, v: additive_attention(q, k, v, m)  # noqa: E731
    elif name == "sdpa_float":
        kernel = lambda q, k, v: F.scaled_dot_product_attention(  # noqa: E731
            q, k, v, attn_mask=additive_bias(m, q.dtype))
    else:  # flex, flex_compiled
        block_mask = flex_block_mask(m)
        flex = _flex_function(compiled=name == "flex_compiled")
        kernel = lambda q, k, v: flex(q, k, v, block_mask=block_mask)  # noqa: E731

    def attention(attn, h):
        check(h)
        return merge_heads(attn, kernel(*split_heads(attn, h)))

    return attention

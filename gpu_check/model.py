"""The stack of pre-norm Transformer blocks whose gradients the checks read.

Definition (design.md §9). One block maps ``x`` (B, T, C) to
``y = x + Attn(LN1(x))`` then ``y + MLP(LN2(y))``; the attention is masked by an
(T, T) mask ``M`` (``M[q, k]`` iff query q attends key k) through one of the
backends of :mod:`gpu_check.backends`. LayerNorm and the MLP act per position, so
output ``q`` of an ``L``-block stack can depend on input ``k`` only if ``R(L)[q, k]``
(design.md §2).

Each block keeps its attention weights in an ``nn.MultiheadAttention`` module
(``in_proj_weight``, ``in_proj_bias``, ``out_proj``): the ``mha`` backend calls it,
the others read the same weights, so every backend computes the same function.
No dropout anywhere.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn

from hasse.gpu_check.config import StackConfig, dtype_for

# attention(attn_module, h) -> (B, T, C): one masked multi-head attention, see gpu_check.backends
Attention = Callable[[nn.MultiheadAttention, torch.Tensor], torch.Tensor]


class Block(nn.Module):
    """One pre-norm block: LayerNorm, masked attention, residual; LayerNorm, MLP, residual."""

    def __init__(self, config: StackConfig):
        super().__init__()
        c = config.width
        self.ln1 = nn.LayerNorm(c)
        self.attn = nn.MultiheadAttention(c, config.heads, dropout=0.0, batch_first=True)
        self.ln2 = nn.LayerNorm(c)
        self.mlp = nn.Sequential(nn.Linear(c, config.mlp_ratio * c), nn.GELU(), nn.Linear(config.mlp_ratio * c, c))

    def forward(self, x: torch.Tensor, attention: Attention) -> torch.Tensor:  # x (B, T, C)
        x = x + attention(self.attn, self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Stack(nn.Module):
    """``L`` blocks applied in order; ``forward(x, attention)`` maps (B, T, C) to (B, T, C).

    ``attention`` is one :data:`Attention` for every block, or a sequence of them with
    one per block, first block first (a stack of different masks per layer,
    :mod:`gpu_check.check`).
    """

    def __init__(self, config: StackConfig):
        super().__init__()
        self.config = config
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))

    def forward(self, x: torch.Tensor, attention: Attention | Sequence[Attention]) -> torch.Tensor:
        per_block = attention if isinstance(attention, (list, tuple)) else [attention] * len(self.blocks)
        if len(per_block) != len(self.blocks):
            raise ValueError(f"{len(per_block)} attention layers given for {len(self.blocks)} blocks")
        for block, layer_attention in zip(self.blocks, per_block):
            x = block(x, layer_attention)
        return x


def seeded(seed: int, build: Callable[[], nn.Module]) -> nn.Module:
    """``build()`` with torch's CPU generator seeded by ``seed``, in float64, leaving the global RNG as it was.

    LayerNorm starts at weight 1, bias 0, and MultiheadAttention at zero biases;
    those are randomised too (small normal noise), so no parameter sits at a
    special value that could hide or fake a dependency.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = build().double()
        with torch.no_grad():
            for name, p in module.named_parameters():
                if name.endswith("bias") or ".ln" in name or name.startswith("ln"):
                    p.add_(0.1 * torch.randn_like(p))
    return module


def build_stack(config: StackConfig, device: str = "cpu") -> Stack:
    """A :class:`Stack` with seeded weights, on ``device`` in :func:`~gpu_check.config.dtype_for` precision.

    >>> stack = build_stack(StackConfig(layers=1, width=4, heads=2))
    >>> from gpu_check.backends import make_attention
    >>> import numpy as np
    >>> x = torch.zeros(1, 3, 4, dtype=torch.float64)
    >>> stack(x, make_attention("manual", np.tril(np.ones((3, 3), bool)))).shape
    torch.Size([1, 3, 4])
    """
    stack = seeded(config.seed, lambda: Stack(config))
    return stack.to(device=device, dtype=dtype_for(device))

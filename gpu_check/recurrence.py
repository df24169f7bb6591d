"""A real recurrent layer for the stack checks: a gated linear recurrence computed by a scan.

Definition. A layer of kind ``recurrent`` (:mod:`theory.masks.chunked`) enters the
theory as its dependency pattern: output ``t`` reads the inputs ``s <= t`` of its own
segment (the causal prefix, or the prefix of its chunk when the state is reset every
``C`` positions). To let gradients confirm that pattern it runs here as something
real, not as attention: with ``h`` (B, T, C) the block's normalised input and the
block's attention weights reused as projections (``W_a``, ``W_c``, ``W_u`` = the q, k,
v rows of ``in_proj_weight``),

    a_t   = exp(-dt * softplus(W_a h_t)) * keep_t      # per-channel decay in (0, 1]
    s_t   = a_t * s_{t-1} + W_u h_t,   s_{-1} = 0      # the state (a diagonal linear SSM)
    out_t = out_proj((W_c h_t) * s_t)                  # (B, T, C)

with ``dt`` spread over channels from 1e-3 to 1 (slow and fast channels, as in Mamba's
``dt``) and ``keep_t = 0`` at the first position of each segment, 1 elsewhere: a reset
multiplies the old state by an exact zero, so nothing before it reaches ``t``, exactly
(gradients there are exact zeros, perturbations leave outputs bit-identical).

The recurrence is evaluated by :func:`linear_scan`, an inclusive Hillis–Steele scan
(``log2 T`` vectorised steps composing ``s -> a s + u`` maps), never as a masked
matrix: the only thing that stops information is the recurrence's own reset.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from hasse.theory.errors import InputError


def segment_starts(mask: np.ndarray, source: str | None = None) -> np.ndarray:
    """(T,) bool: where a recurrent layer with dependency pattern ``mask`` resets its state.

    ``t`` starts a segment iff ``t == 0`` or ``mask[t, t - 1]`` is false. The mask must
    be causal within those segments (``mask[q, k]`` iff ``k <= q`` in the same segment),
    which is what ``recurrent:n=N[,chunk=C]`` gives; anything else is not the pattern of
    a recurrence and raises :class:`InputError`.

    >>> from hasse.theory.masks.chunked import build_recurrent
    >>> segment_starts(build_recurrent(5, 2).matrix).astype(int).tolist()
    [1, 0, 1, 0, 1]
    >>> segment_starts(np.ones((2, 2), bool))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: a recurrent layer must be causal within segments (state resets); row 0 differs
    """
    mask = np.asarray(mask, dtype=bool)
    t = mask.shape[0]
    starts = np.ones(t, dtype=bool)
    starts[1:] = ~mask[np.arange(1, t), np.arange(t - 1)]
    segment = np.cumsum(starts)
    expected = (segment[:, None] == segment[None, :]) & np.tri(t, dtype=bool)
    bad = np.flatnonzero((expected != mask).any(axis=1))
    if bad.size:
        raise InputError(f"a recurrent layer must be causal within segments (state resets); row {bad[0]} differs",
                         source)
    return starts


def linear_scan(a: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """``s`` with ``s_t = a_t * s_{t-1} + u_t`` (``s_{-1} = 0``) along dim 1 of (B, T, C) tensors.

    An inclusive Hillis–Steele scan: after the step of stride ``d`` each position holds
    the composition of the maps of its last ``2d`` positions, ``(A, b)`` meaning
    ``s -> A s + b``, composed as ``(A2, b2) o (A1, b1) = (A2 A1, A2 b1 + b2)``.

    >>> a = torch.tensor([[[0.5], [0.0], [2.0]]], dtype=torch.float64)
    >>> u = torch.tensor([[[1.0], [3.0], [1.0]]], dtype=torch.float64)
    >>> linear_scan(a, u)[0, :, 0].tolist()
    [1.0, 3.0, 7.0]
    """
    t = a.shape[1]
    A, b = a, u  # (B, T, C) each
    d = 1
    while d < t:
        b = torch.cat([b[:, :d], A[:, d:] * b[:, :-d] + b[:, d:]], dim=1)  # uses the old A
        A = torch.cat([A[:, :d], A[:, d:] * A[:, :-d]], dim=1)
        d *= 2
    return b


def make_recurrence(mask: np.ndarray, device: str = "cpu", *, source: str | None = None):
    """``recurrence(attn, h) -> (B, T, C)``: the module docstring's layer, resetting where ``mask`` says.

    ``attn`` is the block's ``nn.MultiheadAttention``, whose weights it reuses, so a block
    has the same parameters whatever its layer kind.

    >>> from torch import nn
    >>> from hasse.theory.masks.chunked import build_recurrent
    >>> attn = nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64)
    >>> h = torch.randn(1, 4, 4, dtype=torch.float64, requires_grad=True)
    >>> out = make_recurrence(build_recurrent(4, 2).matrix)(attn, h)
    >>> (grad,) = torch.autograd.grad(out[0, 3].sum(), h)
    >>> (grad[0].norm(dim=-1) != 0).tolist()   # output 3 reads inputs 2 and 3 only
    [False, False, True, True]
    """
    starts = segment_starts(mask, source)
    keep = torch.tensor(~starts, device=device)  # (T,) bool: False where the state resets

    def recurrence(attn, h):
        b, t, c = h.shape
        if t != keep.shape[0]:
            raise ValueError(f"recurrence built for T = {keep.shape[0]}, got T = {t}")
        gate, readout, update = F.linear(h, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)  # (B, T, C)
        dt = torch.logspace(-3, 0, c, dtype=h.dtype, device=h.device)  # (C,) slow to fast channels
        decay = torch.exp(-dt * F.softplus(gate))  # (B, T, C) in (0, 1]
        decay = torch.where(keep[:, None], decay, torch.zeros((), dtype=h.dtype, device=h.device))  # resets
        state = linear_scan(decay, update)  # (B, T, C)
        return attn.out_proj(readout * state)  # (B, T, C)

    return recurrence

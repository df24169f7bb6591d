"""Evaluating FlexAttention ``mask_mod`` functions that need torch.

``theory.inputs.mask_mod`` evaluates a ``mask_mod(b, h, q_idx, kv_idx)`` with numpy index
arrays; a mask_mod written with torch ops (``torch.where``, indexing a tensor of
document ids) fails there, and :func:`evaluate_mask_mod_torch` is the fallback
that the input wing asks for (:mod:`hasse.theory.inputs.hooks`). torch is imported inside
the functions, so importing this module is cheap.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from hasse.gpu_check.torch_extra import has_torch, require_torch
from hasse.theory.errors import InputError
from hasse.theory.inputs.mask_mod import broadcast_mask
from hasse.theory.user_code import raised


def evaluate_mask_mod_torch(fn: Callable, n: int, kv_len: int | None = None) -> np.ndarray:
    """Return ``M[q, k] = fn(0, 0, q, k)`` as an (n, n) bool numpy array, evaluated with torch.

    First ``fn`` is called once with broadcasting index tensors (``b`` and ``h``
    int64 zeros of shape (), ``q_idx = arange(n)[:, None]``, ``kv_idx =
    arange(n)[None, :]``). If that raises or gives a result of the wrong shape,
    ``fn`` is evaluated the way FlexAttention does it, under ``torch.vmap`` with
    scalar indices. The result must hold booleans or 0/1.

    Raises
    ------
    InputError : torch is missing, or ``fn`` raises or returns the wrong shape
        both ways (the message gives the first failure).

    Examples
    --------
    >>> def causal(b, h, q_idx, kv_idx):
    ...     import torch
    ...     return torch.where(q_idx >= kv_idx, True, False)
    >>> evaluate_mask_mod_torch(causal, 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    require_torch("this mask_mod")
    import torch

    name = getattr(fn, "__name__", type(fn).__name__)
    zero = torch.zeros((), dtype=torch.int64)
    index = torch.arange(n, dtype=torch.int64)
    keys = index if kv_len is None else torch.arange(kv_len, dtype=torch.int64)  # (K,): kv_len gives a Q x K grid
    try:
        result = fn(zero, zero, index[:, None], keys[None, :])  # (n, 1) and (1, K) -> (n, K)
        return broadcast_mask(_to_numpy(result), n, source=None, kv_len=kv_len)
    except Exception as exc:
        first = exc
    try:  # FlexAttention's own way: one call per (q, kv) pair, vectorised by vmap
        over_kv = torch.vmap(fn, in_dims=(None, None, None, 0))
        over_q_kv = torch.vmap(over_kv, in_dims=(None, None, 0, None))
        result = over_q_kv(zero, zero, index, keys)  # (n, K)
        return broadcast_mask(_to_numpy(result), n, source=None, kv_len=kv_len)
    except Exception:
        pass
    if isinstance(first, InputError):
        raise first
    raise InputError(f"{raised(f'mask_mod {name}', first)} (on torch index tensors)") from None


def _to_numpy(result):
    """A torch result as a numpy array (on the CPU, detached); anything else unchanged."""
    import torch

    if isinstance(result, torch.Tensor):
        return result.detach().cpu().numpy()
    return result


def torch_fallback_or_none() -> Callable[[Callable, int], np.ndarray] | None:
    """Return :func:`evaluate_mask_mod_torch` when torch is installed, else None (never raises).

    The provider of the input wing's fallback hook
    (:func:`hasse.gpu_check.torch_masks.register_input_hooks`).
    """
    return evaluate_mask_mod_torch if has_torch() else None

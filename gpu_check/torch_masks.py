"""Masks that need torch to read: ``.pt`` / ``.pth`` files and FlexAttention ``BlockMask`` objects.

:func:`read_torch` is the ``torch_reader`` that the command line and the Python API hand
to :func:`hasse.theory.inputs.masks.load_mask` (:func:`torch_reader_or_none` gives it only
when torch is installed). It returns the values as stored; the value conventions,
heads and batch rows are read by :mod:`hasse.theory.inputs.arrays`, which never imports
torch.

A ``BlockMask`` is read at token level, exactly as the kernel reads it (design §7):
its blocks (``kv_num_blocks``/``kv_indices``, the partial ones, and
``full_kv_num_blocks``/``full_kv_indices``, the full ones) are expanded to tokens of
``BLOCK_SIZE``, cut to ``seq_lengths``, and the partial blocks are masked by the
block mask's ``mask_mod`` on the index grid (full blocks skip it, as the kernel does).
Without a ``mask_mod`` (or with the no-op one) the answer is only block-granular, and
a Python warning says so. A hand-built BlockMask whose blocks disagree with its
``mask_mod`` (``create_block_mask`` never builds one) is read as the block-sparse kernel
reads it, with a warning: flex_attention's eager CPU path evaluates the mask_mod alone.

torch is imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from hasse.gpu_check.torch_extra import has_torch
from hasse.theory.errors import InputError
from hasse.theory.limits import check_positions
from hasse.theory.inputs.arrays import is_block_mask

MASK_KEYS = ("mask", "attention_mask", "attn_mask")


def torch_reader_or_none():
    """:func:`read_torch` when torch is installed, else None (``.pt`` files are then refused, naming the extra)."""
    return read_torch if has_torch() else None


def read_torch(obj, source: str) -> tuple:
    """``(values, spec, is_block_mask)`` of a ``.pt`` file (``obj`` its path) or of a ``BlockMask`` object.

    A ``.pt`` file is read with ``torch.load(weights_only=True)`` on the CPU: a tensor,
    a dict holding one tensor or a key ``mask`` / ``attention_mask`` / ``attn_mask``, or
    a saved ``BlockMask`` where torch can load one.

    Raises
    ------
    InputError : one line naming the file, what it holds and what to save instead.
    """
    if not isinstance(obj, str):
        values, spec = block_mask_to_dense(obj, source)
        return values, spec, True
    held = _load(obj)
    if isinstance(held, dict):
        held = _pick(held, obj)
    if _is_block_mask(held):
        values, spec = block_mask_to_dense(held, obj)
        return values, f"{obj}: {spec}", True
    import torch

    if not isinstance(held, torch.Tensor):
        raise InputError(f"holds {type(held).__name__}, not a tensor; save the mask tensor (or a dict with a "
                         f"'mask' key) with torch.save", obj)
    return held, obj, False


def _load(path: str):
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 -- any unpickling failure is a one-line refusal
        failure = exc
    try:  # a saved BlockMask: allow its class (its mask_mod must still be loadable)
        from torch.nn.attention.flex_attention import BlockMask

        with torch.serialization.safe_globals([BlockMask]):
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001
        if "BlockMask" in str(failure):
            failure = exc
    raise InputError(f"torch.load(weights_only=True) cannot read it ({_reason(failure)}); save a mask tensor, "
                     "or block_mask.to_dense() for a BlockMask", path) from None


def _reason(exc: Exception) -> str:
    """The telling line of torch.load's long message (the unsupported global, if it names one), no ANSI codes."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = re.search(r"Unsupported global: GLOBAL (\S+)", text)
    if named:
        return f"it names {named.group(1)}, which weights_only loading refuses"
    first = lines[0] if lines else type(exc).__name__
    return first if len(first) <= 160 else first[:159] + "…"


def _pick(held: dict, path: str):
    """The tensor of a dict: the key ``mask``/``attention_mask``/``attn_mask``, or its only tensor."""
    import torch

    for key in MASK_KEYS:
        if key in held:
            return held[key]
    tensors = [k for k, v in held.items() if isinstance(v, torch.Tensor) or _is_block_mask(v)]
    if len(tensors) == 1:
        return held[tensors[0]]
    keys = ", ".join(map(repr, list(held)[:8])) + (" ..." if len(held) > 8 else "")
    raise InputError(f"holds a dict with {len(tensors)} tensors (keys {keys}) and no key "
                     f"{' / '.join(MASK_KEYS)}; save one mask tensor", path)


def _is_block_mask(obj) -> bool:
    return is_block_mask(obj)


def _block_size(bm) -> tuple[int, int]:
    size = getattr(bm, "BLOCK_SIZE", None)
    if size is None:
        raise InputError("a BlockMask without BLOCK_SIZE cannot be expanded to tokens", "BlockMask")
    if isinstance(size, int):
        return size, size
    return int(size[0]), int(size[1])


def _blocks(num, indices, cols: int) -> np.ndarray:
    """The ``(B, H, Q_blocks, cols)`` bool block matrix of FlexAttention's ordered block lists."""
    num = num.detach().cpu().numpy().astype(np.int64)
    indices = indices.detach().cpu().numpy().astype(np.int64)
    dense = np.zeros((*indices.shape[:-1], cols + 1), dtype=bool)
    valid = np.arange(indices.shape[-1]) < num[..., None]
    np.put_along_axis(dense, np.where(valid, np.clip(indices, 0, cols), cols), True, axis=-1)
    return dense[..., :cols]


def block_mask_to_dense(bm, source: str = "BlockMask") -> tuple[np.ndarray, str]:
    """``((B, H, Q, K) bool array, spec)``: the token-level mask of a FlexAttention ``BlockMask``.

    Full blocks are all allowed; partial blocks are masked by ``bm.mask_mod``
    evaluated on their index grid; the result is cut to ``bm.seq_lengths``. Without
    a usable ``mask_mod`` a warning says the answer is at block size.
    """
    import torch

    bq, bk = _block_size(bm)
    q_len, kv_len = (int(x) for x in getattr(bm, "seq_lengths", (None, None)))
    check_positions(max(q_len, kv_len), source)  # the one size limit, before any block is expanded
    q_blocks, k_blocks = -(-q_len // bq), -(-kv_len // bk)
    if getattr(bm, "kv_num_blocks", None) is not None and getattr(bm, "kv_indices", None) is not None:
        partial = _blocks(bm.kv_num_blocks, bm.kv_indices, k_blocks)
        full = (_blocks(bm.full_kv_num_blocks, bm.full_kv_indices, k_blocks)
                if getattr(bm, "full_kv_num_blocks", None) is not None else np.zeros_like(partial))
    else:  # only to_dense(): every block counted as partial
        partial = bm.to_dense().detach().cpu().numpy().astype(bool)[..., :k_blocks]
        full = np.zeros_like(partial)
    partial, full = partial[:, :, :q_blocks], full[:, :, :q_blocks]
    b, h = partial.shape[:2]
    check_positions(max(q_len, kv_len), source, masks=b * h, what="masks of every head and batch row")
    spec = (f"BlockMask({f'B={b}, ' if b > 1 else ''}{f'H={h}, ' if h > 1 else ''}Q={q_len}, K={kv_len}, "
            f"BLOCK_SIZE=({bq},{bk}))")

    def tokens(blocks):
        return np.repeat(np.repeat(blocks, bq, axis=2), bk, axis=3)[:, :, :q_len, :kv_len]

    partial_t, full_t = tokens(partial & ~full), tokens(full)
    mask_mod = getattr(bm, "mask_mod", None)
    if mask_mod is None or getattr(mask_mod, "__name__", "") == "noop_mask":
        if partial_t.any():
            where = "" if source == "BlockMask" else f"{source}: "
            warnings.warn(f"{where}{spec} has partial blocks but no mask_mod; to_dense() is block-granular, so "
                          f"the answer is at block size {bq} x {bk}, not per token", stacklevel=2)
        return np.ascontiguousarray(full_t | partial_t), spec
    from torch.nn.attention.flex_attention import create_mask

    device = getattr(getattr(bm, "kv_num_blocks", None), "device", "cpu")  # where its mask_mod's tensors live
    try:
        with torch.no_grad():
            grid = create_mask(mask_mod, b, h, q_len, kv_len, device=device).cpu().numpy().astype(bool)
    except Exception as exc:  # noqa: BLE001 -- a user's mask_mod may raise anything
        raise InputError(f"{spec}: its mask_mod failed on the index grid ({type(exc).__name__}: {exc})",
                         source) from None
    grid = np.broadcast_to(grid, partial_t.shape)
    kernel = np.ascontiguousarray(full_t | (partial_t & grid))
    differ = np.argwhere(kernel != grid)
    if len(differ):  # a hand-built BlockMask: its blocks say otherwise than its mask_mod
        where = "" if source == "BlockMask" else f"{source}: "
        warnings.warn(f"{where}{spec}: its blocks and its mask_mod disagree on {len(differ)} (q, k) pair(s), first "
                      f"[{', '.join(map(str, differ[0]))}]; read as the block-sparse kernel reads it (full blocks whole, "
                      "partial blocks through mask_mod, nothing outside its blocks); flex_attention's eager CPU path "
                      "evaluates the mask_mod alone and differs there", stacklevel=2)
    return kernel, spec


def register_input_hooks() -> None:
    """Register the torch hooks of the input wing (:mod:`hasse.theory.inputs.hooks`); imports no torch.

    The providers ask whether torch is installed each time a reader needs them.
    """
    from hasse.gpu_check.mask_mod import torch_fallback_or_none
    from hasse.theory.inputs import hooks

    hooks.register(fallback=torch_fallback_or_none, torch_reader=torch_reader_or_none)

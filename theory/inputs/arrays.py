"""Masks as the ecosystem hands them over: arrays of rank 2–4, value conventions, tensors.

Definitions (design.md §7, MASK forms). An attention mask array has shape

- ``(Q, K)``: one mask;
- ``(H, Q, K)``: the heads of one layer (as SDPA aligns a 3-D mask with the heads
  dimension); with ``heads=H`` a leading dimension ``X = B * H`` is read as
  ``nn.MultiheadAttention``'s ``(B * H, Q, K)`` layout;
- ``(B, H, Q, K)``: batch rows and heads, as Hugging Face models build it.

A dimension of size 1 broadcasts (it is not a declared range). A layer's mask is the
union over its heads (:mod:`theory.heads`); each batch row is a separate problem.
A ``(Q, K)`` slice with ``Q != K`` goes to :func:`theory.mask.square_up`.

The values follow a *convention* (``CONVENTIONS``):

- ``"allowed"``: bool or 0/1, true = the query may attend the key (SDPA's boolean
  ``attn_mask``, FlexAttention);
- ``"blocked"``: bool or 0/1, true = the key is NOT attended (``nn.MultiheadAttention``'s
  boolean ``attn_mask`` / ``key_padding_mask``); read as the inverse;
- ``"additive"``: a float bias added to the scores: a finite value above
  ``BLOCKED_AT`` (0, an ALiBi slope, a position bias) lets information through;
  ``-inf``, the dtype's minimum or any value ``<= BLOCKED_AT`` blocks. A soft bias
  changes weights but never cuts a dependency, so it counts as allowed;
- ``"auto"``: bool and integer arrays are ``allowed``; a float array with a negative
  value is ``additive``, one holding only 0 and 1 (at least one 1) is ``allowed``, and
  an all-zero float array is refused (0/1 would attend nothing, additive everything).

Torch tensors are duck-typed (``.detach``, ``.cpu``, ``.numpy``): this module never
imports torch. A FlexAttention ``BlockMask`` is recognised here (:func:`is_block_mask`)
and expanded by a reader that has torch (``gpu_check.torch_masks``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.limits import check_positions
from hasse.theory.heads import HeadMasks
from hasse.theory.mask import as_array, square_up

CONVENTIONS = ("auto", "allowed", "blocked", "additive")
BLOCKED_AT = -1e4  # additive values at or below this block (fp16's minimum is -65504)
RANKS = "2-D (Q, K), 3-D (H, Q, K) or 4-D (B, H, Q, K)"


def require_convention(convention: str, source: str | None = None) -> str:
    """``convention`` if it is one of ``CONVENTIONS``, else :class:`InputError`.

    >>> require_convention("additive")
    'additive'
    """
    if convention not in CONVENTIONS:
        raise InputError(f"convention must be one of {', '.join(CONVENTIONS)}, got {convention!r}", source)
    return convention


def is_tensor(obj) -> bool:
    """True for an object that behaves like a torch tensor (``.detach``, ``.cpu`` and ``.numpy``).

    >>> is_tensor(np.zeros(2)), is_tensor([[1]])
    (False, False)
    """
    return all(hasattr(obj, a) for a in ("detach", "cpu", "numpy"))


def is_block_mask(obj) -> bool:
    """True for an object that behaves like FlexAttention's ``BlockMask`` (``to_dense`` and its block size).

    >>> is_block_mask(np.zeros((2, 2)))
    False
    """
    return hasattr(obj, "to_dense") and any(hasattr(obj, a) for a in ("BLOCK_SIZE", "mask_mod", "seq_lengths"))


def to_numpy(values, source: str = "mask") -> np.ndarray:
    """``values`` as a numpy array: a tensor is detached and moved to the CPU (bf16/fp16 read as float32 first).

    >>> to_numpy([[1, 0], [1, 1]]).tolist()
    [[1, 0], [1, 1]]
    """
    if is_tensor(values):
        if "float16" in str(getattr(values, "dtype", "")) and hasattr(values, "float"):
            values = values.float()  # bfloat16 has no numpy dtype; float16 -> float32 keeps -inf and the minimum
        try:
            return np.asarray(values.detach().cpu().numpy())
        except Exception as exc:
            raise InputError(f"cannot read the tensor ({type(exc).__name__}: {exc})", source) from None
    return as_array(values, source)


def _where(index) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def allowed(values, convention: str = "auto", source: str = "mask") -> np.ndarray:
    """The boolean ``allowed`` array (same shape) of an array in ``convention``.

    >>> allowed(np.array([[0.0, -np.inf], [0.0, 0.0]])).astype(int).tolist()
    [[1, 0], [1, 1]]
    >>> allowed(np.array([[True, True], [False, True]]), "blocked").astype(int).tolist()
    [[0, 0], [1, 0]]
    >>> allowed(np.zeros((2, 2)), source="m.npy")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.npy: an all-zero float mask of shape (2, 2) is ambiguous (0/1: attend nothing; additive: attend everything); choose the convention allowed or additive (--convention)
    """
    require_convention(convention, source)
    arr = to_numpy(values, source)
    if arr.dtype == bool:
        if convention == "additive":
            raise InputError(f"a bool array cannot be additive (shape {arr.shape}); choose the convention "
                             "allowed or blocked (--convention)", source)
        return ~arr if convention == "blocked" else arr
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise InputError(f"values must be bool, 0/1 or an additive float bias, got dtype {arr.dtype}", source)
    is_float = np.issubdtype(arr.dtype, np.floating)
    if is_float and np.isnan(arr).any():
        raise InputError(f"NaN at {_where(np.argwhere(np.isnan(arr))[0])} (shape {arr.shape})", source)
    if convention == "auto":
        convention = _guess(arr, is_float, source)
    if convention == "additive":
        if is_float and np.isposinf(arr).any():
            raise InputError(f"+inf at {_where(np.argwhere(np.isposinf(arr))[0])} in an additive mask", source)
        return arr > BLOCKED_AT
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        where = np.argwhere(bad)[0]
        value = arr[tuple(where)].item()
        hint = "; an additive mask? choose the convention additive (--convention)" if value < 0 else ""
        raise InputError(f"values must be 0/1 or true/false, found {value:g} at {_where(where)}{hint}", source)
    ones = arr == 1
    return ~ones if convention == "blocked" else ones


def _guess(arr: np.ndarray, is_float: bool, source: str) -> str:
    """The convention ``auto`` reads ``arr`` in (see the module docstring)."""
    if not is_float:
        return "allowed"
    if (arr < 0).any():
        return "additive"
    if not (arr != 0).any():
        raise InputError(f"an all-zero float mask of shape {arr.shape} is ambiguous (0/1: attend nothing; "
                         "additive: attend everything); choose the convention allowed or additive (--convention)",
                         source)
    if ((arr == 0) | (arr == 1)).all():
        return "allowed"
    where = np.argwhere((arr != 0) & (arr != 1))[0]
    raise InputError(f"float values are neither 0/1 nor an additive mask (found {arr[tuple(where)].item():g} at "
                     f"{_where(where)} and no negative value); choose the convention (--convention)", source)


def check_rank(shape, source: str = "mask") -> None:
    """:class:`InputError` unless ``shape`` is that of a 2-D, 3-D or 4-D mask array with no empty dimension."""
    shape = tuple(int(s) for s in shape)
    if not 2 <= len(shape) <= 4:
        raise InputError(f"a mask must be {RANKS}, got {len(shape)}-D with shape {shape}; index or squeeze it first",
                         source)
    if 0 in shape:
        raise InputError(f"empty mask (n = 0, shape {shape})", source)
    b_h = math.prod(shape[:-2])  # Python integers: a forged shape cannot overflow
    check_positions(max(shape[-2:]), source, masks=b_h,  # the one size limit, on the shape: stride-0 tensors too
                    what="mask" if b_h == 1 else "masks of every head and batch row")


def to_grid(values, convention: str = "auto", *, heads: int | None = None, batch: int | None = None,
            queries: str | None = None, source: str = "mask") -> HeadMasks:
    """The :class:`~theory.heads.HeadMasks` of a mask array of rank 2–4 (or a tensor) in ``convention``.

    :func:`per_head` then :func:`grid_of`: dimensions of size 1 broadcast and are not
    declared (``HeadMasks.heads`` is None); non-square slices are embedded by
    :func:`theory.mask.square_up` (``queries``).

    >>> hf = np.zeros((2, 1, 3, 3), dtype=np.float32)
    >>> hf[:, :, np.triu_indices(3, 1)[0], np.triu_indices(3, 1)[1]] = np.finfo(np.float32).min
    >>> hf[1, :, :, 0] = np.finfo(np.float32).min  # batch row 1: position 0 is padding
    >>> g = to_grid(hf)
    >>> g.batch, g.heads, g.masks[1, 0].astype(int).tolist()
    (2, None, [[0, 0, 0], [0, 1, 0], [0, 1, 1]])
    """
    return grid_of(per_head(values, convention, heads=heads, batch=batch, source=source), queries=queries,
                   source=source)


def per_head(values, convention: str = "auto", *, heads: int | None = None, batch: int | None = None,
             source: str = "mask") -> np.ndarray:
    """The ``(B, H, Q, K)`` bool array of a mask array of rank 2–4 (or a tensor) in ``convention``.

    ``heads`` splits a 3-D array's leading dimension ``B * H`` (``nn.MultiheadAttention``
    indexes it ``b * H + h``); for a 4-D array ``heads`` and ``batch``, when given,
    must equal its dimensions.

    >>> per_head(np.ones((6, 2, 2), dtype=bool), heads=3).shape
    (2, 3, 2, 2)
    """
    if getattr(values, "shape", None) is not None:  # a tensor or an array: its shape is checked before it is read
        check_rank(values.shape, source)
    arr = to_numpy(values, source)
    check_rank(arr.shape, source)
    shape, is_float = arr.shape, np.issubdtype(arr.dtype, np.floating)
    arr = allowed(arr, convention, source)  # before any reshape: messages give indices in the array's own shape
    if (convention == "auto" and not is_float and shape[-1] == shape[-2]
            and not np.diagonal(arr, axis1=-2, axis2=-1).any()):
        warnings.warn(f"{source}: no query attends itself anywhere in this mask of shape {shape_text(shape)}; if "
                      "true means blocked (nn.MultiheadAttention), choose the convention blocked (--convention)",
                      stacklevel=2)
    for value, name in ((heads, "heads"), (batch, "batch")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise InputError(f"{name} must be a positive integer, got {value!r}", source)
    if arr.ndim == 2:
        if heads is not None or batch is not None:
            raise InputError(f"{{heads}} and {{batch}} apply to a 3-D or 4-D mask or a mask_mod; a 2-D mask of "
                             f"shape {arr.shape} is one mask for every head and batch row", source, param="heads")
        arr = arr[None, None]
    elif arr.ndim == 3:
        if batch is not None:
            raise InputError(f"a 3-D mask of shape {arr.shape} is (H, Q, K) or, with heads, (B * H, Q, K); "
                             "batch is read from its shape", source)
        if heads is None:
            arr = arr[None]
        elif arr.shape[0] % heads:
            raise InputError(f"{{heads = {heads}}} does not divide the leading dimension {arr.shape[0]} of a "
                             f"(B * H, Q, K) mask of shape {arr.shape}", source, param="heads")
        else:
            arr = arr.reshape(arr.shape[0] // heads, heads, *arr.shape[1:])  # torch's MHA: index b * H + h
    else:
        for value, dim, name in ((batch, 0, "batch"), (heads, 1, "heads")):
            if value is not None and value != arr.shape[dim]:
                raise InputError(f"{name} = {value} but the 4-D mask (B, H, Q, K) has shape {arr.shape}", source)
    return arr


def grid_of(masks: np.ndarray, *, queries: str | None = None, source: str = "mask") -> HeadMasks:
    """:class:`HeadMasks` of a ``(B, H, Q, K)`` bool array: size-1 dimensions undeclared, non-square slices squared up.

    >>> grid_of(np.ones((1, 2, 2, 3), dtype=bool)).masks.shape
    (1, 2, 3, 3)
    """
    b, h, q, k = masks.shape
    key_only: tuple[int, ...] = ()
    kind = ""
    if q != k or queries == "separate":
        squared = []
        for row in masks.reshape(b * h, q, k):
            square, key_only, kind = square_up(row, queries=queries, source=source)
            squared.append(square)
        masks = np.stack(squared).reshape(b, h, *squared[0].shape)
    return HeadMasks(np.ascontiguousarray(masks), h if h > 1 else None, b if b > 1 else None,
                     key_only=tuple(key_only), key_only_kind=kind)


def shape_text(shape) -> str:
    """``shape`` as a short text: ``(2, 1, 8, 8)``.

    >>> shape_text((2, 8))
    '(2, 8)'
    """
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"

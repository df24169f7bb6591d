"""FlexAttention mask_mods as masks: ``file.py:function`` evaluated on the index grid.

- :func:`load_mask_mod` -- import ``function`` from ``file.py`` and evaluate it on
  ``n`` positions (the ``file.py:function`` form of :func:`theory.inputs.masks.read_grid`);
- :func:`mask_mod_to_mask` -- ``M[q, k] = fn(0, 0, q, k)``, one call on numpy index
  arrays, with an optional fallback (torch, in ``gpu_check.mask_mod``) when that fails;
  a mask_mod whose result changes with ``h`` or ``b`` is refused (:class:`RangeNeeded`):
  its heads and batch must be declared (:mod:`theory.heads` evaluates those ranges);
- :func:`evaluate_mask_mod` -- ``M[q, k] = fn(b, h, q, k)`` at one batch index and head;
- :func:`broadcast_mask` -- a mask_mod's result broadcast to an (n, n) bool mask.

:func:`check_n` and :func:`check_mask_fits` check the size of any mask;
:mod:`theory.inputs.masks` uses them for its other forms too.
Every problem raises :class:`InputError` with one line naming the source.
"""

from __future__ import annotations

import math
import os
from typing import Callable

import numpy as np

from hasse.theory.atomic_file import note_read
from hasse.theory.errors import InputError, TooLargeError
from hasse.theory.limits import check_positions
from hasse.theory.mask import NamedMask, as_mask, default_names, square_up
from hasse.theory.inputs.user_files import callable_name as _name
from hasse.theory.inputs.user_files import resolve_function
from hasse.theory.user_code import raised as user_raised
from hasse.theory.user_code import require_permission
from hasse.theory.user_code import run as run_user_code

MaskModFallback = Callable[[Callable, int], np.ndarray]

# Values of h (and of b) compared with 0 to tell whether a mask_mod reads them.
PROBES = (1, 2, 3)
AXES = {"h": ("heads", "head"), "b": ("batch", "batch index")}


class RangeNeeded(InputError):
    """A mask_mod reads ``h`` or ``b`` but only one value of it was to be evaluated (``param``: ``heads`` or ``batch``)."""

    def __init__(self, axis: str, value: int, source: str | None):
        self.axis = axis
        self.value = value
        param, what = AXES[axis]
        super().__init__(f"mask_mod depends on {axis}; give {{{param}={param[0].upper()}}} ({axis} = 0 and {axis} = "
                         f"{value} give different masks: every {what} must be evaluated)", source, param=param)


def check_n(n, source: str, name: str = "n") -> int:
    """Return ``n`` as a positive int, or raise InputError naming ``source`` (and ``name``, e.g. ``kv_len``)."""
    param = None if name == "n" else name  # n's messages name it as the API does, on the command line too
    word = f"{{{name}}}" if param else name
    try:
        n = int(n)
    except (TypeError, ValueError):
        raise InputError(f"{word} must be a positive integer, got {n!r}", source, param=param) from None
    if n <= 0:
        raise InputError(f"{word} = {n}: a mask needs at least one position", source, param=param)
    return n


def check_mask_fits(n: int, source: str) -> None:
    """Raise TooLargeError naming ``source`` when an n x n mask and the engine's matrices do not fit."""
    try:
        check_positions(n)
    except TooLargeError as exc:
        raise TooLargeError(str(exc), source) from None


def load_mask_mod(path: str, function: str, source: str, n, fallback, *, permission, kv_len=None,
                  queries: str | None = None) -> NamedMask:
    """Return the mask of ``function`` from the file ``path`` on ``n`` positions.

    ``source`` (``path:function``) names the mask and prefixes error messages.
    With ``kv_len`` the mask_mod is evaluated on the ``n x kv_len`` grid (``n``
    queries, FlexAttention's ``Q_LEN``; ``kv_len`` keys, its ``KV_LEN``) and embedded
    in a square mask by :func:`theory.mask.square_up` with the layout ``queries``.
    ``permission`` is a :class:`theory.user_code.CodePermission` (None: refused, the
    name came from a data file). The file is imported, its factory called and the
    mask_mod evaluated in one bounded run (:func:`theory.user_code.run`).
    """
    require_permission(permission, source)
    if not function:
        raise InputError("needs a function name after ':' (file.py:function)", source)
    if not os.path.isfile(path):
        raise InputError("no such file" if not os.path.exists(path) else "is not a file", path)
    note_read(path)  # a file the command reads: no output may replace it (theory.atomic_file)
    if n is None:
        raise InputError("a mask_mod needs n, the number of positions to evaluate it on", source)
    try:  # before the file runs: a size that cannot fit never executes it
        check_positions(n)
    except TooLargeError as exc:
        raise TooLargeError(str(exc), source) from None
    if kv_len is not None:
        kv_len = check_n(kv_len, source, "kv_len")
        check_mask_fits(n + kv_len, source)
    def evaluate() -> NamedMask:  # in the bounded child: import, factory call, every evaluation
        fn = resolve_function(path, function, source, permission)
        matrix = mask_mod_to_mask(fn, n, source=source, fallback=fallback, kv_len=kv_len)
        if kv_len is None and queries is None:
            return NamedMask(matrix, default_names(n), source)
        square, key_only, kind = square_up(matrix, queries, source)
        return NamedMask(square, default_names(square.shape[0]), source, key_only, kind)

    return run_user_code(evaluate, source=source, what="mask_mod", path=path)


def mask_mod_to_mask(
    fn: Callable, n: int, *, source: str = "mask_mod", fallback: MaskModFallback | None = None,
    kv_len: int | None = None,
) -> np.ndarray:
    """Return ``M[q, k] = fn(0, 0, q, k)`` for a FlexAttention-style ``mask_mod`` on ``n`` positions.

    The mask must not depend on the head or batch index: it is also evaluated at
    ``h`` and ``b`` in :data:`PROBES`, and any difference raises
    :class:`RangeNeeded` (declare the ranges and use :mod:`theory.heads`).

    ``fn(b, h, q_idx, kv_idx)`` is called with numpy arrays: ``b`` and ``h``
    int64 scalars, ``q_idx`` of shape (n, 1) and ``kv_idx`` of shape (1, n). Its
    result must broadcast to (n, n) and hold booleans or 0/1; a result that does
    not depend on the indices broadcasts too (``return True`` is the all-true
    mask). Only mask_mods are accepted, not factories that return one: pass the
    function that a factory returns. When the numpy call raises and ``fallback``
    is given, ``fallback(fn, n)`` is used instead (torch, in gpu_check).

    With ``kv_len`` the grid is ``n x kv_len`` (``q_idx`` in ``0 … n-1``, ``kv_idx`` in
    ``0 … kv_len-1``, FlexAttention's ``Q_LEN x KV_LEN``; ``q_idx`` starts at 0 even when
    decoding: a mask_mod offsets it itself) and the result is ``(n, kv_len)``.

    >>> mask_mod_to_mask(lambda b, h, q, kv: q >= kv, 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> mask_mod_to_mask(lambda b, h, q, kv: True, 2).tolist()
    [[True, True], [True, True]]
    >>> try:
    ...     mask_mod_to_mask(lambda b, h, q, kv: (q >= kv) | (h == 1), 2, source="m")
    ... except RangeNeeded as exc:
    ...     print(exc)
    m: mask_mod depends on h; give heads=H (h = 0 and h = 1 give different masks: every head must be evaluated)
    """
    first = evaluate_mask_mod(fn, n, source=source, fallback=fallback, kv_len=kv_len)
    require_independent(fn, n, first, ("h", "b"), source=source, fallback=fallback, kv_len=kv_len)
    check_size_free(fn, n, first, source=source, fallback=fallback, kv_len=kv_len)
    return first


def require_independent(fn, n: int, first: np.ndarray, axes, *, source: str = "mask_mod",
                        fallback: MaskModFallback | None = None, b: int = 0, h: int = 0,
                        kv_len: int | None = None) -> None:
    """Raise :class:`RangeNeeded` when ``fn`` at ``axis`` = a value of :data:`PROBES` differs from ``first``.

    ``first`` is the mask at ``(b, h)``; each axis in ``axes`` (``"h"``, ``"b"``) is
    varied alone, the other kept.
    """
    for axis in axes:
        for value in PROBES:
            at = {"b": b, "h": h, axis: value}
            if not np.array_equal(evaluate_mask_mod(fn, n, source=source, fallback=fallback, kv_len=kv_len, **at),
                                  first):
                raise RangeNeeded(axis, value, source)


SIZE_PROBE_ENTRIES = 1 << 24  # the first larger grid evaluated to look for a baked-in size: at most 16M entries
SEARCH_ENTRIES = 1 << 20  # the doubling beyond it goes on while a grid has at most 1M entries


def probe_sizes(n: int) -> list[int]:
    """The sizes at which :func:`check_size_free` evaluates a mask_mod given ``n``.

    First ``n2 = max(n + 8, 2n)``, capped so that ``n2 * n2 <= 16M``; then doubling while
    a size ``m`` has ``m * m <= 1M`` (a closure over up to 1,023 positions is found from
    any smaller ``n``, in a few milliseconds). None when ``n`` is already at the cap.

    >>> probe_sizes(8), probe_sizes(1000), probe_sizes(3000), probe_sizes(4096)
    ([16, 32, 64, 128, 256, 512, 1024], [2000], [4096], [])
    """
    cap, search = math.isqrt(SIZE_PROBE_ENTRIES), math.isqrt(SEARCH_ENTRIES)
    if n >= cap:
        return []
    sizes = [min(max(n + 8, 2 * n), cap)]
    while 2 * sizes[-1] <= search:
        sizes.append(2 * sizes[-1])
    return sizes


def check_size_free(fn: Callable, n: int, first: np.ndarray, *, source: str = "mask_mod",
                    fallback: MaskModFallback | None = None, kv_len: int | None = None) -> None:
    """Raise InputError when the mask_mod's answer on ``n`` positions depends on ``n`` (a baked-in size).

    A mask_mod sees indices, never the size, so its ``n x n`` mask must be the top-left
    corner of its mask at any larger size. It is evaluated (``b = h = 0``) at the sizes of
    :func:`probe_sizes` and compared; the first difference, or a failure at a larger size
    (an ``IndexError`` from a closure over a tensor of length ``N``), is an error naming
    the size: a failure is narrowed by bisection to the largest size ``W`` that works, and
    ``W = n`` is accepted (the size given is the one baked in). On a ``Q x K`` grid
    (``kv_len``) the keys grow alone, then the queries alone, each checked the same way.

    >>> ids = np.arange(6) // 3  # two documents of 3, baked into the closure
    >>> same_doc = lambda b, h, q, kv: (ids[q] == ids[kv]) & (kv <= q)
    >>> check_size_free(same_doc, 6, evaluate_mask_mod(same_doc, 6))  # n = 6: the size baked in
    >>> check_size_free(same_doc, 4, evaluate_mask_mod(same_doc, 4), source="m.py:same_doc")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.py:same_doc: the mask_mod works at n = 4 but fails at n = 12 (IndexError: index 6 is out of bounds for axis 0 with size 6); it works up to n = 6: its size seems baked in (a closure over a tensor of length 6?); give --n 6
    >>> last_two = lambda b, h, q, kv: kv >= q.shape[0] - 2  # reads the grid's size
    >>> check_size_free(last_two, 4, evaluate_mask_mod(last_two, 4), source="m.py:last_two")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.py:last_two: the mask_mod's answer at n = 4 differs from the top-left corner of its answer at n = 12 at [0, 2]: its size seems baked in (a closure over a tensor of length N?); give --n equal to that size
    """
    queries, keys = first.shape
    # the grids to grow: both sides together for a square mask; each side alone for a Q x K one
    axes = [(1, 1)] if kv_len is None else [(0, 1), (1, 0)]
    for grow_q, grow_k in axes:
        _grow(fn, queries, keys, grow_q, grow_k, first, source, fallback, square=kv_len is None)


def _grow(fn, queries: int, keys: int, grow_q: int, grow_k: int, first, source, fallback, square: bool) -> None:
    """Probe ``fn`` on grids ``d`` larger along the sides chosen (see :func:`check_size_free`)."""
    failure = ""

    def at(d: int) -> np.ndarray | None:
        """The mask ``d`` larger along the growing sides, or None when the mask_mod fails there."""
        nonlocal failure
        try:
            return evaluate_mask_mod(fn, queries + grow_q * d, source=source, fallback=fallback,
                                     kv_len=None if square else keys + grow_k * d)
        except TooLargeError:
            raise
        except InputError as exc:
            failure = str(exc).removeprefix(f"{source}: ")
            return None

    def shape(d: int) -> str:
        return f"n = {queries + d}" if square else f"{queries + grow_q * d} x {keys + grow_k * d}"

    base, ok = max(queries * grow_q, keys * grow_k), 0
    for m in probe_sizes(base):
        bigger = at(m - base)
        if bigger is None:
            lo = _bisect(at, ok, m - base)
            if lo == 0:  # the size given is the one baked in
                return
            if square:
                raise InputError(f"the mask_mod works at n = {queries} but fails at n = {m} ({_reason(failure)}); it "
                                 f"works up to n = {queries + lo}: its size seems baked in (a closure over a tensor of "
                                 f"length {queries + lo}?); give --n {queries + lo}", source)
            option = "--n" if grow_q else "--kv-len"
            raise InputError(f"the mask_mod works at {shape(0)} but fails at {shape(m - base)} ({_reason(failure)}); "
                             f"it works up to {shape(lo)}: its size seems baked in; give {option} "
                             f"{(queries if grow_q else keys) + lo}", source)
        corner = bigger[:queries, :keys]
        if not np.array_equal(corner, first):
            q, k = (int(i) for i in np.argwhere(corner != first)[0])
            raise InputError(f"the mask_mod's answer at {shape(0)} differs from the top-left corner of its answer at "
                             f"{shape(m - base)} at [{q}, {k}]: its size seems baked in (a closure over a tensor of "
                             "length N?); give --n equal to that size", source)
        ok = m - base


def _bisect(at, ok: int, bad: int) -> int:
    """The largest ``d`` in ``[ok, bad)`` at which ``at(d)`` works, given that it works at ``ok`` and fails at ``bad``."""
    lo, hi = ok, bad
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid) is None:
            hi = mid
        else:
            lo = mid
    return lo


def _reason(text: str) -> str:
    """``"<name> raised IndexError: … (on numpy index arrays)"`` -> ``"IndexError: …"``."""
    _, sep, rest = text.partition(" raised ")
    rest = rest if sep else text
    return rest.removesuffix(" (on numpy index arrays)").removesuffix(" (on torch index tensors)")


def evaluate_mask_mod(fn: Callable, n: int, *, source: str = "mask_mod", fallback: MaskModFallback | None = None,
                      b: int = 0, h: int = 0, kv_len: int | None = None) -> np.ndarray:
    """``M[q, k] = fn(b, h, q, k)`` at one batch index ``b`` and head ``h`` (see :func:`mask_mod_to_mask`).

    The grid is ``n x n``, or ``n x kv_len`` when ``kv_len`` is given.

    >>> evaluate_mask_mod(lambda b, h, q, kv: (q >= kv) | (h == 1), 2, h=1).tolist()
    [[True, True], [True, True]]
    >>> evaluate_mask_mod(lambda b, h, q, kv: kv <= q + 2, 1, kv_len=3).astype(int).tolist()  # decode after 2
    [[1, 1, 1]]
    """
    n = check_n(n, source)
    keys = n if kv_len is None else check_n(kv_len, source, "kv_len")
    check_mask_fits(max(n, keys), source)
    if b or h:
        fn = _at(fn, b, h)
    zero = np.zeros((), dtype=np.int64)
    q_idx = np.arange(n, dtype=np.int64)[:, None]  # (n, 1)
    kv_idx = np.arange(keys, dtype=np.int64)[None, :]  # (1, K)
    try:
        with np.errstate(all="ignore", divide="raise"):  # an integer // or % by 0: torch raises, numpy gave 0
            result = fn(zero, zero, q_idx, kv_idx)
    except MemoryError as exc:  # beyond the address space user code may take (theory.user_code): torch would not fare better
        raise InputError(user_raised(f"mask_mod {_name(fn)}", exc), source) from None
    except Exception as exc:
        if fallback is None:
            raise InputError(f"{user_raised(f'mask_mod {_name(fn)}', exc)} (on numpy index arrays)", source) from None
        try:
            result = fallback(fn, n) if kv_len is None else fallback(fn, n, keys)
        except InputError as err:
            if err.source is None:
                raise InputError(str(err), source) from None
            raise
    return broadcast_mask(result, n, source=source, kv_len=kv_len)


def broadcast_mask(result, n: int, source: str | None = "mask_mod", kv_len: int | None = None) -> np.ndarray:
    """Return ``result`` broadcast to an (n, n) bool mask, or raise InputError on a wrong shape.

    With ``kv_len`` the shape is ``(n, kv_len)``.

    ``source`` prefixes error messages; None leaves them bare (for a caller to prefix).

    >>> broadcast_mask(np.array([[True], [False]]), 2).tolist()
    [[True, True], [False, False]]
    >>> broadcast_mask(np.ones((2, 2, 2)), 2)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: mask_mod: the mask_mod returned shape (2, 2, 2), which does not broadcast to (2, 2)
    """
    try:
        arr = np.asarray(result)
    except Exception as exc:
        raise InputError(f"the mask_mod returned {type(result).__name__}, not an array ({exc})", source) from None
    if arr.dtype == object:
        raise InputError(f"the mask_mod returned {type(result).__name__}, not booleans or 0/1", source)
    shape = (n, n if kv_len is None else kv_len)
    wrong_shape = f"the mask_mod returned shape {arr.shape}, which does not broadcast to {shape}"
    if arr.ndim > 2:
        raise InputError(wrong_shape, source)
    try:
        full = np.broadcast_to(arr, shape)
    except ValueError:
        raise InputError(wrong_shape, source) from None
    return as_mask(np.array(full), source=source, square=kv_len is None)


def _at(fn: Callable, b: int, h: int) -> Callable:
    """``fn`` with its batch and head indices fixed at ``b`` and ``h``.

    The indices it receives (numpy or torch zeros) are shifted, ``zero + b``, so
    they keep their type for numpy, torch and vmap alike.
    """

    def at(b_idx, h_idx, q_idx, kv_idx):
        return fn(b_idx + b, h_idx + h, q_idx, kv_idx)

    at.__name__ = _name(fn)
    return at

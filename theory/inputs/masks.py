"""Reading a MASK: :func:`read_grid` gives its :class:`NamedMask` and its masks per batch row and head.

A MASK (design §7) is a ``file.py:function`` mask_mod, evaluated on the ``n x n``
index grid (``n x kv_len`` with ``kv_len``; for ``h < heads`` and ``b < batch`` when
declared: :mod:`theory.heads`), only with a permission (``Reading.code``, or
``trust_code`` for one named inside a JSON file) and in the bounded child of
:func:`theory.user_code.run`; an object of the Python API (a numpy array, a torch
tensor, a ``BlockMask``, a NamedMask, a mask_mod function, evaluated at ``n`` in the
bounded child too); or a text read by
:func:`theory.inputs.mask_files.load_text` (a spec, a ``.npy``/``.pt``/text/JSON file).

Commands and the API reach it through :func:`theory.inputs.read.read` (``accept`` with
``"mask"``). Every problem raises :class:`InputError` with one line naming the source;
one about a parameter carries it as ``param``.
"""

from __future__ import annotations

import os

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.heads import HeadMasks, load_mask_mod_grid, single
from hasse.theory.inputs import hooks
from hasse.theory.inputs.arrays import grid_of, is_block_mask, is_tensor, require_convention, shape_text
from hasse.theory.inputs.calls import split_function
from hasse.theory.inputs.forms import form_of
from hasse.theory.inputs.mask_files import (ArrayReading, SpecResolver, array_mask, load_text, read_torch,
                                            reading_arrays)
from hasse.theory.inputs.mask_mod import check_n, load_mask_mod
from hasse.theory.mask import QUERY_LAYOUTS, NamedMask, default_names, square_up
from hasse.theory.user_code import TRUSTED


def read_grid(source, reading, resolve_spec: SpecResolver | None = None) -> tuple[NamedMask, HeadMasks]:
    """``(NamedMask, HeadMasks)``: batch row 0's union over heads (empty rows as given) and the masks per row and head.

    ``reading`` is a :class:`theory.inputs.read.Reading`. A spec, text or JSON rows, or a
    mask_mod that reads neither ``h`` nor ``b`` is one mask for every head and batch row
    (:func:`theory.heads.single`). ``resolve_spec(spec)`` builds a spec's mask (default the
    catalogue's ``build_mask``).

    >>> from hasse.theory.inputs.reading import Reading
    >>> bias = np.zeros((2, 3, 3), dtype=np.float32)  # (H, Q, K) additive: head 1 is causal
    >>> bias[1][np.triu_indices(3, 1)] = -np.inf
    >>> named, grid = read_grid(bias, Reading())
    >>> grid.heads, bool(named.matrix.all()), named.spec
    (2, True, 'array (2, 3, 3)')
    """
    label = source if isinstance(source, str) else "array"
    arrays = ArrayReading(require_convention(reading.convention, label), reading.heads, reading.batch,
                          (reading.n,) if reading.trust_code else None)
    queries, kv_len, n = reading.queries, reading.kv_len, reading.n
    if queries is not None and queries not in QUERY_LAYOUTS:
        raise InputError(f"{{queries}} must be one of {', '.join(QUERY_LAYOUTS)}, got {queries!r}", str(source),
                         param="queries")
    if isinstance(source, str) and form_of(source) == "function":
        return _mask_mod(source, reading, arrays)
    if callable(source) and not isinstance(source, NamedMask) and not is_block_mask(source) and not is_tensor(source):
        return _callable(source, reading)
    if kv_len is not None:
        kv_len = check_n(kv_len, str(source), "kv_len")
    with reading_arrays(arrays):
        mask = load_text(source, None, resolve_spec) if isinstance(source, str) else _from_object(source)
    label = source if isinstance(source, str) else mask.spec
    per = getattr(mask, "per_head", None)
    if per is None:  # one 0/1 mask: a spec, rows, a mask_mod named by a JSON file
        _only_arrays(arrays, label)
        per = mask.matrix[None, None]
    else:  # an array: a plain NamedMask from here on
        mask = NamedMask(mask.matrix, mask.names, mask.spec, mask.key_only, mask.key_only_kind)
    named = _embedded(mask, label, n, queries, kv_len)
    grid = grid_of(per, queries=queries, source=label)
    return named, HeadMasks(grid.masks, grid.heads, grid.batch, key_only=named.key_only,
                            key_only_kind=named.key_only_kind)


def _mask_mod(source: str, reading, arrays: ArrayReading) -> tuple[NamedMask, HeadMasks]:
    """A ``file.py:mask_mod`` named by the caller: evaluated at ``n`` (over the declared heads and batch rows)."""
    n, kv_len, queries = reading.n, reading.kv_len, reading.queries
    permission = TRUSTED if reading.trust_code else reading.code
    for value, name in ((reading.heads, "heads"), (reading.batch, "batch")):
        if value is not None and value < 1:
            raise InputError(f"{{{name}}} must be a positive integer, got {value}", param=name)
    path, function = split_function(source)
    if reading.heads is None and reading.batch is None:
        if n is None and function and os.path.isfile(path):
            raise InputError("a mask_mod needs {n}, the number of positions to evaluate it on", source, param="n")
        if kv_len is not None and n is None:
            raise InputError("{kv_len=K} needs {n=Q}, the number of queries", source, param="kv_len")
        if kv_len is not None:
            kv_len = check_n(kv_len, source, "kv_len")
        _only_arrays(arrays, source)
        if n is not None:
            n = check_n(n, source)
        named = load_mask_mod(path, function, source, n, hooks.fallback(), kv_len=kv_len, queries=queries,
                              permission=permission)
        return named, single(named.matrix, named.key_only, named.key_only_kind)
    if n is None:
        raise InputError("a mask_mod needs {n}, the number of positions to evaluate it on", source, param="n")
    _check_file(source, path, function)
    n = check_n(n, source)
    grid = load_mask_mod_grid(path, function, source, n, reading.heads, reading.batch, fallback=hooks.fallback(),
                              kv_len=kv_len, queries=queries, permission=permission)  # one bounded run
    return NamedMask(grid.masks[0].any(axis=0), default_names(grid.n), source, grid.key_only,
                     grid.key_only_kind), grid


def _callable(fn, reading) -> tuple[NamedMask, HeadMasks]:
    """A mask_mod given as a Python function (the API): evaluated at ``n`` over the declared ranges, bounded."""
    from hasse.theory.heads import mask_mod_grid
    from hasse.theory.user_code import run

    if reading.n is None:
        raise InputError("a mask_mod needs {n}, the number of positions", param="n")
    name = getattr(fn, "__name__", "mask_mod")
    fallback = hooks.fallback()
    grid = run(lambda: mask_mod_grid(fn, reading.n, reading.heads, reading.batch, source=name, fallback=fallback),
               source=name, what="mask_mod", path=getattr(getattr(fn, "__code__", None), "co_filename", None))
    return NamedMask(grid.masks[0].any(axis=0), default_names(grid.n), name, grid.key_only, grid.key_only_kind), grid


def _check_file(source: str, path: str, function: str) -> None:
    """Before a mask_mod runs: a function is named and its file exists (no output may replace it)."""
    from hasse.theory.atomic_file import note_read

    if not function:
        raise InputError("needs a function name after ':' (file.py:function)", source)
    if not os.path.isfile(path):
        raise InputError("no such file" if not os.path.exists(path) else "is not a file", path)
    note_read(path)


def _only_arrays(arrays: ArrayReading, source: str) -> None:
    """Refuse a convention, heads or batch for a form that is one 0/1 mask (a spec, rows, a mask_mod)."""
    if arrays.convention not in ("auto", "allowed"):
        raise InputError(f"the convention {arrays.convention} applies to arrays (.npy, .pt, tensors); "
                         "specs, 0/1 rows and mask_mods always say which pairs are allowed", source)
    if arrays.heads is not None or arrays.batch is not None:
        raise InputError("{heads} and {batch} apply to a file.py:mask_mod or a 3-D/4-D array (a spec or 0/1 rows "
                         "are one mask for every head and batch row)", source, param="heads")


def _from_object(obj) -> NamedMask:
    """The mask of an in-memory object: a NamedMask, a ``BlockMask``, a tensor or an array."""
    if isinstance(obj, NamedMask):
        return obj
    if is_block_mask(obj):
        return array_mask(*read_torch(obj, "BlockMask"))
    kind = "tensor" if is_tensor(obj) else "array"
    shape = getattr(obj, "shape", None)
    if shape is None:
        shape = np.shape(obj) if isinstance(obj, (list, tuple)) else ()
    return array_mask(obj, kind if len(shape) <= 2 else f"{kind} {shape_text(shape)}")


def _embedded(mask: NamedMask, source: str, n, queries, kv_len) -> NamedMask:
    """``mask`` squared up with the layout ``queries`` (if not square already), ``n`` and ``kv_len`` checked."""
    rows, keys = mask.matrix.shape
    if n is not None:
        n = check_n(n, source)
        if rows != n:
            what = "n" if rows == keys else "n (the number of query rows)"
            raise InputError(f"n = {n} was given but the mask has {what} = {rows}", source)
    if kv_len is not None and keys != kv_len:
        raise InputError(f"{{kv_len}} = {kv_len} was given but the mask has {keys} key columns", source,
                         param="kv_len")
    if rows == keys and queries != "separate":
        return mask
    square, key_only, kind = square_up(mask.matrix, queries, source)
    return NamedMask(square, default_names(square.shape[0]), mask.spec, key_only, kind)

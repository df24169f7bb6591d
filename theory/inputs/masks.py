"""Reading masks: ``load_mask`` turns a MASK argument into a :class:`NamedMask`.

:func:`source_kind` says which form a source has; it is the one place that decides
(task, family and design arguments are classified by it too: :mod:`theory.task_io`,
:mod:`theory.counterexample`).

A MASK (design §7) is one of

- a ``.npy`` file, or a ``.pt`` / ``.pth`` file (read by a ``torch_reader``, which
  needs torch), holding an array of rank 2–4 in a value convention, or a saved
  FlexAttention ``BlockMask`` (:mod:`theory.mask_arrays`);
- in memory (the Python API): a numpy array, a torch tensor or a ``BlockMask``;
- a ``.txt`` / ``.csv`` file: one row of 0/1 (or true/false) per line, entries
  separated by spaces and/or commas; blank lines and lines starting with ``#``
  are skipped;
- a ``.json`` file with a ``mask`` field (a task file works too, §8): a list of
  0/1 rows, or a string that is a built-in spec or a path relative to the JSON
  file's folder; an optional ``names`` list of the right length names positions;
- ``file.py:function``: a FlexAttention-style ``mask_mod(b, h, q_idx, kv_idx)``
  evaluated on the ``n x n`` index grid (``n`` must be given; :mod:`theory.mask_mod`),
  only with a permission (``code=``, or ``trust_code`` for one named inside a JSON file)
  and in the bounded child of :func:`theory.user_code.run`;
- anything else: a built-in spec ``name:key=value,...`` (theory.catalog).

The file formats themselves are read by :mod:`theory.mask_formats`; arrays of every
rank and value convention by :mod:`theory.mask_arrays`. :func:`load_mask` gives one
matrix (batch row 0, the union over heads); :func:`load_mask_grid` gives the masks
per batch row and head too.

Every problem raises :class:`InputError` with one line naming the source.
"""

from __future__ import annotations

import dataclasses
import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.inputs.json_file import json_kind, read_json, read_text, require_regular_file
from hasse.theory.mask import QUERY_LAYOUTS, NamedMask, as_mask, default_names, square_up
from hasse.theory.heads import HeadMasks, single
from hasse.theory.inputs.arrays import grid_of, is_block_mask, is_tensor, per_head, require_convention, shape_text
from hasse.theory.inputs.formats import read_npy, rows_to_mask, text_to_mask
from hasse.theory.inputs.mask_mod import MaskModFallback, check_n, load_mask_mod
from hasse.theory.inputs.calls import split_function
from hasse.theory.user_code import TRUSTED, CodePermission

SpecResolver = Callable[[str], object]

# While load_mask(trust_code=True) reads a JSON file: (n,), the size at which a mask_mod
# that the JSON names is evaluated; None (the default): a JSON naming code is refused.
_TRUSTED: ContextVar[tuple | None] = ContextVar("hasse_trusted_code", default=None)

TorchReader = Callable[[object, str], tuple]
"""``torch_reader(obj, source) -> (values, spec, is_block_mask)``: the array held by a
``.pt`` file (``obj`` its path), or a ``BlockMask`` expanded to tokens; ``spec`` names
it (``"BlockMask(Q=128, K=128, BLOCK_SIZE=(128, 128))"``). Provided by
``gpu_check.torch_masks.read_torch``."""

ARRAY_SUFFIXES = (".npy", ".pt", ".pth")
FILE_SUFFIXES = (".npy", ".pt", ".pth", ".txt", ".csv", ".json")
NEEDS_TORCH = "needs torch (install the torch extra)"


@dataclass(frozen=True)
class Reading:
    """How arrays are read: the value ``convention``, declared ``heads``/``batch``, the ``torch_reader``."""

    convention: str = "auto"
    torch_reader: TorchReader | None = None
    heads: int | None = None
    batch: int | None = None


# While load_mask_grid reads a source: how the arrays it meets are read (a .npy named by
# a JSON file too). A context variable, like _TRUSTED, so the file readers keep their signatures.
_READING: ContextVar[Reading] = ContextVar("hasse_array_reading", default=Reading())


@dataclass(frozen=True)
class _ArrayMask(NamedMask):
    """A mask read from an array: ``matrix`` is batch row 0's union over heads; ``per_head`` is ``(B, H, Q, K)``."""

    per_head: np.ndarray | None = None


def load_mask(
    source,
    *,
    n: int | None = None,
    fallback: MaskModFallback | None = None,
    resolve_spec: SpecResolver | None = None,
    queries: str | None = None,
    kv_len: int | None = None,
    trust_code: bool = False,
    convention: str = "auto",
    torch_reader: TorchReader | None = None,
    heads: int | None = None,
    batch: int | None = None,
    code: CodePermission | None = None,
) -> NamedMask:
    """Return the mask that ``source`` names (a file, ``file.py:function`` or a spec).

    ``source`` is read in the form that :func:`source_kind` gives it; the Python API
    passes arrays, tensors and ``BlockMask`` objects too. An array with heads and
    batch rows gives one matrix: batch row 0, the union over its heads (the spec says
    so when there are several batch rows); :func:`load_mask_grid` gives them all.

    Parameters
    ----------
    source : the MASK argument of the command line.
    n : number of positions. Required for ``file.py:function``; for every other
        form it is optional and, when given, must equal the size of the mask.
    fallback : ``fallback(fn, n) -> (n, n) bool array`` used when a mask_mod
        fails on numpy index arrays (for instance because it calls torch ops);
        ``gpu_check.mask_mod.torch_fallback_or_none()`` provides one.
    resolve_spec : ``resolve_spec(spec)`` returns a NamedMask or an array for a
        built-in spec; default ``theory.catalog.build_mask``, imported lazily.
    queries : ``"end"`` or ``"separate"``, how a non-square ``(Q, K)`` mask is
        embedded in a square one (:func:`theory.mask.square_up`); None: ``"end"``
        when ``Q <= K``, refused when ``Q > K``. ``"separate"`` applies to a square
        mask too (cross-attention with ``Q = K``). For a non-square mask ``n``, when
        given, must equal ``Q``, the number of query rows.
    kv_len : for ``file.py:function``, evaluate on the ``n x kv_len`` grid
        (``Q_LEN = n``, ``KV_LEN = kv_len``); for any other form it must equal
        ``K``, the number of key columns.
    trust_code : a ``.json`` whose ``mask`` is ``file.py:function`` (or a factory
        call) runs it, the path read relative to the JSON file's folder, at ``n``;
        default False: refused (:func:`refuse_code_in_json`), JSON is data.
    convention : ``"auto"``, ``"allowed"``, ``"blocked"`` or ``"additive"``: how an
        array's values are read (:mod:`theory.mask_arrays`); specs, text and JSON
        rows and mask_mods always give the allowed pairs (other conventions refused).
    torch_reader : reads ``.pt`` files and ``BlockMask`` objects (:data:`TorchReader`);
        without it they are refused, naming the extra to install.
    heads, batch : an array's declared heads (``heads`` splits a 3-D ``(B * H, Q, K)``
        array) and batch rows (:func:`theory.mask_arrays.per_head`).
    code : leave to run ``source`` when it is ``file.py:function``
        (:data:`theory.user_code.ARGUMENT`: the caller named it, on the command line or
        in Python); default None: refused unless ``trust_code`` (issue 20). Code named
        inside a file runs only with ``trust_code``.

    Returns
    -------
    NamedMask with ``matrix`` an (n, n) C-contiguous bool array.

    Raises
    ------
    InputError : a one-line reason that names the source (``TooLargeError``
        when the dense matrices would not fit).

    Examples
    --------
    >>> rule = lambda spec: [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> m = load_mask("causal:n=3", resolve_spec=rule)
    >>> m.matrix.astype(int).tolist(), m.names, m.spec
    ([[1, 0, 0], [1, 1, 0], [1, 1, 1]], ('0', '1', '2'), 'causal:n=3')
    """
    named, grid = load_mask_grid(source, n=n, fallback=fallback, resolve_spec=resolve_spec, queries=queries,
                                 kv_len=kv_len, trust_code=trust_code, convention=convention,
                                 torch_reader=torch_reader, heads=heads, batch=batch, code=code)
    return first_batch_row(named, grid)


def first_batch_row(named: NamedMask, grid) -> NamedMask:
    """``named`` (batch row 0's union over heads) with a spec that says so when ``grid`` has several batch rows."""
    if grid.batch_rows > 1:  # a command that takes one matrix: say which
        return dataclasses.replace(named, spec=f"{named.spec} [batch row 0 of {grid.batch_rows}]")
    return named


def load_mask_grid(
    source,
    *,
    n: int | None = None,
    fallback: MaskModFallback | None = None,
    resolve_spec: SpecResolver | None = None,
    queries: str | None = None,
    kv_len: int | None = None,
    trust_code: bool = False,
    convention: str = "auto",
    torch_reader: TorchReader | None = None,
    heads: int | None = None,
    batch: int | None = None,
    code: CodePermission | None = None,
) -> tuple[NamedMask, HeadMasks]:
    """``(NamedMask, HeadMasks)``: the mask of :func:`load_mask` and the masks per batch row and head.

    The parameters are :func:`load_mask`'s. The NamedMask holds batch row 0's union
    over heads (empty rows as given). A spec, text or JSON rows, or a mask_mod
    evaluated at ``b = h = 0`` is one mask for every head and batch row
    (:func:`theory.heads.single`; a mask_mod over declared ranges is
    :func:`theory.heads.mask_mod_grid`).

    >>> import numpy as np
    >>> bias = np.zeros((2, 3, 3), dtype=np.float32)  # (H, Q, K) additive: head 1 is causal
    >>> bias[1][np.triu_indices(3, 1)] = -np.inf
    >>> named, grid = load_mask_grid(bias)
    >>> grid.heads, bool(named.matrix.all()), named.spec
    (2, True, 'array (2, 3, 3)')
    """
    label = source if isinstance(source, str) else "array"
    reading = Reading(require_convention(convention, label), torch_reader, heads, batch)
    if queries is not None and queries not in QUERY_LAYOUTS:
        raise InputError(f"queries must be one of {', '.join(QUERY_LAYOUTS)}, got {queries!r}", str(source))
    if kv_len is not None:
        kv_len = check_n(kv_len, str(source), "kv_len")
    if isinstance(source, str) and source_kind(source) == "function":
        _only_arrays(reading, source)
        if n is not None:
            n = check_n(n, source)
        path, function = split_function(str(source))
        named = load_mask_mod(path, function, str(source), n, fallback, kv_len=kv_len, queries=queries,
                              permission=TRUSTED if trust_code else code)
        return named, single(named.matrix, named.key_only, named.key_only_kind)
    token = _TRUSTED.set((n,) if trust_code else None)
    reading_token = _READING.set(reading)
    try:
        mask = (_load(source, None, fallback, resolve_spec, frozenset()) if isinstance(source, str)
                else _from_object(source))
    finally:
        _TRUSTED.reset(token)
        _READING.reset(reading_token)
    label = source if isinstance(source, str) else mask.spec
    per = getattr(mask, "per_head", None)
    if per is None:  # one 0/1 mask: a spec, rows, a mask_mod named by a JSON file
        _only_arrays(reading, label)
        per = mask.matrix[None, None]
    else:  # an array: a plain NamedMask from here on
        mask = NamedMask(mask.matrix, mask.names, mask.spec, mask.key_only, mask.key_only_kind)
    named = _embedded(mask, label, n, queries, kv_len)
    grid = grid_of(per, queries=queries, source=label)
    return named, HeadMasks(grid.masks, grid.heads, grid.batch, key_only=named.key_only,
                            key_only_kind=named.key_only_kind)


def _only_arrays(reading: Reading, source: str) -> None:
    """Refuse a convention, heads or batch for a form that is one 0/1 mask (a spec, rows, a mask_mod)."""
    if reading.convention not in ("auto", "allowed"):
        raise InputError(f"the convention {reading.convention} applies to arrays (.npy, .pt, tensors); "
                         "specs, 0/1 rows and mask_mods always say which pairs are allowed", source)
    if reading.heads is not None or reading.batch is not None:
        raise InputError("heads and batch apply to a file.py:mask_mod or a 3-D/4-D array (a spec or 0/1 rows "
                         "are one mask for every head and batch row)", source)


def _from_object(obj) -> NamedMask:
    """The mask of an in-memory object: a NamedMask, a ``BlockMask``, a tensor or an array."""
    if isinstance(obj, NamedMask):
        return obj
    if is_block_mask(obj):
        return _array_mask(*_read_torch(obj, "BlockMask"))
    kind = "tensor" if is_tensor(obj) else "array"
    shape = getattr(obj, "shape", None)
    if shape is None:
        shape = np.shape(obj) if isinstance(obj, (list, tuple)) else ()
    return _array_mask(obj, kind if len(shape) <= 2 else f"{kind} {shape_text(shape)}")


def _array_mask(values, spec: str, convention: str | None = None) -> NamedMask:
    """An array of rank 2–4 read as this load's :class:`Reading` says: batch row 0's union and ``per_head``."""
    reading = _READING.get()
    per = per_head(values, convention or reading.convention, heads=reading.heads, batch=reading.batch,
                   source=spec)
    union = per[0].any(axis=0)
    return _ArrayMask(union, default_names(union.shape[0]), spec, per_head=per)


def _read_torch(obj, source: str) -> tuple:
    """``(values, spec, convention)`` of a ``.pt`` file or a ``BlockMask``, through the torch reader."""
    reading = _READING.get()
    if reading.torch_reader is None:
        what = "a .pt file" if isinstance(obj, str) else "a BlockMask"
        raise InputError(f"reading {what} {NEEDS_TORCH}", source)
    values, spec, block = reading.torch_reader(obj, source)
    if not block:
        return values, spec, None
    if reading.convention not in ("auto", "allowed"):
        raise InputError(f"a BlockMask says which pairs are allowed; the convention {reading.convention} "
                         "does not apply", source)
    return values, spec, "allowed"


def _embedded(mask: NamedMask, source: str, n, queries, kv_len) -> NamedMask:
    """``mask`` squared up with the layout ``queries`` (if not square already), ``n`` and ``kv_len`` checked."""
    rows, keys = mask.matrix.shape
    if n is not None:
        n = check_n(n, source)
        if rows != n:
            what = "n" if rows == keys else "n (the number of query rows)"
            raise InputError(f"n = {n} was given but the mask has {what} = {rows}", source)
    if kv_len is not None and keys != kv_len:
        raise InputError(f"kv_len = {kv_len} was given but the mask has {keys} key columns", source)
    if rows == keys and queries != "separate":
        return mask
    square, key_only, kind = square_up(mask.matrix, queries, source)
    return NamedMask(square, default_names(square.shape[0]), mask.spec, key_only, kind)


def _load(source, n, fallback, resolve_spec, seen) -> NamedMask:
    if n is not None:
        n = check_n(n, source)
    form = source_kind(source)
    if form == "function":  # named inside a JSON file: runs only with --trust-code
        path, function = split_function(source)
        return load_mask_mod(path, function, source, n, fallback,
                             permission=TRUSTED if _TRUSTED.get() is not None else None)
    if form == "file":
        mask = _load_file(source, n, fallback, resolve_spec, seen)
    else:
        mask = _from_spec(source, resolve_spec)
    if n is not None and mask.n != n:
        raise InputError(f"n = {n} was given but the mask has n = {mask.n}", source)
    return mask


def source_kind(source: str, folder: str = "") -> str:
    """Which form a MASK, TASK, FAMILY or design argument has: ``"function"``, ``"file"`` or ``"spec"``.

    - ``"function"``: ``file.py:function``, the part before the last ``:`` ends in
      ``.py`` (a mask_mod where a MASK is expected, a task maker for a design), or a
      factory call ``file.py:make(3, s="a:b")`` (split at the first ``.py:`` followed by
      a call: :func:`theory.mask_mod_call.split_function`);
    - ``"file"``: an existing file (relative to ``folder``, if given), or a name
      with no ``:`` but a suffix or a ``/`` (a file that is missing);
    - ``"spec"``: anything else, a built-in spec ``name:key=value,…``.

    >>> source_kind("masks.py:sliding"), source_kind("task.json"), source_kind("butterfly:n=4")
    ('function', 'file', 'spec')
    >>> source_kind("masks.py:make(3)"), source_kind('masks.py:make(window=3, s="a:b")')
    ('function', 'function')
    """
    if split_function(source) is not None:
        return "function"
    if os.path.isfile(os.path.join(folder, source)):
        return "file"
    if ":" not in source and (Path(source).suffix or "/" in source or os.sep in source):
        return "file"
    return "spec"


def _from_spec(spec: str, resolve_spec: SpecResolver | None) -> NamedMask:
    if resolve_spec is None:
        try:  # imported here, so that the file forms work without the catalogue
            from hasse.theory.catalog import build_mask as resolve_spec
        except ImportError as exc:
            message = f"built-in specs need theory.catalog, which cannot be imported ({exc})"
            raise InputError(message, spec) from None
    built = resolve_spec(spec)
    if isinstance(built, NamedMask):
        return built
    matrix = as_mask(built, source=spec)
    return NamedMask(matrix, default_names(matrix.shape[0]), spec)


# --- files ---------------------------------------------------------------------------


def _load_file(path: str, n, fallback, resolve_spec, seen) -> NamedMask:
    if not os.path.exists(path):
        raise InputError("no such file", path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a mask file", path)
    require_regular_file(path)  # a FIFO or a device would block or never end
    suffix = Path(path).suffix.lower()
    if suffix not in FILE_SUFFIXES:
        kinds = ", ".join(FILE_SUFFIXES)
        raise InputError(f"unknown mask file type '{suffix}' (expected {kinds} or file.py:function)", path)
    if os.path.getsize(path) == 0:
        raise InputError("empty file", path)
    if suffix == ".npy":
        return _array_mask(read_npy(path), path)
    if suffix in ARRAY_SUFFIXES:  # .pt, .pth: torch.load, in gpu_check.torch_masks
        return _array_mask(*_read_torch(path, path))
    if suffix == ".json":
        return _read_json(path, n, fallback, resolve_spec, seen)
    matrix = text_to_mask(read_text(path), source=path)
    return NamedMask(matrix, default_names(matrix.shape[0]), path)


# --- JSON ----------------------------------------------------------------------------


def _read_json(path: str, n, fallback, resolve_spec, seen) -> NamedMask:
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object with a 'mask' field, got {json_kind(data)}", path)
    if "mask" not in data:
        hint = " (a task family: give one of its tasks)" if "tasks" in data else ""
        raise InputError(f"no 'mask' field{hint}", path)
    value = data["mask"]
    if isinstance(value, list):
        matrix = rows_to_mask(value, source=path)
        mask = NamedMask(matrix, default_names(matrix.shape[0]), path)
    elif isinstance(value, str):
        mask = _json_reference(path, value, n, fallback, resolve_spec, seen)
    else:
        kind = json_kind(value)
        raise InputError(f"'mask' must be a list of 0/1 rows, a spec or a file path, got {kind}", path)
    names = data.get("names")
    if names is not None and (not isinstance(names, list) or
                              not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in names)):
        raise InputError("'names' must be a list of strings, one per position", path)  # wrong length: ignored
    if isinstance(names, list) and len(names) == mask.n:
        mask = dataclasses.replace(mask, names=tuple(str(x) for x in names))  # keeps an array's heads
    return mask


def refuse_code_in_json(value: str, path: str) -> None:
    """:class:`InputError` when a JSON ``mask`` string names Python code (``file.py:function``).

    Only the command line may name a mask_mod to run: a JSON file is data, and reading
    it must never execute code (issue 10).

    With ``--trust-code`` (``trust_code=True``) a ``file.py:function`` is run instead:
    :func:`load_mask` and :func:`theory.task_io.load_task` skip this check.

    >>> refuse_code_in_json("causal:n=4", "t.json")
    >>> refuse_code_in_json("masks.py:causal", "t.json")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: t.json: 'mask' names Python code (masks.py:causal); pass --trust-code to run it (without it, reading a JSON file never runs code)
    """
    if source_kind(value) == "function" or value.strip().lower().endswith(".py"):
        raise InputError(f"'mask' names Python code ({value}); pass --trust-code to run it (without it, reading a "
                         "JSON file never runs code)", path)


def _json_reference(path: str, value: str, n, fallback, resolve_spec, seen) -> NamedMask:
    """The mask that a JSON ``mask`` string names: a path beside the JSON file, or a spec."""
    here = os.path.realpath(path)
    if here in seen:
        raise InputError("its 'mask' refers back to itself", path)
    folder = os.path.dirname(path)
    trusted = _TRUSTED.get()
    if trusted is None:
        refuse_code_in_json(value, path)
    elif split_function(value) is not None:  # --trust-code: the mask_mod beside the JSON file, at the n given
        n = trusted[0]
    try:
        if source_kind(value, folder) == "spec":
            return _from_spec(value, resolve_spec)
        return _load(os.path.join(folder, value), n, fallback, resolve_spec, seen | {here})
    except InputError as err:  # name the JSON file too; keep TooLargeError's type
        if str(err).startswith(f"{path}:"):
            raise
        raise type(err)(f"'mask': {err}", path) from None

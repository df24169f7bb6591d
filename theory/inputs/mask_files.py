"""A MASK written as text: a built-in spec, a mask file, a JSON ``mask`` field (design §7).

:func:`load_text` reads every text form but ``file.py:function`` named on the command
line (:func:`theory.inputs.masks.read_grid` evaluates that one):

- a ``.npy`` file, or a ``.pt`` / ``.pth`` file (read by the torch hook,
  :mod:`theory.inputs.hooks`), holding an array of rank 2–4 in a value convention, or
  a saved FlexAttention ``BlockMask`` (:mod:`theory.inputs.arrays`);
- a ``.txt`` / ``.csv`` file: one row of 0/1 (or true/false) per line, entries
  separated by spaces and/or commas; blank lines and lines starting with ``#``
  are skipped (:mod:`theory.inputs.formats`);
- a ``.json`` file with a ``mask`` field (a task file works too, §8): a list of
  0/1 rows, or a string that is a built-in spec or a path relative to the JSON
  file's folder; an optional ``names`` list of the right length names positions;
  a ``file.py:function`` there runs only with ``trust_code``;
- anything else: a built-in spec ``name:key=value,...`` (theory.catalog).

How the arrays met are read (their convention, heads and batch rows) and whether code
named in a JSON file may run is set for one read by :func:`reading_arrays`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.inputs import hooks
from hasse.theory.inputs.arrays import per_head
from hasse.theory.inputs.calls import split_function
from hasse.theory.inputs.formats import read_npy, rows_to_mask, text_to_mask
from hasse.theory.inputs.forms import form_of
from hasse.theory.inputs.json_file import json_kind, read_json, read_text, require_regular_file
from hasse.theory.inputs.mask_mod import check_n, load_mask_mod
from hasse.theory.mask import NamedMask, as_mask, default_names
from hasse.theory.user_code import TRUSTED

SpecResolver = Callable[[str], object]

ARRAY_SUFFIXES = (".npy", ".pt", ".pth")
FILE_SUFFIXES = (".npy", ".pt", ".pth", ".txt", ".csv", ".json")
NEEDS_TORCH = "needs torch (install the torch extra)"


@dataclass(frozen=True)
class ArrayReading:
    """How the arrays of one read are read: the value ``convention``, declared ``heads``/``batch``;
    ``trusted``: ``(n,)`` when code named in a JSON file may run (at that ``n``), else None."""

    convention: str = "auto"
    heads: int | None = None
    batch: int | None = None
    trusted: tuple | None = None


# While a source is read: how the arrays it meets are read (a .npy named by a JSON file too).
# A context variable, so that the file readers keep their signatures.
_READING: ContextVar[ArrayReading] = ContextVar("hasse_array_reading", default=ArrayReading())


@contextlib.contextmanager
def reading_arrays(reading: ArrayReading):
    """The arrays read inside the block are read as ``reading`` says."""
    token = _READING.set(reading)
    try:
        yield
    finally:
        _READING.reset(token)


@dataclass(frozen=True)
class ArrayMask(NamedMask):
    """A mask read from an array: ``matrix`` is batch row 0's union over heads; ``per_head`` is ``(B, H, Q, K)``."""

    per_head: np.ndarray | None = None


def array_mask(values, spec: str, convention: str | None = None) -> NamedMask:
    """An array of rank 2–4 read as this read's :class:`ArrayReading` says: batch row 0's union and ``per_head``."""
    reading = _READING.get()
    per = per_head(values, convention or reading.convention, heads=reading.heads, batch=reading.batch,
                   source=spec)
    union = per[0].any(axis=0)
    return ArrayMask(union, default_names(union.shape[0]), spec, per_head=per)


def read_torch(obj, source: str) -> tuple:
    """``(values, spec, convention)`` of a ``.pt`` file or a ``BlockMask``, through the torch hook."""
    reading = _READING.get()
    reader = hooks.torch_reader()
    if reader is None:
        what = "a .pt file" if isinstance(obj, str) else "a BlockMask"
        raise InputError(f"reading {what} {NEEDS_TORCH}", source)
    values, spec, block = reader(obj, source)
    if not block:
        return values, spec, None
    if reading.convention not in ("auto", "allowed"):
        raise InputError(f"a BlockMask says which pairs are allowed; the convention {reading.convention} "
                         "does not apply", source)
    return values, spec, "allowed"


def load_text(source: str, n, resolve_spec: SpecResolver | None, seen: frozenset = frozenset()) -> NamedMask:
    """The mask a text names: a spec, a file, or (named inside a JSON file) ``file.py:function``."""
    if n is not None:
        n = check_n(n, source)
    form = form_of(source)
    if form == "function":  # named inside a JSON file: runs only with --trust-code
        path, function = split_function(source)
        return load_mask_mod(path, function, source, n, hooks.fallback(),
                             permission=TRUSTED if _READING.get().trusted is not None else None)
    if form == "file":
        mask = _load_file(source, n, resolve_spec, seen)
    else:
        mask = from_spec(source, resolve_spec)
    if n is not None and mask.n != n:
        raise InputError(f"n = {n} was given but the mask has n = {mask.n}", source)
    return mask


def from_spec(spec: str, resolve_spec: SpecResolver | None = None) -> NamedMask:
    """The mask of a built-in spec (``resolve_spec``: default ``theory.catalog.build_mask``)."""
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


def _load_file(path: str, n, resolve_spec, seen) -> NamedMask:
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
        return array_mask(read_npy(path), path)
    if suffix in ARRAY_SUFFIXES:  # .pt, .pth: torch.load, in gpu_check.torch_masks
        return array_mask(*read_torch(path, path))
    if suffix == ".json":
        return _read_json(path, n, resolve_spec, seen)
    matrix = text_to_mask(read_text(path), source=path)
    return NamedMask(matrix, default_names(matrix.shape[0]), path)


def _read_json(path: str, n, resolve_spec, seen) -> NamedMask:
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
        mask = _json_reference(path, value, n, resolve_spec, seen)
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
    it must never execute code. With ``--trust-code`` (``trust_code=True``) a
    ``file.py:function`` is run instead, and the readers skip this check.

    >>> refuse_code_in_json("causal:n=4", "t.json")
    >>> refuse_code_in_json("masks.py:causal", "t.json")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: t.json: 'mask' names Python code (masks.py:causal); pass --trust-code to run it (without it, reading a JSON file never runs code)
    """
    if form_of(value) == "function" or value.strip().lower().endswith(".py"):
        raise InputError(f"'mask' names Python code ({value}); pass --trust-code to run it (without it, reading a "
                         "JSON file never runs code)", path)


def _json_reference(path: str, value: str, n, resolve_spec, seen) -> NamedMask:
    """The mask that a JSON ``mask`` string names: a path beside the JSON file, or a spec."""
    here = os.path.realpath(path)
    if here in seen:
        raise InputError("its 'mask' refers back to itself", path)
    folder = os.path.dirname(path)
    trusted = _READING.get().trusted
    if trusted is None:
        refuse_code_in_json(value, path)
    elif split_function(value) is not None:  # --trust-code: the mask_mod beside the JSON file, at the n given
        n = trusted[0]
    try:
        if form_of(value, folder) == "spec":
            return from_spec(value, resolve_spec)
        return load_text(os.path.join(folder, value), n, resolve_spec, seen | {here})
    except InputError as err:  # name the JSON file too; keep TooLargeError's type
        if str(err).startswith(f"{path}:"):
            raise
        raise err.within("'mask': ", path) from None

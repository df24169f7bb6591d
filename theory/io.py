"""Reading masks: ``load_mask`` turns a MASK argument into a :class:`NamedMask`.

A MASK (design §7) is one of

- a ``.npy`` file holding a 2-D boolean or 0/1 array;
- a ``.txt`` / ``.csv`` file: one row of 0/1 (or true/false) per line, entries
  separated by spaces and/or commas; blank lines and lines starting with ``#``
  are skipped;
- a ``.json`` file with a ``mask`` field (a task file works too, §8): a list of
  0/1 rows, or a string that is a built-in spec or a path relative to the JSON
  file's folder; an optional ``names`` list of the right length names positions;
- ``file.py:function``: a FlexAttention-style ``mask_mod(b, h, q_idx, kv_idx)``
  evaluated on the ``n x n`` index grid (``n`` must be given; :mod:`theory.mask_mod`);
- anything else: a built-in spec ``name:key=value,...`` (theory.catalog).

Every problem raises :class:`InputError` with one line naming the source.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Callable

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask, as_mask, default_names
from hasse.theory.mask_mod import (  # the file.py:function form; the public names are importable from here too
    BYTES_PER_ENTRY,
    MaskModFallback,
    broadcast_mask,
    check_mask_fits,
    check_n,
    load_mask_mod,
    mask_mod_to_mask,
)

SpecResolver = Callable[[str], object]

FILE_SUFFIXES = (".npy", ".txt", ".csv", ".json")
_TRUE = {"1", "true"}
_FALSE = {"0", "false"}


def load_mask(
    source: str,
    *,
    n: int | None = None,
    fallback: MaskModFallback | None = None,
    resolve_spec: SpecResolver | None = None,
) -> NamedMask:
    """Return the mask that ``source`` names (a file, ``file.py:function`` or a spec).

    ``source`` is read as ``file.py:function`` when the part before its last
    ``:`` ends in ``.py``; as a file when it is an existing file or has no
    ``:`` but a suffix or a ``/``; otherwise as a built-in spec.

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
    return _load(str(source), n, fallback, resolve_spec, frozenset())


def _load(source, n, fallback, resolve_spec, seen) -> NamedMask:
    if n is not None:
        n = check_n(n, source)
    form = _form(source)
    if form == "mask_mod":
        path, _, function = source.rpartition(":")
        return load_mask_mod(path, function, source, n, fallback)
    if form == "file":
        mask = _load_file(source, n, fallback, resolve_spec, seen)
    else:
        mask = _from_spec(source, resolve_spec)
    if n is not None and mask.n != n:
        raise InputError(f"n = {n} was given but the mask has n = {mask.n}", source)
    return mask


def _form(source: str, folder: str = "") -> str:
    """Which form ``source`` has: ``"mask_mod"``, ``"file"`` or ``"spec"`` (see load_mask)."""
    head, sep, _ = source.rpartition(":")
    if sep and head.lower().endswith(".py"):
        return "mask_mod"
    if os.path.isfile(os.path.join(folder, source)):
        return "file"
    if ":" not in source and (Path(source).suffix or "/" in source or os.sep in source):
        return "file"
    return "spec"


def _from_spec(spec: str, resolve_spec: SpecResolver | None) -> NamedMask:
    if resolve_spec is None:
        try:
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
    suffix = Path(path).suffix.lower()
    if suffix not in FILE_SUFFIXES:
        kinds = ", ".join(FILE_SUFFIXES)
        raise InputError(f"unknown mask file type '{suffix}' (expected {kinds} or file.py:function)", path)
    if os.path.getsize(path) == 0:
        raise InputError("empty file", path)
    if suffix == ".npy":
        matrix = _read_npy(path)
        return NamedMask(matrix, default_names(matrix.shape[0]), path)
    text = _read_text(path)
    if suffix == ".json":
        return _read_json(path, text, n, fallback, resolve_spec, seen)
    matrix = text_to_mask(text, source=path)
    return NamedMask(matrix, default_names(matrix.shape[0]), path)


def _read_text(path: str) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", path) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", path) from None
    if not text.strip():
        raise InputError("empty file", path)
    return text


def _read_npy(path: str) -> np.ndarray:
    try:
        shape = _npy_shape(path)  # read the header first, so that a huge array is refused unread
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path) from None
    if len(shape) != 2:  # refused before loading: the data may be large
        raise InputError(f"a mask must be 2-D, got {len(shape)}-D with shape {shape}", path)
    check_mask_fits(max(shape), path)
    try:
        arr = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise InputError("holds Python objects (a pickled array); save a bool or 0/1 array", path) from None
        raise InputError(f"not a valid .npy file ({exc})", path) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"not a valid .npy file ({exc})", path) from None
    return as_mask(arr, source=path)


def _npy_shape(path: str) -> tuple[int, ...]:
    fmt = np.lib.format
    with open(path, "rb") as f:
        start = f.read(len(fmt.MAGIC_PREFIX))
        if start.startswith(b"PK"):
            raise InputError("holds an archive of arrays (.npz), not one array", path)
        if start != fmt.MAGIC_PREFIX:
            raise InputError("not a valid .npy file (no NumPy header; text masks go in .txt or .csv)", path)
        f.seek(0)
        try:
            version = fmt.read_magic(f)
            return (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(f)[0]
        except (ValueError, EOFError) as exc:
            raise InputError(f"not a valid .npy file ({exc})", path) from None


def text_to_mask(text: str, source: str = "mask") -> np.ndarray:
    """Return the mask written in ``text``: one row per line of 0/1 or true/false.

    Entries are separated by spaces and/or commas; blank lines and lines whose
    first non-blank character is ``#`` are skipped. Numbers equal to 0 or 1 in
    any spelling (``1.0``, ``1e0``) are accepted, so ``np.savetxt`` output reads.

    >>> text_to_mask("# causal\\n1 0\\ntrue, true\\n").astype(int).tolist()
    [[1, 0], [1, 1]]
    >>> text_to_mask("1 0\\n1 x")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: mask: values must be 0/1 or true/false, found 'x' on line 2 at [1, 1]
    """
    rows: list = []  # one bool sequence per mask row
    first_line = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        tokens = stripped.replace(",", " ").split()
        if not tokens:
            raise InputError(f"line {lineno} holds separators but no values", source)
        q = len(rows)
        digits = "".join(tokens)
        if len(digits) == len(tokens) and not digits.strip("01"):  # fast path: single 0/1 characters
            row = np.frombuffer(digits.encode(), dtype=np.uint8) == ord("1")
        else:
            row = [_token_value(tok, source, f"on line {lineno} at [{q}, {k}]") for k, tok in enumerate(tokens)]
        if rows and len(row) != len(rows[0]):
            raise InputError(
                f"ragged rows: line {lineno} has {len(row)} entries, line {first_line} has {len(rows[0])}", source
            )
        if not rows:
            first_line = lineno
        rows.append(row)
    if not rows:
        raise InputError("empty file: no mask rows, only blank lines and comments", source)
    return as_mask(np.array(rows, dtype=bool), source=source)


def _token_value(token: str, source: str, where: str) -> bool:
    low = token.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    try:
        value = float(token)
    except ValueError:
        value = None
    if value is not None and math.isnan(value):
        raise InputError(f"NaN {where}", source)
    if value in (0.0, 1.0):
        return value == 1.0
    raise InputError(f"values must be 0/1 or true/false, found '{token}' {where}", source)


# --- JSON ----------------------------------------------------------------------------


def _read_json(path: str, text: str, n, fallback, resolve_spec, seen) -> NamedMask:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", path) from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object with a 'mask' field, got {_json_kind(data)}", path)
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
        kind = _json_kind(value)
        raise InputError(f"'mask' must be a list of 0/1 rows, a spec or a file path, got {kind}", path)
    names = data.get("names")
    if isinstance(names, list) and len(names) == mask.n:
        mask = NamedMask(mask.matrix, tuple(str(x) for x in names), mask.spec)
    return mask


def _json_reference(path: str, value: str, n, fallback, resolve_spec, seen) -> NamedMask:
    """The mask that a JSON ``mask`` string names: a path beside the JSON file, or a spec."""
    here = os.path.realpath(path)
    if here in seen:
        raise InputError("its 'mask' refers back to itself", path)
    folder = os.path.dirname(path)
    try:
        if _form(value, folder) == "spec":
            return _from_spec(value, resolve_spec)
        return _load(os.path.join(folder, value), n, fallback, resolve_spec, seen | {here})
    except InputError as err:  # name the JSON file too; keep TooLargeError's type
        if str(err).startswith(f"{path}:"):
            raise
        raise type(err)(f"'mask': {err}", path) from None


def rows_to_mask(rows: list, source: str = "mask") -> np.ndarray:
    """Return the mask given as a list of rows of 0/1 or booleans (a JSON ``mask``).

    >>> rows_to_mask([[True, False], [1, 1]]).astype(int).tolist()
    [[1, 0], [1, 1]]
    >>> rows_to_mask([[1, 0], [1]])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: mask: ragged rows: row 1 has 1 entries, row 0 has 2
    """
    if not rows:
        raise InputError("'mask' is an empty list (n = 0)", source)
    for q, row in enumerate(rows):
        if not isinstance(row, list):
            raise InputError(f"row {q} of 'mask' is {_json_kind(row)}, not a list", source)
        if len(row) != len(rows[0]):
            raise InputError(f"ragged rows: row {q} has {len(row)} entries, row 0 has {len(rows[0])}", source)
    try:
        arr = np.array(rows)
    except ValueError:  # entries that are themselves ragged lists
        arr = np.array(rows, dtype=object)
    if arr.dtype == bool or np.issubdtype(arr.dtype, np.number):
        return as_mask(arr, source=source)
    for q, row in enumerate(rows):  # slow path, only to say which value is wrong
        for k, v in enumerate(row):
            if not (isinstance(v, (bool, int, float)) and (v in (0, 1) or v != v)):
                raise InputError(f"values must be 0/1 or true/false, found {json.dumps(v)} at [{q}, {k}]", source)
    return as_mask(arr.astype(float), source=source)


def _json_kind(value) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")

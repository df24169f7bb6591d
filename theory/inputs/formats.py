"""The mask file formats: a ``.npy`` array, text rows of 0/1, and JSON rows.

The text and JSON readers turn their format into a bool array (:func:`theory.mask.as_mask`);
:func:`read_npy` returns the stored array (rank 2–4, any value convention) for
:mod:`theory.inputs.arrays`. Each raises an :class:`~theory.errors.InputError` that
names the source and the place of the first bad value. Which format a MASK argument
is in, and reading it, is :mod:`theory.inputs.mask_files`.
"""

from __future__ import annotations

import json
import math

import numpy as np

from hasse.theory.errors import InputError, TooLargeError
from hasse.theory.inputs.json_file import json_kind
from hasse.theory.mask import as_mask
from hasse.theory.inputs.arrays import check_rank
from hasse.theory.limits import MAX_POSITIONS, check_positions, too_large_why

_TRUE = {"1", "true"}
_FALSE = {"0", "false"}


def read_npy(path: str) -> np.ndarray:
    """The array held by a ``.npy`` file, as stored (rank 2–4, any value convention), refused unread when too large.

    The header is read first, so that an array of the wrong rank or one whose dense
    matrices would not fit is refused before its data is loaded; pickled arrays and
    ``.npz`` archives are refused. The values are read by :mod:`theory.inputs.arrays`
    (conventions, heads, batch rows); a ``(Q, K)`` slice is squared up by ``theory.inputs.masks``.
    """
    try:
        shape = _npy_shape(path)  # read the header first, so that a huge array is refused unread
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path) from None
    check_rank(shape, path)  # refused before loading (the one size limit on positions): the data may be large
    try:
        arr = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise InputError("holds Python objects (a pickled array); save a bool or 0/1 array", path) from None
        raise InputError(f"not a valid .npy file ({exc})", path) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"not a valid .npy file ({exc})", path) from None
    return arr  # read by theory.inputs.arrays (rank, convention); a (Q, K) slice is squared up by inputs.masks


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
        tokens = stripped.replace(",", " ").split(None, MAX_POSITIONS)  # at most one more than fits
        if len(tokens) > MAX_POSITIONS:
            raise TooLargeError(f"line {lineno} holds more than {MAX_POSITIONS:,} values: a mask of more than "
                                f"{MAX_POSITIONS:,} positions does not fit ({too_large_why()})", source)
        if not tokens:
            raise InputError(f"line {lineno} holds separators but no values", source)
        q = len(rows)
        if q >= MAX_POSITIONS:  # the one size limit, before the row is kept
            check_positions(q + 1, source)
        digits = "".join(tokens)
        if len(digits) == len(tokens) and not digits.strip("01"):  # fast path: single 0/1 characters
            row = np.frombuffer(digits.encode(), dtype=np.uint8) == ord("1")
        else:
            row = np.array([_token_value(tok, source, f"on line {lineno} at [{q}, {k}]")
                            for k, tok in enumerate(tokens)], dtype=bool)
        if rows and len(row) != len(rows[0]):
            raise InputError(
                f"ragged rows: line {lineno} has {len(row)} entries, line {first_line} has {len(rows[0])}", source
            )
        if not rows:
            first_line = lineno
        rows.append(row)
    if not rows:
        raise InputError("empty file: no mask rows, only blank lines and comments", source)
    return as_mask(np.array(rows, dtype=bool), source=source, square=False)  # (Q, K), squared up by inputs.masks


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
    check_positions(max(len(rows), len(rows[0]) if isinstance(rows[0], list) else 0), source)  # before any array
    for q, row in enumerate(rows):
        if not isinstance(row, list):
            raise InputError(f"row {q} of 'mask' is {json_kind(row)}, not a list", source)
        if len(row) != len(rows[0]):
            raise InputError(f"ragged rows: row {q} has {len(row)} entries, row 0 has {len(rows[0])}", source)
    try:
        arr = np.array(rows)
    except ValueError:  # entries that are themselves ragged lists
        arr = np.array(rows, dtype=object)
    if arr.dtype == bool or np.issubdtype(arr.dtype, np.number):
        return as_mask(arr, source=source, square=False)  # (Q, K), squared up by inputs.masks
    for q, row in enumerate(rows):  # slow path, only to say which value is wrong
        for k, v in enumerate(row):
            if not (isinstance(v, (bool, int, float)) and (v in (0, 1) or v != v)):
                raise InputError(f"values must be 0/1 or true/false, found {json.dumps(v)} at [{q}, {k}]", source)
    return as_mask(arr.astype(float), source=source, square=False)

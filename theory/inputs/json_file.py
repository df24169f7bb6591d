"""Reading text and JSON files: ``read_text`` and ``read_json``, the kit's one JSON reader.

Tasks, task families, mask files and certificates are JSON (design.md §8). They
are all read by :func:`read_json`, so that every malformed file is reported the
same way: an :class:`~theory.errors.InputError` naming the file, with the line
and column of the first error.

Limits: only regular files are read (a FIFO, a device or a socket is
refused before it is opened, so reading never blocks); a file above
:data:`MAX_BYTES` is refused; JSON nested deeper than :data:`MAX_DEPTH`, an integer
beyond 64 bits (or beyond Python's digit limit) are malformed values, reported in
one line. (``NaN`` and ``Infinity`` are read; the readers of masks and tasks refuse
them where they stand, naming the entry.)
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from hasse.theory.atomic_file import note_read
from hasse.theory.errors import InputError

MAX_DEPTH = 64  # nesting of JSON arrays and objects (a task or certificate needs fewer than 10)
MAX_INT = 2 ** 63  # integers must lie strictly between -MAX_INT and MAX_INT
MAX_BYTES = 1 << 30  # 1 GiB


def require_regular_file(path: str) -> None:
    """:class:`InputError` unless ``path`` is an existing regular file (FIFOs, devices, sockets, folders are refused).

    Checked with ``os.stat`` before the file is opened, so a FIFO never blocks.

    >>> require_regular_file("/dev/null")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: /dev/null: not a regular file (a character device); give a file
    """
    note_read(path)  # an output of the running command must not be read (theory.atomic_file)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read ({getattr(exc, 'strerror', None) or exc})", path) from None
    if stat.S_ISDIR(mode):
        raise InputError("is a folder, not a file", path)
    if not stat.S_ISREG(mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "special")
        raise InputError(f"not a regular file ({kind}); give a file", path)


def read_text(path: str) -> str:
    """The UTF-8 text of the file at ``path``; :class:`InputError` if missing, not a regular file, unreadable,
    too large, not UTF-8 or empty."""
    require_regular_file(path)
    try:
        if os.path.getsize(path) > MAX_BYTES:
            raise InputError(f"larger than {MAX_BYTES >> 20} MiB", path)
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", path) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path) from None
    if not text.strip():
        raise InputError("empty file", path)
    return text


def read_json(path: str):
    """The value held by the JSON file at ``path``.

    Raises
    ------
    InputError
        The file does not exist, cannot be read, is not UTF-8, is empty, or is
        malformed (the message gives the line and column).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> _ = open(path, "w").write('{"tokens": 2,\\n "inputs": [}')
    >>> read_json(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: ...t.json: malformed JSON at line 2 column 13: Expecting value
    """
    text = read_text(path)
    return parse_json(text, path)


def parse_json(text: str, source: str):
    """The value of the JSON ``text`` read from ``source``; :class:`InputError` on malformed JSON or values.

    >>> parse_json('{"a": [1, 2.5, null]}', "x")
    {'a': [1, 2.5, None]}
    >>> parse_json('[' * 100 + ']' * 100, "x")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: x: malformed JSON: nested deeper than 64 levels
    >>> parse_json('{"n": 1' + '0' * 30 + '}', "x")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: x: malformed JSON: an integer of 31 digits (the limit is 64 bits)
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", source) from None
    except RecursionError:
        raise InputError(f"malformed JSON: nested deeper than {MAX_DEPTH} levels", source) from None
    except ValueError as exc:  # an integer beyond Python's digit limit
        raise InputError(f"malformed JSON: an integer too long to read ({str(exc).split(':')[0]})", source) from None
    _check_values(value, source)
    return value


def _check_values(value, source: str) -> None:
    """Walk ``value`` without recursion: nesting at most :data:`MAX_DEPTH`, integers within 64 bits."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (list, dict)):
            if depth > MAX_DEPTH:
                raise InputError(f"malformed JSON: nested deeper than {MAX_DEPTH} levels", source)
            todo.extend((x, depth + 1) for x in (item.values() if isinstance(item, dict) else item))
        elif isinstance(item, int) and not isinstance(item, bool) and not -MAX_INT < item < MAX_INT:
            raise InputError(f"malformed JSON: an integer of {len(str(abs(item)))} digits (the limit is 64 bits)",
                             source)


def json_kind(value) -> str:
    """What a JSON value is, for messages: ``"an object"``, ``"a list"``, ``"a string"``, …

    >>> json_kind({}), json_kind([1]), json_kind(None), json_kind(2.5)
    ('an object', 'a list', 'null', 'a number')
    """
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")

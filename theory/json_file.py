"""Reading text and JSON files: ``read_text`` and ``read_json``, the kit's one JSON reader.

Tasks, task families, mask files and certificates are JSON (design.md §8). They
are all read by :func:`read_json`, so that every malformed file is reported the
same way: an :class:`~theory.errors.InputError` naming the file, with the line
and column of the first error.
"""

from __future__ import annotations

import json
from pathlib import Path

from hasse.theory.errors import InputError


def read_text(path: str) -> str:
    """The UTF-8 text of the file at ``path``; :class:`InputError` if missing, unreadable, not UTF-8 or empty."""
    try:
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
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", path) from None


def json_kind(value) -> str:
    """What a JSON value is, for messages: ``"an object"``, ``"a list"``, ``"a string"``, …

    >>> json_kind({}), json_kind([1]), json_kind(None), json_kind(2.5)
    ('an object', 'a list', 'null', 'a number')
    """
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")

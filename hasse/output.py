"""Small helpers shared by the commands: JSON printing, warnings, and writing output files safely.

Outputs (``--out``, ``--png``, ``--dot``, ``--certificate``) are written atomically:
:func:`atomic_output` hands out a temporary file beside the target and renames it
over the target only when it is complete, so a crash or a full disk never leaves
half a file. :func:`refuse_outputs_onto_inputs` (called by :func:`hasse.cli.main`
before any command runs) refuses an output that is one of the command's input files,
or that exists and is not a regular file (a FIFO, a device, a folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile

import numpy as np


def to_jsonable(value):
    """Turn numpy arrays, tuples and numpy scalars into plain JSON values."""
    if isinstance(value, np.ndarray):
        return value.astype(int).tolist() if value.dtype == bool else value.tolist()
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def print_json(obj) -> None:
    """Print one JSON object on stdout (compact rows of 0/1 stay readable)."""
    json.dump(to_jsonable(obj), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


def warn(message: str) -> None:
    print(f"hasse: warning: {message}", file=sys.stderr)


OUTPUT_OPTIONS = {"out": "--out", "png": "--png", "dot": "--dot", "certificate": "--certificate"}


@contextlib.contextmanager
def atomic_output(path: str):
    """Yield a temporary path beside ``path``; on success rename it over ``path`` (``os.replace``), else remove it.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_output(target) as tmp:
    ...     _ = open(tmp, "w").write("done")
    >>> open(target).read(), [f for f in os.listdir(os.path.dirname(target)) if f != "out.txt"]
    ('done', [])
    """
    from hasse.theory.errors import InputError

    folder = os.path.dirname(os.path.abspath(path))
    suffix = os.path.splitext(path)[1]
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=f".tmp{suffix}")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path) from None
    os.close(fd)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a plain open() would create it
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; :class:`InputError` (one line) when it cannot be written."""
    with atomic_output(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)


def _input_paths(args) -> list[str]:
    """The existing files named by a command's arguments (a ``file.py:function`` names ``file.py``)."""
    out = []
    for key, value in vars(args).items():
        if key in OUTPUT_OPTIONS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str) or not item or item == "-":
                continue
            head, sep, _ = item.rpartition(":")
            for candidate in (item, head if sep else None):
                if candidate and os.path.exists(candidate):
                    out.append(candidate)
    return out


def refuse_outputs_onto_inputs(args) -> None:
    """:class:`InputError` when an output option names an input file of the command, or a non-regular file."""
    from hasse.theory.errors import InputError

    inputs = _input_paths(args)
    for key, flag in OUTPUT_OPTIONS.items():
        path = getattr(args, key, None)
        if not isinstance(path, str) or not path or path == "-":
            continue
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise InputError(f"{flag}: cannot write: {exc.strerror}", path) from None
        if not stat.S_ISREG(mode):
            raise InputError(f"{flag}: not a regular file; give a file to write", path)
        for given in inputs:
            try:
                same = os.path.samefile(path, given)
            except OSError:
                same = False
            if same:
                raise InputError(f"{flag} would overwrite the input {given}", path)

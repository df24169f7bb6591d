"""Writing a file so that a reader never sees half of it: the one atomic writer.

:func:`atomic_output` hands out a temporary file beside the target and renames it over
the target (``os.replace``) once it is complete; on any failure the temporary file is
removed and the target is untouched. Used by the CLI's outputs (``--out``, ``--png``,
``--dot``: :mod:`hasse.views.output`) and by certificates (:mod:`hasse.proofs.certificates.format`).
Problems are an :class:`~hasse.theory.errors.InputError` of one line naming the path.

Outputs never overwrite inputs, named or not (design §10): while a command runs
inside :func:`guard_outputs` (the CLI's ``main``), every file a loader opens is
registered by :func:`note_read` (:func:`theory.inputs.json_file.require_regular_file`, which
every mask, task, stack, certificate and configuration reader calls before opening,
and the import of a ``file.py:mask_mod``). A read of one of the command's outputs is
refused at once, before the work that would follow (a ``{"mask": "m.npy"}`` file read
with ``--out m.npy``, a stack layer ``m.npy``), and :func:`atomic_output` refuses to
replace any file read so far.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

from hasse.theory.errors import InputError


_GUARD: list[dict] = []  # the running command's outputs and reads (a stack: main() may be called inside main())


def same_file(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name one file (links and relative paths resolved; a missing file by its real path)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return False


def write_problem(path: str) -> str | None:
    """Why ``path`` cannot be written over: None when nothing is there or a regular file is, else
    ``"not a regular file"`` (a folder, a FIFO, a device) or the system's reason (``"Permission denied"``).

    >>> write_problem("/"), write_problem("/no/such/file")
    ('not a regular file', None)
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror
    return None if stat.S_ISREG(mode) else "not a regular file"


@contextlib.contextmanager
def guard_outputs(outputs: dict):
    """While the block runs: ``outputs`` (flag -> path) must not be read, and no file read may be replaced.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "m.txt")
    >>> _ = open(target, "w").write("1")
    >>> with guard_outputs({"--out": target}):
    ...     note_read(target)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: ...m.txt: --out would overwrite a file this command reads
    """
    _GUARD.append({"outputs": {flag: path for flag, path in outputs.items() if path and path != "-"}, "reads": []})
    try:
        yield
    finally:
        _GUARD.pop()


def note_read(path) -> None:
    """Register ``path`` as read by the running command; :class:`InputError` if it is one of the command's outputs."""
    if not _GUARD or not isinstance(path, (str, os.PathLike)):
        return
    path = os.fspath(path)
    if not os.path.exists(path):  # not read: the reader says "no such file"
        return
    for flag, out in _GUARD[-1]["outputs"].items():
        if same_file(path, out):
            raise InputError(f"{flag} would overwrite a file this command reads", out)
    _GUARD[-1]["reads"].append(path)


def refuse_read_target(path: str) -> None:
    """:class:`InputError` if the running command has read the file at ``path`` (an output must not replace it)."""
    if _GUARD and any(same_file(path, read) for read in _GUARD[-1]["reads"]):
        raise InputError("the output would overwrite a file this command read", path)


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
    refuse_read_target(path)
    folder = os.path.dirname(os.path.abspath(path))
    suffix = os.path.splitext(path)[1]  # kept last, so that writers that look at the suffix (savefig) still can
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
    """Write ``text`` (UTF-8) to ``path`` atomically and durably (flushed to disk before the rename).

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "cert.json")
    >>> write_text(target, "{}\\n"); open(target).read()
    '{}\\n'
    """
    with atomic_output(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

"""Writing a file so that a reader never sees half of it: the one atomic writer.

:func:`atomic_output` hands out a temporary file beside the target and renames it over
the target (``os.replace``) once it is complete; on any failure the temporary file is
removed and the target is untouched. Used by the CLI's outputs (``--out``, ``--png``,
``--dot``: :mod:`hasse.output`) and by certificates (:mod:`hasse.proofs.certificate`).
Problems are an :class:`~hasse.theory.errors.InputError` of one line naming the path.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from hasse.theory.errors import InputError


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

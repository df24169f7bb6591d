"""Worker processes die with their parent: :func:`die_with_parent`, called first thing in a forked worker.

Definition. After ``die_with_parent()`` the calling process is killed (``SIGKILL``)
as soon as its parent exits, even when the parent is killed with ``SIGKILL`` and
cannot clean up (``daemon=True`` only covers a parent that exits normally). On Linux
this is ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` through ctypes; elsewhere (or if prctl is
unavailable) a daemon thread polls ``os.getppid()`` twice a second and exits the
process when the parent has changed. Either way the parent's pid is checked once
more after setting it up, in case the parent died in between.

Used by :func:`solvers.exhaustive.search`'s workers (``tests/test_limits.py`` kills a
``--workers 2`` run with SIGKILL and checks that no worker is left) and by the child
that runs a user's code (:func:`theory.user_code.run`). Not called here: it would tie
this process to its parent.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1


def _prctl_deathsig() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = _libc()
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


_LIBC = []  # the C library, once loaded (a forked child inherits it: no ldconfig run per child)


def prepare() -> None:
    """Load what :func:`die_with_parent` needs now, in the parent, so that each forked child finds it loaded."""
    if sys.platform.startswith("linux"):
        try:
            _libc()
        except OSError:
            pass


def _libc():
    """The C library: ``libc.so.6`` directly (no subprocess), else what ``find_library`` finds."""
    if not _LIBC:
        try:
            _LIBC.append(ctypes.CDLL("libc.so.6", use_errno=True))
        except OSError:
            _LIBC.append(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True))
    return _LIBC[0]


def die_with_parent(poll: float = 0.5, parent: int | None = None) -> str:
    """Make this (worker) process exit when its parent does; returns the mechanism used, ``"prctl"`` or ``"polling"``.

    ``parent``: the parent's pid as the parent knew it before the fork (``os.getpid()`` there);
    without it ``os.getppid()`` now, which misses a parent that died between the fork and this call.
    """
    parent = os.getppid() if parent is None else parent
    how = "prctl" if _prctl_deathsig() else "polling"
    if how == "polling":
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(poll)
            os._exit(1)

        threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)
    return how

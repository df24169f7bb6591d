"""The forked child's process plumbing: its answer read before a deadline, its exit in words, its bounds.

Mechanics only; who may run user code and the runner itself are :mod:`theory.user_code`:

- :func:`collect` reads what the child sends until it closes its end, and kills it
  (``SIGKILL``) when the deadline passes first; :func:`kill`; :func:`status_text` says
  how a child ended that sent nothing (``killed by SIGKILL — out of memory?``);
- :func:`limit_memory` lowers ``RLIMIT_AS`` to the address space held (:func:`address_space`)
  plus a margin, :func:`restore_memory` undoes it;
- :func:`single_threaded_torch`: torch, when the parent holds it, on one thread in the child.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time


def single_threaded_torch() -> None:
    """In the forked child, torch (when the parent has loaded it) runs on one thread.

    A child forked after the parent used torch's OpenMP pool inherits that pool's state
    but not its threads: its first parallel torch operation waits forever (seen: a
    mask_mod using torch ops after any torch matmul in the parent; the child hung until
    the time limit). One thread has no pool to wait for. torch is never imported here:
    only a torch the parent already holds is touched.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            torch.set_num_threads(1)


def collect(pid: int, fd: int, seconds: float) -> tuple[bytes | None, int]:
    """``(bytes the child sent, its wait status)``; ``(None, …)`` when ``seconds`` passed first (child killed)."""
    end = time.monotonic() + seconds
    chunks = bytearray()
    try:
        while True:
            left = end - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                kill(pid)
                return None, 0
            data = os.read(fd, 1 << 20)
            if not data:
                break
            chunks += data
    except BaseException:  # Ctrl-C, or anything else here: never leave the child running
        kill(pid)
        raise
    _, status = os.waitpid(pid, 0)
    return bytes(chunks), status


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, ChildProcessError):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return f"killed by {name}" + (" — out of memory?" if sig == signal.SIGKILL else "")
    return f"os._exit({os.WEXITSTATUS(status)})" if os.WIFEXITED(status) else f"status {status}"


def address_space() -> int | None:
    """Bytes of address space this process holds now (Linux ``/proc``), or None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def limit_memory(extra: int) -> tuple | None:
    """Lower ``RLIMIT_AS`` to what is held plus ``extra`` bytes; the old limits (to restore), or None."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not a POSIX system
        return None
    held = address_space()
    if held is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = held + extra
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if soft != resource.RLIM_INFINITY and soft <= want:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        return None
    return soft, hard


def restore_memory(old: tuple | None) -> None:
    if old is not None:
        import resource

        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, old)

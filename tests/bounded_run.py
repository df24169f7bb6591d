"""``hasse.cli.main`` run in a forked copy of the test process under a wall-clock bound (and a memory bound).

Shared by tests/test_adversarial.py (the kit black box on the corpus) and tests/test_limits.py (bad sizes
that used to hang or exhaust memory): the child runs ``main(argv)`` with stdout and stderr captured, a
traceback caught and returned, and sends ``[exit code, stdout, stderr]`` back through a pipe as JSON; the
parent kills it past the bound.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time

from hasse.cli import main


def _raw(code):
    return code


def bounded_main(argv, seconds: float, *, memory: int | None = None, exit_code=_raw,
                 died: str = "the child died"):
    """``(exit code, stdout, stderr)`` of ``main(argv)`` in a forked copy of this process; None past ``seconds``.

    ``memory``: the child may use that many bytes more address space than the parent holds (None: no limit);
    ``exit_code`` maps a ``SystemExit``'s code (in the child); ``(-9, "", died)`` when the child sent nothing.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(r)
            import contextlib
            import io
            import traceback

            if memory is not None:
                import resource

                with open("/proc/self/status") as f:
                    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
                resource.setrlimit(resource.RLIMIT_AS, (vm + memory, vm + memory))
            out, err, code = io.StringIO(), io.StringIO(), -1
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exc:
                    code = exit_code(exc.code)
                except BaseException:  # noqa: BLE001 -- what the tests forbid: report it
                    traceback.print_exc(file=err)
                    code = -1
            os.write(w, json.dumps([code, out.getvalue()[-200000:], err.getvalue()[-20000:]]).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks, end = [], time.monotonic() + seconds
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                return None
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    if not chunks:
        return -9, "", died
    return tuple(json.loads(b"".join(chunks)))

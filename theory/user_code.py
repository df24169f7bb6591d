"""A user's Python code: who may run it, and the one bounded runner it runs in.

Permission. A user's file (a mask_mod, a factory, an invariant, a design's task maker)
is imported by one function, :func:`theory.inputs.user_files.import_function`, and only with a
:class:`CodePermission` (:func:`require_permission`). Two exist: :data:`ARGUMENT` — the
code was named as an argument (typed on the command line, or passed to the Python API
by its caller) — and :data:`TRUSTED` — ``--trust-code`` (``trust_code=True``). Every
reader of a data file (task, family, mask JSON, stack file; certificates and audit
configurations never name code) passes ``None``: a code name found inside a file is
refused with one line naming ``--trust-code``, before anything of it runs.

Runner. :func:`run` calls ``job()`` in a forked child process and returns what it
returned (pickled back through a pipe), so whatever the user's code does stays
bounded and cannot end or hang the command:

- a time limit (:func:`limits`; the command's ``--timeout``, else
  :data:`DEFAULT_SECONDS`): past it the child is killed (``SIGKILL``) and
  :class:`UserCodeTimeout` (an :class:`InputError`: exit 2, no verdict was started) says so;
- an address-space limit (``RLIMIT_AS``, :data:`MEMORY_BYTES` above what the process
  already holds): an allocation beyond it is a ``MemoryError`` in the child, one line;
- anything raised — ``SystemExit`` from ``sys.exit(0)``, ``KeyboardInterrupt``, any
  exception — is one line naming the user's file and line (:func:`raised`); a child
  that ends without an answer (``os._exit``, a signal) is one line too;
- the child's stdout goes to stderr (a ``print`` never spoils ``--json``), it ignores
  ``SIGINT`` (Ctrl-C stops the parent, which kills it) and dies with its parent
  (:func:`theory.worker_exit.die_with_parent`).

Inside a child, :func:`run` calls ``job()`` directly (the child's own bounds apply).
Without ``os.fork`` (Windows) the job runs in this process under :func:`guarded`.
:func:`run_here` is for results that cannot leave the process (the symbolic tracer's
Z3 terms): the job is run once in a child, bounded, and, when that ends well, again
here under :func:`guarded` (a ``SIGALRM`` deadline, the same address-space limit).

The child's process plumbing (its answer read before the deadline, the address-space
limit, torch on one thread) is :mod:`theory.child_process`. The fork costs a few
milliseconds per load (docs/benchmarks.md has the figure).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import sysconfig
import threading
import traceback
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, TypeVar

from hasse.theory import child_process
from hasse.theory.errors import InputError, clip

T = TypeVar("T")

DEFAULT_SECONDS = 60.0  # the time user code may run when the command has no --timeout
MEMORY_BYTES = 8 << 30  # address space user code may add to what the process holds (the kit's size limit)
MESSAGE_CHARS = 300  # of an exception's text in a one-line message


@dataclass(frozen=True)
class CodePermission:
    """Leave to import and run a user's Python file; ``granted_by`` says who gave it."""

    granted_by: str


ARGUMENT = CodePermission("named as an argument (the command line, or the Python API's caller)")
TRUSTED = CodePermission("--trust-code")


def require_permission(permission, source: str | None) -> None:
    """:class:`InputError` unless ``permission`` is a :class:`CodePermission` (``None``: code named in a data file).

    >>> require_permission(ARGUMENT, "m.py:causal")
    >>> require_permission(None, "m.py:causal")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.py:causal: names Python code inside a data file (a task, mask or stack file); pass --trust-code to run it (without it, reading a file never runs code)
    """
    if not isinstance(permission, CodePermission):
        raise InputError("names Python code inside a data file (a task, mask or stack file); pass --trust-code to "
                         "run it (without it, reading a file never runs code)", source)


class UserCodeTimeout(InputError):
    """User code did not return within the time limit (it was stopped)."""


@dataclass(frozen=True)
class Limits:
    """What user code may use: ``seconds`` of wall-clock time, ``memory`` bytes of address space."""

    seconds: float = DEFAULT_SECONDS
    memory: int = MEMORY_BYTES


_LIMITS: ContextVar[Limits] = ContextVar("hasse_user_code_limits", default=Limits())
_inside = False  # True in the child of run() and under guarded(): a nested run calls the job directly
_in_child = False  # True in the child of run() only (where SIGINT is ignored: a KeyboardInterrupt is the code's own)


@contextlib.contextmanager
def limits(seconds: float | None = None, memory: int | None = None):
    """Within the block, user code runs with these limits (``None`` keeps the current one).

    The command line sets ``seconds`` from a command's ``--timeout``.
    """
    now = _LIMITS.get()
    token = _LIMITS.set(Limits(now.seconds if seconds is None else float(seconds),
                               now.memory if memory is None else int(memory)))
    try:
        yield
    finally:
        _LIMITS.reset(token)


def current_limits() -> Limits:
    return _LIMITS.get()


def in_child() -> bool:
    """True inside the child of :func:`run`, where every exception, KeyboardInterrupt included, is the code's own."""
    return _in_child


# --------------------------------------------------------------------------- messages


def _dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The kit's own source folders, and the interpreter's library folders."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    if os.path.isfile(os.path.join(root, "__init__.py")):  # installed: every module under .../hasse
        kit = (root,)
    else:  # a checkout: package-dir maps these folders
        kit = tuple(os.path.join(root, d) for d in ("theory", "solvers", "gpu_check", "proofs", "hasse"))
    paths = sysconfig.get_paths()
    libs = tuple({os.path.abspath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths})
    return kit, libs


def _under(filename: str, folders) -> bool:
    path = os.path.abspath(filename)
    return any(path == f or path.startswith(f + os.sep) for f in folders)


def location(exc: BaseException, path: str | None = None) -> str:
    """``file.py:LINE`` where ``exc`` was raised in the user's code ('' when no frame is known).

    The innermost frame in ``path`` (the file named), else the innermost frame outside
    the kit and the interpreter's libraries; '' when every frame is the kit's or a
    library's (code typed at a prompt, a doctest).
    """
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    if not frames:
        return ""
    target = os.path.realpath(path) if path else None
    kit, libs = _dirs()
    chosen = ([f for f in frames if target and os.path.realpath(f.filename) == target]
              or [f for f in frames if not _under(f.filename, kit) and not _under(f.filename, libs)])
    if not chosen:
        return ""
    f = chosen[-1]
    return f"{os.path.basename(f.filename)}:{f.lineno}"


def raised(what: str, exc: BaseException, path: str | None = None) -> str:
    """One line for what user code raised: ``mask_mod raised ZeroDivisionError at evil.py:7: division by zero``.

    >>> try:
    ...     1 / 0
    ... except ZeroDivisionError as exc:
    ...     print(raised("mask_mod", exc))  # a doctest has no file: no line to name
    mask_mod raised ZeroDivisionError: division by zero
    >>> raised("factory", SystemExit(0))
    'factory called sys.exit(0): user code must return, not end the process'
    """
    where = location(exc, path)
    at = f" at {where}" if where else ""
    if isinstance(exc, SystemExit):
        return f"{what} called sys.exit({clip(repr(exc.code), 40)}){at}: user code must return, not end the process"
    if isinstance(exc, MemoryError):
        return f"{what} ran out of memory{at} (user code may allocate {current_limits().memory / 2**30:g} GiB)"
    text = clip(str(exc).replace("\n", " "), MESSAGE_CHARS)
    return f"{what} raised {type(exc).__name__}{at}" + (f": {text}" if text else "")


# --------------------------------------------------------------------------- the runner


def run(job: Callable[[], T], *, source: str | None, what: str = "user code", path: str | None = None) -> T:
    """``job()``, run in a forked child within the limits (module docstring); its result, or one-line InputError.

    ``source`` prefixes the messages, ``what`` names the code (``"mask_mod"``), ``path``
    is the user's file (for the line of what it raised). An :class:`InputError` the job
    raises comes back as it is (its type and fields kept).

    >>> run(lambda: sum(range(10)), source="t")
    45
    >>> try:
    ...     run(lambda: sys.exit(0), source="m.py:f", what="mask_mod")
    ... except InputError as exc:
    ...     print(exc)
    m.py:f: mask_mod called sys.exit(0): user code must return, not end the process
    """
    if _inside:
        return job()
    if not hasattr(os, "fork"):
        return guarded(job, source=source, what=what, path=path)
    bounds = current_limits()
    from hasse.theory import worker_exit

    worker_exit.prepare()  # loaded here once: a child must not spend its time importing
    with contextlib.suppress(ImportError):
        import resource  # noqa: F401 - the same: imported before the fork
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(job, bounds, read_end, write_end, what, path, parent)
    os.close(write_end)
    try:
        payload, status = child_process.collect(pid, read_end, bounds.seconds)
    finally:
        os.close(read_end)
    if payload is None:
        raise UserCodeTimeout(f"{what} did not finish within {bounds.seconds:g} s and was stopped (an endless "
                              "loop, a sleep, a wait?); --timeout S gives it longer", source)
    if not payload:
        raise InputError(f"{what} ended the process ({child_process.status_text(status)}) without an answer; user code must "
                         "return", source)
    try:
        outcome = pickle.loads(payload)
    except Exception as exc:  # noqa: BLE001 - a result that does not unpickle here
        raise InputError(f"{what}: its result could not be read back ({type(exc).__name__}: {exc})", source) from None
    kind = outcome[0]
    if kind == "ok":
        return outcome[1]
    if kind == "input":
        raise _rebuilt(*outcome[1:]) from None
    raise InputError(outcome[1], source)


def _child(job, bounds: Limits, read_end: int, write_end: int, what: str, path: str | None, parent: int) -> None:
    """The forked child: bound itself, run ``job``, send ``("ok", result)`` or the error, exit."""
    global _inside, _in_child
    try:
        os.close(read_end)
        _inside = _in_child = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops, and kills this child
        from hasse.theory.worker_exit import die_with_parent

        die_with_parent(parent=parent)
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            os.dup2(2, 1)  # what the user's code prints goes to stderr: --json stays one object
        sys.stdout = sys.stderr
        child_process.single_threaded_torch()
        child_process.limit_memory(bounds.memory)
        try:
            outcome = ("ok", job())
        except InputError as exc:
            outcome = ("input", type(exc), str(exc), dict(vars(exc)))
        except BaseException as exc:  # noqa: BLE001 - everything user code can raise, SystemExit included
            outcome = ("raised", raised(what, exc, path))
        try:
            payload = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - a result that does not pickle (a lambda, a module)
            payload = pickle.dumps(("raised", f"{what}: its result cannot be sent back ({type(exc).__name__}: "
                                              f"{clip(exc, MESSAGE_CHARS)})"))
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        view = memoryview(payload)
        while view:
            view = view[os.write(write_end, view):]
        os.close(write_end)  # the parent reads its end now, not after this process's memory is torn down
    finally:
        os._exit(0)


def _rebuilt(cls, text: str, fields: dict) -> InputError:
    """The InputError the child raised, of its own class and with its fields (its constructor is not called)."""
    exc = cls.__new__(cls)
    ValueError.__init__(exc, text)
    exc.__dict__.update(fields)
    return exc


class _Stop(BaseException):
    """Raised by the SIGALRM handler of :func:`guarded` when the time is spent."""


def guarded(job: Callable[[], T], *, source: str | None, what: str = "user code", path: str | None = None,
            keep: tuple = ()) -> T:
    """``job()`` in this process: a ``SIGALRM`` deadline (main thread only), the address-space limit, one-line errors.

    Exceptions of the types in ``keep`` (and InputError) reach the caller as they are;
    any other is one line (:func:`raised`). Weaker than :func:`run` (code that catches
    everything, or waits inside C, is not stopped, and ``os._exit`` ends the process):
    :func:`run_here` runs a job here only after it ended well in a child.
    """
    global _inside
    if _inside:
        return job()
    bounds = current_limits()
    timer = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous = None
    if timer:
        def stop(_signum, _frame):
            signal.setitimer(signal.ITIMER_REAL, 0.5)  # again, in case the code catches it
            raise _Stop()

        previous = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, bounds.seconds)
    memory = child_process.limit_memory(bounds.memory)
    _inside = True
    try:
        return job()
    except _Stop:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
        raise UserCodeTimeout(f"{what} did not finish within {bounds.seconds:g} s and was stopped (an endless loop, "
                              "a sleep, a wait?); --timeout S gives it longer", source) from None
    except (InputError, *keep):
        raise
    except KeyboardInterrupt:  # in this process it may be Ctrl-C: the command stops (exit 130)
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit and the rest: one line
        raise InputError(raised(what, exc, path), source) from None
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        _inside = False
        child_process.restore_memory(memory)


def run_here(job: Callable[[], T], *, source: str | None, what: str = "user code", path: str | None = None,
             keep: tuple = ()) -> T:
    """``job()`` in this process, for a result that cannot be pickled, after a bounded rehearsal in a child.

    The job runs first under :func:`run` (its result dropped): a loop, a sleep, an
    allocation, ``sys.exit`` or ``os._exit`` is stopped and reported there. Only then is
    it run here, under :func:`guarded` (the same limits: it is a repeat of a run that
    ended well, so only code that behaves differently the second time meets them here).
    An exception the rehearsal raises (other than MemoryError) is left to this second
    run, where it reaches the caller with its type when it is in ``keep`` (a tracer's
    own error) and as one line otherwise.
    """
    if _inside or not hasattr(os, "fork"):
        return guarded(job, source=source, what=what, path=path, keep=keep)

    def rehearse() -> None:
        try:
            job()
        except MemoryError:
            raise
        except Exception:  # noqa: BLE001 - raised again below, in this process, where its type reaches the caller
            pass

    run(rehearse, source=source, what=what, path=path)
    return guarded(job, source=source, what=what, path=path, keep=keep)

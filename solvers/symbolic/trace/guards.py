"""The program's own ``try``/``except``: which code can catch, whether an operation runs inside a ``try``,
and every exception raised inside the program while it runs.

A program that returns after an exception was raised inside it is refused (the handler hides which
path Python takes with real tensors); an operation that raises only at some values (an obligation)
inside a ``try`` block is refused where it happens.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Callable

from hasse.solvers.symbolic.trace.rebind import _codes_of, _has, _traced_code


def _has_handlers(code) -> bool:
    """Whether ``code`` has a ``try`` (or ``with``) block: its exception table (3.11+), a ``SETUP_FINALLY`` (3.10)."""
    table = getattr(code, "co_exceptiontable", None)
    if table is not None:
        return bool(table)
    import dis

    return any(i.opname == "SETUP_FINALLY" for i in dis.get_instructions(code))


def _guarded_line(codes) -> str:
    """``file.py:LINE`` of the innermost frame of the program running now inside a ``try`` block, else "".

    An operation that raises only at some values (a divisor that can be 0) is an obligation,
    never a raise of the tracer; inside the program's ``try``, torch would raise there and
    run the handler, so the path traced is not the one torch runs. Python 3.11+: the frame's
    instruction inside an exception-table entry of its code (a ``with`` block counts too: a
    refusal, never a wrong verdict); 3.10: any ``SETUP_FINALLY`` in the code.
    """
    import dis

    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code in codes:
            entries = getattr(dis.Bytecode(code), "exception_entries", None)
            if entries is None:  # Python 3.10: no exception table
                inside = any(i.opname == "SETUP_FINALLY" for i in dis.get_instructions(code))
            else:
                inside = any(e.start <= frame.f_lasti < e.end for e in entries)
            if inside:
                return f"{code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def _reachable_codes(program: Callable, limit: int = 5000) -> set:
    """The code objects the traced program can run (its functions, nested ones, those its globals and closures reach)."""
    out: set = set()
    todo, seen = [program], set()
    while todo and len(seen) < limit:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if isinstance(fn, (tuple, list)):
            todo.extend(v for v in fn if isinstance(v, (types.FunctionType, functools.partial, types.MethodType,
                                                         tuple, list)))
            continue
        if isinstance(fn, functools.partial):
            todo.append(fn.func)
            continue
        if isinstance(fn, types.MethodType):
            todo.append(fn.__func__)
            continue
        if not isinstance(fn, types.FunctionType) or not _traced_code(fn):
            continue
        out.update(_codes_of(fn.__code__))
        names = set()
        for c in _codes_of(fn.__code__):
            names.update(c.co_names)
        todo.extend(v for k, v in fn.__globals__.items() if k in names and isinstance(v, types.FunctionType))
        for cell in fn.__closure__ or ():
            if _has(cell) and isinstance(cell.cell_contents, (types.FunctionType, functools.partial, types.MethodType,
                                                              tuple, list)):
                todo.append(cell.cell_contents)
    return out


class _Handlers:
    """While the program runs: every exception raised inside one of ``codes`` (a frame of the
    program), by ``sys.settrace`` on those frames only; on only when a code has a handler."""

    def __init__(self, codes: set):
        self.codes = codes
        self.seen: list = []  # (exception, file.py:LINE)
        self.on = any(_has_handlers(c) for c in codes)

    def __enter__(self):
        if self.on:
            self.previous = sys.gettrace()
            sys.settrace(self._call)
        return self

    def __exit__(self, *exc):
        if self.on:
            sys.settrace(self.previous)
        return False

    def _call(self, frame, event, arg):
        if frame.f_code in self.codes:
            frame.f_trace_lines = False
            return self._local
        return None

    def _local(self, frame, event, arg):
        if event == "exception" and not issubclass(arg[0], (StopIteration, GeneratorExit)):
            self.seen.append((arg[1], f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"))
        return self._local

"""Running a mask program on symbolic arguments, once per feasible combination of branch decisions.

Each run takes the decisions of a prefix and then the first feasible side of each new
decision; every other side Z3 says can happen is queued as a new prefix. The formula is
``OR over paths (path condition AND result on that path)``, at most ``max_paths`` paths.
"""

from __future__ import annotations

import copy
import functools
import types
from typing import Callable, Sequence

import z3

from hasse.solvers.symbolic.terms import RUNNING, Sym, SymIndex, SymInt, TraceLimit, Tracer, Untraceable, mask_value
from hasse.solvers.symbolic.trace.guards import _guarded_line, _Handlers, _has_handlers, _reachable_codes
from hasse.solvers.symbolic.trace.lines import _raises, _running_line, _where_in
from hasse.solvers.symbolic.trace.rebind import rebind
from hasse.solvers.symbolic.trace.result import Traced, TraceError, TraceTimeout, TraceUnknown
from hasse.theory.errors import InputError, clip

MAX_PATHS = 256


def _deadline_spent() -> bool:
    from hasse.theory.deadline import left

    spent = left()
    return spent is not None and spent <= 0


def trace(program: Callable, args: Sequence, *, assumptions=(), max_paths: int = MAX_PATHS,
          source: str | None = None, setup: Callable | None = None, n=None, assume: dict | None = None,
          flex: bool = False, strict_assume: bool = True, value: Callable | None = None,
          raises: list | None = None) -> Traced:
    """The formula of ``program(*args)`` for symbolic ``args`` (SymInt; plain values stay concrete).

    ``flex``: the program is a FlexAttention mask_mod, whose result must be a bool tensor
    (:func:`~solvers.symbolic.terms.mask_value`: an int tensor or a Python value cannot run).

    ``setup(tracer, program)``, if given, returns the callable to run on each path (a
    factory call with symbolic parameters, for instance); default: ``program`` rebound.
    ``assumptions`` are Z3 facts about the arguments (ranges): a branch they rule out is
    never run. ``n`` (the length term) is what a closure tensor looked up by a position
    bounds (``n <= len``); ``assume`` maps a closure/global tensor's name to a
    :class:`SymIndex` that stands for it (``--assume NAME=nondecreasing``); a name the program
    does not read is an error unless ``strict_assume`` is False (``equiv``: one of two masks).

    Errors (one line, the user's line named): what the kit does not model or torch refuses
    (``Untraceable``, ``CannotRun``) and anything the program raises on a feasible path are
    :class:`TraceError`; a bound of the tracer (``TraceLimit``) or a spent time limit is
    :class:`TraceUnknown`. A program that returns after an exception was raised inside it
    (its own ``try``/``except``, around the tracer's signal or its own error) is refused:
    only the path Python would take with real tensors may be traced, and the handler hides
    which one that is.

    ``value(result)``, if given, turns each path's result into a Z3 term instead of
    :func:`mask_value` (an integer: a factory's ``positions(n)``); ``Traced.values`` lists
    ``(path condition, term)`` of each path and the formula is their ``If`` chain.
    ``raises``, if given, is a list that collects ``(path condition, why)`` of each feasible
    path on which the program raises an exception of its own (a factory's ``raise
    ValueError`` for values it refuses) instead of refusing the program: the caller makes
    each a failure (an obligation ``not path condition``), never a hypothesis.
    """
    from hasse.theory.deadline import tick

    inner = program
    while isinstance(inner, (functools.partial, types.MethodType)):  # the file of the function they call
        inner = inner.func if isinstance(inner, functools.partial) else inner.__func__
    files = [getattr(getattr(inner, "__code__", None), "co_filename", "") or ""]
    codes = _reachable_codes(program)
    positions = {str(a.expr) for a in args if isinstance(a, SymInt)} - {"b0", "h0"}  # q, kv (a mask_mod's b, h: not)
    assume = dict(assume or {})
    pending: list[list[bool]] = [[]]
    joined = []
    conditions: list = []
    obligations: list = []
    indexes: list = []
    constants: set = set()
    tensors: dict = {}
    seen_tensors: set = set()
    lines: list = []  # the lines where the last path decided (named when the paths run out)
    paths = 0
    while pending:
        prefix = pending.pop()
        paths += 1
        if paths > max_paths:
            at = max(set(lines), key=lines.count) if lines else (source or "the mask")  # the line that forks most
            raise TraceUnknown(f"{at}: more than {max_paths} paths of branches on symbolic values (unknown; a loop "
                               "over a symbolic value, or write the condition with & | and where() instead of if/else)")
        tracer = Tracer(assumptions)
        tracer.choices = list(prefix)
        tracer.codes = codes
        tracer.where = lambda: _running_line(files, codes)
        tracer.guarded = (lambda: _guarded_line(codes)) if any(_has_handlers(c) for c in codes) else None
        tracer.n, tracer.positions, tracer.assume = n, positions, assume
        tracer.tables, tracer.tensor_names = {}, set()
        lines = []
        tracer.decide = _noting_lines(tracer, lines, files, codes)
        watch = _Handlers(codes)
        RUNNING.append(tracer)
        try:
            tick()  # a given --timeout bounds tracing (one tick a path; Tracer.decide ticks each decision)
            with watch:
                run = setup(tracer, program) if setup is not None else rebind(program, tracer)
                bound = [_bound(a, tracer) for a in args]
                result = run(*bound)
                try:
                    out = value(result) if value is not None else mask_value(result, flex)  # flex: a bool tensor
                except Untraceable as exc:  # about what the program returns: named at its def line
                    code = getattr(inner, "__code__", None)
                    if code is not None:
                        exc.where = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}: `{code.co_name}`"
                    raise
        except TraceLimit as exc:
            raise TraceUnknown(f"{_where_in(exc, files, codes)}: {exc} (unknown)".replace("\n", " ")) from None
        except Untraceable as exc:
            inside = " (inside the program's try/except: its handler is not modelled)" if watch.seen else ""
            at = getattr(exc, "where", None) or _where_in(exc, files, codes)
            raise TraceError(f"{at}: {exc}{inside}".replace("\n", " ")) from None
        except z3.Z3Exception as exc:
            raise TraceError(f"{_where_in(exc, files, codes)}: not modelled (Z3: {exc})".replace("\n", " ")) from None
        except RecursionError:
            raise TraceError(f"{source or 'the mask'}: recursion too deep while tracing") from None
        except (MemoryError, InputError):
            raise
        except TimeoutError as exc:
            if _deadline_spent():
                raise TraceTimeout(f"{source or 'the mask'}: tracing stopped at the time limit ({exc}): "
                                   "unknown") from None
            raise TraceError(_raises(exc, files, codes, tracer, positions)) from None
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the program's own error: one line, never a traceback
            if raises is None or isinstance(exc, SystemExit) or not _raised_by_program(exc, codes):
                raise TraceError(_raises(exc, files, codes, tracer, positions)) from None
            if tracer.raised:  # it caught the tracer's own signal before raising: not the path Python runs
                raise TraceError(f"{_where_in(exc, files, codes)}: the program catches the tracer's signal (a "
                                 "try/except around traced code) and raises: not modelled") from None
            text = clip(" ".join(str(exc).split()), 160)
            raises.append((tracer.path_condition(), f"{_where_in(exc, files, codes)}: the program raises "
                                                     f"{type(exc).__name__}" + (f": {text}" if text else "")))
            failed = True
        else:
            failed = False
        finally:
            RUNNING.pop()
        if failed:  # this path raises (collected above); its other sides are still traced
            _queue_alternatives(tracer, prefix, pending)
            continue
        caught = [e for e in tracer.raised] + [e for e, _ in watch.seen]
        if caught and _deadline_spent():  # the time limit's own TimeoutError, swallowed by the program's handler
            raise TraceTimeout(f"{source or 'the mask'}: tracing stopped at the time limit: unknown")
        if caught:
            first = caught[0]
            at = _where_in(first, files, codes) if first.__traceback__ is not None else (
                watch.seen[0][1] if watch.seen else source or "the mask")
            what = ("the tracer's signal" if isinstance(first, Untraceable)
                    else f"{type(first).__name__}" + (f": {clip(str(first), 80)}" if str(first) else ""))
            raise TraceError(f"{at}: the program catches {what} (a try/except around traced code): not modelled; "
                             "only the path Python runs with real tensors may be traced".replace("\n", " "))
        joined.append(z3.And(tracer.path_condition(), out) if value is None else (tracer.path_condition(), out))
        conditions.extend(c for c in tracer.assumptions[len(assumptions):] if not any(c.eq(x) for x in conditions))
        obligations.extend(tracer.obligations)
        indexes.extend(a for a in args if isinstance(a, SymIndex) and a not in indexes)
        indexes.extend(a for a in assume.values() if a.lookups and a not in indexes)
        constants.update(getattr(tracer, "constants", ()) or ())
        for name, length in tracer.tables.items():
            tensors[name] = f"{name} as given (length {length})"
        for name, index in assume.items():
            if index.lookups:
                tensors[name] = f"every {_PROPERTY_WORDS.get(index.prop, index.prop)} {name} of length n"
        seen_tensors |= tracer.tensor_names
        _queue_alternatives(tracer, prefix, pending)
    missing = sorted(set(assume) - seen_tensors)
    if missing and strict_assume:
        reads = ", ".join(sorted(seen_tensors)) or "none"
        raise TraceError(f"{source or 'the mask'}: --assume {missing[0]}: {missing[0]} is no parameter of a factory "
                         f"of n, and the program reads no closure or global tensor named {missing[0]} (the tensors "
                         f"it reads: {reads})")
    if value is not None:  # one term per path: the If chain over the (disjoint) path conditions
        if not joined:
            return Traced(z3.IntVal(0), conditions, obligations, indexes, paths, constants, tensors, [])
        term = joined[-1][1]
        for pc, v in reversed(joined[:-1]):
            term = z3.If(pc, v, term)
        return Traced(z3.simplify(term), conditions, obligations, indexes, paths, constants, tensors, joined)
    if not joined:  # every path raises (collected in ``raises``)
        return Traced(z3.BoolVal(False), conditions, obligations, indexes, paths, constants, tensors)
    formula = z3.simplify(z3.Or(joined)) if len(joined) > 1 else z3.simplify(joined[0])
    return Traced(formula, conditions, obligations, indexes, paths, constants, tensors)


def _raised_by_program(exc: BaseException, codes) -> bool:
    """Whether ``exc`` comes from a ``raise`` (or ``assert``) statement of the program itself: the innermost
    frame of its traceback is the program's code at a ``RAISE_VARARGS``. What an operation raises on a
    traced value (``'SymInt' object is not subscriptable``, a library call refusing it) is the tracer's
    limit, never a value the program refuses: the caller reports it as before (exit 2)."""
    import dis

    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if code not in codes:
        return False
    return any(i.offset == tb.tb_lasti and i.opname == "RAISE_VARARGS" for i in dis.get_instructions(code))


def _queue_alternatives(tracer: Tracer, prefix: list, pending: list) -> None:
    """Queue the other side of every decision this run took after ``prefix``, where Z3 says it can happen."""
    decisions = [d for _, d in tracer.taken]
    conds = [c for c, _ in tracer.taken]
    for i in range(len(prefix), len(decisions)):
        alternative = decisions[:i] + [not decisions[i]]
        if tracer.branch_feasible(alternative, conds[:i + 1]):
            pending.append(alternative)


def _noting_lines(tracer: Tracer, lines: list, files, codes):
    """``tracer.decide`` that also notes the user's line of each decision on a symbolic value (for the messages)."""
    decide = tracer.decide

    def noted(cond):
        before = len(tracer.taken)
        out = decide(cond)
        if len(tracer.taken) > before:
            lines.append(_running_line(files, codes))
        return out

    return noted


_PROPERTY_WORDS = {"nondecreasing": "nondecreasing", "bijection": "permutation", "backward": "parent array",
                   "any": "int64 tensor"}


def _bound(a, tracer: Tracer):
    """The argument ``a`` bound to this run's tracer (its dtype and bounds kept)."""
    if isinstance(a, Sym):
        out = copy.copy(a)
        out.tracer = tracer
        return out
    if isinstance(a, SymIndex):
        a.tracer = tracer
    return a


def symbols(*names: str) -> tuple[SymInt, ...]:
    """Fresh symbolic integers named ``names`` (no tracer yet: :func:`trace` binds them)."""
    return tuple(SymInt(z3.Int(name), None) for name in names)

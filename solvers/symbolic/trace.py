"""Tracing a mask program into a Z3 formula, by running it on symbolic arguments.

:func:`trace` calls a rule ``rule(q, k)`` or a FlexAttention ``mask_mod(b, h, q_idx,
kv_idx)`` with :class:`~solvers.symbolic.terms.SymInt` arguments. The function runs as
Python, unchanged, except that the ``numpy`` and ``torch`` modules it names are replaced
by shims whose ``where``, ``minimum``, ``maximum`` and ``logical_*`` build Z3 terms, and
the kit's parameter checks (``require_positive``, ``require_block``, …) record their
condition as a *side condition* of the statement instead of testing a number. Every
function of the same module that the program calls is run the same way.

Control flow on symbolic values (``if q < k:``, ``min(q, w)``, ``a and b``) is handled by
running the program once per feasible combination of branch decisions (each decision's
other side is tried when Z3 says it can happen) and joining the results: the formula is
``OR over paths (path condition AND result on that path)``. At most ``max_paths`` paths.

What cannot be traced raises :class:`TraceError` with one line: the operation and the
line of the user's file where it happened (``masks.py:12: bitwise arithmetic …``).
"""

from __future__ import annotations

import linecache
import numbers
import sys
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from hasse.solvers.symbolic.terms import (
    Sym,
    SymBool,
    SymIndex,
    SymInt,
    Tracer,
    Untraceable,
    as_bool,
    as_int,
    lift,
    maximum,
    minimum,
    where,
)

MAX_PATHS = 256


class TraceError(Exception):
    """A mask program the tracer cannot turn into a formula (one line: the operation and where)."""


@dataclass
class Traced:
    """A traced program: its result as a formula, and what the statement must carry along."""

    formula: z3.BoolRef  # the mask: M[q, k] as a formula of the symbolic arguments
    conditions: list = field(default_factory=list)  # side conditions the program's checks demand (n >= 1, l | n)
    obligations: list = field(default_factory=list)  # (formula, why): must hold wherever the mask is read
    indexes: list = field(default_factory=list)  # SymIndex objects looked up (their axioms go with every query)
    paths: int = 1


# --------------------------------------------------------------------------- shims


class _Shim(types.SimpleNamespace):
    """A stand-in for numpy or torch: the modelled functions, and a clear refusal for the rest."""

    def __getattr__(self, name):
        module = self.__dict__.get("_module_name", "module")
        if name.startswith("__"):
            raise AttributeError(name)

        def refuse(*_a, **_k):
            raise Untraceable(f"{module}.{name}() is not modelled")

        return refuse


def _logical_and(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = lift(out) & x
    return out


def _logical_or(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = lift(out) | x
    return out


def _logical_not(x):
    return ~lift(x) if isinstance(x, Sym) else (not x)


def _identity(x, *_, **__):
    return x


def _clamp(x, min=None, max=None):  # noqa: A002 (torch's keyword names)
    out = x
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


def _abs(x):
    return abs(lift(x))


def _shim(name: str) -> _Shim:
    return _Shim(_module_name=name, where=where, minimum=minimum, maximum=maximum, logical_and=_logical_and,
                 logical_or=_logical_or, logical_not=_logical_not, asarray=_identity, tensor=_identity,
                 as_tensor=_identity, array=_identity, clamp=_clamp, clip=_clamp, abs=_abs, bool_=bool, int64=int,
                 int32=int, bool=bool, long=int)


NUMPY_SHIM = _shim("numpy")
TORCH_SHIM = _shim("torch")


def _is_module(value, name: str) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__ == name


# --------------------------------------------------------------------------- parameter checks


def _checks(tracer: Tracer) -> dict[str, Callable]:
    """Symbolic stand-ins for theory.params' checks: each records its condition and returns the value."""

    def need(cond):
        tracer.assumptions.append(cond)
        tracer._solver.add(cond)

    def require_int(name, value):
        if isinstance(value, SymInt):
            return value
        from hasse.theory.params import require_int as concrete

        return concrete(name, value)

    def at_least(low_of, concrete_name):
        """A check ``value >= low``: a side condition for a symbolic value, the kit's own check otherwise."""
        def check(name, value, *rest):
            value = require_int(name, value)
            if isinstance(value, SymInt):
                need(value.expr >= as_int(low_of(*rest)))
                return value
            from hasse.theory import params

            return getattr(params, concrete_name)(name, value, *rest)

        return check

    require_positive = at_least(lambda: 1, "require_positive")
    require_non_negative = at_least(lambda: 0, "require_non_negative")
    require_at_least = at_least(lambda low, why="": low, "require_at_least")

    def require_block(n, block):
        if isinstance(n, SymInt) or isinstance(block, SymInt):
            n_, l_ = lift(n, tracer), lift(block, tracer)
            need(as_int(n_) >= 1)
            need(as_int(l_) >= 1)
            need(as_int(n_) % as_int(l_) == 0)  # Z3's mod is Python's for l >= 1
            return n_, l_
        from hasse.theory.params import require_block as concrete

        return concrete(n, block)

    def name_rule(rule, name):
        return rule

    return {"require_int": require_int, "require_positive": require_positive,
            "require_non_negative": require_non_negative, "require_at_least": require_at_least,
            "require_block": require_block, "name_rule": name_rule}


# --------------------------------------------------------------------------- rebinding


def rebind(fn: Callable, tracer: Tracer, memo: dict | None = None) -> Callable:
    """``fn`` with its module's numpy/torch replaced by the shims, the parameter checks by
    symbolic ones, and every same-module function it can reach rebound the same way."""
    if not isinstance(fn, types.FunctionType):
        return fn
    memo = {} if memo is None else memo
    key = id(fn.__globals__)
    if key not in memo:
        glb = dict(fn.__globals__)
        memo[key] = glb
        checks = _checks(tracer)
        for name, value in list(glb.items()):
            if _is_module(value, "numpy"):
                glb[name] = NUMPY_SHIM
            elif _is_module(value, "torch"):
                glb[name] = TORCH_SHIM
            elif name in checks and callable(value):
                glb[name] = checks[name]
        for name, value in list(glb.items()):
            if isinstance(value, types.FunctionType) and _traced_code(value):
                glb[name] = (_rebound(value, glb, tracer, memo) if value.__globals__ is fn.__globals__
                             else rebind(value, tracer, memo))
    glb = memo[key]
    return _rebound(fn, glb, tracer, memo)


_LIBRARIES = ("numpy", "torch", "z3", "networkx", "sympy", "scipy", "hasse.solvers.symbolic")


def _traced_code(fn: types.FunctionType) -> bool:
    """Run symbolically when called: the user's code and the kit's own (not numpy, torch, z3, the stdlib)."""
    module = fn.__module__ or ""
    if module.startswith(_LIBRARIES) or module in sys.stdlib_module_names:
        return False
    return module.startswith("hasse.") or "site-packages" not in (fn.__code__.co_filename or "")


def _rebound(fn: types.FunctionType, glb: dict, tracer: Tracer, memo: dict) -> types.FunctionType:
    closure = None
    if fn.__closure__:
        closure = tuple(types.CellType(_rebind_value(c.cell_contents, tracer, memo) if _has(c) else None)
                        if _has(c) else c for c in fn.__closure__)
    out = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


def _has(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _rebind_value(value, tracer, memo):
    if isinstance(value, types.FunctionType):
        return rebind(value, tracer, memo)
    if _is_module(value, "numpy"):
        return NUMPY_SHIM
    if _is_module(value, "torch"):
        return TORCH_SHIM
    return value


# --------------------------------------------------------------------------- tracing


def _where_in(exc: BaseException, files: Sequence[str]) -> str:
    """``file.py:LINE: `source`'`` of the innermost frame in one of ``files`` (else the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    here = __file__.rsplit(".", 1)[0]
    inside = [f for f in frames if not f.filename.startswith(here.rsplit("/", 1)[0])]
    chosen = [f for f in inside if any(f.filename.endswith(x) for x in files)] or inside or frames
    f = chosen[-1]
    text = (f.line or linecache.getline(f.filename, f.lineno)).strip()
    name = f.filename.rsplit("/", 1)[-1]
    return f"{name}:{f.lineno}: `{text}`" if text else f"{name}:{f.lineno}"


def trace(program: Callable, args: Sequence, *, assumptions=(), max_paths: int = MAX_PATHS,
          source: str | None = None, setup: Callable | None = None) -> Traced:
    """The formula of ``program(*args)`` for symbolic ``args`` (SymInt; plain values stay concrete).

    ``setup(tracer, program)``, if given, returns the callable to run on each path (a
    factory call with symbolic parameters, for instance); default: ``program`` rebound.
    ``assumptions`` are Z3 facts about the arguments (ranges): a branch they rule out is
    never run.
    """
    files = [getattr(getattr(program, "__code__", None), "co_filename", "") or ""]
    pending: list[list[bool]] = [[]]
    joined = []
    conditions: list = []
    obligations: list = []
    indexes: list = []
    paths = 0
    while pending:
        prefix = pending.pop()
        paths += 1
        if paths > max_paths:
            raise TraceError(f"{source or 'the mask'}: more than {max_paths} branches on symbolic values "
                             "(write the condition with & | and where() instead of if/else)")
        tracer = Tracer(assumptions)
        tracer.choices = list(prefix)
        try:
            run = setup(tracer, program) if setup is not None else rebind(program, tracer)
            bound = [type(a)(a.expr, tracer) if isinstance(a, Sym) else a for a in args]
            for a in args:
                if isinstance(a, SymIndex):
                    a.tracer = tracer
            result = run(*bound)
            value = as_bool(result, "the mask's result")
        except (Untraceable, TypeError, ValueError, AttributeError, IndexError, z3.Z3Exception) as exc:
            where_ = _where_in(exc, files)
            what = str(exc) if isinstance(exc, Untraceable) else f"{type(exc).__name__}: {exc}"
            raise TraceError(f"{where_}: {what}".replace("\n", " ")) from None
        except RecursionError:
            raise TraceError(f"{source or 'the mask'}: recursion too deep while tracing") from None
        joined.append(z3.And(tracer.path_condition(), value))
        conditions.extend(c for c in tracer.assumptions[len(assumptions):] if not any(c.eq(x) for x in conditions))
        obligations.extend(tracer.obligations)
        indexes.extend(a for a in args if isinstance(a, SymIndex) and a not in indexes)
        decisions = [d for _, d in tracer.taken]
        conds = [c for c, _ in tracer.taken]
        for i in range(len(prefix), len(decisions)):
            alternative = decisions[:i] + [not decisions[i]]
            if tracer.branch_feasible(alternative, conds[:i + 1]):
                pending.append(alternative)
    formula = z3.simplify(z3.Or(joined)) if len(joined) > 1 else z3.simplify(joined[0])
    return Traced(formula, conditions, obligations, indexes, paths)


def symbols(*names: str) -> tuple[SymInt, ...]:
    """Fresh symbolic integers named ``names`` (no tracer yet: :func:`trace` binds them)."""
    return tuple(SymInt(z3.Int(name), None) for name in names)

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

import copy
import functools
import linecache
import numbers
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import z3

from hasse.solvers.symbolic.terms import free_constants as _constants_in
from hasse.theory.errors import InputError, clip

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
    """A mask program the tracer cannot turn into a formula (one line: the operation and where); exit 2."""


class TraceUnknown(TraceError):
    """A bound of the tracer was reached (``TraceLimit``: a loop over a symbolic value, too many
    paths) or the time limit was spent while tracing: the verdict is unknown (exit 3), the line named."""


class TraceTimeout(TraceUnknown, TimeoutError):
    """The time limit (:mod:`theory.deadline`) was spent while tracing: unknown (exit 3). It is also a
    ``TimeoutError``, so whoever runs the tracer inside a larger time-limited job (a theorem of
    ``hasse prove``, which turns a spent limit into ``unknown``) sees the limit, never a finding."""


@dataclass
class Traced:
    """A traced program: its result as a formula, and what the statement must carry along."""

    formula: z3.BoolRef  # the mask: M[q, k] as a formula of the symbolic arguments
    conditions: list = field(default_factory=list)  # side conditions the program's checks demand (n >= 1, l | n)
    obligations: list = field(default_factory=list)  # (formula, why): must hold wherever the mask is read
    indexes: list = field(default_factory=list)  # SymIndex objects looked up (their axioms go with every query)
    paths: int = 1
    constants: set = field(default_factory=set)  # every concrete Python int that met a symbolic value (Tracer.constants)
    tensors: dict = field(default_factory=dict)  # closure/global tensors looked up: name -> "as given" or the property assumed


# --------------------------------------------------------------------------- shims


from hasse.solvers.symbolic.shims import NUMPY_SHIM, TORCH_SHIM, _Shim  # noqa: E402,F401 (the shims: A1)


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
    symbolic ones, its closure and global tensors by tables (:class:`Table`), and every
    function it can reach that is traced code (:func:`_traced_code`) rebound the same way.
    A ``functools.partial`` or a bound method is rebound through its function (its bound
    arguments as closure values)."""
    memo = {} if memo is None else memo
    if isinstance(fn, functools.partial):
        return functools.partial(rebind(fn.func, tracer, memo),
                                 *(_rebind_value(a, tracer, memo) for a in fn.args),
                                 **{k: _rebind_value(v, tracer, memo, k) for k, v in fn.keywords.items()})
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType) and _traced_code(fn.__func__):
        return types.MethodType(rebind(fn.__func__, tracer, memo), fn.__self__)
    if not isinstance(fn, types.FunctionType):
        return fn
    key = id(fn.__globals__)
    if key not in memo:
        glb = dict(fn.__globals__)
        memo[key] = glb
        checks = _checks(tracer)
        for name, value in list(glb.items()):
            if name.startswith("__"):
                continue
            if _is_module(value, "numpy"):
                glb[name] = NUMPY_SHIM
            elif _is_module(value, "torch"):
                glb[name] = TORCH_SHIM
            elif name in checks and callable(value):
                glb[name] = checks[name]
            elif _is_array(value):
                glb[name] = _tensor_value(name, value, tracer)
            elif _library_function(value) is not None:
                glb[name] = _library_function(value)
        for name, value in list(glb.items()):
            if isinstance(value, types.FunctionType) and _traced_code(value):
                glb[name] = (_rebound(value, glb, tracer, memo) if value.__globals__ is fn.__globals__
                             else rebind(value, tracer, memo))
    glb = memo[key]
    return _rebound(fn, glb, tracer, memo)


# never traced: numpy, torch (but its mask helpers), z3 and the kit's own tracer; the stdlib neither (below)
_LIBRARIES = ("numpy", "torch", "z3", "networkx", "sympy", "scipy", "functorch", "triton", "jax",
              "hasse.solvers.symbolic")
# traced although inside a library: torch's own mask_mod helpers (and_masks, or_masks, noop_mask)
_TRACED_LIBRARY = ("torch.nn.attention.flex_attention",)


def _traced_code(fn: types.FunctionType) -> bool:
    """Run symbolically when called: the user's code wherever it is installed (attn_gym in
    site-packages too), the kit's own rules, torch's mask helpers; not numpy, torch, z3, the stdlib."""
    module = fn.__module__ or ""
    if module in _TRACED_LIBRARY:
        return True
    if any(module == lib or module.startswith(lib + ".") for lib in _LIBRARIES):
        return False
    return module.split(".")[0] not in sys.stdlib_module_names


def _library_function(value):
    """The shim's stand-in for a numpy/torch function imported by name (``from torch import where``), else None."""
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", None)
    if not name or not callable(value) or isinstance(value, type):
        return None
    for lib, shim in (("numpy", NUMPY_SHIM), ("torch", TORCH_SHIM)):
        if (module == lib or module.startswith(lib + ".") or module.startswith("_" + lib)) and name in vars(shim) \
                and module not in _TRACED_LIBRARY:
            return vars(shim)[name]
    return None


def _rebound(fn: types.FunctionType, glb: dict, tracer: Tracer, memo: dict) -> types.FunctionType:
    closure = None
    if fn.__closure__:
        closure = tuple(types.CellType(_rebind_value(c.cell_contents, tracer, memo, name)) if _has(c) else c
                        for name, c in zip(fn.__code__.co_freevars, fn.__closure__))
    out = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    codes = getattr(tracer, "codes", None)
    if codes is not None:
        codes.update(_codes_of(fn.__code__))
    return out


def _codes_of(code: types.CodeType) -> list:
    """``code`` and the code objects nested in it (functions and lambdas it defines)."""
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
    return out


def _has(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _rebind_value(value, tracer, memo, name: str = "a closure value"):
    if isinstance(value, types.FunctionType):
        return rebind(value, tracer, memo) if _traced_code(value) else value
    if isinstance(value, (functools.partial, types.MethodType)):
        return rebind(value, tracer, memo)
    if _is_module(value, "numpy"):
        return NUMPY_SHIM
    if _is_module(value, "torch"):
        return TORCH_SHIM
    if _is_array(value):
        return _tensor_value(name, value, tracer)
    if isinstance(value, (tuple, list)) and any(isinstance(v, (types.FunctionType, functools.partial)) for v in value):
        return type(value)(_rebind_value(v, tracer, memo, name) for v in value)  # and_masks(*mask_mods)
    lib = _library_function(value)
    return lib if lib is not None else value


# --------------------------------------------------------------------------- closure tensors


MAX_TABLE_RUNS = 4096  # runs of equal values of a closure tensor looked up by a symbolic index (one If each)
MAX_TABLE_ENTRIES = 4096  # entries of a closure tensor looked up by several symbolic indices (a nested If)


def _is_array(value) -> bool:
    """A numpy array or a torch tensor (torch is not imported here: only a tensor of a loaded torch)."""
    if isinstance(value, np.ndarray):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _tensor_value(name: str, value, tracer: Tracer):
    """What the traced program sees for the closure/global tensor ``name``: a :class:`Table` of its
    values, or the index tensor declared for it by ``--assume NAME=…`` (``tracer.assume``)."""
    if getattr(value, "ndim", 0) == 0:  # a 0-d tensor is a number: torch's own arithmetic with it is modelled
        return value
    seen = getattr(tracer, "tensor_names", None)
    if seen is not None:
        seen.add(name)
    assumed = getattr(tracer, "assume", None) or {}
    if name in assumed:
        index = assumed[name]
        index.tracer = tracer
        return index
    return Table(name, value, tracer)


def _values_of(value) -> tuple[np.ndarray, str]:
    """``value`` (array or tensor) as a numpy array of Python-exact integers, and its dtype in the tracer's words."""
    if isinstance(value, np.ndarray):
        kind = value.dtype
        arr = value
    else:
        arr = value.detach().cpu().numpy()
        kind = arr.dtype
    if kind == np.bool_:
        return arr.astype(bool), "bool"
    if not np.issubdtype(kind, np.integer):
        raise CannotRunOrUntraceable(f"a closure tensor of dtype {kind} (only integer and bool tensors are modelled)")
    return arr.astype(np.int64), ("int32" if kind == np.int32 else "int64")


def CannotRunOrUntraceable(message: str) -> Exception:  # noqa: N802 - an exception class of terms, when A1's exists
    from hasse.solvers.symbolic import terms

    return getattr(terms, "CannotRun", Untraceable)(message) if "cannot run" in message else Untraceable(message)


class Table:
    """A closure or module-global tensor of the traced program, read with its actual values.

    Concrete indices read the element (``t[0]``, a row of a 2-D tensor); a symbolic index
    ``i`` (a position, ``b``, a value computed from them) reads ``If``-chains over the runs of
    equal values, with the obligation ``-L <= i < L`` (torch raises outside; negative indices
    count from the end) and, when ``i`` depends on a position, the side condition
    ``n <= L`` of the statement (the claim is about the tensor as given). Several symbolic
    indices read a nested ``If`` over at most :data:`MAX_TABLE_ENTRIES` entries. The
    result's interval is the values' range.
    """

    def __init__(self, name: str, value, tracer: Tracer, pending: tuple = ()):
        self._name, self._value, self._tracer, self._pending = name, value, tracer, pending

    def __repr__(self) -> str:
        return f"Table({self._name})"

    # concrete reads go to the real tensor
    def __len__(self):
        return len(self._value) if not self._pending else self._shape()[len(self._pending)]

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        if self._pending:
            raise Untraceable(f"{self._name}[…].{attr} with a symbolic index is not modelled")
        return getattr(self._value, attr)

    def _shape(self):
        return tuple(self._value.shape)

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if k is None or k is Ellipsis or isinstance(k, slice):
                if self._pending or any(isinstance(x, Sym) for x in keys):
                    raise Untraceable(f"{self._name}[…] with a slice, None or ... beside a symbolic index")
            elif isinstance(k, SymBool) or isinstance(k, bool):
                raise Untraceable(f"{self._name}[…] indexed by a Boolean (a mask index) is not modelled")
            elif isinstance(k, (Table, list, tuple)) or _is_array(k) and getattr(k, "ndim", 0) > 0:
                raise Untraceable(f"{self._name}[…] indexed by a tensor of several values is not modelled")
        if not self._pending and not any(isinstance(k, Sym) for k in keys):
            return self._concrete(self._value[key])
        pending = self._pending + tuple(keys)
        ndim = len(self._shape())
        if len(pending) > ndim:
            raise CannotRunOrUntraceable(f"cannot run: {self._name} has {ndim} dimension(s); indexed by {len(pending)}")
        if len(pending) < ndim:
            return Table(self._name, self._value, self._tracer, pending)
        return self._lookup(pending)

    def _concrete(self, element):
        """A concrete read: a row stays a table; an element is torch's (numpy's) own 0-d value, as the program
        would get it (its arithmetic with a traced value defers to the traced value; ``.item()`` works)."""
        if _is_array(element) and getattr(element, "ndim", 0) > 0:
            return Table(self._name, element, self._tracer)
        return element

    def _lookup(self, keys: tuple):
        from hasse.theory.deadline import tick

        tracer = self._tracer
        arr, dtype = _values_of(self._value)
        concrete = [None if isinstance(k, Sym) else int(k) for k in keys]
        for axis, c in enumerate(concrete):  # concrete indices first (torch's IndexError at every n)
            if c is not None and not -arr.shape[axis] <= c < arr.shape[axis]:
                raise CannotRunOrUntraceable(f"cannot run: index {c} is out of bounds for {self._name} "
                                             f"(dimension {axis} of size {arr.shape[axis]}): torch raises IndexError")
        sub = arr[tuple(slice(None) if c is None else c for c in concrete)]
        syms = [k for k in keys if isinstance(k, Sym)]
        terms = []
        for axis, k in zip([a for a, c in enumerate(concrete) if c is None], syms):
            length = arr.shape[axis]
            i = as_int(k, f"an index into {self._name}")
            if tracer is not None:
                tracer.oblige(z3.And(i >= -length, i < length),
                              f"{self._name}[i] is looked up outside -{length} … {length - 1} (torch raises)")
                self._position_condition(i, length)
            terms.append(z3.If(i < 0, i + length, i))
        if sub.size == 0:
            raise CannotRunOrUntraceable(f"cannot run: {self._name} is empty: every lookup raises IndexError")
        low, high = (bool(sub.min()), bool(sub.max())) if dtype == "bool" else (int(sub.min()), int(sub.max()))
        if len(terms) == 1:
            expr = _runs(sub.reshape(-1), terms[0], dtype, self._name)
        else:
            if sub.size > MAX_TABLE_ENTRIES:
                raise Untraceable(f"{self._name} looked up by {len(terms)} symbolic indices over {sub.size} entries "
                                  f"(at most {MAX_TABLE_ENTRIES}): use --assume or index it by one value")
            expr = _nested(sub, terms, dtype)
        tick()
        seen = getattr(tracer, "tables", None)
        if seen is not None:
            seen[self._name] = int(arr.shape[0])
        return _make_value(expr, dtype, (low, high), tracer)

    def _position_condition(self, i, length: int) -> None:
        """``n <= length`` as a side condition when the index ``i`` is a position (``q``, ``q - 1``: the tensor
        as given holds one value a position); any other index (``q + 1``, ``doc[q]``) only has its obligation."""
        tracer = self._tracer
        n, positions = getattr(tracer, "n", None), getattr(tracer, "positions", ())
        if n is None or not positions:
            return
        offsets = [z3.simplify(i - z3.Int(p)) for p in positions]  # the position itself, or minus a constant
        if any(z3.is_int_value(d) and d.as_long() <= 0 for d in offsets):  # (q + 1 past the end: the obligation)
            cond = n <= length
            if not any(cond.eq(c) for c in tracer.assumptions):
                tracer.assumptions.append(cond)
                tracer._solver.add(cond)

    def _refuse(self, *_a, **_k):
        raise Untraceable(f"arithmetic on the closure tensor {self._name} as a whole is not modelled (index it)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = __mod__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __xor__ = __invert__ = _refuse
    __hash__ = object.__hash__

    def __bool__(self):
        return bool(self._value)


def _runs(values: np.ndarray, i, dtype: str, name: str):
    """``values[i]`` for ``0 <= i < len(values)`` as an If-chain over the runs of equal values."""
    cuts = np.flatnonzero(values[1:] != values[:-1]) + 1
    if len(cuts) + 1 > MAX_TABLE_RUNS:
        raise Untraceable(f"the closure tensor {name} has {len(cuts) + 1} runs of equal values (at most "
                          f"{MAX_TABLE_RUNS} are modelled): use --assume {name}=nondecreasing|permutation|parents")
    starts = [0, *cuts.tolist()]
    const = (lambda v: z3.BoolVal(bool(v))) if dtype == "bool" else (lambda v: z3.IntVal(int(v)))
    out = const(values[starts[-1]])
    for start, end in reversed(list(zip(starts[:-1], starts[1:]))):
        out = z3.If(i < end, const(values[start]), out)
    return out


def _nested(values: np.ndarray, terms: list, dtype: str):
    const = (lambda v: z3.BoolVal(bool(v))) if dtype == "bool" else (lambda v: z3.IntVal(int(v)))
    if not terms:
        return const(values.item())
    i, rest = terms[0], terms[1:]
    out = _nested(values[-1], rest, dtype)
    for j in reversed(range(values.shape[0] - 1)):
        out = z3.If(i == j, _nested(values[j], rest, dtype), out)
    return out


def _make_value(expr, dtype: str, bounds: tuple, tracer: Tracer):
    """A tensor value of the traced program: SymBool for bool, else SymInt, with its dtype and bounds."""
    if isinstance(expr, bool):
        expr = z3.BoolVal(expr)
    elif isinstance(expr, int):
        expr = z3.IntVal(expr)
    cls = SymBool if dtype == "bool" else SymInt
    return cls(expr, tracer, dtype=dtype, bounds=bounds)


# --------------------------------------------------------------------------- tracing


_KIT = os.path.dirname(os.path.abspath(__file__))


def _user_frames(frames, files: Sequence[str], codes) -> list:
    """The frames of the traced program (its code objects, else its files, else outside the tracer)."""
    return ([f for f in frames if codes and f[1] in codes]
            or [f for f in frames if any(f[0].filename.endswith(x) for x in files if x)]
            or [f for f in frames if not os.path.abspath(f[0].filename).startswith(_KIT)])


def _where_in(exc: BaseException, files: Sequence[str], codes=None) -> str:
    """``file.py:LINE: `source``` of the innermost frame of the program in ``exc``'s traceback."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append((traceback.FrameSummary(tb.tb_frame.f_code.co_filename, tb.tb_lineno,
                                              tb.tb_frame.f_code.co_name), tb.tb_frame.f_code))
        tb = tb.tb_next
    chosen = _user_frames(frames, files, codes) or frames
    return _line_text(chosen[-1][0]) if chosen else ""


def _line_text(f) -> str:
    text = (linecache.getline(f.filename, f.lineno) or "").strip()
    name = f.filename.rsplit("/", 1)[-1]
    return f"{name}:{f.lineno}: `{text}`" if text else f"{name}:{f.lineno}"


def _running_line(files: Sequence[str], codes) -> str:
    """``file.py:LINE`` of the program's innermost frame running now (for obligations)."""
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append((traceback.FrameSummary(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name),
                       frame.f_code))
        frame = frame.f_back
    frames.reverse()
    chosen = _user_frames(frames, files, codes)
    if not chosen:
        return ""
    f = chosen[-1][0]
    return f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"


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


def _values_when(tracer: Tracer, hide: set) -> str:
    """`` when w = 3`` (a model of the path condition under the assumptions; '' when it is unconditional)."""
    if not tracer.taken:
        return ""
    solver = z3.Solver()
    solver.set("timeout", 2000)
    solver.add(*tracer.assumptions, tracer.path_condition())
    if solver.check() != z3.sat:
        return ""
    model = solver.model()
    names = sorted({str(c) for c in _constants_in(tracer.path_condition())} - hide)
    values = []
    for name in names:
        v = model.eval(z3.Int(name), model_completion=True)
        values.append(f"{name} = {v}")
    return f" when {', '.join(values)}" if values else ""


def _limit_classes() -> tuple:
    from hasse.solvers.symbolic import terms

    limit = getattr(terms, "TraceLimit", None)
    return (limit,) if limit is not None else ()


def _deadline_spent() -> bool:
    from hasse.theory.deadline import left

    spent = left()
    return spent is not None and spent <= 0


def trace(program: Callable, args: Sequence, *, assumptions=(), max_paths: int = MAX_PATHS,
          source: str | None = None, setup: Callable | None = None, n=None, assume: dict | None = None,
          flex: bool = False, strict_assume: bool = True) -> Traced:
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
    """
    from hasse.solvers.symbolic import terms
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
        terms._RUNNING.append(tracer)
        try:
            tick()  # a given --timeout bounds tracing (one tick a path; Tracer.decide ticks each decision)
            with watch:
                run = setup(tracer, program) if setup is not None else rebind(program, tracer)
                bound = [_bound(a, tracer) for a in args]
                result = run(*bound)
                try:
                    value = terms.mask_value(result, flex)  # flex: a mask_mod must return a bool tensor
                except Untraceable as exc:  # about what the program returns: named at its def line
                    code = getattr(inner, "__code__", None)
                    if code is not None:
                        exc.where = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}: `{code.co_name}`"
                    raise
        except _limit_classes() as exc:
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
            raise TraceError(_raises(exc, files, codes, tracer, positions)) from None
        finally:
            terms._RUNNING.pop()
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
        joined.append(z3.And(tracer.path_condition(), value))
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
        decisions = [d for _, d in tracer.taken]
        conds = [c for c, _ in tracer.taken]
        for i in range(len(prefix), len(decisions)):
            alternative = decisions[:i] + [not decisions[i]]
            if tracer.branch_feasible(alternative, conds[:i + 1]):
                pending.append(alternative)
    missing = sorted(set(assume) - seen_tensors)
    if missing and strict_assume:
        reads = ", ".join(sorted(seen_tensors)) or "none"
        raise TraceError(f"{source or 'the mask'}: --assume {missing[0]}: the program reads no closure or global "
                         f"tensor named {missing[0]} (the tensors it reads: {reads})")
    formula = z3.simplify(z3.Or(joined)) if len(joined) > 1 else z3.simplify(joined[0])
    return Traced(formula, conditions, obligations, indexes, paths, constants, tensors)


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


_PROPERTY_WORDS = {"nondecreasing": "nondecreasing", "bijection": "permutation", "backward": "parent array"}


def _bound(a, tracer: Tracer):
    """The argument ``a`` bound to this run's tracer (its dtype and bounds kept)."""
    if isinstance(a, Sym):
        out = copy.copy(a)
        out.tracer = tracer
        return out
    if isinstance(a, SymIndex):
        a.tracer = tracer
    return a


def _raises(exc: BaseException, files, codes, tracer: Tracer, positions: set) -> str:
    """``file.py:LINE: `source`: the program raises KeyError: 'x' when w = 3`` (one line)."""
    where_ = _where_in(exc, files, codes)
    if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), (Sym, SymIndex)):
        return f"{where_}: .{exc.name} of a traced value is not modelled".replace("\n", " ")
    if isinstance(exc, SystemExit):
        what = f"calls sys.exit({clip(repr(exc.code), 40)})"
    else:
        text = clip(" ".join(str(exc).split()), 200)
        what = f"raises {type(exc).__name__}" + (f": {text}" if text else "")
    return f"{where_}: the program {what}{_values_when(tracer, positions)}"


def symbols(*names: str) -> tuple[SymInt, ...]:
    """Fresh symbolic integers named ``names`` (no tracer yet: :func:`trace` binds them)."""
    return tuple(SymInt(z3.Int(name), None) for name in names)

"""Symbolic values that a mask program computes with, recorded as Z3 terms, with torch's semantics.

A mask_mod is integer arithmetic and comparisons. Called on :class:`SymInt` arguments
instead of index tensors, every operation it performs builds a Z3 term, so its result
is a Z3 formula of the symbolic positions, sizes and parameters: the *symbolic mask*.

Every value carries a ``dtype`` (:class:`DType`): ``None`` for a Python scalar (a
:class:`SymInt` is then an unbounded, exact Python int, a :class:`SymBool` a Python bool),
``"int64"``, ``"int32"`` or ``"bool"`` for a tensor of that dtype (FlexAttention's ``b, h,
q_idx, kv_idx`` are int64 tensors). The semantics is the one torch runs (design.md §12):

- promotion bool < int32 < int64; a Python int with a tensor takes the tensor's dtype (a
  bool tensor with a Python int gives int64); ``B + B`` is ``or``, ``B * B`` is ``and``;
  ``B - B``, ``-B``, ``B // B``, ``B % B``, ``abs(B)`` cannot run (torch raises);
- int64 and int32 arithmetic wraps (two's complement): a result that can leave the
  dtype's range under the tracer's assumptions is wrapped, ``x - 2^64 ((x + 2^63) div 2^64)``;
  whether it can is decided by an interval kept on every value (``lo``, ``hi``) and, when
  that does not settle it, by the tracer's solver; a Python int meeting an int64 tensor
  wraps for ``2^63 <= v < 2^64`` and cannot run (OverflowError) outside ``[-2^63, 2^64)``
  (an *obligation* when it is symbolic);
- ``a // b`` is floor division, ``a % b`` takes the sign of ``b``, ``fmod`` truncates; a
  divisor that may be 0 adds the obligation ``b != 0`` (torch and Python raise there; a
  claim is refuted where it fails, never restricted), a constant 0 divisor cannot run;
- ``&``, ``|``, ``^``, ``~`` on Booleans are logical, on integers two's complement (Z3
  bit-vectors of the width the values need, ``x & (2^k - 1)`` as ``x mod 2^k``); ``>>`` and
  ``<<`` by a constant 0 … 63, ``**`` by a constant 0 … 63;
- a tensor used as a Python truth value (``if``, ``and``, ``min``, a chained comparison)
  cannot run (torch raises "Boolean value of Tensor … is ambiguous"); a Python-level
  symbolic value asks the :class:`Tracer` which branch to take: the tracer runs the program
  once per feasible combination of branches and joins the results
  (:mod:`solvers.symbolic.trace`).

Anything else (floats, a symbolic value used as an index into a Python list, …) raises
:class:`Untraceable`; what torch itself would refuse raises :class:`CannotRun`; a bound of
the tracer raises :class:`TraceLimit`. The tracer turns them into one line naming the
operation and the line of the user's file. The torch and numpy functions the shims offer
(:mod:`solvers.symbolic.shims`) are built on :func:`arith`, :func:`compare`,
:func:`bitwise`, :func:`where`, :func:`minimum`, :func:`maximum`, :func:`clamp`,
:func:`cast` and :func:`logical` here.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import z3


_RUNNING: list = []  # the tracer of each program running now, innermost last (trace.trace pushes it for one run)


def free_constants(expr) -> set:
    """The uninterpreted Z3 constants of ``expr`` (positions, sizes, parameters, b0, h0)."""
    out, todo, seen = set(), [expr], set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.add(e)
        todo.extend(e.children())
    return out


class Untraceable(Exception):
    """An operation the symbolic tracer does not model (the message names it).

    Every instance made while a program runs is recorded on its tracer (``Tracer.raised``):
    a program that returns after one was raised caught it (a ``try``/``except`` around
    traced code), and :func:`~solvers.symbolic.trace.trace` refuses it.
    """

    def __init__(self, *args):
        super().__init__(*args)
        if _RUNNING:
            _RUNNING[-1].raised.append(self)


class CannotRun(Untraceable):
    """torch (or numpy, for an ``np.*`` function) raises here: the program cannot run (exit 2).

    The message starts with "cannot run: " (added when it does not)."""

    def __init__(self, *args):
        if args and isinstance(args[0], str) and not args[0].startswith("cannot run"):
            args = (f"cannot run: {args[0]}",) + args[1:]
        super().__init__(*args)


class TraceLimit(Untraceable):
    """A bound of the tracer was reached (a loop over a symbolic value, too many paths): unknown, exit 3."""


MAX_DECISIONS = 64  # branch decisions on symbolic values within one run of a program (one path)
RANGE_MS = 5000  # the time one "can this value leave its dtype's range?" question may take (unknown: wrapped)
MAX_POWER = 63  # the largest constant exponent of ``**`` (and shift of a Python int beyond 63 is refused at 4096)

TRUTH = ("a tensor used as a Python truth value (if/while/and/or/not/min/max or a chained comparison): torch "
         "raises 'Boolean value of Tensor with more than one value is ambiguous' and FlexAttention's vmap cannot "
         "branch on data; use torch.where / & / |")


class Tracer:
    """Branch decisions and obligations of one symbolic run (see :mod:`solvers.symbolic.trace`)."""

    def __init__(self, assumptions=()):
        self.assumptions = list(assumptions)  # what is known about the inputs (ranges, side conditions)
        self.choices: list[bool] = []  # forced decisions for this run, in order
        self.taken: list[tuple[z3.BoolRef, bool]] = []  # (condition, decision) of this run
        self.obligations: list[tuple[z3.BoolRef, str]] = []  # (must hold under the path, why)
        self.raised: list = []  # every Untraceable made while this run's program ran (see Untraceable)
        self.where: Callable[[], str] | None = None  # "file.py:LINE" of the user's line running now (set by trace)
        self.constants: set[int] = set()  # every concrete Python int that met a symbolic value (q < 1000: 1000)
        self._solver = z3.Solver()
        self._solver.add(*self.assumptions)
        self._range: z3.Solver | None = None  # for may_leave (a time limit; its own assumptions)
        self._range_count = 0

    def path_condition(self) -> z3.BoolRef:
        return z3.And([c if d else z3.Not(c) for c, d in self.taken]) if self.taken else z3.BoolVal(True)

    def decide(self, cond: z3.BoolRef) -> bool:
        """The branch this run takes on ``cond``: forced by ``choices``, else the first feasible one."""
        from hasse.theory.deadline import tick

        tick()  # a given --timeout bounds tracing too (a loop over a symbolic value decides once per turn)
        cond = z3.simplify(cond)
        if z3.is_true(cond):
            return True
        if z3.is_false(cond):
            return False
        i = len(self.taken)
        if i >= MAX_DECISIONS:  # `while d >= 4: d -= 4` on a symbolic d never ends: one path, unbounded
            raise TraceLimit(f"more than {MAX_DECISIONS} branch decisions on symbolic values in one run (a loop "
                             "whose condition is symbolic?); write it without a loop over symbolic values")
        if i < len(self.choices):
            decision = self.choices[i]
        else:
            decision = self._feasible(cond)
            self.choices.append(decision)
        self.taken.append((cond, decision))
        return decision

    def _feasible(self, cond) -> bool:
        """True if ``cond`` can hold on the current path (then that branch first), else False."""
        self._solver.push()
        self._solver.add(self.path_condition(), cond)
        ok = self._solver.check() != z3.unsat
        self._solver.pop()
        return ok

    def branch_feasible(self, prefix: list[bool], conds: list[z3.BoolRef]) -> bool:
        """Whether the path given by ``conds[i] == prefix[i]`` is satisfiable under the assumptions."""
        self._solver.push()
        self._solver.add(*[c if d else z3.Not(c) for c, d in zip(conds, prefix)])
        ok = self._solver.check() != z3.unsat
        self._solver.pop()
        return ok

    def oblige(self, cond: z3.BoolRef, why: str) -> None:
        """Record that ``cond`` must hold on this path; ``why`` gets the user's line ("masks.py:7: the divisor is 0")."""
        guarded = getattr(self, "guarded", None)
        at = guarded() if guarded is not None else ""
        if at:  # torch raises here at some values and the program's handler runs: not the path traced
            raise Untraceable(f"an operation that raises at some values ({why}) inside a try block at {at}: torch "
                              "would raise there and run the handler")
        where = self.where() if self.where is not None else ""
        if where and not why.startswith(where):
            why = f"{where}: {why}"
        self.obligations.append((z3.Implies(self.path_condition(), cond), why))

    def note(self, value) -> None:
        """Record a concrete Python int that met a symbolic value (``Tracer.constants``)."""
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            self.constants.add(int(value))

    def may_leave(self, expr, low: int, high: int) -> bool:
        """Whether ``expr`` can lie outside ``[low, high]`` on this path under the assumptions (unknown: True)."""
        return self.possible(z3.Or(expr < low, expr > high))

    def possible(self, cond) -> bool:
        """Whether ``cond`` can hold on this path under the assumptions (a time limit; unknown: True)."""
        if self._range is None:
            self._range = z3.Solver()
            self._range.set("timeout", RANGE_MS)
        self._range_count += 1
        self._range.push()
        self._range.add(*self.assumptions)  # the assumptions grow as checks record side conditions
        self._range.add(self.path_condition(), cond)
        answer = self._range.check()
        self._range.pop()
        return answer != z3.unsat


_NO_TRACER = None


def _tracer_of(*values) -> Tracer | None:
    for v in values:
        if isinstance(v, Sym) and v.tracer is not None:
            return v.tracer
    return _RUNNING[-1] if _RUNNING else None


# --------------------------------------------------------------------------- dtypes


class DType(str):
    """A dtype token, ``"bool"``, ``"int64"`` or ``"int32"``: equal to its name, to the shims'
    ``torch.bool``/``np.int64``… and to torch's own dtype of that name."""

    def __eq__(self, other):
        if isinstance(other, str):
            return str.__eq__(self, _ALIASES.get(other, other))
        name = _dtype_name(other)
        return name is not None and str.__eq__(self, name)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return f"torch.{str.__str__(self)}"

    is_floating_point = False
    is_signed = property(lambda self: str.__eq__(self, "bool") is False)


class NumpyDType(DType):
    """numpy's scalar types are callable: ``np.int64(x)`` casts (torch's dtypes are not)."""

    __hash__ = str.__hash__

    def __call__(self, value=0):
        return cast(value, DType(str.__str__(self)))

    def __repr__(self) -> str:
        return f"np.{str.__str__(self)}"


BOOL, INT64, INT32 = DType("bool"), DType("int64"), DType("int32")
_ALIASES = {"bool": "bool", "bool_": "bool", "int64": "int64", "long": "int64", "int32": "int32"}
RANGES = {"int64": (-2 ** 63, 2 ** 63 - 1), "int32": (-2 ** 31, 2 ** 31 - 1)}
BITS = {"int64": 64, "int32": 32}
_RANK = {"bool": 0, "int32": 1, "int64": 2}


def _dtype_name(obj) -> str | None:
    """The modelled dtype ``obj`` names (a token, a name, torch's or numpy's dtype, ``bool``/``int``), else None."""
    if isinstance(obj, DType):
        return str.__str__(obj)
    if isinstance(obj, str):
        return _ALIASES.get(obj)
    if obj is bool:
        return "bool"
    if obj is int:
        return "int64"
    text = str(obj)
    if type(obj).__name__ == "dtype" and text.startswith("torch."):  # torch's own dtype objects
        return _ALIASES.get(text[len("torch."):])
    if obj is None or isinstance(obj, (numbers.Number, Sym)):
        return None
    try:
        import numpy as np

        return _ALIASES.get(np.dtype(obj).name)
    except Exception:
        return None


def dtype_of(obj) -> DType:
    """The :class:`DType` named by ``obj`` (see :func:`_dtype_name`); other dtypes are not modelled."""
    if isinstance(obj, DType):
        return obj
    name = _dtype_name(obj)
    if name is None:
        raise Untraceable(f"the dtype {obj} is not modelled (bool, int64 and int32 are; floats are not)")
    return DType(name)


# --------------------------------------------------------------------------- values


def _const(expr):
    """The Python value of a constant Z3 term (int or bool), else None."""
    if z3.is_int_value(expr):
        return expr.as_long()
    if z3.is_true(expr):
        return True
    if z3.is_false(expr):
        return False
    return None


class Sym:
    """A symbolic value: a Z3 term, the tracer of the run that made it, its dtype (None: a Python
    scalar) and, for integers, an interval ``lo … hi`` known to contain it (None: unbounded)."""

    __slots__ = ("expr", "tracer", "dtype", "lo", "hi")
    __hash__ = object.__hash__  # == builds a formula; identity hashing keeps them usable as dict keys
    __array_ufunc__ = None  # numpy scalars defer to the reflected operators below
    __array_priority__ = 1000

    def __init__(self, expr, tracer: Tracer | None, dtype=None, bounds=None):
        self.expr = expr
        self.tracer = tracer
        self.dtype = None if dtype is None else dtype_of(dtype)
        lo, hi = bounds if bounds is not None else (None, None)
        value = _const(expr)
        if isinstance(value, bool):
            lo = hi = int(value)
        elif isinstance(value, int):
            lo = hi = value
        if self.dtype in RANGES:
            rlo, rhi = RANGES[self.dtype]
            lo = rlo if lo is None else max(lo, rlo)
            hi = rhi if hi is None else min(hi, rhi)
        self.lo, self.hi = lo, hi

    def rebound(self, tracer: Tracer | None) -> "Sym":
        """The same value bound to ``tracer`` (dtype and bounds kept)."""
        return type(self)(self.expr, tracer, self.dtype, (self.lo, self.hi))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.expr}{'' if self.dtype is None else ', ' + str(self.dtype)})"

    def _truth(self):
        raise NotImplementedError

    def __bool__(self):
        if self.dtype is not None:
            raise CannotRun(TRUTH)
        if self.tracer is None:
            raise Untraceable("a symbolic value used as a truth value outside a trace")
        return self.tracer.decide(self._truth())

    # a symbolic value has no float, no index and no length
    def __float__(self):
        raise Untraceable("a symbolic value converted to float (floats are not modelled)")

    def __index__(self):
        if self.dtype is not None:
            raise CannotRun("a tensor used as an index or a range bound (a Python list lookup, range(), …): torch "
                            "raises 'only integer tensors of a single element can be converted to an index'")
        raise Untraceable("a symbolic value used as an index or a range bound (a Python list lookup, range(), …)")

    def __int__(self):
        if self.dtype is not None:
            raise CannotRun("int() of a tensor (torch and vmap raise: a data-dependent Python value)")
        raise Untraceable("a symbolic value converted with int()")

    def __len__(self):
        raise Untraceable("len() of a symbolic value")

    def __iter__(self):
        raise Untraceable("iteration over a symbolic value")

    # ---- operators (torch's semantics on tensors, Python's on Python scalars)

    def __add__(self, o):
        return arith("+", self, o)

    def __radd__(self, o):
        return arith("+", o, self)

    def __sub__(self, o):
        return arith("-", self, o)

    def __rsub__(self, o):
        return arith("-", o, self)

    def __mul__(self, o):
        return arith("*", self, o)

    def __rmul__(self, o):
        return arith("*", o, self)

    def __floordiv__(self, o):
        return arith("//", self, o)

    def __rfloordiv__(self, o):
        return arith("//", o, self)

    def __mod__(self, o):
        return arith("%", self, o)

    def __rmod__(self, o):
        return arith("%", o, self)

    def __truediv__(self, o):
        raise Untraceable("true division '/' (a float; floats are not modelled); use '//'")

    __rtruediv__ = __truediv__

    def __pow__(self, o, modulo=None):
        return power(self, o)

    def __rpow__(self, o):
        raise Untraceable("'**' with a symbolic exponent is not modelled")

    def __neg__(self):
        return negate(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return absolute(self)

    def __invert__(self):
        return invert(self)

    def __and__(self, o):
        return bitwise("&", self, o)

    def __rand__(self, o):
        return bitwise("&", o, self)

    def __or__(self, o):
        return bitwise("|", self, o)

    def __ror__(self, o):
        return bitwise("|", o, self)

    def __xor__(self, o):
        return bitwise("^", self, o)

    def __rxor__(self, o):
        return bitwise("^", o, self)

    def __lshift__(self, o):
        return shift("<<", self, o)

    def __rlshift__(self, o):
        return shift("<<", o, self)

    def __rshift__(self, o):
        return shift(">>", self, o)

    def __rrshift__(self, o):
        return shift(">>", o, self)

    def __lt__(self, o):
        return compare("<", self, o)

    def __le__(self, o):
        return compare("<=", self, o)

    def __gt__(self, o):
        return compare(">", self, o)

    def __ge__(self, o):
        return compare(">=", self, o)

    def __eq__(self, o):
        return compare("==", self, o)

    def __ne__(self, o):
        return compare("!=", self, o)

    # ---- tensor methods (contract: what FlexAttention mask_mods call on their index tensors)

    def _tensor(self, name: str) -> "Sym":
        if self.dtype is None:
            kind = "bool" if isinstance(self, SymBool) else "int"
            raise CannotRun(f"'{kind}' object has no attribute '{name}' (a Python value, not a tensor)")
        return self

    def _new(self, name, size, fill, dtype):
        self._tensor(name)
        _scalar_shape(size, f".{name}()")
        return cast(fill, self.dtype if dtype is None else dtype_of(dtype), self.tracer)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        return self._new("new_ones", kw.get("size", size), True, dtype)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        return self._new("new_zeros", kw.get("size", size), False, dtype)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        if dtype is None and isinstance(fill_value, Sym):
            dtype = self.dtype
        return self._new("new_full", size, fill_value, dtype)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        self._tensor("new_tensor")
        return cast(data, self.dtype if dtype is None else dtype, self.tracer, strict=True)

    def clamp(self, min=None, max=None):  # noqa: A002 (torch's names)
        return clamp(self._tensor("clamp"), min, max, library="torch")

    clip = clamp

    def clamp_min(self, min):  # noqa: A002
        return clamp(self._tensor("clamp_min"), min, None, library="torch")

    def clamp_max(self, max):  # noqa: A002
        return clamp(self._tensor("clamp_max"), None, max, library="torch")

    def abs(self):
        return absolute(self._tensor("abs"))

    absolute = abs

    def bool(self):
        return cast(self._tensor("bool"), BOOL)

    def long(self):
        return cast(self._tensor("long"), INT64)

    def int(self):
        return cast(self._tensor("int"), INT32)

    def to(self, *args, dtype=None, **_kw):
        self._tensor("to")
        for a in args:  # .to(device), .to(dtype), .to(device, dtype), .to(other)
            if isinstance(a, Sym):
                dtype = a.dtype
            elif _dtype_name(a) is not None:
                dtype = dtype_of(a)
            elif not isinstance(a, str) and type(a).__name__ != "device":
                raise Untraceable(f".to({a!r}) is not modelled (a dtype or a device is)")
        return self if dtype is None else cast(self, dtype)

    def type(self, dtype=None, **_kw):
        self._tensor("type")
        if dtype is None:
            raise Untraceable(".type() without a dtype (a type name string) is not modelled")
        return cast(self, dtype)

    def astype(self, dtype, **_kw):  # numpy's spelling
        return cast(self._tensor("astype"), dtype)

    def remainder(self, o):
        return arith("%", self._tensor("remainder"), o)

    def fmod(self, o):
        return arith("fmod", self._tensor("fmod"), o)

    def floor_divide(self, o):
        return arith("//", self._tensor("floor_divide"), o)

    def div(self, o, rounding_mode=None):
        return divide(self._tensor("div"), o, rounding_mode)

    def logical_and(self, o):
        return logical("and", self._tensor("logical_and"), o)

    def logical_or(self, o):
        return logical("or", self._tensor("logical_or"), o)

    def logical_xor(self, o):
        return logical("xor", self._tensor("logical_xor"), o)

    def logical_not(self):
        return logical("not", self._tensor("logical_not"))

    def bitwise_and(self, o):
        return bitwise("&", self._tensor("bitwise_and"), o)

    def bitwise_or(self, o):
        return bitwise("|", self._tensor("bitwise_or"), o)

    def bitwise_xor(self, o):
        return bitwise("^", self._tensor("bitwise_xor"), o)

    def bitwise_not(self):
        return invert(self._tensor("bitwise_not"))

    def bitwise_left_shift(self, o):
        return shift("<<", self._tensor("bitwise_left_shift"), o)

    def bitwise_right_shift(self, o):
        return shift(">>", self._tensor("bitwise_right_shift"), o)

    def eq(self, o):
        return compare("==", self._tensor("eq"), o)

    def ne(self, o):
        return compare("!=", self._tensor("ne"), o)

    def lt(self, o):
        return compare("<", self._tensor("lt"), o)

    def le(self, o):
        return compare("<=", self._tensor("le"), o)

    def gt(self, o):
        return compare(">", self._tensor("gt"), o)

    def ge(self, o):
        return compare(">=", self._tensor("ge"), o)

    def minimum(self, o):
        return minimum(self._tensor("minimum"), o, library="torch")

    def maximum(self, o):
        return maximum(self._tensor("maximum"), o, library="torch")

    def where(self, condition, other):
        return where(condition, self._tensor("where"), other, library="torch")

    def _same(self, *_a, **_k):
        return self  # a mask_mod sees scalars (vmap): a view, an expansion, a copy of one is the same value

    unsqueeze = view = reshape = expand = squeeze = contiguous = clone = detach = cpu = cuda = expand_as = _same
    view_as = reshape_as = flatten = _same

    @property
    def device(self):
        self._tensor("device")
        return "cpu"

    @property
    def shape(self):
        raise CannotRun(".shape of an index tensor (under vmap it is a scalar's; a shape bakes in n)")

    def _refused(self, name):
        def refuse(*_a, **_k):
            raise CannotRun(f".{name}() of an index tensor: torch's vmap raises (a data-dependent Python value, "
                            "or a shape that bakes in n)")

        return refuse

    item = property(lambda self: self._refused("item"))
    tolist = property(lambda self: self._refused("tolist"))
    size = property(lambda self: self._refused("size"))
    numel = property(lambda self: self._refused("numel"))
    dim = property(lambda self: self._refused("dim"))
    nonzero = property(lambda self: self._refused("nonzero"))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotModelled(f"the tensor method or attribute .{name} is not modelled")


class NotModelled(Untraceable, AttributeError):
    """An attribute of a symbolic value that is not modelled (an AttributeError too, for ``hasattr``)."""


class SymInt(Sym):
    """A symbolic integer (a position, a size, a parameter, or arithmetic on them).

    ``SymInt(expr, tracer)`` is a Python int (unbounded); ``dtype="int64"`` an int64 tensor;
    ``bounds=(lo, hi)`` an interval known to hold it (the tracer's domain bound of an input).
    """

    __slots__ = ()

    def __init__(self, expr, tracer: Tracer | None, dtype=None, bounds=None):
        super().__init__(expr, tracer, dtype, bounds)
        if self.dtype == BOOL:
            raise ValueError("a SymInt of dtype bool: use SymBool")

    def _truth(self):
        return self.expr != 0


class SymBool(Sym):
    """A symbolic Boolean (a comparison, or logic on comparisons): a Python bool or a bool tensor."""

    __slots__ = ()

    def __init__(self, expr, tracer: Tracer | None, dtype=None, bounds=None):
        super().__init__(expr, tracer, dtype, (0, 1))
        if self.dtype not in (None, BOOL):
            raise ValueError("a SymBool of an integer dtype: use SymInt")

    def _truth(self):
        return self.expr


def as_int(value, what: str = "value"):
    """A Z3 integer term for ``value`` (SymInt, SymBool as 0/1, Python int or bool)."""
    if isinstance(value, SymInt):
        return value.expr
    if isinstance(value, SymBool):
        return z3.If(value.expr, z3.IntVal(1), z3.IntVal(0))
    if isinstance(value, bool):
        return z3.IntVal(int(value))
    if isinstance(value, numbers.Integral):
        return z3.IntVal(int(value))
    if hasattr(value, "item") and hasattr(value, "dtype"):  # a numpy or torch scalar
        item = value.item()
        if isinstance(item, (bool, int)):
            return z3.IntVal(int(item))
    raise Untraceable(f"{what} of type {type(value).__name__} is not an integer")


def as_bool(value, what: str = "value"):
    """A Z3 Boolean term for ``value`` (SymBool, Python bool, or an integer compared with 0)."""
    if isinstance(value, SymBool):
        return value.expr
    if isinstance(value, bool):
        return z3.BoolVal(value)
    if isinstance(value, SymInt):
        return value.expr != 0
    if isinstance(value, numbers.Integral):
        return z3.BoolVal(bool(value))
    if hasattr(value, "item") and hasattr(value, "dtype"):
        return z3.BoolVal(bool(value.item()))
    raise Untraceable(f"{what} of type {type(value).__name__} is not a Boolean")


def _plain(value):
    """A concrete operand as a Python bool or int (numpy and torch scalars by their value)."""
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if hasattr(value, "item") and hasattr(value, "dtype"):  # a numpy or torch scalar / 0-d tensor
        shape = tuple(getattr(value, "shape", ()))
        if shape and any(s != 1 for s in shape):
            raise Untraceable(f"a {type(value).__name__} of shape {shape} meets a symbolic value (a tensor or array "
                              "the program holds: not modelled here)")
        item = value.item()
        if isinstance(item, (bool, int)):
            return item
        raise Untraceable(f"a {type(item).__name__} value (floats are not modelled)")
    if isinstance(value, float):
        raise Untraceable("a float (floats are not modelled)")
    raise Untraceable(f"a value of type {type(value).__name__} (only integers and Booleans are modelled)")


def lift(value, tracer: Tracer | None = None, record: bool = True) -> Sym:
    """``value`` as a Sym: a Sym unchanged, a Python bool → SymBool, an integer → SymInt (dtype None)."""
    if isinstance(value, Sym):
        return value
    v = _plain(value)
    if isinstance(v, bool):
        return SymBool(z3.BoolVal(v), tracer)
    tracer = tracer if tracer is not None else (_RUNNING[-1] if _RUNNING else None)
    if record and tracer is not None:
        tracer.note(v)
    return SymInt(z3.IntVal(v), tracer)


def _view(s: Sym):
    """``(expr, lo, hi)``: ``s`` as an integer term (a Boolean as 0/1)."""
    if isinstance(s, SymBool):
        return z3.If(s.expr, z3.IntVal(1), z3.IntVal(0)), 0, 1
    return s.expr, s.lo, s.hi


def _fits(lo, hi, low, high) -> bool:
    return lo is not None and hi is not None and low <= lo and hi <= high


def _may_leave(tracer, expr, lo, hi, low, high) -> bool:
    if _fits(lo, hi, low, high):
        return False
    if lo is not None and hi is not None and (hi < low or lo > high):
        return True
    return tracer is None or tracer.may_leave(expr, low, high)


def _wrap(expr, bits: int):
    """``expr`` taken modulo ``2^bits`` into ``[-2^(bits-1), 2^(bits-1))`` (two's complement)."""
    m, half = 2 ** bits, 2 ** (bits - 1)
    value = _const(expr)
    if isinstance(value, int) and not isinstance(value, bool):
        return z3.IntVal((value + half) % m - half)
    return expr - m * ((expr + half) / m)  # Z3's div by a positive constant is floor division


def _fit(expr, lo, hi, dtype, tracer):
    """``(expr, lo, hi)`` of an int tensor result: wrapped when it can leave the dtype's range."""
    low, high = RANGES[dtype]
    if not _may_leave(tracer, expr, lo, hi, low, high):
        return expr, max(lo if lo is not None else low, low), min(hi if hi is not None else high, high)
    return _wrap(expr, BITS[dtype]), low, high


def _promote(a: Sym, b: Sym):
    """torch's result dtype of ``a op b`` (None: both Python scalars)."""
    da, db = a.dtype, b.dtype
    if da is None and db is None:
        return None
    if da is None or db is None:
        tensor, other = (da, b) if da is not None else (db, a)
        if tensor == BOOL and isinstance(other, SymInt):
            return INT64  # a bool tensor with a Python int
        return tensor
    return da if _RANK[da] >= _RANK[db] else db


def _show(v: int) -> str:
    for k in range(1, 200):
        for sign in (1, -1):
            for delta in (0, -1, 1):
                if v == sign * 2 ** k + delta and k > 8:
                    text = f"{'-' if sign < 0 else ''}2**{k}"
                    return text + (f" {'+' if delta > 0 else '-'} 1" if delta else "")
    return str(v)


def _convert(s: Sym, dtype, tracer, strict: bool = False, library: str = "torch"):
    """``(expr, lo, hi)`` of ``s`` as an element of an int tensor of ``dtype``.

    A tensor's value is already in range (a bool as 0/1). A Python int is converted as torch
    does: for int64, wrapped when ``2^63 <= v < 2^64`` (not when ``strict``: where/clamp and
    numpy raise there), and the program cannot run outside (an obligation when symbolic).
    """
    expr, lo, hi = _view(s)
    if s.dtype is not None or isinstance(s, SymBool):
        return expr, lo, hi
    low, high = RANGES[dtype]
    who = "numpy" if library == "numpy" else "torch"
    if dtype == INT32:
        if _may_leave(tracer, expr, lo, hi, low, high):
            value = _const(expr)
            if strict and value is not None:
                raise CannotRun(f"{who} raises: the Python int {_show(value)} does not fit int32")
            raise Untraceable("a Python int outside the int32 range with an int32 tensor (torch truncates it): "
                              "not modelled")
        return expr, lo, hi
    top = high if strict else 2 ** 64 - 1
    value = _const(expr)
    if value is not None:
        if not low <= value <= top:
            raise CannotRun(f"{who} raises OverflowError: the Python int {_show(value)} does not fit int64")
        v = _const(_wrap(expr, 64))
        return z3.IntVal(v), v, v
    if _may_leave(tracer, expr, lo, hi, low, top):
        if tracer is None:
            raise Untraceable("a symbolic Python int that may not fit int64, outside a trace")
        tracer.oblige(z3.And(expr >= low, expr <= top),
                      f"a Python int does not fit int64 ({who} raises OverflowError)")
        lo = low if lo is None else max(lo, low)
        hi = top if hi is None else min(hi, top)
    if not strict and _may_leave(tracer, expr, lo, hi, low, high):
        return _wrap(expr, 64), low, high
    return expr, lo, hi


# --------------------------------------------------------------------------- interval arithmetic


def _add(a, b):
    return None if a is None or b is None else a + b


def _corners(xl, xh, yl, yh, f):
    if None in (xl, xh, yl, yh):
        return None, None
    values = [f(x, y) for x in (xl, xh) for y in (yl, yh)]
    return min(values), max(values)


def _magnitude(lo, hi):
    return None if lo is None or hi is None else max(abs(lo), abs(hi))


# --------------------------------------------------------------------------- arithmetic


_OPNAME = {"+": "'+'", "-": "'-'", "*": "'*'", "//": "'//' (floor_divide)", "%": "'%' (remainder)",
           "fmod": "fmod", "trunc": "div(rounding_mode='trunc')"}


def _divisor(y, yl, yh, tracer, python: bool, library: str):
    """Check a divisor: a constant 0 cannot run; one that may be 0 is an obligation ``y != 0``."""
    y = z3.simplify(y)
    value = _const(y)
    if value is not None:
        if value == 0:
            raise CannotRun("a division or modulo by 0: " + ("Python raises ZeroDivisionError" if python else
                            f"{'numpy' if library == 'numpy' else 'torch'} raises ZeroDivisionError"))
        return y
    if (yl is not None and yl > 0) or (yh is not None and yh < 0):
        return y
    if tracer is None:
        raise Untraceable("a division by a value that may be 0, outside a trace")
    if tracer.possible(y == 0):  # else the assumptions (domain, side conditions) exclude it: no obligation
        tracer.oblige(y != 0, "the divisor is 0")
    return y


def _sign(y, yl, yh, tracer):
    """A narrower interval for a divisor from the assumptions: ``(0, yh)`` when it cannot be negative."""
    if (yl is not None and yl >= 0) or (yh is not None and yh <= 0) or tracer is None:
        return yl, yh
    if not tracer.possible(y < 0):
        return 0, yh
    if not tracer.possible(y > 0):
        return yl, 0
    return yl, yh


def _floor_div(x, y, yl, yh):
    if yl is not None and yl >= 0:  # y = 0 fails the obligation y != 0: only y > 0 is read
        return x / y
    if yh is not None and yh <= 0:
        return (-x) / (-y)
    return z3.If(y > 0, x / y, (-x) / (-y))  # Z3's div is floor only for a positive divisor


def _floor_mod(x, y, yl, yh):
    if yl is not None and yl >= 0:
        return x % y  # Z3's mod is Python's for a positive divisor
    return x - y * _floor_div(x, y, yl, yh)


def _trunc_div(x, y, xl, xh, yl, yh):
    ax = x if xl is not None and xl >= 0 else z3.If(x >= 0, x, -x)
    ay = y if yl is not None and yl > 0 else z3.If(y >= 0, y, -y)
    q = ax / ay
    same = z3.BoolVal(True) if (xl is not None and xl >= 0 and yl is not None and yl > 0) else (x >= 0) == (y >= 0)
    return q if z3.is_true(same) else z3.If(same, q, -q)


def _exact(op, x, xl, xh, y, yl, yh, tracer, python: bool, library: str):
    """The exact integer result of ``x op y`` and its interval."""
    if op == "+":
        return x + y, _add(xl, yl), _add(xh, yh)
    if op == "-":
        return x - y, _add(xl, None if yh is None else -yh), _add(xh, None if yl is None else -yl)
    if op == "*":
        lo, hi = _corners(xl, xh, yl, yh, lambda a, b: a * b)
        return x * y, lo, hi
    y = _divisor(y, yl, yh, tracer, python, library)
    yl, yh = _sign(y, yl, yh, tracer)
    if op == "//":
        if xl is not None and xl >= 0 and yl is not None and yl >= 1 and xh is not None and yh is not None:
            lo, hi = xl // yh, xh // yl
        else:
            m = _magnitude(xl, xh)
            lo, hi = (None, None) if m is None else (-m, m)
        return _floor_div(x, y, yl, yh), lo, hi
    if op == "trunc":
        m = _magnitude(xl, xh)
        return _trunc_div(x, y, xl, xh, yl, yh), (None if m is None else -m), m
    mb = _magnitude(yl, yh)
    ma = _magnitude(xl, xh)
    bound = None if mb is None else mb - 1
    if ma is not None:
        bound = ma if bound is None else min(bound, ma)
    if op == "%":
        if yl is not None and yl > 0:
            lo, hi = 0, None if yh is None else yh - 1
            if xl is not None and xl >= 0 and xh is not None:
                hi = xh if hi is None else min(hi, xh)
        elif yh is not None and yh < 0:
            lo, hi = (None if yl is None else yl + 1), 0
        else:  # |r| < |y| only: -1 % 5 == 4 exceeds |x|
            edge = None if mb is None else mb - 1
            lo, hi = (None if edge is None else -edge), edge
        return _floor_mod(x, y, yl, yh), lo, hi
    if op == "fmod":  # the sign of the dividend
        lo = 0 if xl is not None and xl >= 0 else (None if bound is None else -bound)
        hi = 0 if xh is not None and xh <= 0 else bound
        return x - y * _trunc_div(x, y, xl, xh, yl, yh), lo, hi
    raise ValueError(op)


def arith(op: str, a, b, tracer: Tracer | None = None, library: str = "torch") -> Sym:
    """``a op b`` for ``op`` in ``+ - * // % fmod trunc``, on tensors (torch) or Python scalars (Python)."""
    tracer = tracer if tracer is not None else _tracer_of(a, b)
    A, B = lift(a, tracer), lift(b, tracer)
    dtype = _promote(A, B)
    if dtype == BOOL:  # two bool tensors, or a bool tensor and a Python bool
        if op == "+":
            return SymBool(z3.Or(A.expr, B.expr), tracer, BOOL)
        if op == "*":
            return SymBool(z3.And(A.expr, B.expr), tracer, BOOL)
        if op == "-":
            raise CannotRun("'-' of two bool tensors: torch raises RuntimeError ('Subtraction, the `-` operator, "
                            "with two bool tensors is not supported'); use ^ or logical_xor")
        raise CannotRun(f"{_OPNAME[op]} of two bool tensors: torch raises NotImplementedError (not implemented "
                        "for 'Bool')")
    if dtype is None:
        x, xl, xh = _view(A)
        y, yl, yh = _view(B)
        if op in ("fmod", "trunc") and library == "torch":
            raise CannotRun(f"torch.{'fmod' if op == 'fmod' else 'div'}() of two Python ints: torch raises TypeError "
                            "(it needs a tensor)")
        e, lo, hi = _exact(op, x, xl, xh, y, yl, yh, tracer, True, library)
        return SymInt(e, tracer, None, (lo, hi))
    x, xl, xh = _convert(A, dtype, tracer, library=library)
    y, yl, yh = _convert(B, dtype, tracer, library=library)
    e, lo, hi = _exact(op, x, xl, xh, y, yl, yh, tracer, False, library)
    e, lo, hi = _fit(e, lo, hi, dtype, tracer)
    return SymInt(e, tracer, dtype, (lo, hi))


def divide(a, b, rounding_mode=None, tracer: Tracer | None = None) -> Sym:
    """``torch.div(a, b, rounding_mode=…)``: ``"floor"`` is ``//``, ``"trunc"`` truncates; none gives floats."""
    if rounding_mode == "floor":
        return arith("//", a, b, tracer)
    if rounding_mode == "trunc":
        return arith("trunc", a, b, tracer)
    if rounding_mode is None:
        raise Untraceable("torch.div() without rounding_mode gives floats (not modelled); use rounding_mode='floor'")
    raise CannotRun(f"torch.div(rounding_mode={rounding_mode!r}): torch raises ValueError")


def negate(a) -> Sym:
    A = lift(a)
    tracer = A.tracer
    if A.dtype == BOOL:
        raise CannotRun("'-' of a bool tensor: torch raises RuntimeError ('Negation, the `-` operator, on a bool "
                        "tensor is not supported'); use ~ or logical_not")
    x, lo, hi = _view(A)
    e, lo, hi = -x, (None if hi is None else -hi), (None if lo is None else -lo)
    if A.dtype is not None:
        e, lo, hi = _fit(e, lo, hi, A.dtype, tracer)
    return SymInt(e, tracer, A.dtype, (lo, hi))


def absolute(a, library: str = "torch") -> Sym:
    A = lift(a)
    tracer = A.tracer
    if A.dtype == BOOL:
        if library == "numpy":
            return A
        raise CannotRun("abs() of a bool tensor: torch raises NotImplementedError ('abs_cpu' not implemented for "
                        "'Bool')")
    x, lo, hi = _view(A)
    if lo is not None and lo >= 0:
        return SymInt(x, tracer, A.dtype, (lo, hi))
    if hi is not None and hi <= 0:
        e, lo, hi = -x, -hi, (None if lo is None else -lo)
    else:
        e, lo, hi = z3.If(x >= 0, x, -x), 0, (None if lo is None or hi is None else max(-lo, hi))
    if A.dtype is not None:
        e, lo, hi = _fit(e, lo, hi, A.dtype, tracer)  # abs(-2^63) = -2^63
    return SymInt(e, tracer, A.dtype, (lo, hi))


def invert(a) -> Sym:
    """``~a``: logical on a bool tensor, ``-1 - a`` on integers (two's complement; never overflows)."""
    A = lift(a)
    if isinstance(A, SymBool) and A.dtype == BOOL:
        return SymBool(z3.Not(A.expr), A.tracer, BOOL)
    x, lo, hi = _view(A)  # a Python bool is the int 0/1 here, as in Python (~True == -2)
    return SymInt(-1 - x, A.tracer, A.dtype, (None if hi is None else -1 - hi, None if lo is None else -1 - lo))


def power(a, k) -> Sym:
    """``a ** k`` for a constant ``k`` in ``0 … 63`` (wrapped for a tensor)."""
    A = lift(a)
    tracer = A.tracer
    if isinstance(k, Sym):
        value = _const(k.expr)
        if value is None:
            raise Untraceable("'**' with a symbolic exponent is not modelled")
        k = value
    k = _plain(k)
    if tracer is not None:
        tracer.note(k)
    k = int(k)
    if k < 0:
        if A.dtype is not None:
            raise CannotRun("a negative power of an integer tensor: torch raises RuntimeError ('Integers to negative "
                            "integer powers are not allowed')")
        raise Untraceable("a negative power of an integer (a float) is not modelled")
    if k > MAX_POWER:
        raise Untraceable(f"'**' with an exponent above {MAX_POWER} is not modelled")
    dtype = INT64 if A.dtype == BOOL else A.dtype
    x, xl, xh = _view(A)
    e = z3.IntVal(1)
    for _ in range(k):
        e = e * x
    if xl is None or xh is None:
        lo = hi = None
    else:
        values = [xl ** k, xh ** k] + ([0] if xl < 0 < xh else [])
        lo, hi = min(values), max(values)
    if dtype is not None:
        e, lo, hi = _fit(e, lo, hi, dtype, tracer)
    return SymInt(e, tracer, dtype, (lo, hi))


# --------------------------------------------------------------------------- comparisons and bits


_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def compare(op: str, a, b, tracer: Tracer | None = None, library: str = "torch") -> SymBool:
    """``a op b``: a bool tensor when a tensor is involved, else a Python bool."""
    tracer = tracer if tracer is not None else _tracer_of(a, b)
    if op in ("==", "!=") and any(v is None or isinstance(v, str) for v in (a, b)):
        return SymBool(z3.BoolVal(op == "!="), tracer)  # x == None: Python's False
    A, B = lift(a, tracer), lift(b, tracer)
    out = BOOL if (A.dtype is not None or B.dtype is not None) else None
    if isinstance(A, SymBool) and isinstance(B, SymBool) and op in ("==", "!="):
        e = A.expr == B.expr
        return SymBool(e if op == "==" else z3.Not(e), tracer, out)
    dtype = _promote(A, B)
    if dtype is None or dtype == BOOL:
        x, _, _ = _view(A)
        y, _, _ = _view(B)
    else:
        x, _, _ = _convert(A, dtype, tracer, library=library)
        y, _, _ = _convert(B, dtype, tracer, library=library)
    return SymBool(_COMPARE[op](x, y), tracer, out)


def _signed_bits(lo, hi):
    return max((v if v >= 0 else -v - 1).bit_length() + 1 for v in (lo, hi))


def _bits(op, x, xl, xh, y, yl, yh, maxbits):
    """Two's complement ``x op y`` (``&``, ``|``, ``^``) on integers in the given intervals, and its interval."""
    for c, (z, zl, zh) in ((_const(y), (x, xl, xh)), (_const(x), (y, yl, yh))):
        if op == "&" and isinstance(c, int) and c >= 0 and (c & (c + 1)) == 0:  # x & (2^k - 1) = x mod 2^k
            if c == 0:
                return z3.IntVal(0), 0, 0
            hi = c if zl is None or zl < 0 or zh is None else min(c, zh)
            return z % (c + 1), 0, hi
    if None in (xl, xh, yl, yh):
        raise Untraceable("bitwise arithmetic on an unbounded Python int (give its range) is not modelled")
    if xl >= 0 and yl >= 0:
        width = max(xh.bit_length(), yh.bit_length(), 1)
        signed = False
    else:
        width = min(max(_signed_bits(xl, xh), _signed_bits(yl, yh)), maxbits or 10 ** 9)
        signed = True
    bx, by = z3.Int2BV(x, width), z3.Int2BV(y, width)
    r = {"&": lambda p, q: p & q, "|": lambda p, q: p | q, "^": lambda p, q: p ^ q}[op](bx, by)
    e = z3.BV2Int(r, is_signed=signed)
    if not signed:
        return e, 0, (min(xh, yh) if op == "&" else 2 ** width - 1)
    return e, -2 ** (width - 1), 2 ** (width - 1) - 1


def bitwise(op: str, a, b, tracer: Tracer | None = None, library: str = "torch") -> Sym:
    """``a & b``, ``a | b``, ``a ^ b``: logical on Booleans, two's complement on integers."""
    tracer = tracer if tracer is not None else _tracer_of(a, b)
    A, B = lift(a, tracer), lift(b, tracer)
    if isinstance(A, SymBool) and isinstance(B, SymBool):
        logic = {"&": z3.And, "|": z3.Or, "^": z3.Xor}[op]
        return SymBool(logic(A.expr, B.expr), tracer, BOOL if (A.dtype or B.dtype) else None)
    dtype = _promote(A, B)
    if dtype is None:
        x, xl, xh = _view(A)
        y, yl, yh = _view(B)
        e, lo, hi = _bits(op, x, xl, xh, y, yl, yh, None)
        return SymInt(e, tracer, None, (lo, hi))
    x, xl, xh = _convert(A, dtype, tracer, library=library)
    y, yl, yh = _convert(B, dtype, tracer, library=library)
    e, lo, hi = _bits(op, x, xl, xh, y, yl, yh, BITS[dtype])
    return SymInt(e, tracer, dtype, (lo, hi))


def shift(op: str, a, c, tracer: Tracer | None = None) -> Sym:
    """``a << c`` / ``a >> c`` by a constant count (arithmetic shift: floor by ``2^c``; ``<<`` wraps)."""
    tracer = tracer if tracer is not None else _tracer_of(a, c)
    if isinstance(c, Sym):
        count = _const(c.expr)
        if count is None:
            raise Untraceable("a shift by a symbolic count is not modelled")
        tensor_count = c.dtype is not None
    else:
        count, tensor_count = _plain(c), False
        if tracer is not None:
            tracer.note(count)
    count = int(count)
    A = lift(a, tracer)
    dtype = INT64 if A.dtype == BOOL or (A.dtype is None and tensor_count) else A.dtype
    x, lo, hi = _view(A)
    if dtype is not None:
        if isinstance(A, SymInt) and A.dtype is None:
            x, lo, hi = _convert(A, dtype, tracer)
        if not 0 <= count < BITS[dtype]:
            raise Untraceable(f"a shift of a tensor by {count} (outside 0 … {BITS[dtype] - 1}: implementation-"
                              "defined in torch's kernels) is not modelled")
    elif count < 0:
        raise CannotRun("a shift by a negative count: Python raises ValueError ('negative shift count')")
    elif count > 4096:
        raise Untraceable(f"a shift by {count} is not modelled")
    p = 2 ** count
    if op == ">>":
        return SymInt(x / p if count else x, tracer, dtype,
                      (None if lo is None else lo >> count, None if hi is None else hi >> count))
    e, lo, hi = x * p, (None if lo is None else lo * p), (None if hi is None else hi * p)
    if dtype is not None:
        e, lo, hi = _fit(e, lo, hi, dtype, tracer)
    return SymInt(e, tracer, dtype, (lo, hi))


# --------------------------------------------------------------------------- torch/numpy functions


def _is_tensor(v) -> bool:
    return isinstance(v, Sym) and v.dtype is not None


def cast(value, dtype, tracer: Tracer | None = None, strict: bool = True) -> Sym:
    """``value`` as a tensor of ``dtype`` (``.to(dtype)``, ``.bool()``, ``torch.tensor(v, dtype=…)``).

    A Python int must fit int64 (``torch.tensor(2**63)`` raises); int64 → int32 truncates
    (two's complement), anything → bool is ``!= 0``.
    """
    tracer = tracer if tracer is not None else _tracer_of(value)
    dtype = dtype_of(dtype)
    if isinstance(value, (list, tuple)):
        raise Untraceable("a tensor made from a list (a shape that bakes in a size) is not modelled")
    V = lift(value, tracer)
    if dtype == BOOL:
        if isinstance(V, SymBool):
            return SymBool(V.expr, tracer, BOOL)
        return SymBool(V.expr != 0, tracer, BOOL)
    if V.dtype is None and isinstance(V, SymInt):
        x, lo, hi = _convert(V, dtype, tracer, strict=strict)
    else:
        x, lo, hi = _view(V)
    if dtype == INT32 and V.dtype != INT32 and V.dtype != BOOL:
        x, lo, hi = _fit(x, lo, hi, INT32, tracer)
    return SymInt(x, tracer, dtype, (lo, hi))


def _scalar_shape(size, what: str) -> None:
    """A tensor made by the program must have the shape of one value (``()``, ``(1,)``, …)."""
    if isinstance(size, (list, tuple)) and len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    dims = list(size) if isinstance(size, (list, tuple)) else [size]
    for d in dims:
        if isinstance(d, Sym) or not isinstance(d, numbers.Integral) or int(d) != 1:
            raise Untraceable(f"{what} of shape {tuple(size) if isinstance(size, (list, tuple)) else size}: only a "
                              "tensor of one value is modelled (a shape bakes in a size)")


def _branch(v, tracer, dtype, library):
    """A branch of where() / a bound of clamp() as an element of ``dtype``: ``(expr, lo, hi)``."""
    V = lift(v, tracer)
    if dtype == BOOL:
        return V.expr, 0, 1
    return _convert(V, dtype, tracer, strict=True, library=library)


def where(cond, a, b, *, library: str = "numpy") -> Sym:
    """``where(cond, a, b)`` as Z3 ``If``; both branches are evaluated (an obligation in a branch holds everywhere).

    torch needs a bool tensor as the condition; numpy takes any truth value.
    """
    tracer = _tracer_of(cond, a, b)
    C = lift(cond, tracer)
    if library == "torch" and not (isinstance(C, SymBool) and C.dtype == BOOL):
        what = "a Python value" if C.dtype is None else f"a tensor of dtype {C.dtype}"
        raise CannotRun(f"torch.where() with {what} as its condition: torch raises (it needs a bool tensor)")
    c = C.expr if isinstance(C, SymBool) else C.expr != 0
    A, B = lift(a, tracer), lift(b, tracer)
    if A.dtype is None and B.dtype is None:
        dtype = BOOL if isinstance(A, SymBool) and isinstance(B, SymBool) else INT64
        tensor = C.dtype is not None or library == "torch"
        if not tensor:  # numpy on Python values only: a numpy scalar, computed exactly here
            if dtype == BOOL:
                return SymBool(z3.If(c, A.expr, B.expr), tracer)
            (x, xl, xh), (y, yl, yh) = _view(A), _view(B)
            lo = None if xl is None or yl is None else min(xl, yl)
            hi = None if xh is None or yh is None else max(xh, yh)
            return SymInt(z3.If(c, x, y), tracer, None, (lo, hi))
    else:
        dtype, tensor = _promote(A, B), True
    if dtype == BOOL:
        return SymBool(z3.If(c, A.expr, B.expr), tracer, BOOL if tensor else None)
    x, xl, xh = _branch(A, tracer, dtype, library)
    y, yl, yh = _branch(B, tracer, dtype, library)
    lo = None if xl is None or yl is None else min(xl, yl)
    hi = None if xh is None or yh is None else max(xh, yh)
    return SymInt(z3.If(c, x, y), tracer, dtype if tensor else None, (lo, hi))


def _extremum(a, b, smallest: bool, library: str, name: str) -> Sym:
    tracer = _tracer_of(a, b)
    if library == "torch":
        for position, v in ((1, a), (2, b)):
            if not _is_tensor(v):
                kind = "a Python value" if isinstance(v, Sym) else type(v).__name__
                raise CannotRun(f"torch.{name}() needs two tensors: torch raises TypeError (argument {position} is "
                                f"{kind}); use torch.clamp with a number")
    A, B = lift(a, tracer), lift(b, tracer)
    if isinstance(A, SymBool) and isinstance(B, SymBool):
        e = (z3.And if smallest else z3.Or)(A.expr, B.expr)
        return SymBool(e, tracer, BOOL if (A.dtype or B.dtype) else None)
    dtype = _promote(A, B)
    if dtype is None:
        (x, xl, xh), (y, yl, yh) = _view(A), _view(B)
    else:
        x, xl, xh = _convert(A, dtype, tracer, strict=True, library=library)
        y, yl, yh = _convert(B, dtype, tracer, strict=True, library=library)
    pick = min if smallest else max
    lo = None if xl is None or yl is None else pick(xl, yl)
    hi = None if xh is None or yh is None else pick(xh, yh)
    if smallest:
        lo = None if (xl is None or yl is None) else lo
        hi = xh if yh is None else (yh if xh is None else hi)
    else:
        lo = xl if yl is None else (yl if xl is None else lo)
        hi = None if (xh is None or yh is None) else hi
    e = z3.If(x <= y, x, y) if smallest else z3.If(x >= y, x, y)
    return SymInt(e, tracer, dtype, (lo, hi))


def minimum(a, b, *, library: str = "numpy") -> Sym:
    """``minimum(a, b)``: numpy takes numbers, torch needs two tensors (TypeError otherwise)."""
    return _extremum(a, b, True, library, "minimum")


def maximum(a, b, *, library: str = "numpy") -> Sym:
    return _extremum(a, b, False, library, "maximum")


def clamp(x, min=None, max=None, *, library: str = "torch") -> Sym:  # noqa: A002 (torch's keyword names)
    """``torch.clamp(x, min, max)``: ``minimum(maximum(x, min), max)`` (a bool tensor with number bounds: int64);
    a Python bound must fit the dtype (torch raises otherwise)."""
    name = "torch.clamp()" if library == "torch" else "np.clip()"
    if library == "torch" and not _is_tensor(x):
        raise CannotRun(f"{name} of a Python value: torch raises TypeError (it needs a tensor)")
    if min is None and max is None:
        raise CannotRun(f"{name} with neither min nor max: {'torch' if library == 'torch' else 'numpy'} raises")
    tracer = _tracer_of(x, min, max)
    X = lift(x, tracer)
    out: Sym = X
    for bound in (min, max):
        if bound is not None:
            dtype = _promote(out, lift(bound, tracer))
            if dtype == BOOL:
                raise Untraceable(f"{name} of a bool tensor by Booleans is not modelled")
            out = _retype(out, dtype, tracer, library)
    if min is not None:
        out = _extremum(out, _retype(lift(min, tracer), out.dtype, tracer, library), False, "numpy", "maximum")
    if max is not None:
        out = _extremum(out, _retype(lift(max, tracer), out.dtype, tracer, library), True, "numpy", "minimum")
    return out


def _retype(v: Sym, dtype, tracer, library) -> Sym:
    """``v`` as a value of the integer ``dtype`` (a Python int: strictly in range, else the program cannot run)."""
    if dtype is None or (v.dtype == dtype and isinstance(v, SymInt)):
        return v
    e, lo, hi = _convert(v, dtype, tracer, strict=True, library=library)
    return SymInt(e, tracer, dtype, (lo, hi))


def logical(op: str, *args, library: str = "torch") -> SymBool:
    """``logical_and/or/xor(a, b)``, ``logical_not(a)``: truth values (an integer is ``!= 0``)."""
    need = 1 if op == "not" else 2
    name = f"{'torch' if library == 'torch' else 'np'}.logical_{op}()"
    if len(args) != need:
        if library == "numpy" and len(args) == need + 1:
            raise Untraceable(f"{name} with {len(args)} positional arguments: numpy takes the third as out= (it writes "
                              "the result into it); not modelled")
        raise CannotRun(f"{name} takes {need} positional argument{'s' if need > 1 else ''}, got {len(args)}: "
                        f"{'torch' if library == 'torch' else 'numpy'} raises TypeError")
    if library == "torch":
        for i, v in enumerate(args):
            if not _is_tensor(v):
                raise CannotRun(f"{name} argument {i + 1} is not a tensor: torch raises TypeError")
    tracer = _tracer_of(*args)
    values = [lift(v, tracer) for v in args]
    terms = [v.expr if isinstance(v, SymBool) else v.expr != 0 for v in values]
    tensor = any(v.dtype is not None for v in values)
    if op == "not":
        e = z3.Not(terms[0])
    else:
        e = {"and": z3.And, "or": z3.Or, "xor": z3.Xor}[op](*terms)
    return SymBool(e, tracer, BOOL if tensor else None)


def mask_value(result, flex: bool = False):
    """The Z3 Boolean of a program's result. A FlexAttention mask_mod (``flex``) must return a bool
    tensor: an integer tensor makes create_block_mask raise, a Python value makes vmap raise."""
    if not flex:
        return as_bool(result, "the mask's result")
    if isinstance(result, SymBool) and result.dtype == BOOL:
        return result.expr
    if isinstance(result, Sym) and result.dtype is not None:
        raise CannotRun(f"the mask_mod returns an {result.dtype} tensor: FlexAttention's create_block_mask raises "
                        "('mask.dtype must be torch.bool'); compare it (!= 0) or call .bool()")
    kind = "a Python bool" if isinstance(result, (bool, SymBool)) else f"a Python {type(result).__name__}" \
        if not isinstance(result, Sym) else "a Python int"
    raise CannotRun(f"the mask_mod returns {kind}, not a tensor: FlexAttention's vmap raises ('must only return "
                    "Tensors'); build it from the index tensors (e.g. q_idx.new_ones((), dtype=torch.bool))")


class SymIndex:
    """A 1-D integer index tensor (a document id per position, a permutation, a parent array)
    modelled as an uninterpreted function ``f``: ``t[i]`` is ``f(i)``, an int64 tensor value.

    What is known about ``f`` is a declared *property*, instantiated on every pair of
    lookups the program makes (:meth:`axioms`); a model of the lookups extends to a real
    tensor of that kind, so the instantiation is sound for refutations and complete for
    proofs. Properties: ``"nondecreasing"`` (document ids of packed sequences),
    ``"bijection"`` (a permutation of ``0 … size-1``), ``"backward"`` (a parent array
    of a forest: ``-1 <= f(i) < i``, ``-1`` for a root, so ``f(0) = -1``), ``"any"``.
    Every value looked up lies in int64's range (an axiom too).
    """

    PROPERTIES = ("nondecreasing", "bijection", "backward", "any")

    def __init__(self, name: str, prop: str, size, tracer: Tracer | None = None, low=0):
        if prop not in self.PROPERTIES:
            raise ValueError(f"unknown index property {prop!r}")
        self.name, self.prop, self.tracer = name, prop, tracer
        self.size = as_int(size, "an index tensor's size")
        self.low = low
        self.function = z3.Function(name, z3.IntSort(), z3.IntSort())
        self.lookups: list = []  # the argument terms looked up, in order (deduplicated by identity of terms)

    def __getitem__(self, i):
        if isinstance(i, tuple) or isinstance(i, slice):
            raise Untraceable(f"{self.name}[…] with a slice or several indices (a 1-D lookup is modelled)")
        arg = as_int(i, f"an index into {self.name}")
        if not any(arg.eq(x) for x in self.lookups):
            self.lookups.append(arg)
        tracer = self.tracer or _tracer_of(i)
        if tracer is not None:
            tracer.oblige(z3.And(arg >= 0, arg < self.size), f"{self.name}[i] is looked up outside 0 … size-1")
        bounds = {"bijection": (0, 2 ** 31), "backward": (-1, 2 ** 31)}.get(self.prop)  # n <= 2^31 (limits)
        return SymInt(self.function(arg), tracer, INT64, bounds)

    def __len__(self):
        raise Untraceable(f"len({self.name}) (use the symbolic size)")

    def axioms(self, extra_lookups=()) -> list:
        """The declared property on every lookup (and pair of lookups) made so far."""
        f, n = self.function, self.size
        terms = list(self.lookups) + [t for t in extra_lookups if not any(t.eq(x) for x in self.lookups)]
        out = []
        low, high = RANGES["int64"]
        for i in terms:
            inside = z3.And(i >= 0, i < n)
            out.append(z3.Implies(inside, z3.And(f(i) >= low, f(i) <= high)))  # an int64 tensor's values
            if self.prop == "bijection":
                out.append(z3.Implies(inside, z3.And(f(i) >= 0, f(i) < n)))
            elif self.prop == "backward":
                out.append(z3.Implies(inside, z3.And(f(i) >= -1, f(i) < i)))  # -1: a root (f(0) = -1 follows)
            elif self.prop == "nondecreasing":
                out.append(z3.Implies(inside, f(i) >= self.low))
        for a_i, a in enumerate(terms):
            for b in terms[a_i + 1:]:
                both = z3.And(a >= 0, a < n, b >= 0, b < n)
                if self.prop == "bijection":
                    out.append(z3.Implies(z3.And(both, a != b), f(a) != f(b)))
                elif self.prop == "nondecreasing":
                    out.append(z3.Implies(z3.And(both, a <= b), f(a) <= f(b)))
                    out.append(z3.Implies(z3.And(both, b <= a), f(b) <= f(a)))
        return out


def call_with_tracer(fn: Callable, args: tuple, tracer: Tracer) -> Any:
    """``fn(*args)`` with every Sym argument bound to ``tracer``."""
    bound = tuple(a.rebound(tracer) if isinstance(a, Sym) else a for a in args)
    return fn(*bound)

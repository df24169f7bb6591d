"""A symbolic value: a Z3 term, the tracer of its run, its dtype and an interval; Python's and torch's operators.

A mask_mod is integer arithmetic and comparisons. Called on :class:`SymInt` arguments
instead of index tensors, every operation it performs builds a Z3 term (the operators
below call :mod:`.arithmetic`, :mod:`.bits`, :mod:`.functions` through
:data:`~solvers.symbolic.terms.methods.OPS`), so its result is a Z3 formula of the
symbolic positions, sizes and parameters. A :class:`SymBool` is a comparison or logic on
comparisons; both are a Python scalar (``dtype`` None) or a tensor element. A tensor used
as a Python truth value cannot run; a Python-level symbolic value asks the run's
:class:`~solvers.symbolic.terms.tracer.Tracer` which branch to take.
"""

from __future__ import annotations

import numbers

import z3

from hasse.solvers.symbolic.terms.dtypes import BOOL, RANGES, Value, dtype_of
from hasse.solvers.symbolic.terms.errors import RUNNING, CannotRun, Untraceable
from hasse.solvers.symbolic.terms.methods import OPS, TensorMethods
from hasse.solvers.symbolic.terms.tracer import Tracer

TRUTH = ("a tensor used as a Python truth value (if/while/and/or/not/min/max or a chained comparison): torch "
         "raises 'Boolean value of Tensor with more than one value is ambiguous' and FlexAttention's vmap cannot "
         "branch on data; use torch.where / & / |")


def _tracer_of(*values) -> Tracer | None:
    for v in values:
        if isinstance(v, Sym) and v.tracer is not None:
            return v.tracer
    return RUNNING[-1] if RUNNING else None


def _const(expr):
    """The Python value of a constant Z3 term (int or bool), else None."""
    if z3.is_int_value(expr):
        return expr.as_long()
    if z3.is_true(expr):
        return True
    if z3.is_false(expr):
        return False
    return None


class Sym(Value, TensorMethods):
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

    def _tensor(self, name: str) -> "Sym":
        if self.dtype is None:
            kind = "bool" if isinstance(self, SymBool) else "int"
            raise CannotRun(f"'{kind}' object has no attribute '{name}' (a Python value, not a tensor)")
        return self

    # ---- operators (torch's semantics on tensors, Python's on Python scalars)

    def __add__(self, o):
        return OPS.arith("+", self, o)

    def __radd__(self, o):
        return OPS.arith("+", o, self)

    def __sub__(self, o):
        return OPS.arith("-", self, o)

    def __rsub__(self, o):
        return OPS.arith("-", o, self)

    def __mul__(self, o):
        return OPS.arith("*", self, o)

    def __rmul__(self, o):
        return OPS.arith("*", o, self)

    def __floordiv__(self, o):
        return OPS.arith("//", self, o)

    def __rfloordiv__(self, o):
        return OPS.arith("//", o, self)

    def __mod__(self, o):
        return OPS.arith("%", self, o)

    def __rmod__(self, o):
        return OPS.arith("%", o, self)

    def __truediv__(self, o):
        raise Untraceable("true division '/' (a float; floats are not modelled); use '//'")

    __rtruediv__ = __truediv__

    def __pow__(self, o, modulo=None):
        return OPS.power(self, o)

    def __rpow__(self, o):
        raise Untraceable("'**' with a symbolic exponent is not modelled")

    def __neg__(self):
        return OPS.negate(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return OPS.absolute(self)

    def __invert__(self):
        return OPS.invert(self)

    def __and__(self, o):
        return OPS.bitwise("&", self, o)

    def __rand__(self, o):
        return OPS.bitwise("&", o, self)

    def __or__(self, o):
        return OPS.bitwise("|", self, o)

    def __ror__(self, o):
        return OPS.bitwise("|", o, self)

    def __xor__(self, o):
        return OPS.bitwise("^", self, o)

    def __rxor__(self, o):
        return OPS.bitwise("^", o, self)

    def __lshift__(self, o):
        return OPS.shift("<<", self, o)

    def __rlshift__(self, o):
        return OPS.shift("<<", o, self)

    def __rshift__(self, o):
        return OPS.shift(">>", self, o)

    def __rrshift__(self, o):
        return OPS.shift(">>", o, self)

    def __lt__(self, o):
        return OPS.compare("<", self, o)

    def __le__(self, o):
        return OPS.compare("<=", self, o)

    def __gt__(self, o):
        return OPS.compare(">", self, o)

    def __ge__(self, o):
        return OPS.compare(">=", self, o)

    def __eq__(self, o):
        return OPS.compare("==", self, o)

    def __ne__(self, o):
        return OPS.compare("!=", self, o)


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
    tracer = tracer if tracer is not None else (RUNNING[-1] if RUNNING else None)
    if record and tracer is not None:
        tracer.note(v)
    return SymInt(z3.IntVal(v), tracer)


def _view(s: Sym):
    """``(expr, lo, hi)``: ``s`` as an integer term (a Boolean as 0/1)."""
    if isinstance(s, SymBool):
        return z3.If(s.expr, z3.IntVal(1), z3.IntVal(0)), 0, 1
    return s.expr, s.lo, s.hi

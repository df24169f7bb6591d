"""Symbolic integers and Booleans that a mask program computes with, recorded as Z3 terms.

A mask_mod is integer arithmetic and comparisons. Called on :class:`SymInt` arguments
instead of index tensors, every operation it performs builds a Z3 term, so its result
is a Z3 formula of the symbolic positions, sizes and parameters: the *symbolic mask*.

Python's semantics are kept exactly, not approximated:

- ``a // b`` is floor division and ``a % b`` takes the sign of ``b`` (Z3's ``div``/``mod``
  are Euclidean; they agree with Python only for ``b > 0``, so a divisor that may be
  negative is split on its sign), and a divisor that may be 0 adds the *obligation*
  ``b != 0`` — Python would raise there, so a claim is proved only where it holds;
- ``&``, ``|``, ``^``, ``~`` on Booleans are logical (as on bool tensors); on integers
  they are refused (bitwise arithmetic on positions is not modelled);
- a Boolean used where Python needs a ``bool`` (``if``, ``and``, ``min``) asks the
  :class:`Tracer` which branch to take: the tracer runs the program once per feasible
  combination of branches and joins the results (:mod:`solvers.symbolic.trace`).

Anything else (floats, bit operations, a symbolic value used as an index into a Python
list) raises :class:`Untraceable`, which the tracer turns into one line naming the
operation and the line of the user's file.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import z3


_RUNNING: list = []  # the tracer of each program running now, innermost last (trace.trace pushes it for one run)


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


MAX_DECISIONS = 64  # branch decisions on symbolic values within one run of a program (one path)


class Tracer:
    """Branch decisions and obligations of one symbolic run (see :mod:`solvers.symbolic.trace`)."""

    def __init__(self, assumptions=()):
        self.assumptions = list(assumptions)  # what is known about the inputs (ranges, side conditions)
        self.choices: list[bool] = []  # forced decisions for this run, in order
        self.taken: list[tuple[z3.BoolRef, bool]] = []  # (condition, decision) of this run
        self.obligations: list[tuple[z3.BoolRef, str]] = []  # (must hold under the path, why)
        self.raised: list = []  # every Untraceable made while this run's program ran (see Untraceable)
        self.where: Callable[[], str] | None = None  # "file.py:LINE" of the user's line running now (set by trace)
        self._solver = z3.Solver()
        self._solver.add(*self.assumptions)

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
            raise Untraceable(f"more than {MAX_DECISIONS} branch decisions on symbolic values in one run (a loop "
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
        where = self.where() if self.where is not None else ""
        if where and not why.startswith(where):
            why = f"{where}: {why}"
        self.obligations.append((z3.Implies(self.path_condition(), cond), why))


_NO_TRACER = None


def _tracer_of(*values) -> Tracer | None:
    for v in values:
        if isinstance(v, Sym):
            return v.tracer
    return None


class Sym:
    """A symbolic value: a Z3 term and the tracer of the run that made it."""

    __slots__ = ("expr", "tracer")
    __hash__ = object.__hash__  # == builds a formula; identity hashing keeps them usable as dict keys

    def __init__(self, expr, tracer: Tracer | None):
        self.expr = expr
        self.tracer = tracer

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.expr})"

    # a symbolic value has no float, no index and no length
    def __float__(self):
        raise Untraceable("a symbolic value converted to float")

    def __index__(self):
        raise Untraceable("a symbolic value used as an index or a range bound (a Python list lookup, range(), …)")

    def __int__(self):
        raise Untraceable("a symbolic value converted with int()")

    def __len__(self):
        raise Untraceable("len() of a symbolic value")

    def __iter__(self):
        raise Untraceable("iteration over a symbolic value")


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


def _int_result(expr, *sources) -> "SymInt":
    return SymInt(expr, _tracer_of(*sources))


def floor_div(a, b, tracer: Tracer | None):
    """Python's ``a // b`` on Z3 integers (obligation ``b != 0`` when ``b`` may be 0)."""
    if z3.is_int_value(b):
        d = b.as_long()
        if d == 0:
            raise Untraceable("division by zero")
        return a / b if d > 0 else (-a) / (-b)
    if tracer is not None:
        tracer.oblige(b != 0, "a divisor is never 0")
    return z3.If(b > 0, a / b, (-a) / (-b))


class SymInt(Sym):
    """A symbolic integer (a position, a size, a parameter, or arithmetic on them)."""

    __slots__ = ()

    def _bin(self, other, op, reverse=False):
        a, b = self.expr, as_int(other, "an operand")
        if reverse:
            a, b = b, a
        return SymInt(op(a, b), self.tracer)

    def __add__(self, o):
        return self._bin(o, lambda a, b: a + b)

    def __radd__(self, o):
        return self._bin(o, lambda a, b: a + b, True)

    def __sub__(self, o):
        return self._bin(o, lambda a, b: a - b)

    def __rsub__(self, o):
        return self._bin(o, lambda a, b: a - b, True)

    def __mul__(self, o):
        return self._bin(o, lambda a, b: a * b)

    def __rmul__(self, o):
        return self._bin(o, lambda a, b: a * b, True)

    def __floordiv__(self, o):
        return self._bin(o, lambda a, b: floor_div(a, b, self.tracer))

    def __rfloordiv__(self, o):
        return self._bin(o, lambda a, b: floor_div(a, b, self.tracer), True)

    def __mod__(self, o):
        return self._bin(o, lambda a, b: a - b * floor_div(a, b, self.tracer))

    def __rmod__(self, o):
        return self._bin(o, lambda a, b: a - b * floor_div(a, b, self.tracer), True)

    def __neg__(self):
        return SymInt(-self.expr, self.tracer)

    def __pos__(self):
        return self

    def __abs__(self):
        return SymInt(z3.If(self.expr >= 0, self.expr, -self.expr), self.tracer)

    def __truediv__(self, o):
        raise Untraceable("true division '/' (a float); use '//'")

    __rtruediv__ = __truediv__

    def __pow__(self, o):
        if isinstance(o, numbers.Integral) and not isinstance(o, bool) and 0 <= o <= 8:
            out = z3.IntVal(1)
            for _ in range(int(o)):
                out = out * self.expr
            return SymInt(out, self.tracer)
        raise Untraceable("'**' with a symbolic or large exponent")

    def _cmp(self, other, op):
        return SymBool(op(self.expr, as_int(other, "a compared value")), self.tracer)

    def __lt__(self, o):
        return self._cmp(o, lambda a, b: a < b)

    def __le__(self, o):
        return self._cmp(o, lambda a, b: a <= b)

    def __gt__(self, o):
        return self._cmp(o, lambda a, b: a > b)

    def __ge__(self, o):
        return self._cmp(o, lambda a, b: a >= b)

    def __eq__(self, o):
        if isinstance(o, SymBool):
            return SymBool(self.expr == as_int(o), self.tracer)
        return self._cmp(o, lambda a, b: a == b)

    def __ne__(self, o):
        return self._cmp(o, lambda a, b: a != b)

    def __bool__(self):
        if self.tracer is None:
            raise Untraceable("a symbolic integer used as a truth value outside a trace")
        return self.tracer.decide(self.expr != 0)

    def _bitwise(self, *_):
        raise Untraceable("bitwise arithmetic on integers (&, |, ^, ~, <<, >>)")

    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _bitwise
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __invert__ = _bitwise


class SymBool(Sym):
    """A symbolic Boolean (a comparison, or logic on comparisons)."""

    __slots__ = ()

    def _logic(self, other, op):
        if isinstance(other, SymInt) or (isinstance(other, numbers.Integral) and not isinstance(other, bool)
                                         and other not in (0, 1)):
            raise Untraceable("'&', '|' or '^' between a Boolean and an integer")
        return SymBool(op(self.expr, as_bool(other, "an operand")), self.tracer)

    def __and__(self, o):
        return self._logic(o, lambda a, b: z3.And(a, b))

    __rand__ = __and__

    def __or__(self, o):
        return self._logic(o, lambda a, b: z3.Or(a, b))

    __ror__ = __or__

    def __xor__(self, o):
        return self._logic(o, lambda a, b: z3.Xor(a, b))

    __rxor__ = __xor__

    def __invert__(self):
        return SymBool(z3.Not(self.expr), self.tracer)

    def __eq__(self, o):
        if isinstance(o, (SymBool, bool)):
            return SymBool(self.expr == as_bool(o), self.tracer)
        return SymBool(as_int(self) == as_int(o, "a compared value"), self.tracer)

    def __ne__(self, o):
        return ~(self == o)

    def __bool__(self):
        if self.tracer is None:
            raise Untraceable("a symbolic Boolean used as a truth value outside a trace")
        return self.tracer.decide(self.expr)

    # a Boolean in arithmetic is 0 / 1, as numpy and torch make it
    def _arith(self, other, name, reverse=False):
        return getattr(SymInt(as_int(self), self.tracer), name)(other)

    def __add__(self, o):
        return SymInt(as_int(self), self.tracer) + o

    def __radd__(self, o):
        return o + SymInt(as_int(self), self.tracer)

    def __mul__(self, o):
        return SymInt(as_int(self), self.tracer) * o

    def __rmul__(self, o):
        return o * SymInt(as_int(self), self.tracer)

    def __sub__(self, o):
        return SymInt(as_int(self), self.tracer) - o

    def __rsub__(self, o):
        return o - SymInt(as_int(self), self.tracer)

    def _order(self, *_):
        raise Untraceable("an order comparison (<, <=, >, >=) between Booleans")

    __lt__ = __le__ = __gt__ = __ge__ = _order


def lift(value, tracer: Tracer | None = None):
    """``value`` as a Sym: SymInt/SymBool unchanged, Python bool → SymBool, integer → SymInt."""
    if isinstance(value, Sym):
        return value
    if isinstance(value, bool):
        return SymBool(z3.BoolVal(value), tracer)
    if isinstance(value, numbers.Integral):
        return SymInt(z3.IntVal(int(value)), tracer)
    if hasattr(value, "item") and hasattr(value, "dtype"):
        return lift(value.item(), tracer)
    raise Untraceable(f"a value of type {type(value).__name__} (only integers and Booleans are modelled)")


def where(cond, a, b):
    """``where(cond, a, b)`` as Z3 ``If``: both branches Boolean → SymBool, else SymInt."""
    tracer = _tracer_of(cond, a, b)
    c = as_bool(cond, "the condition of where()")
    if isinstance(a, (SymBool, bool)) and isinstance(b, (SymBool, bool)):
        return SymBool(z3.If(c, as_bool(a), as_bool(b)), tracer)
    return SymInt(z3.If(c, as_int(a, "a branch of where()"), as_int(b, "a branch of where()")), tracer)


def minimum(a, b):
    tracer = _tracer_of(a, b)
    x, y = as_int(a, "an argument of minimum()"), as_int(b, "an argument of minimum()")
    return SymInt(z3.If(x <= y, x, y), tracer)


def maximum(a, b):
    tracer = _tracer_of(a, b)
    x, y = as_int(a, "an argument of maximum()"), as_int(b, "an argument of maximum()")
    return SymInt(z3.If(x >= y, x, y), tracer)


class SymIndex:
    """A 1-D integer index tensor (a document id per position, a permutation, a parent array)
    modelled as an uninterpreted function ``f``: ``t[i]`` is ``f(i)``.

    What is known about ``f`` is a declared *property*, instantiated on every pair of
    lookups the program makes (:meth:`axioms`); a model of the lookups extends to a real
    tensor of that kind, so the instantiation is sound for refutations and complete for
    proofs. Properties: ``"nondecreasing"`` (document ids of packed sequences),
    ``"bijection"`` (a permutation of ``0 … size-1``), ``"backward"`` (a parent array
    of a forest: ``-1 <= f(i) < i``, ``-1`` for a root, so ``f(0) = -1``), ``"any"``.
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
        if self.tracer is not None:
            self.tracer.oblige(z3.And(arg >= 0, arg < self.size), f"{self.name}[i] is looked up inside 0 … size-1")
        return SymInt(self.function(arg), self.tracer or _tracer_of(i))

    def __len__(self):
        raise Untraceable(f"len({self.name}) (use the symbolic size)")

    def axioms(self, extra_lookups=()) -> list:
        """The declared property on every lookup (and pair of lookups) made so far."""
        f, n = self.function, self.size
        terms = list(self.lookups) + [t for t in extra_lookups if not any(t.eq(x) for x in self.lookups)]
        out = []
        for i in terms:
            inside = z3.And(i >= 0, i < n)
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
    bound = tuple(type(a)(a.expr, tracer) if isinstance(a, Sym) else a for a in args)
    return fn(*bound)

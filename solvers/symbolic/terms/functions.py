"""The torch and numpy functions on symbolic values: ``cast``, ``where``, ``minimum``/``maximum``, ``clamp``,
``logical_*``, and what a mask program must return (:func:`mask_value`).

torch needs tensors where numpy takes numbers (``torch.minimum(x, 3)`` raises TypeError);
both branches of ``where`` are evaluated (an obligation in a branch holds everywhere); a
Python bound of ``clamp`` must fit the dtype. The shims (:mod:`solvers.symbolic.shims`)
and the tensor methods are built on these.
"""

from __future__ import annotations

import numbers

import z3

from hasse.solvers.symbolic.terms.dtypes import BOOL, INT32, INT64, dtype_of
from hasse.solvers.symbolic.terms.errors import CannotRun, Untraceable
from hasse.solvers.symbolic.terms.promote import _convert, _fit, _promote
from hasse.solvers.symbolic.terms.sym import Sym, SymBool, SymInt, _tracer_of, _view, as_bool, lift
from hasse.solvers.symbolic.terms.tracer import Tracer


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

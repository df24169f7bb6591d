"""The numpy a traced program sees (contract: numpy 2.4): :data:`NUMPY_SHIM`.

The same names as numpy has them (numbers allowed); ``np.logical_and(a, b, c)`` takes ``c`` as
``out=`` (refused); arithmetic on bool arrays, which numpy computes and torch refuses, is
refused (a named difference); numpy's scalar types are callable casts (:class:`NumpyDType`).
"""

from __future__ import annotations

from hasse.solvers.symbolic.terms import (BOOL, INT64, DType, Sym, SymBool, Untraceable, absolute, arith, bitwise, cast, clamp, compare,
                                     invert, lift, logical, maximum, minimum, shift, where)
from hasse.solvers.symbolic.shims.common import Tensor, _no_out, _Shim


class NumpyDType(DType):
    """numpy's scalar types are callable: ``np.int64(x)`` casts (torch's dtypes are not)."""

    __hash__ = str.__hash__

    def __call__(self, value=0):
        return cast(value, DType(str.__str__(self)))

    def __repr__(self) -> str:
        return f"np.{str.__str__(self)}"


def _n_where(condition, *xy):
    if len(xy) != 2:
        raise Untraceable("np.where(condition) with one argument gives the indices (not modelled)")
    return where(condition, xy[0], xy[1], library="numpy")


def _n_arith(op, name):
    def fn(x1, x2, *rest, **kw):
        if rest:
            raise Untraceable(f"np.{name}() with a third positional argument (out=) is not modelled")
        _no_out(f"np.{name}", kw)
        a, b = lift(x1), lift(x2)
        if isinstance(a, SymBool) and isinstance(b, SymBool) and op not in ("+", "*"):
            raise Untraceable(f"np.{name}() of two Booleans (numpy computes it, torch raises): not modelled")
        return arith(op, a, b, library="numpy")

    fn.__name__ = name
    return fn


def _n_binary(fn_of, name):
    def fn(x1, x2, *rest, **kw):
        if rest:
            raise Untraceable(f"np.{name}() with a third positional argument (out=) is not modelled")
        _no_out(f"np.{name}", kw)
        return fn_of(x1, x2)

    fn.__name__ = name
    return fn


def _n_logical(op):
    def fn(*args, **kw):
        _no_out(f"np.logical_{op}", kw)
        return logical(op, *args, library="numpy")

    return fn


def _n_clip(a, a_min=None, a_max=None, *rest, min=None, max=None, **kw):  # noqa: A002 (numpy 2.1+ names)
    if rest:
        raise Untraceable("np.clip() with a fourth positional argument (out=) is not modelled")
    _no_out("np.clip", kw)
    low = a_min if a_min is not None else min
    high = a_max if a_max is not None else max
    return clamp(a, low, high, library="numpy")


def _n_abs(x, *rest, **kw):
    if rest:
        raise Untraceable("np.abs() with out= is not modelled")
    _no_out("np.abs", kw)
    return absolute(x, library="numpy")


def _n_invert(x, *rest, **kw):
    if rest:
        raise Untraceable("np.invert() with out= is not modelled")
    _no_out("np.invert", kw)
    return invert(x)


def _n_like(fill):
    def fn(a, *args, dtype=None, **_kw):
        value = args[0] if fill is None else fill
        if not isinstance(a, Sym):
            raise Untraceable("np.*_like() of a Python value is not modelled")
        if dtype is None and a.dtype is None:
            dtype = BOOL if isinstance(a, SymBool) else INT64
        return cast(value, a.dtype if dtype is None else dtype)

    return fn


def _identity(x, *_, **__):
    return x


def _numpy_shim() -> _Shim:
    nb = _n_binary
    return _Shim(
        _module_name="numpy",
        where=_n_where,
        minimum=nb(lambda a, b: minimum(a, b, library="numpy"), "minimum"),
        maximum=nb(lambda a, b: maximum(a, b, library="numpy"), "maximum"),
        clip=_n_clip, abs=_n_abs, absolute=_n_abs,
        remainder=_n_arith("%", "remainder"), mod=_n_arith("%", "mod"), fmod=_n_arith("fmod", "fmod"),
        floor_divide=_n_arith("//", "floor_divide"), add=_n_arith("+", "add"), subtract=_n_arith("-", "subtract"),
        multiply=_n_arith("*", "multiply"),
        logical_and=_n_logical("and"), logical_or=_n_logical("or"), logical_xor=_n_logical("xor"),
        logical_not=_n_logical("not"),
        bitwise_and=nb(lambda a, b: bitwise("&", a, b, library="numpy"), "bitwise_and"),
        bitwise_or=nb(lambda a, b: bitwise("|", a, b, library="numpy"), "bitwise_or"),
        bitwise_xor=nb(lambda a, b: bitwise("^", a, b, library="numpy"), "bitwise_xor"),
        invert=_n_invert, bitwise_not=_n_invert,
        left_shift=nb(lambda a, b: shift("<<", a, b), "left_shift"),
        right_shift=nb(lambda a, b: shift(">>", a, b), "right_shift"),
        **{name: nb((lambda o: lambda a, b: compare(o, a, b, library="numpy"))(op), name)
           for name, op in (("equal", "=="), ("not_equal", "!="), ("less", "<"), ("less_equal", "<="),
                            ("greater", ">"), ("greater_equal", ">="))},
        ones_like=_n_like(True), zeros_like=_n_like(False), full_like=_n_like(None),
        asarray=_identity, array=_identity, asanyarray=_identity, ndarray=Tensor,
        bool_=NumpyDType("bool"), bool=NumpyDType("bool"), int64=NumpyDType("int64"), int32=NumpyDType("int32"),
        intp=NumpyDType("int64"),
    )


NUMPY_SHIM = _numpy_shim()

"""The numpy and torch a traced program sees: the modelled functions, and a clear refusal for the rest.

:func:`~solvers.symbolic.trace.rebind` replaces the ``numpy`` and ``torch`` modules a mask
program names by :data:`NUMPY_SHIM` and :data:`TORCH_SHIM`. Their functions follow the
library they stand for (contract: torch 2.13, numpy 2.4), built on the value semantics of
:mod:`solvers.symbolic.terms`:

- torch: ``where`` (a bool tensor condition; both branches evaluated), ``minimum`` /
  ``maximum`` (two tensors: a number raises TypeError), ``clamp``/``clip``, ``abs``,
  ``remainder``, ``fmod``, ``floor_divide``, ``div(rounding_mode=…)``, ``logical_*``
  (exactly two tensors, one for ``not``), ``bitwise_*``, ``eq``/``ne``/``lt``/``le``/``gt``/``ge``,
  ``ones_like``/``zeros_like``/``full_like``, ``ones``/``zeros``/``full`` of one value,
  ``tensor``/``as_tensor`` of a number; dtypes ``bool``, ``int64``/``long``, ``int32``/``int``;
- numpy: the same names as numpy has them (numbers allowed; ``np.logical_and(a, b, c)``
  takes ``c`` as ``out=``: refused), ``clip``, ``mod``, ``asarray``/``array`` (identity);
  arithmetic on bool arrays, which numpy computes and torch refuses, is refused (a named
  difference).

Anything else is :class:`~solvers.symbolic.terms.Untraceable`, naming the function.
"""

from __future__ import annotations

import types

from hasse.solvers.symbolic.terms import (
    BOOL,
    INT32,
    INT64,
    CannotRun,
    NumpyDType,
    Sym,
    SymBool,
    Untraceable,
    _scalar_shape,
    absolute,
    arith,
    bitwise,
    cast,
    clamp,
    compare,
    divide,
    invert,
    lift,
    logical,
    maximum,
    minimum,
    shift,
    where,
)


class _Shim(types.SimpleNamespace):
    """A stand-in for numpy or torch: the modelled functions, and a clear refusal for the rest."""

    def __getattr__(self, name):
        module = self.__dict__.get("_module_name", "module")
        if name.startswith("__"):
            raise AttributeError(name)

        def refuse(*_a, **_k):
            raise Untraceable(f"{module}.{name}() is not modelled")

        refuse.__name__ = name
        return refuse


class _TensorMeta(type):
    def __instancecheck__(cls, value):
        return isinstance(value, Sym) and value.dtype is not None


class Tensor(metaclass=_TensorMeta):
    """``isinstance(x, torch.Tensor)`` / ``np.ndarray``: true of a traced tensor value."""

    def __new__(cls, *_a, **_k):
        raise Untraceable("constructing a tensor with torch.Tensor(...) is not modelled")


def _no_out(name: str, kw: dict) -> None:
    extra = sorted(k for k in kw if k != "out" or kw[k] is not None)
    if extra:
        raise Untraceable(f"{name}() with {', '.join(extra)}= is not modelled")


# --------------------------------------------------------------------------- torch


def _t_where(condition, input=None, other=None, **kw):  # noqa: A002 (torch's names)
    _no_out("torch.where", kw)
    if input is None and other is None:
        raise CannotRun("torch.where(condition) with one argument gives the indices (a shape that bakes in n): "
                        "not a mask")
    return where(condition, input, other, library="torch")


def _binary(op, torch_name):
    def fn(input, other, **kw):  # noqa: A002
        _no_out(torch_name, kw)
        if not isinstance(input, Sym) or input.dtype is None:
            if not isinstance(other, Sym) or other.dtype is None:
                raise CannotRun(f"{torch_name}() of two Python values: torch raises TypeError (it needs a tensor)")
        return op(input, other)

    fn.__name__ = torch_name.rsplit(".", 1)[-1]
    return fn


def _t_logical(op):
    def fn(*args, **kw):
        _no_out(f"torch.logical_{op}", kw)
        return logical(op, *args, library="torch")

    return fn


def _t_clamp(input, min=None, max=None, **kw):  # noqa: A002
    _no_out("torch.clamp", kw)
    return clamp(input, min, max, library="torch")


def _t_abs(input, **kw):  # noqa: A002
    _no_out("torch.abs", kw)
    if not isinstance(input, Sym) or input.dtype is None:
        raise CannotRun("torch.abs() of a Python value: torch raises TypeError (it needs a tensor)")
    return absolute(input)


def _t_div(input, other, *, rounding_mode=None, **kw):  # noqa: A002
    _no_out("torch.div", kw)
    return divide(input, other, rounding_mode)


def _like(fill):
    def fn(input, *args, dtype=None, **_kw):  # noqa: A002
        value = args[0] if fill is None else fill
        if not isinstance(input, Sym) or input.dtype is None:
            raise CannotRun("a *_like() of a Python value: torch raises TypeError (it needs a tensor)")
        return cast(value, input.dtype if dtype is None else dtype)

    return fn


def _full(fill):
    def fn(*size, dtype=None, fill_value=None, **kw):
        if fill is None:
            *size, value = size if fill_value is None else (*size, fill_value)
        else:
            value = fill
        _scalar_shape(kw.get("size", tuple(size)), "a tensor made by torch.ones/zeros/full")
        if dtype is None:
            if fill is not None or isinstance(value, float):
                raise Untraceable("torch.ones()/zeros() without dtype= gives floats (not modelled); give "
                                  "dtype=torch.bool or torch.int64")
            dtype = BOOL if isinstance(value, bool) or isinstance(value, SymBool) else INT64
        return cast(value, dtype)

    return fn


def _t_tensor(data, dtype=None, device=None, requires_grad=False, **_kw):
    if dtype is None:
        v = lift(data) if not isinstance(data, (list, tuple)) else None
        dtype = BOOL if isinstance(v, SymBool) and v.dtype in (None, BOOL) else (
            v.dtype if isinstance(v, Sym) and v.dtype is not None else INT64)
    return cast(data, dtype, strict=True)


def _t_is_tensor(x):
    return isinstance(x, Sym) and x.dtype is not None


def _device(*_a, **_k):
    return "cpu"


def _torch_shim() -> _Shim:
    b = _binary
    return _Shim(
        _module_name="torch",
        where=_t_where,
        minimum=lambda a, b_, **kw: (_no_out("torch.minimum", kw), minimum(a, b_, library="torch"))[1],
        maximum=lambda a, b_, **kw: (_no_out("torch.maximum", kw), maximum(a, b_, library="torch"))[1],
        clamp=_t_clamp, clip=_t_clamp,
        clamp_min=lambda x, min, **kw: _t_clamp(x, min, None, **kw),  # noqa: A006
        clamp_max=lambda x, max, **kw: _t_clamp(x, None, max, **kw),  # noqa: A006
        abs=_t_abs, absolute=_t_abs,
        remainder=b(lambda x, y: arith("%", x, y), "torch.remainder"),
        fmod=b(lambda x, y: arith("fmod", x, y), "torch.fmod"),
        floor_divide=b(lambda x, y: arith("//", x, y), "torch.floor_divide"),
        div=_t_div, divide=_t_div,
        true_divide=lambda *a, **k: (_ for _ in ()).throw(Untraceable("torch.true_divide() gives floats (not "
                                                                       "modelled)")),
        add=b(lambda x, y: arith("+", x, y), "torch.add"),
        sub=b(lambda x, y: arith("-", x, y), "torch.sub"),
        mul=b(lambda x, y: arith("*", x, y), "torch.mul"),
        logical_and=_t_logical("and"), logical_or=_t_logical("or"), logical_xor=_t_logical("xor"),
        logical_not=_t_logical("not"),
        bitwise_and=b(lambda x, y: bitwise("&", x, y), "torch.bitwise_and"),
        bitwise_or=b(lambda x, y: bitwise("|", x, y), "torch.bitwise_or"),
        bitwise_xor=b(lambda x, y: bitwise("^", x, y), "torch.bitwise_xor"),
        bitwise_not=lambda x, **kw: (_no_out("torch.bitwise_not", kw), invert(_need_tensor(x, "bitwise_not")))[1],
        bitwise_left_shift=b(lambda x, y: shift("<<", x, y), "torch.bitwise_left_shift"),
        bitwise_right_shift=b(lambda x, y: shift(">>", x, y), "torch.bitwise_right_shift"),
        **{name: b((lambda o: lambda x, y: compare(o, x, y))(op), f"torch.{name}")
           for name, op in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="),
                            ("not_equal", "!="), ("less", "<"), ("less_equal", "<="), ("greater", ">"),
                            ("greater_equal", ">="))},
        ones_like=_like(True), zeros_like=_like(False), full_like=_like(None),
        ones=_full(True), zeros=_full(False), full=_full(None),
        tensor=_t_tensor, as_tensor=_t_tensor, scalar_tensor=_t_tensor,
        is_tensor=_t_is_tensor, Tensor=Tensor, device=_device,
        bool=BOOL, int64=INT64, long=INT64, int32=INT32, int=INT32,
    )


def _need_tensor(x, name):
    if not isinstance(x, Sym) or x.dtype is None:
        raise CannotRun(f"torch.{name}() of a Python value: torch raises TypeError (it needs a tensor)")
    return x


# --------------------------------------------------------------------------- numpy


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
TORCH_SHIM = _torch_shim()

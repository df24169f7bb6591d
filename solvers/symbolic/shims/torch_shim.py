"""The torch a traced program sees (contract: torch 2.13): :data:`TORCH_SHIM`.

Functions that need a tensor raise TypeError on Python values as torch does (``torch.minimum(x, 3)``);
``torch.where`` needs a bool tensor as its condition; ``ones``/``zeros``/``full`` make one value.
"""

from __future__ import annotations

from hasse.solvers.symbolic.terms import (BOOL, INT32, INT64, CannotRun, Sym, SymBool, Untraceable, absolute, arith, bitwise, cast, clamp,
                                     compare, divide, invert, lift, logical, maximum, minimum, shift, where)
from hasse.solvers.symbolic.terms.functions import _scalar_shape
from hasse.solvers.symbolic.shims.common import Tensor, _no_out, _Shim


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


TORCH_SHIM = _torch_shim()

"""The tensor methods a mask_mod calls on its index tensors (``.clamp``, ``.to``, ``.new_ones``, ``.bool``, …).

:class:`TensorMethods` is a base of :class:`~solvers.symbolic.terms.sym.Sym`: a Python
scalar has none of them (``'int' object has no attribute …``), a tensor's follow torch
(contract: torch 2.13), and what a mask_mod cannot call under vmap (``.item()``,
``.shape``) cannot run. The methods and Sym's operators call the operations on values
(:mod:`.arithmetic`, :mod:`.bits`, :mod:`.functions`) through :data:`OPS`: those modules
build Sym values, so the value classes do not import them; the package's ``__init__``
fills the table once, when it is imported.
"""

from __future__ import annotations

import types

from hasse.solvers.symbolic.terms.dtypes import BOOL, INT32, INT64, Value, _dtype_name, dtype_of
from hasse.solvers.symbolic.terms.errors import CannotRun, NotModelled, Untraceable

OPS = types.SimpleNamespace()  # arith, compare, cast, …: the operations on values (filled by terms/__init__.py)


class TensorMethods:
    """What FlexAttention mask_mods call on their index tensors (``self`` is a Sym)."""

    __slots__ = ()

    def _new(self, name, size, fill, dtype):
        self._tensor(name)
        OPS._scalar_shape(size, f".{name}()")
        return OPS.cast(fill, self.dtype if dtype is None else dtype_of(dtype), self.tracer)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        return self._new("new_ones", kw.get("size", size), True, dtype)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        return self._new("new_zeros", kw.get("size", size), False, dtype)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        if dtype is None and isinstance(fill_value, Value):
            dtype = self.dtype
        return self._new("new_full", size, fill_value, dtype)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        self._tensor("new_tensor")
        return OPS.cast(data, self.dtype if dtype is None else dtype, self.tracer, strict=True)

    def clamp(self, min=None, max=None):  # noqa: A002 (torch's names)
        return OPS.clamp(self._tensor("clamp"), min, max, library="torch")

    clip = clamp

    def clamp_min(self, min):  # noqa: A002
        return OPS.clamp(self._tensor("clamp_min"), min, None, library="torch")

    def clamp_max(self, max):  # noqa: A002
        return OPS.clamp(self._tensor("clamp_max"), None, max, library="torch")

    def abs(self):
        return OPS.absolute(self._tensor("abs"))

    absolute = abs

    def bool(self):
        return OPS.cast(self._tensor("bool"), BOOL)

    def long(self):
        return OPS.cast(self._tensor("long"), INT64)

    def int(self):
        return OPS.cast(self._tensor("int"), INT32)

    def to(self, *args, dtype=None, **_kw):
        self._tensor("to")
        for a in args:  # .to(device), .to(dtype), .to(device, dtype), .to(other)
            if isinstance(a, Value):
                dtype = a.dtype
            elif _dtype_name(a) is not None:
                dtype = dtype_of(a)
            elif not isinstance(a, str) and type(a).__name__ != "device":
                raise Untraceable(f".to({a!r}) is not modelled (a dtype or a device is)")
        return self if dtype is None else OPS.cast(self, dtype)

    def type(self, dtype=None, **_kw):
        self._tensor("type")
        if dtype is None:
            raise Untraceable(".type() without a dtype (a type name string) is not modelled")
        return OPS.cast(self, dtype)

    def astype(self, dtype, **_kw):  # numpy's spelling
        return OPS.cast(self._tensor("astype"), dtype)

    def remainder(self, o):
        return OPS.arith("%", self._tensor("remainder"), o)

    def fmod(self, o):
        return OPS.arith("fmod", self._tensor("fmod"), o)

    def floor_divide(self, o):
        return OPS.arith("//", self._tensor("floor_divide"), o)

    def div(self, o, rounding_mode=None):
        return OPS.divide(self._tensor("div"), o, rounding_mode)

    def logical_and(self, o):
        return OPS.logical("and", self._tensor("logical_and"), o)

    def logical_or(self, o):
        return OPS.logical("or", self._tensor("logical_or"), o)

    def logical_xor(self, o):
        return OPS.logical("xor", self._tensor("logical_xor"), o)

    def logical_not(self):
        return OPS.logical("not", self._tensor("logical_not"))

    def bitwise_and(self, o):
        return OPS.bitwise("&", self._tensor("bitwise_and"), o)

    def bitwise_or(self, o):
        return OPS.bitwise("|", self._tensor("bitwise_or"), o)

    def bitwise_xor(self, o):
        return OPS.bitwise("^", self._tensor("bitwise_xor"), o)

    def bitwise_not(self):
        return OPS.invert(self._tensor("bitwise_not"))

    def bitwise_left_shift(self, o):
        return OPS.shift("<<", self._tensor("bitwise_left_shift"), o)

    def bitwise_right_shift(self, o):
        return OPS.shift(">>", self._tensor("bitwise_right_shift"), o)

    def eq(self, o):
        return OPS.compare("==", self._tensor("eq"), o)

    def ne(self, o):
        return OPS.compare("!=", self._tensor("ne"), o)

    def lt(self, o):
        return OPS.compare("<", self._tensor("lt"), o)

    def le(self, o):
        return OPS.compare("<=", self._tensor("le"), o)

    def gt(self, o):
        return OPS.compare(">", self._tensor("gt"), o)

    def ge(self, o):
        return OPS.compare(">=", self._tensor("ge"), o)

    def minimum(self, o):
        return OPS.minimum(self._tensor("minimum"), o, library="torch")

    def maximum(self, o):
        return OPS.maximum(self._tensor("maximum"), o, library="torch")

    def where(self, condition, other):
        return OPS.where(condition, self._tensor("where"), other, library="torch")

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

"""The dtypes a traced value may have: torch's ``bool``, ``int64`` and ``int32``, and their ranges.

A value's dtype is ``None`` for a Python scalar (an exact, unbounded int, or a bool). A
:class:`DType` compares equal to its name, to the shims' ``torch.bool``/``np.int64``… and
to torch's own dtype of that name; anything else is not modelled (floats are not).
"""

from __future__ import annotations

import numbers

from hasse.solvers.symbolic.terms.errors import Untraceable


class Value:
    """What a traced program computes with (:class:`~solvers.symbolic.terms.sym.Sym`): it has a dtype, it is none."""

    __slots__ = ()


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
    if obj is None or isinstance(obj, (numbers.Number, Value)):
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

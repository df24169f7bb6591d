"""What the numpy and torch shims share: the module stand-in, ``torch.Tensor``/``np.ndarray``, refusing ``out=``."""

from __future__ import annotations

import types

from hasse.solvers.symbolic.terms import Sym, Untraceable


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

"""What a traced program sees: its numpy/torch replaced by the shims, its checks by symbolic ones, its
closure tensors by tables, and every function it reaches that is traced code rebound the same way."""

from __future__ import annotations

import functools
import sys
import types
from typing import Callable

from hasse.solvers.symbolic.shims import NUMPY_SHIM, TORCH_SHIM
from hasse.solvers.symbolic.terms import Tracer
from hasse.solvers.symbolic.trace.checks import _checks
from hasse.solvers.symbolic.trace.tables import _is_array, _tensor_value


def _is_module(value, name: str) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__ == name


def rebind(fn: Callable, tracer: Tracer, memo: dict | None = None) -> Callable:
    """``fn`` with its module's numpy/torch replaced by the shims, the parameter checks by
    symbolic ones, its closure and global tensors by tables (:class:`Table`), and every
    function it can reach that is traced code (:func:`_traced_code`) rebound the same way.
    A ``functools.partial`` or a bound method is rebound through its function (its bound
    arguments as closure values)."""
    memo = {} if memo is None else memo
    if isinstance(fn, functools.partial):
        return functools.partial(rebind(fn.func, tracer, memo),
                                 *(_rebind_value(a, tracer, memo) for a in fn.args),
                                 **{k: _rebind_value(v, tracer, memo, k) for k, v in fn.keywords.items()})
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType) and _traced_code(fn.__func__):
        return types.MethodType(rebind(fn.__func__, tracer, memo), fn.__self__)
    if not isinstance(fn, types.FunctionType):
        return fn
    key = id(fn.__globals__)
    if key not in memo:
        glb = dict(fn.__globals__)
        memo[key] = glb
        glb["__builtins__"] = _shimmed_builtins(glb.get("__builtins__"))
        checks = _checks(tracer)
        for name, value in list(glb.items()):
            if name.startswith("__"):
                continue
            if _is_module(value, "numpy"):
                glb[name] = NUMPY_SHIM
            elif _is_module(value, "torch"):
                glb[name] = TORCH_SHIM
            elif name in checks and callable(value):
                glb[name] = checks[name]
            elif _is_array(value):
                glb[name] = _tensor_value(name, value, tracer)
            elif _library_function(value) is not None:
                glb[name] = _library_function(value)
        for name, value in list(glb.items()):
            if isinstance(value, types.FunctionType) and _traced_code(value):
                glb[name] = (_rebound(value, glb, tracer, memo) if value.__globals__ is fn.__globals__
                             else rebind(value, tracer, memo))
    glb = memo[key]
    return _rebound(fn, glb, tracer, memo)


def _shimmed_builtins(builtins) -> dict:
    """The program's builtins with ``__import__`` giving the shims for ``numpy`` and ``torch``: a factory that
    imports torch inside its body (``import torch`` in make_mask_mod, as theory/flex files do) meets the
    shim, as a module-level import does; every other import is Python's own."""
    import builtins as _b

    table = dict(vars(builtins) if isinstance(builtins, types.ModuleType) else (builtins or vars(_b)))
    real = table.get("__import__", _b.__import__)

    def shimmed_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002 (Python's names)
        if level == 0 and name in ("torch", "numpy"):
            return TORCH_SHIM if name == "torch" else NUMPY_SHIM
        return real(name, globals, locals, fromlist, level)

    table["__import__"] = shimmed_import
    return table


# never traced: numpy, torch (but its mask helpers), z3 and the kit's own tracer; the stdlib neither (below)
_LIBRARIES = ("numpy", "torch", "z3", "networkx", "sympy", "scipy", "functorch", "triton", "jax",
              "hasse.solvers.symbolic")
# traced although inside a library: torch's own mask_mod helpers (and_masks, or_masks, noop_mask)
_TRACED_LIBRARY = ("torch.nn.attention.flex_attention",)


def _traced_code(fn: types.FunctionType) -> bool:
    """Run symbolically when called: the user's code wherever it is installed (attn_gym in
    site-packages too), the kit's own rules, torch's mask helpers; not numpy, torch, z3, the stdlib."""
    module = fn.__module__ or ""
    if module in _TRACED_LIBRARY:
        return True
    if any(module == lib or module.startswith(lib + ".") for lib in _LIBRARIES):
        return False
    return module.split(".")[0] not in sys.stdlib_module_names


def _library_function(value):
    """The shim's stand-in for a numpy/torch function imported by name (``from torch import where``), else None."""
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", None)
    if not name or not callable(value) or isinstance(value, type):
        return None
    for lib, shim in (("numpy", NUMPY_SHIM), ("torch", TORCH_SHIM)):
        if (module == lib or module.startswith(lib + ".") or module.startswith("_" + lib)) and name in vars(shim) \
                and module not in _TRACED_LIBRARY:
            return vars(shim)[name]
    return None


def _rebound(fn: types.FunctionType, glb: dict, tracer: Tracer, memo: dict) -> types.FunctionType:
    closure = None
    if fn.__closure__:
        closure = tuple(types.CellType(_rebind_value(c.cell_contents, tracer, memo, name)) if _has(c) else c
                        for name, c in zip(fn.__code__.co_freevars, fn.__closure__))
    out = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    codes = getattr(tracer, "codes", None)
    if codes is not None:
        codes.update(_codes_of(fn.__code__))
    return out


def _codes_of(code: types.CodeType) -> list:
    """``code`` and the code objects nested in it (functions and lambdas it defines)."""
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
    return out


def _has(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _rebind_value(value, tracer, memo, name: str = "a closure value"):
    if isinstance(value, types.FunctionType):
        return rebind(value, tracer, memo) if _traced_code(value) else value
    if isinstance(value, (functools.partial, types.MethodType)):
        return rebind(value, tracer, memo)
    if _is_module(value, "numpy"):
        return NUMPY_SHIM
    if _is_module(value, "torch"):
        return TORCH_SHIM
    if _is_array(value):
        return _tensor_value(name, value, tracer)
    if isinstance(value, (tuple, list)) and any(isinstance(v, (types.FunctionType, functools.partial)) for v in value):
        return type(value)(_rebind_value(v, tracer, memo, name) for v in value)  # and_masks(*mask_mods)
    lib = _library_function(value)
    return lib if lib is not None else value

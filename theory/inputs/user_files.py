"""Importing a user's file: ``file.py:function`` (or a factory call) to the function it names.

:func:`import_function` is the one place a user's file is imported, and only with a
permission (:mod:`theory.user_code`); a file inside a package is imported by its
dotted name (:func:`package_of`). :func:`resolve_function` calls a factory
(``make(3)``, parsed without eval by :mod:`theory.inputs.calls`) once.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
from typing import Callable

from hasse.theory.errors import InputError
from hasse.theory.inputs.calls import factory_problem, parse_call
from hasse.theory.user_code import in_child as user_code_in_child
from hasse.theory.user_code import raised as user_raised
from hasse.theory.user_code import require_permission

_module_ids = itertools.count()


def callable_name(fn) -> str:
    """How messages name a function (or another callable)."""
    return getattr(fn, "__name__", type(fn).__name__)


def package_of(path: str) -> tuple[str, str] | None:
    """``(root folder, dotted name)`` of a file inside a package (its folder holds ``__init__.py``), else None.

    The folders holding ``__init__.py`` are walked up; the first one without it is the
    root that goes on ``sys.path``, as when the package is imported by name.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "gym" / "masks").mkdir(parents=True)
    >>> for f in ("gym/__init__.py", "gym/masks/__init__.py", "gym/masks/window.py"):
    ...     _ = (root / f).write_text("")
    >>> found = package_of(str(root / "gym" / "masks" / "window.py"))
    >>> found[1], found[0] == str(root)
    ('gym.masks.window', True)
    >>> package_of(str(root / "gym.py")) is None
    True
    """
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    inside = len(parts) > (0 if stem == "__init__" else 1)
    if not inside or not all(p.isidentifier() for p in parts):
        return None
    return folder, ".".join(parts)


def import_function(path: str, function: str, source: str, permission) -> Callable:
    """Import ``path`` and return its attribute ``function`` (errors: InputError): the one place a user's file is imported.

    ``permission`` must be a :class:`theory.user_code.CodePermission`: the command line
    (a code name typed as an argument) or ``--trust-code`` grants one; every reader of a
    data file passes None, refused here before the file runs. A file inside a package
    (folders holding ``__init__.py``) is imported by its dotted name with the package's
    root on ``sys.path`` (:func:`package_of`), so its relative and absolute package
    imports work; any other file as a fresh module, its folder on ``sys.path``.
    """
    require_permission(permission, source)
    package = package_of(path)
    folder = package[0] if package else os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)  # so that the file can import its neighbours, as a script (or its package) would
    try:
        module = _import_in_package(path, *package) if package else _import_alone(path)
    finally:
        if sys.path and sys.path[0] == folder:
            del sys.path[0]
    fn = getattr(module, function, None)
    if fn is None:
        defined = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))
        listing = ", ".join(defined) if defined else "none"
        raise InputError(f"no function '{function}' in {path} (callables defined there: {listing})", source)
    if not callable(fn):
        raise InputError(f"'{function}' in {path} is not a function", source)
    return fn


def _import_alone(path: str):
    """``path`` executed as a fresh module of its own (a file outside any package)."""
    name = f"_hasse_mask_mod_{next(_module_ids)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError("cannot be imported as a Python module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: one line, never the end of the command
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt) and not user_code_in_child():
            raise
        raise InputError(user_raised("importing it", exc, path), path) from None
    return module


def _import_in_package(path: str, root: str, dotted: str):
    """The module ``dotted`` imported by name (its package's root first on ``sys.path``); it must be ``path``.

    The package's modules are taken out of ``sys.modules`` again afterwards (the function keeps
    what it uses): another package of the same name, in another folder, imports afresh later.
    """
    before = set(sys.modules)
    try:
        module = importlib.import_module(dotted)
    except BaseException as exc:  # noqa: BLE001 - as in _import_alone
        if isinstance(exc, KeyboardInterrupt) and not user_code_in_child():
            raise
        raise InputError(user_raised(f"importing it as {dotted}", exc, path), path) from None
    finally:
        top = dotted.split(".")[0]
        for name in set(sys.modules) - before:
            if name == top or name.startswith(top + "."):
                del sys.modules[name]
    found = getattr(module, "__file__", None)
    if not found or os.path.realpath(found) != os.path.realpath(path):
        raise InputError(f"importing it as {dotted} (its package's name) finds {found or 'another module'}, "
                         f"not this file: another package named {dotted.split('.')[0]} comes first", path)
    return module


def resolve_function(path: str, function: str, source: str, permission, imported: Callable | None = None) -> Callable:
    """The mask_mod that ``function`` names in ``path``: a function, or what a factory call returns.

    ``function`` is a name (``sliding``) or a call with literal arguments
    (``generate_sliding_window(3)``, :func:`theory.inputs.calls.parse_call`); the
    factory is called once and must return a ``mask_mod(b, h, q_idx, kv_idx)``. A
    name whose function cannot take those four arguments is refused as a factory
    named without its call (:func:`theory.inputs.calls.factory_problem`).
    ``permission``: as :func:`import_function`. Call it inside a bounded run
    (:func:`theory.user_code.run`): the file and the factory are the user's code. ``imported``: the
    function (or factory) ``function`` names, when the caller has imported it already.
    """
    if "(" not in function:
        fn = imported if imported is not None else import_function(path, function, source, permission)
        if problem := factory_problem(fn, function, path):
            raise InputError(problem, source)
        return fn
    name, args, kwargs = parse_call(function, source)  # before the file runs: bad arguments never execute it
    factory = imported if imported is not None else import_function(path, name, source, permission)
    try:
        fn = factory(*args, **kwargs)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(user_raised(function, exc, path), source) from None
    if not callable(fn):
        shown = repr(fn)
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        raise InputError(f"{function} returned {type(fn).__name__} ({shown}), not a mask_mod(b, h, q_idx, kv_idx)",
                         source)
    if factory_problem(fn, callable_name(fn), path):
        raise InputError(f"{function} returned '{callable_name(fn)}', which cannot take the four arguments "
                         "(b, h, q_idx, kv_idx) of a mask_mod", source)
    return fn

"""Names a package exports but loads on first use (PEP 562): ``lazy_exports``.

The kit's packages re-export their public names without importing the modules
that define them, so importing a package stays cheap (``import hasse`` loads no
engine, no z3, no torch) and ``python -m package.module`` imports that module once.
"""

from __future__ import annotations

import importlib
from typing import Callable


def lazy_exports(package: str, exports: dict[str, str | tuple[str, str]]) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``exports``: public name -> module (or (module, attribute)).

    A module name starting with ``.`` is relative to ``package``. The attribute
    defaults to the public name. A loaded value is not cached in the package, so
    a submodule of the same name is never shadowed by accident.

    Examples
    --------
    >>> getattr_, dir_ = lazy_exports("demo", {"sqrt": "math", "join": ("os.path", "join")})
    >>> getattr_("sqrt")(9.0), getattr_("join")("a", "b"), dir_()
    (3.0, 'a/b', ['join', 'sqrt'])
    >>> getattr_("nope")
    Traceback (most recent call last):
    ...
    AttributeError: module 'demo' has no attribute 'nope'
    """
    table = {name: (where, name) if isinstance(where, str) else where for name, where in exports.items()}

    def __getattr__(name: str):
        try:
            module, attribute = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        if module.startswith("."):
            module = package + module
        return getattr(importlib.import_module(module), attribute)

    def __dir__() -> list[str]:
        return sorted(table)

    return __getattr__, __dir__

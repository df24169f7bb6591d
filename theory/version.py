"""The kit's version: one place, read by the package metadata, the CLI and certificates; and the versions a
certificate or a report records (:func:`versions`)."""

import platform
import sys

__version__ = "0.1.0"

PROOF_VERSIONS = ("hasse", "python", "platform", "numpy", "networkx", "z3", "sympy")  # a theorem's result
CLAIM_VERSIONS = ("hasse", "z3", "python")  # hasse prove-mask / equiv certificates
AUDIT_VERSIONS = ("transformers", "torch")  # hasse audit: the libraries the models ran with


def versions(names=PROOF_VERSIONS) -> dict:
    """``{name: version}`` for each of ``names``, in that order.

    ``hasse`` is the kit, ``python`` the interpreter, ``platform`` ``sys.platform``; any other
    name is an installed module, imported by name (Z3's version string is its own), None when
    it is not installed.

    >>> versions(("hasse", "no_such_module_here"))
    {'hasse': '0.1.0', 'no_such_module_here': None}
    """
    out = {}
    for name in names:
        if name == "hasse":
            out[name] = __version__
        elif name == "python":
            out[name] = platform.python_version()
        elif name == "platform":
            out[name] = sys.platform
        else:
            out[name] = _module_version(name)
    return out


def _module_version(name: str):
    import importlib

    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    get = getattr(module, "get_version_string", None)  # z3
    return get() if callable(get) else getattr(module, "__version__", None)

"""The fingerprint of the source files a theorem's verdict depends on: what binds a certificate to the code.

Rule (:data:`RULE`). A verdict of theorem ``NAME`` depends on

- every ``.py`` file under ``theory/`` and ``solvers/`` (the mathematics and the
  solvers and generators a proof may import, directly or not);
- every module of ``proofs/`` that is not a proof script (the shared plumbing:
  ``theorem.py``, ``mask_checks.py``, ``task_checks.py``, ``registry.py``, …; a proof
  script is ``proofs/<name>.py`` for a ``name`` in :data:`proofs.registry.NAMES`);
- the theorem's own script ``proofs/<NAME>.py``.

Paths are relative to the kit's package (``theory/order.py``). The fingerprint is
the sha256 of the lines ``"<path> <sha256 of the file's bytes>\\n"`` in path order.
Editing any of those files changes it; editing another theorem's script or the
command line (``hasse/``) does not. A certificate records the fingerprint of each
result and the per-file hashes (``sources``), so ``hasse certificate verify`` can
say which files differ from the checkout it runs in.

>>> fp = fingerprint("limit_is_preorder")
>>> len(fp["sha256"]), fp["files"] > 10, fp == fingerprint("limit_is_preorder")
(64, True, True)
>>> fingerprint("limit_is_preorder")["sha256"] != fingerprint("limit_is_preorder", {})["sha256"]
True
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from hasse.proofs import registry

RULE = ("sha256 over '<path> <sha256 of the file>' lines, in path order, of every .py file under theory/ and "
        "solvers/, every proofs/*.py that is not a proof script, and the theorem's own proofs/<name>.py")
FOLDERS = ("theory", "solvers", "proofs")


def _folders() -> dict[str, Path]:
    import hasse.proofs
    import hasse.solvers
    import hasse.theory

    return {"theory": Path(hasse.theory.__path__[0]), "solvers": Path(hasse.solvers.__path__[0]),
            "proofs": Path(hasse.proofs.__path__[0])}


def _source_files() -> dict[str, Path]:
    """``{"theory/order.py": its path, …}``: every ``.py`` file under ``theory/``, ``solvers/`` and ``proofs/``."""
    out = {}
    for name, root in _folders().items():
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            out[f"{name}/{path.relative_to(root).as_posix()}"] = path
    return out


def source_hashes() -> dict[str, str]:
    """``{"theory/order.py": sha256 hex, …}``: every ``.py`` file under ``theory/``, ``solvers/`` and ``proofs/``."""
    return {rel: hashlib.sha256(path.read_bytes()).hexdigest() for rel, path in _source_files().items()}


def check_sources(sources: dict, source: str) -> None:
    """:class:`InputError` unless ``sources`` (a certificate's per-file hashes) names only this kit's own files.

    Each key must be a relative path of one of the files :func:`source_hashes` hashes
    (``theory/order.py``): no absolute path, no ``..``, nothing outside the kit, and so
    never more entries than the kit has. Nothing named there is ever opened.

    >>> check_sources({"theory/order.py": "0" * 64}, "c.json")
    >>> check_sources({"/etc/passwd": "0" * 64}, "c.json")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: c.json: "sources" names '/etc/passwd', not a relative path inside the kit
    >>> check_sources({"theory/nothing.py": "0" * 64}, "c.json")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: c.json: "sources" names 'theory/nothing.py', not one of the kit's source files
    """
    from hasse.theory.errors import InputError

    own = _source_files()
    if len(sources) > len(own):
        raise InputError(f'"sources" has {len(sources):,} entries, more than the kit\'s {len(own):,} source files',
                         source)
    for key in sources:
        shown = repr(key) if len(key) <= 80 else repr(key[:80]) + " …"
        parts = key.split("/")
        if key.startswith("/") or "\\" in key or ":" in key or any(p in ("", ".", "..") for p in parts):
            raise InputError(f'"sources" names {shown}, not a relative path inside the kit', source)
        if key not in own:
            raise InputError(f'"sources" names {shown}, not one of the kit\'s source files', source)


def files_for(name: str, hashes: dict[str, str]) -> list[str]:
    """The paths (among ``hashes``) that a verdict of theorem ``name`` depends on, by :data:`RULE`."""
    scripts = {f"proofs/{n}.py" for n in registry.NAMES} | {f"proofs/{n}.py" for n in registry.ALIASES}
    own = f"proofs/{registry.ALIASES.get(name, name)}.py"
    return sorted(p for p in hashes if p == own or p not in scripts)


def fingerprint(name: str, hashes: dict[str, str] | None = None) -> dict:
    """``{"sha256": …, "files": k}``: the fingerprint of theorem ``name``'s sources (``hashes``: this checkout)."""
    hashes = source_hashes() if hashes is None else hashes
    files = files_for(name, hashes)
    digest = hashlib.sha256("".join(f"{p} {hashes[p]}\n" for p in files).encode()).hexdigest()
    return {"sha256": digest, "files": len(files)}


def differences(recorded: dict[str, str], current: dict[str, str], name: str | None = None) -> list[str]:
    """What differs between the per-file hashes of a certificate and of this checkout (theorem ``name``'s files).

    >>> differences({"a.py": "1", "b.py": "2"}, {"a.py": "1", "b.py": "3", "c.py": "4"})
    ['b.py changed', 'c.py added']
    """
    if name is not None:
        recorded = {p: recorded[p] for p in files_for(name, recorded)}
        current = {p: current[p] for p in files_for(name, current)}
    out = []
    for p in sorted(set(recorded) | set(current)):
        if p not in current:
            out.append(f"{p} missing here")
        elif p not in recorded:
            out.append(f"{p} added")
        elif recorded[p] != current[p]:
            out.append(f"{p} changed")
    return out

"""The package list, complete by construction (issue 20): every folder with an ``__init__.py``.

The metadata lives in pyproject.toml; only the packages are computed here, because a
list written by hand once left ``hasse.solvers.symbolic`` out of the wheel. The
repository's top-level folders are installed under the one import name ``hasse``
(``theory/`` is ``hasse.theory``, and so on), so nothing the kit installs can collide
with a user's own ``theory.py`` or ``proofs/``.
"""

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent

# import name of each top-level folder
ROOTS = {
    "hasse": "hasse",
    "hasse.theory": "theory",
    "hasse.solvers": "solvers",
    "hasse.proofs": "proofs",
    "hasse.gpu_check": "gpu_check",
}


def packages() -> list[str]:
    """Every package under the roots: a folder holding ``__init__.py``, by its import name."""
    found = []
    for name, folder in ROOTS.items():
        for init in sorted((HERE / folder).rglob("__init__.py")):
            parts = init.parent.relative_to(HERE / folder).parts
            found.append(".".join((name, *parts)))
    return found


setup(packages=packages(), package_dir=ROOTS)

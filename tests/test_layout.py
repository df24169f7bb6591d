"""The layout of the kit: doctests everywhere, imports that point down, no loops.

Layers, lowest first (design §6): ``hasse.theory`` < ``hasse.solvers``,
``hasse.gpu_check`` < ``hasse.proofs`` < ``hasse.views`` (pictures, text, tables, output)
< the command line (``hasse.cli``) and the public API (every other ``hasse.*`` module).
A module may import its own layer or lower ones; ``solvers`` and ``gpu_check`` never
import each other, and no command module (``hasse.cli.<command>``) imports another one.
The module-level import graph must have no cycle (imports inside functions count too:
a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
from pathlib import Path

import networkx as nx
import pytest

import hasse

PACKAGES = ("hasse.theory", "hasse.solvers", "hasse.gpu_check", "hasse.proofs", "hasse.views", "hasse.cli")
LAYER = {"hasse.theory": 0, "hasse.solvers": 1, "hasse.gpu_check": 1, "hasse.proofs": 2, "hasse.views": 3}
TOP = 4  # hasse.cli and its commands, hasse.api, hasse.testing, the pytest plugin

NEEDS_TORCH = ("hasse.gpu_check",)


def all_modules() -> dict[str, Path]:
    """Every module of the installed kit, by import name -> source file."""
    found: dict[str, Path] = {"hasse": Path(hasse.__file__)}
    for info in pkgutil.iter_modules(hasse.__path__, "hasse."):
        if not info.ispkg:
            found[info.name] = Path(importlib.util.find_spec(info.name).origin)
    for name in PACKAGES:  # every package of the kit, at any depth (hasse.theory.inputs, hasse.cli, ...)
        package = importlib.import_module(name)
        found[name] = Path(package.__file__)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            found[info.name] = Path(importlib.util.find_spec(info.name).origin)
    return found


def layer_of(module: str) -> tuple[int, str]:
    for package, layer in LAYER.items():
        if module == package or module.startswith(package + "."):
            return layer, package
    return TOP, "hasse"


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The kit's modules that ``module`` imports, anywhere in its source."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:  # `from a.b import c` where c is a function
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
    return targets


def import_graph() -> nx.DiGraph:
    modules = all_modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        for target in imports_of(module, path, set(modules)):
            # A submodule that imports its own package's __init__ is not a dependency
            # worth drawing, except the root `hasse`, whose __init__ is the public API.
            if target == "hasse" or not module.startswith(target + "."):
                graph.add_edge(module, target)
    return graph


def test_every_package_is_in_the_graph():
    graph = import_graph()
    for package in PACKAGES:
        assert package in graph
    assert "hasse.theory.order" in graph and "hasse.cli" in graph and "hasse.cli.leak" in graph


def commands() -> set[str]:
    """The command modules (``hasse.cli.command_modules``: the parser registers one module per command)."""
    from hasse.cli import command_modules

    return {module.__name__ for module in command_modules()}


def test_commands_never_import_each_other():
    assert {"hasse.cli.leak", "hasse.cli.analyze", "hasse.cli.prove_mask"} <= commands()
    bad = [f"{a} -> {b}" for a, b in import_graph().edges if a in commands() and b in commands()]
    assert not bad, "a command imports another command:\n" + "\n".join(sorted(bad))


def test_every_module_is_at_most_400_lines():
    """No room too large to read (issue 22): every module of the kit has at most 400 lines."""
    long = {m: n for m, p in all_modules().items() if (n := len(p.read_text().splitlines())) > 400}
    assert not long, f"modules over 400 lines: {long}"


def test_imports_point_down():
    bad = []
    for module, target in import_graph().edges:
        (mine, my_pkg), (theirs, their_pkg) = layer_of(module), layer_of(target)
        if theirs > mine or (theirs == mine and my_pkg != their_pkg):
            bad.append(f"{module} -> {target}")
    assert not bad, "upward or sideways imports:\n" + "\n".join(sorted(bad))


def test_no_import_loops():
    graph = import_graph()
    # A package __init__ that re-exports its submodules is not a loop in the design,
    # so the edges from a package to its own submodules are left out.
    graph.remove_edges_from([(a, b) for a, b in list(graph.edges) if b.startswith(a + ".")])
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "import loops: " + "; ".join(" -> ".join(c + c[:1]) for c in cycles[:5])


def test_the_checker_sees_a_planted_upward_import(tmp_path):
    """The layer rule fires on an upward import (the check can fail)."""
    path = tmp_path / "planted.py"
    path.write_text("from hasse.proofs.registry import THEOREMS\nfrom hasse.cli import main\n")
    targets = imports_of("hasse.theory.planted", path, set(all_modules()))
    assert {"hasse.proofs.registry", "hasse.cli"} <= targets
    assert all(layer_of(t)[0] > layer_of("hasse.theory.planted")[0] for t in targets)


@pytest.mark.parametrize("module", sorted(all_modules()))
def test_doctests(module):
    if module.startswith(NEEDS_TORCH):
        pytest.importorskip("torch")
    loaded = importlib.import_module(module)
    result = doctest.testmod(loaded, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module}"


def source_path(module: str) -> str:
    """The repository path of a module: ``hasse.theory.inputs.read`` -> ``theory/inputs/read.py``."""
    parts = module.split(".")
    top = {"theory", "solvers", "proofs", "gpu_check"}
    folder = parts[1:] if len(parts) > 1 and parts[1] in top else parts
    return "/".join(folder) + ".py"


def test_the_architecture_page_names_every_module():
    """docs/architecture.md names every module of the kit by its whole path (``theory/inputs/read.py``; a package
    by its folder, ``theory/inputs/``), so the page cannot fall behind a new room."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    missing = []
    for module, path in sorted(all_modules().items()):
        rel = source_path(module) if path.name != "__init__.py" else source_path(module).removesuffix(".py") + "/"
        if path.name == "__main__.py" or module == "hasse":
            continue
        if rel not in page:
            missing.append(rel)
    assert not missing, f"docs/architecture.md does not name: {missing}"

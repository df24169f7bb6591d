"""The README's Python API examples run as written (doctest over README.md)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples():
    pytest.importorskip("torch")  # one example checks gradients of a real layer
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10, "the README lost its Python API examples"
    assert result.failed == 0


def _api_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Python API")
    return text[start:text.index("\n## ", start + 1)]


def test_every_name_the_api_section_uses_exists():
    """``hasse.X`` in the README's Python API section (prose or examples) names something ``import hasse`` has."""
    import re

    import hasse

    used = set(re.findall(r"\bhasse\.([A-Za-z_][A-Za-z0-9_]*)", _api_section()))
    assert {"Task", "find_leaks", "load_mask"} <= used
    missing = sorted(name for name in used if not hasattr(hasse, name))
    assert not missing, f"the README's API section names hasse.{missing[0]}, which does not exist"


def test_the_api_section_names_every_exported_name():
    import re

    import hasse

    named = set(re.findall(r"`(?:hasse\.)?([A-Za-z_][A-Za-z0-9_]*)", _api_section()))
    named |= set(re.findall(r"\bhasse\.([A-Za-z_][A-Za-z0-9_]*)", _api_section()))
    assert not sorted(set(hasse.__all__) - named), f"exported but not in the README: {set(hasse.__all__) - named}"


def test_no_exported_name_is_also_a_submodule():
    """A package name means one thing: ``from hasse.theory import empty_rows`` is the module, never shadowed by
    (or shadowing) a function of the same name that the package exports lazily."""
    import importlib
    import importlib.util

    for package in ("hasse", "hasse.theory"):
        module = importlib.import_module(package)
        for name in module.__all__:
            if name.startswith("__"):
                continue
            assert importlib.util.find_spec(f"{package}.{name}") is None, f"{package}.{name} is a module and an export"
    from hasse.theory import empty_rows  # the module, whatever was imported before

    assert hasattr(empty_rows, "apply_empty_row_policy") and callable(empty_rows.empty_rows)

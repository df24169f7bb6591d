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

"""Symbolic task builders for the derived layouts of theory.tasks.derived_tokens (issue 25)."""

from __future__ import annotations

BUILDERS: dict = {}  # task name -> builder(spec, name, values) -> SymbolicTask (as families._BUILDERS)

"""Families of `hasse derive` (issue 25): any-order autoregression, fill-in-the-middle (PSM, SPM).

Each family is built from its rules (which token each position holds, which it predicts,
what it attends), never from the merged layout; the derived layout is a catalogue task
beside it; :data:`RECIPES` tells `hasse derive` how the two relate (theory.derivations).
"""

from __future__ import annotations

ENTRIES: tuple = ()  # catalogue entries (theory.spec.Entry), kind "task" or "family"
RECIPES: tuple = ()  # theory.derivations.Recipe

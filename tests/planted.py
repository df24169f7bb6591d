"""Bugs planted in the code under test by monkeypatching (shared by the proof tests that must refute them)."""

from __future__ import annotations

from hasse.theory import batch


def closure_one_squaring_short(monkeypatch) -> None:
    """``batch.closure`` made one squaring short of what it needs (R* wrong wherever the last squaring counts)."""
    real = batch.closure

    def short(rows, squarings=None):
        wanted = batch.squarings_needed(rows.shape[0]) if squarings is None else squarings
        return real(rows, max(wanted - 1, 0))

    monkeypatch.setattr(batch, "closure", short)

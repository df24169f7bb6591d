"""The input wing's MASK reader for the tests: ``load_mask`` and ``load_mask_grid`` with the torch hooks a
test gives (``fallback``, ``torch_reader``; None: absent), and ``code`` None unless given (a test names the
permission to run a mask_mod)."""

from __future__ import annotations

from contextlib import contextmanager

from hasse.theory.inputs import hooks
from hasse.theory.inputs.masks import read_grid
from hasse.theory.inputs.read import Reading, Subject


@contextmanager
def given_hooks(fallback=None, torch_reader=None):
    """The input wing's hooks are ``fallback`` and ``torch_reader`` inside the block (then as before)."""
    saved = dict(hooks._PROVIDERS)
    hooks.register(fallback=lambda: fallback, torch_reader=lambda: torch_reader)
    try:
        yield
    finally:
        hooks._PROVIDERS.clear()
        hooks._PROVIDERS.update(saved)


def load_mask_grid(source, *, resolve_spec=None, fallback=None, torch_reader=None, code=None, **options):
    """``(NamedMask, HeadMasks)`` of ``source`` (:func:`hasse.theory.inputs.masks.read_grid`)."""
    with given_hooks(fallback, torch_reader):
        return read_grid(source, Reading(code=code, **options), resolve_spec)


def load_mask(source, **options):
    """The one matrix of ``source``: batch row 0's union over heads (:meth:`Subject.first_row`)."""
    named, grid = load_mask_grid(source, **options)
    return Subject("mask", source, str(source), mask=named, grid=grid).first_row()

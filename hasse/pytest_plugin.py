"""pytest plugin ``hasse``: leak checks in a user's own test suite.

Installed with the kit (entry point ``pytest11``: ``hasse = "hasse.pytest_plugin"``),
so pytest loads it in every project that has the kit installed. It costs nothing
when unused: loading it imports neither numpy, z3 nor torch, only registers a
marker and three fixtures; ``-p no:hasse`` turns it off.

- marker ``@pytest.mark.hasse_no_leak(mask, labels=..., **options)``: before the test
  body runs, :func:`hasse.testing.assert_no_leak` checks ``mask`` (a spec, a file, a
  ``file.py:mask_mod``, an array, a mask_mod with ``n=``); without ``labels`` the mask is
  read as next-token prediction (position ``i`` predicts token ``i + 1``, as ``hasse
  leak MASK`` reads a bare mask). A leak fails the test with the message alone (no
  traceback into the kit): the verdict, the witness paths and the command line.
- fixture ``assert_no_leak``: :func:`hasse.testing.assert_no_leak` itself.
- fixture ``hasse_mask``: :func:`hasse.load_mask` (a mask from any form -> ``NamedMask``).
- fixture ``hasse_task``: :func:`hasse.load_task`.

The marker registers itself, so ``--strict-markers`` passes.
"""

from __future__ import annotations

import pytest

MARKER = "hasse_no_leak"


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(mask, labels=None, **options): fail the test if the mask leaks (hasse.testing.assert_no_leak; "
        "without labels: next-token prediction)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item) -> None:
    """Run every ``hasse_no_leak`` marker of the test before its body; a leak fails it with the message only."""
    for marker in item.iter_markers(MARKER):
        message = check_marker(*marker.args, **marker.kwargs)
        if message is not None:
            pytest.fail(message, pytrace=False)


def check_marker(mask=None, labels=None, **options) -> str | None:
    """The failure message of one ``hasse_no_leak`` marker, or None when the mask does not leak.

    Bad arguments (no mask, a label out of range, an unknown spec) are a usage error
    of the marker: they fail the test too, with a message that says so.
    """
    from hasse.testing import assert_no_leak

    if mask is None:
        return f"@pytest.mark.{MARKER} needs a mask: @pytest.mark.{MARKER}('causal:n=8')"
    try:
        if labels is None:
            labels = _next_token_labels(mask, options)
        assert_no_leak(mask, labels, **options)
    except AssertionError as exc:
        return f"{MARKER}: {exc}"
    except (ValueError, TypeError) as exc:
        return f"@pytest.mark.{MARKER}: {exc}"
    return None


def _next_token_labels(mask, options: dict) -> list:
    """Position ``i`` predicts token ``i + 1`` (the last predicts nothing), on as many positions as the mask has."""
    from hasse.testing import _as_grid
    from hasse.theory.errors import InputError

    try:
        grid, _ = _as_grid(mask, options.get("n"), options.get("heads"), options.get("batch"),
                           options.get("trust_code", False), options.get("convention", "auto"))
        size = grid.n
    except InputError as exc:
        raise ValueError(str(exc)) from None
    return [i + 1 for i in range(size - 1)] + [None]


@pytest.fixture
def assert_no_leak():
    """:func:`hasse.testing.assert_no_leak`: ``assert_no_leak(mask, labels, ...)`` fails the test on a leak."""
    from hasse.testing import assert_no_leak as check

    return check


@pytest.fixture
def hasse_mask():
    """:func:`hasse.load_mask`: ``hasse_mask("sliding_window:n=8,w=2")`` -> ``NamedMask`` (any form a command takes)."""
    from hasse.api import load_mask

    return load_mask


@pytest.fixture
def hasse_task():
    """:func:`hasse.load_task`: a task from a spec, a task JSON or a ``Task``."""
    from hasse.api import load_task

    return load_task

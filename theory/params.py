"""The parameters of the built-in entries: the shared declarations and the checks on their values.

Every mask family and built-in task checks its arguments with these functions, so
that problems are reported in the same words: an :class:`~theory.errors.InputError`
that names the parameter (``n must be a positive integer, got 0``), without a source;
the catalogue adds the spec. :data:`N` and :data:`BLOCK` are the :class:`~theory.spec.Param`
declarations most mask entries share.
"""

from __future__ import annotations

import numbers
from typing import Iterable

from hasse.theory.errors import InputError
from hasse.theory.spec import Param

N = Param("n", "int", help="number of tokens (n >= 1)")  # the size parameter of most mask families
BLOCK = Param("block", "int", help="block size l; must divide n")


def require_int(name: str, value) -> int:
    """Return ``value`` as an ``int``; raise :class:`InputError` for non-integers (bools too)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be an integer, got {value!r}")
    return int(value)


def require_positive(name: str, value) -> int:
    """Return ``value`` as an ``int`` >= 1, else raise :class:`InputError`."""
    value = require_int(name, value)
    if value < 1:
        raise InputError(f"{name} must be a positive integer, got {value}")
    return value


def require_non_negative(name: str, value) -> int:
    """Return ``value`` as an ``int`` >= 0, else raise :class:`InputError`."""
    value = require_int(name, value)
    if value < 0:
        raise InputError(f"{name} must be a non-negative integer, got {value}")
    return value


def require_block(n: int, block) -> tuple[int, int]:
    """Check ``n >= 1``, ``block >= 1`` and that ``block`` divides ``n``; return both."""
    n = require_positive("n", n)
    block = require_positive("block", block)
    if n % block:
        raise InputError(f"block = {block} does not divide n = {n}")
    return n, block


def require_int_list(name: str, values: Iterable) -> tuple[int, ...]:
    """Return ``values`` as a non-empty tuple of ints, else raise :class:`InputError`."""
    if isinstance(values, (str, bytes)):
        raise InputError(f"{name} must be a list of integers, got {values!r}")
    try:
        items = tuple(values)
    except TypeError:
        raise InputError(f"{name} must be a list of integers, got {values!r}") from None
    if not items:
        raise InputError(f"{name} must not be empty")
    return tuple(require_int(f"{name}[{i}]", v) for i, v in enumerate(items))


def require_at_least(name: str, value, low: int, why: str) -> int:
    """Return ``value`` as an ``int`` >= ``low``, else raise :class:`InputError` saying ``why``."""
    value = require_int(name, value)
    if value < low:
        raise InputError(f"{name} must be at least {low} ({why}), got {value}")
    return value


def require_index(name: str, value, low: int, high: int, what: str) -> int:
    """Return ``value`` as an ``int`` in ``low … high``, else raise :class:`InputError`.

    >>> require_index("k", 4, 1, 3, "ar:n=4 has tasks k = 1 … 3")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: k = 4 is out of range: ar:n=4 has tasks k = 1 … 3
    """
    value = require_int(name, value)
    if not low <= value <= high:
        raise InputError(f"{name} = {value} is out of range: {what}")
    return value

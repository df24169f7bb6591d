"""Helpers shared by the mask families: parameter checks, the dense grid, a text picture.

Private to :mod:`theory.masks`; the families import from here so that every one
checks its parameters and reports problems in the same words.
"""

from __future__ import annotations

import numbers
from typing import Callable, Iterable, Sequence

from hasse.theory.errors import InputError, check_fits
from hasse.theory.mask import NamedMask, default_names, grid
from hasse.theory.spec import Param

N = Param("n", "int", help="number of tokens (n >= 1)")  # the size parameter of most families
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


def plus_joined(values: Sequence[int]) -> str:
    """``(2, 0, 1)`` -> ``"2+0+1"``, the spec syntax of an integer list."""
    return "+".join(str(v) for v in values)


def name_rule(rule: Callable, name: str) -> Callable:
    """Give a rule made by a factory its readable name (``sliding_window_w4``)."""
    rule.__name__ = name
    rule.__qualname__ = name
    return rule


def named_mask(
    rule: Callable, size: int, spec: str, names: Callable[[], Iterable[str]] | None = None
) -> NamedMask:
    """Evaluate ``rule`` on the ``size x size`` grid, after checking that it fits in memory.

    ``names()`` gives the position names (default ``"0" … "size-1"``); it is called
    only after the size check, so a huge size fails fast instead of building names.
    """
    check_fits(size, 1, "mask")
    labels = tuple(names()) if names is not None else default_names(size)
    return NamedMask(grid(rule, size), labels, spec)


def to_text(mask: NamedMask) -> str:
    """A picture of the mask: one row per query, ``1`` where it attends, ``.`` where not.

    >>> from hasse.theory.mask import default_names
    >>> print(to_text(NamedMask(grid(lambda q, k: k <= q, 2), default_names(2), "causal:n=2")))
    causal:n=2  (row q attends column k)
       0 1
    0  1 .
    1  1 1
    """
    width = max(len(name) for name in mask.names) + 1
    lines = [f"{mask.spec}  (row q attends column k)"]
    lines.append(" " * width + "".join(name.rjust(width) for name in mask.names))
    for name, row in zip(mask.names, mask.matrix):
        cells = "".join(("1" if v else ".").rjust(width) for v in row)
        lines.append(name.ljust(width) + cells)
    return "\n".join(line.rstrip() for line in lines)

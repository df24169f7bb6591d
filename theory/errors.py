"""Errors raised on bad input.

Every problem with what a user gave the kit (a file, a spec, a size) raises
:class:`InputError` with a one-line message that names the source and what is
wrong. The CLI turns it into exit status 2 and that single line; no traceback.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: a malformed mask, spec, file or size. The message is one line."""

    def __init__(self, message: str, source: str | None = None):
        self.source = source
        text = f"{source}: {message}" if source else message
        super().__init__(text.replace("\n", " "))


def clip(value, limit: int) -> str:
    """``str(value)`` for a message, cut after ``limit`` characters with ``… (+K more characters)``.

    Messages quote what a user gave (a name, a number, an exception); a hostile value
    is cut, and the cut says so.

    >>> clip("abcdef", 4), clip(12, 4)
    ('abcd… (+2 more characters)', '12')
    """
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit:,} more characters)"


class TooLargeError(InputError):
    """The dense matrices an operation needs would not fit in memory."""


def check_fits(n: int, bytes_per_entry: float, what: str, limit_bytes: int = 8 << 30) -> None:
    """Raise :class:`TooLargeError` when ``n * n * bytes_per_entry`` exceeds the limit.

    >>> check_fits(1024, 1, "mask")
    >>> check_fits(10**6, 1, "mask")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.TooLargeError: mask of size n = 1000000 needs about 1000.0 GB (n x n x 1 bytes); the limit is 8.6 GB
    """
    need = float(n) * n * bytes_per_entry
    if need > limit_bytes:
        raise TooLargeError(
            f"{what} of size n = {n} needs about {need / 1e9:.1f} GB "
            f"(n x n x {bytes_per_entry:g} bytes); the limit is {limit_bytes / 1e9:.1f} GB"
        )

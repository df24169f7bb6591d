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
        text = f"{clip(source, 200)}: {message}" if source else message  # a hostile source stays one short line
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
    """The dense matrices an operation needs would not fit in memory (the limits: :mod:`theory.limits`)."""

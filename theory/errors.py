"""Errors raised on bad input.

Every problem with what a user gave the kit (a file, a spec, a size) raises
:class:`InputError` with a one-line message that names the source and what is
wrong. The CLI turns it into exit status 2 and that single line; no traceback.

An error about a parameter (``heads``, ``kv_len``, …) carries it as ``param``, and its
message names it by a placeholder: ``{heads}`` (the name), ``{queries=separate}`` or
``{heads = 3}`` (the name with a value). ``str(err)`` spells them as the Python API
does (``heads``, ``queries=separate``, ``heads = 3``); :meth:`InputError.worded`
spells them in another vocabulary, the command line's flags (``--heads``, ``--queries
separate``, ``--heads 3``: the table ``FLAGS`` of :mod:`hasse.cli.parsers`).

>>> err = InputError("{heads = 3} does not divide 4", "m.npy", param="heads")
>>> str(err), err.param
('m.npy: heads = 3 does not divide 4', 'heads')
>>> str(err.worded({"heads": "--heads"}))
'm.npy: --heads 3 does not divide 4'
"""

from __future__ import annotations

import re

PARAMS = ("heads", "batch", "kv_len", "queries", "empty_rows", "n", "repeat", "convention", "trust_code", "stack")
"""The parameters an error may be about (the Python API's names)."""

_PLACE = re.compile(r"\{(?P<name>" + "|".join(PARAMS) + r")(?P<value>\s*=\s*[^{}]*)?\}")


class InputError(ValueError):
    """Bad input: a malformed mask, spec, file or size. The message is one line.

    ``param``: the parameter the message is about (one of :data:`PARAMS`), named in the
    message by placeholders (see the module's docstring); None: a message without any.
    """

    def __init__(self, message: str, source: str | None = None, param: str | None = None):
        self.source = source
        self.param = param
        text = f"{clip(source, 200)}: {message}" if source else message  # a hostile source stays one short line
        self.template = text.replace("\n", " ")
        super().__init__(_spelled(self.template, None) if param else self.template)

    def worded(self, words: dict[str, str]) -> "InputError":
        """The same error with its parameters spelled by ``words`` (name -> word, e.g. ``"kv_len": "--kv-len"``).

        A parameter with a value reads ``WORD VALUE``; an error without ``param`` is returned as it is.
        """
        if self.param is None:
            return self
        copy = InputError.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        ValueError.__init__(copy, _spelled(self.template, words))
        return copy

    def within(self, prefix: str, source: str | None) -> "InputError":
        """This error (same type, same ``param``) inside another source's message: ``source: prefix<message>``."""
        copy = InputError.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        InputError.__init__(copy, f"{prefix}{self.template}", source, self.param)
        return copy


def _spelled(template: str, words: dict[str, str] | None) -> str:
    """``template`` with its placeholders spelled: the API's words (``words`` None) or ``words``'s."""

    def spell(found: re.Match) -> str:
        name, value = found["name"], found["value"]
        if words is None or name not in words:
            return name + (value or "")
        return words[name] + (" " + value.split("=", 1)[1].strip() if value else "")

    return _PLACE.sub(spell, template)


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

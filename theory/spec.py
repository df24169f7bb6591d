"""The spec language ``name:key=value,…``: parameters, parsing, and canonical text.

A *spec* names a catalogue entry and its parameters: ``butterfly:n=4``,
``block_two_stream:n=8,block=2,variant=clique``, ``document:lengths=3+2+4,causal=true``.
This module turns spec text into raw ``key -> value`` strings and parsed values and
back; it knows nothing of which entries exist (that is :mod:`theory.catalog`).

Spec syntax (design §7):

- ``name`` then ``:`` then ``key=value`` items separated by commas. ``name`` alone
  (no colon) is allowed when every parameter has a default.
- An item without ``=`` continues the previous value: in ``mlm:n=8,masked=1,3`` the
  value of ``masked`` is ``"1,3"``. So integer lists may be written with ``+`` or
  ``,`` between items: ``lengths=3+2+4``, ``order=2,0,1``, ``parents=-1+0+0+1``.
- Booleans are ``true/false``, ``1/0`` or ``yes/no`` (any case).
- Spaces around names, keys and values are ignored; a key may appear only once.

Every problem raises :class:`~theory.errors.InputError` with one line that names
the spec and what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hasse.theory.errors import InputError

if TYPE_CHECKING:  # only for annotations: theory.catalog imports this module
    from hasse.theory.catalog import Entry

PARAM_KINDS = ("int", "int_list", "choice", "bool")
_INT = re.compile(r"-?\d+")
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


@dataclass(frozen=True)
class Param:
    """One parameter of a catalogue entry."""

    name: str  # the key in the spec and the builder's keyword argument
    kind: str  # "int" | "int_list" | "choice" | "bool"
    default: Any = None  # parsed default value; None means the parameter is required
    help: str = ""  # one line for `hasse catalog`
    choices: tuple[str, ...] = ()  # the allowed values of a "choice"

    def __post_init__(self):
        if self.kind not in PARAM_KINDS:
            raise ValueError(f"parameter {self.name!r}: kind must be one of {PARAM_KINDS}, got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"parameter {self.name!r}: a choice needs its choices")

    @property
    def required(self) -> bool:
        return self.default is None

    def placeholder(self) -> str:
        """How :meth:`Entry.usage` shows the value: ``N``, ``A+B+…``, ``true|false``, ``chain|clique``."""
        if self.kind == "int":
            return self.name.upper()
        if self.kind == "int_list":
            return "A+B+…"
        if self.kind == "bool":
            return "true|false"
        return "|".join(self.choices)


# --------------------------------------------------------------------------- parsing


def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split a spec into its name and raw ``key -> value`` strings (no checks against entries).

    >>> parse_spec("butterfly:n=4")
    ('butterfly', {'n': '4'})
    >>> parse_spec("mlm:n=8,masked=1,3")
    ('mlm', {'n': '8', 'masked': '1,3'})
    >>> parse_spec("ar")
    ('ar', {})
    >>> parse_spec("causal:n=4,n=5")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: causal:n=4,n=5: parameter 'n' is given twice
    """
    if not isinstance(text, str):
        raise InputError(f"a spec must be a string, got {type(text).__name__}")
    source = text.strip()
    if not source:
        raise InputError("empty spec; expected name:key=value,…")
    name, colon, rest = source.partition(":")
    name = name.strip()
    if not name:
        raise InputError("the spec has no name before ':'", source)
    values: dict[str, str] = {}
    if not colon or not rest.strip():
        return name, values
    last = None
    for piece in rest.split(","):
        piece = piece.strip()
        if not piece:
            raise InputError("empty item between commas", source)
        key, eq, value = piece.partition("=")
        if not eq:
            if last is None:
                raise InputError(f"item {piece!r} has no key (expected key=value)", source)
            values[last] += "," + piece
            continue
        key = key.strip()
        if not key:
            raise InputError(f"item {piece!r} has no key (expected key=value)", source)
        if key in values:
            raise InputError(f"parameter {key!r} is given twice", source)
        values[key] = value.strip()
        last = key
    return name, values


def parse_value(param: Param, raw: str, source: str | None = None) -> Any:
    """Parse the raw string of one parameter according to its kind.

    >>> parse_value(Param("order", "int_list"), "2,0+1")
    (2, 0, 1)
    >>> parse_value(Param("causal", "bool", False), "Yes")
    True
    >>> parse_value(Param("n", "int"), "2.5")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: n must be an integer, got '2.5'
    """
    if param.kind == "int":
        if not _INT.fullmatch(raw):
            raise InputError(f"{param.name} must be an integer, got {raw!r}", source)
        return int(raw)
    if param.kind == "int_list":
        items = [item.strip() for item in re.split(r"[+,]", raw)]
        if not raw or not all(_INT.fullmatch(item) for item in items):
            raise InputError(
                f"{param.name} must be integers separated by '+' or ',' (like 3+2+4), got {raw!r}", source
            )
        return tuple(int(item) for item in items)
    if param.kind == "bool":
        word = raw.lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise InputError(f"{param.name} must be true or false (or 1/0, yes/no), got {raw!r}", source)
    if raw not in param.choices:
        raise InputError(f"{param.name} must be one of {', '.join(param.choices)}; got {raw!r}", source)
    return raw


def format_value(param: Param, value: Any) -> str:
    """The canonical text of a parsed value: ``4``, ``2+0+1``, ``true``, ``chain``.

    >>> format_value(Param("lengths", "int_list"), (3, 2))
    '3+2'
    """
    if param.kind == "int_list":
        return "+".join(str(int(v)) for v in value)
    if param.kind == "bool":
        return "true" if value else "false"
    return str(value)


def canonical_spec(entry: Entry, values: dict[str, Any]) -> str:
    """``name:key=value,…`` with every parameter, in the entry's order, values canonical.

    >>> from theory.catalog import get_entry
    >>> canonical_spec(get_entry("block_two_stream"), {"n": 4, "block": 2, "variant": "chain"})
    'block_two_stream:n=4,block=2,variant=chain'
    """
    items = [f"{p.name}={format_value(p, values[p.name])}" for p in entry.params]
    return entry.name + (":" + ",".join(items) if items else "")

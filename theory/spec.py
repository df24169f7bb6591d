"""The spec language ``name:key=value,…`` and the registry of catalogue entries.

A *spec* names a catalogue entry and its parameters: ``butterfly:n=4``,
``block_two_stream:n=8,block=2,variant=clique``, ``document:lengths=3+2+4,causal=true``.
This module turns spec text into raw ``key -> value`` strings and parsed values and
back, and holds the registry: :class:`Entry` (a name, its :class:`Param` list and its
builder), :func:`register`, :func:`entries`, :func:`get_entry`. It imports no entry:
each mask family declares its own (``theory.masks.<family>.ENTRY``), and
:mod:`theory.catalog` imports them all, so the registry is complete once the
catalogue is imported (resolving and building specs are there too).

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
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from hasse.theory.errors import InputError, clip
from hasse.theory.limits import parse_int

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
    aliases: tuple[str, ...] = ()  # other keys accepted for this parameter (``w`` for ``window``)

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


@dataclass(frozen=True)
class Entry:
    """A named thing the catalogue can build from a spec."""

    name: str  # the spec name, e.g. "butterfly"
    summary: str  # one line for `hasse catalog`
    params: tuple[Param, ...]  # in canonical order
    builder: Callable[..., Any] = field(repr=False)  # called with one keyword per param, parsed
    kind: str = "mask"  # what the builder returns: "mask" (a NamedMask), "task", "family", …

    def param(self, name: str) -> Param | None:
        """The parameter called ``name`` or accepting ``name`` as an alias; None if none."""
        return next((p for p in self.params if p.name == name or name in p.aliases), None)

    def usage(self) -> str:
        """The spec pattern: ``block_two_stream:n=N,block=BLOCK[,variant=chain|clique]``.

        >>> import hasse.theory.catalog  # registers the built-in entries
        >>> get_entry("document").usage()
        'document:lengths=A+B+…[,causal=true|false]'
        """
        items = [f"{p.name}={p.placeholder()}" for p in self.params if p.required]
        text = self.name + (":" + ",".join(items) if items else "")
        for p in self.params:
            if not p.required:
                text += f"[{',' if items else ':'}{p.name}={p.placeholder()}]"
                items.append(p.name)
        return text


@dataclass(frozen=True)
class Spec:
    """A parsed and checked spec: the entry, the parsed values, and the canonical text."""

    entry: Entry
    values: tuple[tuple[str, Any], ...]  # (param name, parsed value), every param, canonical order
    canonical: str  # e.g. "block_two_stream:n=4,block=2,variant=chain"

    def kwargs(self) -> dict[str, Any]:
        return dict(self.values)


# --------------------------------------------------------------------------- registry

_REGISTRY: dict[tuple[str, str], Entry] = {}  # (kind, name) -> entry, in registration order


def register(entry: Entry) -> Entry:
    """Add an entry to the catalogue (the mask families, tasks, task families and bad designs).

    One name may be registered once per kind (``butterfly`` is both a mask and a
    task). Raises ``ValueError`` (a programming error, not bad input) if taken.
    """
    key = (entry.kind, entry.name)
    if key in _REGISTRY:
        raise ValueError(f"catalogue {entry.kind} {entry.name!r} is already registered")
    _REGISTRY[key] = entry
    return entry


def entries(kind: str | None = None) -> tuple[Entry, ...]:
    """Every entry in registration order, or only those of one ``kind``."""
    return tuple(e for e in _REGISTRY.values() if kind is None or e.kind == kind)


def mask_entries() -> tuple[Entry, ...]:
    """The entries that build a :class:`~theory.mask.NamedMask`, in catalogue order."""
    return entries("mask")


def get_entry(name: str, kind: str | None = None, source: str | None = None) -> Entry:
    """The entry called ``name`` (of ``kind``, if given; else the first registered); :class:`InputError` if none.

    >>> import hasse.theory.catalog  # registers the built-in entries
    >>> get_entry("butterfly").summary
    'Butterfly Attention: 3n-2 positions F, B, P; leak-free bidirectional supervision'
    >>> get_entry("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: unknown catalogue entry 'nope'; known: causal, bidirectional, ...
    """
    if kind is not None:
        entry = _REGISTRY.get((kind, name))
    else:
        entry = next((e for (k, n), e in _REGISTRY.items() if n == name), None)
    what = kind or "catalogue entry"
    if entry is None:
        others = [e.kind for (k, n), e in _REGISTRY.items() if n == name]
        if others:
            raise InputError(f"{name!r} is a {others[0]}, not a {kind}", source)
        known = ", ".join(dict.fromkeys(e.name for e in entries(kind)))
        raise InputError(f"unknown {what} {name!r}; known: {known}", source)
    return entry


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


def canonical_keys(entry: Entry, raw: dict[str, str], source: str | None = None) -> dict[str, str]:
    """``raw`` with every alias replaced by its parameter's name (``w`` -> ``window``).

    Unknown keys are left as they are (the caller reports them). Giving a parameter
    under two of its names is an :class:`InputError`.

    >>> import hasse.theory.catalog  # registers the built-in entries
    >>> canonical_keys(get_entry("sliding_window"), {"n": "8", "w": "3"})
    {'n': '8', 'window': '3'}
    >>> canonical_keys(get_entry("sliding_window"), {"w": "3", "window": "3"}, "sliding_window:w=3,window=3")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: sliding_window:w=3,window=3: parameter 'window' is given twice (as 'w' and 'window')
    """
    out: dict[str, str] = {}
    given: dict[str, str] = {}  # canonical name -> the key it was given as
    for key, value in raw.items():
        param = entry.param(key)
        name = param.name if param is not None else key
        if name in out:
            raise InputError(f"parameter {name!r} is given twice (as {given[name]!r} and {key!r})", source)
        out[name] = value
        given[name] = key
    return out


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
            raise InputError(f"{param.name} must be an integer, got {clip(raw, 40)!r}", source)
        return parse_int(raw, param.name, source)  # within 64 bits: no int-str limit, no float overflow later
    if param.kind == "int_list":
        items = [item.strip() for item in re.split(r"[+,]", raw)]
        if not raw or not all(_INT.fullmatch(item) for item in items):
            raise InputError(
                f"{param.name} must be integers separated by '+' or ',' (like 3+2+4), got {raw!r}", source
            )
        return tuple(parse_int(item, param.name, source) for item in items)
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
        return plus_joined(int(v) for v in value)
    if param.kind == "bool":
        return "true" if value else "false"
    return str(value)


def plus_joined(values: Iterable[int]) -> str:
    """``(2, 0, 1)`` -> ``"2+0+1"``, the spec syntax of an integer list.

    >>> plus_joined((2, 0, 1))
    '2+0+1'
    """
    return "+".join(str(v) for v in values)


def canonical_spec(entry: Entry, values: dict[str, Any]) -> str:
    """``name:key=value,…`` with every parameter, in the entry's order, values canonical.

    An optional list left empty (its default ``()``: ``recurrent``'s ``documents``) is
    left out, so that a spec written before the list existed keeps its canonical text.

    >>> import hasse.theory.catalog  # registers the built-in entries
    >>> canonical_spec(get_entry("block_two_stream"), {"n": 4, "block": 2, "variant": "chain"})
    'block_two_stream:n=4,block=2,variant=chain'
    >>> canonical_spec(get_entry("recurrent"), {"n": 4, "chunk": 0, "documents": ()})
    'recurrent:n=4,chunk=0'
    """
    items = [f"{p.name}={format_value(p, values[p.name])}" for p in entry.params
             if not (p.kind == "int_list" and p.default == () and tuple(values[p.name]) == ())]
    return entry.name + (":" + ",".join(items) if items else "")

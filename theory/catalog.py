"""The catalogue: every built-in entry by name, and the spec language ``name:key=value,…``.

A *spec* names an entry and its parameters: ``butterfly:n=4``,
``block_two_stream:n=8,block=2,variant=clique``, ``document:lengths=3+2+4,causal=true``.
The registry maps names to :class:`Entry` objects; an entry's builder returns
whatever the entry builds (a :class:`~theory.mask.NamedMask` for the mask entries;
task families and bad designs register their own kinds).

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
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from theory.errors import InputError
from theory.mask import NamedMask
from theory.masks import (
    bd3lm,
    bidirectional,
    block_causal,
    block_two_stream,
    butterfly,
    causal,
    document,
    prefix_lm,
    sliding_window,
    tree,
    xlnet,
)

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


@dataclass(frozen=True)
class Entry:
    """A named thing the catalogue can build from a spec."""

    name: str  # the spec name, e.g. "butterfly"
    summary: str  # one line for `hasse catalog`
    params: tuple[Param, ...]  # in canonical order
    builder: Callable[..., Any] = field(repr=False)  # called with one keyword per param, parsed
    kind: str = "mask"  # what the builder returns: "mask" (a NamedMask); later issues add more

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def usage(self) -> str:
        """The spec pattern: ``block_two_stream:n=N,block=BLOCK[,variant=chain|clique]``.

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
    theory.errors.InputError: causal:n=4,n=5: parameter 'n' is given twice
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
    theory.errors.InputError: n must be an integer, got '2.5'
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

    >>> canonical_spec(get_entry("block_two_stream"), {"n": 4, "block": 2, "variant": "chain"})
    'block_two_stream:n=4,block=2,variant=chain'
    """
    items = [f"{p.name}={format_value(p, values[p.name])}" for p in entry.params]
    return entry.name + (":" + ",".join(items) if items else "")


# --------------------------------------------------------------------------- registry

_REGISTRY: dict[str, Entry] = {}


def register(entry: Entry) -> Entry:
    """Add an entry to the catalogue (later modules add task families and bad designs).

    Raises ``ValueError`` (a programming error, not bad input) if the name is taken.
    """
    if entry.name in _REGISTRY:
        raise ValueError(f"catalogue entry {entry.name!r} is already registered")
    _REGISTRY[entry.name] = entry
    return entry


def entries(kind: str | None = None) -> tuple[Entry, ...]:
    """Every entry in registration order, or only those of one ``kind``."""
    return tuple(e for e in _REGISTRY.values() if kind is None or e.kind == kind)


def mask_entries() -> tuple[Entry, ...]:
    """The entries that build a :class:`~theory.mask.NamedMask`, in catalogue order."""
    return entries("mask")


def get_entry(name: str, kind: str | None = None, source: str | None = None) -> Entry:
    """The entry called ``name`` (of ``kind``, if given); :class:`InputError` if there is none.

    >>> get_entry("butterfly").summary
    'Butterfly Attention: 3n-2 positions F, B, P; leak-free bidirectional supervision'
    >>> get_entry("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    theory.errors.InputError: unknown catalogue entry 'nope'; known: causal, bidirectional, ...
    """
    entry = _REGISTRY.get(name)
    what = kind or "catalogue entry"
    if entry is None:
        known = ", ".join(e.name for e in entries(kind))
        raise InputError(f"unknown {what} {name!r}; known: {known}", source)
    if kind is not None and entry.kind != kind:
        raise InputError(f"{name!r} is a {entry.kind}, not a {kind}", source)
    return entry


def resolve_spec(text: str, kind: str | None = None) -> Spec:
    """Parse ``text``, find its entry, parse and complete its values (defaults filled in).

    >>> resolve_spec("block_two_stream:block=2,n=4").canonical
    'block_two_stream:n=4,block=2,variant=chain'
    """
    name, raw = parse_spec(text)
    source = text.strip()
    entry = get_entry(name, kind, source)
    for key in raw:
        if entry.param(key) is None:
            known = ", ".join(p.name for p in entry.params) or "none"
            raise InputError(f"unknown parameter {key!r} for {entry.name}; its parameters: {known}", source)
    values: dict[str, Any] = {}
    for p in entry.params:
        if p.name in raw:
            values[p.name] = parse_value(p, raw[p.name], source)
        elif p.required:
            raise InputError(f"missing required parameter {p.name!r} (usage: {entry.usage()})", source)
        else:
            values[p.name] = p.default
    return Spec(entry, tuple(values.items()), canonical_spec(entry, values))


def build_spec(text: str, kind: str | None = None) -> tuple[Spec, Any]:
    """Resolve ``text`` and run the entry's builder; return the spec and what it built.

    An :class:`InputError` from the builder (``block`` not dividing ``n``, …) is
    re-raised with the spec as its source, so the message names the spec.
    """
    spec = resolve_spec(text, kind)
    try:
        built = spec.entry.builder(**spec.kwargs())
    except InputError as exc:
        if exc.source is not None:
            raise
        raise type(exc)(str(exc), text.strip()) from None
    return spec, built


def build_mask(text: str) -> NamedMask:
    """Build the mask named by a spec; its ``spec`` field is the canonical spec.

    >>> m = build_mask("butterfly: n = 2")
    >>> m.spec, m.names
    ('butterfly:n=2', ('F0', 'B1', 'P0', 'P1'))
    >>> build_mask("block_causal:n=4,block=3")
    Traceback (most recent call last):
    ...
    theory.errors.InputError: block_causal:n=4,block=3: block = 3 does not divide n = 4
    """
    spec, mask = build_spec(text, "mask")
    return replace(mask, spec=spec.canonical)


# --------------------------------------------------------------------------- the mask entries

_N = Param("n", "int", help="number of tokens (n >= 1)")
_BLOCK = Param("block", "int", help="block size l; must divide n")

for _entry in (
    Entry("causal", "causal attention: k <= q", (_N,), causal.build),
    Entry("bidirectional", "full attention: every query attends every key", (_N,), bidirectional.build),
    Entry(
        "sliding_window",
        "causal window of w keys, self included: q - w < k <= q",
        (_N, Param("w", "int", help="keys per query, self included (w >= 1)")),
        sliding_window.build,
    ),
    Entry(
        "sliding_window_distance",
        "causal window by distance, d + 1 keys: 0 <= q - k <= d (other libraries' convention)",
        (_N, Param("d", "int", help="largest distance q - k (d >= 0)")),
        sliding_window.build_distance,
    ),
    Entry(
        "prefix_lm",
        "bidirectional prefix, causal after it: k < prefix or k <= q",
        (_N, Param("prefix", "int", help="length of the bidirectional prefix (0 <= prefix <= n)")),
        prefix_lm.build,
    ),
    Entry(
        "document",
        "packed documents: doc(q) == doc(k) (and k <= q when causal)",
        (
            Param("lengths", "int_list", help="document lengths, e.g. 3+2+4; n = their sum"),
            Param("causal", "bool", False, help="causal inside each document"),
        ),
        document.build,
    ),
    Entry(
        "block_causal",
        "block-causal attention: k // l <= q // l",
        (_N, _BLOCK),
        block_causal.build,
    ),
    Entry(
        "bd3lm",
        "BD3-LM block diffusion: 2n positions [x_t ; x_0], clean tokens never attend noised ones",
        (_N, _BLOCK),
        bd3lm.build,
    ),
    Entry(
        "xlnet",
        "XLNet two-stream attention over a factorisation order: 2n positions c, g",
        (Param("order", "int_list", help="factorisation order, a permutation of 0..n-1, e.g. 2+0+1"),),
        xlnet.build,
    ),
    Entry(
        "tree",
        "tree speculation (Medusa): a node attends itself, its ancestors and the cached prefix",
        (
            Param("parents", "int_list", help="parent node of each tree node, -1 for a root, e.g. -1+0+0+1"),
            Param("prefix", "int", 0, help="cached positions before the tree, causal among themselves"),
        ),
        tree.build,
    ),
    Entry(
        "block_two_stream",
        "Block Two-Stream Attention: 2n-l positions C, Q; leak-free, consistent with block inference",
        (_N, _BLOCK, Param("variant", "choice", "chain", "attention among a block's queries", ("chain", "clique"))),
        block_two_stream.build,
    ),
    Entry(
        "butterfly",
        "Butterfly Attention: 3n-2 positions F, B, P; leak-free bidirectional supervision",
        (_N,),
        butterfly.build,
    ),
):
    register(_entry)
del _entry

"""The catalogue: every built-in entry by name, and specs resolved against it.

The registry maps names to :class:`Entry` objects; an entry's builder returns
whatever the entry builds (a :class:`~theory.mask.NamedMask` for the mask entries;
task families and bad designs register their own kinds). :func:`resolve_spec` checks
a spec against its entry and fills in defaults; :func:`build_spec` and
:func:`build_mask` also run the builder. The spec language itself (``name:key=value,…``,
:class:`Param`, parsing and canonical text) is :mod:`theory.spec`; its names are
importable from here too.

Every problem raises :class:`~theory.errors.InputError` with one line that names
the spec and what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask
from hasse.theory.masks import (
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
from hasse.theory.spec import (  # the spec language; also importable from here
    PARAM_KINDS,
    Param,
    canonical_spec,
    format_value,
    parse_spec,
    parse_value,
)


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


# --------------------------------------------------------------------------- registry

_REGISTRY: dict[tuple[str, str], Entry] = {}  # (kind, name) -> entry


def register(entry: Entry) -> Entry:
    """Add an entry to the catalogue (later modules add tasks, task families and bad designs).

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
    _load_builtin_kinds()
    return tuple(e for e in _REGISTRY.values() if kind is None or e.kind == kind)


def mask_entries() -> tuple[Entry, ...]:
    """The entries that build a :class:`~theory.mask.NamedMask`, in catalogue order."""
    return entries("mask")


def get_entry(name: str, kind: str | None = None, source: str | None = None) -> Entry:
    """The entry called ``name`` (of ``kind``, if given; else the first registered); :class:`InputError` if none.

    >>> get_entry("butterfly").summary
    'Butterfly Attention: 3n-2 positions F, B, P; leak-free bidirectional supervision'
    >>> get_entry("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: unknown catalogue entry 'nope'; known: causal, bidirectional, ...
    """
    _load_builtin_kinds()
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


_LOADED = False


def _load_builtin_kinds() -> None:
    """Import the modules that register tasks (they import this module, so lazily)."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        import hasse.theory.tasks  # noqa: F401  (registers the task entries)


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
    hasse.theory.errors.InputError: block_causal:n=4,block=3: block = 3 does not divide n = 4
    """
    name, _ = parse_spec(text)
    _load_builtin_kinds()
    if ("mask", name) not in _REGISTRY and ("task", name) in _REGISTRY:
        task = build_task(text)  # a task spec used as a MASK: its mask, named by its inputs
        return NamedMask(task.mask, task.names, task.name)
    spec, mask = build_spec(text, "mask")
    return replace(mask, spec=spec.canonical)


def build_family(text: str):
    """Build the task family named by a spec (``infill:n=5``): a tuple of tasks."""
    _, tasks = build_spec(text, "family")
    return tuple(tasks)


def build_task(text: str):
    """Build the task named by a spec (``butterfly:n=4``, ``infill:n=5,k=2``, ``bad_mlm_unmasked:n=4``).

    Its ``name`` is the canonical spec.
    """
    spec, task = build_spec(text, "task")
    return replace(task, name=spec.canonical)


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

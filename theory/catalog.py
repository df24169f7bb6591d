"""The catalogue: every built-in entry by name, and specs resolved against it.

Importing this module registers every built-in entry: the mask families (each
declares its own entry, :mod:`theory.masks.entries` registers them in catalogue
order), then the tasks, task families and bad designs (:mod:`theory.tasks`). An
entry's builder returns whatever the entry builds (a :class:`~theory.mask.NamedMask`
for the mask entries, a task or a tuple of tasks for the others).
:func:`resolve_spec` checks a spec against its entry and fills in defaults;
:func:`build_spec`, :func:`build_mask`, :func:`build_task` and :func:`build_family`
also run the builder. The spec language (``name:key=value,…``, :class:`Param`,
parsing and canonical text) and the registry (:class:`Entry`, :func:`register`,
:func:`entries`, :func:`get_entry`) are :mod:`theory.spec`; their names are
importable from here too.

Every problem raises :class:`~theory.errors.InputError` with one line that names
the spec and what is wrong.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import hasse.theory.masks.entries  # noqa: F401  (registers the mask entries, in catalogue order)
import hasse.theory.tasks  # noqa: F401  (registers the tasks, task families and bad designs)
import hasse.theory.presets  # noqa: F401  (registers the model presets, stacks of layers, last)
from hasse.theory.errors import InputError, TooLargeError
from hasse.theory.limits import MEMORY_BYTES
from hasse.theory.mask import NamedMask
from hasse.theory.spec import (  # the spec language and the registry; also importable from here
    _REGISTRY,
    PARAM_KINDS,
    Entry,
    Param,
    Spec,
    canonical_keys,
    canonical_spec,
    entries,
    format_value,
    get_entry,
    mask_entries,
    parse_spec,
    parse_value,
    register,
)

__all__ = [
    "PARAM_KINDS", "Entry", "Param", "Spec", "build_family", "build_mask", "build_spec", "build_task",
    "canonical_spec", "entries", "format_value", "get_entry", "mask_entries", "parse_spec", "parse_value",
    "register", "resolve_spec",
]


def resolve_spec(text: str, kind: str | None = None) -> Spec:
    """Parse ``text``, find its entry, parse and complete its values (defaults filled in).

    >>> resolve_spec("block_two_stream:block=2,n=4").canonical
    'block_two_stream:n=4,block=2,variant=chain'
    """
    name, raw = parse_spec(text)
    source = text.strip()
    entry = get_entry(name, kind, source)
    raw = canonical_keys(entry, raw, source)  # aliases (w -> window) to their parameter's name
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
    if ("mask", name) not in _REGISTRY and ("task", name) in _REGISTRY:
        task = build_task(text)  # a task spec used as a MASK: its mask, named by its inputs
        return NamedMask(task.mask, task.names, task.name)
    spec, mask = build_spec(text, "mask")
    return replace(mask, spec=spec.canonical)


FAMILY_BYTES = MEMORY_BYTES  # the one memory limit (theory.limits): the dense masks of a family's tasks together (about n^3 / 3 entries for n tokens)


def build_family(text: str):
    """Build the task family named by a spec (``infill:n=5``): a tuple of tasks.

    Size guard: a family on ``n`` tokens has about ``n`` tasks of up to ``n x n`` positions,
    so ``n^3 / 3`` mask entries are estimated before anything is built (``TooLargeError``).

    >>> build_family("ar:n=1000000000")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.TooLargeError: ar:n=1000000000: a family on n = 1000000000 tokens has about 1000000000 tasks and 3.3e+26 mask entries (n^3 / 3 bytes); the limit is 8.6 GB
    """
    n = resolve_spec(text, "family").kwargs().get("n")
    if isinstance(n, int) and n ** 3 / 3 > FAMILY_BYTES:
        raise TooLargeError(f"a family on n = {n} tokens has about {n} tasks and {n ** 3 / 3:.1e} mask entries "
                            f"(n^3 / 3 bytes); the limit is {FAMILY_BYTES / 1e9:.1f} GB", text.strip())
    _, tasks = build_spec(text, "family")
    return tuple(tasks)


def build_task(text: str):
    """Build the task named by a spec (``butterfly:n=4``, ``infill:n=5,k=2``, ``bad_mlm_unmasked:n=4``).

    Its ``name`` is the canonical spec.
    """
    spec, task = build_spec(text, "task")
    return replace(task, name=spec.canonical)

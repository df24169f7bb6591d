"""Tasks: ``(inputs, labels, mask)`` over ``N`` positions built on a sample ``x_0 … x_{n-1}``.

Definitions (design.md §3):

- ``inputs[p] = (symbol, pos)``: ``pos`` is the position id fed to the model and
  ``symbol`` one of ``x<i>`` (the content of sample token ``i``), ``agg(x<i>,x<j>,…)``
  (an aggregate of those tokens), ``[MASK]`` or ``[BOS]`` (no content). Any other
  symbol is rejected: unknown content must never be treated as clean.
- ``labels[p]``: the tokens predicted at ``p`` (empty when ``p`` is unsupervised).
- ``isolate``: optional groups of positions (packed documents) that must not see
  each other.

This module is the model only: :class:`Task`, :func:`make_task` (every check) and
the input symbols. The JSON form (§8), ``{"name": …, "tokens": n, "inputs":
[[symbol, pos], …], "labels": [null | t | [t, …], …], "mask": spec | path | rows,
"isolate": [[…], …]}``, is read and written by :mod:`theory.inputs.tasks`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from hasse.theory.deadline import tick
from hasse.theory.errors import InputError
from hasse.theory.mask import as_mask

_TOKEN = re.compile(r"x(\d+)")
_AGG = re.compile(r"agg\(\s*(x\d+(?:\s*,\s*x\d+)*)\s*\)")
NO_CONTENT = ("[MASK]", "[BOS]")


@dataclass(frozen=True)
class Symbol:
    """A parsed input symbol: its canonical text and the sample tokens whose content it holds."""

    text: str
    sources: frozenset[int]


MAX_TOKENS = 1 << 24  # sample size and position ids (a huge integer is bad input, not a size)
MAX_SYMBOL = 100_000  # characters in one input symbol (agg(...) of many tokens included)


def parse_symbol(text: str, tokens: int | None = None, source: str | None = None) -> Symbol:
    """Parse an input symbol strictly.

    >>> parse_symbol("x3").sources
    frozenset({3})
    >>> parse_symbol("agg(x1, x3)")
    Symbol(text='agg(x1,x3)', sources=frozenset({1, 3}))
    >>> parse_symbol("[MASK]").sources
    frozenset()
    >>> parse_symbol("y2")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: unknown input symbol 'y2' (expected x<i>, agg(x<i>,x<j>,…), [MASK] or [BOS])
    """
    if not isinstance(text, str):
        raise InputError(f"an input symbol must be a string, got {text!r}", source)
    stripped = text.strip()
    if stripped in NO_CONTENT:
        return Symbol(stripped, frozenset())
    if len(stripped) > MAX_SYMBOL or re.search(r"\d{19}", stripped):  # int() refuses 4,300 digits
        raise InputError(f"input symbol {stripped[:20]!r}… is too long or names a token beyond 64 bits", source)
    if m := _TOKEN.fullmatch(stripped):
        indices = [int(m.group(1))]
        canonical = f"x{indices[0]}"
    elif m := _AGG.fullmatch(stripped):
        indices = [int(part.strip()[1:]) for part in m.group(1).split(",")]
        canonical = "agg(" + ",".join(f"x{i}" for i in indices) + ")"
    else:
        raise InputError(
            f"unknown input symbol {text!r} (expected x<i>, agg(x<i>,x<j>,…), [MASK] or [BOS])", source
        )
    if tokens is not None:
        for i in indices:
            if i >= tokens:
                raise InputError(f"input symbol {text!r} names token {i}, but the sample has tokens 0…{tokens - 1}",
                                 source)
    return Symbol(canonical, frozenset(indices))


@dataclass(frozen=True)
class Task:
    """A task over ``N`` positions on a sample of ``tokens`` tokens (validated by :func:`make_task`)."""

    tokens: int  # n, the sample size
    inputs: tuple[tuple[str, int], ...]  # (canonical symbol, position id) per position
    labels: tuple[tuple[int, ...], ...]  # targets per position; () = unsupervised
    mask: np.ndarray = field(repr=False)  # (N, N) bool, M[q, k]
    isolate: tuple[tuple[int, ...], ...] = ()
    name: str = ""
    names: tuple[str, ...] = ()  # display label per position
    key_only: tuple[int, ...] = ()  # positions that feed the queries and attend nothing (theory.mask.square_up)
    key_only_kind: str = ""  # "cache" | "memory" | "" (none); leak reports name them

    @property
    def size(self) -> int:
        """``N``, the number of positions."""
        return len(self.inputs)

    def sources(self, p: int) -> frozenset[int]:
        """Tokens whose content position ``p`` holds."""
        return parse_symbol(self.inputs[p][0]).sources

    def all_sources(self) -> tuple[frozenset[int], ...]:
        return tuple(parse_symbol(sym).sources for sym, _ in self.inputs)

    @property
    def supervised(self) -> tuple[int, ...]:
        return tuple(p for p, ts in enumerate(self.labels) if ts)

    def __eq__(self, other):  # numpy arrays need an explicit comparison
        if not isinstance(other, Task):
            return NotImplemented
        return (
            (self.tokens, self.inputs, self.labels, self.isolate, self.name, self.names, self.key_only)
            == (other.tokens, other.inputs, other.labels, other.isolate, other.name, other.names, other.key_only)
            and np.array_equal(self.mask, other.mask)
        )

    __hash__ = None


def _labels(value, p: int, tokens: int, source: str | None) -> tuple[int, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for t in items:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise InputError(f"label of position {p} must be null, a token index or a list of them, got {t!r}",
                             source)
        if not 0 <= t < tokens:
            raise InputError(f"label {t} of position {p} is out of range: the sample has tokens 0…{tokens - 1}",
                             source)
        out.append(int(t))
    return tuple(sorted(set(out)))


def make_task(
    tokens: int,
    inputs,
    labels,
    mask,
    *,
    isolate=(),
    name: str = "",
    names=None,
    source: str | None = None,
) -> Task:
    """Validate the parts of a task and build it; every problem is an :class:`InputError`.

    Calls :func:`theory.deadline.tick` (families build many tasks: ``--timeout`` bounds them).

    >>> t = make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 1], [[1, 0], [1, 1]])
    >>> t.supervised, t.all_sources()
    ((1,), (frozenset({0}), frozenset()))
    >>> make_task(2, [("x0", 0)], [5], [[1]])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: label 5 of position 0 is out of range: the sample has tokens 0…1
    """
    tick()
    if isinstance(tokens, bool) or not isinstance(tokens, (int, np.integer)) or tokens <= 0:
        raise InputError(f"'tokens' must be a positive integer (the sample size n), got {tokens!r}", source)
    if tokens > MAX_TOKENS:
        raise InputError(f"'tokens' = {tokens} is more than the kit handles ({MAX_TOKENS:,})", source)
    tokens = int(tokens)
    parsed_inputs = []
    for p, item in enumerate(inputs):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise InputError(f"input {p} must be [symbol, pos], got {item!r}", source)
        symbol, pos = item
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) or not 0 <= pos < MAX_TOKENS:
            raise InputError(f"input {p}: the position id must be an integer in 0…{MAX_TOKENS - 1}, got {pos!r}",
                             source)
        try:
            parsed = parse_symbol(symbol, tokens)
        except InputError as exc:
            raise InputError(f"input {p}: {exc}", source) from None
        parsed_inputs.append((parsed.text, int(pos)))
    size = len(parsed_inputs)
    if size == 0:
        raise InputError("a task needs at least one position (empty 'inputs')", source)
    labels = list(labels)
    if len(labels) != size:
        raise InputError(f"{len(labels)} labels for {size} inputs; give one label (or null) per position", source)
    parsed_labels = tuple(_labels(v, p, tokens, source) for p, v in enumerate(labels))
    matrix = as_mask(mask, source or "mask")
    if matrix.shape[0] != size:
        raise InputError(f"inputs and mask have different sizes: {size} inputs, mask of size {matrix.shape[0]}",
                         source)
    groups = _isolate_groups(isolate, size, source)
    if names is not None and (not isinstance(names, (list, tuple)) or
                              not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in names)):
        raise InputError(f"'names' must be a list of strings, one per position, got {names!r:.60}", source)
    if names is None or len(names) != size:
        names = tuple(str(p) for p in range(size))
    return Task(tokens, tuple(parsed_inputs), parsed_labels, matrix, groups, name, tuple(str(x) for x in names))


def _isolate_groups(isolate, size: int, source: str | None) -> tuple[tuple[int, ...], ...]:
    groups = []
    seen: dict[int, int] = {}
    if isolate is None:
        isolate = ()
    if not isinstance(isolate, (list, tuple)):  # an int or a bool is no list of groups (0 and false are not "none")
        raise InputError(f"'isolate' must be a list of groups (each a list of positions), got "
                         f"{type(isolate).__name__} {isolate!r:.40}", source)
    for g, group in enumerate(isolate):
        if not isinstance(group, (list, tuple)) or not group:
            raise InputError(f"isolate group {g} must be a non-empty list of positions, got {group!r}", source)
        members = []
        for p in group:
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= p < size:
                raise InputError(f"isolate group {g} names position {p!r}, but the task has positions 0…{size - 1}",
                                 source)
            if int(p) in seen:
                raise InputError(f"isolate groups {seen[int(p)]} and {g} overlap at position {p}", source)
            seen[int(p)] = g
            members.append(int(p))
        groups.append(tuple(sorted(members)))
    return tuple(groups)

"""Tasks: ``(inputs, labels, mask)`` over ``N`` positions built on a sample ``x_0 … x_{n-1}``.

Definitions (design.md §3):

- ``inputs[p] = (symbol, pos)``: ``pos`` is the position id fed to the model and
  ``symbol`` one of ``x<i>`` (the content of sample token ``i``), ``agg(x<i>,x<j>,…)``
  (an aggregate of those tokens), ``[MASK]`` or ``[BOS]`` (no content). Any other
  symbol is rejected: unknown content must never be treated as clean.
- ``labels[p]``: the tokens predicted at ``p`` (empty when ``p`` is unsupervised).
- ``isolate``: optional groups of positions (packed documents) that must not see
  each other.

The JSON form (§8) is ``{"name": …, "tokens": n, "inputs": [[symbol, pos], …],
"labels": [null | t | [t, …], …], "mask": spec | path | rows, "isolate": [[…], …]}``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

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
            (self.tokens, self.inputs, self.labels, self.isolate, self.name, self.names)
            == (other.tokens, other.inputs, other.labels, other.isolate, other.name, other.names)
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

    >>> t = make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 1], [[1, 0], [1, 1]])
    >>> t.supervised, t.all_sources()
    ((1,), (frozenset({0}), frozenset()))
    >>> make_task(2, [("x0", 0)], [5], [[1]])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: label 5 of position 0 is out of range: the sample has tokens 0…1
    """
    if isinstance(tokens, bool) or not isinstance(tokens, (int, np.integer)) or tokens <= 0:
        raise InputError(f"'tokens' must be a positive integer (the sample size n), got {tokens!r}", source)
    tokens = int(tokens)
    parsed_inputs = []
    for p, item in enumerate(inputs):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise InputError(f"input {p} must be [symbol, pos], got {item!r}", source)
        symbol, pos = item
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)) or pos < 0:
            raise InputError(f"input {p}: the position id must be an integer >= 0, got {pos!r}", source)
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
    if names is None or len(names) != size:
        names = tuple(str(p) for p in range(size))
    return Task(tokens, tuple(parsed_inputs), parsed_labels, matrix, groups, name, tuple(str(x) for x in names))


def _isolate_groups(isolate, size: int, source: str | None) -> tuple[tuple[int, ...], ...]:
    groups = []
    seen: dict[int, int] = {}
    for g, group in enumerate(isolate or ()):
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


# ---------------------------------------------------------------------------- JSON


def read_json(path: str):
    """Parse a JSON file; malformed JSON is an :class:`InputError` with line and column."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", path) from None
    if not text.strip():
        raise InputError("empty file", path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", path) from None


def _mask_field(value, source: str, folder: str) -> np.ndarray:
    from hasse.theory.io import load_mask, rows_to_mask

    if isinstance(value, list):
        return rows_to_mask(value, source=source)
    if isinstance(value, str):
        candidate = os.path.join(folder, value)
        try:
            return load_mask(candidate if os.path.exists(candidate) else value).matrix
        except InputError as exc:
            raise InputError(f"'mask': {exc}", source) from None
    raise InputError(f"'mask' must be a spec, a file path or a list of 0/1 rows, got {type(value).__name__}", source)


def task_from_dict(data, source: str, folder: str = "", tokens: int | None = None) -> Task:
    """Build a task from its JSON object (§8). ``tokens`` is the family's sample size, if any."""
    if not isinstance(data, dict):
        raise InputError(f"a task must be a JSON object, got {type(data).__name__}", source)
    unknown = set(data) - {"name", "tokens", "inputs", "labels", "mask", "isolate", "names"}
    if unknown:
        raise InputError(f"unknown task field(s): {', '.join(sorted(unknown))}", source)
    for key in ("inputs", "labels", "mask"):
        if key not in data:
            raise InputError(f"a task needs '{key}'", source)
    n = data.get("tokens", tokens)
    if n is None:
        raise InputError("a task needs 'tokens' (the sample size n)", source)
    if tokens is not None and n != tokens:
        raise InputError(f"task has tokens = {n} but its family has tokens = {tokens}", source)
    if not isinstance(data["inputs"], list) or not isinstance(data["labels"], list):
        raise InputError("'inputs' and 'labels' must be lists", source)
    mask = _mask_field(data["mask"], source, folder)
    return make_task(n, data["inputs"], data["labels"], mask, isolate=data.get("isolate", ()),
                     name=str(data.get("name", "")), names=data.get("names"), source=source)


def task_to_dict(task: Task) -> dict:
    """The JSON object of a task (mask as rows of 0/1), readable by :func:`task_from_dict`."""
    out = {
        "name": task.name,
        "tokens": task.tokens,
        "inputs": [[s, pos] for s, pos in task.inputs],
        "labels": [None if not ts else (ts[0] if len(ts) == 1 else list(ts)) for ts in task.labels],
        "mask": task.mask.astype(int).tolist(),
    }
    if task.isolate:
        out["isolate"] = [list(g) for g in task.isolate]
    if task.names and task.names != tuple(str(p) for p in range(task.size)):
        out["names"] = list(task.names)
    return out


def load_task(source: str) -> Task:
    """A task from a built-in spec (``butterfly:n=4``, ``infill:n=5,k=2``) or a ``.json`` file."""
    if source.lower().endswith(".json") or os.path.isfile(source):
        data = read_json(source)
        if isinstance(data, dict) and "tasks" in data and "inputs" not in data:
            raise InputError("this is a task family (it has 'tasks'); give a single task", source)
        return task_from_dict(data, source, os.path.dirname(source))
    from hasse.theory.catalog import build_task

    return build_task(source)

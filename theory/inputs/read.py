"""The one reader of the kit's inputs: ``read(source, reading, accept=...) -> Subject``.

Every command and every API function reads what it was given here, once. A source
is text (a command-line argument: a spec, a file, ``file.py:function``, a ``--stack``
text) or an object of the Python API (an array, a tensor, a ``BlockMask``, a
:class:`NamedMask`, a :class:`Task`, a sequence of tasks, a :class:`LayerStack`).

:func:`kind_of` is the one place that decides what a source is ("is it a task, a
family, a preset, a stack, a mask or a function?"); :func:`read` reads it as the
first kind of ``accept`` it is, with the options of one :class:`Reading`. Text that
is none of the accepted kinds is read as the last of them, so its reader names what is
wrong ("unknown mask 'x'", "no such file"); an API object of another kind is refused
in one line. The torch hooks (a mask_mod written with torch ops, ``.pt`` files,
``BlockMask`` objects) come from :mod:`theory.inputs.hooks`, registered once above theory.

Errors are :class:`~theory.errors.InputError` with one line; one about a parameter
carries it as ``param`` (the command line names its flag from it: ``flagged`` in
:mod:`hasse.cli.parsers`).

Usage (a command; ``args`` its parsed arguments)::

    from hasse.theory.inputs.read import Reading, kind_of, read

    reading = Reading(n=args.n, heads=args.heads, batch=args.batch, queries=args.queries,
                      kv_len=args.kv_len, convention=args.convention, trust_code=args.trust_code)
    subject = read(args.mask, reading, accept=("preset", "task", "mask"))
    if subject.kind == "mask":      # subject.mask: batch row 0's union over heads (a NamedMask)
        grid = subject.grid         # subject.grid: HeadMasks, the masks per batch row and head
    elif subject.kind == "task":
        task = subject.task
    else:                           # "preset" (or "stack", from --stack): subject.stack, a LayerStack
        stack = subject.stack
    read(args.stack, Reading(n=n, repeat=args.repeat or 1, heads=args.heads, trust_code=args.trust_code,
                             convention=args.convention), accept=("preset", "stack")).stack
    read(args.family, accept=("family",)).family       # tuple[Task, ...]
    read(args.design, accept=("function", "task"))     # "function": a file.py design, read by its owner
    kind_of(text) == "task"                            # a decision without reading (it may read a JSON file)

``subject.first_row()`` is the mask a command that takes one matrix uses (its spec
names the batch row when there are several). The command line's ``main`` words every
error it prints with :func:`hasse.cli.parsers.flagged`, so no command rewords one itself.

>>> subject = read("causal:n=3", accept=("mask",))
>>> subject.kind, subject.label, subject.mask.matrix.astype(int).tolist()
('mask', 'causal:n=3', [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
>>> read("butterfly:n=3", accept=("task", "mask")).kind, read("butterfly:n=3", accept=("mask",)).kind
('task', 'mask')
>>> kind_of("gemma3:n=64"), kind_of("ar:n=4"), kind_of("m.py:causal"), kind_of("causal x2, bidirectional")
('preset', 'task', 'function', 'stack')
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from hasse.theory.errors import InputError
from hasse.theory.heads import HeadMasks
from hasse.theory.inputs.forms import form_of
from hasse.theory.inputs.reading import Reading
from hasse.theory.mask import NamedMask
from hasse.theory.presets import REPEATED_LAYER

__all__ = ("KINDS", "Reading", "Subject", "kind_of", "read")

KINDS = ("mask", "task", "family", "stack", "preset", "function")


@dataclass(frozen=True)
class Subject:
    """What :func:`read` read: its ``kind``, the ``source`` given, its ``label``, and the one field of its kind.

    ``mask`` (kind ``mask``): batch row 0's union over heads, empty rows as given; ``grid``:
    its masks per batch row and head. ``task``, ``family`` (a tuple of tasks), ``stack``
    (kinds ``stack`` and ``preset``). A ``function`` (a ``file.py`` design) is only named.
    """

    kind: str
    source: object
    label: str
    mask: NamedMask | None = None
    grid: HeadMasks | None = None
    task: object | None = None
    family: tuple | None = None
    stack: object | None = None

    def first_row(self) -> NamedMask:
        """The one matrix of a mask: batch row 0's union over heads, its spec naming the row when there are several."""
        if self.grid is not None and self.grid.batch_rows > 1:
            return dataclasses.replace(self.mask, spec=f"{self.mask.spec} [batch row 0 of {self.grid.batch_rows}]")
        return self.mask


def kind_of(source) -> str:
    """What ``source`` is: ``"mask"``, ``"task"``, ``"family"``, ``"stack"``, ``"preset"`` or ``"function"``.

    Text: ``file.py:function`` is a function (read as a mask, it is a mask_mod; so is a Python
    callable that is not an array); a ``.json``
    file is a task (it has ``inputs``), a family (``tasks``), a stack (``layers``) or a mask;
    any other file is a mask; a text with ``;`` or ``xK`` is a stack; a spec is what its
    catalogue entry is (a preset, a task, a family; else a mask). A malformed JSON file is
    reported here, with line and column.

    >>> kind_of("butterfly:n=4"), kind_of("infill:n=5"), kind_of("causal:n=4"), kind_of("m.npy")
    ('task', 'task', 'mask', 'mask')
    """
    return _kinds(source)[0]


def read(source, reading: Reading = Reading(), *, accept: tuple[str, ...]) -> Subject:
    """``source`` read once, as the first kind of ``accept`` it is (see the module's docstring).

    Raises
    ------
    InputError : one line; an API object of a kind not in ``accept`` is refused, text that is none
        of them is read as ``accept[-1]`` (whose reader names what is wrong).
    """
    unknown = [k for k in accept if k not in KINDS]
    if not accept or unknown:
        raise ValueError(f"accept must name kinds of {KINDS}, got {accept!r}")
    kinds = _kinds(source)
    kind = next((k for k in accept if k in kinds), None)
    label = _label(source)
    if kind is None:
        if not isinstance(source, str):
            raise InputError(f"a {kinds[0]} where {' or '.join(f'a {k}' for k in accept)} is expected", label)
        kind = accept[-1]
    return _READERS[kind](source, reading, label)


def _label(source) -> str:
    if isinstance(source, str):
        return source
    spec = getattr(source, "spec", None) or getattr(source, "name", None) or getattr(source, "__name__", None)
    return spec if isinstance(spec, str) and spec else type(source).__name__


def _kinds(source) -> tuple[str, ...]:
    """Every kind ``source`` may be read as, the one :func:`kind_of` gives first."""
    from hasse.theory.stack import LayerStack
    from hasse.theory.task import Task

    if isinstance(source, LayerStack):
        return ("stack",)
    if isinstance(source, Task):
        return ("task",)
    if isinstance(source, (list, tuple)) and source and all(isinstance(t, Task) for t in source):
        return ("family",)
    if not isinstance(source, str):
        return ("function", "mask") if callable(source) and not _is_array(source) else ("mask",)
    form = form_of(source)
    if form == "function":
        return ("function", "mask")
    if form == "file":
        return _file_kinds(source)
    if ";" in source or REPEATED_LAYER.search(source):
        return ("stack",)
    return _spec_kinds(source)


def _is_array(obj) -> bool:
    from hasse.theory.inputs.arrays import is_block_mask, is_tensor

    return is_block_mask(obj) or is_tensor(obj) or hasattr(obj, "shape")


def _file_kinds(path: str) -> tuple[str, ...]:
    if not path.lower().endswith(".json"):
        return ("mask",)
    from hasse.theory.inputs.json_file import read_json

    data = read_json(path)
    if isinstance(data, dict) and "inputs" in data:
        return ("task", "mask")
    if isinstance(data, dict) and "tasks" in data:
        return ("family",)
    if isinstance(data, dict) and "layers" in data and "mask" not in data:
        return ("stack",)
    return ("mask",)


def _spec_kinds(text: str) -> tuple[str, ...]:
    from hasse.theory.catalog import entries, parse_spec
    from hasse.theory.presets import names_a_preset

    if names_a_preset(text):
        return ("preset",)
    try:
        name = parse_spec(text)[0].strip()
    except InputError:
        return ("mask",)
    kinds = tuple(kind for kind in ("task", "family", "mask") if any(e.name == name for e in entries(kind)))
    return kinds or ("mask",)


# --- the readers of each kind ----------------------------------------------------------------


def _read_mask(source, reading: Reading, label: str) -> Subject:
    from hasse.theory.inputs.masks import read_grid

    named, grid = read_grid(source, reading)
    return Subject("mask", source, label if isinstance(source, str) else named.spec, mask=named, grid=grid)


def _read_task(source, reading: Reading, label: str) -> Subject:
    from hasse.theory.inputs.tasks import load_task

    task = source if not isinstance(source, str) else load_task(source, trust_code=reading.trust_code)
    return Subject("task", source, label if isinstance(source, str) else task.name or label, task=task)


def _read_family(source, reading: Reading, label: str) -> Subject:
    from hasse.theory.inputs.tasks import load_family

    family = tuple(source) if not isinstance(source, str) else load_family(source, trust_code=reading.trust_code)
    return Subject("family", source, label, family=family)


def _read_stack(source, reading: Reading, label: str) -> Subject:
    from hasse.theory.inputs.stacks import read_stack

    stack = source if not isinstance(source, str) else read_stack(source, reading)
    return Subject("stack", source, label if isinstance(source, str) else stack.spec, stack=stack)


def _read_preset(source, reading: Reading, label: str) -> Subject:
    from hasse.theory.inputs.stacks import read_stack

    return Subject("preset", source, label, stack=read_stack(source, reading))


def _read_function(source, reading: Reading, label: str) -> Subject:
    return Subject("function", source, label)


_READERS = {"mask": _read_mask, "task": _read_task, "family": _read_family, "stack": _read_stack,
            "preset": _read_preset, "function": _read_function}

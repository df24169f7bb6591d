"""What ``hasse leak`` and ``hasse flow`` check, read in one call: a TASK|MASK's one mask at every layer, or a stack.

A mask is the one-layer stack repeated: :class:`Layers` holds one task (or mask) per
batch row and, for a stack (``--stack SPEC``, or a model preset given as TASK|MASK), the
stack, its layers with their empty rows read, and its propagation; ``stack`` None is the
mask's own layer at every depth. :func:`leak_layers` and :func:`flow_layers` read
everything a command names, once; :func:`load_leak_subject` is what
:func:`hasse.find_leaks` reads too. Errors name their parameters by placeholders
(:mod:`theory.errors`): the CLI spells ``{stack}`` as ``--stack``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from hasse.theory.empty_rows import LEAK_DEFAULT, EmptyRows
from hasse.theory.errors import InputError
from hasse.theory.inputs.read import Reading, kind_of, read
from hasse.theory.mask import NamedMask
from hasse.theory.task import Task


@dataclass(frozen=True)
class StackChoice:
    """TASK|MASK and the stack once a model preset given as TASK|MASK has become the stack."""

    subject: str | None  # the TASK|MASK left (None when it was the preset)
    stack: str | None  # the --stack text, or the preset
    preset: str | None  # the preset as given as TASK|MASK (the JSON's "input"), else None


def stack_choice(subject: str | None, stack: str | None, repeat: int | None) -> StackChoice:
    """A model preset given as TASK|MASK (``gemma3:n=64``) is the stack; ``repeat`` (None: not given) needs one."""
    if subject is not None and kind_of(subject) == "preset":
        if stack is not None:
            raise InputError(f"a model preset is a stack: give it as MASK or as {{stack}}, not both "
                             f"({{stack = {stack!r}}})", subject, param="stack")
        return StackChoice(None, subject, subject)
    if repeat is not None and stack is None:
        raise InputError("{repeat} repeats the layers of {stack}: give {stack=SPEC}", param="repeat")
    return StackChoice(subject, stack, None)


@dataclass(frozen=True)
class Layers:
    """One task (leak) or mask (flow) per batch row, and the layers each runs through.

    ``stack`` None: the row's own mask at every layer (depths are hop counts, the
    verdict for the limit unless a depth is asked). Otherwise ``stack`` as given,
    ``read_layers`` its layers with their empty rows read, ``flow`` the propagation of ``read_layers``.
    """

    rows: tuple  # Task (leak) or the layer's (n, n) mask (flow), one per batch row
    found: tuple  # per row: its EmptyRows (read per head or per layer), or None
    stack: object = None
    read_layers: object = None
    flow: object = None
    bare: bool = False  # a MASK (or nothing, with a stack) read as next-token prediction
    names: tuple = ()
    heads: int | None = None  # flow: the heads of the mask (None: one)
    batch: int | None = None  # flow: the batch rows of the mask (None: one)
    named: NamedMask | None = None  # flow: the mask as read (batch row 0)
    preset: str | None = None  # the preset given as TASK|MASK, else None
    subject: str | None = None  # the TASK|MASK as given (None: the preset, or nothing)


def _stack_of(text: str, reading: Reading, n: int | None, task_given: bool, empty_rows: str):
    """``(stack, read, empty rows, StackFlow)``: the stack at ``n`` positions, each layer's empty rows read
    by ``empty_rows``, propagated until the repeated stack converges."""
    from hasse.theory.stack import propagate
    from hasse.theory.stack_leak import apply_stack_policy

    try:
        stack = read(text, dataclasses.replace(reading, n=n), accept=("preset", "stack")).stack
    except InputError as exc:
        if n is None or not task_given or "positions" not in str(exc):
            raise
        raise InputError(f"{exc.template} ({{stack}} is built at the task's {n} positions)",
                         param="stack") from None
    if n is not None and stack.n != n:
        raise InputError(f"{{stack = {text!r}}} has {stack.n} positions, not the {n} asked for", param="stack")
    layers, rows = apply_stack_policy(stack, empty_rows)
    return stack, layers, rows, propagate(layers)


def leak_layers(subject: str | None, stack: str | None, reading: Reading = Reading(), *,
                repeat: int | None = None, empty_rows: str = LEAK_DEFAULT) -> Layers:
    """The tasks of ``hasse leak [TASK|MASK] [--stack SPEC]`` and the layers they run through."""
    from hasse.theory.inputs.tasks import next_token_task

    choice = stack_choice(subject, stack, repeat)
    if choice.stack is None:
        if choice.subject is None:
            raise InputError("give a TASK or MASK (or {stack=SPEC})", param="stack")
        tasks, bare, found = load_leak_subject(choice.subject, dataclasses.replace(reading, repeat=1),
                                               empty_rows=empty_rows)
        return Layers(tuple(tasks), tuple(found), bare=bare, subject=choice.subject)
    task = None
    if choice.subject is not None:
        if kind_of(choice.subject) != "task":
            raise InputError("with {stack} the layers are the masks: give a TASK (its inputs and labels) or no "
                             "argument (next-token prediction through the stack), not a MASK", choice.subject,
                             param="stack")
        (task,), _, _ = load_leak_subject(choice.subject, Reading(n=reading.n, trust_code=reading.trust_code))
    n = task.size if task is not None else reading.n
    stack_, layers, _, flow = _stack_of(choice.stack, reading, n, task is not None, empty_rows)
    if task is None:
        task = next_token_task(NamedMask(stack_.union(), tuple(str(i) for i in range(stack_.n)), stack_.spec))
    return Layers((task,), (None,), stack_, layers, flow, bare=choice.subject is None, preset=choice.preset,
                  subject=choice.subject)


def flow_layers(subject: str | None, stack: str | None, reading: Reading = Reading(), *,
                repeat: int | None = None, empty_rows: str = LEAK_DEFAULT) -> Layers:
    """The masks of ``hasse flow [MASK] [--stack SPEC]`` (one per batch row, empty rows read) or the stack."""
    choice = stack_choice(subject, stack, repeat)
    if choice.stack is None:
        if choice.subject is None:
            raise InputError("give a MASK (or {stack=SPEC})", param="stack")
        read_ = read(choice.subject, dataclasses.replace(reading, repeat=1), accept=("mask",))
        named, grid = read_.mask, read_.grid
        rows = [grid.layer(b, empty_rows, named.spec) for b in range(grid.batch_rows)]
        return Layers(tuple(layer for layer, _ in rows), tuple(found for _, found in rows), names=named.names,
                      heads=grid.heads, batch=grid.batch, named=named, subject=choice.subject)
    if choice.subject is not None:
        raise InputError("with {stack} the layers are the masks: leave MASK out (or give a model preset as MASK)",
                         choice.subject, param="stack")
    stack_, layers, rows, flow = _stack_of(choice.stack, reading, reading.n, False, empty_rows)
    names = tuple(str(i) for i in range(stack_.n))
    # the task file's mask is the union of the (read) layers: its limit is the repeated stack's limit, so
    # `hasse leak FILE` finds the same flows in the limit and `hasse leak FILE --stack SPEC` the same depths
    union = NamedMask(layers.union(), names, f"union of {stack_.spec}")
    return Layers((layers.union(),), (EmptyRows(rows, empty_rows),), stack_, layers, flow, names=names,
                  named=union, preset=choice.preset)


def load_leak_subject(source, reading: Reading = Reading(), *,
                      empty_rows: str = LEAK_DEFAULT) -> tuple[list[Task], bool, list]:
    """``(tasks, bare, found)``: the TASK argument, or a MASK read as next-token prediction (``bare`` True).

    ``source`` is read once (:func:`theory.inputs.read.read`, as a task or else a mask).
    A MASK gives one task per batch row (each row's layer is the union over its heads,
    each head's empty rows read by ``empty_rows`` first: :meth:`theory.heads.HeadMasks.layer`);
    ``found[b]`` is batch row ``b``'s :class:`~theory.empty_rows.EmptyRows` (every query
    empty in some head: the layer the task holds may have none left), None where the
    task's own mask shows them (a task, one mask).

    A task (spec, ``.json`` with ``inputs``, a :class:`~theory.task.Task`) has its number
    of positions compared with ``reading.n``; a task with nothing to check (no supervised
    position and no isolate group) is refused. A MASK (``--n`` for a mask_mod; an array, a
    tensor, a ``BlockMask`` or a NamedMask from the API) is checked as
    :func:`theory.inputs.tasks.next_token_task`.
    """
    from hasse.theory.inputs.tasks import next_token_task

    subject = read(source, reading, accept=("task", "mask"))
    if subject.kind == "task":
        task, n = subject.task, reading.n
        label = source if isinstance(source, str) else task.name or None
        if n is not None and n != task.size:
            raise InputError(f"{{n = {n}}} was given but the task has {task.size} positions", label, param="n")
        if reading.heads is not None or reading.batch is not None:
            raise InputError("{heads} and {batch} apply to a MASK (a task file has one mask)", label, param="heads")
        if not task.supervised and not task.isolate:  # design §10: refused, not a vacuous LEAK-FREE
            raise InputError("nothing to check: no position is supervised (every label is null) and there is no "
                             "isolate group", label)
        return [task], False, [None]
    named, grid = subject.mask, subject.grid
    if grid.masks.shape[:2] == (1, 1):
        return [next_token_task(named)], True, [None]
    tasks, found = [], []
    label = source if isinstance(source, str) else named.spec
    for b in range(grid.batch_rows):
        layer, rows = grid.layer(b, empty_rows, label)
        spec = named.spec if grid.batch_rows == 1 else f"{named.spec} [batch row {b} of {grid.batch_rows}]"
        row = NamedMask(layer, named.names, spec, named.key_only, named.key_only_kind)
        tasks.append(next_token_task(row))
        found.append(rows)
    return tasks, True, found

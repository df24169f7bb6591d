"""What ``hasse leak`` and ``hasse flow`` run through: a TASK|MASK's one mask at every layer, or ``--stack``.

A mask is the one-layer stack repeated: :class:`Layers` holds one task (or mask) per
batch row and, for ``--stack SPEC`` (or a model preset given as TASK|MASK), the stack
and its propagation; ``stack`` None is the mask's own layer at every depth. The
``--stack``/``--repeat`` checks shared with ``hasse counterexample`` live here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from hasse.cli.arguments import reading_of
from hasse.theory.empty_rows import EmptyRows
from hasse.theory.errors import InputError
from hasse.theory.inputs.leak_tasks import load_leak_subject
from hasse.theory.inputs.read import Reading, kind_of, read
from hasse.theory.mask import NamedMask

NEXT_TOKEN = ("checked as next-token prediction (position q predicts x_{q+1}); give a task file for other "
              "objectives")
NEXT_TOKEN_STACK = ("checked as next-token prediction through the stack (position q predicts x_{q+1}); give a TASK "
                    "for other objectives")
NOT_WITH_STACK = {"png": "draws one mask: not with --stack (hasse analyze --stack draws the layers)",
                  "batch": "does not apply to --stack (a stack describes one sequence; check each batch row on its "
                           "own)",
                  "queries": "does not apply to --stack (every layer is square)",
                  "kv_len": "does not apply to --stack (every layer is square)"}


@dataclass(frozen=True)
class StackChoice:
    """TASK|MASK and ``--stack`` once a model preset given as TASK|MASK has become the stack."""

    subject: str | None  # the TASK|MASK left (None when it was the preset)
    stack: str | None  # the --stack text, or the preset
    preset: str | None  # the preset as given as TASK|MASK (the JSON's "input"), else None


def stack_choice(subject: str | None, stack: str | None, repeat: int | None) -> StackChoice:
    """A model preset given as TASK|MASK (``gemma3:n=64``) means ``--stack`` that preset, as in hasse analyze."""
    from hasse.theory.presets import names_a_preset

    if subject is not None and names_a_preset(subject):
        if stack is not None:
            raise InputError(f"a model preset is a stack: give it as MASK or as --stack, not both "
                             f"(--stack {stack!r})", subject)
        return StackChoice(None, subject, subject)
    if repeat is not None and stack is None:
        raise InputError("--repeat repeats the layers of --stack: give --stack SPEC")
    return StackChoice(subject, stack, None)


def check_layers(layers: int | None) -> None:
    if layers is not None and layers < 0:
        raise InputError(f"--layers must be >= 0, got {layers}")


def refuse_for_stack(args, flags: dict) -> None:
    """One line for each option that has no meaning with ``--stack`` (``flags``: dest -> why)."""
    for dest, why in flags.items():
        if getattr(args, dest, None) not in (None, False):
            raise InputError(f"--{dest.replace('_', '-')} {why}")


@dataclass(frozen=True)
class Layers:
    """One task (leak) or mask (flow) per batch row, and the layers each runs through.

    ``stack`` None: the row's own mask at every layer (depths are hop counts, the
    verdict for the limit unless --layers). Otherwise ``stack`` as given, ``read_layers`` its
    layers with their empty rows read, ``flow`` the propagation of ``read_layers``.
    """

    rows: tuple  # Task (leak) or the layer's (n, n) mask (flow), one per batch row
    found: tuple  # per row: its EmptyRows (read per head or per layer), or None
    stack: object = None
    read_layers: object = None
    flow: object = None
    bare: bool = False  # a MASK (or nothing, with --stack) read as next-token prediction
    names: tuple = ()
    heads: int | None = None  # flow: the heads of the mask (None: one)
    batch: int | None = None  # flow: the batch rows of the mask (None: one)
    named: NamedMask | None = None  # flow: the mask as read (batch row 0)


def _stack_of(text: str, args, n: int | None, task_given: bool):
    """``(stack, read, empty rows, StackFlow)``: --stack at ``n`` positions, each layer's empty rows read
    by --empty-rows, propagated until the repeated stack converges."""
    from hasse.theory.stack import propagate
    from hasse.theory.stack_leak import apply_stack_policy

    try:
        stack = read(text, reading_of(args, n=n), accept=("preset", "stack")).stack
    except InputError as exc:
        if n is None or not task_given or "positions" not in str(exc):
            raise
        raise InputError(f"{exc} (--stack is built at the task's {n} positions)") from None
    if n is not None and stack.n != n:
        raise InputError(f"--stack {text!r} has {stack.n} positions, not the {n} asked for")
    layers, rows = apply_stack_policy(stack, args.empty_rows)
    return stack, layers, rows, propagate(layers)


def leak_layers(args, choice: StackChoice) -> Layers:
    """The tasks of ``hasse leak [TASK|MASK] [--stack SPEC]`` and the layers they run through."""
    from hasse.theory.inputs.tasks import next_token_task

    if choice.stack is None:
        if choice.subject is None:
            raise InputError("give a TASK or MASK (or --stack SPEC)")
        tasks, bare, found = load_leak_subject(choice.subject, reading_of(args, repeat=1), empty_rows=args.empty_rows)
        return Layers(tuple(tasks), tuple(found), bare=bare)
    refuse_for_stack(args, NOT_WITH_STACK)
    task = None
    if choice.subject is not None:
        if kind_of(choice.subject) != "task":
            raise InputError("with --stack the layers are the masks: give a TASK (its inputs and labels) or no "
                             "argument (next-token prediction through the stack), not a MASK", choice.subject)
        (task,), _, _ = load_leak_subject(choice.subject, Reading(n=args.n, trust_code=args.trust_code))
    stack, layers, _, flow = _stack_of(choice.stack, args, task.size if task is not None else args.n,
                                       task is not None)
    if task is None:
        task = next_token_task(NamedMask(stack.union(), tuple(str(i) for i in range(stack.n)), stack.spec))
    return Layers((task,), (None,), stack, layers, flow, bare=choice.subject is None)


def flow_layers(args, choice: StackChoice) -> Layers:
    """The masks of ``hasse flow [MASK] [--stack SPEC]`` (one per batch row, empty rows read) or the stack."""
    if choice.stack is None:
        if choice.subject is None:
            raise InputError("give a MASK (or --stack SPEC)")
        subject = read(choice.subject, reading_of(args, repeat=1), accept=("mask",))
        named, grid = subject.mask, subject.grid
        rows = [grid.layer(b, args.empty_rows, named.spec) for b in range(grid.batch_rows)]
        return Layers(tuple(layer for layer, _ in rows), tuple(found for _, found in rows), names=named.names,
                      heads=grid.heads, batch=grid.batch, named=named)
    if choice.subject is not None:
        raise InputError("with --stack the layers are the masks: leave MASK out (or give a model preset as MASK)",
                         choice.subject)
    refuse_for_stack(args, NOT_WITH_STACK)
    stack, layers, rows, flow = _stack_of(choice.stack, args, args.n, False)
    names = tuple(str(i) for i in range(stack.n))
    # the task file's mask is the union of the (read) layers: its limit is the repeated stack's limit, so
    # `hasse leak FILE` finds the same flows in the limit and `hasse leak FILE --stack SPEC` the same depths
    union = NamedMask(layers.union(), names, f"union of {stack.spec}")
    return Layers((layers.union(),), (EmptyRows(rows, args.empty_rows),), stack, layers, flow, names=names,
                  named=union)

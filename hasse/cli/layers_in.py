"""What ``hasse leak`` and ``hasse flow`` share on the command line: the options a stack refuses, --layers,
and the line that says a MASK is checked as next-token prediction. What they read is read in one call by
:mod:`theory.inputs.layers` (``leak_layers``, ``flow_layers``).
"""

from __future__ import annotations

from hasse.cli.arguments import reading_of
from hasse.theory.errors import InputError

NEXT_TOKEN = ("checked as next-token prediction (position q predicts x_{q+1}); give a task file for other "
              "objectives")
NEXT_TOKEN_STACK = ("checked as next-token prediction through the stack (position q predicts x_{q+1}); give a TASK "
                    "for other objectives")
NOT_WITH_STACK = {"png": "draws one mask: not with --stack (hasse analyze --stack draws the layers)",
                  "batch": "does not apply to --stack (a stack describes one sequence; check each batch row on its "
                           "own)",
                  "queries": "does not apply to --stack (every layer is square)",
                  "kv_len": "does not apply to --stack (every layer is square)"}


def check_layers(layers: int | None) -> None:
    if layers is not None and layers < 0:
        raise InputError(f"--layers must be >= 0, got {layers}")


def refuse_for_stack(args, flags: dict) -> None:
    """One line for each option that has no meaning with ``--stack`` (``flags``: dest -> why)."""
    for dest, why in flags.items():
        if getattr(args, dest, None) not in (None, False):
            raise InputError(f"--{dest.replace('_', '-')} {why}")


def read_layers(args, subject: str | None, reader):
    """What ``hasse leak``/``hasse flow`` check, read once by ``reader`` (:func:`theory.inputs.layers.leak_layers`
    or ``flow_layers``) with the command's options; the options a stack refuses refused when it is one."""
    check_layers(args.layers)
    reading = reading_of(args)  # every option that says how an input reads
    layers = reader(subject, args.stack, reading, repeat=args.repeat, empty_rows=args.empty_rows)
    if layers.stack is not None:
        refuse_for_stack(args, NOT_WITH_STACK)
    return layers

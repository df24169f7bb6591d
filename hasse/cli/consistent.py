"""``hasse consistent TRAIN_TASK --inference FAMILY``: training–inference consistency.

The training task and the inference family are read once each by
:func:`theory.inputs.read.read`; :func:`theory.consistency.check_consistency` compares
them, and each mismatch is explained (how its upstream differs from the closest
training node).
"""

from __future__ import annotations

from hasse.cli.arguments import add_code_timeout_argument, add_trust_code_argument, reading_of
from hasse.cli.parsers import add_command
from hasse.theory.inputs.read import read
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header, spec_of
from hasse.views.tables import capped_table

CONSISTENT_DESCRIPTION = """\
Training–inference consistency (design §3): every supervised node of every
inference task must have an equivalent node in the training task (isomorphic
down-set) that carries the same label. Each node without one is named, with how
its upstream differs from the closest training node with the same input and label.
"""
CONSISTENT_EPILOG = """\
examples:
  hasse consistent block_two_stream:n=8,block=2 --inference block:n=8,block=2            exit 0
  hasse consistent bad_block_query_history:n=8,block=2 --inference block:n=8,block=2     exit 1

exit status: 0 consistent; 1 inconsistent; 2 bad input.
"""

MAX_ROWS = 40


def register(sub) -> None:
    c = add_command(sub, "consistent", "is a training task consistent with an inference procedure?",
                    CONSISTENT_DESCRIPTION, CONSISTENT_EPILOG)
    c.add_argument("train", metavar="TRAIN_TASK", help="built-in task spec or task .json file")
    c.add_argument("--inference", required=True, metavar="FAMILY",
                   help="the inference tasks: a built-in family or a family .json file")
    add_trust_code_argument(c)
    add_code_timeout_argument(c, "reading the tasks and the check (no limit by default)")
    add_json_arguments(c)
    c.set_defaults(run=ascii_aware(run_consistent))


def run_consistent(args) -> int:
    from hasse.theory.consistency import check_consistency
    from hasse.theory.deadline import deadline

    with deadline(args.timeout):  # --timeout bounds the kit's own work too (design §10)
        reading = reading_of(args)
        train = read(args.train, reading, accept=("task",)).task
        inference = read(args.inference, reading, accept=("family",)).family
        report = check_consistency(train, inference)
    if args.json or args.out:
        printed = emit_json(args, {**json_header("consistent", args.train, spec_of(args.train, "task")),
                    "inference_spec": spec_of(args.inference, "family"),
                    "train": train.name or args.train, "inference": args.inference,
                    "consistent": report.consistent, "checked": report.checked,
                    "mismatches": [{"inference_task": inference[m.task].name or m.task, "position": m.position,
                                    "name": inference[m.task].names[m.position], "input": list(m.input),
                                    "target": m.target, "closest_training_position": m.closest,
                                    "extra_upstream": [list(x) for x in m.extra_upstream],
                                    "missing_upstream": [list(x) for x in m.missing_upstream]}
                                   for m in report.mismatches]})
        if printed:
            return 0 if report.consistent else 1
    if args.out:
        print(f"JSON written to {args.out}")
    if report.consistent:
        print(f"{train.name or args.train} is CONSISTENT with {args.inference}: all {report.checked} supervised "
              f"inference nodes have an equivalent training node with the same label")
        return 0
    print(f"{train.name or args.train} is INCONSISTENT with {args.inference}: {len(report.mismatches)} of "
          f"{report.checked} supervised inference nodes have no equivalent training node with their label")

    def mismatch_row(m) -> tuple[str, str, str]:
        inf = inference[m.task]
        where = (f"{inf.name or f'task {m.task}'}:",
                 f"{inf.names[m.position]} ({m.input[0]}@{m.input[1]} -> {m.target}):")
        if m.closest is None:
            detail = "no training position has this input and label"
        elif m.extra_upstream or m.missing_upstream:
            parts = []
            if m.extra_upstream:
                parts.append("training also sees " + ", ".join(f"{s}@{p}" for s, p in m.extra_upstream))
            if m.missing_upstream:
                parts.append("training misses " + ", ".join(f"{s}@{p}" for s, p in m.missing_upstream))
            detail = f"closest training node {train.names[m.closest]}: " + "; ".join(parts)
        else:
            detail = (f"closest training node {train.names[m.closest]} sees the same inputs, but arranged "
                     f"differently (e.g. mutual instead of one-way attention)")
        return (*where, detail)

    for line in capped_table(report.mismatches, mismatch_row, MAX_ROWS, more="(use --json)",
                             ascii=getattr(args, "ascii", False)):
        print(line)
    return 1

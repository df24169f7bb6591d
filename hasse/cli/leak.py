"""``hasse leak [TASK|MASK] [--stack SPEC]``: leaks and isolation violations, each with its witness path."""

from __future__ import annotations

from hasse.cli.layers_in import NEXT_TOKEN, NEXT_TOKEN_STACK, read_layers
from hasse.theory.inputs.layers import leak_layers
from hasse.cli.arguments import (add_code_timeout_argument, add_convention_argument, add_empty_rows_argument,
                                add_heads_batch_arguments, add_query_arguments, add_stack_arguments)
from hasse.cli.parsers import add_command, integer
from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.stack_leak import find_stack_leaks, with_empty_rows
from hasse.views.leak_report import leak_json, leak_report, verdict_line
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header, spec_of

LEAK_DESCRIPTION = """\
Check a task for leakage. A supervised position p with target t leaks within L
layers iff some position whose content holds t (x<t>, or an agg(...) holding it)
reaches p in at most L attention hops. Every leak is printed with a shortest
witness path source -> ... -> p; its length is the first depth at which the leak
appears, so an L-layer model leaks iff depth <= L. Without --layers the verdict is
for the limit (every depth). Isolate groups (packed documents) are checked too.

A query that attends no key at all (an empty row) depends on whatever the kernel
makes of it. By default (--empty-rows attend-all) it is read as attending every
key, as eager attention and SDPA with an additive float mask (finfo.min, -1e30)
do; --empty-rows attend-none reads it as attending nothing, as FlexAttention,
flash kernels and SDPA's boolean mask (torch >= 2.5) do (zeros); --empty-rows
error refuses it (exit 2). The report names the rows, the policy and the kernels.

--stack SPEC (a mask per layer, first layer first: 'sliding_window:w=4 x5, causal')
replaces the task's mask by the stack's layers: the TASK gives the inputs, labels
and isolate groups (its number of positions must be the stack's), and without TASK
the stack is checked as next-token prediction (--n N sizes layer specs without n;
a bare MASK is refused: the layers are the masks). A model preset given as MASK
(gemma3:n=64) means --stack that preset. The verdict is for a model of
the stack's own depth (--layers L: L layers, the stack cycled), and the report says
whether the repeated stack leaks in the limit. Each violation names the layer at
which it first appears and a witness whose every hop names its layer.
"""
LEAK_EPILOG = """\
TASK is a built-in task spec (see `hasse catalog`) or a task .json file, or a
MASK (a mask spec, a mask file, or file.py:mask_mod with --n; a factory call
file.py:make(3) too), checked as next-token prediction: position q holds x_q
and predicts x_{q+1}. Give a task file for any other objective.
A task file whose "mask" names Python code (masks.py:causal) is refused unless
--trust-code is given; then the mask_mod runs on as many positions as "inputs" lists.
A task file:
  {"tokens": 4, "inputs": [["x0", 0], ["[MASK]", 1], ...], "labels": [null, 1, ...],
   "mask": "causal:n=4" | "mask.npy" | [[1,0,...], ...], "isolate": [[0, 1], [2, 3]]}

examples:
  hasse leak butterfly:n=8
  hasse leak block_two_stream:n=8,block=2
  hasse leak bad_butterfly_crossed:n=4 --layers 1      clean at depth 1, leaks at depth 2
  hasse leak my_task.json --json
  hasse leak attn.py:generate_sliding_window(4) --n 32   a FlexAttention mask_mod
  hasse leak task_with_mask_mod.json --trust-code
  hasse leak bad_block_own_content:n=4,block=2 --png leak.png
  hasse leak xlnet_task.json --empty-rows attend-none    only for kernels that return zeros
  hasse leak --stack 'causal x3, bidirectional' --n 6   next-token through a stack: leaks at layer 4
  hasse leak gemma3:n=64,scale=64                     a model preset as MASK means --stack that preset
  hasse leak packed:lengths=3+4,w=2 --stack 'sliding_window:w=3 x2'   isolation broken at layer 1

exit status: 0 leak-free; 1 a leak or isolation violation; 2 bad input.
"""


def register(sub) -> None:
    p = add_command(sub, "leak", "check a task for leaks, with shortest witness paths", LEAK_DESCRIPTION, LEAK_EPILOG)
    p.add_argument("task", metavar="TASK|MASK", nargs="?",
                   help="built-in task spec or task .json file; or a MASK, checked as next-token prediction "
                        "(with --stack: a TASK, or nothing for next-token prediction through the stack)")
    p.add_argument("--n", type=integer("--n", 1), help="size at which to evaluate a file.py:mask_mod (for any other form: must "
                   "equal its number of positions)")
    p.add_argument("--trust-code", action="store_true",
                   help="let a .json task or mask whose 'mask' names file.py:function run it (default: refused)")
    p.add_argument("--layers", type=integer("--layers", 0), metavar="L", help="verdict for an L-layer model (default: every depth)")
    add_json_arguments(p, png_help="draw the mask with the first witness path and the isolation groups over it "
                                   "(.png, .svg or .pdf by the suffix)")
    add_empty_rows_argument(p, LEAK_DEFAULT)
    add_query_arguments(p)
    add_convention_argument(p)
    add_heads_batch_arguments(p, "leaks")
    add_stack_arguments(p)
    add_code_timeout_argument(p)
    p.set_defaults(run=ascii_aware(run_leak))


def run_leak(args) -> int:
    """One path for a mask (its one layer at every depth) and for a stack: read, find, report."""
    layers = read_layers(args, args.task, leak_layers)
    stack, depth = layers.stack, args.layers
    if stack is not None and depth is None:
        depth = stack.depth  # a stack's verdict is for a model of its own depth
    reports = [with_empty_rows(find_stack_leaks(task, stack, depth, empty_rows=args.empty_rows, flow=layers.flow),
                               found) for task, found in zip(layers.rows, layers.found)]
    worst = next((b for b, r in enumerate(reports) if not r.leak_free), 0)  # the first leaking batch row
    task, report = layers.rows[worst], reports[worst]
    rows = [{"batch": b, "leak_free": r.leak_free, "leaks": len(r.leaks_within()),
             "isolation": len(r.isolation_within()), "empty_rows": r.empty_row_report.to_json()}
            for b, r in enumerate(reports)] if len(reports) > 1 else None
    if args.png:
        from hasse.views.draw_mask import draw_leak

        draw_leak(task, report, args.png, title=verdict_line(task, report))
    given = layers.subject
    spec = (spec_of(given, "task") or spec_of(given)) if given else None  # a task spec, or a bare mask's spec
    if (args.json or args.out) and emit_json(args, {**json_header("leak", given or layers.preset, spec),
                                                     "objective": "next-token" if layers.bare else "task",
                                                     **leak_json(task, report, stack, layers.flow),
                                                     **({"batch_rows": rows, "batch_row": worst} if rows else {})}):
        return 0 if all(r.leak_free for r in reports) else 1
    if rows:  # each batch row on its own; the first leaking one in full
        print(f"{len(rows)} batch rows: " + ", ".join(
            f"{r['batch']}: {'leak-free' if r['leak_free'] else 'LEAK'}" for r in rows)
            + f"; batch row {worst} in full:")
        for b, r in enumerate(reports):  # every row's empty rows and their policy, not only the one in full
            if r.empty_rows and b != worst:
                print(f"batch row {b}: {r.empty_row_report.describe(names=layers.rows[b].names)}")
    bare = (NEXT_TOKEN if stack is None else NEXT_TOKEN_STACK) + "\n" if layers.bare else ""
    print(bare + leak_report(task, report, stack, layers.flow, ascii=args.ascii))
    for path, what in ((args.png, "picture"), (args.out, "JSON")):
        if path:
            print(f"{what} written to {path}")
    return 0 if all(r.leak_free for r in reports) else 1

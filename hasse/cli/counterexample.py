"""``hasse counterexample DESIGN``: the smallest n at which a design breaks, printed whole.

Runs the direct search (:func:`theory.counterexample.find_counterexample`; with
``--stack`` each task through the stack, otherwise through its own mask at every
layer), the Z3 search (:func:`solvers.smt.counterexample.search_z3`) or both, compares
them (:func:`theory.counterexample.disagreement`) and prints the counterexample: its
task table, then the leak report or the inconsistent nodes
(:mod:`hasse.views.counterexample_report`). The plain direct search (no ``--method``,
no ``--inference``) keeps its own short format.
"""

from __future__ import annotations

import argparse
import sys

from hasse.cli.arguments import add_empty_rows_argument, add_stack_arguments, reading_of
from hasse.theory.inputs.layers import stack_choice
from hasse.cli.parsers import add_command, integer
from hasse.theory.counterexample import Counterexample, disagreement, find_counterexample
from hasse.theory.designs import design_size
from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.errors import InputError
from hasse.theory.inputs.read import read
from hasse.views.counterexample_report import methods_json, methods_lines, skipped_lines, task_lines
from hasse.views.leak_report import leak_report
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header, spec_of, warn
from hasse.views.render_text import stack_where

DESCRIPTION = """\
Search for the smallest counterexample of a parametric design: try n = 1, 2, ...,
--n N (default 8) and stop at the first task that leaks or breaks isolation (in the
limit, or within --layers L). A design that gives n itself (butterfly:n=4) is
checked at that size only. The counterexample is printed whole: mask, inputs,
labels and witness paths; --json (or --out FILE) writes it as a task file that
`hasse leak` reads (with the same --layers / --empty-rows).

--method chooses how each size is decided:
  direct  the kit's leak analysis (default)
  z3      Z3 on the raw mask rows, independent of the leak code: a walk of N - 1
          steps in M or I from a position holding a target to the position that
          predicts it (sat = leak, decoded into its shortest path; unsat = none at
          any depth), the same between isolate groups; with --inference, an
          embedding of each supervised inference node's down-set into the design
  both    both, and fail loudly (exit 1) if they disagree on n, property or task
With --method z3/both (or --inference), a design that is a family is also checked
through its merged task (hasse merge), and --inference FAMILY (a family without n,
e.g. block:block=2) adds training-inference consistency at every n: the property
"inconsistency" (hasse consistent). An n in FAMILY (block:n=8,block=2, as hasse
consistent takes it) fixes the size searched, like an n in DESIGN; the two must agree.

--stack SPEC (a mask per layer: 'causal x3, bidirectional', or a preset without n)
runs each task of the design through the stack instead of its own mask: the layer
specs, written without n, are built at each task's number of positions; a task
breaks when it leaks or breaks isolation within --layers L (default: the stack's
depth). The counterexample's witness names the layer of each hop. --json writes the
task (with its own mask) and "stack": `hasse leak FILE --stack SPEC` reproduces it.
Not with --stack (refused): --method z3/both and --inference (they decide one mask
repeated, or the task's own mask) and --png (one mask drawn).
"""
EPILOG = """\
DESIGN is
  a built-in task or bad design with every parameter but n:  bad_block_own_content:block=2
    (or with n too, to check that size only:                bad_block_own_content:n=4,block=2)
  a built-in family (every task of it is checked):            infill
  file.py:make_task, where make_task(n) returns a task (a theory.task.Task or its JSON
  object) or a list of them.
Sizes at which the design does not exist (a block size not dividing n, ...) are skipped.

examples:
  hasse counterexample bad_butterfly_crossed --n 8           finds n = 2
  hasse counterexample bad_block_own_content:block=2 --json > cex.json && hasse leak cex.json
  hasse counterexample butterfly --n 10                       none: exit 0
  hasse counterexample bad_butterfly_crossed:n=4 --layers 1   none within one layer: exit 0
  hasse counterexample bad_butterfly_crossed --method both      direct and Z3 agree: n = 2
  hasse counterexample infill --method z3 --n 6                 each task and the merged task
  hasse counterexample bad_block_query_history:block=2 --inference block:block=2 --method both
                                                              inconsistent at n = 4
  hasse counterexample causal_lm --stack 'causal x3, bidirectional' --n 4
                                                              n = 2: leaks at layer 4

exit status: 1 a counterexample was found (or the methods disagree); 0 none up to
--n; 2 bad input; 3 inconclusive (Z3 unknown or --timeout).
"""


def register(sub) -> None:
    p = add_command(sub, "counterexample", "smallest n at which a design leaks", DESCRIPTION, EPILOG)
    p.add_argument("design", metavar="DESIGN")
    p.add_argument("--n", type=integer("--n"), metavar="N", help="search every size up to N (default 8)")
    p.add_argument("--max-n", type=integer("--max-n"), default=None, help=argparse.SUPPRESS)  # the old name of --n (deprecated)
    p.add_argument("--layers", type=integer("--layers", 0), metavar="L",
                   help="a counterexample must leak within L layers (default: at any depth; with --stack, the "
                        "stack's depth)")
    add_json_arguments(p, json_help="print one JSON object and nothing else (a task file when one is found)",
                       png_help="draw the counterexample's mask with its first witness path (.png, .svg or .pdf by "
                                "the suffix)")
    p.add_argument("--method", choices=("direct", "z3", "both"), default="direct",
                   help="decide each size by the leak analysis, by Z3, or both (default direct)")
    p.add_argument("--inference", metavar="FAMILY",
                   help="also check consistency with this inference family at every n (e.g. block:block=2)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds for the Z3 search, and for each call of a file.py design (then inconclusive)")
    add_empty_rows_argument(p, LEAK_DEFAULT)
    add_stack_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def run(args) -> int:
    direct = args.method == "direct" and not args.inference
    if args.stack is not None or args.repeat is not None:
        _check_stack_args(args)
    search, max_n = _check_args(args, timeout=not direct)
    return _run_direct(args, search, max_n) if direct else _run_methods(args, search, max_n)


DEFAULT_N = 8


def _check_args(args, timeout: bool) -> tuple[str, int]:
    """The command's checks before any search, in the flags' words (--timeout, --n, --layers).

    Returns ``(search, max_n)``: the design to search (DESIGN, with the n of --inference
    FAMILY when only that one gives n) and the largest size tried.
    """
    if timeout and args.timeout is not None and args.timeout <= 0:
        raise InputError(f"--timeout must be positive, got {args.timeout}")
    if args.max_n is not None:
        if args.n is not None:
            raise InputError("give --n only (--max-n is its old name)")
    flag = "--n" if args.max_n is None else "--max-n"
    size = args.n if args.max_n is None else args.max_n
    if size is not None and size < 1:
        raise InputError(f"{flag} must be >= 1, got {size}")
    if args.layers is not None and args.layers < 0:
        raise InputError(f"--layers must be >= 0, got {args.layers}")
    fixed, inferred = design_size(args.design), design_size(args.inference)
    if fixed is not None and inferred is not None and fixed != inferred:
        raise InputError(f"the design fixes n = {fixed} but --inference {args.inference} fixes n = {inferred}",
                         args.design)
    search = args.design
    if inferred is not None and fixed is None:
        from hasse.theory.inputs.read import kind_of

        if kind_of(args.design) == "function":
            raise InputError(f"--inference {args.inference} fixes n = {inferred}, but a file.py design has no n; "
                             "leave n out of --inference", args.design)
        search = args.design + ("," if ":" in args.design else ":") + f"n={inferred}"
    pinned = fixed if fixed is not None else inferred
    if pinned is not None and size is not None:
        raise InputError(f"the design fixes n = {pinned}; leave out {flag} (it searches every size up to N)",
                         args.design)
    if flag == "--max-n":  # after every check: an error stays one line
        warn("--max-n is deprecated; use --n N (search every size up to N)")
    return search, size if size is not None else (pinned or DEFAULT_N)


def _progress(args, max_n: int, label: str = ""):
    """A progress callback ``n -> None``: the status line of hasse.views.output (only on a terminal); None clears it."""
    from hasse.views.output import clear_progress, progress

    def step(n: int | None) -> None:
        if n is None:
            clear_progress()
        elif not args.json:
            progress(f"  {label}trying n = {n} of {max_n} …", force=True)

    return step


def _stack_at(args):
    """``size -> LayerStack``: --stack built at each task's number of positions (once per size)."""
    built: dict[int, object] = {}

    def at(size: int):
        if size not in built:
            stack = read(args.stack, reading_of(args, n=size), accept=("preset", "stack")).stack
            if stack.n != size:
                raise InputError(f"--stack {args.stack!r} has {stack.n} positions but the design's task has {size}: "
                                 "leave n out of the stack's layers (they are built at each task's size)")
            built[size] = stack
        return built[size]

    return at


def _run_direct(args, search: str, max_n: int) -> int:
    """The direct search, each task through its own mask at every layer or through --stack: one path."""
    progress = _progress(args, max_n)
    found = find_counterexample(search, max_n, progress=progress, empty_rows=args.empty_rows,
                                layers=args.layers, stack=_stack_at(args) if args.stack is not None else None)
    progress(None)
    drawn = _draw(args, found, found.report)
    stack = found.stack  # with --stack: the stack of the task found, or of the largest size searched
    layers = stack.depth if stack is not None and args.layers is None else args.layers
    if args.json or args.out:
        out = {**_header(args, found), "layers": layers, **found.to_json()}  # a task file when found
        if args.stack is not None:
            out.setdefault("stack", {"spec": args.stack, "depth": None})  # no size was built
        if emit_json(args, out):
            return 1 if found.n is not None else 0
    subject = args.design + (f" through the stack {args.stack}" if args.stack is not None else "")
    within = "" if layers is None else (" " + stack_where(layers, stack.depth) if stack is not None
                                        else f" within L = {layers} layers")
    if found.n is None:
        tried = f"n = {found.checked[0]}…{found.checked[-1]}" if found.checked else "no size"
        print(f"{subject}: no leak and no isolation violation{within} for any n up to {max_n} "
              f"(checked {len(found.checked)} sizes: {tried})", *skipped_lines(found), sep="\n")
    else:
        first = f", first at layer {found.witness['depth']}" if stack is not None else ""
        print(f"{subject}: smallest counterexample{within} at n = {found.n} ({found.property}{first})",
              *task_lines(found.task), sep="\n")
        flow = None
        if stack is not None:
            from hasse.theory.stack import propagate
            from hasse.theory.stack_leak import apply_stack_policy

            flow = propagate(apply_stack_policy(stack, args.empty_rows, getattr(found.task, "key_only", ()))[0])
        print(leak_report(found.task, found.report, stack, flow, ascii=args.ascii))
    _print_out(args, drawn)
    return 1 if found.n is not None else 0


def _draw(args, found: Counterexample, report) -> bool:
    """``--png``: the counterexample's mask, isolation groups and first witness path; False when none was found."""
    if not (args.png and found.task is not None):
        return False
    from hasse.views.draw_mask import draw_leak, draw_mask

    title = f"{args.design}: smallest counterexample at n = {found.n} ({found.property})"
    if report is None:  # an inconsistency: no witness path in the training task
        draw_mask(found.task.mask, found.task.names, args.png, title=title, groups=found.task.isolate)
    else:
        draw_leak(found.task, report, args.png, title=title)
    return True


def _print_out(args, drawn: bool) -> None:
    if args.png and not args.json:
        print(f"picture written to {args.png}" if drawn else f"no counterexample: no picture written to {args.png}")
    if args.out:
        print(f"JSON written to {args.out} (a task file: hasse leak {args.out}"
              + (f" --stack '{args.stack}'" if args.stack is not None else "")
              + (f" --repeat {args.repeat}" if args.repeat else "")
              + (f" --layers {args.layers}" if args.layers is not None else "") + ")")


def _run_methods(args, search: str, max_n: int) -> int:
    from hasse.solvers.smt.counterexample import search_z3

    results = []
    if args.method in ("direct", "both"):
        progress = _progress(args, max_n, "direct: ")
        results.append(find_counterexample(search, max_n, merged=True, inference=args.inference,
                                           progress=progress, empty_rows=args.empty_rows, layers=args.layers))
    if args.method in ("z3", "both"):
        progress = _progress(args, max_n, "z3: ")
        results.append(search_z3(search, max_n, inference=args.inference, timeout=args.timeout,
                                 progress=progress, empty_rows=args.empty_rows, layers=args.layers))
    progress(None)
    drawn = _draw(args, results[0], results[0].leak_report() if results[0].task is not None else None)
    loud = disagreement(*results) if len(results) == 2 else None
    data = methods_json(_header(args, results[0]), args.method, args.layers, args.inference, results, loud)
    if not ((args.json or args.out) and emit_json(args, data)):
        print(*methods_lines(args.design, max_n, args.inference, results, loud, ascii=args.ascii), sep="\n")
        _print_out(args, drawn)
    if loud:
        print(f"hasse: {loud}", file=sys.stderr)
        return 1
    if results[0].n is not None:
        return 1
    return 3 if any(r.unknown for r in results) else 0


def _check_stack_args(args) -> None:
    """The options that have no meaning with --stack, refused in one line each (and --repeat without it)."""
    stack_choice(None, args.stack, args.repeat)
    if args.method != "direct":
        raise InputError(f"--method {args.method} is not for --stack: Z3 decides one mask repeated at every layer "
                         "(the direct search runs the stack)")
    if args.inference:
        raise InputError("--inference is not for --stack: consistency compares the task's own mask with inference")
    if args.png:
        raise InputError("--png draws one mask: not with --stack")


def _header(args, found: Counterexample) -> dict:
    """command, version, input (DESIGN as given) and spec (the canonical spec of the task found, if built in)."""
    spec = spec_of(found.task.name, "task") if found.task is not None and found.task.name else None
    return json_header("counterexample", args.design, spec)

"""``hasse counterexample DESIGN``: the smallest n at which a design leaks, printed whole."""

from __future__ import annotations

import argparse
import sys

from hasse.cmd_leak import _flow_dict, _leak_dict, leak_report
from hasse.output import print_json
from hasse.theory.counterexample import find_counterexample

DESCRIPTION = """\
Search for the smallest counterexample of a parametric design: try n = 1, 2, ...,
--max-n and stop at the first task that leaks or breaks isolation (in the limit).
The counterexample is printed whole: mask, inputs, labels and witness paths.

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
"inconsistency" (hasse consistent).
"""
EPILOG = """\
DESIGN is
  a built-in task or bad design with every parameter but n:  bad_block_own_content:block=2
  a built-in family (every task of it is checked):            infill
  file.py:make_task, where make_task(n) returns a task (a theory.task.Task or its JSON
  object) or a list of them.
Sizes at which the design does not exist (a block size not dividing n, ...) are skipped.

examples:
  hasse counterexample bad_butterfly_crossed --max-n 8       finds n = 2
  hasse counterexample bad_block_own_content:block=2 --json
  hasse counterexample butterfly --max-n 10                   none: exit 0
  hasse counterexample bad_butterfly_crossed --method both      direct and Z3 agree: n = 2
  hasse counterexample infill --method z3 --max-n 6             each task and the merged task
  hasse counterexample bad_block_query_history:block=2 --inference block:block=2 --method both
                                                              inconsistent at n = 4

exit status: 1 a counterexample was found (or the methods disagree); 0 none up to
--max-n; 2 bad input; 3 inconclusive (Z3 unknown or --timeout).
"""


def register(sub) -> None:
    p = sub.add_parser("counterexample", help="smallest n at which a design leaks",
                       description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("design", metavar="DESIGN")
    p.add_argument("--max-n", type=int, default=8, help="largest size to try (default 8)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--ascii", action="store_true", help="ASCII characters only")
    p.add_argument("--method", choices=("direct", "z3", "both"), default="direct",
                   help="decide each size by the leak analysis, by Z3, or both (default direct)")
    p.add_argument("--inference", metavar="FAMILY",
                   help="also check consistency with this inference family at every n (e.g. block:block=2)")
    p.add_argument("--timeout", type=float, metavar="S", help="seconds for the Z3 search (then inconclusive)")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.method != "direct" or args.inference:
        from hasse.counterexample_methods import run_methods

        return run_methods(args)
    show = sys.stderr.isatty() and not args.json

    def progress(n: int) -> None:
        if show:
            print(f"\r  trying n = {n} of {args.max_n} …", end="", file=sys.stderr, flush=True)

    found = find_counterexample(args.design, args.max_n, progress=progress)
    if show:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    if args.json:
        out = {"design": args.design, "n": found.n, "property": found.property, "checked": found.checked,
               "skipped": [{"n": n, "reason": r} for n, r in found.skipped]}
        if found.task is not None:
            t, r = found.task, found.report
            out.update({"task": t.name, "mask": t.mask, "inputs": [list(x) for x in t.inputs],
                        "labels": [list(ts) for ts in t.labels], "names": t.names,
                        "leaks": [_leak_dict(x) for x in r.leaks],
                        "isolation": [_flow_dict(x) for x in r.isolation]})
        print_json(out)
        return 1 if found.n is not None else 0
    tried = f"n = {found.checked[0]}…{found.checked[-1]}" if found.checked else "no size"
    if found.n is None:
        print(f"{args.design}: no leak and no isolation violation for any n up to {args.max_n} "
              f"(checked {len(found.checked)} sizes: {tried})")
        if found.skipped:
            print(f"skipped {len(found.skipped)} size(s) where the design does not exist, e.g. "
                  f"n = {found.skipped[0][0]}: {found.skipped[0][1]}")
        return 0
    t = found.task
    print(f"{args.design}: smallest counterexample at n = {found.n} ({found.property})")
    print()
    print(f"{'pos':>4} {'name':<8} {'input':<16} {'pos id':>6}  label")
    for p, ((sym, pid), ts) in enumerate(zip(t.inputs, t.labels)):
        label = ",".join(map(str, ts)) if ts else "-"
        print(f"{p:>4} {t.names[p]:<8} {sym:<16} {pid:>6}  {label}")
    print()
    print(leak_report(t, found.report, ascii=args.ascii))
    return 1

"""``hasse leak TASK`` and ``hasse flow MASK --from SET --to SET``: leaks and forbidden flows."""

from __future__ import annotations

import re

from hasse.cli.masks_in import (add_code_timeout_argument, add_convention_argument, add_empty_rows_argument,
                            add_heads_batch_arguments, add_query_arguments, add_range_arguments,
                            add_stack_arguments)
from hasse.views.output import ascii_aware, emit_json, json_header, spec_of
from hasse.cli.parsers import add_command, integer
from hasse.views.stack_report import stack_json, stack_lines
from hasse.views.tables import capped_table
from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.errors import InputError
from hasse.theory.leak import LeakReport, find_flows, find_leaks, key_only_json
from hasse.theory.mask import NamedMask
from hasse.theory.task import Task

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

FLOW_DESCRIPTION = """\
Forbidden flow: may any position of the --to set depend on a position of the
--from set (in the limit, or within --layers L)? Each dependent position is
printed with its nearest source and a shortest path. A position in both sets
depends on itself (depth 0). Empty rows are read as in `hasse leak` (default:
attend every key). A file.py:mask_mod that reads h or b needs --heads H (the
union over heads) and --batch B (each batch row checked; exit 1 if any flows).
With --stack SPEC (and no MASK) the question is asked of the stack's layers: the
verdict within the stack's depth (or --layers L), the limit of the repeated stack,
and each flow's first layer and layered witness. --json writes the union of the
layers as the task file's mask (its limit is the stack's limit).
"""
FLOW_EPILOG = """\
SET: positions and ranges, e.g. 0,3,5-9 (0-based, ranges inclusive).

examples:
  hasse flow document:lengths=3+4 --from 0-2 --to 3-6      documents stay apart: exit 0
  hasse flow sliding_window:n=12,w=3 --from 0 --to 11 --layers 4
  hasse flow decode.npy --from 8 --to 0-7             a 1 x 9 KV-cache step: the query feeds no cache entry
  hasse flow --stack 'sliding_window:w=2 x3, causal' --n 8 --from 0 --to 7

exit status: 0 no forbidden flow; 1 some; 2 bad input.
"""

TABLE_ROWS = 40


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
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--out", metavar="FILE", help="also write that JSON object to FILE (the terminal gets the report)")
    p.add_argument("--png", metavar="FILE", help="draw the mask with the first witness path and the isolation "
                   "groups over it (.png, .svg or .pdf by the suffix)")
    p.add_argument("--ascii", action="store_true", help="ASCII characters only")
    add_empty_rows_argument(p, LEAK_DEFAULT)
    add_query_arguments(p)
    add_convention_argument(p)
    add_heads_batch_arguments(p, "leaks")
    add_stack_arguments(p)
    add_code_timeout_argument(p)
    p.set_defaults(run=ascii_aware(run_leak))

    f = add_command(sub, "flow", "may positions of one set depend on another set?", FLOW_DESCRIPTION, FLOW_EPILOG)
    f.add_argument("mask", metavar="MASK", nargs="?",
                   help="built-in spec, mask file, or file.py:mask_mod (with --n); left out with --stack")
    f.add_argument("--from", dest="sources", required=True, metavar="SET", help="positions that must not be read")
    f.add_argument("--to", dest="sinks", required=True, metavar="SET", help="positions that must not read them")
    f.add_argument("--n", type=integer("--n", 1), help="size at which to evaluate a file.py:mask_mod")
    f.add_argument("--layers", type=integer("--layers", 0), metavar="L", help="verdict for an L-layer model (default: every depth)")
    f.add_argument("--json", action="store_true",
                   help="print one JSON object and nothing else: a task file (hasse leak reads it)")
    f.add_argument("--out", metavar="FILE", help="also write that JSON object to FILE (the terminal gets the report)")
    f.add_argument("--png", metavar="FILE", help="draw the mask with the first path from --from to --to over it "
                   "(.png, .svg or .pdf by the suffix; batch row 0)")
    f.add_argument("--ascii", action="store_true", help="ASCII characters only")
    add_empty_rows_argument(f, LEAK_DEFAULT)
    add_range_arguments(f)
    add_stack_arguments(f)
    f.set_defaults(run=ascii_aware(run_flow))


def parse_set(text: str, n: int, what: str) -> list[int]:
    """``"0,3,5-9"`` -> ``[0, 3, 5, 6, 7, 8, 9]``; every position must lie in ``0 … n-1``."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if len(part) > 40:  # no position has that many digits (and int() refuses 4,300 of them)
            raise InputError(f"{what}: {part[:20]!r}… is not a position or a range a-b")
        if m := re.fullmatch(r"(\d+)\s*-\s*(\d+)", part):
            a, b = int(m.group(1)), int(m.group(2))
            if a > b:
                raise InputError(f"{what}: empty range {part!r}")
            if b >= n:  # checked before the range is expanded: 0-1000000000000 must not build a set
                raise InputError(f"{what}: range {part!r} reaches position {b}, outside 0…{n - 1}")
            out.update(range(a, b + 1))
        elif re.fullmatch(r"-?\d+", part):
            out.add(int(part))
        else:
            raise InputError(f"{what}: {part!r} is not a position or a range a-b (in {text!r})")
    bad = sorted(p for p in out if not 0 <= p < n)
    if bad:
        raise InputError(f"{what}: position {bad[0]} is outside 0…{n - 1}")
    return sorted(out)


def _check_layers(layers: int | None) -> None:
    if layers is not None and layers < 0:
        raise InputError(f"--layers must be >= 0, got {layers}")


def _preset_as_stack(args, dest: str) -> None:
    """A model preset given as TASK|MASK (``gemma3:n=64``) means ``--stack`` that preset, as in hasse analyze."""
    from hasse.theory.inputs.read import kind_of

    given = getattr(args, dest)
    args.stack_input = None
    if given is not None and kind_of(given) == "preset":
        if args.stack is not None:
            raise InputError(f"a model preset is a stack: give it as MASK or as --stack, not both "
                             f"(--stack {args.stack!r})", given)
        args.stack, args.stack_input = given, given
        setattr(args, dest, None)


def _check_repeat(args) -> None:
    if args.repeat is not None and args.stack is None:
        raise InputError("--repeat repeats the layers of --stack: give --stack SPEC")


NEXT_TOKEN = ("checked as next-token prediction (position q predicts x_{q+1}); give a task file for other "
              "objectives")


def load_leak_subject(source, n: int | None = None, trust_code: bool = False, *, queries: str | None = None,
                      kv_len: int | None = None, convention: str = "auto", heads: int | None = None,
                      batch: int | None = None, empty_rows: str = LEAK_DEFAULT) -> tuple[list[Task], bool, list]:
    """``(tasks, bare, found)``: the TASK argument, or a MASK read as next-token prediction (``bare`` True).

    A MASK gives one task per batch row (each row's layer is the union over its heads,
    each head's empty rows read by ``empty_rows`` first: :meth:`theory.heads.HeadMasks.layer`);
    ``found[b]`` is batch row ``b``'s :class:`~theory.empty_rows.EmptyRows` (every query
    empty in some head: the layer the task holds may have none left), None where the
    task's own mask shows them (a task, one mask).

    A task (spec or ``.json`` with ``inputs``) is read with ``trust_code`` and its
    number of positions compared with ``n``; a task with nothing to check (no
    supervised position and no isolate group) is refused. Anything else is a MASK
    read as every command reads one (``--n`` for a mask_mod; an array, a tensor, a
    ``BlockMask`` or a NamedMask from the API) and checked as
    :func:`theory.task_io.next_token_task`.
    """
    from hasse.cli.masks_in import apply_policy, load_heads
    from hasse.theory.inputs.read import kind_of
    from hasse.theory.inputs.tasks import load_task, next_token_task

    if isinstance(source, Task) or isinstance(source, str) and kind_of(source) == "task":
        task = source if isinstance(source, Task) else load_task(source, trust_code=trust_code)
        label = source if isinstance(source, str) else task.name or None
        if n is not None and n != task.size:
            raise InputError(f"--n {n} was given but the task has {task.size} positions", label)
        if heads is not None or batch is not None:
            raise InputError("--heads and --batch apply to a MASK (a task file has one mask)", label)
        if not task.supervised and not task.isolate:  # design §10: refused, not a vacuous LEAK-FREE
            raise InputError("nothing to check: no position is supervised (every label is null) and there is no "
                             "isolate group", label)
        return [task], False, [None]
    named, grid = load_heads(source, n, heads, batch, queries=queries, kv_len=kv_len, trust_code=trust_code,
                             convention=convention)
    if grid.masks.shape[:2] == (1, 1):
        return [next_token_task(named)], True, [None]
    tasks, found = [], []
    label = source if isinstance(source, str) else named.spec
    for b in range(grid.batch_rows):
        layer, rows = apply_policy(grid, b, empty_rows, label)
        spec = named.spec if grid.batch_rows == 1 else f"{named.spec} [batch row {b} of {grid.batch_rows}]"
        row = NamedMask(layer, named.names, spec, named.key_only, named.key_only_kind)
        tasks.append(next_token_task(row))
        found.append(rows)
    return tasks, True, found


def load_task_arg(source: str) -> Task:
    from hasse.theory.inputs.tasks import load_task

    return load_task(source)


def run_leak(args) -> int:
    _check_layers(args.layers)
    _preset_as_stack(args, "task")
    _check_repeat(args)
    if args.stack is not None:
        return run_leak_stack(args)
    if args.task is None:
        raise InputError("give a TASK or MASK (or --stack SPEC)")
    tasks, bare, found = load_leak_subject(args.task, args.n, args.trust_code, queries=args.queries,
                                           kv_len=args.kv_len, convention=args.convention, heads=args.heads,
                                           batch=args.batch, empty_rows=args.empty_rows)
    reports = [with_empty_rows(find_leaks_flagged(task, args.layers, args.empty_rows), rows)
               for task, rows in zip(tasks, found)]
    worst = next((b for b, r in enumerate(reports) if not r.leak_free), 0)  # the first leaking batch row
    task, report = tasks[worst], reports[worst]
    rows = [{"batch": b, "leak_free": r.leak_free, "leaks": len(r.leaks_within()),
             "isolation": len(r.isolation_within()), "empty_rows": r.empty_row_report.to_json()}
            for b, r in enumerate(reports)] if len(tasks) > 1 else None
    if args.png:
        from hasse.views.draw_mask import draw_leak

        draw_leak(task, report, args.png, title=_verdict_line(task, report))
    spec = spec_of(args.task, "task") or spec_of(args.task)  # a task spec, or a bare mask's spec
    if (args.json or args.out) and emit_json(args, {**json_header("leak", args.task, spec),
                                                     "objective": "next-token" if bare else "task",
                                                     **leak_json(task, report),
                                                     **({"batch_rows": rows, "batch_row": worst} if rows else {})}):
        pass
    else:
        if rows:  # each batch row on its own; the first leaking one in full
            print(f"{len(rows)} batch rows: " + ", ".join(
                f"{r['batch']}: {'leak-free' if r['leak_free'] else 'LEAK'}" for r in rows)
                + f"; batch row {worst} in full:")
            for b, r in enumerate(reports):  # every row's empty rows and their policy, not only the one in full
                if r.empty_rows and b != worst:
                    print(f"batch row {b}: {r.empty_row_report.describe(names=tasks[b].names)}")
        print((NEXT_TOKEN + "\n" if bare else "") + leak_report(task, report, ascii=args.ascii))
        for path, what in ((args.png, "picture"), (args.out, "JSON")):
            if path:
                print(f"{what} written to {path}")
    return 0 if all(r.leak_free for r in reports) else 1


def with_empty_rows(report: LeakReport, found) -> LeakReport:
    """``report`` naming the empty rows ``found`` (an EmptyRows read per head before the layer was built) too."""
    if found is None or not found.rows:
        return report
    import dataclasses

    rows = tuple(sorted(set(report.empty_rows) | set(found.rows)))
    return dataclasses.replace(report, empty_rows=rows, empty_row_policy=found.policy)


def find_leaks_flagged(task: Task, layers: int | None, empty_rows: str) -> LeakReport:
    """:func:`theory.leak.find_leaks` with its errors in the command line's words (``--empty-rows``)."""
    from hasse.cli.masks_in import flagged

    try:
        return find_leaks(task, layers, empty_rows=empty_rows)
    except InputError as exc:
        raise flagged(exc) from None


def beyond(flows, within) -> list:
    """The flows of ``flows`` not in its sub-sequence ``within``, by identity (linear, not pairwise)."""
    inside = {id(f) for f in within}
    return [f for f in flows if id(f) not in inside]


def leak_json(task: Task, report: LeakReport) -> dict:
    within = report.leaks_within()
    deeper = beyond(report.leaks, within)
    return {
        "task": task.name,
        "leak_free": report.leak_free,
        "layers": report.layers,
        "leaks": [x.to_json() for x in within],
        "leaks_beyond_layers": [x.to_json() for x in deeper],
        "isolation": [x.to_json() for x in report.isolation_within()],
        "supervised": report.supervised,
        "target_coverage": report.target_coverage,
        "label_density": report.label_density,
        "empty_rows": report.empty_row_report.to_json(),
        "key_only": report.key_only_json,
        "positions": task.size,
        "tokens": task.tokens,
    }


def _where(report: LeakReport, found=()) -> str:
    """``in the limit (every depth)`` when clean, ``in the limit (first at depth 2)`` for a violation."""
    from hasse.views.render_text import depth_phrase

    return depth_phrase(report.layers, min((x.depth for x in found), default=None))


def _verdict_line(task: Task, report: LeakReport) -> str:
    leaks, iso = report.leaks_within(), report.isolation_within()
    if not leaks and not iso:
        return f"{task.name}: leak-free {_where(report)}"
    parts = []
    if leaks:
        parts.append(f"{len(leaks)} leak(s), first at depth {min(x.depth for x in leaks)}")
    if iso:
        parts.append(f"{len(iso)} isolation violation(s), first at depth {min(x.depth for x in iso)}")
    return f"{task.name}: " + "; ".join(parts)


def position_text(p: int, names) -> str:
    """``P1 (5)`` for a named position, ``5`` when its name is its index."""
    return str(p) if names[p] == str(p) else f"{names[p]} ({p})"


def path_text(path, names, ascii: bool = False) -> str:
    arrow = " -> " if ascii else " → "
    return arrow.join(names[v] if names[v] == str(v) else f"{names[v]}({v})" for v in path)


def leak_report(task: Task, report: LeakReport, *, ascii: bool = False) -> str:
    """The human report of ``hasse leak``."""
    from hasse.views.render_text import matrix_view

    names = task.names
    lines = [
        f"task {task.name or '(unnamed)'}: {task.size} positions on a sample of {task.tokens} tokens",
        f"supervised positions: {len(report.supervised)} (label density {report.label_density:.0%}); "
        f"distinct targets: {len(report.targets)} of {task.tokens} (target coverage {report.target_coverage:.0%})",
    ]
    leaks, iso = report.leaks_within(), report.isolation_within()
    if not leaks and not iso:
        lines.append(f"verdict: LEAK-FREE {_where(report)}"
                     + (f" ({len(task.isolate)} isolate groups respected)" if task.isolate else ""))
    else:
        lines.append(f"verdict: {'LEAK' if leaks else 'ISOLATION VIOLATED'} {_where(report, leaks or iso)}")
    if report.empty_rows:
        lines.append(report.empty_row_report.describe(names=names))
    if report.key_only:
        from hasse.cli.masks_in import key_only_line

        lines.append(key_only_line(report.key_only, report.key_only_kind))
    deeper = len(report.leaks) - len(leaks) + len(report.isolation) - len(iso)
    if deeper:
        first = min(x.depth for x in (*report.leaks, *report.isolation) if x.depth > (report.layers or 0))
        lines.append(f"note: {deeper} more violation(s) appear at greater depth (first at depth {first}); "
                     f"a deeper model would leak")
    for title, found, column, path_head in ((f"leaks ({len(leaks)}):", leaks, "target", "path (source first)"),
                                            (f"isolation violations ({len(iso)}):", iso, "source", "path")):
        if found:
            lines += ["", title]
            lines += capped_table(found, lambda x: (position_text(x.position, names), getattr(x, column), x.depth,
                                                    path_text(x.path, names, ascii)),
                                  TABLE_ROWS, header=("position", column, "depth", path_head), right=(1, 2), ascii=ascii)
    first = (leaks or iso or [None])[0]
    if first is not None and task.size <= 64:
        cells = {(b, a) for a, b in zip(first.path, first.path[1:])} or {(first.position, first.position)}
        lines += ["", f"mask with the first witness path marked (row = query, column = key):",
                  matrix_view(task.mask, names=names, highlight=cells, ascii=ascii)]
    return "\n".join(lines)


def run_flow(args) -> int:
    from hasse.cli.masks_in import apply_policy, key_only_line, load_heads, query_options

    _check_layers(args.layers)
    _preset_as_stack(args, "mask")
    _check_repeat(args)
    if args.stack is not None:
        return run_flow_stack(args)
    if args.mask is None:
        raise InputError("give a MASK (or --stack SPEC)")
    named, grid = load_heads(args.mask, n=args.n, heads=args.heads, batch=args.batch, **query_options(args))
    n = named.n
    sources = parse_set(args.sources, n, "--from")
    sinks = parse_set(args.sinks, n, "--to")
    rows = []
    for b in range(grid.batch_rows):
        layer, found = apply_policy(grid, b, args.empty_rows, named.spec)
        flows = find_flows(layer, sources, sinks, empty_rows="attend-none")  # the policy is applied per head
        within = [f for f in flows if args.layers is None or f.depth <= args.layers]
        rows.append((b, found, flows, within, layer))
    if args.png:
        from hasse.views.draw_mask import draw_flow

        _, _, _, within0, layer0 = rows[0]
        verdict = f"{len(within0)} position(s) of --to depend on --from" if within0 else "no flow"
        draw_flow(layer0, named.names, within0, args.png,
                  title=f"{named.spec}: {verdict} (--from {args.sources} --to {args.sinks})")
    printed = False
    if args.json or args.out:
        out = [{**flow_task_json(named, layer, sources, sinks), "layers": args.layers, "from": sources, "to": sinks,
                "flow_free": not within, "flows": [f.to_json() for f in within],
                "flows_beyond_layers": [f.to_json() for f in beyond(flows, within)],
                "empty_rows": found.to_json(), "key_only": key_only_json(named.key_only, named.key_only_kind)}
               for b, found, flows, within, layer in rows]
        head = json_header("flow", args.mask, spec_of(args.mask))
        if grid.batch is None:
            printed = emit_json(args, dict(head, **out[0], **({"heads": grid.heads} if grid.heads is not None else {})))
        else:
            printed = emit_json(args, {**head, "layers": args.layers, "batch": grid.batch, "heads": grid.heads,
                                       "flow_free": all(x["flow_free"] for x in out),
                                       "batches": [dict(x, batch_row=b) for b, x in enumerate(out)]})
    if not printed:
        from hasse.views.render_text import depth_phrase

        for b, found, flows, within, _ in rows:
            head = named.spec + (f" batch row {b}" if grid.batch is not None else "")
            if grid.heads is not None and b == 0:
                print(f"{named.spec}: heads 0..{grid.heads - 1}, each layer's mask the union over them")
            if named.key_only and b == 0:
                print(f"{named.spec}: {key_only_line(named.key_only, named.key_only_kind)}")
            if found.rows:
                print(f"{head}: {found.describe(names=named.names)}")
            if not within:
                print(f"{head}: no position of --to depends on --from {depth_phrase(args.layers)}")
            else:
                first = min(f.depth for f in within)
                print(f"{head}: {len(within)} position(s) of --to depend on --from "
                      f"{depth_phrase(args.layers, first)}")
                print(*capped_table(within, lambda f: (position_text(f.position, named.names), f.depth,
                                                       path_text(f.path, named.names, args.ascii)),
                                    TABLE_ROWS, header=("position", "depth", "path (source first)"), right=(1,),
                                    ascii=args.ascii), sep="\n")
            if len(flows) > len(within):
                deeper = min(f.depth for f in beyond(flows, within))
                print(f"note: {len(flows) - len(within)} more appear at greater depth (first at depth {deeper})")
        for path, what in ((args.png, "picture"), (args.out, "JSON")):
            if path:
                print(f"{what} written to {path}")
    return 0 if all(not within for _, _, _, within, _ in rows) else 1


def flow_task(named, layer, sources: list[int], sinks: list[int]) -> Task:
    """The task a flow question encodes (design §7): a forbidden flow is exactly a leak of this task.

    Source ``i`` of ``--from`` (in increasing order) holds the sample token ``x<i>``;
    every other position holds ``[MASK]``; every position of ``--to`` is supervised
    with every source token (``0 … k-1``); the position id of position ``p`` is ``p``.
    The mask is the layer as analysed (union over heads, empty rows read by the
    policy); a row that is still empty (attend-none, key-only positions) keeps only
    its diagonal, which with the residual is the same as attending nothing, so
    ``hasse leak`` (which reads empty rows as attend-all) sees the same flows.

    >>> import numpy as np
    >>> from hasse.theory.mask import NamedMask
    >>> t = flow_task(NamedMask(np.tril(np.ones((3, 3), bool)), ("0", "1", "2"), "causal:n=3"),
    ...               np.tril(np.ones((3, 3), bool)), [0], [2])
    >>> t.tokens, t.inputs, t.labels
    (1, (('x0', 0), ('[MASK]', 1), ('[MASK]', 2)), ((), (), (0,)))
    """
    import numpy as np

    from hasse.theory.task import make_task

    mask = np.array(layer, dtype=bool)
    empty = ~mask.any(axis=1)
    mask[empty, empty] = True  # still-empty rows: attend nothing but themselves (the residual keeps their content)
    token = {p: i for i, p in enumerate(sources)}
    inputs = [(f"x{token[p]}" if p in token else "[MASK]", p) for p in range(mask.shape[0])]
    every = list(range(len(sources)))
    labels = [every if p in set(sinks) else None for p in range(mask.shape[0])]
    name = f"flow {named.spec} --from {_set_text(sources)} --to {_set_text(sinks)}"
    return make_task(len(sources), inputs, labels, mask, name=name, names=list(named.names))


def _set_text(positions: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``."""
    parts, start = [], None
    for i, p in enumerate(positions):
        if start is None:
            start = p
        if i + 1 == len(positions) or positions[i + 1] != p + 1:
            parts.append(str(p) if p == start else f"{start}-{p}")
            start = None
    return ",".join(parts)


def flow_task_json(named, layer, sources: list[int], sinks: list[int]) -> dict:
    """The task fields of ``flow --json`` (:func:`flow_task` written by :func:`theory.task_io.task_to_dict`)."""
    from hasse.theory.inputs.tasks import task_to_dict

    from hasse.views.output import spec_of

    task = flow_task(named, layer, sources, sinks)
    out = task_to_dict(task)
    spec = spec_of(named.spec)
    if spec is not None and named.matrix.shape == task.mask.shape and (named.matrix == task.mask).all():
        out["mask"] = spec  # the built-in spec itself, not n^2 rows (a task file's mask may be a spec)
    out["positions"] = task.size
    return out


# ---------------------------------------------------------------- stacks (--stack SPEC: a mask per layer)

NEXT_TOKEN_STACK = ("checked as next-token prediction through the stack (position q predicts x_{q+1}); give a TASK "
                    "for other objectives")


def _refuse_for_stack(args, **flags) -> None:
    """One line for each option that has no meaning with ``--stack`` (``flags``: dest -> why)."""
    for dest, why in flags.items():
        if getattr(args, dest, None) not in (None, False):
            raise InputError(f"--{dest.replace('_', '-')} {why}")


def _stack_of(args, n: int | None):
    """``(stack, read stack, empty rows, StackFlow)``: --stack at ``n`` positions, each layer's empty rows read
    by --empty-rows, propagated until the repeated stack converges."""
    from hasse.cli.masks_in import flagged, load_stack
    from hasse.theory.stack import propagate
    from hasse.theory.stack_leak import apply_stack_policy

    try:
        stack = load_stack(args.stack, n, args.repeat, heads=getattr(args, "heads", None),
                           trust_code=bool(getattr(args, "trust_code", False)),
                           convention=getattr(args, "convention", None) or "auto")
    except InputError as exc:
        if n is None or getattr(args, "task", None) is None or "positions" not in str(exc):
            raise
        raise InputError(f"{exc} (--stack is built at the task's {n} positions)") from None
    if n is not None and stack.n != n:
        raise InputError(f"--stack {args.stack!r} has {stack.n} positions, not the {n} asked for")
    try:
        read, rows = apply_stack_policy(stack, args.empty_rows)
    except InputError as exc:
        raise flagged(exc) from None
    return stack, read, rows, propagate(read)


def stack_where(layers: int, depth: int, first: int | None = None) -> str:
    """``within L = 6 layers, the stack's depth (first at layer 4)``: a stack verdict's reach.

    >>> stack_where(6, 6, 4), stack_where(2, 6)
    ("within L = 6 layers, the stack's depth (first at layer 4)", 'within L = 2 layers')
    """
    out = f"within L = {layers} layer{'' if layers == 1 else 's'}" + (", the stack's depth" if layers == depth else "")
    return out + (f" (first at layer {first})" if first is not None else "")


def _limit_line(found_in_limit, what: str = "LEAK") -> str:
    if not found_in_limit:
        return "in the limit of the repeated stack: clean at every depth"
    return f"in the limit of the repeated stack: {what} (first at layer {min(x.depth for x in found_in_limit)})"


def _stack_table(found, names, column: str | None, ascii: bool) -> list[str]:
    from hasse.views.render_text import layered_path_text

    def row(x):
        cells = (position_text(x.position, names),) + ((getattr(x, column),) if column else ())
        return cells + (x.depth, layered_path_text(x.path, x.hop_layers, names, ascii))

    header = ("position",) + ((column,) if column else ()) + ("layer", "path (source first, each hop's layer)")
    right = (1, 2) if column else (1,)
    return capped_table(found, row, TABLE_ROWS, header=header, right=right, ascii=ascii)


def stack_leak_report(task: Task, stack, flow, report: LeakReport, *, ascii: bool = False) -> str:
    """The human report of ``hasse leak --stack``: each violation with its first layer and layered witness."""
    names = task.names
    lines = [f"task {task.name or '(unnamed)'}: {task.size} positions on a sample of {task.tokens} tokens",
             *stack_lines(stack, flow),
             f"supervised positions: {len(report.supervised)} (label density {report.label_density:.0%}); "
             f"distinct targets: {len(report.targets)} of {task.tokens} (target coverage {report.target_coverage:.0%})"]
    leaks, iso = report.leaks_within(), report.isolation_within()
    if not leaks and not iso:
        lines.append(f"verdict: LEAK-FREE {stack_where(report.layers, stack.depth)}"
                     + (f" ({len(task.isolate)} isolate groups respected)" if task.isolate else ""))
    else:
        first = min(x.depth for x in (leaks or iso))
        lines.append(f"verdict: {'LEAK' if leaks else 'ISOLATION VIOLATED'} "
                     f"{stack_where(report.layers, stack.depth, first)}")
    lines.append(_limit_line((*report.leaks, *report.isolation), "LEAK" if report.leaks else "ISOLATION VIOLATED"))
    if report.empty_rows:
        lines.append(report.empty_row_report.describe(names=names))
    deeper = len(report.leaks) - len(leaks) + len(report.isolation) - len(iso)
    if deeper:
        first = min(x.depth for x in (*report.leaks, *report.isolation) if x.depth > (report.layers or 0))
        lines.append(f"note: {deeper} more violation(s) appear with more layers (first at layer {first}); "
                     f"a deeper model (the stack repeated) would leak")
    for title, found, column in ((f"leaks ({len(leaks)}):", leaks, "target"),
                                 (f"isolation violations ({len(iso)}):", iso, "source")):
        if found:
            lines += ["", title, *_stack_table(found, names, column, ascii)]
    return "\n".join(lines)


def stack_subject(args) -> tuple[Task | None, bool]:
    """``(task, bare)`` of ``hasse leak [TASK] --stack SPEC``: the TASK, or ``(None, True)`` for next-token
    prediction through the stack (built by the caller once the stack's size is known)."""
    from hasse.theory.inputs.read import kind_of

    if args.task is not None:
        if kind_of(args.task) != "task":
            raise InputError("with --stack the layers are the masks: give a TASK (its inputs and labels) or no "
                             "argument (next-token prediction through the stack), not a MASK", args.task)
        (task,), _, _ = load_leak_subject(args.task, args.n, args.trust_code)
        return task, False
    return None, True


def run_leak_stack(args) -> int:
    from hasse.theory.mask import NamedMask
    from hasse.theory.stack_leak import find_stack_leaks
    from hasse.theory.inputs.tasks import next_token_task

    _refuse_for_stack(args, png="draws one mask: not with --stack (hasse analyze --stack draws the layers)",
                      batch="does not apply to --stack (a stack describes one sequence; check each batch row "
                            "on its own)",
                      queries="does not apply to --stack (every layer is square)",
                      kv_len="does not apply to --stack (every layer is square)")
    task, bare = stack_subject(args)
    stack, _, _, flow = _stack_of(args, task.size if task is not None else args.n)
    if task is None:
        names = tuple(str(i) for i in range(stack.n))
        task = next_token_task(NamedMask(stack.union(), names, stack.spec))
    layers = stack.depth if args.layers is None else args.layers
    from hasse.cli.masks_in import flagged

    try:
        report = find_stack_leaks(task, stack, layers, empty_rows=args.empty_rows, flow=flow)  # rows named
    except InputError as exc:
        raise flagged(exc) from None
    in_limit = bool(report.leaks or report.isolation)
    if args.json or args.out:
        spec = spec_of(args.task, "task") if args.task else None
        data = {**json_header("leak", args.task or args.stack_input, spec),
                "objective": "next-token" if bare else "task", **leak_json(task, report),
                "stack": stack_json(stack, flow), "leak_free_in_limit": not in_limit}
        if emit_json(args, data):
            return 0 if report.leak_free else 1
    print((NEXT_TOKEN_STACK + "\n" if bare else "") + stack_leak_report(task, stack, flow, report,
                                                                                    ascii=args.ascii))
    if args.out:
        print(f"JSON written to {args.out}")
    return 0 if report.leak_free else 1


def run_flow_stack(args) -> int:
    from hasse.theory.empty_rows import EmptyRows
    from hasse.theory.mask import NamedMask
    from hasse.theory.stack_leak import find_stack_flows
    from hasse.theory.inputs.tasks import task_to_dict

    if args.mask is not None:
        raise InputError("with --stack the layers are the masks: leave MASK out (or give a model preset as MASK)",
                         args.mask)
    _refuse_for_stack(args, png="draws one mask: not with --stack (hasse analyze --stack draws the layers)",
                      batch="does not apply to --stack (a stack describes one sequence; check each batch row "
                            "on its own)",
                      queries="does not apply to --stack (every layer is square)",
                      kv_len="does not apply to --stack (every layer is square)")
    stack, read, rows, flow = _stack_of(args, args.n)
    n = stack.n
    sources = parse_set(args.sources, n, "--from")
    sinks = parse_set(args.sinks, n, "--to")
    flows = find_stack_flows(read, sources, sinks, flow=flow)
    layers = stack.depth if args.layers is None else args.layers
    within = [f for f in flows if f.depth <= layers]
    found = EmptyRows(rows, args.empty_rows)
    names = tuple(str(i) for i in range(n))
    if args.json or args.out:
        # the task file's mask is the union of the (read) layers: its limit is the repeated stack's limit, so
        # `hasse leak FILE` finds the same flows in the limit and `hasse leak FILE --stack SPEC` the same depths
        union = NamedMask(read.union(), names, f"union of {stack.spec}")
        task = task_to_dict(flow_task(union, read.union(), sources, sinks))
        data = {**json_header("flow", args.mask or args.stack_input, None), **task, "positions": n, "layers": layers,
                "from": sources, "to": sinks, "flow_free": not within, "flows": [f.to_json() for f in within],
                "flows_beyond_layers": [f.to_json() for f in beyond(flows, within)],
                "empty_rows": found.to_json(), "key_only": key_only_json((), ""),
                "stack": stack_json(stack, flow), "flow_free_in_limit": not flows}
        if emit_json(args, data):
            return 1 if within else 0
    for line in stack_lines(stack, flow):
        print(line)
    if found.rows:
        print(found.describe(names=names))
    if not within:
        print(f"no position of --to depends on --from {stack_where(layers, stack.depth)}")
    else:
        print(f"{len(within)} position(s) of --to depend on --from "
              f"{stack_where(layers, stack.depth, min(f.depth for f in within))}")
        print(*_stack_table(within, names, None, args.ascii), sep="\n")
    print(_limit_line(flows, "FLOW"))
    if args.out:
        print(f"JSON written to {args.out}")
    return 1 if within else 0

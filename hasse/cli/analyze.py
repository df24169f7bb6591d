"""``hasse analyze MASK``: convergence depth, classes and Hasse diagram of a mask."""

from __future__ import annotations

import sys

from dataclasses import replace

from hasse.cli.arguments import add_empty_rows_argument, add_range_arguments, add_stack_arguments
from hasse.views.render_text import key_only_line
from hasse.views.output import ascii_aware, emit_json, json_header, spec_of, warn
from hasse.cli.parsers import add_command, integer
from hasse.theory.analysis import MaskAnalysis, mask_to_analysis
from hasse.theory.empty_rows import ANALYZE_DEFAULT
from hasse.theory.errors import InputError
from hasse.theory.leak import key_only_json

HELP = "depth, classes and Hasse diagram of a mask"
DESCRIPTION = """\
Analyse how information flows through a stack of attention layers that all use
MASK. With the residual connection, output q depends on input k after L layers
iff there is a walk k -> ... -> q of at most L attention hops. The flow stops
changing at the convergence depth L* (the longest shortest path, at most n-1);
the limit is a preorder: its classes (positions that see each other) and the
Hasse diagram of the order between them are printed.

"dense" means one layer already realises the whole limit (M or I = R*).
With --no-residual (the negative control) the powers M^L may cycle forever:
the pre-period and period of that sequence are reported instead of a limit.

Empty rows (queries attending no key, not even themselves) are analysed as given
by default (--empty-rows attend-none): analyze describes the mask. What a real
kernel does there differs (additive masks: every key; FlexAttention, flash and
safe-softmax SDPA: zeros; a hand-written -inf softmax: NaN), so they are named
in the report; --empty-rows attend-all analyses them as attending every key,
--empty-rows error (or --strict) refuses them.

A file.py:mask_mod that reads h or b must be given its ranges: --heads H (the
layer's mask is the union over heads h < H, each head's empty rows read first)
and --batch B (each batch row b < B analysed on its own).

Stacks (a mask per layer): --stack 'sliding_window:w=4 x5, causal' --n N (no
MASK), or a model preset as MASK (gemma3:n=4096; see hasse catalog). R(L) is the
product of the layers' dependencies, first layer first. The report gives the
layers as runs (a recurrent layer enters as its dependency pattern), the depth
at which the flow of the stack repeated forever stops changing and whether the
model's own depth reaches it, after how many layers the last position first sees
the first, and the receptive field per position (layers until it sees all it
will ever see) as a table; --png draws it. The classes and Hasse diagram are
those of the limit: the closure of the union of the layers' masks. --layers L
gives R(L) of the stack.
"""
EPILOG = """\
examples:
  hasse analyze butterfly:n=4
  hasse analyze sliding_window:n=16,w=3 --layers 4
  hasse analyze causal:n=5 --json
  hasse analyze mask.txt --no-residual
  hasse analyze masks.py:prefix --n 12 --png prefix.png --dot prefix.dot
  hasse analyze masks.py:per_head --n 8 --heads 4 --batch 2
  hasse analyze masks.py:decode --n 1 --kv-len 9     one decoding step after 8 cached keys (key-only 0-7)
  hasse analyze cross.npy --queries separate         a Q x K cross-attention mask: K memory positions first
  hasse analyze gemma3:n=4096                        a model preset: 34 layers, 5 sliding-window then 1 global
  hasse analyze --stack 'sliding_window:w=4 x5, causal' --n 64 --png rf.png

exit status: 0 analysed; 2 bad input (one line on stderr).
"""


def register(sub) -> None:
    p = add_command(sub, "analyze", HELP, DESCRIPTION, EPILOG)
    p.add_argument("mask", metavar="MASK", nargs="?",
                   help="built-in spec, .npy/.txt/.csv/.json file, or file.py:mask_mod; a model preset "
                        "(gemma3:n=4096) means --stack that preset; optional when --stack is given")
    p.add_argument("--n", type=integer("--n", 1), help="size at which to evaluate a file.py:mask_mod")
    p.add_argument("--layers", type=integer("--layers", 0), metavar="L", help="also report R(L), the dependencies after L layers")
    p.add_argument("--no-residual", action="store_true", help="drop the residual connection (negative control)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--out", metavar="FILE", help="also write that JSON object to FILE (the terminal gets the report)")
    p.add_argument("--png", metavar="FILE", help="draw the mask beside its Hasse diagram; for a stack, its receptive "
                   "field per position (.png, .svg or .pdf by the suffix; needs matplotlib)")
    p.add_argument("--dot", metavar="FILE", help="write the Hasse diagram as Graphviz DOT ('-' for stdout)")
    p.add_argument("--strict", action="store_true", help="same as --empty-rows error")
    add_empty_rows_argument(p, ANALYZE_DEFAULT)
    add_range_arguments(p)
    p.add_argument("--ascii", action="store_true", help="draw the matrix view with ASCII characters only")
    add_stack_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def run(args) -> int:
    from hasse.cli.arguments import reading_of
    from hasse.theory.inputs.read import kind_of, read

    if args.n is not None and args.n <= 0:
        raise InputError(f"--n must be a positive size, got {args.n}")
    if args.stack is not None or kind_of(args.mask) == "preset":
        return run_stack(args)
    if args.mask is None:
        raise InputError("give a MASK, or a stack of layers with --stack SPEC (see hasse analyze --help)")
    if args.repeat is not None:
        raise InputError("--repeat R repeats a --stack SPEC or a model preset; a single MASK is already the same "
                         "at every layer (use --layers L)")
    subject = read(args.mask, reading_of(args), accept=("mask",))
    named, grid = subject.mask, subject.grid
    if args.layers is not None and args.layers < 0:
        raise InputError(f"--layers must be >= 0, got {args.layers}")
    policy = "error" if args.strict else args.empty_rows
    analyses = [batch_analysis(grid, b, named, policy, args) for b in range(grid.batch_rows)]
    analysis = analyses[0]
    for b, a in enumerate(analyses):
        if a.empty_rows and a.empty_row_policy == "attend-none":
            where = f" batch row {b}" if grid.batch is not None else ""
            warn(f"{named.spec}{where}: {len(a.empty_rows)} empty row(s) (queries attending no key, not even "
                 f"themselves): {_rows(a.empty_rows)}; analysed as given (attend-none), but additive-mask kernels "
                 "attend every key there and a -inf softmax gives NaN (see --empty-rows)")
    if args.dot:
        from hasse.views.dot import to_dot

        text = to_dot(analysis)
        if args.dot == "-":
            if args.json:
                raise InputError("--dot - and --json both want stdout; write the DOT to a file")
            sys.stdout.write(text)
        else:
            _write(args.dot, text)
    if args.png:
        from hasse.views.draw_hasse import draw_analysis

        draw_analysis(analysis, args.png, title=named.spec)
    printed = False
    if args.json or args.out:
        head = json_header("analyze", args.mask, spec_of(args.mask))
        if grid.batch is None:
            printed = emit_json(args, {**head, **analysis_json(analysis, grid)})
        else:
            printed = emit_json(args, {**head, "batch": grid.batch, "heads": grid.heads,
                                       "batches": [dict(analysis_json(a, grid, b), batch_row=b)
                                                   for b, a in enumerate(analyses)]})
    if not printed and args.dot != "-":
        for b, a in enumerate(analyses):
            if grid.batch is not None:
                print(("" if b == 0 else "\n") + f"=== batch row {b} of {grid.batch} ===")
            print(report(a, named.spec, ascii=args.ascii, grid=grid, b=b))
        for path, what in ((args.png, "picture"), (args.dot, "DOT"), (args.out, "JSON")):
            if path and path != "-":
                print(f"{what} written to {path}" + (" (batch row 0)" if grid.batch is not None else ""))
    return 0


def run_stack(args) -> int:
    """``hasse analyze --stack SPEC`` (or a preset as MASK): the stack's flow, receptive field and limit order."""
    from hasse.cli.arguments import reading_of
    from hasse.theory.inputs.read import read
    from hasse.views.stack_report import stack_json
    from hasse.theory.stack import propagate
    from hasse.theory.stack_leak import apply_stack_policy

    if args.stack is not None and args.mask is not None:
        raise InputError(f"give a MASK or --stack SPEC, not both (got {args.mask!r} and --stack {args.stack!r}); "
                         "a stack's layers are its masks")
    for flag, value in (("--no-residual", args.no_residual), ("--batch B", args.batch is not None),
                        ("--queries", args.queries is not None), ("--kv-len K", args.kv_len is not None)):
        if value:
            raise InputError(f"{flag} does not apply to a stack (square layers with the residual, one sequence)")
    if args.layers is not None and args.layers < 0:
        raise InputError(f"--layers must be >= 0, got {args.layers}")
    text = args.stack if args.stack is not None else args.mask
    stack = read(text, reading_of(args), accept=("preset", "stack")).stack
    policy = "error" if args.strict else args.empty_rows
    stack, empty = apply_stack_policy(stack, policy)
    if empty and policy == "attend-none":
        warn(f"{stack.spec}: {len(empty)} position(s) with an empty row in some layer (attending no key, not "
             f"even themselves): {_rows(empty)}; analysed as given (attend-none), but additive-mask kernels "
             "attend every key there and a -inf softmax gives NaN (see --empty-rows)")
    flow = propagate(stack, max(stack.depth, args.layers or 0), until_converged=True)
    a = mask_to_analysis(stack.union(), residual=True, empty_rows="attend-none")
    converged = flow.converged
    a = replace(a, convergence_depth=converged, dense=converged is not None and converged <= 1,
                empty_rows=empty, empty_row_policy=policy)
    if args.layers is not None:
        a = replace(a, layers=args.layers, reachability=flow.reach(args.layers))
    if args.dot:
        from hasse.views.dot import to_dot

        if args.dot == "-":
            if args.json:
                raise InputError("--dot - and --json both want stdout; write the DOT to a file")
            sys.stdout.write(to_dot(a))
        else:
            _write(args.dot, to_dot(a))
    if args.png:
        from hasse.views.draw_receptive import draw_receptive

        draw_receptive(flow.receptive_field(), stack.depth, args.png, title=f"receptive field of {stack.spec}")
    printed = False
    if args.json or args.out:
        head = json_header("analyze", text, stack.spec)
        printed = emit_json(args, {**head, **analysis_json(a), "stack": stack_json(stack, flow, analysis=True)})
    if not printed and args.dot != "-":
        print(stack_report(a, stack, flow, ascii=args.ascii))
        for path, what in ((args.png, "picture"), (args.dot, "DOT"), (args.out, "JSON")):
            if path and path != "-":
                print(f"{what} written to {path}")
    return 0


def stack_report(a: MaskAnalysis, stack, flow, *, ascii: bool = False) -> str:
    """The text report of a stack: its layers and flow (hasse.views.stack_report), then the limit's order."""
    from hasse.views.render_text import classes_view, hasse_view, matrix_view
    from hasse.views.stack_report import stack_lines

    lines = stack_lines(stack, flow, analysis=True, ascii=ascii)
    if a.empty_rows:
        lines.append(a.empty_row_report.describe())
    shown = a.layers if a.layers is not None else stack.depth
    reach = a.reachability if a.reachability is not None else flow.reach(shown)
    if a.layers is not None:
        lines.append(f"after L = {a.layers} layers: {int(reach.sum())} of {a.n * a.n} (query, input) dependencies")
    if a.n <= 64:
        lines += ["", f"R({shown}): row q depends on column k after {shown} layer{'' if shown == 1 else 's'}"
                  + ("" if a.layers is not None else " (the model's depth)"),
                  matrix_view(reach, names=a.names, ascii=ascii)]
    singletons = all(len(c) == 1 for c in a.classes)
    lines += ["", "the limit of the repeated stack (the reflexive-transitive closure of the union of the layers' masks):",
              f"classes: {len(a.classes)}" + (" (all single positions: a partial order)" if singletons
                                              else f" ({sum(len(c) > 1 for c in a.classes)} with several positions)"),
              f"Hasse diagram: {len(a.hasse_edges)} covering edges, height {a.height}",
              "", classes_view(a, ascii=ascii), "", hasse_view(a, ascii=ascii)]
    return "\n".join(lines)


def batch_analysis(grid, b: int, named, policy: str, args) -> MaskAnalysis:
    """The analysis of batch row ``b``: its layer mask (union over heads, empty rows read per head)."""
    layer, found = grid.layer(b, policy, named.spec)
    a = mask_to_analysis(layer, residual=not args.no_residual, layers=args.layers, names=named.names,
                         empty_rows="attend-none", key_only=named.key_only, key_only_kind=named.key_only_kind)
    return replace(a, empty_rows=found.rows, empty_row_policy=found.policy)


def _rows(rows) -> str:
    from hasse.views.tables import cut_items

    return cut_items(rows, 10)


def _write(path: str, text: str) -> None:
    from hasse.views.output import write_text

    write_text(path, text)  # atomically: a temporary file, then os.replace


def analysis_json(a: MaskAnalysis, grid=None, b: int = 0) -> dict:
    """The JSON object of design.md §7 for ``hasse analyze``.

    ``empty_rows`` is an object: ``rows``, ``policy``, ``kernels`` (theory.empty_rows).
    With declared heads, ``heads`` and ``head_masks`` (per head: ``head``,
    ``pairs``, ``shape``, ``empty_rows``) describe what the union was taken over.
    """
    out = {
        "positions": a.n,
        "residual": a.residual,
        "convergence_depth": a.convergence_depth,
        "classes": a.classes,
        "hasse_edges": a.hasse_edges,
        "dense": a.dense,
        "height": a.height,
        "empty_rows": a.empty_row_report.to_json(),
        "key_only": key_only_json(a.key_only, a.key_only_kind),
        "names": a.names,
    }
    if grid is not None and grid.heads is not None:
        out["heads"] = grid.heads
        out["head_masks"] = head_summaries(grid, b)
    if not a.residual:
        out["period"] = a.period
        out["preperiod"] = a.preperiod
    if a.layers is not None:
        out["layers"] = a.layers
        out["reachability"] = a.reachability
    return out


def head_summaries(grid, b: int) -> list[dict]:
    """Per head of batch row ``b``: allowed pairs, a short shape name, empty rows."""
    from hasse.theory.heads import shape_name

    empties = grid.head_empty_rows(b)
    return [{"head": h, "pairs": int(m.sum()), "shape": shape_name(m), "empty_rows": list(empties[h])}
            for h, m in enumerate(grid.masks[b])]


def report(a: MaskAnalysis, spec: str, *, ascii: bool = False, grid=None, b: int = 0) -> str:
    """Human-readable report."""
    from hasse.views.render_text import classes_view, hasse_view, matrix_view

    lines = [f"mask {spec}: n = {a.n} positions, {int(a.mask.sum())} allowed (query, key) pairs"]
    if a.key_only:
        lines.append(key_only_line(a.key_only, a.key_only_kind))
    if grid is not None and grid.heads is not None:
        lines.append(f"heads: {grid.heads}; the layer's mask is their union (every layer mixes its heads)")
        lines += [f"  head {s['head']}: {s['shape']}" + (f"; empty rows {_rows(s['empty_rows'])}"
                                                          if s["empty_rows"] else "") for s in head_summaries(grid, b)]
    if a.empty_rows:
        lines.append(a.empty_row_report.describe())
    else:
        lines.append("empty rows: none (every query attends some key" + (", key-only positions aside)"
                                                                         if a.key_only else ")"))
    if a.n <= 64:
        lines += ["", matrix_view(a.mask, names=a.names, reach=a.reachability, ascii=ascii), ""]
    singletons = all(len(c) == 1 for c in a.classes)
    if a.residual:
        lines.append(f"convergence depth L* = {a.convergence_depth}"
                     + (" (dense: one layer realises the whole limit)" if a.dense
                        else f" (sparse: the limit needs {a.convergence_depth} layers)"))
    elif a.period == 1:
        lines.append(f"without the residual the powers M^L settle at L = {a.preperiod} (period 1)")
    else:
        lines.append(f"without the residual the powers M^L never settle: pre-period {a.preperiod}, "
                     f"period {a.period} (no limit)")
    if a.layers is not None:
        reached = int(a.reachability.sum())
        lines.append(f"after L = {a.layers} layers: {reached} of {a.n * a.n} (query, input) dependencies"
                     + ("" if a.residual else " (no residual)"))
    lines.append(f"classes: {len(a.classes)}" + (" (all single positions: a partial order)" if singletons
                                               else f" ({sum(len(c) > 1 for c in a.classes)} with several positions)"))
    lines.append(f"Hasse diagram: {len(a.hasse_edges)} covering edges, height {a.height}")
    lines += ["", classes_view(a), "", hasse_view(a)]
    return "\n".join(lines)

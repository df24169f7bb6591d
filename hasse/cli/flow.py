"""``hasse flow [MASK] --from SET --to SET [--stack SPEC]``: may positions of one set depend on another?

A forbidden flow is exactly a leak (:func:`theory.stack_leak.flow_task`); ``--json`` writes that task.
"""

from __future__ import annotations

import re

from hasse.cli.layers_in import read_layers
from hasse.theory.inputs.layers import flow_layers
from hasse.cli.arguments import add_empty_rows_argument, add_range_arguments, add_stack_arguments
from hasse.cli.parsers import add_command, integer
from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.errors import InputError
from hasse.theory.stack_leak import find_stack_flows
from hasse.views.leak_report import flow_json, flow_lines
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header, spec_of
from hasse.views.stack_report import stack_json, stack_lines

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


def register(sub) -> None:
    f = add_command(sub, "flow", "may positions of one set depend on another set?", FLOW_DESCRIPTION, FLOW_EPILOG)
    f.add_argument("mask", metavar="MASK", nargs="?",
                   help="built-in spec, mask file, or file.py:mask_mod (with --n); left out with --stack")
    f.add_argument("--from", dest="sources", required=True, metavar="SET", help="positions that must not be read")
    f.add_argument("--to", dest="sinks", required=True, metavar="SET", help="positions that must not read them")
    f.add_argument("--n", type=integer("--n", 1), help="size at which to evaluate a file.py:mask_mod")
    f.add_argument("--layers", type=integer("--layers", 0), metavar="L", help="verdict for an L-layer model (default: every depth)")
    add_json_arguments(f, json_help="print one JSON object and nothing else: a task file (hasse leak reads it)",
                       png_help="draw the mask with the first path from --from to --to over it (.png, .svg or .pdf "
                                "by the suffix; batch row 0)")
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


def run_flow(args) -> int:
    """One path for a mask (each batch row's layer at every depth) and for a stack: read, find, report."""
    layers = read_layers(args, args.mask, flow_layers)
    stack, named = layers.stack, layers.named
    n = len(layers.names)
    sources = parse_set(args.sources, n, "--from")
    sinks = parse_set(args.sinks, n, "--to")
    depth = stack.depth if stack is not None and args.layers is None else args.layers
    rows = []  # (layer, empty rows, every flow, those within the depth)
    for layer, found in zip(layers.rows, layers.found):
        flows = find_stack_flows(layer if stack is None else layers.read_layers, sources, sinks,
                                 empty_rows="attend-none", flow=layers.flow)  # empty rows read per head or layer
        rows.append((layer, found, flows, [f for f in flows if depth is None or f.depth <= depth]))
    if args.png:
        from hasse.views.draw_mask import draw_flow

        layer0, _, _, within0 = rows[0]
        verdict = f"{len(within0)} position(s) of --to depend on --from" if within0 else "no flow"
        draw_flow(layer0, named.names, within0, args.png,
                  title=f"{named.spec}: {verdict} (--from {args.sources} --to {args.sinks})")
    if (args.json or args.out) and emit_json(args, _json(layers, sources, sinks, depth, rows)):
        return 0 if all(not within for *_, within in rows) else 1
    for line in stack_lines(stack, layers.flow) if stack is not None else ():
        print(line)
    for b, (_, found, flows, within) in enumerate(rows):
        if stack is None and b == 0 and layers.heads is not None:
            print(f"{named.spec}: heads 0..{layers.heads - 1}, each layer's mask the union over them")
        if stack is None and b == 0 and named.key_only:
            from hasse.views.render_text import key_only_line

            print(f"{named.spec}: {key_only_line(named.key_only, named.key_only_kind)}")
        head = "" if stack is not None else named.spec + (f" batch row {b}" if layers.batch is not None else "")
        print(*flow_lines(head, layers.names, depth, found, flows, within, stack, ascii=args.ascii), sep="\n")
    for path, what in ((args.png, "picture"), (args.out, "JSON")):
        if path:
            print(f"{what} written to {path}")
    return 0 if all(not within for *_, within in rows) else 1


def _json(layers, sources, sinks, depth, rows) -> dict:
    """``--json``: the task each batch row's question encodes, with its flows (and the stack's fields)."""
    out = [flow_json(layers.named, layer, sources, sinks, depth, found, flows, within)
           for layer, found, flows, within in rows]
    if layers.stack is not None:
        return {**json_header("flow", layers.preset, None), **out[0], "stack": stack_json(layers.stack, layers.flow),
                "flow_free_in_limit": not rows[0][2]}
    head = json_header("flow", layers.subject, spec_of(layers.subject))
    if layers.batch is None:
        return dict(head, **out[0], **({"heads": layers.heads} if layers.heads is not None else {}))
    return {**head, "layers": depth, "batch": layers.batch, "heads": layers.heads,
            "flow_free": all(x["flow_free"] for x in out), "batches": [dict(x, batch_row=b) for b, x in enumerate(out)]}

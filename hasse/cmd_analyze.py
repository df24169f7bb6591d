"""``hasse analyze MASK``: convergence depth, classes and Hasse diagram of a mask."""

from __future__ import annotations

import sys

from hasse.output import print_json, warn
from hasse.parsers import add_command
from hasse.theory.analysis import MaskAnalysis, mask_to_analysis
from hasse.theory.errors import InputError

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
"""
EPILOG = """\
examples:
  hasse analyze butterfly:n=4
  hasse analyze sliding_window:n=16,w=3 --layers 4
  hasse analyze causal:n=5 --json
  hasse analyze mask.txt --no-residual
  hasse analyze masks.py:prefix --n 12 --png prefix.png --dot prefix.dot

exit status: 0 analysed; 2 bad input (one line on stderr).
"""


def register(sub) -> None:
    p = add_command(sub, "analyze", HELP, DESCRIPTION, EPILOG)
    p.add_argument("mask", metavar="MASK", help="built-in spec, .npy/.txt/.csv/.json file, or file.py:mask_mod")
    p.add_argument("--n", type=int, help="size at which to evaluate a file.py:mask_mod")
    p.add_argument("--layers", type=int, metavar="L", help="also report R(L), the dependencies after L layers")
    p.add_argument("--no-residual", action="store_true", help="drop the residual connection (negative control)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--png", metavar="FILE", help="draw the mask beside its Hasse diagram (needs matplotlib)")
    p.add_argument("--dot", metavar="FILE", help="write the Hasse diagram as Graphviz DOT ('-' for stdout)")
    p.add_argument("--strict", action="store_true", help="treat empty rows (queries attending nothing) as an error")
    p.add_argument("--ascii", action="store_true", help="draw the matrix view with ASCII characters only")
    p.set_defaults(run=run)


def run(args) -> int:
    from hasse.masks_in import load

    if args.n is not None and args.n <= 0:
        raise InputError(f"--n must be a positive size, got {args.n}")
    named = load(args.mask, n=args.n)
    if args.layers is not None and args.layers < 0:
        raise InputError(f"--layers must be >= 0, got {args.layers}")
    analysis = mask_to_analysis(named.matrix, residual=not args.no_residual, layers=args.layers, names=named.names)
    if analysis.empty_rows:
        rows = ", ".join(map(str, analysis.empty_rows[:10])) + (" ..." if len(analysis.empty_rows) > 10 else "")
        message = f"{named.spec}: {len(analysis.empty_rows)} empty row(s) (queries attending no key, not even themselves): {rows}"
        if args.strict:
            raise InputError(message.split(": ", 1)[1], named.spec)
        warn(message + "; many kernels return NaN or zeros there")
    if args.dot:
        from hasse.dot import to_dot

        text = to_dot(analysis)
        if args.dot == "-":
            if args.json:
                raise InputError("--dot - and --json both want stdout; write the DOT to a file")
            sys.stdout.write(text)
        else:
            _write(args.dot, text)
    if args.png:
        from hasse.draw_hasse import draw_analysis

        draw_analysis(analysis, args.png, title=named.spec)
    if args.json:
        print_json(analysis_json(analysis))
    elif args.dot != "-":
        print(report(analysis, named.spec, ascii=args.ascii))
        for path, what in ((args.png, "picture"), (args.dot, "DOT")):
            if path and path != "-":
                print(f"{what} written to {path}")
    return 0


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path) from None


def analysis_json(a: MaskAnalysis) -> dict:
    """The JSON object of design.md §7 for ``hasse analyze``."""
    out = {
        "n": a.n,
        "residual": a.residual,
        "convergence_depth": a.convergence_depth,
        "classes": a.classes,
        "hasse_edges": a.hasse_edges,
        "dense": a.dense,
        "height": a.height,
        "empty_rows": a.empty_rows,
        "names": a.names,
    }
    if not a.residual:
        out["period"] = a.period
        out["preperiod"] = a.preperiod
    if a.layers is not None:
        out["layers"] = a.layers
        out["reachability"] = a.reachability
    return out


def report(a: MaskAnalysis, spec: str, *, ascii: bool = False) -> str:
    """Human-readable report."""
    from hasse.render_text import classes_view, hasse_view, matrix_view

    lines = [f"mask {spec}: n = {a.n} positions, {int(a.mask.sum())} allowed (query, key) pairs"]
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

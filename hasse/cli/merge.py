"""``hasse merge FAMILY``: a family's minimal merged task.

The family (:func:`theory.merge.family_to_merged_task`) is read once by
:func:`theory.inputs.read.read`; the merged task's size is checked against the
closed-form formulas of the built-in families, written as a task file (``--out``) or
drawn (``--png``).
"""

from __future__ import annotations

from fractions import Fraction

from hasse.cli.arguments import add_code_timeout_argument, add_trust_code_argument, reading_of
from hasse.cli.parsers import add_command
from hasse.theory.errors import InputError
from hasse.theory.inputs.read import read
from hasse.views.output import ascii_aware, emit_json, json_header, spec_of
from hasse.views.tables import align, capped_rows, cut, cut_items, task_table

MERGE_DESCRIPTION = """\
Merge the tasks of a family into their minimal merged task (design §3): every node
of every task's labelled Hasse diagram (a class with the multiset of its inputs) is
grouped with the nodes whose down-sets are isomorphic to its own; one node per
group is kept, with the representatives' Hasse edges, and the labels of the whole
group are collected on it. The merged task's dense mask lets a position attend
exactly what is below it. It is an ordinary task: `hasse leak` and `hasse analyze`
read the file --out writes.
"""
MERGE_EPILOG = """\
FAMILY is a built-in family (ar:n=N, block:n=N,block=L[,variant=chain|clique],
infill:n=N; see `hasse catalog`) or a JSON file {"tokens": n, "tasks": [task, ...]}.

examples:
  hasse merge ar:n=6                  the causal mask on 5 positions
  hasse merge infill:n=6 --json       Butterfly: 16 positions
  hasse merge block:n=8,block=2 --sparse --png bts.png
  hasse merge my_family.json --out merged.json && hasse leak merged.json

exit status: 0 merged; 2 bad input.
"""

MAX_VIEW = 64
MAX_ROWS = 40


def register(sub) -> None:
    p = add_command(sub, "merge", "minimal merged task of a task family", MERGE_DESCRIPTION, MERGE_EPILOG)
    p.add_argument("family", metavar="FAMILY")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object and nothing else: the merged task as a task file, with the report")
    p.add_argument("--out", metavar="TASK.json",
                   help="also write that JSON object (a task file: hasse leak reads it) to TASK.json")
    p.add_argument("--png", metavar="FILE", help="draw the merged Hasse diagram with inputs and labels (.png, .svg "
                   "or .pdf by the suffix)")
    p.add_argument("--sparse", action="store_true",
                   help="also give the sparse realisation (Hasse edges + a cycle per class) and its depth")
    p.add_argument("--ascii", action="store_true", help="ASCII characters only")
    add_trust_code_argument(p)
    add_code_timeout_argument(p, "building the family and the merge (no limit by default)")
    p.set_defaults(run=ascii_aware(run_merge))


def _formulas(family: str, tasks):
    """(lines, ok) comparing the sympy size formulas with the merged task, for built-in families."""
    from hasse.theory.catalog import parse_spec

    try:
        from hasse.solvers.formulas import evaluate, formula_for_family
    except ImportError:  # sympy missing: the formulas are an extra, not the merge
        return None
    name, raw = parse_spec(family) if ":" in family or family.isidentifier() else ("", {})
    if name not in ("ar", "block", "infill"):
        return None
    try:
        f = formula_for_family(family)
        n = tasks[0].tokens
        values = evaluate(f, n, int(raw["block"]) if "block" in raw else None)
    except (InputError, KeyError, ValueError):
        return None
    return f, values


def run_merge(args) -> int:
    from hasse.theory.merge import family_to_merged_task
    from hasse.theory.order import mask_to_order
    from hasse.theory.sparse import sparse_realisation
    from hasse.theory.inputs.tasks import task_to_dict

    from hasse.theory.deadline import deadline

    with deadline(args.timeout):  # --timeout bounds the family's build and the merge too (design §10)
        tasks = read(args.family, reading_of(args), accept=("family",)).family
        merged = family_to_merged_task(tasks, name=f"merge({args.family})")
    t = merged.task
    formulas = _formulas(args.family, tasks)
    measured = {"positions": t.size, "edges": int(t.mask.sum()),
                "edges_off_diagonal": int(t.mask.sum() - t.mask.diagonal().sum()),
                "supervised": len(t.supervised), "label_density": Fraction(len(t.supervised), t.size)}
    sparse = depth = None
    if args.sparse:
        sparse = sparse_realisation(t.mask)
        depth = mask_to_order(sparse).convergence_depth
    if args.png:
        _draw(merged, args.png, args.family)
    if args.json or args.out:  # one object: a valid task file (task_to_dict) with the report's fields
        out = {
            **json_header("merge", args.family, spec_of(args.family, "family")), **task_to_dict(t),
            "names": list(t.names), "family": args.family, "tasks": len(tasks), "task_nodes": merged.task_nodes,
            "groups": merged.groups, "positions": t.size, "nodes": merged.nodes,
            "node_of_position": merged.node_of_position(), "hasse_edges": merged.hasse_edges(),
            "mapping": [{"task": task.name, "merged_node_of_task_node": list(row)}
                        for task, row in zip(tasks, merged.node_of)],
            "copies": [{"group": g, "nodes": k} for g, k in merged.copies],
            "minimum": merged.minimum,
            "exact_isomorphism_tests": merged.grouping.exact_tests,
        }
        if formulas:
            f, values = formulas
            out["formulas"] = {k: str(getattr(f, k)) for k in measured}
            out["formulas_hold"] = all(values[k] == measured[k] for k in measured)
        if sparse is not None:
            out["sparse"] = {"mask": sparse, "edges": int(sparse.sum()), "convergence_depth": depth}
        if emit_json(args, out):
            return 0
    print(merge_report(args, tasks, merged, formulas, measured, sparse, depth))
    return 0


def merge_report(args, tasks, merged, formulas, measured, sparse, depth) -> str:
    from hasse.views.render_text import matrix_view

    t = merged.task
    lines = [f"family {args.family}: {len(tasks)} tasks, {merged.task_nodes} task nodes "
             f"-> {merged.groups} equivalence groups -> merged task of {merged.nodes} nodes, {t.size} positions",
             f"  ({merged.grouping.exact_tests} exact isomorphism tests; the other comparisons were settled "
             f"by signatures)"]
    if merged.copies:
        lines.append(f"  duplicate copies kept: {len(merged.copies)} group(s) need several nodes because a "
                     f"down-set holds two equivalent nodes: " +
                     cut_items([f"group {g} x{k}" for g, k in merged.copies], 10, ascii=args.ascii))
        lines.append("  copies chosen exactly: no merged task has fewer nodes" if merged.minimum else
                     "  copies: the exact search hit its step budget; the best merge found is shown, and a "
                     "smaller one may exist")
    if formulas:
        from hasse.solvers.formula_text import describe

        f, values = formulas
        described = describe(f)
        lines.append(f"size formulas, {described[0]}, checked against the merged task:")
        rows = []
        for line in described[1:]:
            key = line.split("=", 1)[0].strip()
            got, want = measured.get(key), values.get(key)
            check = "" if got is None else ("ok" if want == got else f"MISMATCH: measured {got}")
            rows.append((line.strip(), "->", want, check))
        lines += align(rows, right=(2,), indent="  ")
    lines.append(f"merged task: {t.size} positions on {t.tokens} tokens, {len(t.supervised)} supervised, "
                 f"{int(t.mask.sum())} attention pairs (dense)")
    if t.size <= MAX_VIEW:
        lines += ["", matrix_view(t.mask, names=t.names, ascii=args.ascii)]
        lines += ["", *task_table(t, "labels")]
    lines += ["", "task node -> merged node (by position names):"]
    node_names = [",".join(t.names[p] for p in ps) for ps in merged.node_members]

    def task_row(task_and_nodes) -> str:
        task, row = task_and_nodes
        pairs = " ".join(f"{a}->{node_names[m]}" for a, m in zip(_task_node_names(task), row))
        return f"  {task.name}: {cut(pairs, 400, ascii=args.ascii)}"

    lines += capped_rows(list(zip(tasks, merged.node_of)), task_row, MAX_ROWS, more="tasks (use --json)")
    if sparse is not None:
        lines += ["", f"sparse realisation: {int(sparse.sum())} attention pairs (Hasse edges, a cycle per class, "
                      f"self), same limit; it needs L* = {depth} layers"]
        if t.size <= MAX_VIEW:
            lines += [matrix_view(sparse, names=t.names, ascii=args.ascii)]
    if args.out:
        lines.append(f"merged task written to {args.out}")
    if args.png:
        lines.append(f"picture written to {args.png}")
    return "\n".join(lines)


def _task_node_names(task) -> list[str]:
    from hasse.theory.labelled import task_to_hasse

    h = task_to_hasse(task)
    return [",".join(task.names[p] for p in ps) for ps in h.members]


def _draw(merged, path: str, family: str) -> None:
    from hasse.views.draw_hasse import draw_analysis
    from hasse.theory.analysis import mask_to_analysis

    t = merged.task
    names = tuple(f"{t.names[p]}: {sym.replace(',', ' ')}@{pid}" + (f" ⇒{' '.join(map(str, t.labels[p]))}" if t.labels[p] else "")
                  for p, (sym, pid) in enumerate(t.inputs))
    draw_analysis(mask_to_analysis(t.mask, names=names), path, title=f"merge({family}): {merged.nodes} nodes")

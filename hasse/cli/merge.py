"""``hasse merge FAMILY`` and ``hasse consistent TRAIN_TASK --inference FAMILY``.

merge: a family's minimal merged task (:func:`theory.merge.family_to_merged_task`), its
size checked against the closed-form formulas of the built-in families, written as a
task file (``--out``) or drawn (``--png``). consistent: training–inference consistency
(:func:`theory.consistency.check_consistency`), each mismatch explained.
"""

from __future__ import annotations

from fractions import Fraction

from hasse.cli.masks_in import add_code_timeout_argument
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header, spec_of
from hasse.cli.parsers import add_command
from hasse.views.tables import align, capped_rows, capped_table, cut, cut_items, task_table
from hasse.theory.errors import InputError

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
    p.add_argument("--trust-code", action="store_true",
                   help="let a .json task whose 'mask' names file.py:function run it (default: refused)")
    add_code_timeout_argument(p, "building the family and the merge (no limit by default)")
    p.set_defaults(run=ascii_aware(run_merge))

    c = add_command(sub, "consistent", "is a training task consistent with an inference procedure?",
                    CONSISTENT_DESCRIPTION, CONSISTENT_EPILOG)
    c.add_argument("train", metavar="TRAIN_TASK", help="built-in task spec or task .json file")
    c.add_argument("--inference", required=True, metavar="FAMILY",
                   help="the inference tasks: a built-in family or a family .json file")
    c.add_argument("--trust-code", action="store_true",
                   help="let a .json task whose 'mask' names file.py:function run it (default: refused)")
    add_code_timeout_argument(c, "reading the tasks and the check (no limit by default)")
    add_json_arguments(c)
    c.set_defaults(run=ascii_aware(run_consistent))


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
    from hasse.theory.inputs.tasks import load_family, task_to_dict

    from hasse.theory.deadline import deadline

    with deadline(args.timeout):  # --timeout bounds the family's build and the merge too (design §10)
        tasks = load_family(args.family, **_trusted(args))
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


def _trusted(args) -> dict:
    """``trust_code`` and the torch ``fallback`` for reading task files (``--trust-code``)."""
    if not getattr(args, "trust_code", False):
        return {}
    from hasse.gpu_check.mask_mod import torch_fallback_or_none

    return {"trust_code": True, "fallback": torch_fallback_or_none()}


def run_consistent(args) -> int:
    from hasse.theory.consistency import check_consistency
    from hasse.theory.inputs.tasks import load_family, load_task

    from hasse.theory.deadline import deadline

    with deadline(args.timeout):  # --timeout bounds the kit's own work too (design §10)
        train = load_task(args.train, **_trusted(args))
        inference = load_family(args.inference, **_trusted(args))
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

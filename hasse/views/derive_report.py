"""The report of `hasse derive` (issue 25): text, JSON and pictures of a :class:`theory.derive.Derivation`.

Called by :mod:`hasse.cli.derive` with the derivation and the command's own results
(minimality checks, proofs for every n, export).
"""

from __future__ import annotations

import os
from fractions import Fraction

MAX_TASKS_SHOWN = 3
MAX_NODES_SHOWN = 24
MAX_VIEW = 48


def _node_lines(h, limit: int, indent: str = "    ") -> list[str]:
    """One line per node of a labelled Hasse diagram: its positions, inputs, labels and covers."""
    names = h.task.names
    lines = []
    for c in range(min(h.size, limit)):
        members = ",".join(names[p] for p in h.members[c])
        inputs = " ".join(f"{s}@{pos}" for s, pos in h.inputs[c])
        targets = sorted({t for p in h.members[c] for t in h.task.labels[p]})
        label = f" => x{',x'.join(map(str, targets))}" if targets else ""
        covers = f" covers {','.join(map(str, h.lower[c]))}" if h.lower[c] else ""
        lines.append(f"{indent}node {c} [{members}]: {inputs}{label}{covers}")
    if h.size > limit:
        lines.append(f"{indent}… {h.size - limit} more nodes (--json has every one)")
    return lines


def _verdict_word(ok: bool) -> str:
    return "ok" if ok else "FAILS"


def derive_text(result, recipe, values, report, code, args) -> str:
    from hasse.theory.labelled import task_to_hasse
    from hasse.views.render_text import matrix_view

    t = result.task
    merged = result.merged
    lines = [f"derive {result.family}: {len(result.tasks)} task{'s' if len(result.tasks) != 1 else ''} on "
             f"n = {t.tokens} tokens ({result.task_positions} positions in all)"]
    lines.append("1. tasks and their Hasse diagrams:")
    for task, h in list(zip(result.tasks, result.diagrams))[:MAX_TASKS_SHOWN]:
        lines.append(f"  {task.name}: {task.size} positions, {h.size} nodes")
        lines += _node_lines(h, 8)
    if len(result.tasks) > MAX_TASKS_SHOWN:
        lines.append(f"  … {len(result.tasks) - MAX_TASKS_SHOWN} more tasks (--json lists them)")
    lines.append(f"2. node equivalence: {merged.task_nodes} task nodes in {merged.groups} groups "
                 f"({merged.grouping.exact_tests} exact isomorphism tests)")
    copies = f"; copies kept for {len(merged.copies)} group(s)" if merged.copies else ""
    lines.append(f"3. merged task: {merged.nodes} nodes, {t.size} positions, {len(t.supervised)} supervised, "
                 f"{int(t.mask.sum())} pairs (dense){copies}"
                 + ("" if merged.minimum else " (the copy search hit its budget: a smaller merge may exist)"))
    lines += _node_lines(task_to_hasse(t), MAX_NODES_SHOWN)
    if t.size <= MAX_VIEW:
        lines += ["", matrix_view(t.mask, names=t.names, ascii=args.ascii), ""]
    lines.append(f"4. verdicts at n = {t.tokens}:")
    leaks = result.leaks
    if leaks.leak_free:
        lines.append("  leaks: none at any depth (ok)")
    else:
        first = leaks.leaks[0] if leaks.leaks else None
        path = " -> ".join(t.names[p] for p in first.path) if first else ""
        lines.append(f"  leaks: {len(leaks.leaks)} (FAILS); first: {t.names[first.position]} predicts x{first.target}"
                     f" and sees it at depth {first.depth}: {path}" if first else
                     f"  isolation: {len(leaks.isolation)} violations (FAILS)")
    lines.append(f"  coverage: {len(leaks.targets)}/{t.tokens} targets, label density "
                 f"{len(t.supervised)}/{t.size}")
    served = result.served
    lines.append(f"  serves the family: {served.checked} supervised task nodes, "
                 + ("each has an equivalent merged node with its label (ok)" if served.consistent else
                    f"{len(served.mismatches)} without one (FAILS)"))
    if result.layout is not None:
        lines.append(f"  layout: {'isomorphic to' if result.layout_same else 'NOT isomorphic to'} "
                     f"{result.layout} ({_verdict_word(bool(result.layout_same))})")
    elif recipe is not None:
        lines.append(f"  layout: no closed form at these values; the merge has {t.size} positions against "
                     f"{result.task_positions} for one sequence per task")
    minimum = report["minimum"]
    if minimum is None:
        lines.append(f"  minimum: not checked ({merged.task_nodes} task nodes; --minimum yes runs the quotient "
                     "search and Z3)")
    else:
        from hasse.solvers.derive_minimum import verdict_of

        lines.append(f"  minimum: {verdict_of(minimum).upper()}: " + "; ".join(f"{c['method']} {c['verdict']} ({c['why']}, {c['seconds']:.2f} s)"
                                              for c in minimum))
    if recipe is not None:
        lines.append("5. for every n:")
        proof = report["proof"]
        if proof is not None and result.layout is None:
            lines.append("  (the layout of one member's values — one masked set, one order, one split — for every n "
                         f"and every such value; the merge above is checked at n = {t.tokens})")
        if proof is None:
            lines.append("  not proved (--no-proof)" if args.no_proof else "  no symbolic form")
        else:
            lines.append(f"  {proof['command']}: {proof['verdict'].upper()}"
                         + (f" ({proof['seconds']} s)" if "seconds" in proof else ""))
            lines.append(f"    {proof.get('statement') or proof.get('reason')}")
        consistent = report.get("consistent")
        if consistent:
            lines.append(f"  {consistent['command']}: {consistent['verdict'].upper()} (decoding by the family's "
                         "tasks)")
            lines.append(f"    {consistent.get('statement') or consistent.get('reason')}")
        if result.comparisons:
            lines.append("  published designs at these values:")
        for c in result.comparisons:
            lines += _comparison_lines(c, t)
        if recipe.finding:
            lines += ["  finding: " + recipe.finding]
    export = report["export"]
    if export:
        lines.append(f"export: {export['format']} written to {export['file']} ({export['positions']} positions)")
        if export["format"] == "flex":
            at = export["at_n"]
            lines.append(f"  the file at n = {t.tokens}: {at['verdict']} to the derived mask"
                         + (f" ({at['differences']} pairs differ)" if at.get("differences") else ""))
            eq = export["equiv"]
            if export.get("table"):
                lines.append(f"  a table of the merged mask, valid at n = {t.tokens} only: the family has no "
                             "formula for other n")
            if eq:
                lines.append(f"  {eq['command']}: {eq['verdict'].upper()}")
                lines.append(f"    {eq.get('statement') or eq.get('reason')}")
            lines.append(f"  task file for real layers: {export['task_file']} ({export['gpu_check']})")
    if args.png:
        drawn = min(args.png_tasks, len(result.tasks))
        lines.append(f"pictures written to {args.png} (merged task)" +
                     (f" and {task_picture(args.png, 1)} … ({drawn} task{'s' if drawn != 1 else ''})" if drawn else ""))
    lines.append("every verdict holds" if code == 0 else "a verdict FAILS" if code == 1 else
                 "a proof is unknown (exit 3)")
    return "\n".join(lines)


def _comparison_lines(c, derived) -> list[str]:
    head = f"    {c.name} — {c.source}"
    if c.task is None:
        return [head, f"      not compared: {c.why_not}"]
    extra = c.pairs - int(derived.mask.sum())
    leak = ("leak-free" if c.leaks.leak_free else
            f"LEAKS: {c.task.names[c.leaks.leaks[0].position]} sees x{c.leaks.leaks[0].target} via "
            + " -> ".join(c.task.names[p] for p in c.leaks.leaks[0].path) if c.leaks.leaks else
            f"{len(c.leaks.isolation)} isolation violations")
    same = "the derived design up to the order of positions" if c.same else "a different design"
    serves = ("" if c.serves is None else
              "; serves every task" if c.serves.consistent else
              f"; {len(c.serves.mismatches)} of {c.serves.checked} supervised task nodes have no equivalent node in it")
    return [head, f"      {c.spec}: {c.positions} positions, {c.pairs} pairs ({extra:+d} against the derived), "
                  f"{leak}; {same}{serves}"]


def derive_json(result, recipe, values, report, code, args) -> dict:
    from hasse.theory.inputs.tasks import task_to_dict
    from hasse.theory.labelled import task_to_hasse
    from hasse.views.output import json_header

    t = result.task
    h = task_to_hasse(t)
    return {
        **json_header("derive", args.family, result.family if recipe is not None else None),
        "family": result.family, "tokens": t.tokens,
        "tasks": [{"name": task.name, "positions": task.size, "nodes": d.size,
                   "hasse_edges": [[lo, up] for up, lows in enumerate(d.lower) for lo in lows]}
                  for task, d in zip(result.tasks, result.diagrams)],
        "task_nodes": result.merged.task_nodes, "groups": result.merged.groups,
        "merged": {**task_to_dict(t), "names": list(t.names), "nodes": result.merged.nodes,
                   "hasse_edges": [list(e) for e in result.merged.hasse_edges()],
                   "copies": [{"group": g, "nodes": k} for g, k in result.merged.copies],
                   "pairs": int(t.mask.sum()), "classes": [list(ps) for ps in h.members]},
        "leak_free": result.leaks.leak_free,
        "leaks": [x.to_json() for x in result.leaks.leaks],
        "coverage": str(result.coverage), "label_density": str(Fraction(len(t.supervised), t.size)),
        "serves_family": {"checked": result.served.checked, "missing": len(result.served.mismatches)},
        "layout": result.layout, "layout_isomorphic": result.layout_same,
        "minimum": report["minimum"], "minimum_verdict": _minimum_verdict(report["minimum"]), "proof": report["proof"], "consistent": report.get("consistent"),
        "published": [{"name": c.name, "source": c.source, "spec": c.spec, "positions": c.positions,
                       "pairs": c.pairs, "same": c.same, "why_not": c.why_not or None,
                       "leak_free": None if c.leaks is None else c.leaks.leak_free,
                       "leaks": [] if c.leaks is None else [x.to_json() for x in c.leaks.leaks],
                       "serves_family": None if c.serves is None else c.serves.consistent}
                      for c in result.comparisons],
        "finding": recipe.finding if recipe is not None else None,
        "export": report["export"], "exit": code,
    }


def task_picture(path: str, i: int) -> str:
    stem, ext = os.path.splitext(path)
    return f"{stem}_task{i}{ext}"


def draw_derivation(result, path: str, tasks: int = MAX_TASKS_SHOWN) -> None:
    """The merged task (mask and Hasse diagram; in the layout's order when it is the layout) to ``path``, the
    first ``tasks`` tasks of the family to ``path_task<i>``."""
    from hasse.theory.analysis import mask_to_analysis
    from hasse.views.draw_hasse import draw_analysis

    def named(task):
        return tuple(f"{task.names[p]}: {sym}@{pid}" + (f" ⇒{','.join(map(str, task.labels[p]))}"
                                                        if task.labels[p] else "")
                     for p, (sym, pid) in enumerate(task.inputs))

    t, order = result.task, ""
    if result.layout_same:  # the same design: drawn in the layout's order of positions, streams together
        t, order = result.layout_task, f", drawn as {result.layout}"
    draw_analysis(mask_to_analysis(t.mask, names=named(t)), path,
                  title=f"derive({result.family}): merged task, {result.merged.nodes} nodes{order}")
    for i, task in enumerate(result.tasks[:tasks], start=1):
        draw_analysis(mask_to_analysis(task.mask, names=named(task)), task_picture(path, i),
                      title=f"task {i} of {len(result.tasks)}: {task.name}")


def _minimum_verdict(checks):
    from hasse.solvers.derive_minimum import verdict_of

    return verdict_of(checks)

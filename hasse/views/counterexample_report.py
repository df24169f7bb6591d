"""What ``hasse counterexample`` prints and writes: the searches' answers, their JSON, the inconsistent nodes."""

from __future__ import annotations

from hasse.theory.counterexample import Counterexample
from hasse.views.leak_report import leak_report
from hasse.views.render_text import path_text
from hasse.views.tables import task_table


def skipped_lines(found: Counterexample) -> list[str]:
    """One line naming the sizes at which the design does not exist (none when it exists at every size)."""
    if not found.skipped:
        return []
    return [f"skipped {len(found.skipped)} size(s) where the design does not exist, e.g. "
            f"n = {found.skipped[0][0]}: {found.skipped[0][1]}"]


def task_lines(t) -> list[str]:
    """The counterexample's positions: name, input, position id and label, between blank lines."""
    return ["", *task_table(t), ""]


def method_json(r: Counterexample) -> dict:
    """One search's answer in ``methods`` of ``--method``/``--inference`` JSON."""
    out = {"method": r.method, "tokens": r.n, "property": r.property, "where": r.where,
           "checked": list(r.checked), "seconds": round(r.seconds, 4)}
    if r.witness is not None:
        out["witness"] = r.witness
    if r.unknown:
        out["unknown"] = r.unknown
    if r.method == "z3":
        out["solver_calls"] = r.solver_calls
    return out


def mismatch_json(m) -> dict:
    return {"inference_task": m.task, "position": m.position, "input": list(m.input), "target": m.target,
            "extra_upstream": [list(x) for x in m.extra_upstream],
            "missing_upstream": [list(x) for x in m.missing_upstream]}


def methods_json(header: dict, method: str, layers: int | None, inference: str | None, results, loud) -> dict:
    """The JSON of ``--method``/``--inference``: the first search's answer (a task file when one was found), each
    search's answer, whether they agree and the mismatches of an inconsistency."""
    main = results[0]
    out = {**header, "method": method, "layers": layers, **main.to_json(),
           "methods": [method_json(r) for r in results]}
    if inference:
        out["inference"] = inference
    if len(results) == 2:
        out["agree"] = loud is None
    if main.task is not None and main.property == "inconsistency":
        out["mismatches"] = [mismatch_json(m) for m in main.mismatches] or [main.witness]
    return out


def methods_lines(design: str, max_n: int, inference: str | None, results, loud, *, ascii: bool = False) -> list[str]:
    """The report of ``--method``/``--inference``: each search's answer, then the counterexample whole."""
    main = results[0]
    lines = []
    for r in results:
        head = f"[{r.method}] {design}: "
        if r.unknown:
            lines.append(head + f"inconclusive ({r.unknown})")
        elif r.n is None:
            also = " and no inconsistency" if inference else ""
            lines.append(head + f"no leak or isolation violation{also} for any n up to {max_n} "
                                f"(checked {len(r.checked)} sizes)")
        else:
            w = r.witness or {}
            detail = (f", path {path_text(w['path'], r.task.names, ascii)} at depth {w['depth']}"
                      if "path" in w else f", inference task {w.get('inference_task')} position {w.get('position')}")
            lines.append(head + f"smallest counterexample at n = {r.n} ({r.property}, {r.where}{detail})"
                         + (f"; {r.solver_calls} solver calls" if r.method == "z3" else "") + f" in {r.seconds:.2f} s")
    if len(results) == 2 and loud is None:
        lines.append("direct and z3 agree")
    if main.n is None:
        return lines + skipped_lines(main)
    t = main.task
    lines += task_lines(t)
    if main.property != "inconsistency":
        return lines + [leak_report(t, main.leak_report(), ascii=ascii)]
    lines.append(f"task {t.name or '(unnamed)'} is inconsistent with inference by {inference} at n = {main.n}:")
    for m in main.mismatches or ():
        lines.append(f"  inference task {m.task}, position {m.position} ({m.input[0]}@{m.input[1]} -> {m.target}): "
                     f"no equivalent training node; the closest sees extra {list(m.extra_upstream)}, "
                     f"misses {list(m.missing_upstream)}")
    if not main.mismatches:
        w = main.witness
        lines.append(f"  inference task {w['inference_task']}, position {w['position']} ({w['input'][0]}@"
                     f"{w['input'][1]} -> {w['target']}): Z3 finds no injective cover-exact map of its down-set into "
                     f"the training task with that label at the image of the position (unsat)")
    return lines

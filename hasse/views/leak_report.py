"""The reports and JSON of ``hasse leak`` and ``hasse flow`` (and the counterexample's leak report).

One report for one mask and for a stack: a mask is the one-layer stack repeated, so
``stack=None`` (with its ``flow`` None) reads depths as hop counts and verdicts as
:func:`~hasse.views.render_text.depth_phrase` says them; a stack (``--stack``, a
preset) adds its line (:func:`~hasse.views.stack_report.stack_lines`), names the layer
of each violation and of each hop, and says whether the repeated stack leaks in the limit.
"""

from __future__ import annotations

from hasse.theory.leak import LeakReport
from hasse.views.render_text import depth_phrase, path_text, position_text, stack_where
from hasse.views.stack_report import stack_json, stack_lines
from hasse.views.tables import capped_table

TABLE_ROWS = 40


def beyond(found, within) -> list:
    """The items of ``found`` not in its sub-sequence ``within``, by identity (linear, not pairwise)."""
    inside = {id(f) for f in within}
    return [f for f in found if id(f) not in inside]


def _where(layers: int | None, stack, first: int | None = None) -> str:
    return depth_phrase(layers, first) if stack is None else stack_where(layers, stack.depth, first)


def limit_line(found_in_limit, what: str = "LEAK") -> str:
    """What the repeated stack does in the limit: clean, or ``what`` with its first layer."""
    if not found_in_limit:
        return "in the limit of the repeated stack: clean at every depth"
    return f"in the limit of the repeated stack: {what} (first at layer {min(x.depth for x in found_in_limit)})"


def violation_table(found, names, column: str | None, stack, ascii: bool, path_head: str = "path (source first)"):
    """One row per violation: position, its ``column`` (target, source), depth or layer, the witness path."""
    def row(x):
        cells = (position_text(x.position, names),) + ((getattr(x, column),) if column else ())
        return cells + (x.depth, path_text(x.path, names, ascii, None if stack is None else x.hop_layers))

    header = ("position",) + ((column,) if column else ()) + (
        ("depth", path_head) if stack is None else ("layer", "path (source first, each hop's layer)"))
    return capped_table(found, row, TABLE_ROWS, header=header, right=(1, 2) if column else (1,), ascii=ascii)


def leak_report(task, report: LeakReport, stack=None, flow=None, *, ascii: bool = False) -> str:
    """The human report of ``hasse leak``: the task, the verdict, each violation with its witness."""
    from hasse.views.render_text import matrix_view

    names = task.names
    lines = [f"task {task.name or '(unnamed)'}: {task.size} positions on a sample of {task.tokens} tokens",
             *(stack_lines(stack, flow) if stack is not None else ()),
             f"supervised positions: {len(report.supervised)} (label density {report.label_density:.0%}); "
             f"distinct targets: {len(report.targets)} of {task.tokens} (target coverage {report.target_coverage:.0%})"]
    leaks, iso = report.leaks_within(), report.isolation_within()
    if not leaks and not iso:
        lines.append(f"verdict: LEAK-FREE {_where(report.layers, stack)}"
                     + (f" ({len(task.isolate)} isolate groups respected)" if task.isolate else ""))
    else:
        first = min(x.depth for x in (leaks or iso))
        lines.append(f"verdict: {'LEAK' if leaks else 'ISOLATION VIOLATED'} {_where(report.layers, stack, first)}")
    if stack is not None:
        lines.append(limit_line((*report.leaks, *report.isolation), "LEAK" if report.leaks else "ISOLATION VIOLATED"))
    if report.empty_rows:
        lines.append(report.empty_row_report.describe(names=names))
    if report.key_only and stack is None:
        from hasse.views.render_text import key_only_line

        lines.append(key_only_line(report.key_only, report.key_only_kind))
    deeper = len(report.leaks) - len(leaks) + len(report.isolation) - len(iso)
    if deeper:
        first = min(x.depth for x in (*report.leaks, *report.isolation) if x.depth > (report.layers or 0))
        lines.append(f"note: {deeper} more violation(s) appear at greater depth (first at depth {first}); "
                     f"a deeper model would leak" if stack is None else
                     f"note: {deeper} more violation(s) appear with more layers (first at layer {first}); "
                     f"a deeper model (the stack repeated) would leak")
    for title, found, column, path_head in ((f"leaks ({len(leaks)}):", leaks, "target", "path (source first)"),
                                            (f"isolation violations ({len(iso)}):", iso, "source", "path")):
        if found:
            lines += ["", title, *violation_table(found, names, column, stack, ascii, path_head)]
    first = (leaks or iso or [None])[0]
    if stack is None and first is not None and task.size <= 64:
        cells = {(b, a) for a, b in zip(first.path, first.path[1:])} or {(first.position, first.position)}
        lines += ["", "mask with the first witness path marked (row = query, column = key):",
                  matrix_view(task.mask, names=names, highlight=cells, ascii=ascii)]
    return "\n".join(lines)


def verdict_line(task, report: LeakReport) -> str:
    """One line: the task and its verdict (the title of ``--png``)."""
    leaks, iso = report.leaks_within(), report.isolation_within()
    if not leaks and not iso:
        return f"{task.name}: leak-free {depth_phrase(report.layers)}"
    parts = []
    if leaks:
        parts.append(f"{len(leaks)} leak(s), first at depth {min(x.depth for x in leaks)}")
    if iso:
        parts.append(f"{len(iso)} isolation violation(s), first at depth {min(x.depth for x in iso)}")
    return f"{task.name}: " + "; ".join(parts)


def leak_json(task, report: LeakReport, stack=None, flow=None) -> dict:
    """The fields of ``hasse leak --json`` after the header (with a stack: ``stack`` and the limit's verdict)."""
    within = report.leaks_within()
    out = {
        "task": task.name,
        "leak_free": report.leak_free,
        "layers": report.layers,
        "leaks": [x.to_json() for x in within],
        "leaks_beyond_layers": [x.to_json() for x in beyond(report.leaks, within)],
        "isolation": [x.to_json() for x in report.isolation_within()],
        "supervised": report.supervised,
        "target_coverage": report.target_coverage,
        "label_density": report.label_density,
        "empty_rows": report.empty_row_report.to_json(),
        "key_only": report.key_only_json,
        "positions": task.size,
        "tokens": task.tokens,
    }
    if stack is not None:
        out.update(stack=stack_json(stack, flow), leak_free_in_limit=not (report.leaks or report.isolation))
    return out


def flow_json(named, layer, sources: list[int], sinks: list[int], layers: int | None, found, flows, within) -> dict:
    """One answer of ``hasse flow --json``: the task a flow question encodes (``hasse leak`` reads it) and the
    flows (:func:`theory.stack_leak.flow_task` written by :func:`theory.inputs.tasks.task_to_dict`)."""
    from hasse.theory.inputs.tasks import task_to_dict
    from hasse.theory.leak import key_only_json
    from hasse.theory.stack_leak import flow_task
    from hasse.views.output import spec_of

    task = flow_task(named, layer, sources, sinks)
    out = task_to_dict(task)
    spec = spec_of(named.spec)
    if spec is not None and named.matrix.shape == task.mask.shape and (named.matrix == task.mask).all():
        out["mask"] = spec  # the built-in spec itself, not n^2 rows (a task file's mask may be a spec)
    return {**out, "positions": task.size, "layers": layers, "from": sources, "to": sinks, "flow_free": not within,
            "flows": [f.to_json() for f in within], "flows_beyond_layers": [f.to_json() for f in beyond(flows, within)],
            "empty_rows": found.to_json(), "key_only": key_only_json(named.key_only, named.key_only_kind)}


def flow_lines(head: str, names, layers: int | None, found, flows, within, stack, *, ascii: bool) -> list[str]:
    """The report of one answer of ``hasse flow`` (``head``: the mask and batch row, empty for a stack)."""
    prefix = f"{head}: " if head else ""
    lines = [prefix + found.describe(names=names)] if found.rows else []
    if not within:
        lines.append(f"{prefix}no position of --to depends on --from {_where(layers, stack)}")
    else:
        lines.append(f"{prefix}{len(within)} position(s) of --to depend on --from "
                     f"{_where(layers, stack, min(f.depth for f in within))}")
        lines += violation_table(within, names, None, stack, ascii)
    if stack is not None:
        lines.append(limit_line(flows, "FLOW"))
    elif len(flows) > len(within):
        deeper = min(f.depth for f in beyond(flows, within))
        lines.append(f"note: {len(flows) - len(within)} more appear at greater depth (first at depth {deeper})")
    return lines

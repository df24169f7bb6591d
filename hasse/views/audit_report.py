"""``hasse audit``: the report, the JSON object and the picture of an audit (design.md §9).

:func:`audit_json` and :func:`audit_report` read an :class:`~gpu_check.audit.report.Audit`
(the model and its layer pattern, the scenario, per backend the predicted and measured
pairs and the findings grouped by document and layer) and the backends' differences
(``--compare``); :func:`draw_audit` puts the predicted ``R(L)`` beside each backend's
measured dependencies.
"""

from __future__ import annotations

import math

from hasse.views.tables import capped_rows

TABLE_ROWS = 12


def _number(x: float):
    return None if math.isnan(x) else round(float(x), 4)


def _pairs(pairs) -> list:
    return [list(map(int, p)) for p in pairs]


def audit_json(result, differences) -> dict:
    """The JSON object of ``hasse audit`` (less the header and ``passed``)."""
    s = result.scenario
    return {
        "model": result.model,
        "config_class": result.config_class,
        "layers": result.layers,
        "pattern": [{"kind": kind, "size": size} for kind, size in result.pattern],
        "encoder": result.encoder,
        "scenario": {
            "name": s.name, "positions": s.n, "documents": s.docs.tolist(),
            "position_ids": None if s.position_ids is None else s.position_ids.tolist(),
            "attention_mask": None if s.attention_mask is None else s.attention_mask.tolist(),
            "mask4d": None if s.mask4d is None else s.mask4d.astype(int).tolist(),
            "perm_mask": s.perm_mask is not None,
            "excluded_rows": [int(q) for q in range(s.n) if not s.real[q]],
        },
        "seeds": result.seeds,
        "use_cache": result.use_cache,
        "versions": result.versions,
        "device": "cpu",
        "backends": [{
            "backend": b.backend, "dtype": b.dtype, "method": b.method, "clean": b.clean,
            "predicted_pairs": int(b.predicted[-1][s.real].sum()),
            "measured_pairs": int(b.measured[-1][s.real].sum()),
            "noise_rule": "exact" if b.thresholds is None else "measured", "detection_limit": b.detection_limit,
            "unexpected": _pairs(b.unexpected), "missing": _pairs(b.missing), "cancelled": b.cancelled,
            "groups": [g.to_json() for g in b.groups], "seconds": _number(b.seconds),
            "operators": [f.to_json() for f in b.operators],
        } for b in result.backends],
        "skipped": [{"backend": name, "reason": why} for name, why in result.skipped],
        "intended": result.intended,
        "fixed_weights": result.fixed_weights,
        "notes": list(result.notes),
        "vacuous": list(result.vacuous),
        "differences": None if differences is None else [{
            "first": d.first, "second": d.second, "only_first": _pairs(d.only_first),
            "only_second": _pairs(d.only_second)} for d in differences],
    }


WHAT = {"contamination": "contamination", "future": "future-token leak", "pad_key": "pad key attended",
        "window": "outside the intended window/chunk", "nan": "NaN gradient", "missing": "missing"}


def _doc(d: int) -> str:
    return "pad" if d < 0 else f"doc {d}"


def _scenario_line(s) -> str:
    said = {"plain": "one sequence, no mask",
            "packed": "position_ids restart per document, no attention_mask",
            "packed_mask": "position_ids restart per document, 2-D attention_mask of ones",
            "left_pad": "left padding, 2-D attention_mask", "right_pad": "right padding, 2-D attention_mask",
            "mask4d": "a custom 4-D boolean attention_mask", "perm": "XLNet perm_mask of the causal order",
            "batch": "your batch"}.get(s.name, s.name)
    docs = [int((s.docs == d).sum()) for d in range(int(s.docs.max()) + 1)] if s.real.any() else []
    extra = f", documents {'+'.join(map(str, docs))}" if len(docs) > 1 else ""
    return f"scenario {s.name} ({s.n} positions{extra}; {said})"


def _operator_lines(b, layout) -> list[str]:
    """Each token-mixing operator's own flow: documents isolated or crossed (MLPs only when they cross).

    Only for a row of several documents or with padding (one document has nothing to isolate).
    """
    flows = [f for f in b.operators if f.op.mixes or f.isolated is False]
    if not flows or len(set(layout.docs.tolist())) < 2:
        return []
    if b.method == "perturbation":
        return [f"    operators: {len(flows)} token mixer(s); their own flow is not measured by perturbation"]
    rows = []
    for f in flows:
        width = f" width {f.op.width}" if f.op.width else ""
        state = ("never called as a module (its weights are used through a function)" if not f.called
                 else "not measured" if f.isolated is None else "documents isolated" if f.isolated
                 else f"CROSSES documents ({f.crossing} pair(s))")
        told = f"; introduced {f.introduced} unexpected pair(s)" if f.introduced else ""
        rows.append(f"      layer {f.op.layer + 1}  {f.op.path} ({f.op.class_name}, {f.op.kind}{width}): "
                    f"{state}{told}")
    return ["    operators (each one's output against its own input):"] + capped_rows(
        rows, lambda r: r, TABLE_ROWS, indent="      ")


def audit_report(result, differences, verdict: str) -> str:
    """The human report of ``hasse audit``."""
    from hasse.gpu_check.audit.report import describe_pattern

    s = result.scenario
    excluded = [q for q in range(s.n) if not s.real[q]]
    cache = {None: "use_cache as the model's default", False: "use_cache=False"}[result.use_cache]
    lines = [
        f"audit {result.model} ({result.config_class}, {result.layers} layer(s): {describe_pattern(result)})",
        _scenario_line(s),
        f"transformers {result.versions['transformers']}, torch {result.versions['torch']}; CPU; "
        f"{result.seeds} seed(s); {cache}",
        "intended: " + (f"{result.intended}, inside the documents, padding keys never attended" if result.intended
                        else "the given 4-D mask" if s.mask4d is not None else "the perm_mask order" if s.perm_mask
                        is not None else "documents isolated, " + ("bidirectional" if result.encoder else "causal")
                        + ", the layer pattern, padding keys never attended"),
    ]
    lines += [f"note: {note}" for note in result.notes]
    lines += [f"not exercised: {note}" for note in result.vacuous]
    if excluded:
        lines.append(f"padding query rows {excluded[0]}..{excluded[-1]} are excluded from the comparison")
    shown_table, shown_by = None, None
    for b in result.backends:
        noise = "" if b.thresholds is None else f" (above the noise: {b.detection_limit:.3g})"
        head = (f"  {b.backend:<15} {b.dtype}, {b.method:<12} predicted {int(b.predicted[-1][s.real].sum())} pairs, "
                f"measured {int(b.measured[-1][s.real].sum())}{noise}: ")
        table = _operator_lines(b, s)
        if table and table == shown_table:
            table = [f"    operators: the same as {shown_by}"]
        elif table:
            shown_table, shown_by = table, b.backend
        if b.clean:
            lines.append(head + "as intended" + (f" ({b.cancelled} zero in some seeds only)" if b.cancelled else ""))
            lines += table
            continue
        lines.append(head + f"{len(b.unexpected)} UNEXPECTED, {len(b.missing)} missing")
        for g in b.groups:
            when = "first measured at" if g.kind != "missing" else "predicted from"
            shown = ", ".join(f"{k}->{q}" for q, k in g.pairs[:6]) + (" …" if len(g.pairs) > 6 else "")
            through = (f", through {g.operator}" if g.operator else
                       " (carried there by the intended flow from an earlier finding)" if g.carried else "")
            lines.append(f"    {WHAT[g.kind]}: {_doc(g.source_doc)} -> {_doc(g.dest_doc)}, {when} layer {g.layer}"
                         f"{through}: {len(g.pairs)} pair(s) (k->q: {shown})")
        lines += table
    for name, why in result.skipped:
        lines.append(f"  {name:<15} not run here: {why[:160]}")
    if differences is not None:
        for d in differences:
            if d.same:
                lines.append(f"compare {d.first} vs {d.second}: the same dependencies")
                continue
            lines.append(f"compare {d.first} vs {d.second}: DIFFER on {len(d.only_first) + len(d.only_second)} pair(s)")
            for title, pairs in ((f"only in {d.first}", d.only_first), (f"only in {d.second}", d.only_second)):
                if pairs:
                    lines.append(f"  {title}:")
                    lines += capped_rows(pairs, lambda p, d=d: f"    {p[1]} -> {p[0]} (layer {d.layers[p]})",
                                         TABLE_ROWS, indent="    ")
    lines.append("verdict: " + verdict)
    return "\n".join(lines)


def draw_audit(result, path: str) -> None:
    """Predicted R(L) beside the measured dependencies of each backend (missing pairs light)."""
    from hasse.views.draw_mask import heatmap
    from hasse.views.figure import new_figure, picture_format, require_matplotlib, save_png

    picture_format(path)
    require_matplotlib()
    s = result.scenario
    names = [("p" if not s.real[i] else "") + str(i) for i in range(s.n)]
    predicted = result.backends[0].predicted[-1].copy()
    predicted[~s.real] = False  # padding rows (names p0, p1, …) are not compared
    panels = [(f"predicted R({result.layers})", predicted, None)]
    for b in result.backends:
        measured = b.measured[-1].copy()
        measured[~s.real] = False
        panels.append((f"measured, {b.backend}: {len(b.unexpected)} unexpected, {len(b.missing)} missing",
                       measured, predicted))
    side, width, height = 3.2, 3.2 * len(panels) + 0.6, 3.2 + 0.5
    fig = new_figure(width, height)
    for i, (title, mask, reach) in enumerate(panels):
        ax = fig.add_axes(((0.3 + i * side + 0.45) / width, 0.5 / height, (side - 0.7) / width, (side - 0.7) / height))
        heatmap(ax, mask, names, reach=reach, title=title, fontsize=6.0)
    save_png(fig, path)

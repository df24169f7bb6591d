"""``hasse gpu-check``: the report and the JSON object of one check (design.md §7, §9).

:func:`gpu_check_json` and :func:`gpu_check_report` read a :class:`~gpu_check.check.GpuCheck`:
the backend, the noise measured and the rule that decided (:func:`noise_line`), the empty
rows a kernel was probed on, the layers the blocks ran (a stack's, said by
:func:`hasse.views.stack_report.stack_lines`), the observed pattern against ``R(L)``, and for
a task its leak and isolation gradients beside the leaks theory names. The ``stack`` field
is :func:`hasse.views.stack_report.stack_json`, as every command that runs a stack writes it.
"""

from __future__ import annotations

import math

from hasse.theory.stack import propagate
from hasse.views.stack_report import stack_json, stack_lines
from hasse.views.tables import capped_rows, cut_items

TABLE_ROWS = 20


def _number(x: float):
    """A JSON-safe float: NaN (a kernel produced NaN) becomes null."""
    return None if math.isnan(x) else x


def gpu_check_json(result, subject: str) -> dict:
    """The JSON object of ``hasse gpu-check`` (design.md §7 fields and a few more)."""
    r = result.report
    leak = None if result.leak_gradients is None else [
        {"position": g.position, "targets": list(g.targets), "max_norm": _number(g.max_norm),
         "gradients": [{"source": s.source, "target": s.target, "norm": _number(s.norm),
                        "path_exists": s.path_exists, "dependent": s.dependent} for s in g.gradients]}
        for g in result.leak_gradients]
    isolation = None if result.isolation_gradients is None else [
        {"position": x.position, "source": x.source, "norm": _number(x.norm), "path_exists": x.path_exists}
        for x in result.isolation_gradients]
    theory_leaks = None if result.theory_leaks is None else [x.to_json() for x in result.theory_leaks]
    return {
        "subject": subject,
        "kind": result.kind,
        "positions": int(r.theory.shape[0]),
        "backend": r.backend,
        "device": r.device,
        "dtype": r.dtype,
        "layers": r.layers,
        "method": r.method,
        "batching": r.batching,
        "seeds": int(r.norms.shape[0]),
        "agrees": r.agrees,
        "unexpected": [list(p) for p in r.unexpected],
        "missing": [list(p) for p in r.missing],
        "cancelled": r.cancelled,
        "noise": r.noise_json(),
        "reachable_pairs": int(r.theory.sum()),
        "leak_gradients": leak,
        "isolation_gradients": isolation,
        "theory_leaks": theory_leaks,
        "gradients_match_theory": result.gradients_match_theory if result.kind == "task" else None,
        "passed": result.passed,
        "seconds": round(r.seconds, 4),
        "empty_rows": None if result.empty_rows is None else result.empty_rows.to_json(),
        **({} if result.stack is None else {"stack": stack_json(result.stack, propagate(result.stack))}),
    }


def _pair(q: int, k: int, names) -> str:
    def one(v):
        return str(v) if names[v] == str(v) else f"{names[v]}({v})"

    return f"{one(k)} -> {one(q)}"


def noise_line(r) -> str:
    """The report's line on the noise measured and the rule that decided (gpu_check/dependency.py)."""
    if r.thresholds is None:
        return "noise: none (a vector-Jacobian product is exactly zero where no path exists): any nonzero counts"
    n = r.noise_json()
    if n["largest"] == 0:
        return ("noise: the forward twice and with a zero perturbation gave bit-identical outputs: any nonzero "
                "change counts")
    worst = int(r.noise.max(axis=0).argmax())
    return (f"noise: the forward twice and with a zero perturbation differ by up to {n['largest']:.3g} (output "
            f"{worst}; {n['relative']:.3g} relative): a change counts above {n['margin']:g} x max(noise_q, "
            f"{n['relative']:.3g} x |out_q|), detection limit {n['detection_limit']:.3g}")


def gpu_check_report(result, subject: str, names) -> str:
    """The human report of ``hasse gpu-check``."""
    r = result.report
    t = r.theory.shape[0]
    how = {"vmap": "vector-Jacobian products batched by vmap", "replicate": "vector-Jacobian products batched "
           "in the batch dimension", "loop": "one vector-Jacobian product per output position",
           None: "forward perturbations (no backward here)"}
    lines = [
        f"gpu-check {subject} ({result.kind}, {t} positions): backend {r.backend} on {r.device}, {r.dtype}, "
        f"L = {r.layers}, {r.norms.shape[0]} seed(s), {how[r.batching]}",
    ]
    reach = int(r.theory.sum())
    lines.append(noise_line(r))
    if result.empty_rows is not None:
        e = result.empty_rows
        said = {"nan": "NaN (the model's outputs are NaN from there on: the check fails)",
                "zeros": "zeros (the query keeps its residual only): checked as --empty-rows attend-none",
                "attend-all": "attention over every key: checked as --empty-rows attend-all",
                "other": "neither NaN, zeros nor attention over every key: the check fails"}[e.behaviour]
        shown = cut_items(e.rows, 10, show=lambda q: str(q) if names[q] == str(q) else f"{names[q]}({q})")
        lines.append(f"empty rows {shown}: backend {e.backend} on {e.device} gives {said}")
    if result.stack is not None:
        lines += stack_lines(result.stack, blocks=r.layers, limit=TABLE_ROWS)
    zero = "exactly zero" if r.detection_limit == 0 else "within the noise"
    if r.agrees:
        lines.append(f"dependency pattern: observed == R({r.layers}) on all {t * t} pairs "
                     f"({reach} reachable, {t * t - reach} {zero}"
                     + (f"; {r.cancelled} zero in some seeds only" if r.cancelled else "") + ")")
    else:
        lines.append(f"dependency pattern DIFFERS from R({r.layers}): {len(r.unexpected)} unexpected, "
                     f"{len(r.missing)} missing")
        largest = r.norms.max(axis=0)
        above = "nonzero" if r.detection_limit == 0 else "above the noise"
        for title, pairs in ((f"unexpected ({above} where no path exists)", r.unexpected),
                             (f"missing (a path exists, not {above} in any seed)", r.missing)):
            if pairs:
                lines.append(f"  {title}:")
                lines += capped_rows(pairs, lambda qk: f"    {_pair(*qk, names):<24} norm {largest[qk[0], qk[1]]:.3g}",
                                     TABLE_ROWS, indent="    ")
    if result.leak_gradients is not None:
        grads = result.leak_gradients
        leaking = [g for g in grads if g.leaks]
        if not leaking:
            lines.append(f"leak gradients: all {len(grads)} supervised position(s) {zero} with respect to "
                         "every input holding their target")
        else:
            lines.append(f"leak gradients: NONZERO at {len(leaking)} of {len(grads)} supervised position(s)")
            lines.append(f"  {'position':<12} {'target':>6} {'source':<12} {'norm':>9}")
            rows = [(g, s) for g in leaking for s in g.gradients if s.dependent]

            def row(pair) -> str:
                g, s = pair
                return (f"  {names[g.position] + f' ({g.position})':<12} {s.target:>6} "
                        f"{names[s.source] + f' ({s.source})':<12} {s.norm:>9.3g}")

            lines += capped_rows(rows, row, TABLE_ROWS)
        named = {(x.position, x.source) for x in result.theory_leaks}
        seen = {(g.position, s.source) for g in grads for s in g.gradients if s.dependent}
        agree = named <= seen and result.gradients_match_theory
        where = f"theory (hasse leak{' --stack SPEC' if result.stack is not None else ''} --layers {r.layers})"
        if not agree:
            lines.append(f"{where}: {len(named)} leak(s); the gradients DISAGREE with it")
        elif not named:
            lines.append(f"{where}: leak-free, as the gradients show")
        else:
            lines.append(f"{where}: {len(named)} leak(s); gradients are nonzero at every witness source it names, "
                         "and only where a path exists")
        if result.isolation_gradients:
            lines.append(f"isolation: {len(result.isolation_gradients)} nonzero dependencies between isolate "
                         "groups (packed documents read each other)")
    if result.passed:
        verdict = "PASS"
    elif r.unexpected:
        verdict = "FAIL: the implementation leaks (dependencies where no path exists)"
    elif r.missing:
        verdict = "FAIL: dependencies missing in every seed"
    elif any(g.leaks for g in result.leak_gradients or ()):
        verdict = "FAIL: the design leaks (theory and gradients agree)"
    else:
        verdict = "FAIL: the design breaks isolation (theory and gradients agree)"
    lines.append(f"verdict: {verdict} ({r.seconds:.2f} s)")
    return "\n".join(lines)

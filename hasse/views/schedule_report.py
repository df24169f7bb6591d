"""The report of a schedule audit (decode, chunked prefill, prefix caching against one full forward): text and JSON.

:func:`schedule_json` and :func:`schedule_lines` read a
:class:`~gpu_check.audit.schedules.ScheduleAudit`: what ran (the schedule, its steps,
the states compared), the stated value tolerance and the largest difference, and
per seed and output position each mismatch with the first step at which it appears.
"""

from __future__ import annotations

import math

from hasse.views.tables import capped_rows

TABLE_ROWS = 12


def _number(x: float):
    return None if math.isnan(x) else (float(x) if math.isinf(x) else float(f"{x:.6g}"))


def _steps_text(steps) -> str:
    """``[0,4) [4,5) …`` (at most 8 steps shown).

    >>> _steps_text([(0, 4), (4, 5), (5, 6)])
    '[0,4) [4,5) [5,6)'
    """
    shown = " ".join(f"[{a},{b})" for a, b in steps[:8])
    return shown + (f" … {len(steps) - 8} more" if len(steps) > 8 else "")


def what_ran(result) -> str:
    """One line: the schedule and its sizes."""
    if result.schedule == "decode":
        how = f"a prefix of {result.prefix} through the cache, then one position per step"
    elif result.schedule == "chunked_prefill":
        how = f"chunks of {result.step} through the cache"
    else:
        how = (f"a prefix of {result.prefix} stored (deep-copied), the rest resumed twice from fresh copies "
               "(steps 1 and 2)")
    return f"{result.schedule}: {how}; {len(result.steps)} steps over {result.n} positions"


def schedule_json(result) -> dict:
    """The JSON object of a schedule audit."""
    return {
        "model": result.name,
        "schedule": result.schedule,
        "positions": result.n,
        "prefix": result.prefix,
        "step": result.step,
        "steps": [list(map(int, s)) for s in result.steps],
        "step_of_position": result.step_of.tolist(),
        "seeds": result.seeds,
        "dtype": result.dtype,
        "states": list(result.states),
        "reference": "one full forward (use_cache=False) of the same inputs_embeds",
        "clean": result.clean,
        "planted": result.planted,
        "values": {
            "rule": "measured",
            "noise": "a shape change without a cache: output q of the full forward vs of x[:, :q+1], and "
                     "the full forward twice",
            "shape_noise": _number(result.shape_noise),
            "relative_noise": _number(result.relative_noise),
            "tolerance": _number(float(result.tolerance.max(initial=0.0))),
            "max_difference": _number(result.max_difference),
        },
        "dependency": {"method": "perturbation", "detection_limit": _number(result.detection_limit)},
        "first_step": result.first_step,
        "mismatched_positions": list(result.positions),
        "mismatches": [{
            "seed": m.seed, "position": m.position, "step": m.step, "steps": list(m.steps), "state": m.state,
            "value": m.value, "difference": _number(m.difference), "tolerance": _number(m.tolerance),
            "extra_inputs": list(m.extra), "lost_inputs": list(m.lost)} for m in result.mismatches],
        "notes": list(result.notes),
    }


def _keys(keys) -> str:
    shown = ",".join(map(str, keys[:6]))
    return shown + ("…" if len(keys) > 6 else "")


def schedule_lines(result) -> list[str]:
    """The text report: the verdict line first, then what ran, the tolerance and the mismatches (12 rows at most)."""
    worst = result.max_difference
    tolerance = float(result.tolerance.max(initial=0.0))
    if result.clean:
        lines = [f"{result.name}: {result.schedule} MATCHES the full forward at every position "
                 f"({result.seeds} seed(s); largest difference {worst:.3g}, tolerance up to {tolerance:.3g})"]
    else:
        flows = any(m.extra or m.lost for m in result.mismatches)
        which = ("the dependencies differ" if flows else
                 "values only: every output depends on the same inputs (a different computation, not a lost input)")
        lines = [f"{result.name}: {result.schedule} DIFFERS from the full forward at {len(result.positions)} of "
                 f"{result.n} positions, first at step {result.first_step} (largest difference {worst:.3g}, "
                 f"tolerance up to {tolerance:.3g}); {which}"]
    lines.append(f"  ran: {what_ran(result)}: {_steps_text(result.steps)}; {result.dtype}; "
                 f"states: {', '.join(result.states)}")
    from hasse.gpu_check.dependency import NOISE_MARGIN  # here: importing the view never imports torch

    lines.append(f"  values: within {NOISE_MARGIN:g} x the measured noise of a shape change without a cache "
                 f"(largest {result.shape_noise:.3g}, relative {result.relative_noise:.3g}); dependencies by "
                 f"perturbation, detection limit {result.detection_limit:.3g}")
    if result.planted:
        lines.append(f"  planted: {result.planted}")
    lines += [f"  note: {note}" for note in result.notes]
    if result.mismatches:
        def row(m) -> str:
            return (f"    seed {m.seed} position {m.position:>3}: step {m.step}"
                    + (f" (steps {','.join(map(str, m.steps))})" if len(m.steps) > 1 else "")
                    + f", from {m.state}: "
                    + ", ".join(filter(None, [
                        f"value {m.difference:.3g} > {m.tolerance:.3g}" if m.value else "",
                        f"depends on {_keys(m.extra)} only under the schedule" if m.extra else "",
                        f"lost {_keys(m.lost)}" if m.lost else ""])))

        lines.append("  mismatches (seed, output position, first step that disagrees):")
        lines += capped_rows(list(result.mismatches), row, TABLE_ROWS, indent="    ")
    return lines

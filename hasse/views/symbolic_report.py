"""The text of a claim for every n (``hasse prove-mask``, ``hasse equiv``): the verdict line, the statement,
the counterexample one fact a line, the re-check and the reason."""

from __future__ import annotations

import json
import sys

from hasse.theory.verdicts import PROVED, WORDS
from hasse.views.output import say

CUT = 600  # a counterexample's field is cut after this many characters (its count said)


def counterexample_lines(cx) -> list[str]:
    """The counterexample, one fact a line: n and the parameters first, then positions, the witness path, the rest.

    >>> print("\\n".join(counterexample_lines({"n": 5, "params": {"w": 2}, "path": [0, 4], "names": {"0": "F0"}})))
      smallest counterexample: n = 5, w = 2
      path: [0, 4]  (F0 -> 4)
    """
    if cx is None:
        return []
    if not isinstance(cx, dict):
        return [f"  counterexample: {json.dumps(cx, default=str)}"]
    head = [f"n = {cx['n']}"] if "n" in cx else []
    head += [f"{name} = {value}" for name, value in (cx.get("params") or {}).items()]
    title = "counterexample (an n; smaller may exist)" if cx.get("smallest") is False else "smallest counterexample"
    lines = [f"  {title}: " + (", ".join(head) if head else "(no size)")]
    names = cx.get("names") if isinstance(cx.get("names"), dict) else {}
    for key, value in cx.items():
        if key in ("n", "params", "names", "smallest"):
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if names and key == "path" and isinstance(value, list):
            text += "  (" + " -> ".join(names.get(str(p), str(p)) for p in value) + ")"
        if len(text) > CUT:
            text = text[:CUT] + f"… (+{len(text) - CUT} more characters)"
        lines.append(f"  {key.replace('_', ' ')}: {text}")
    return lines


def verdict_lines(obj: dict, title: str) -> list[str]:
    """The report of one claim's JSON object ``obj`` under ``title`` (the command as typed)."""
    lines = [f"{title}: {WORDS[obj['verdict']]} ({obj['seconds']:.2f} s)"]
    if obj["statement"]:
        lines.append(f"  {'proved' if obj['verdict'] == PROVED else 'statement'}: {obj['statement']}")
    lines += counterexample_lines(obj["counterexample"])
    if obj["recheck"]:
        lines.append(f"  re-check by the concrete engine: {obj['recheck']}")
    if obj["reason"]:
        lines.append(f"  reason: {obj['reason']}")
    return lines


def print_verdict(obj: dict, title: str, *, certificate: str | None = None, out: str | None = None) -> None:
    """Print the report of ``obj`` and the files written (the certificate, the JSON)."""
    lines = verdict_lines(obj, title)
    if certificate:
        lines.append(f"  certificate written to {certificate}")
    if out:
        lines.append(f"  JSON written to {out}")
    say(*lines)


def print_disagreement(recheck: str) -> None:
    """The loud line on stderr when the concrete re-check contradicts the symbolic verdict (a bug of the kit)."""
    print(f"hasse: the symbolic verdict and the concrete engine DISAGREE: {recheck} (a bug in the kit)",
          file=sys.stderr)

"""A claim's outcome as JSON: the verdict's fields, the names of a counterexample's positions, the formulas.

- :func:`verdict_record`: the fields of a :class:`~solvers.symbolic.claims.SymbolicVerdict` that go into
  ``hasse prove-mask`` / ``hasse equiv``'s JSON object (``verdict``, ``statement``, ``seconds``,
  ``counterexample``, ``recheck``, ``reason``);
- :func:`stopped`: the verdict unknown when the program traced was stopped at its time limit;
- :func:`name_positions`: a counterexample's positions by their names in the concrete task;
- :func:`formula_record`: a mask's (or a task's) formulas as text with their SHA-256, for a certificate
  (:func:`proofs.certificates.format.claim_certificate`).
"""

from __future__ import annotations

import hashlib

FORMULA_CHARS = 20_000  # a certificate keeps a formula's text up to this length (its SHA-256 always)


def verdict_record(verdict, seconds: float) -> dict:
    """The fields of a SymbolicVerdict that go into the JSON object (jsonable), checked for a known verdict word;
    ``seconds``: the time measured around the claim, used when the verdict gives none."""
    from hasse.theory.jsonable import to_jsonable
    from hasse.theory.verdicts import VERDICTS

    if verdict.verdict not in VERDICTS:
        raise RuntimeError(f"a symbolic claim returned the verdict {verdict.verdict!r}")
    return {"verdict": verdict.verdict, "statement": str(verdict.statement or ""),
            "seconds": float(verdict.seconds if verdict.seconds is not None else seconds),
            "counterexample": to_jsonable(verdict.counterexample),
            "recheck": None if verdict.recheck is None else str(verdict.recheck),
            "reason": None if not verdict.reason else str(verdict.reason)}


def stopped(claim: str, exc: Exception, seconds: float):
    """The verdict when user code (the mask_mod traced) was stopped at its time limit: unknown, and why."""
    from hasse.solvers.symbolic.claims import SymbolicVerdict
    from hasse.theory.verdicts import UNKNOWN

    return SymbolicVerdict(claim, UNKNOWN, "", seconds, reason=str(exc))


def name_positions(cx, task) -> None:
    """Add ``names`` (position -> its name in the concrete task at the counterexample's n: F0, B1, P1, Q2) to ``cx``.

    Only for a task whose concrete form names its positions other than by their numbers;
    nothing is added when the concrete task cannot be built (the re-check says why).
    """
    if not isinstance(cx, dict) or task is None or task.concrete is None or "n" not in cx:
        return
    try:
        names = task.concrete(int(cx["n"]), **(cx.get("params") or {})).names
    except Exception:  # the concrete form is the re-check's business; a name is only a convenience
        return
    positions = set()
    for key in ("path", "positions", "position", "source", "pair"):
        value = cx.get(key)
        for p in value if isinstance(value, list) else [value]:
            if isinstance(p, int) and 0 <= p < len(names):
                positions.add(p)
    if positions and any(names[p] != str(p) for p in positions):
        cx["names"] = {str(p): names[p] for p in sorted(positions)}


def formula_record(mask) -> dict:
    """A mask's formula as text (cut at FORMULA_CHARS) with its SHA-256, its size term and side conditions.

    A task (a :class:`~solvers.symbolic.task.SymbolicTask`) gives ``holds(p, t)``, ``predicts(p, t)`` and ``group(p)`` at fresh
    symbols ``p``, ``t`` instead, each with its own SHA-256.
    """
    from hasse.solvers.symbolic.task import SymbolicTask

    if isinstance(mask, SymbolicTask):
        import z3

        p, t = z3.Ints("p t")
        parts = {"holds": mask.holds(p, t), "predicts": mask.predicts(p, t)}
        if mask.group is not None:
            parts["group"] = mask.group(p)
        out = {"name": mask.name, "conditions": [str(c) for c in mask.conditions]}
        for key, expr in parts.items():
            text = str(expr)
            out[key] = text if len(text) <= FORMULA_CHARS else None
            out[f"{key}_sha256"] = _sha256(text)
        return out
    text = str(mask.formula)
    return {"name": mask.name, "size": str(mask.size), "conditions": [str(c) for c in mask.conditions],
            "formula": text if len(text) <= FORMULA_CHARS else None, "formula_chars": len(text),
            "sha256": _sha256(text)}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

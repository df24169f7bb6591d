"""What a certificate's result claims, checked without re-running its scan: sizes, counts, counterexamples, witnesses.

A result read from a certificate (:func:`proofs.certificate.check_result` has
checked its fields and types) claims a verdict over a class whose size this
checkout recomputes from ``n`` (``Theorem.space``, :mod:`solvers.class_sizes`),
never taken from the file. :func:`claim_problems` lists what does not hold up:

- a numbered (indexed) exhaustive scan over ``[a, b)``: ``details.total`` and
  ``space`` equal to the recomputed ``2^(n(n-1))``; a flagged mask (counterexample,
  or witness of an existence statement) with an ``index`` inside the range and
  ``checked = index - a + 1``; otherwise ``checked = b - a`` for every verdict
  that speaks for its whole range, and ``[a, b)`` the whole space when the result
  stands alone (``whole``);
- any other exhaustive check: ``checked`` equal to the recomputed class size for a
  verdict about the whole class;
- every counterexample and witness re-checked by the theorem (``Theorem.recheck``:
  for the mask theorems the mask goes through the exhaustive predicate and the
  independent numpy check again; an all-zero "witness" of ``no_residual_can_oscillate``
  is refused); one the theorem cannot re-check is a problem too.

>>> from hasse.proofs import registry
>>> t = registry.get("no_residual_can_oscillate")
>>> zero = {"theorem": t.name, "n": 2, "method": "exhaustive", "verdict": "proved", "checked": 1,
...         "details": {"range": [0, 16]}, "witness": {"index": 0, "mask": [[0, 0], [0, 0]]}}
>>> claim_problems(t, zero)
['the witness is not flagged when re-checked']
"""

from __future__ import annotations

from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Theorem


def hit_of(theorem: Theorem, r: dict) -> tuple[str, dict] | None:
    """``("counterexample" | "witness", obj)`` when the result names a flagged object, else None."""
    if r["verdict"] == REFUTED and not theorem.existence:
        return "counterexample", r.get("counterexample") or {}
    if r["verdict"] == PROVED and theorem.existence:
        return "witness", r.get("witness") or {}
    if r["verdict"] == REFUTED and theorem.existence and "none" not in (r.get("counterexample") or {}):
        return "counterexample", r.get("counterexample") or {}  # names an object: it must re-check
    return None


def speaks_for_range(theorem: Theorem, r: dict) -> bool:
    """Whether the verdict says something about every object the check covered (no flagged object)."""
    return hit_of(theorem, r) is None and r["verdict"] != UNKNOWN


def claim_problems(theorem: Theorem, r: dict, *, whole: bool = True) -> list[str]:
    """What does not hold up in result ``r`` of ``theorem`` (empty: nothing found without re-running it)."""
    n, out = r["n"], []
    hit = hit_of(theorem, r)
    if hit is not None:
        kind, obj = hit
        if theorem.recheck is None:
            out.append(f"the {kind} cannot be re-checked without re-running the theorem")
        else:
            why = theorem.recheck(kind, n, obj)
            if why is not None:
                out.append(why)
    if r["method"] != "exhaustive" or theorem.space is None:
        return out
    space = theorem.space(n)
    if "space" in r and r["space"] != space:
        out.append(f"space {r['space']:,} is not the {space:,} objects of size {n}")
    if not theorem.indexed:
        if speaks_for_range(theorem, r) and r["checked"] != space:
            out.append(f"checked {r['checked']:,} of the {space:,} objects of size {n}")
        return out
    details = r.get("details", {})
    a, b = details["range"]
    if details.get("total", space) != space:
        out.append(f"details.total {details['total']!r} is not the {space:,} masks of size {n}")
    if hit is not None:
        index = hit[1].get("index")
        if type(index) is not int or not a <= index < b:
            out.append(f"the {hit[0]} has no mask index inside its range [{a:,}, {b:,})")
        elif r["checked"] != index - a + 1:
            out.append(f"checked {r['checked']:,}, but the first flagged mask {index:,} is the "
                       f"{index - a + 1:,}th of its range")
    elif r["verdict"] != UNKNOWN or details.get("partial"):
        if r["checked"] != b - a:
            out.append(f"checked {r['checked']:,} of the {b - a:,} masks of its range [{a:,}, {b:,})")
    if whole and r["verdict"] != UNKNOWN and hit is None and [a, b] != [0, space]:
        out.append(f"a {r['verdict']} verdict over [{a:,}, {b:,}), not the {space:,} masks of size {n}")
    return out

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
- an ``--orbits`` result (method ``exhaustive-orbits``, :func:`orbit_problems`): its
  content, ``details.digest`` (the sha256 of the labelled indices it checked, in
  enumeration order), recomputed from this checkout's enumeration without the
  predicate (:func:`proofs.orbit_cover.content`) for the whole enumeration, for its part
  ``(i, k)``, or for every part a combined result lists (``details.parts``: each part
  ``0 … k-1`` once, no two naming the same masks, the sizes adding up); ``checked``
  and ``space`` equal to the enumeration's size for a verdict about every mask;
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
from hasse.theory.errors import InputError, clip

ORBITS = "exhaustive-orbits"  # proofs.orbits_check.METHOD


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


def claim_problems(theorem: Theorem, r: dict, *, whole: bool = True, content: bool = True,
                   memo: dict | None = None) -> list[str]:
    """What does not hold up in result ``r`` of ``theorem`` (empty: nothing found without re-running it).

    ``content``: recompute the content of an ``--orbits`` result (:func:`orbit_problems`;
    ``memo`` keeps what was enumerated for the next result of the same enumeration).
    """
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
    if r["method"] == ORBITS:
        return out + (orbit_problems(theorem, r, memo=memo) if content else [])
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


# -- --orbits results: the content they name ---------------------------------------------------------------------


def digest_of(r: dict) -> dict | None:
    """``details.digest`` of an ``--orbits`` result when well formed (``sha256`` hex, ``masks`` >= 0), else None."""
    digest = (r.get("details") or {}).get("digest")
    if not (isinstance(digest, dict) and isinstance(digest.get("sha256"), str) and len(digest["sha256"]) == 64
            and all(c in "0123456789abcdef" for c in digest["sha256"])
            and type(digest.get("masks")) is int and 0 <= digest["masks"] <= 1 << 64):
        return None
    return digest


def is_part(value) -> bool:
    """Whether ``value`` is a part number ``[i, k]`` with ``0 <= i < k``."""
    return (isinstance(value, (list, tuple)) and len(value) == 2 and all(type(x) is int for x in value)
            and 0 <= value[0] < value[1] <= 1 << 32)


def content_problems(label: str, digest: dict | None, checked: int, complete: bool,
                     found: tuple[int, str]) -> list[str]:
    """Whether ``digest`` names the masks its part holds here; ``found``: that part's ``(size, sha256)`` here.

    ``found`` is :func:`proofs.orbit_cover.content` of the part with ``masks =
    digest["masks"]`` (the first masks of the part, up to a hit). ``complete``: the result
    claims the part was checked to its end (no hit, no stop), so ``checked`` and the
    digest's ``masks`` must equal the part's size.
    """
    if digest is None:
        return [f"{label} names no digest of the masks it checked (details.digest)"]
    size, sha = found
    if digest["masks"] > size:
        return [f"{label} names {digest['masks']:,} masks, {label} holds {size:,} here"]
    if sha != digest["sha256"]:
        return [f"{label}: its digest is not that of the masks {label} holds here (another part's masks, or edited)"]
    if complete and not checked == digest["masks"] == size:
        return [f"{label} checked {checked:,} masks, {label} holds {size:,}"]
    if checked > digest["masks"]:
        return [f"{label} checked {checked:,} masks, more than the {digest['masks']:,} its digest names"]
    return []


def _found(n: int, method: str, kind: str, part, k: int, digests: list, memo: dict | None) -> list[tuple[int, str]]:
    """:func:`proofs.orbit_cover.contents` (``part`` None: ``k`` parts in one pass) or ``content`` of one part, memoised."""
    from hasse.proofs import orbit_cover as oc

    masks = tuple(None if d is None else d["masks"] for d in digests)
    key = (n, method, kind, None if part is None else tuple(part), k, masks)
    if memo is not None and key in memo:
        return memo[key]
    if part is None:
        got = oc.contents(n, method, kind, k, list(masks))
    else:
        got = [oc.content(n, method, kind, tuple(part), masks[0])]
    if memo is not None:
        memo[key] = got
    return got


def orbit_unavailable(theorem: Theorem, r: dict) -> str | None:
    """Why this checkout cannot enumerate what ``--orbits`` result ``r`` names (another enumerator, n out of reach)."""
    from hasse.proofs import orbit_cover as oc

    kind = oc.kind_of(theorem)
    if kind is None or not 1 <= r["n"] <= oc.MAX_N:
        return None  # a problem, not a limit of this checkout (orbit_problems says it)
    try:
        cover = oc.enumeration(r["n"], "auto", kind)
    except InputError as exc:
        return f"its enumeration cannot run here: {exc}"
    used = (r.get("details") or {}).get("enumeration")
    if used != cover.method:
        return (f"enumerated by {clip(used, 30)}, this checkout enumerates by {cover.method}: its content cannot be "
                "recomputed here")
    return None


def orbit_problems(theorem: Theorem, r: dict, method: str = "auto", memo: dict | None = None) -> list[str]:
    """What does not hold up in the content an ``--orbits`` result names (see the module docstring)."""
    from hasse.proofs import orbit_cover as oc

    kind = oc.kind_of(theorem)
    if kind is None:
        return [f"{theorem.name} has no --orbits enumeration"]
    if not 1 <= r["n"] <= oc.MAX_N:
        return [f"n = {r['n']} is beyond --orbits (n <= {oc.MAX_N})"]
    why = orbit_unavailable(theorem, r)
    if why:
        return [why]
    n, details = r["n"], r.get("details") or {}
    total = oc.expected(n, method, kind)
    hit = hit_of(theorem, r)
    speaks = hit is None and r["verdict"] != UNKNOWN  # a verdict about every mask of the enumeration
    out = []
    if "space" in r and r["space"] != total:
        out.append(f"space {r['space']:,} is not the {total:,} masks of the enumeration at n = {n}")
    if speaks and r["checked"] != total:
        out.append(f"checked {r['checked']:,} of the {total:,} masks of the enumeration at n = {n}")
    if "part" in details:  # one part of a sharded or distributed run
        part = details["part"]
        if not is_part(part):
            return out + [f"details.part {clip(part, 40)} is not [i, k] with 0 <= i < k"]
        if speaks:
            out.append(f"a {r['verdict']} verdict for part {part[0]}/{part[1]} of the enumeration")
        complete = hit is None and (r.get("reason") or "").startswith("part:")
        digest = digest_of(r)
        found = _found(n, method, kind, part, 1, [digest], memo)[0] if digest is not None else (0, "")
        return out + content_problems(f"part {part[0]}/{part[1]}", digest, r["checked"], complete, found)
    if "parts" in details:  # the parts of a run, combined
        return out + _listed_parts(theorem, r, kind, total, method, memo)
    digest = digest_of(r)
    if digest is None and (speaks or hit is not None):
        return out + ["names no digest of the masks it checked (details.digest)"]
    if digest is not None:  # a hit names a prefix: read that far only
        key = (n, method, kind, "whole", speaks, digest["masks"])
        if memo is None or key not in memo:
            found = oc.content(n, method, kind, None, digest["masks"], count=speaks)
            memo = {} if memo is None else memo
            memo[key] = found
        out += content_problems("the enumeration", digest, r["checked"], speaks, memo[key])
    return out


def _listed_parts(theorem: Theorem, r: dict, kind: str, total: int, method: str, memo) -> list[str]:
    listing = r["details"]["parts"]
    if not (isinstance(listing, list) and listing and all(isinstance(x, dict) and is_part(x.get("part"))
                                                          and type(x.get("checked")) is int for x in listing)):
        return ["details.parts is not a list of parts [i, k] with their checked counts"]
    k = listing[0]["part"][1]
    numbers = sorted(x["part"][0] for x in listing)
    if len(listing) != k or any(x["part"][1] != k for x in listing) or numbers != list(range(k)):
        return [f"details.parts is not the parts 0 … {k - 1} of {k}, each once"]
    if sum(x["checked"] for x in listing) != r["checked"]:
        return [f"checked {r['checked']:,}, the parts listed checked {sum(x['checked'] for x in listing):,}"]
    listing = sorted(listing, key=lambda x: x["part"][0])
    digests = [digest_of({"details": x}) for x in listing]
    named: dict = {}
    for i, digest in enumerate(digests):
        if digest is None:
            return [f"part {i}/{k} names no digest of the masks it checked (details.digest)"]
        if digest["masks"] and named.setdefault(digest["sha256"], i) != i:
            return [f"parts {named[digest['sha256']]}/{k} and {i}/{k} name the same masks"]
    found = _found(r["n"], method, kind, None, k, digests, memo)  # every part, one pass over the enumeration
    out = []
    for i, (x, digest) in enumerate(zip(listing, digests)):  # a part without a hit was checked to its end
        out += content_problems(f"part {i}/{k}", digest, x["checked"], x.get("verdict") == UNKNOWN, found[i])
    sizes = sum(size for size, _ in found)
    if not out and sizes != total:
        out.append(f"the {k} parts of the enumeration hold {sizes:,} masks here, {total:,} expected")
    return out

"""Combining the certificates of shards run separately into one verdict: ``hasse prove NAME --n N --combine CERT…``.

The shards' certificates are evidence from elsewhere, so nothing in them is
trusted that this checkout can recompute (:mod:`proofs.certificate_claims`):

- every file is read strictly (:func:`proofs.certificate.read_certificate`);
- every result must be of the theorem(s) asked for and of ``n`` (no mixed
  theorems or sizes), every file must hold the same theorems and methods (no mixed
  methods), and the parts of one (theorem, method) must share one fingerprint and
  one kit version (no mixed code), which must be this checkout's (a combined
  verdict speaks for the code that combines it); per-file hashes must agree
  between files;
- a numbered exhaustive scan (mask theorems): the space is recomputed from ``n``,
  the parts' ranges must partition it exactly (no gap, no overlap), each part's
  ``checked`` must equal its range's size (up to its first flagged mask), and a
  refuted part's counterexample and a witness are re-checked by the theorem;
- any other result (Z3, task-level): the parts are repeats of one check (each
  shard of ``--method both`` runs Z3 in full) and must agree; their
  counterexamples and witnesses are re-checked too.

Each refusal is a ``ValueError`` (:func:`combine`) or an ``InputError``
(:func:`combine_certificates`): one line, exit 2 on the command line.

>>> part = {"theorem": "limit_is_preorder", "n": 2, "method": "exhaustive", "verdict": "unknown", "checked": 2,
...         "seconds": 0.1, "details": {"total": 4, "range": [0, 2], "partial": True}}
>>> rest = part | {"details": {"total": 4, "range": [2, 4], "partial": True}}
>>> combine([part, rest])["verdict"]
'proved'
>>> combine([part])
Traceback (most recent call last):
...
ValueError: the parts' ranges do not partition the 4 masks of size 2: masks 2 to 3 missing
"""

from __future__ import annotations

import json

from hasse.proofs import fingerprint as fp
from hasse.proofs import registry
from hasse.proofs.certificates.format import ORBITS, read_certificate
from hasse.proofs.certificates.claims import claim_problems, content_problems, digest_of, hit_of
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Result
from hasse.theory.errors import InputError, clip


def _one(parts: list[dict], what: str, value) -> None:
    seen = {json.dumps(value(r), sort_keys=True) for r in parts}
    if len(seen) > 1:
        raise ValueError(f"mixed {what}: {', '.join(sorted(clip(s, 20) for s in seen))}")


def combine(parts: list[dict]) -> dict:
    """One result (a JSON object as in a certificate) from results of one theorem, ``n`` and method."""
    if not parts:
        raise ValueError("nothing to combine")
    first = parts[0]
    _one(parts, "theorems", lambda r: r.get("theorem"))
    _one(parts, "sizes n", lambda r: r.get("n"))
    _one(parts, "methods", lambda r: r.get("method"))
    _one(parts, "fingerprints (the parts ran different code)", lambda r: (r.get("fingerprint") or {}).get("sha256"))
    _one(parts, "kit versions", lambda r: (r.get("versions") or {}).get("hasse"))
    theorem = registry.get(first["theorem"])
    out = {k: first.get(k) for k in ("theorem", "n", "method", "versions", "fingerprint") if first.get(k) is not None}
    out |= {"checked": sum(r["checked"] for r in parts), "seconds": round(sum(r["seconds"] for r in parts), 4)}
    if theorem.indexed and first["method"] == "exhaustive":
        return out | _combine_ranges(theorem, parts)
    if first["method"] == ORBITS and any("part" in (r.get("details") or {}) for r in parts):
        return out | _combine_orbit_parts(theorem, parts)
    return out | _combine_repeats(theorem, parts)


def combine_orbit_parts(parts: list[dict], method: str = "auto") -> dict:
    """:func:`combine` for the parts ``(i, k)`` of an ``--orbits`` enumeration, with the enumerator ``method``."""
    if not parts:
        raise ValueError("nothing to combine")
    for what, value in (("theorems", lambda r: r.get("theorem")), ("sizes n", lambda r: r.get("n")),
                        ("methods", lambda r: r.get("method")),
                        ("fingerprints (the parts ran different code)",
                         lambda r: (r.get("fingerprint") or {}).get("sha256")),
                        ("kit versions", lambda r: (r.get("versions") or {}).get("hasse"))):
        _one(parts, what, value)
    first = parts[0]
    out = {k: first.get(k) for k in ("theorem", "n", "method", "versions", "fingerprint") if first.get(k) is not None}
    out |= {"checked": sum(r["checked"] for r in parts), "seconds": round(sum(r["seconds"] for r in parts), 4)}
    return out | _combine_orbit_parts(registry.get(first["theorem"]), parts, method)


def _combine_ranges(theorem, parts: list[dict]) -> dict:
    n = parts[0]["n"]
    total = theorem.space(n)
    parts = sorted(parts, key=lambda r: tuple(r["details"]["range"]))
    pos = 0
    for r in parts:
        a, b = r["details"]["range"]
        if a < pos:
            raise ValueError(f"the parts' ranges overlap on masks {a:,} to {min(b, pos) - 1:,}")
        if a > pos:
            raise ValueError(f"the parts' ranges do not partition the {total:,} masks of size {n}: "
                             f"masks {pos:,} to {a - 1:,} missing")
        pos = b
    if pos != total:
        raise ValueError(f"the parts' ranges do not partition the {total:,} masks of size {n}: "
                         f"masks {pos:,} to {total - 1:,} missing")
    for r in parts:
        a, b = r["details"]["range"]
        problems = claim_problems(theorem, r, whole=False)
        if hit_of(theorem, r) is None and r["checked"] != b - a:
            problems.append(f"checked {r['checked']:,} of the {b - a:,} masks of its range ({r.get('reason', '')})")
        if hit_of(theorem, r) is None and r["verdict"] != UNKNOWN and [a, b] != [0, total]:
            problems.append(f"a {r['verdict']} verdict for part of the space")
        label = r["details"].get("shard")
        if label is not None and _shard_range(label, total) != (a, b):
            problems.append(f"its shard {clip(label, 20)} is masks {_shard_range(label, total) or '?'}, not its range")
        if problems:
            raise ValueError(f"part [{a:,}, {b:,}) {r['verdict']}: {problems[0]}")
    hits = [r for r in parts if hit_of(theorem, r) is not None]
    checked = sum(r["checked"] for r in parts)
    if not hits and checked != total:  # the partition again, from the counts alone
        raise ValueError(f"the parts checked {checked:,} masks of the {total:,} of size {n}")
    details = {"total": total, "range": [0, total], "existence": theorem.existence,
               "combined": [{k: r.get(k) for k in ("verdict", "checked", "seconds")}
                            | {"range": r["details"]["range"], "shard": r["details"].get("shard")} for r in parts]}
    if hits:
        best = min(hits, key=lambda r: hit_of(theorem, r)[1]["index"])
        kind, obj = hit_of(theorem, best)
        return {"verdict": best["verdict"], kind: obj, "details": details | {"complete": False}, "space": total}
    details["complete"] = True
    if theorem.existence:
        return {"verdict": REFUTED, "counterexample": {"none": f"no mask of size {n} has the property"},
                "details": details, "space": total}
    return {"verdict": PROVED, "details": details, "space": total}


def _shard_range(label, total: int) -> tuple[int, int] | None:
    """The range ``[a, b)`` that shard ``"i/k"`` of ``total`` masks covers (``--shard``), None if not such a label."""
    from hasse.solvers.exhaustive import part

    try:
        i, k = (int(x) for x in str(label).split("/"))
    except ValueError:
        return None
    return part(0, total, i, k) if 0 <= i < k <= total else None


def _combine_orbit_parts(theorem, parts: list[dict], method: str = "auto") -> dict:
    """The parts ``(i, k)`` of an ``--orbits`` enumeration, each bound to its content (``details.digest``).

    Every part ``0 … k-1`` exactly once, from the enumerator this checkout uses; no two
    non-empty parts naming the same masks; each part's digest equal to that of the masks
    part ``i`` holds here (:func:`proofs.orbit_cover.content`, recomputed: the enumeration
    without the predicate), and, without a hit, its ``checked`` equal to that part's size;
    the parts' sizes adding up to ``orbit_cover.expected`` and so their ``checked``; no
    part stopped but by a hit; the relabelling control run and passed. A hit from the
    lowest part index wins once the theorem's re-check accepts it.
    """
    from hasse.proofs import orbit_cover as oc

    n = parts[0]["n"]
    kind = oc.kind_of(theorem)
    if kind is None:
        raise ValueError(f"{theorem.name} has no class enumeration (--orbits refuses it)")
    if not 1 <= n <= oc.MAX_N:
        raise ValueError(f"n = {n} is beyond --orbits (n <= {oc.MAX_N})")
    total = oc.expected(n, method, kind)
    cover = oc.enumeration(n, method, kind)
    seen: dict[int, dict] = {}
    k = None
    for r in parts:
        part = (r.get("details") or {}).get("part")
        if not (isinstance(part, list) and len(part) == 2 and all(type(x) is int for x in part)
                and 0 <= part[0] < part[1]):
            raise ValueError(f"a part numbered {clip(part, 40)}, not [i, k] with 0 <= i < k")
        if k is None:
            k = part[1]
        if part[1] != k:
            raise ValueError(f"mixed part counts: parts of {k} and of {part[1]}")
        if part[0] in seen:
            raise ValueError(f"part {part[0]}/{k} came back twice (a part counted twice)")
        seen[part[0]] = r
    missing, i = [], 0
    while len(missing) < 6 and i < k:  # at most len(parts) + 6 steps, whatever k a file names
        if i not in seen:
            missing.append(i)
        i += 1
    if missing:
        raise ValueError(f"part{'s' if len(missing) > 1 else ''} {', '.join(f'{i}/{k}' for i in missing[:5])}"
                         f"{' …' if len(missing) > 5 else ''} missing")
    ordered = [seen[i] for i in range(k)]
    enumerators = {(r.get("details") or {}).get("enumeration") for r in ordered}
    if enumerators != {cover.method}:
        raise ValueError(f"the parts used the enumeration {', '.join(sorted(clip(x, 20) for x in enumerators))}, "
                         f"this checkout {cover.method}")
    named: dict[str, int] = {}
    for i, r in enumerate(ordered):
        digest = digest_of(r)
        if digest is None:
            raise ValueError(f"part {i}/{k} names no digest of the masks it checked (details.digest)")
        if digest["masks"] and named.setdefault(digest["sha256"], i) != i:
            raise ValueError(f"parts {named[digest['sha256']]}/{k} and {i}/{k} name the same masks "
                             "(one part's results counted twice)")
    hits = []
    for i, r in enumerate(ordered):
        hit = hit_of(theorem, r)
        if hit is not None:
            hits.append((i, r, hit))
        elif not (r.get("reason") or "").startswith("part:") or r["verdict"] != UNKNOWN:
            raise ValueError(f"part {i}/{k} {r['verdict']}: {clip(r.get('reason') or 'no reason given', 80)}")
    controls = [(r.get("details") or {}).get("control", "") for r in ordered]
    if any(c and not str(c).startswith("the predicate gave the same flags") for c in controls):
        raise ValueError("the relabelling control failed in a part")
    if not any(controls):
        raise ValueError("no part ran the relabelling control")
    found = oc.contents(n, method, kind, k, [digest_of(r)["masks"] for r in ordered])  # what each part holds here
    for i, r in enumerate(ordered):
        problems = content_problems(f"part {i}/{k}", digest_of(r), r["checked"], hit_of(theorem, r) is None, found[i])
        if problems:
            raise ValueError(problems[0])
    sizes = [size for size, _ in found]
    if sum(sizes) != total:
        raise ValueError(f"the {k} parts of the enumeration hold {sum(sizes):,} masks, {total:,} expected")
    listing = [{"part": [i, k], "verdict": r["verdict"], "checked": r["checked"], "seconds": r.get("seconds"),
                "digest": digest_of(r)} for i, r in enumerate(ordered)]
    details = {key: v for key, v in (ordered[0].get("details") or {}).items() if key not in ("part", "digest")}
    details |= {"parts": listing, "count": total,
                "predicate_seconds": round(sum((r.get("details") or {}).get("predicate_seconds", 0) or 0
                                               for r in ordered), 3),
                "control": next(c for c in controls if c)}
    if hits:
        i, r, (what, obj) = hits[0]
        why = theorem.recheck(what, n, obj) if theorem.recheck is not None else "no re-check"
        if why:
            raise ValueError(f"the {what} of part {i}/{k} does not re-check: {why}")
        return {"verdict": r["verdict"], what: obj, "details": details | {"complete": False, "hit_part": i},
                "space": total}
    checked = sum(r["checked"] for r in ordered)
    if checked != total:
        raise ValueError(f"scan incomplete: the parts checked {checked:,} masks of the {total:,} expected")
    details["complete"] = True
    if theorem.existence:
        return {"verdict": REFUTED, "counterexample": {"none": f"no mask of size {n} has the property"},
                "details": details, "space": total}
    return {"verdict": PROVED, "details": details, "space": total}


def _combine_repeats(theorem, parts: list[dict]) -> dict:
    verdicts = sorted({r["verdict"] for r in parts})
    if len(verdicts) > 1:
        raise ValueError(f"the parts disagree: {', '.join(verdicts)}")
    for r in parts:
        problems = claim_problems(theorem, r, whole=True)
        if problems:
            raise ValueError(f"a {r['verdict']} part: {problems[0]}")
    first = parts[0]
    keep = {k: first[k] for k in ("verdict", "counterexample", "witness", "reason", "space") if k in first}
    return keep | {"checked": first["checked"], "seconds": first["seconds"],
                   "details": first.get("details", {}) | {"repeats": len(parts)}}


def combine_certificates(paths: list[str], names, n: int) -> tuple[list[Result], dict]:
    """One result per (theorem, method) of ``names`` at ``n`` from shard certificates, and their per-file hashes."""
    certs = [read_certificate(p) for p in paths]
    wanted = {registry.ALIASES.get(x, x) for x in names}
    holds = {}
    for c in certs:
        for r in c.results:
            if r["theorem"] not in wanted:
                raise InputError(f"mixed theorems: holds {r['theorem']}, combining "
                                 f"{' '.join(sorted(wanted)) if len(wanted) < 4 else 'all'}", c.path)
            if r["n"] != n:
                raise InputError(f"holds a result for n = {r['n']}, combining n = {n}", c.path)
        holds[c.path] = sorted({(r["theorem"], r["method"]) for r in c.results})
    if len({json.dumps(h) for h in holds.values()}) > 1:
        a, b = certs[0].path, next(p for p, h in holds.items() if h != holds[certs[0].path])
        raise InputError(f"mixed methods or theorems: {a} holds {_listing(holds[a])}, {b} holds {_listing(holds[b])}")
    sources: dict = {}
    for c in certs:
        for path, sha in c.sources.items():
            if sources.setdefault(path, sha) != sha:
                raise InputError(f"mixed sources: {path} differs between the certificates", c.path)
    groups: dict = {}
    for c in certs:
        for r in c.results:
            groups.setdefault((r["theorem"], r["method"]), []).append(r)
    here = fp.source_hashes()
    out = []
    for (theorem, method), parts in groups.items():
        try:
            combined = combine(parts)
        except ValueError as exc:
            raise InputError(f"cannot combine {theorem} n={n} {method}: {exc}") from None
        if combined["fingerprint"]["sha256"] != fp.fingerprint(theorem, here)["sha256"]:
            diff = fp.differences(sources, here, theorem)
            raise InputError(f"cannot combine {theorem} n={n} {method}: the parts ran other code than this checkout "
                             f"({', '.join(diff[:4]) or 'no sources listed'}{' …' if len(diff) > 4 else ''})")
        out.append(Result(**{k: combined[k] for k in Result.__dataclass_fields__ if k in combined}))
    return out, sources


def _listing(pairs) -> str:
    return ", ".join(f"{t} {m}" for t, m in pairs)

"""Certificates: the JSON record of proof results, written, read back, and shards combined.

A certificate (design.md §5) is ``{"certificate": "hasse proof", "results": [...]}``,
one object per result (:meth:`proofs.theorem.Result.to_json`: theorem, n, method,
verdict, checked, seconds, versions of the kit, Python and the solvers, and the
counterexample or witness). :func:`write_certificate` writes one;
:func:`read_certificate` reads one back with the kit's JSON reader
(:func:`theory.json_file.read_json`: a bad file is an ``InputError`` naming it, with
line and column). Exhaustive shards run separately (``--shard i/k``) are combined
into one verdict for the whole space by :func:`combine` (on result objects) and
:func:`combine_certificates` (on certificate files): ``hasse prove NAME --n N
--combine part*.json``.

>>> part = {"theorem": "t", "n": 2, "method": "exhaustive", "verdict": "unknown", "checked": 2, "seconds": 0.1,
...         "details": {"total": 4, "range": [0, 2], "complete": True}}
>>> rest = part | {"details": {"total": 4, "range": [2, 4], "complete": True}}
>>> combine([part, rest])["verdict"], combine([part])["verdict"]
('proved', 'unknown')
"""

from __future__ import annotations

import json

from hasse.proofs.theorem import Result
from hasse.theory.errors import InputError
from hasse.theory.json_file import read_json


def write_certificate(path: str, results: list[Result]) -> None:
    """A certificate: the JSON of every result (theorem, n, method, verdict, checked, seconds, versions …)."""
    data = {"certificate": "hasse proof", "results": [r.to_json() for r in results]}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, default=_jsonable)
        fh.write("\n")


def _jsonable(value):
    try:
        import numpy as np

        if isinstance(value, np.ndarray):
            return value.astype(int).tolist() if value.dtype == bool else value.tolist()
        if isinstance(value, np.generic):
            return value.item()
    except ImportError:
        pass
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def combine(results: list[dict]) -> dict:
    """One result (a JSON object as in a certificate) from the results of shards run separately.

    Every part must be an exhaustive result of the same theorem, ``n`` and space
    (``details.total``), with its index range in ``details.range``. Verdict:
    ``refuted`` if a part found a counterexample (the smallest index wins);
    for an existence statement ``proved`` if a part found a witness; otherwise
    ``proved`` (``refuted`` for an existence statement: no mask has the property)
    only when the completely checked ranges cover every mask exactly once, else
    ``unknown`` naming what is missing. ``checked`` and ``seconds`` are sums.
    """
    if not results:
        raise ValueError("nothing to combine")
    first = results[0]
    key = (first.get("theorem"), first.get("n"), first.get("method"))
    totals = {r.get("details", {}).get("total") for r in results}
    for r in results:
        if (r.get("theorem"), r.get("n"), r.get("method")) != key:
            raise ValueError(f"cannot combine {r.get('theorem')} n={r.get('n')} {r.get('method')} with "
                             f"{key[0]} n={key[1]} {key[2]}")
        if "range" not in r.get("details", {}):
            raise ValueError(f"{r.get('theorem')} n={r.get('n')}: a part without an index range (not exhaustive)")
    if len(totals) != 1:
        raise ValueError(f"parts enumerate different spaces: totals {sorted(totals)}")
    total = totals.pop()
    existence = any(r.get("details", {}).get("existence") for r in results)
    parts = sorted(results, key=lambda r: tuple(r["details"]["range"]))
    out = {"theorem": key[0], "n": key[1], "method": key[2],
           "checked": sum(int(r.get("checked", 0)) for r in results),
           "seconds": round(sum(float(r.get("seconds", 0.0)) for r in results), 4),
           "details": {"total": total, "range": [0, total], "existence": existence,
                       "combined": [{k: r.get(k) for k in ("verdict", "checked", "seconds")}
                                    | {"range": r["details"]["range"], "shard": r["details"].get("shard")}
                                    for r in parts]},
           "versions": first.get("versions", {})}

    def smallest(verdict, field):
        hits = [r for r in parts if r.get("verdict") == verdict and r.get(field) is not None]
        return min(hits, key=lambda r: r[field].get("index", 0)) if hits else None

    refuted = smallest("refuted", "counterexample")
    if refuted is not None:
        return out | {"verdict": "refuted", "counterexample": refuted["counterexample"]}
    if existence:
        proved = smallest("proved", "witness")
        if proved is not None:
            return out | {"verdict": "proved", "witness": proved["witness"]}
    covered, gaps, overlaps, pos = 0, [], [], 0
    for r in parts:
        a, b = r["details"]["range"]
        if not r["details"].get("complete"):
            continue
        if a < pos:
            overlaps.append([a, min(b, pos)])
        elif a > pos:
            gaps.append([pos, a])
        covered += b - a
        pos = max(pos, b)
    if pos < total:
        gaps.append([pos, total])
    if overlaps:
        raise ValueError(f"parts overlap on index ranges {overlaps}")
    out["details"]["complete"] = not gaps
    if gaps:
        missing = sum(b - a for a, b in gaps)
        return out | {"verdict": "unknown", "reason": f"the parts leave {missing:,} of {total:,} masks unchecked "
                                                      f"(index ranges {gaps[:4]}{' …' if len(gaps) > 4 else ''})"}
    if existence:
        return out | {"verdict": "refuted", "counterexample": {"none": f"no mask of size {key[1]} has the property"}}
    return out | {"verdict": "proved"}


def read_certificate(path: str) -> list[dict]:
    """The result objects of the certificate at ``path`` (``InputError`` naming the file if it is not one)."""
    data = read_json(path)
    parts = data.get("results") if isinstance(data, dict) else None
    if not isinstance(parts, list):
        raise InputError('not a certificate: no "results" list', path)
    return parts


def combine_certificates(paths: list[str], names, n: int) -> list[Result]:
    """One result per (theorem, method) from the results of ``names`` at ``n`` in shard certificates."""
    groups: dict = {}
    for path in paths:
        for r in read_certificate(path):
            if r.get("theorem") in names and r.get("n") == n:
                groups.setdefault((r["theorem"], r.get("method")), []).append(r)
    if not groups:
        raise InputError(f"no results for {' '.join(names) if len(names) == 1 else 'any theorem'} at n = {n} in "
                         f"{', '.join(paths)}")
    try:
        combined = [combine(parts) for parts in groups.values()]
    except ValueError as exc:
        raise InputError(f"cannot combine: {exc}") from None
    return [Result(**{k: c.get(k) for k in Result.__dataclass_fields__ if k in c}) for c in combined]

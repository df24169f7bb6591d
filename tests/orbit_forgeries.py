"""Forged ``--orbits`` parts (issue 20, item 2), shared by the combiner, ``--combine`` and ``certificate verify`` tests.

From the genuine parts ``0 … k-1`` of one run (result JSON objects, ``k >= 3``),
:func:`forgeries` builds sets of parts that each claim the whole enumeration while a
part's masks were never checked, or were counted twice:

- ``relabelled``: part 0's result copied as part 1 (``details.part = [1, k]``), part 1 left out;
- ``part 0 twice``: part 0 given twice beside every other part;
- ``digest edited``: part 1 with one character of its digest changed;
- ``digest of another part``: part 0's result as part ``j`` (a part of another size) with
  part ``j``'s digest, the counts still part 0's, another part's count moved so that the
  counts add up to the whole enumeration again;
- ``part missing``: part 1 left out.

Before the parts were bound to their content the first four combined to ``proved``
whenever the counts added up (the fallback enumeration at n = 5 in 3 parts: 3,203,
3,203 and 3,202 classes, so the relabelled copy of part 0 adds up to 9,608).
"""

from __future__ import annotations

import copy


def as_part(r: dict, i: int, k: int) -> dict:
    out = copy.deepcopy(r)
    out["details"]["part"] = [i, k]
    return out


def forgeries(parts: list[dict]) -> dict[str, list[dict]]:
    """Name -> a forged list of parts (each a deep copy), from the genuine ``parts`` in part order."""
    k = len(parts)
    assert k >= 3 and [p["details"]["part"] for p in parts] == [[i, k] for i in range(k)]
    p = copy.deepcopy(parts)
    for x in p:  # (a kit without digests: a placeholder, so that the same forgeries can be tried on it)
        x["details"].setdefault("digest", {"sha256": "0" * 64, "masks": x["checked"]})
    out = {
        "relabelled": [p[0], as_part(p[0], 1, k), *p[2:]],
        "part 0 twice": [p[0], copy.deepcopy(p[0]), *p[1:]],
        "part missing": [p[0], *p[2:]],
    }
    edited = copy.deepcopy(p[1])
    sha = edited["details"]["digest"]["sha256"]
    edited["details"]["digest"]["sha256"] = sha[:-1] + ("0" if sha[-1] != "0" else "1")
    out["digest edited"] = [p[0], edited, *p[2:]]
    sizes = [x["checked"] for x in p]
    j = next((i for i in range(1, k) if sizes[i] != sizes[0]), None)
    if j is not None:  # part 0's counts, part j's digest, and the total balanced on another part
        claimed = as_part(p[0], j, k)
        claimed["details"]["digest"]["sha256"] = p[j]["details"]["digest"]["sha256"]
        m = next(i for i in range(1, k) if i != j)
        moved = copy.deepcopy(p[m])
        moved["checked"] += sizes[j] - sizes[0]
        moved["details"]["digest"]["masks"] = moved["checked"]
        out["digest of another part"] = [claimed if i == j else moved if i == m else p[i] for i in range(k)]
        assert sum(x["checked"] for x in out["digest of another part"]) == sum(sizes)
    return out

"""Certificates: the JSON record of proof results, written atomically and read back strictly.

One writer, :func:`write_certificate`, writes every certificate the kit makes: one JSON
object (indented, plain JSON values: :func:`theory.jsonable.to_jsonable`), atomically,
never onto an input and never onto something that is not a regular file. Three kinds:

- a theorem's (``hasse prove``, a proof script's ``--certificate``): ``write_certificate(path, results)``
  with the :class:`~proofs.theorem.Result` list; the format below, the only kind
  :func:`read_certificate` and ``hasse certificate verify`` read back;
- a claim for every n (``hasse prove-mask``, ``hasse equiv``): ``write_certificate(path,
  claim_certificate(obj, formulas, argv))`` — the command's JSON object, the formulas, the versions
  of the kit, Z3 and Python, the command line;
- an audit (``hasse audit``): ``write_certificate(path, audit_certificate(data, seconds, argv))`` —
  the report's JSON object and how it was made.

A theorem's certificate (design.md §5) is

```
{"certificate": "hasse proof", "format": 2, "kit": "0.1.0", "fingerprint_rule": "...",
 "sources": {"theory/order.py": "<sha256>", …},
 "results": [{"theorem", "n", "method", "verdict", "checked", "space", "seconds",
              "versions", "fingerprint": {"sha256", "files"}, "details",
              "counterexample" | "witness" | "reason"}, …]}
```

one object per result (:meth:`proofs.theorem.Result.to_json`), each bound to the
code it ran by a ``fingerprint`` of its source files (:mod:`proofs.fingerprint`;
``sources`` holds the per-file hashes, so a mismatch can name the files).

- :func:`write_certificate` writes one atomically (a temporary file in the same
  folder, then a rename);
- :func:`read_certificate` reads one back with the kit's JSON reader and checks
  every field (:func:`check_result`): a missing field, a wrong type, a huge integer,
  an unknown theorem, a range outside the space that ``n`` gives — each is one
  :class:`~theory.errors.InputError` line naming the file and the result.

A certificate from someone else is evidence, not proof: :mod:`proofs.certificates.verify`
re-checks it (``hasse certificate verify CERT --recheck 1.0``), and shards are combined
by :mod:`proofs.certificates.combine` only after the same checks.

>>> check_result({"theorem": "limit_is_preorder", "n": 3, "method": "exhaustive"}, "f.json")
Traceback (most recent call last):
...
hasse.theory.errors.InputError: f.json: result 0 (limit_is_preorder n=3 exhaustive): missing field 'verdict'
"""

from __future__ import annotations

import json
import math
import os
import platform
import stat
from dataclasses import dataclass
from datetime import datetime, timezone

from hasse.proofs import fingerprint as fp
from hasse.proofs import registry
from hasse.proofs.theorem import METHODS, PROVED, REFUTED, UNKNOWN, Result
from hasse.theory.atomic_file import same_file, write_problem, write_text
from hasse.theory.errors import InputError, clip
from hasse.theory.inputs.json_file import read_json
from hasse.theory.jsonable import to_jsonable
from hasse.theory.version import CLAIM_VERSIONS, __version__, versions

ORBITS = "exhaustive-orbits"  # proofs.orbits_check.METHOD (not imported: it imports the solvers)

FORMAT, VERSION = "hasse proof", 2
MAX_BYTES = 64 << 20  # a certificate larger than this is refused before it is parsed
MAX_N = 100_000  # no method reaches beyond this n; an exhaustive, numbered scan stops at 8 (2^56 masks)
MAX_INDEXED_N = 8
MAX_COUNT = 1 << 64


@dataclass(frozen=True)
class Certificate:
    """A certificate read back: its results (checked, theorem names made canonical) and per-file hashes."""

    path: str
    results: list[dict]
    sources: dict  # path -> sha256 of the files the results depend on ({} if the file gives none)
    kit: str | None


def write_certificate(path: str, content, *, sources: dict | None = None, inputs: tuple[str, ...] = ()) -> None:
    """Write a certificate at ``path``, atomically; ``inputs``: files the command read, which ``path`` must not be.

    ``content`` is a list of theorem results (:func:`theorem_certificate`, with ``sources``)
    or a certificate already made (:func:`claim_certificate`, :func:`audit_certificate`).
    """
    refuse_overwrite(path, inputs)
    data = content if isinstance(content, dict) else theorem_certificate(content, sources)
    write_text(path, json.dumps(to_jsonable(data), indent=1) + "\n")


def theorem_certificate(results: list[Result], sources: dict | None = None) -> dict:
    """The certificate of theorem ``results``, each with its fingerprint (the format above).

    A result that already carries a ``fingerprint`` (a combination of shards) keeps it;
    ``sources`` are then the per-file hashes of the shards.
    """
    here = fp.source_hashes()
    out = []
    for r in results:
        obj = r.to_json()
        obj["fingerprint"] = r.fingerprint or fp.fingerprint(r.theorem, here)
        out.append(obj)
    if sources is None:
        sources = {p: here[p] for r in results for p in fp.files_for(r.theorem, here)}
    return {"certificate": FORMAT, "format": VERSION, "kit": __version__, "fingerprint_rule": fp.RULE,
            "sources": dict(sorted(sources.items())), "results": out}


def claim_certificate(obj: dict, formulas: dict, argv) -> dict:
    """A claim's certificate (``hasse prove-mask``, ``hasse equiv``): the command's JSON object ``obj``, then each
    of ``formulas`` (name -> symbolic mask or task: :func:`solvers.symbolic.records.formula_record`), the versions
    and the command line ``argv``."""
    from hasse.solvers.symbolic.records import formula_record

    return {"certificate": f"hasse {obj['command']}", **obj,
            "formulas": {k: formula_record(m) for k, m in formulas.items()},
            "versions": versions(CLAIM_VERSIONS), "argv": list(argv)}


def audit_certificate(data: dict, seconds: float, argv) -> dict:
    """An audit's certificate: its JSON object ``data`` (the versions are in ``data["versions"]``) and how it was
    made: ``"certificate": {kind, argv, python, platform, seconds, created}``."""
    made = {"kind": "audit", "argv": [str(a) for a in argv], "python": platform.python_version(),
            "platform": platform.platform(), "seconds": round(seconds, 3),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    return {**to_jsonable(data), "certificate": made}


def refuse_overwrite(path: str, inputs: tuple[str, ...] = ()) -> None:
    """``InputError`` if ``path`` is one of ``inputs`` or exists and is not a regular file."""
    for given in inputs:
        if same_file(path, given):
            raise InputError(f"the output would overwrite the input {given}", path)
    problem = write_problem(path)
    if problem:
        raise InputError(f"cannot write: {problem}", path)


def read_certificate(path: str) -> Certificate:
    """The certificate at ``path``, every result checked (:func:`check_result`); ``InputError`` naming the file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", path) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError("not a regular file", path)
    if st.st_size > MAX_BYTES:
        raise InputError(f"{st.st_size:,} bytes: larger than any certificate ({MAX_BYTES:,})", path)
    try:
        data = read_json(path)
    except InputError:
        raise
    except (ValueError, RecursionError) as exc:  # digits beyond Python's limit, nesting beyond the stack
        raise InputError(f"not a certificate: {type(exc).__name__}: {clip(exc, 120)}", path) from None
    if not isinstance(data, dict) or data.get("certificate") != FORMAT:
        raise InputError(f'not a certificate: no "certificate": "{FORMAT}" field', path)
    if data.get("format") != VERSION:
        raise InputError(f"certificate format {data.get('format')!r}, this kit reads format {VERSION} "
                         "(rerun the proof to write a new one)", path)
    parts = data.get("results")
    if not isinstance(parts, list) or not parts:
        raise InputError('not a certificate: "results" is not a non-empty list', path)
    sources = data.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(k, str) and _is_sha(v) for k, v in sources.items()):
        raise InputError('"sources" must map file paths to sha256 hex digests', path)
    fp.check_sources(sources, path)  # only the kit's own relative source paths (never /etc/passwd, never 300,000)
    kit = data.get("kit")
    results = [check_result(r, path, i) for i, r in enumerate(parts)]
    return Certificate(path, results, sources, kit if isinstance(kit, str) else None)


def _is_sha(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _is_int(value, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def check_result(obj, path: str, i: int = 0) -> dict:
    """One result object of a certificate, checked field by field (``InputError``: one line naming what is wrong).

    Returns a copy with the theorem's canonical name. What can be checked without
    running anything is: the fields and their types, integers within bounds, a known
    theorem, ``n`` within reach of the method, a refuted result with a counterexample,
    a proved existence statement with a witness, and for a numbered (indexed)
    exhaustive scan a ``details.range`` inside the ``2^(n(n-1))`` masks ``n`` gives.
    """
    if not isinstance(obj, dict):
        raise InputError(f"result {i} is not an object", path)
    label = f"{clip(obj.get('theorem'), 60)} n={clip(obj.get('n'), 20)} {clip(obj.get('method'), 20)}"

    def bad(message: str):
        return InputError(f"result {i} ({label}): {message}", path)

    for key, kind in (("theorem", str), ("n", int), ("method", str), ("verdict", str), ("checked", int),
                      ("seconds", (int, float)), ("versions", dict), ("fingerprint", dict)):
        if key not in obj:
            raise bad(f"missing field {key!r}")
        if type(obj[key]) not in (kind if isinstance(kind, tuple) else (kind,)):
            raise bad(f"field {key!r} must be {'a number' if isinstance(kind, tuple) else kind.__name__}, "
                      f"got {type(obj[key]).__name__}")
    name = registry.ALIASES.get(obj["theorem"], obj["theorem"])
    if name not in registry.NAMES:
        raise bad(f"unknown theorem {clip(repr(obj['theorem']), 60)}")
    theorem = registry.get(name)
    if obj["method"] not in (*METHODS, ORBITS):  # ORBITS: hasse prove --orbits (proofs.orbits_check)
        raise bad(f"method must be one of {', '.join((*METHODS, ORBITS))}")
    if obj["verdict"] not in (PROVED, REFUTED, UNKNOWN):
        raise bad("verdict must be proved, refuted or unknown")
    indexed = theorem.indexed and obj["method"] == "exhaustive"
    if not _is_int(obj["n"], max(1, theorem.min_n) if obj["verdict"] != UNKNOWN else 1,
                   MAX_INDEXED_N if indexed else MAX_N):
        raise bad(f"n = {clip(obj['n'], 30)} is out of range for this theorem and method")
    if not _is_int(obj["checked"], 0, MAX_COUNT):
        raise bad("checked must be an integer between 0 and 2^64")
    if not (math.isfinite(obj["seconds"]) and obj["seconds"] >= 0):
        raise bad("seconds must be a finite number >= 0")
    if not isinstance(obj["versions"].get("hasse"), str):
        raise bad("versions.hasse (the kit's version) is missing")
    if not _is_sha(obj["fingerprint"].get("sha256")):
        raise bad("fingerprint.sha256 must be a sha256 hex digest")
    for key, kind in (("details", dict), ("counterexample", dict), ("witness", dict), ("reason", str)):
        if key in obj and not isinstance(obj[key], kind):
            raise bad(f"field {key!r} must be {'an object' if kind is dict else 'a string'}")
    if "space" in obj and not _is_int(obj["space"], 0, 1 << 4096):
        raise bad("space must be a non-negative integer")
    if obj["verdict"] == REFUTED and "counterexample" not in obj:
        raise bad("refuted without a counterexample")
    if obj["verdict"] == PROVED and theorem.existence and "witness" not in obj:
        raise bad("an existence statement proved without a witness")
    if indexed:
        space = theorem.space(obj["n"])
        rng = obj.get("details", {}).get("range")
        if not (isinstance(rng, list) and len(rng) == 2 and all(_is_int(x, 0, space) for x in rng)
                and rng[0] < rng[1]):
            raise bad(f"details.range must be [a, b] with 0 <= a < b <= {space:,} (the masks of size {obj['n']})")
        if obj["checked"] > rng[1] - rng[0]:
            raise bad(f"checked {obj['checked']:,} is more than the {rng[1] - rng[0]:,} masks of its range")
    return obj | {"theorem": name}

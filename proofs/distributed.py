"""The distributed engine: ``hasse prove NAME|all --n N --engine dask``.

The exhaustive checks are split into *work units*, enumeration ranges that Dask
runs on worker processes (a :class:`distributed.LocalCluster` here, or the cluster
of a scheduler at an address); their results come back as the JSON objects of
certificates (:meth:`Result.to_json`) and are combined into one verdict per
theorem and method:

- labelled exhaustive (mask theorems, numbered masks): unit ``i`` of ``k`` is
  shard ``(i, k)`` of the numbering (``Context(shard=(i, k))``), one run per
  theorem of the unit; the shards are combined by :func:`proofs.certificates.combine.combine`,
  the very code of ``hasse prove --combine`` (ranges must partition the space,
  ``checked`` equal to each range, the smallest flagged index wins, re-checked);
- ``--orbits``: unit ``i`` of ``k`` is part ``(i, k)`` of the class enumeration
  (:func:`proofs.orbits_check.run_many` with ``part``: one pass over the part for
  every theorem); :func:`combine_orbits` requires every part ``0 … k-1`` exactly once,
  the same enumerator in each, the relabelling control passed, and counts that add
  up to :func:`proofs.orbit_cover.expected` exactly (else ``unknown``, "scan
  incomplete"); a hit from the lowest part index wins and is re-checked by
  ``theorem.recheck`` (the re-check of certificates);
- every other check (Z3, the engine and task theorems' exhaustive checks, which
  are not numbered) is one unit of its own, run in full on a worker.

Failures: a worker that dies loses its running units, and the scheduler runs them
again on the other workers (a unit may be lost with ``distributed.scheduler.allowed-failures``
workers at most); the re-assignments are read from the scheduler's transition log
(:func:`proofs.dask_cluster.reruns`), the units that began more than once from their
start markers (:func:`proofs.dask_cluster.started`). A unit that fails for good, or a run past its deadline, leaves
its parts missing, and the combination is then ``unknown`` (never proved).

Dask is imported only inside functions (:func:`run_dask`, :mod:`proofs.dask_cluster`):
the rest of the kit works without it (``pip install 'hasse-attention[dist]'``).

>>> [u.label for u in plan(["limit_is_preorder"], 4, "both", orbits=False, units=2)]
['shard/0/2/exhaustive/limit_is_preorder', 'shard/1/2/exhaustive/limit_is_preorder', 'whole/whole/z3/limit_is_preorder']
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, replace

from hasse.proofs import dask_cluster
from hasse.proofs.theorem import METHODS, UNKNOWN, Result
from hasse.theory.errors import InputError
from hasse.theory.limits import MAX_UNITS, require_count

ENGINE = "dask"
INSTALL = "the dask engine needs dask and distributed: pip install 'hasse-attention[dist]'"
CONNECT_SECONDS = 30.0  # the bound on reaching a scheduler without --timeout (Dask's own default)


@dataclass(frozen=True)
class Unit:
    """One work unit: ``kind`` "shard" (labelled, part of the numbering), "orbits" (part of the classes) or "whole"."""

    kind: str
    names: tuple[str, ...]  # the theorems it runs
    n: int
    method: str  # "exhaustive", "z3" or orbits_check.METHOD
    part: tuple[int, int] | None = None  # (i, k); None for a whole check

    @property
    def label(self) -> str:
        what = f"{self.part[0]}/{self.part[1]}" if self.part else "whole"
        return f"{self.kind}/{what}/{self.method}/{','.join(self.names)}"


def methods_of(theorem, method: str) -> tuple[str, ...]:
    """The methods ``hasse prove`` runs for ``theorem`` under ``method`` (``both``: every check it has)."""
    if method == "both":
        return tuple(m for m in METHODS if theorem.check_for(m) is not None) or METHODS
    return (method,)


def plan(names, n: int, method: str, *, orbits: bool, units: int) -> list[Unit]:
    """The work units of a run: ``units`` parts of the enumeration, plus one unit per check that is not numbered."""
    from hasse.proofs import registry

    if units < 1:
        raise InputError(f"--units must be >= 1, got {units}")
    require_count("units", units, MAX_UNITS, "each unit is one Dask task, planned before any runs")
    theorems = [registry.get(x) for x in names]
    if orbits:
        from hasse.proofs.orbits_check import METHOD

        run = tuple(t.name for t in theorems if n >= t.min_n)
        return [Unit("orbits", run, n, METHOD, (i, units)) for i in range(units)] if run else []
    shards, whole = [], []
    for t in theorems:
        for m in methods_of(t, method):
            if m == "exhaustive" and t.indexed and t.exhaustive_check is not None and n >= t.min_n:
                shards.append(t.name)
            else:
                whole.append(Unit("whole", (t.name,), n, m))
    out = [Unit("shard", tuple(dict.fromkeys(shards)), n, "exhaustive", (i, units)) for i in range(units)] if shards \
        else []
    return out + whole


def run_unit(unit: Unit, deadline: float | None = None, delay: float = 0.0, run: str | None = None) -> dict:
    """Run one work unit (on a worker): ``{"unit", "results": [Result.to_json()…], "worker", "pid", "fingerprints"}``.

    ``deadline``: wall-clock time (``time.time()``) after which checks stop (``unknown``,
    timeout). ``delay``: seconds to sleep first (tests only: makes units slow enough to
    kill a worker in the middle of one; never on the command line). ``run``: the event
    topic of the start markers (:func:`started`), one per run.
    """
    from hasse.proofs import fingerprint as fp
    from hasse.proofs import registry
    from hasse.proofs.theorem import Context, run_theorem

    if run is not None:
        dask_cluster.mark_start(run, unit.label)
    if delay:
        time.sleep(delay)
    left = None if deadline is None else max(deadline - time.time(), 1e-3)
    theorems = [registry.get(x) for x in unit.names]
    if unit.kind == "orbits":
        from hasse.proofs import orbits_check

        results = orbits_check.run_many(theorems, unit.n, [Context(timeout=left) for _ in theorems], part=unit.part)
    elif unit.kind == "shard":
        results = []
        for t in theorems:
            results.append(run_theorem(t, unit.n, "exhaustive", Context(timeout=left, shard=unit.part)))
            left = None if deadline is None else max(deadline - time.time(), 1e-3)
    else:
        results = [run_theorem(theorems[0], unit.n, unit.method, Context(timeout=left))]
    hashes = fp.source_hashes()
    return {"unit": unit.label, "results": [r.to_json() for r in results], "worker": dask_cluster.worker_address(),
            "pid": os.getpid(), "fingerprints": {t.name: fp.fingerprint(t.name, hashes)["sha256"] for t in theorems}}


# -- combining ---------------------------------------------------------------------------------------------------


def _unknown(name: str, n: int, method: str, reason: str, checked: int = 0, details: dict | None = None,
             space: int | None = None) -> Result:
    from hasse.proofs.theorem import versions

    return Result(name, n, method, UNKNOWN, checked, 0.0, reason=reason, details=details or {}, versions=versions(),
                  space=space)


def combine_labelled(name: str, n: int, parts: list[dict], units: int) -> Result:
    """One result from the shards ``parts`` of ``name`` (:func:`proofs.certificates.combine.combine`), or unknown."""
    from hasse.proofs.certificates.combine import combine

    got = sorted(p.get("details", {}).get("shard", "?") for p in parts)
    checked = sum(int(p.get("checked", 0)) for p in parts)
    if len(parts) != units:
        return _unknown(name, n, "exhaustive", f"distributed: {len(parts)} of {units} shards came back "
                                               f"(combine refused)", checked, details={"shards": got})
    try:
        combined = combine(parts)
    except ValueError as exc:
        return _unknown(name, n, "exhaustive", f"distributed: combine refused: {exc}", checked,
                        details={"shards": got})
    return Result(**{k: combined[k] for k in Result.__dataclass_fields__ if k in combined})


def combine_orbits(name: str, n: int, parts: list[dict], units: int, method: str = "auto") -> Result:
    """One ``--orbits`` result from the parts of ``name``: ``unknown`` unless they add up to the whole enumeration.

    Every part ``(i, units)``, ``i = 0 … units-1``, exactly once, of ``name`` at ``n``,
    combined by :func:`proofs.certificates.combine.combine_orbit_parts`, the code of
    ``hasse prove --combine``: the enumerator this checkout uses; each part bound to its
    content (its ``details.digest`` equal to the digest of the masks part ``i`` holds here,
    recomputed from the enumeration without the predicate; no two parts naming the same
    masks; without a hit, ``checked`` equal to the part's size, and the sizes adding up to
    ``orbit_cover.expected(n)``); no part stopped for another reason than a hit (a
    timeout, a crash, a failed relabelling control); the relabelling control run and
    passed in at least one part. A hit (a counterexample, or the witness of an existence
    statement) from the lowest part index wins, once ``theorem.recheck`` (the re-check of
    certificates: index, predicate, independent confirmation) accepts it.
    """
    from hasse.proofs import orbit_cover, orbits_check, registry
    from hasse.proofs.certificates.combine import combine_orbit_parts

    theorem = registry.get(name)
    METHOD = orbits_check.METHOD
    total = orbit_cover.expected(n, method, orbit_cover.kind_of(theorem))
    listing = [{"part": (p.get("details") or {}).get("part"), "verdict": p.get("verdict"),
                "checked": p.get("checked"), "seconds": p.get("seconds"),
                "digest": (p.get("details") or {}).get("digest")} for p in parts]
    listing.sort(key=lambda x: tuple(x["part"]) if isinstance(x["part"], (list, tuple)) else (float("inf"),))
    checked = sum(int(p.get("checked", 0)) for p in parts)

    def refuse(reason: str) -> Result:
        return _unknown(name, n, METHOD, reason, checked, details={"parts": listing}, space=total)

    for p in parts:
        part = (p.get("details") or {}).get("part")
        if p.get("theorem") != name or p.get("n") != n or p.get("method") != METHOD:
            return refuse(f"distributed: a part of {p.get('theorem')} n={p.get('n')} {p.get('method')} among the "
                          f"parts of {name} n={n}")
        if not (isinstance(part, (list, tuple)) and len(part) == 2 and part[1] == units):
            return refuse(f"distributed: a part numbered {part!r}, not i/{units}")
    if not parts:
        return refuse(f"distributed: no part came back (all {units} missing)")
    try:
        combined = combine_orbit_parts([p | {"details": (p.get("details") or {}) | {"part": list(p["details"]["part"])}}
                                        for p in parts], method)
    except ValueError as exc:
        reason = str(exc)
        return refuse(reason if reason.startswith("scan incomplete") else f"distributed: {reason}")
    return Result(**{k: v for k, v in combined.items() if k in Result.__dataclass_fields__} | {"seconds": 0.0})


# -- running -----------------------------------------------------------------------------------------------------


def run_dask(theorems, n: int, *, orbits: bool = False, method: str = "exhaustive", units: int | None = None,
             workers: int = 1, scheduler: str | None = None, timeout: float | None = None, progress=None,
             delay: float = 0.0, on_start=None) -> list[Result]:
    """Every check of ``theorems`` (names) at ``n`` as Dask work units; one combined :class:`Result` per check.

    ``scheduler``: the address of a running scheduler (its workers run the units); else a
    ``LocalCluster`` of ``workers`` processes, one thread each. ``units``: parts of the
    enumeration (default four per worker). ``timeout``: seconds for the whole run.
    ``progress(done, total)``: units finished. ``delay`` and ``on_start(client, futures)``
    are for tests (slow units; kill a worker once they run).
    """
    try:
        import dask
        from distributed import Client, as_completed
    except ImportError:
        raise InputError(INSTALL) from None
    from hasse.proofs import fingerprint as fp
    from hasse.proofs import registry

    names = [registry.ALIASES.get(x, x) for x in theorems]
    if workers < 1:
        raise InputError(f"--workers must be >= 1, got {workers}")
    start = time.monotonic()
    deadline = None if timeout is None else time.time() + timeout
    here = fp.source_hashes()  # the code this run speaks for: the units must have run the same
    cluster = None
    # a local scheduler reads it as it starts: Dask's default (3) unless the user's Dask configuration says otherwise
    with dask.config.set({"distributed.scheduler.allowed-failures": dask.config.get(
            "distributed.scheduler.allowed-failures", 3)}):
        try:
            if scheduler is not None:
                client = dask_cluster.connect(scheduler, CONNECT_SECONDS if timeout is None
                                              else min(timeout, CONNECT_SECONDS))
            else:
                cluster = dask_cluster.local_cluster(workers)
                client = Client(cluster)
            with client:
                address = client.scheduler.address
                nworkers = len(client.scheduler_info().get("workers", {}))
                if cluster is None and not nworkers:  # nothing would ever run a unit: the wait would never end
                    raise InputError(f"--scheduler {scheduler}: the scheduler has no workers (start some first)")
                nworkers = nworkers or workers
                k = units if units is not None else 4 * nworkers
                work = plan(names, n, method, orbits=orbits, units=k)
                topic = f"hasse-unit-start-{uuid.uuid4().hex[:12]}"
                futures = {client.submit(run_unit, u, deadline, delay, topic, pure=False): u for u in work}
                keys = [f.key for f in futures]
                if on_start is not None:
                    on_start(client, list(futures))
                done, failed, outputs = 0, {}, []
                wait = None if timeout is None else timeout + 60  # the units stop at the deadline themselves
                try:
                    for future in as_completed(list(futures), timeout=wait):
                        unit = futures.pop(future)
                        try:
                            outputs.append(future.result())
                        except Exception as exc:  # a unit that failed for good (KilledWorker, a crash)
                            failed[unit.label] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
                        future.release()  # its result is here: a later worker death must not recompute it
                        done += 1
                        if progress:
                            progress(done, len(work))
                except TimeoutError:
                    for future, unit in futures.items():
                        failed[unit.label] = "no result before the deadline"
                        future.cancel()
                rescheduled = dask_cluster.reruns(client, keys)
                starts = dask_cluster.started(client, topic, [u.label for u in work])
                allowed = client.run_on_scheduler(dask_cluster.allowed_failures)
        finally:
            if cluster is not None:
                cluster.close()
    seconds = round(time.monotonic() - start, 4)
    engine = {"name": ENGINE, "scheduler": address, "cluster": "local" if cluster is not None else "remote",
              "workers": nworkers,
              "units": k, "tasks": len(work), "allowed-failures": allowed,
              "re-scheduled": rescheduled,
              "re-run": None if starts is None else sum(max(c - 1, 0) for c in starts.values()),
              "by_worker": _by_worker(outputs)}
    if failed:
        engine["failed"] = failed
    return _combine_all(names, n, method, orbits, k, work, outputs, engine, seconds, here)


def _by_worker(outputs) -> dict:
    out: dict = {}
    for o in outputs:
        out[o.get("worker") or "?"] = out.get(o.get("worker") or "?", 0) + 1
    return out


def _combine_all(names, n, method, orbits, k, work, outputs, engine, seconds, here) -> list[Result]:
    from hasse.proofs import fingerprint as fp
    from hasse.proofs import registry

    groups: dict = {}
    ran: dict = {}
    for o in outputs:
        for r in o["results"]:
            groups.setdefault((r["theorem"], r["method"]), []).append(r)
            ran.setdefault(r["theorem"], set()).add(o["fingerprints"].get(r["theorem"]))
    results = []
    for name in names:
        theorem = registry.get(name)
        if orbits:
            from hasse.proofs.orbits_check import METHOD

            wanted = [METHOD]
        else:
            wanted = list(methods_of(theorem, method))
        for m in wanted:
            parts = groups.get((name, m), [])
            mine = fp.fingerprint(name, here)["sha256"]
            if ran.get(name, {mine}) - {mine}:
                r = _unknown(name, n, m, "distributed: the workers ran other code than this checkout had when "
                                         "the run started (source fingerprint; a file edited during the run?)")
            elif orbits:
                if n < theorem.min_n:
                    r = _unknown(name, n, m, f"the statement needs n >= {theorem.min_n}")
                else:
                    r = combine_orbits(name, n, parts, k)
            elif any(u.kind == "shard" and name in u.names for u in work) and m == "exhaustive":
                r = combine_labelled(name, n, parts, k)
            elif len(parts) == 1:
                r = Result(**{f: parts[0][f] for f in Result.__dataclass_fields__ if f in parts[0]})
            else:
                r = _unknown(name, n, m, f"distributed: the unit came back {len(parts)} times")
            if method == "both" and not orbits and len(wanted) < len(METHODS):
                missing = [x for x in METHODS if x not in wanted]
                r = replace(r, details=r.details | {"only": f"{m} only: no {' or '.join(missing)} check for this "
                                                            f"theorem"})
            results.append(replace(r, seconds=seconds, details=r.details | {"engine": engine}))
    return results

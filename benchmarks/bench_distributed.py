"""The Dask engine (issue 14): one run, the same theorems and units on 1 and on 2 workers, and a projection to n = 8.

``python -m benchmarks.bench_distributed`` runs ``hasse prove all --n 6 --orbits``
(every mask-level theorem over one mask per isomorphism class, one pass per unit)
as ``--units`` work units (default 8) on a LocalCluster of 1 worker process, then of 2,
both clusters started before the clock runs (their start-up is printed apart). Printed:
the seconds of each run, the ratio 1-worker / 2-worker, and the measured per-worker
rate (masks per second of one worker: masks checked / (seconds x workers) of the
1-worker run), with the time that rate projects for n = 8 (1,793,359,192,848 classes,
OEIS A000273; with ``--labelled``, 2^56 masks) on 100 and on 1,000 workers. The projection only scales the measured
rate: at n = 6 a unit's fixed costs are small beside its masks, but a mask of size 8
costs more than one of size 6 in every predicate (so the real time is longer), and
nauty's ``geng res/mod`` parts are uneven at small n (at n = 6 only 4 parts are
non-empty, whatever ``--units``), which caps the 2-worker ratio there.

``--n 5``, ``--theorem NAME`` (repeatable) and ``--labelled`` (shards of the
numbering instead of the class parts) choose other runs; ``--quick`` is
``--n 4 --units 4`` (a smoke run). ``--json FILE`` writes the figures.

``--sample P`` measures a rate at a size too large to run whole here (``--n 7 --units 128
--sample 8``: 8 of the 128 parts of the 882,033,440 classes, evenly spaced): the same P
units (:func:`proofs.distributed.run_unit`, each enumerating its part with nauty and
running every theorem) are submitted to the 1- and the 2-worker cluster; the rate is
the masks those units checked per second of one worker, and the projection uses it.
"""

from __future__ import annotations

import argparse
import time

from benchmarks._timing import write_rows

N8_CLASSES = 1_793_359_192_848  # OEIS A000273, n = 8


def run_on(workers: int, names, n: int, orbits: bool, units: int) -> dict:
    """One timed run of ``names`` on a fresh LocalCluster of ``workers`` processes (start-up timed apart)."""
    from distributed import Client

    from hasse.proofs.dask_cluster import local_cluster
    from hasse.proofs.distributed import run_dask

    start = time.perf_counter()
    with local_cluster(workers) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        startup = time.perf_counter() - start
        start = time.perf_counter()
        results = run_dask(names, n, orbits=orbits, method="exhaustive", units=units,
                           scheduler=cluster.scheduler_address)
        seconds = time.perf_counter() - start
    return {"workers": workers, "startup": round(startup, 2), "seconds": round(seconds, 3),
            "checked": {r.theorem: r.checked for r in results},
            "verdicts": {r.theorem: r.verdict for r in results}}


def sample_on(workers: int, units) -> dict:
    """The units ``units`` (a sample of a run's parts) on a fresh LocalCluster of ``workers``, timed."""
    from distributed import Client

    from hasse.proofs.dask_cluster import local_cluster
    from hasse.proofs.distributed import run_unit

    start = time.perf_counter()
    with local_cluster(workers) as cluster, Client(cluster) as client:
        client.wait_for_workers(workers)
        startup = time.perf_counter() - start
        start = time.perf_counter()
        outputs = client.gather(client.map(run_unit, units, pure=False))
        seconds = time.perf_counter() - start
    first = [o["results"][0] for o in outputs]
    return {"workers": workers, "startup": round(startup, 2), "seconds": round(seconds, 3),
            "checked_masks": sum(r["checked"] for r in first),
            "verdicts": {r["reason"] or r["verdict"] for o in outputs for r in o["results"]}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6)
    parser.add_argument("--units", type=int, default=8)
    parser.add_argument("--theorem", action="append", help="a theorem (repeatable); default: every mask-level one")
    parser.add_argument("--labelled", action="store_true", help="shards of the numbering instead of --orbits parts")
    parser.add_argument("--quick", action="store_true", help="--n 4 --units 4 (a smoke run)")
    parser.add_argument("--sample", type=int, metavar="P", help="run only P of the --units parts, evenly spaced")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.units = 4, 4
    from hasse.proofs import orbit_cover, orbits_check, registry

    orbits = not args.labelled
    names = args.theorem or [x for x in registry.MASK_THEOREMS
                             if not orbits or orbits_check.refusal(registry.get(x)) is None]
    what = f"{'all' if not args.theorem else ' '.join(names)} --n {args.n} {'--orbits' if orbits else '(labelled)'}"
    print(f"hasse prove {what} --engine dask --units {args.units}: {len(names)} theorems (mask-level)")
    # the rate's unit: the class representatives (--orbits; the loops and preorder passes of two theorems ride
    # along) or the labelled masks, per second of one worker with every theorem of the run checking each
    masks, unit = (orbit_cover.expected(args.n), "classes") if orbits else (2 ** (args.n * (args.n - 1)), "masks")
    rows = []
    if args.sample:
        from hasse.proofs.distributed import plan

        work = plan(names, args.n, "exhaustive", orbits=orbits, units=args.units)
        picked = [work[j * len(work) // args.sample] for j in range(args.sample)]
        print(f"  sample: units {', '.join(u.label.split('/')[1] for u in picked)} of {args.units}")
    for workers in (1, 2):
        if args.sample:
            row = sample_on(workers, picked)
            masks = row["checked_masks"]
            row["verdicts"] = {"sample": "partial" if all(str(v).startswith("part:") for v in row["verdicts"])
                               else "HIT"}
        else:
            row = run_on(workers, names, args.n, orbits, args.units)
        rows.append(row)
        verdicts = sorted(set(row["verdicts"].values()))
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: {row['seconds']:8.2f} s   ({masks:,} {unit}; "
              f"cluster start-up {row['startup']:.1f} s, not counted; verdicts: {', '.join(verdicts)})")
    one, two = rows
    ratio = one["seconds"] / two["seconds"] if two["seconds"] else float("nan")
    rate = masks / one["seconds"]  # one worker (a sample: the masks of its units)
    print(f"  scaling: 1 worker / 2 workers = {ratio:.2f}x (2.00x would be perfect)")
    print(f"  per-worker rate: {rate:,.0f} {unit}/s ({len(names)} theorems each)")
    projection = {}
    target, named = (N8_CLASSES, "classes") if orbits else (2 ** 56, "labelled masks")
    for w in (100, 1000):
        seconds = target / (rate * w)
        projection[w] = seconds
        print(f"  n = 8 ({target:,} {named}) on {w:>5,} workers at this rate: {seconds:,.0f} s "
              f"({seconds / 3600:,.1f} h at the n = {args.n} rate)")
    write_rows(args.json, {"run": what, "units": args.units, "rows": rows, "ratio": ratio, "rate": rate,
                           "n8_seconds": projection})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

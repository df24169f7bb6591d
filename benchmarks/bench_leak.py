"""Leak analysis vs a search per position per source, in one run.

For each task and size, time

* the kit: ``theory.leak.find_leaks`` (every leak with its depth and a shortest
  witness path; the limit from closure bitsets shared by all positions, depths and
  paths by one bidirectional search per leaking pair on bitset rows), min and median
  of ``--repeats`` runs, and
* the baseline: for every supervised position and every position holding its
  target, a breadth-first search backwards from the position until it meets that
  source (plain Python adjacency lists) — the "search per position per source"
  approach the kit avoids.

Both must find the same leaks with the same depths. The baseline runs in a child
process killed after ``--baseline-timeout`` seconds; the ratio is then a lower bound
(``>``), and the baseline is also run on ``--sample`` evenly spaced supervised
positions and scaled to all of them (``~``: a projection, checked against the kit's
leaks at those positions). After a timeout, larger sizes of that task are skipped.

    python -m benchmarks.bench_leak                        # butterfly, bad_butterfly_crossed, bad_butterfly_self
    python -m benchmarks.bench_leak --tokens 2048 --tasks butterfly bad_butterfly_crossed   # docs/benchmarks.md
    python -m benchmarks.bench_leak --tokens 64 256 --json out.json
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import deque

from benchmarks._timing import bench_parser, print_header, run_with_timeout, sweep, versus, write_rows
from hasse.theory.bitset import neighbour_lists
from hasse.theory.catalog import build_task
from hasse.theory.leak import find_leaks

TASKS = ("butterfly", "bad_butterfly_crossed", "bad_butterfly_self")


def naive_leaks(spec: str, every: int = 1) -> tuple[float, tuple[tuple[int, int, int], ...]]:
    """Seconds of the search (the task's build not counted) and the leaking ``(position, target, depth)`` of
    every ``every``-th supervised position, by one BFS per position per source."""
    task = build_task(spec)
    start = time.perf_counter()
    preds = [ks.tolist() for ks in neighbour_lists(task.mask)]
    sources = task.all_sources()
    found = []
    for p in task.supervised[::every]:
        for t in task.labels[p]:
            best = None
            for j in (v for v in range(task.size) if t in sources[v]):
                dist = {p: 0}
                queue = deque([p])
                while queue:
                    v = queue.popleft()
                    if v == j:
                        best = dist[v] if best is None else min(best, dist[v])
                        break
                    for u in preds[v]:
                        if u not in dist:
                            dist[u] = dist[v] + 1
                            queue.append(u)
            if best is not None:
                found.append((p, t, best))
    return time.perf_counter() - start, tuple(sorted(found))


def kit_times(task, repeats: int):
    """(min, median) seconds of ``find_leaks`` over ``repeats`` runs, and its report."""
    seconds, report = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        report = find_leaks(task)
        seconds.append(time.perf_counter() - start)
    return min(seconds), statistics.median(seconds), report


def main(argv=None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--tokens", type=int, nargs="+", default=[64, 256, 1024, 2048])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--sample", type=int, default=16, metavar="K",
                        help="after a timeout, run the baseline on K evenly spaced supervised positions and project")
    parser.add_argument("--repeats", type=int, default=5, help="runs of the kit (min and median)")
    args = parser.parse_args(argv)
    header = (f"{'task':<30} {'N':>6} {'leaks':>6} {'kit min s':>10} {'kit med s':>10} {'naive s':>10} "
              f"{'ratio':>8}")
    print_header(header)
    rows, dead = [], set()
    for name, n, spec, alive in sweep(args.tasks, args.tokens, lambda name, n: f"{name}:n={n}", dead):
        task = build_task(spec)
        kit_s, kit_median, report = kit_times(task, args.repeats)
        kit_leaks = tuple(sorted((x.position, x.target, x.depth) for x in report.leaks))
        base = run_with_timeout(naive_leaks, (spec,), args.baseline_timeout) if alive else None
        projected = None
        if base is None:
            ratio, base_text, ratio_text = versus(None, kit_median, args.baseline_timeout, alive)
            if alive and args.sample:
                every = max(1, len(task.supervised) // args.sample)
                sampled = run_with_timeout(naive_leaks, (spec, every), args.baseline_timeout)
                if sampled is not None:
                    kept = set(task.supervised[::every])
                    sample_s, sample_leaks = sampled[1]
                    if sample_leaks != tuple(x for x in kit_leaks if x[0] in kept):
                        print(f"MISMATCH on {spec} (sample): kit and naive differ", file=sys.stderr)
                        return 1
                    projected = sample_s * len(task.supervised) / len(kept)
                    base_text = f"~{projected:.0f}"
                    ratio_text = f"~{projected / kit_median:.0f}x"
            dead.add(name)
            base_s = None
        else:
            base_s, base_leaks = base[1]
            if base_leaks != kit_leaks:
                print(f"MISMATCH on {spec}: kit {len(kit_leaks)} leaks, naive {len(base_leaks)} "
                      f"(or their depths differ)", file=sys.stderr)
                return 1
            ratio, base_text, ratio_text = versus(base_s, kit_median, args.baseline_timeout)
        print(f"{spec:<30} {task.size:>6} {len(report.leaks):>6} {kit_s:>10.3f} {kit_median:>10.3f} "
              f"{base_text:>10} {ratio_text:>8}", flush=True)
        rows.append({"spec": spec, "positions": task.size, "leaks": len(report.leaks), "kit_seconds": kit_s,
                     "kit_median_seconds": kit_median, "naive_seconds": base_s,
                     "naive_projected_seconds": projected, "ratio": ratio})
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Leak analysis vs a search per position per source, in one run.

For each task and size, time

* the kit: ``theory.leak.find_leaks`` (every leak with its depth and a shortest
  witness path; the limit from closure bitsets shared by all positions), and
* the baseline: for every supervised position and every position holding its
  target, a breadth-first search backwards from the position until it meets that
  source (plain Python adjacency lists) — the "search per position per source"
  approach the kit avoids.

The baseline runs in a child process killed after ``--baseline-timeout`` seconds;
after a timeout, larger sizes are skipped and the ratio is a lower bound.

    python -m benchmarks.bench_leak                        # butterfly and bad_butterfly_crossed
    python -m benchmarks.bench_leak --tokens 64 256 --json out.json
"""

from __future__ import annotations

import argparse
import sys
from collections import deque

from benchmarks._timing import write_rows, best_time, run_with_timeout
from hasse.theory.bitset import neighbour_lists
from hasse.theory.catalog import build_task
from hasse.theory.leak import find_leaks

TASKS = ("butterfly", "bad_butterfly_crossed", "bad_butterfly_self")


def naive_leaks(spec: str) -> int:
    """Number of leaking (position, target) pairs, by one BFS per position per source."""
    task = build_task(spec)
    preds = [ks.tolist() for ks in neighbour_lists(task.mask)]
    sources = task.all_sources()
    found = 0
    for p in task.supervised:
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
            found += best is not None
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, nargs="+", default=[64, 256, 1024, 2048])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--baseline-timeout", type=float, default=60.0)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    header = f"{'task':<30} {'N':>6} {'leaks':>6} {'kit s':>8} {'naive s':>9} {'ratio':>8}"
    print(header)
    print("-" * len(header))
    rows = []
    for name in args.tasks:
        alive = True
        for n in args.tokens:
            spec = f"{name}:n={n}"
            print(f"  running {spec} ...", file=sys.stderr, flush=True)
            task = build_task(spec)
            kit_s, report = best_time(lambda: find_leaks(task), 3 if n <= 256 else 1)
            base = run_with_timeout(naive_leaks, (spec,), args.baseline_timeout) if alive else None
            if base is None:
                base_text = "skipped" if not alive else f">{args.baseline_timeout:.0f}"
                ratio_text = "" if not alive else f">{args.baseline_timeout / kit_s:.0f}x"
                ratio = None if not alive else args.baseline_timeout / kit_s
                alive, base_s = False, None
            else:
                base_s, base_leaks = base
                if base_leaks != len(report.leaks):
                    print(f"MISMATCH on {spec}: kit {len(report.leaks)} leaks, naive {base_leaks}", file=sys.stderr)
                    return 1
                ratio = base_s / kit_s
                base_text, ratio_text = f"{base_s:.3f}", f"{ratio:.0f}x"
            print(f"{spec:<30} {task.size:>6} {len(report.leaks):>6} {kit_s:>8.3f} {base_text:>9} {ratio_text:>8}",
                  flush=True)
            rows.append({"spec": spec, "positions": task.size, "leaks": len(report.leaks), "kit_seconds": kit_s,
                         "naive_seconds": base_s, "ratio": ratio})
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Merging task families: the kit vs all-pairs exact isomorphism, in one run.

* kit: ``theory.merge.family_to_merged_task`` — signatures bucket the nodes, the
  exact test runs only inside a bucket (and is settled by the signatures when a
  down-set's nodes all differ), then the tasks are embedded;
* baseline: the all-pairs exact approach — networkx VF2 on the rooted, labelled
  down-sets of every pair of nodes, then union–find — which is what grouping "by
  equivalence" means without a signature.

The baseline runs in a child process killed after ``--baseline-timeout`` seconds
(ratio then a lower bound; larger sizes skipped). Both must find the same number
of groups.

    python -m benchmarks.bench_merge                    # infill n = 8 16 32 64, ar, block
"""

from __future__ import annotations

import argparse
import itertools
import sys

from benchmarks._timing import best_time, run_with_timeout
from hasse.theory.catalog import build_family
from hasse.theory.equivalence import equivalent_exact
from hasse.theory.labelled import task_to_hasse
from hasse.theory.merge import family_to_merged_task


def all_pairs_groups(spec: str) -> int:
    """Number of equivalence groups by VF2 on every pair of nodes."""
    diagrams = [task_to_hasse(t) for t in build_family(spec)]
    nodes = [(h, c) for h in diagrams for c in range(h.size)]
    parent = list(range(len(nodes)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in itertools.combinations(range(len(nodes)), 2):
        if find(i) != find(j) and equivalent_exact(*nodes[i], *nodes[j]):
            parent[find(i)] = find(j)
    return len({find(i) for i in range(len(nodes))})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", nargs="+",
                        default=["infill:n=8", "infill:n=16", "infill:n=32", "infill:n=64",
                                 "ar:n=64", "block:n=64,block=4"])
    parser.add_argument("--baseline-timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    header = f"{'family':<22} {'tasks':>5} {'nodes':>6} {'groups':>6} {'kit s':>8} {'all-pairs s':>12} {'ratio':>8}"
    print(header)
    print("-" * len(header))
    dead: set[str] = set()
    for spec in args.families:
        print(f"  running {spec} ...", file=sys.stderr, flush=True)
        tasks = build_family(spec)
        kit_s, merged = best_time(lambda: family_to_merged_task(tasks), 3)
        kind = spec.split(":")[0]
        base = None if kind in dead else run_with_timeout(all_pairs_groups, (spec,), args.baseline_timeout)
        if base is None:
            text = "skipped" if kind in dead else f">{args.baseline_timeout:.0f}"
            ratio = "" if kind in dead else f">{args.baseline_timeout / kit_s:.0f}x"
            dead.add(kind)
        else:
            base_s, groups = base
            if groups != merged.groups:
                print(f"MISMATCH on {spec}: kit {merged.groups} groups, all-pairs {groups}", file=sys.stderr)
                return 1
            text, ratio = f"{base_s:.3f}", f"{base_s / kit_s:.0f}x"
        print(f"{spec:<22} {len(tasks):>5} {merged.task_nodes:>6} {merged.groups:>6} {kit_s:>8.3f} {text:>12} {ratio:>8}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

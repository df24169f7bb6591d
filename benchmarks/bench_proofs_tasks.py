"""Task-level proofs (issue 5): the largest n each method proves within 60 s; the Z3 merge encoding vs a naive one.

``python -m benchmarks.bench_proofs_tasks`` (add ``--quick`` for a short ladder).

Table 1: for each task-level theorem and method, ``n`` climbs a ladder (1 … 8, then
10, 12, … 64, 96, … 512, from the theorem's smallest n); every run is a forked child
killed after 60 s. Reported: the largest n that finished within 60 s, its verdict and
time, and the first n that did not.

Table 2: ``merge_is_minimum``'s Z3 query "a merged task with one node fewer than
the kit's" on the built-in families, with the kit's encoding (symmetry breaking: the
largest task is pinned to the first merged nodes) and the naive one (none), each
killed after 60 s.
"""

from __future__ import annotations

import argparse
import time

from benchmarks._timing import run_with_timeout
from hasse.proofs.registry import TASK_THEOREMS

THEOREMS = TASK_THEOREMS
LADDER = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 96, 128, 192, 256, 384, 512)
LIMIT = 60.0


def _prove(name: str, n: int, method: str):
    from hasse.proofs import registry
    from hasse.proofs.theorem import Context, run_theorem

    r = run_theorem(registry.get(name), n, method, Context(timeout=LIMIT))
    return r.verdict, r.seconds


def largest_n(name: str, method: str, ladder) -> tuple:
    from hasse.proofs import registry

    best, stop = None, None
    for n in (n for n in ladder if n >= registry.get(name).min_n):
        out = run_with_timeout(_prove, (name, n, method), LIMIT + 5)
        if out is None or out[1][0] == "unknown" or out[1][1] > LIMIT:
            stop = n
            break
        best = (n, out[1][0], out[1][1])
    return best, stop


def _naive_vs_kit(spec: str, symmetry: bool):
    import hasse.theory.merge as merge
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.merge_within import merge_within
    from hasse.theory.catalog import build_family

    tasks = build_family(spec)
    diagrams = [task_diagram(t) for t in tasks]
    k = merge.family_to_merged_task(tasks).nodes - 1
    start = time.perf_counter()
    status = merge_within(diagrams, k, symmetry_breaking=symmetry).status
    return status, time.perf_counter() - start, k


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="ladder 1 … 4 only")
    parser.add_argument("--only", nargs="+", choices=THEOREMS, metavar="NAME", help="only these theorems")
    args = parser.parse_args(argv)
    ladder = LADDER[:4] if args.quick else LADDER
    print(f"{'theorem':<46} {'method':<10} {'largest n':>9} {'verdict':<8} {'s':>6}  first n over {LIMIT:.0f} s")
    print("-" * 100)
    for name in args.only or THEOREMS:
        for method in ("exhaustive", "z3"):
            best, stop = largest_n(name, method, ladder)
            n, verdict, sec = best if best else ("-", "-", float("nan"))
            over = stop if stop else f"> {ladder[-1]}"
            print(f"{name:<46} {method:<10} {n!s:>9} {verdict:<8} {sec:>6.2f}  {over}", flush=True)
    print()
    print(f"{'family (K = kit nodes - 1)':<36} {'K':>3} {'kit enc. s':>10} {'naive s':>9} {'ratio':>7}")
    print("-" * 70)
    for spec in ("infill:n=5", "infill:n=6", "infill:n=7", "block:n=6,block=1", "block:n=8,block=2"):
        kit = run_with_timeout(_naive_vs_kit, (spec, True), LIMIT)
        naive = run_with_timeout(_naive_vs_kit, (spec, False), LIMIT)
        k = (kit or naive or (0, (None, 0, "?")))[1][2]
        ks = f"{kit[1][1]:.3f}" if kit else f">{LIMIT:.0f}"
        ns = f"{naive[1][1]:.3f}" if naive else f">{LIMIT:.0f}"
        ratio = (f"{naive[1][1] / kit[1][1]:.0f}x" if kit and naive else f">{LIMIT / kit[1][1]:.0f}x" if kit else "")
        print(f"{spec:<36} {k!s:>3} {ks:>10} {ns:>9} {ratio:>7}", flush=True)


if __name__ == "__main__":
    main()

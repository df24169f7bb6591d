"""Engine vs the networkx pipeline on the four masks of issue 2, in one run.

For each mask family and size n (the number of positions), time

* the kit: ``theory.order.mask_to_order`` (classes, closure, Hasse diagram,
  density, convergence depth), and
* the baseline: the networkx pipeline of ``theory.reference`` (condensation +
  transitive_reduction + all-pairs BFS hop distances),

and print a table with the ratio. The baseline runs in a child process that is
killed after ``--baseline-timeout`` seconds (60 by default); once it times out for
a family, larger sizes are skipped and the ratio is reported as a lower bound.

    python -m benchmarks.bench_engine                 # n = 256 1024 4096 8192
    python -m benchmarks.bench_engine --sizes 256 1024 --json out.json
"""

from __future__ import annotations

import sys

from benchmarks._timing import bench_parser, best_time, print_header, run_with_timeout, sweep, versus, write_rows
from hasse.theory.catalog import build_mask
from hasse.theory.order import mask_to_order
from hasse.theory.reference import reference_order  # imported here so the forked baseline does not time it


def spec_for(family: str, n: int) -> str:
    """A spec of the family with about ``n`` positions."""
    if family == "causal":
        return f"causal:n={n}"
    if family == "sliding_window":
        return f"sliding_window:n={n},w=8"
    if family == "block_two_stream":  # 2t - l positions, l = 16 divides t
        block = 16
        tokens = max(block, (n + block) // 2 // block * block)
        return f"block_two_stream:n={tokens},block={block}"
    if family == "butterfly":  # 3t - 2 positions
        return f"butterfly:n={(n + 2) // 3}"
    raise ValueError(family)


FAMILIES = ("causal", "sliding_window", "block_two_stream", "butterfly")


def _baseline(spec: str):
    mask = build_mask(spec).matrix  # building the mask is timed too; it is tiny next to networkx
    ref = reference_order(mask)
    return ref.convergence_depth, len(ref.classes)


def time_baseline(spec: str, timeout: float):
    """(seconds, depth, classes) of the networkx pipeline, or None if it ran past ``timeout``."""
    out = run_with_timeout(_baseline, (spec,), timeout)
    return None if out is None else (out[0], *out[1])


def _with_depth(order):
    order.convergence_depth  # computed on first use: time it with the rest
    return order


def time_kit(spec: str, repeats: int = 1):
    mask = build_mask(spec).matrix
    seconds, order = best_time(lambda: _with_depth(mask_to_order(mask)), repeats)
    return seconds, order.convergence_depth, len(order.classes), mask.shape[0]


def main(argv=None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096, 8192])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    args = parser.parse_args(argv)

    rows = []
    header = f"{'mask':<34} {'n':>6} {'L*':>5} {'kit s':>8} {'networkx s':>11} {'ratio':>9}"
    print_header(header)
    dead = set()
    for name, n, spec, alive in sweep(args.families, args.sizes, spec_for, dead):
        kit_s, depth, classes, positions = time_kit(spec, repeats=3 if n <= 1024 else 1)
        base = time_baseline(spec, args.baseline_timeout) if alive else None
        if base is None:
            ratio, base_text, ratio_text = versus(None, kit_s, args.baseline_timeout, alive)
            dead.add(name)
            base_s = None
        else:
            base_s, base_depth, base_classes = base
            if (base_depth, base_classes) != (depth, classes):
                print(f"MISMATCH on {spec}: kit depth {depth}/{classes} classes, "
                      f"networkx {base_depth}/{base_classes}", file=sys.stderr)
                return 1
            ratio, base_text, ratio_text = versus(base_s, kit_s, args.baseline_timeout)
        print(f"{spec:<34} {positions:>6} {depth:>5} {kit_s:>8.3f} {base_text:>11} {ratio_text:>9}", flush=True)
        rows.append({"spec": spec, "positions": positions, "depth": depth, "kit_seconds": kit_s,
                     "networkx_seconds": base_s, "ratio": ratio, "ratio_is_lower_bound": base_s is None})
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

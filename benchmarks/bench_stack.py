"""Stack propagation (first arrival of every pair, to convergence) vs the plain product, in one run.

For each preset and size, time

* the kit: ``theory.stack.propagate`` — the first-arrival matrix ``F`` of every pair
  and the convergence depth, by the interval engine where every layer is a run per row
  (all six presets), and by the Boolean-product engine (``engine="product"``, any mask);
* the baseline: ``R(L)`` for ``L = 1, 2, …`` until it stops changing for a whole pass,
  each by a numpy integer product ``(I or M_L) @ R(L-1)`` — the plain definition, with
  the first arrivals read off as each ``R(L)`` appears.

The baseline runs in a child process killed after ``--baseline-timeout`` seconds; after
a timeout, larger sizes are skipped and the ratio is a lower bound.

    python -m benchmarks.bench_stack                    # gemma3, gpt_oss, llama4 at 256 … 2048
    python -m benchmarks.bench_stack --presets gemma3 --n 4096 --json out.json
"""

from __future__ import annotations

import sys

import numpy as np

from benchmarks._timing import bench_parser, best_time, print_header, run_with_timeout, sweep, versus, write_rows
from hasse.theory.stack import propagate
from hasse.theory.inputs.stacks import build_stack

PRESETS = ("gemma2", "gemma3", "llama4", "gpt_oss", "mistral", "hybrid")


def plain_first_arrival(spec: str) -> tuple[int, int]:
    """(convergence depth, number of reachable pairs) by integer matrix products, layer after layer."""
    stack = build_stack(spec)
    n = stack.n
    eye = np.eye(n, dtype=np.int32)
    r = eye.copy()
    first = np.where(eye > 0, 0, -1)
    step, quiet, last = 0, 0, 0
    while quiet < stack.depth:
        a = (stack.layer(step).mask.astype(np.int32) | eye).astype(np.float32)
        step += 1
        new = ((a @ r.astype(np.float32)) > 0).astype(np.int32)
        fresh = (new > 0) & (first < 0)
        if fresh.any():
            first[fresh] = step
            last, quiet = step, 0
        else:
            quiet += 1
        r = new
    return last, int((first >= 0).sum())


def main(argv=None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--n", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--presets", nargs="+", default=["gemma3", "gpt_oss", "llama4"], choices=PRESETS)
    parser.add_argument("--scale", type=int, default=8, help="divide the presets' windows by this (default 8)")
    args = parser.parse_args(argv)
    header = (f"{'stack':<34} {'layers':>6} {'conv':>5} {'interval s':>10} {'product s':>10} {'plain s':>9} "
              f"{'ratio':>8}")
    print_header(header)
    rows, dead = [], set()
    for name, n, spec, alive in sweep(args.presets, args.n, lambda name, n: f"{name}:n={n},scale={args.scale}", dead):
        stack = build_stack(spec)
        kit_s, flow = best_time(lambda: propagate(stack), 3 if n <= 1024 else 1)
        product_s, slow = best_time(lambda: propagate(stack, engine="product"), 1)
        if not np.array_equal(flow.first, slow.first):
            print(f"MISMATCH on {spec}: the two engines differ", file=sys.stderr)
            return 1
        base = run_with_timeout(plain_first_arrival, (spec,), args.baseline_timeout) if alive else None
        if base is None:
            base_s = None
            ratio, base_text, ratio_text = versus(None, kit_s, args.baseline_timeout, alive)
            dead.add(name)
        else:
            base_s, (conv, pairs) = base
            if conv != flow.converged or pairs != int(flow.limit.sum()):
                print(f"MISMATCH on {spec}: kit converged at {flow.converged}, plain at {conv}", file=sys.stderr)
                return 1
            ratio, base_text, ratio_text = versus(base_s, kit_s, args.baseline_timeout)
        print(f"{spec:<34} {stack.depth:>6} {flow.converged:>5} {kit_s:>10.3f} {product_s:>10.3f} "
              f"{base_text:>9} {ratio_text:>8}", flush=True)
        rows.append({"spec": spec, "layers": stack.depth, "converged": flow.converged, "interval_seconds": kit_s,
                     "product_seconds": product_s, "plain_seconds": base_s, "ratio": ratio})
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

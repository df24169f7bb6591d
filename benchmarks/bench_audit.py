"""``hasse audit`` on the CPU: batched VJPs vs one backward per output position, and the whole audit.

One seeded 2-layer Llama (hidden size 64, 4 heads) at 256 positions in float64, the
same input embeddings and probes, for each backend:

* the kit: :func:`gpu_check.audit_measure.measure_vjp` — one forward, then per chunk of
  ``--chunk`` output rows and per layer one backward vmapped over their probes
  (``--batched replicate``: the input copied along the batch instead, copy ``i``
  carrying the probe of output ``q_i``);
* the baseline: :func:`gpu_check.audit_measure.measure_loop` — one forward, then one
  ``torch.autograd.grad`` per output position and layer;
* the full audit: :func:`gpu_check.audit.audit` as ``hasse audit llama --n 256``
  runs it (3 seeds, eager and sdpa; flex_attention by perturbation with
  ``--flex``), compared with ``R(L)``.

Both measurements give the same matrix (checked: equal to 1e-9 relative).

    python -m benchmarks.bench_audit
    python -m benchmarks.bench_audit --positions 128 --backends sdpa --json out.json
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from benchmarks._timing import best_time, write_rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_audit", description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=256)
    parser.add_argument("--backends", default="eager,sdpa")
    parser.add_argument("--chunk", type=int, default=8)
    parser.add_argument("--batched", default="vmap", choices=("vmap", "replicate"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--flex", action="store_true", help="include flex_attention in the full audit")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)

    import torch

    from hasse.gpu_check.audit.report import Setup, audit
    from hasse.gpu_check.audit.measure import layer_outputs, measure_loop, measure_vjp, random_embeddings
    from hasse.gpu_check.audit.models import ModelSpec, build_model, small_config
    from hasse.gpu_check.audit.scenarios import make_scenario
    from hasse.theory.version import AUDIT_VERSIONS, versions

    warnings.simplefilter("ignore")
    torch.set_num_threads(args.threads)
    n = args.positions
    scenario = make_scenario("plain", n)
    spec = ModelSpec("llama", 2, max_positions=2 * n)
    config = small_config(spec)
    v = versions(AUDIT_VERSIONS)
    print(f"hasse audit benchmark: llama, 2 layers, hidden 64, {n} positions, CPU, {args.threads} thread(s); "
          f"transformers {v['transformers']}, torch {v['torch']}")
    print(f"{'backend':<10} {'dtype':<8} {args.batched + ' s':>12} {'loop s':>9} {'ratio':>7}  (chunk {args.chunk})")
    rows = []
    for backend in args.backends.split(","):
        model, dtype = build_model(config, backend, 0)
        x = random_embeddings(n, 64, 0, next(model.parameters()).dtype)
        run = layer_outputs(model, scenario)
        every = range(n)
        fast, a = best_time(lambda: measure_vjp(run, x, every, seed=0, chunk=args.chunk,
                                                      batched=args.batched), args.repeats)
        slow, b = best_time(lambda: measure_loop(run, x, every, seed=0), args.repeats)
        scale = max(float(np.abs(b).max()), 1e-300)
        assert np.array_equal(a != 0, b != 0) and float(np.abs(a - b).max()) / scale < 1e-9, backend
        print(f"{backend:<10} {dtype:<8} {fast:>12.2f} {slow:>9.2f} {slow / fast:>6.1f}x")
        rows.append({"backend": backend, "dtype": dtype, "positions": n, "batched": args.batched, "chunk": args.chunk,
                     "batched_s": fast, "loop_s": slow,
                     "ratio": slow / fast})
    backends = args.backends.split(",") + (["flex_attention"] if args.flex else [])
    start = time.perf_counter()
    result = audit(Setup(spec, scenario, seeds=3, chunk=args.chunk), backends)
    total = time.perf_counter() - start
    verdict = "clean" if not result.unexpected else "UNEXPECTED"
    print(f"full audit (3 seeds, {', '.join(backends)}, build + measure + compare): {total:.1f} s, {verdict}")
    rows.append({"full_audit_s": total, "backends": backends, "seeds": 3})
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

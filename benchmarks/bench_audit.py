"""``hasse audit`` on the CPU: the batched measure vs one backward per output row, and the whole audit of a hybrid.

One seeded 2-layer hybrid (default LFM2: a short-convolution layer then an attention
layer; ``--model qwen3_next``, ``jamba``, … any family of
:data:`gpu_check.audit.models.FAMILIES`) at 256 packed positions (two documents), in
float64 where it runs, the same input embeddings and probes:

* the kit: :func:`gpu_check.audit.trace.measure_vjp` — one forward, then per chunk of
  ``--chunk`` output rows one backward per tensor (every block output, every operator
  output, each operator against its own input) vmapped over the rows' probes
  (``--batched replicate``: the input copied along the batch instead);
* the baseline: :func:`gpu_check.audit.trace.measure_loop` — one forward, then one
  ``autograd.grad`` per output row and tensor;
* both give the same matrices (checked in the run: zero pattern equal, values within
  1e-9 relative; the run fails otherwise);
* the whole audit: :func:`gpu_check.audit.report.audit` as ``hasse audit MODEL
  --scenario packed --n 256`` runs it (3 seeds, every backend that runs here: eager and
  sdpa by VJP, flex_attention by perturbation), build + measure + classify.

Wall time and CPU time (the process's, every thread) are printed: on a loaded machine
the CPU time is the steadier figure. The side-by-side timings follow one warm-up call of
each on a few rows (the first vmapped backward of a process costs seconds once); the
whole audit is timed cold, as a user runs it.

    python -m benchmarks.bench_audit
    python -m benchmarks.bench_audit --model qwen3_next --positions 128 --json out.json
    python -m benchmarks.bench_audit --no-loop --chunk 32      # the whole audit only, bigger chunks
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from benchmarks._timing import write_rows


def timed(fn):
    """``(wall s, cpu s, result)`` of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def same(a, b) -> bool:
    """Equal zero patterns and values within 1e-9 of the largest, for each of the measure's float results."""
    for u, v in zip(a[:3], b[:3]):
        scale = max(float(np.abs(v).max(initial=0.0)), 1e-300)
        if not np.array_equal(u != 0, v != 0) or float(np.abs(u - v).max(initial=0.0)) / scale >= 1e-9:
            return False
    return np.array_equal(a[3], b[3])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_audit", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="lfm2", help="a family of gpu_check.audit.models.FAMILIES (default lfm2)")
    parser.add_argument("--positions", type=int, default=256)
    parser.add_argument("--backends", default=None, help="the whole audit's backends (default: every one that runs)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=8)
    parser.add_argument("--batched", default="vmap", choices=("vmap", "replicate"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-loop", action="store_true", help="skip the side-by-side measure (the whole audit only)")
    parser.add_argument("--no-audit", action="store_true", help="skip the whole audit")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)

    import torch

    from hasse.gpu_check.audit.engine import family_subject
    from hasse.gpu_check.audit.measure import random_embeddings
    from hasse.gpu_check.audit.models import ModelSpec
    from hasse.gpu_check.audit.operators import blocks_of, find_operators
    from hasse.gpu_check.audit.report import Setup, audit
    from hasse.gpu_check.audit.scenarios import make_scenario
    from hasse.gpu_check.audit.trace import measure_loop, measure_vjp, runner
    from hasse.theory.version import AUDIT_VERSIONS, versions

    warnings.simplefilter("ignore")
    torch.set_num_threads(args.threads)
    n = args.positions
    scenario = make_scenario("packed", n)
    spec = ModelSpec(args.model, 2, max_positions=2 * n)
    v = versions(AUDIT_VERSIONS)
    print(f"hasse audit benchmark: {args.model}, 2 layers, hidden 64, {n} packed positions, CPU, "
          f"{args.threads} thread(s); transformers {v['transformers']}, torch {v['torch']}")
    rows = []
    if not args.no_loop:
        built = family_subject(spec, scenario).build("eager", 0)
        blocks = blocks_of(built.model)
        operators = find_operators(blocks)
        run, recorder = runner(built, blocks, operators, n)
        x = random_embeddings(n, 64, 0, getattr(torch, built.dtype))
        every = np.flatnonzero(scenario.real)
        try:  # warm-up (the first vmapped backward of a process pays a one-time cost): one chunk of rows each
            measure_vjp(run, x, every[:args.chunk], seed=0, chunk=args.chunk, batched=args.batched)
            measure_loop(run, x, every[:1], seed=0)
            fast_wall, fast_cpu, a = timed(lambda: measure_vjp(run, x, every, seed=0, chunk=args.chunk,
                                                               batched=args.batched))
            print(f"  {args.batched} (chunk {args.chunk}), eager {built.dtype}, {len(blocks)} blocks + "
                  f"{len(operators)} operators: {fast_wall:.1f} s wall, {fast_cpu:.1f} s CPU", flush=True)
            slow_wall, slow_cpu, b = timed(lambda: measure_loop(run, x, every, seed=0))
        finally:
            recorder.close()
        ok = same(a, b)
        print(f"  loop: {slow_wall:.1f} s wall, {slow_cpu:.1f} s CPU; ratio {slow_wall / fast_wall:.1f}x wall, "
              f"{slow_cpu / fast_cpu:.1f}x CPU; same matrices: {ok}")
        rows.append({"model": args.model, "dtype": built.dtype, "positions": n, "batched": args.batched,
                     "chunk": args.chunk, "batched_s": fast_wall, "batched_cpu_s": fast_cpu, "loop_s": slow_wall,
                     "loop_cpu_s": slow_cpu, "ratio": slow_wall / fast_wall, "same": ok})
        if not ok:
            print("the batched measure and the loop DIFFER", file=sys.stderr)
            write_rows(args.json, rows)
            return 1
    if not args.no_audit:
        backends = args.backends.split(",") if args.backends else None
        wall, cpu, result = timed(lambda: audit(Setup(spec, scenario, seeds=args.seeds, chunk=args.chunk), backends))
        ran = [f"{b.backend} ({b.dtype}, {b.method}, {b.seconds:.1f} s)" for b in result.backends]
        verdict = "unexpected pairs" if result.unexpected else "clean"
        print(f"  whole audit ({args.seeds} seeds; {', '.join(ran)}"
              f"{'; skipped ' + ', '.join(s for s, _ in result.skipped) if result.skipped else ''}): "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU; {verdict}")
        rows.append({"whole_audit_s": wall, "whole_audit_cpu_s": cpu, "seeds": args.seeds,
                     "backends": [b.backend for b in result.backends], "chunk": args.chunk,
                     "per_backend_s": {b.backend: b.seconds for b in result.backends}})
    write_rows(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Dependency pattern of a real attention stack: batched VJPs vs one backward per output position.

For each mask (at 256 positions by default) and backend, on the CPU in float64,
one seeded 4-layer stack (width 16, 2 heads), the same input and the same probes:

* the kit: :func:`gpu_check.dependency.observe_vjp` — every ``‖u_qᵀ ∂out_q/∂x_k‖``
  from vector–Jacobian products batched the way ``hasse gpu-check`` batches them
  on the CPU (:func:`~gpu_check.dependency.default_batching`: ``is_grads_batched``
  for the fused kernels; for the materialising reference the loop below, which is
  faster there), one seed;
* the baseline: ``observe_vjp(batched="loop")`` — single-sequence autograd, one
  ``torch.autograd.grad`` per output position (the design's baseline);
* ``vmap s``: the reference batched with ``is_grads_batched`` anyway, to show why
  the kit does not;
* the full check: :func:`gpu_check.check.dependency_check` as ``hasse
  gpu-check`` runs it (3 seeds, compared with ``R(L)``).

Both compute the same matrix (checked: equal to 1e-12 relative). Timings are the
best of ``--repeats`` runs, on one intra-op thread (see gpu_check/config.py).

    python -m benchmarks.bench_gpu_check
    python -m benchmarks.bench_gpu_check --positions 128 --backends sdpa --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np

from benchmarks._timing import best_time

MASKS = ("causal", "butterfly", "sliding_window")


def mask_spec(name: str, positions: int) -> str:
    """A spec of about ``positions`` positions (Butterfly has 3n - 2)."""
    if name == "butterfly":
        return f"butterfly:n={(positions + 2) // 3}"
    if name == "sliding_window":
        return f"sliding_window:n={positions},w=8"
    return f"{name}:n={positions}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--masks", nargs="+", default=list(MASKS), choices=MASKS)
    parser.add_argument("--backends", nargs="+", default=["sdpa", "mha", "manual"], choices=["manual", "sdpa", "mha"])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="intra-op CPU threads (default 1)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)

    import torch

    from hasse.gpu_check.backends import make_attention
    from hasse.gpu_check.config import StackConfig, torch_threads
    from hasse.gpu_check.check import dependency_check
    from hasse.gpu_check.dependency import default_batching, default_chunk, observe_vjp, random_input
    from hasse.gpu_check.model import build_stack
    from hasse.theory.catalog import build_mask

    warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
    header = (f"{'mask':<26} {'T':>4} {'backend':<7} {'batching':<8} {'kit s':>6} {'naive s':>8} {'ratio':>6} "
              f"{'vmap s':>7} {'full check s':>13}  agrees")
    print(f"dependency pattern, {args.layers} layers, width 16, 2 heads, float64, CPU, "
          f"{args.threads} thread(s), torch {torch.__version__}")
    print(header)
    print("-" * len(header))
    rows = []
    with torch_threads(args.threads):
        for name in args.masks:
            named = build_mask(mask_spec(name, args.positions))
            mask, t = named.matrix, named.n
            config = StackConfig(layers=args.layers)
            stack = build_stack(config)
            x = random_input(t, config.width, 0, "cpu")
            for backend in args.backends:
                print(f"  running {named.spec} with {backend} ...", file=sys.stderr, flush=True)
                attention = make_attention(backend, mask)
                chunk = default_chunk(t, backend, "cpu", config.heads)
                batched = default_batching(backend, "cpu")
                observe_vjp(stack, attention, x, batched="loop", positions=range(2))  # warm-up, untimed
                kit_s, kit = best_time(lambda: observe_vjp(stack, attention, x, chunk=chunk, batched=batched),
                                       args.repeats)
                naive_s, naive = best_time(lambda: observe_vjp(stack, attention, x, batched="loop"), args.repeats)
                vmap_s = None
                if batched != "vmap":
                    vmap_s, _ = best_time(lambda: observe_vjp(stack, attention, x, chunk=chunk), 1)
                same = bool(np.allclose(kit, naive, rtol=1e-12, atol=0) and np.array_equal(kit != 0, naive != 0))
                full = dependency_check(mask, args.layers, backend, "cpu", seeds=3)
                row = {"mask": named.spec, "positions": t, "backend": backend, "batching": batched, "chunk": chunk,
                       "vmap_seconds": None if vmap_s is None else round(vmap_s, 3),
                       "kit_seconds": round(kit_s, 3), "naive_seconds": round(naive_s, 3),
                       "ratio": round(naive_s / kit_s, 2), "full_check_seconds": round(full.seconds, 3),
                       "same_pattern": same, "agrees_with_theory": full.agrees}
                rows.append(row)
                vmap_text = "-" if vmap_s is None else f"{vmap_s:.3f}"
                print(f"{named.spec:<26} {t:>4} {backend:<7} {batched:<8} {kit_s:>6.3f} {naive_s:>8.3f} "
                      f"{naive_s / kit_s:>5.2f}x {vmap_text:>7} {full.seconds:>13.3f}  "
                      f"{'yes' if same and full.agrees else 'NO'}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"layers": args.layers, "threads": args.threads, "torch": torch.__version__, "rows": rows}, f,
                      indent=1)
    return 0 if all(r["same_pattern"] and r["agrees_with_theory"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

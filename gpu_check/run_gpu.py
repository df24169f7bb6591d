"""The prepared device run: the full check at n positions, every backend, one JSON file.

    python -m hasse.gpu_check.run_gpu OUT.json [--n 4096] [--device auto] [--layers 4] [--seeds 1]

For each subject (by default, at about ``n`` positions: the Butterfly task, its
leaky twin ``bad_butterfly_self``, and a sliding window checked at fewer layers
than its depth) it records

- ``agreement``: every backend beside the ``manual`` reference on values and on
  gradients (:mod:`gpu_check.compare`) — on CUDA this puts FlexAttention's
  backward, eager and compiled, beside SDPA and the reference; any disagreement
  is reported, not raised (compiled flex has had gradient bugs);
- ``dependency``: per backend, the observed dependency pattern against ``R(L)``
  and, for tasks, the leak gradients (:mod:`gpu_check.check`); the reference is
  skipped where its (chunk, H, T, T) tensors would not fit in free device memory;
- ``naive_baseline``: one backward per output position (``observe_vjp(batched="loop")``),
  timed on a sample of positions and extrapolated, beside the kit's time.

A subject ``stack:SPEC`` (``--subject``, e.g. ``stack:sliding_window:w=64 x2, causal,
recurrent:chunk=1024``, layers without ``n`` get ``--n``) is checked at the stack's
depth with block i running layer i (:func:`gpu_check.check.run_check`); it
has no backend comparison (``compare_backends`` takes one mask at every layer).

The JSON file is rewritten after every step, so a run cut short still leaves what
it measured (``finished: false``). Exit status 0 when every backend agrees with
the reference and every pattern equals ``R(L)`` (leak gradients of the leaky twin
are expected), 1 otherwise, 2 on bad arguments. It runs on the CPU at small n too
(``--n 64 --device cpu``), where FlexAttention is checked by forward
perturbation and compiled flex is skipped.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
import traceback
import warnings

import numpy as np
import torch

from hasse.gpu_check.backends import BACKENDS, backend_info, device_kind, make_attention
from hasse.gpu_check.check import run_check
from hasse.gpu_check.compare import compare_backends
from hasse.gpu_check.config import StackConfig, dtype_for, resolve_device, torch_threads
from hasse.gpu_check.dependency import default_batching, default_chunk, observe_vjp, random_input
from hasse.gpu_check.model import build_stack
from hasse.theory.catalog import build_mask, build_task
from hasse.theory.errors import InputError
from hasse.theory.inputs.stacks import build_stack as build_layer_stack

DEFAULT_BACKENDS = ("manual", "sdpa", "flex", "flex_compiled", "mha")
NAIVE_SAMPLE = 128  # output positions the naive baseline times before extrapolating


def default_subjects(n: int) -> list[tuple[str, str]]:
    """``(kind, spec)`` at about ``n`` positions: Butterfly (3m - 2 <= n), its leaky twin, a sliding window."""
    m = max(2, (n + 2) // 3)
    return [("task", f"butterfly:n={m}"), ("task", f"bad_butterfly_self:n={m}"),
            ("mask", f"sliding_window:n={n},w={max(2, n // 64)}")]


def reference_fits(t: int, device: str, heads: int, layers: int) -> tuple[bool, str]:
    """Whether the manual reference's score tensors fit: per probe of a chunk, L saved (H, T, T) plus temporaries."""
    if device_kind(device) != "cuda":
        return True, ""
    itemsize = torch.finfo(dtype_for(device)).bits // 8
    chunk = default_chunk(t, "manual", device, heads)
    need = (layers + 3) * chunk * heads * t * t * itemsize  # probes ride in the batch on CUDA
    free, _ = torch.cuda.mem_get_info()
    if need > free // 2:
        return False, f"needs about {need / 2**30:.1f} GiB of {free / 2**30:.1f} GiB free"
    return True, ""


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:500] + " | " + \
        traceback.format_exc().strip().splitlines()[-1][:200]


def _dependency_entry(result, backend: str) -> dict:
    r = result.report
    entry = {
        "backend": backend, "method": r.method, "layers": r.layers, "agrees": r.agrees,
        "unexpected_count": len(r.unexpected), "unexpected_first": [list(p) for p in r.unexpected[:20]],
        "missing_count": len(r.missing), "missing_first": [list(p) for p in r.missing[:20]],
        "cancelled": r.cancelled, "reachable_pairs": int(r.theory.sum()), "seconds": round(r.seconds, 3),
        "noise_rule": r.noise_json()["rule"], "detection_limit": r.detection_limit,
    }
    if result.kind == "task":
        entry.update(leaking=result.leaking, gradients_match_theory=result.gradients_match_theory,
                     theory_leaks=len(result.theory_leaks),
                     nonzero_leak_gradients=sum(s.dependent for g in result.leak_gradients for s in g.gradients))
    return entry


def naive_baseline(mask: np.ndarray, config: StackConfig, backend: str, device: str, kit_seconds: float,
                   sample: int = NAIVE_SAMPLE) -> dict:
    """Time one backward per output position on ``sample`` positions; extrapolate to all of them."""
    t = mask.shape[0]
    stack = build_stack(config, device)
    attention = make_attention(backend, mask, device)
    x = random_input(t, config.width, 0, device)
    positions = np.linspace(0, t - 1, min(sample, t)).astype(int)
    _sync(device)
    start = time.perf_counter()
    observe_vjp(stack, attention, x, batched="loop", positions=positions)
    _sync(device)
    timed = time.perf_counter() - start
    _sync(device)
    start = time.perf_counter()
    observe_vjp(stack, attention, x, chunk=default_chunk(t, backend, device),
                batched=default_batching(backend, device))
    _sync(device)
    kit_one_seed = time.perf_counter() - start
    estimate = timed * t / len(positions)
    return {"backend": backend, "positions_timed": len(positions), "seconds_timed": round(timed, 3),
            "seconds_extrapolated": round(estimate, 3), "kit_seconds_one_seed": round(kit_one_seed, 3),
            "ratio": round(estimate / kit_one_seed, 2) if kit_one_seed > 0 else None,
            "kit_seconds_all_seeds": round(kit_seconds, 3)}


def _sync(device: str) -> None:
    if device_kind(device) == "cuda":
        torch.cuda.synchronize()


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m hasse.gpu_check.run_gpu", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="path of the JSON file to write")
    p.add_argument("--n", type=int, default=4096, help="about this many positions per subject (default 4096)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--layers", type=int, default=4, help="Transformer blocks (default 4)")
    p.add_argument("--seeds", type=int, default=1, help="seeds per dependency check (default 1)")
    p.add_argument("--width", type=int, default=32,
                   help="model width C; 2 heads of C/2 (default 32: Triton kernels want head dims >= 16)")
    p.add_argument("--backends", default=",".join(DEFAULT_BACKENDS),
                   help=f"comma-separated, from {', '.join(BACKENDS)} (default: all)")
    p.add_argument("--subject", action="append", metavar="KIND:SPEC",
                   help="task:SPEC, mask:SPEC or stack:SPEC (layers without n get --n; checked at the stack's "
                        "depth, no backend comparison), repeatable (default: Butterfly, its leaky twin, a sliding "
                        "window)")
    p.add_argument("--naive-sample", type=int, default=NAIVE_SAMPLE,
                   help="output positions the naive baseline times (0: skip it)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        device = resolve_device(args.device)
        config = StackConfig(layers=args.layers, width=args.width, heads=2)
        backends = [b.strip() for b in args.backends.split(",") if b.strip()]
        for b in backends:
            backend_info(b)
        subjects = default_subjects(args.n)
        if args.subject:
            subjects = [tuple(s.split(":", 1)) for s in args.subject]
            if any(kind not in ("task", "mask", "stack") or not spec for kind, spec in subjects):
                raise InputError("--subject must be task:SPEC, mask:SPEC or stack:SPEC")
    except InputError as exc:
        print(f"run_gpu: error: {exc}", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
    record = {
        "n": args.n, "device": device, "device_name": torch.cuda.get_device_name() if device == "cuda" else
        platform.processor() or platform.machine(), "torch": torch.__version__, "cuda": torch.version.cuda,
        "python": platform.python_version(), "dtype": str(dtype_for(device)).removeprefix("torch."),
        "layers": args.layers, "width": args.width, "heads": 2, "seeds": args.seeds, "backends": backends,
        "subjects": [],
        "naive_baseline": None, "all_agree": None, "finished": False,
    }
    started = time.perf_counter()

    def save():
        record["seconds"] = round(time.perf_counter() - started, 2)
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1, allow_nan=False, default=lambda v: None)

    def progress(text):
        print(f"[{time.perf_counter() - started:7.1f} s] {text}", file=sys.stderr, flush=True)

    save()
    ok = True
    first_sdpa = None
    with torch_threads(1 if device == "cpu" else None):
        for kind, spec in subjects:
            task = build_task(spec) if kind == "task" else None
            stack = build_layer_stack(spec, n=args.n) if kind == "stack" else None
            mask = task.mask if task is not None else stack.union() if stack is not None else build_mask(spec).matrix
            t = mask.shape[0]
            entry = {"subject": spec, "kind": kind, "positions": t, "agreement": [], "dependency": []}
            record["subjects"].append(entry)
            progress(f"{spec}: {t} positions, comparing backends with the reference")
            runnable = [b for b in backends if BACKENDS[b].runs_on(device)]
            fits, why = reference_fits(t, device, config.heads, args.layers if stack is None else stack.depth)
            try:
                if stack is not None:
                    entry["agreement_skipped"] = "a stack: compare_backends takes one mask at every layer"
                elif not fits:
                    raise MemoryError(f"the reference does not fit: {why}")
                for a in compare_backends(mask, [b for b in runnable if b != "manual"], device, layers=args.layers,
                                          config=config):
                    entry["agreement"].append({
                        "backend": a.backend, "value_error": _finite(a.value_error),
                        "grad_error": _finite(a.grad_error),
                        "tolerance": a.tolerance, "agrees": a.agrees, "error": a.error})
                    ok &= a.agrees
            except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                entry["agreement_error"] = _error(exc)
                ok &= isinstance(exc, MemoryError)
            save()
            for b in backends:
                if not BACKENDS[b].runs_on(device):
                    where = "/".join(BACKENDS[b].devices)
                    entry["dependency"].append({"backend": b, "skipped": f"runs on {where} only"})
                    continue
                if b == "manual" and not fits:
                    entry["dependency"].append({"backend": b, "skipped": f"reference does not fit: {why}"})
                    continue
                progress(f"{spec}: dependency pattern with {b}")
                try:
                    checked = stack if stack is not None else task if task is not None else mask
                    result = run_check(checked, None if stack is not None else args.layers, b, device,
                                       seeds=args.seeds, config=config, label=spec if kind == "mask" else "")
                    e = _dependency_entry(result, b)
                    ok &= result.report.agrees and (task is None or result.gradients_match_theory)
                    if b == "sdpa" and first_sdpa is None and stack is None:
                        first_sdpa = (mask, result.report.seconds)
                except Exception as exc:  # noqa: BLE001
                    e = {"backend": b, "error": _error(exc)}
                    ok = False
                entry["dependency"].append(e)
                progress(f"  {json.dumps({k: v for k, v in e.items() if not k.endswith('_first')})}")
                save()
                if device == "cuda":
                    torch.cuda.empty_cache()
        if args.naive_sample > 0 and first_sdpa is not None:
            progress("naive baseline: one backward per output position, on a sample of positions")
            try:
                record["naive_baseline"] = naive_baseline(first_sdpa[0], config, "sdpa", device,
                                                          first_sdpa[1], args.naive_sample)
            except Exception as exc:  # noqa: BLE001
                record["naive_baseline"] = {"error": _error(exc)}
    record["all_agree"] = ok
    record["finished"] = True
    save()
    progress(f"done: all_agree = {ok}; written to {args.out}")
    return 0 if ok else 1


def _finite(x):
    return None if x is None or not math.isfinite(x) else x


if __name__ == "__main__":
    sys.exit(main())

"""``hasse gpu-check MASK|TASK``: confirm the theory in real PyTorch attention layers.

Parses the command, runs :mod:`gpu_check.check` and prints its report or JSON: the
observed dependency pattern against ``R(L)``, and for a task its leak and isolation
gradients. ``--train-demo`` is handed to :mod:`hasse.cli.train_demo`.

Needs torch (``pip install 'hasse-attention[torch]'``); without it the command
says so and exits 2 (:func:`gpu_check.torch_extra.require_torch`). Everything
torch-related lives in ``gpu_check/``, imported only after that check.
"""

from __future__ import annotations

import math

from hasse.gpu_check.torch_extra import require_torch
from hasse.cli.masks_in import (add_code_timeout_argument, add_convention_argument, add_heads_batch_arguments,
                            add_stack_arguments)
from hasse.views.output import ascii_aware, emit_json, json_header, spec_of, warn
from hasse.cli.parsers import add_command, integer
from hasse.views.tables import capped_rows, cut_items
from hasse.theory.errors import InputError
from hasse.cli.train_demo import add_train_demo_arguments, check_train_demo_args, run_train_demo

DESCRIPTION = """\
Run a seeded stack of L pre-norm Transformer blocks (LayerNorm, masked multi-head
attention, residual; LayerNorm, MLP, residual) with a real attention kernel and
read which outputs depend on which inputs:

  observed[q, k]  iff  u_q . d out_q / d x_k is nonzero in some seed, for a random
                       probe u_q (batched vector-Jacobian products; exactly zero
                       whenever the Jacobian block is), or, for a kernel without
                       a backward (FlexAttention on the CPU), iff perturbing
                       input k changes output q by more than 16 x the backend's
                       own noise (the unperturbed forward twice and with a zero
                       perturbation, measured in the same run; "noise:" in the
                       report, "noise" in the JSON).

Theory says output q can depend on input k only if R(L)[q, k] (k reaches q in at
most L attention hops). A nonzero where R(L) is false is UNEXPECTED: the kernel or
the way the mask reaches it leaks. A reachable pair that is zero in every seed is
MISSING (a zero in only some seeds is a cancellation, counted but not reported).

For a TASK the inputs are embedded (symbol + position embedding) and, for every
supervised position, the gradient with respect to every input holding its target
is reported: a leak-free design shows exact zeros; a leaky one shows nonzeros
exactly where `hasse leak TASK --layers L` names a leak.

--stack SPEC (a mask per layer, e.g. "sliding_window:w=4 x5, causal"; or a preset
such as gemma3:n=64,scale=64 given as MASK) builds a model whose block i runs layer i
of the stack and compares it with the stack's R(L) = A_L ... A_1; L defaults to the
stack's depth, and past it the layers cycle. A recurrent layer (recurrent[:chunk=C])
runs as a real gated linear recurrence computed by a scan, its state reset where the
pattern says, whatever the backend, so the gradients test the dependency pattern the
theory assumes for it. With --stack, MASK is left out (give --n when the layers have
no size) or is a TASK whose inputs and labels run through the stack.

--train-demo trains a tiny model on i.i.d. random tokens with the clean design and
with its leaky twin: the clean loss cannot go below ln V, the leaky one falls to 0.
"""

EPILOG = """\
MASK or TASK: a TASK is a built-in task spec (see `hasse catalog`, "tasks") or a
task .json file (one with "inputs"); anything else is read as a MASK (spec, .npy,
.txt/.csv, .json with a "mask" field, or file.py:mask_mod with --n). A name that is
both (butterfly, block_two_stream) is checked as the task, which includes its mask.

backends:
  manual   the reference: where(M, scores, -inf) + softmax
  sdpa     F.scaled_dot_product_attention with the boolean mask (True = attend)
  flex     FlexAttention, create_block_mask(..., device=...); on the CPU forward
           only, so the pattern comes from forward perturbations (bit-identical
           outputs required where no path exists)
  mha      nn.MultiheadAttention; its attn_mask means True = blocked, so the kit
           passes ~M (converted explicitly)
  additive eager attention with an additive float mask (0 / finfo.min), as
           Hugging Face's eager path builds it
  sdpa_float  F.scaled_dot_product_attention with that float mask

empty rows (queries attending no key): the kernel decides what they depend on.
gpu-check first runs one attention call and reports what the backend gives there
(NaN, zeros, or attention over every key), then checks the stack against R(L) of
the mask read that way (zeros: --empty-rows attend-none; every key: attend-all).
A kernel that gives NaN fails the check (exit 1).

precision: float64 on the CPU, float32 on CUDA; CPU runs use one thread.
Default L: the mask's convergence depth L* (so R(L) is the limit), at least 1 and
at most 6; with --stack, the stack's depth. An attention layer of a stack with an
empty row is refused (check that layer alone).

examples:
  hasse gpu-check butterfly:n=6                        clean: exact zeros, exit 0
  hasse gpu-check bad_butterfly_self:n=4 --json         leak gradients at every P_k, exit 1
  hasse gpu-check sliding_window:n=32,w=4 --layers 2 --backend sdpa
  hasse gpu-check causal:n=64 --backend flex --device cuda
  hasse gpu-check butterfly:n=8 --train-demo --png losses.png
  hasse gpu-check --stack "sliding_window:w=2 x2, causal, recurrent:chunk=4" --n 12
  hasse gpu-check gemma3:n=24,scale=256 --layers 8 --backend sdpa
  hasse gpu-check butterfly:n=3 --stack "causal x2"      the task through a stack: leaks, exit 1

exit status: 0 pattern equals R(L) and no leak gradient; 1 unexpected or missing
dependencies, or a nonzero leak/isolation gradient (--train-demo: the curves do not
show the leak); 2 bad input, or torch not installed.
"""

TABLE_ROWS = 20


def register(sub) -> None:
    p = add_command(sub, "gpu-check", "confirm no-leak gradients in real attention layers (needs torch)",
                    DESCRIPTION, EPILOG)
    p.add_argument("subject", metavar="MASK|TASK", nargs="?",
                   help="built-in spec, task .json, or mask file / mask_mod (optional with --stack)")
    p.add_argument("--layers", type=integer("--layers", 0), metavar="L", help="number of Transformer blocks (default: L*, 1 to 6)")
    p.add_argument("--backend", default="manual", choices=("manual", "sdpa", "flex", "mha", "additive", "sdpa_float"),
                   help="attention kernel (default: manual)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="auto picks CUDA when available (default: auto)")
    p.add_argument("--seeds", type=integer("--seeds", 1), default=3, metavar="S",
                   help="seeds (weights, inputs, probes); a reachable pair is missing only if zero in all (default 3)")
    p.add_argument("--n", type=integer("--n", 1), help="size at which to evaluate a file.py:mask_mod (with --stack: of its layers)")
    add_heads_batch_arguments(p, "fails")
    add_stack_arguments(p)
    add_convention_argument(p)
    p.add_argument("--trust-code", action="store_true",
                   help="let a .json task whose 'mask' names file.py:function run it (default: refused)")
    add_code_timeout_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--out", metavar="FILE", help="also write that JSON object to FILE (the terminal gets the report)")
    p.add_argument("--ascii", action="store_true", help="ASCII characters only")
    add_train_demo_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def names_a_task(source: str) -> bool:
    """True when ``source`` is a task .json file (it has "inputs") or names a catalogue task."""
    from hasse.theory.inputs.tasks import names_a_task as classify

    return classify(source)


# Size guard (issue 10): real layers hold L blocks of weights and n^2 gradient norms per seed.
MAX_LAYERS, MAX_SEEDS, MAX_POSITIONS, MAX_VOCAB, MAX_STEPS = 64, 64, 8192, 1 << 20, 10 ** 6


def _check_args(args) -> None:
    if args.repeat is not None and args.stack is None:
        raise InputError("--repeat repeats the layers of --stack; give --stack SPEC")
    for flag, value in (("--heads", args.heads), ("--batch", args.batch)):
        if value is not None and (args.stack is not None or args.train_demo):
            raise InputError(f"{flag} applies to a MASK, not to {'--stack' if args.stack is not None else '--train-demo'}")
    if args.train_demo and args.stack is not None:
        raise InputError("--train-demo trains one mask at every layer; it does not take --stack")
    if args.layers is not None and args.layers < 0:
        raise InputError(f"--layers must be >= 0, got {args.layers}")
    if args.layers is not None and args.layers > MAX_LAYERS:
        raise InputError(f"--layers {args.layers}: a stack of more than {MAX_LAYERS} real blocks is not built "
                         f"(R(L) settles by L = n - 1; `hasse leak --layers L` answers any depth)")
    if args.seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {args.seeds}")
    if args.seeds > MAX_SEEDS:
        raise InputError(f"--seeds must be at most {MAX_SEEDS} (each seed is a full gradient pass), got {args.seeds}")
    if args.train_demo and (args.vocab > MAX_VOCAB or args.steps > MAX_STEPS):
        raise InputError(f"--vocab must be at most {MAX_VOCAB:,} and --steps at most {MAX_STEPS:,}, "
                         f"got {args.vocab:,} and {args.steps:,}")
    check_train_demo_args(args)


CPU_WORK = 1 << 32  # on the CPU: n^3 x seeds x layers at most this (n = 1024, 3 seeds, 1 layer: about 2 minutes)


def check_positions(n: int, seeds: int, layers=None, device: str = "cuda") -> None:
    """The size guard on positions: ``n^2`` gradient norms per seed and ``n`` backward passes (exit 2 beyond).

    On the CPU the work (``n`` vector-Jacobian products of ``n^2`` per layer and seed) is
    bounded too: ``n^3 x seeds x layers`` at most :data:`CPU_WORK`; ``layers()`` is called
    only there (the default depth needs the mask's analysis).
    """
    if n > MAX_POSITIONS:
        raise InputError(f"gpu-check is limited to {MAX_POSITIONS:,} positions, got {n:,} (about {n * n * seeds:,} "
                         f"gradient norms over {n:,} backward passes)")
    if device == "cpu":
        depth = max(1, layers() if callable(layers) else (layers or 1))
        if n ** 3 * seeds * depth > CPU_WORK:
            raise InputError(f"gpu-check on the CPU is limited to n^3 x seeds x layers <= 2^32, got {n:,}^3 x {seeds} "
                             f"x {depth} = {n ** 3 * seeds * depth:.1e} (n backward passes of n^2 per layer and "
                             "seed); use --device cuda, fewer positions, --seeds or --layers, or hasse leak (any size)")


def run(args) -> int:
    _check_args(args)
    require_torch("gpu-check")
    from hasse.gpu_check.config import resolve_device, torch_threads

    device = resolve_device(args.device)
    with torch_threads(1 if device == "cpu" else None):  # small tensors: one thread (gpu_check/config.py)
        return _run_on(args, device)


def _run_on(args, device: str) -> int:
    if args.train_demo:
        return run_train_demo(args, device)
    from hasse.gpu_check.check import MAX_DEFAULT_LAYERS, default_layers, mask_to_gpu_check, task_to_gpu_check

    if args.stack is not None or names_a_preset(args.subject):
        return _run_stack(args, device)
    if args.subject is None:
        raise InputError("give a MASK or TASK, or --stack SPEC (with --n N when its layers have no size)")
    if names_a_task(args.subject):
        from hasse.theory.inputs.tasks import load_task

        from hasse.gpu_check.mask_mod import torch_fallback_or_none

        from hasse.gpu_check.torch_masks import torch_reader_or_none

        if args.heads is not None or args.batch is not None:
            raise InputError("--heads and --batch apply to a MASK (a task file has one mask)", args.subject)
        task = load_task(args.subject, trust_code=args.trust_code, fallback=torch_fallback_or_none(),
                         torch_reader=torch_reader_or_none())
        subject, mask, names = task.name or args.subject, task.mask, task.names
    else:
        from hasse.cli.masks_in import load_heads

        task = None
        named, grid = load_heads(args.subject, n=args.n, heads=args.heads, batch=args.batch,
                                 trust_code=args.trust_code, convention=args.convention)
        if named.key_only:  # real layers run Q = K; a cache row would be an empty query row (NaN or zeros)
            raise InputError(f"gpu-check runs square masks only; this one has {named.queries} query row(s) and "
                             f"{named.n} key columns (key-only {named.key_only_kind} positions); check it with "
                             "hasse analyze / flow, or give the full square mask", args.subject)
        subject, mask, names = named.spec or args.subject, named.matrix, named.names
    check_positions(mask.shape[0], args.seeds, args.layers if args.layers is not None else lambda: default_layers(mask),
                    device)
    if args.layers is None and not args.json:
        from hasse.theory.order import mask_to_order

        depth = mask_to_order(mask).convergence_depth
        if depth > MAX_DEFAULT_LAYERS:
            warn(f"convergence depth L* = {depth}: checking L = {default_layers(mask)} layers (give --layers)")
    if task is not None:
        result = task_to_gpu_check(task, args.layers, args.backend, device, seeds=args.seeds)
    elif grid.batch_rows > 1:
        return _run_batch_rows(args, device, grid, subject, names)
    else:
        result = mask_to_gpu_check(mask, args.layers, args.backend, device, seeds=args.seeds, subject=subject)
    spec = spec_of(args.subject, "task" if task is not None else "mask")
    return _emit(args, result, subject, names, spec)


MAX_BATCH_ROWS = 64  # distinct batch rows checked for real (each a full gradient check)


def _run_batch_rows(args, device: str, grid, subject: str, names) -> int:
    """Every batch row of a MASK checked on its own (its union over heads, as batch row 0 alone would be);
    equal rows are checked once. The report is the first failing row's (else row 0's), with every row's verdict."""
    from hasse.gpu_check.check import mask_to_gpu_check

    masks = [grid.masks[b].any(axis=0) for b in range(grid.batch_rows)]
    distinct = {m.tobytes(): m for m in masks}
    if len(distinct) > MAX_BATCH_ROWS:
        raise InputError(f"gpu-check runs each batch row for real: at most {MAX_BATCH_ROWS} distinct batch rows, got "
                         f"{len(distinct):,} (check fewer rows, e.g. a slice of the array)", args.subject)
    done = {}
    for key, m in distinct.items():
        done[key] = mask_to_gpu_check(m, args.layers, args.backend, device, seeds=args.seeds, subject=subject)
    results = [done[m.tobytes()] for m in masks]
    worst = next((b for b, r in enumerate(results) if not r.passed), 0)
    rows = [{"batch": b, "passed": r.passed, "unexpected": len(r.report.unexpected),
             "missing": len(r.report.missing)} for b, r in enumerate(results)]
    label = f"{subject} [batch row {worst} of {grid.batch_rows}]"
    head = json_header("gpu-check", args.subject, spec_of(args.subject, "mask"))
    if (args.json or args.out) and emit_json(args, {**head, "mode": "check", **gpu_check_json(results[worst], label),
                                                    "batch_rows": rows, "batch_row": worst}):
        pass
    else:
        print(f"{len(rows)} batch rows: " + ", ".join(f"{r['batch']}: {'PASS' if r['passed'] else 'FAIL'}"
                                                      for r in rows) + f"; batch row {worst} in full:")
        print(gpu_check_report(results[worst], label, names))
        if args.out:
            print(f"JSON written to {args.out}")
    return 0 if all(r.passed for r in results) else 1


def _emit(args, result, subject: str, names, spec, given=None) -> int:
    """Print the report or emit the JSON; ``given`` is the header's input (default: MASK|TASK as given)."""
    head = json_header("gpu-check", args.subject if given is None else given, spec)
    if (args.json or args.out) and emit_json(args, {**head, "mode": "check", **gpu_check_json(result, subject)}):
        pass
    else:
        print(gpu_check_report(result, subject, names))
        if args.out:
            print(f"JSON written to {args.out}")
    return 0 if result.passed else 1


def names_a_preset(source) -> bool:
    """True when ``source`` is a model preset spec (``gemma3:n=64``): a whole stack, checked as ``--stack``."""
    from hasse.theory.catalog import get_entry, parse_spec
    from hasse.theory.inputs.masks import source_kind

    if not isinstance(source, str) or source_kind(source) != "spec":
        return False
    try:
        get_entry(parse_spec(source)[0].strip(), "stack")
    except InputError:
        return False
    return True


def _run_stack(args, device: str) -> int:
    """``--stack SPEC`` (or a preset as MASK): block i runs layer i; a TASK's inputs run through the stack."""
    from hasse.gpu_check.check import stack_to_gpu_check
    from hasse.cli.masks_in import load_stack

    text, task = args.stack, None
    if text is None:  # a preset given as MASK is the whole stack
        text = args.subject
    elif args.subject is not None:
        if not names_a_task(args.subject):
            raise InputError("--stack gives every layer's mask: give a TASK with it (its inputs and labels run "
                             "through the stack) or no MASK at all", args.subject)
        from hasse.theory.inputs.tasks import load_task

        from hasse.gpu_check.mask_mod import torch_fallback_or_none
        from hasse.gpu_check.torch_masks import torch_reader_or_none

        task = load_task(args.subject, trust_code=args.trust_code, fallback=torch_fallback_or_none(),
                         torch_reader=torch_reader_or_none())
        if args.n is not None and args.n != task.size:
            raise InputError(f"--n {args.n}: the task has {task.size} positions", args.subject)
    n = task.size if task is not None else args.n
    stack = load_stack(text, n, args.repeat, trust_code=args.trust_code, convention=args.convention)
    if task is not None and stack.n != task.size:
        raise InputError(f"the stack has {stack.n} positions, the task {task.size}", args.subject)
    check_positions(stack.n, args.seeds, stack.depth if args.layers is None else args.layers, device)
    layers = stack.depth if args.layers is None else args.layers
    if layers > MAX_LAYERS:
        raise InputError(f"the stack has {stack.depth} layers: more than {MAX_LAYERS} real blocks are not built; "
                         "give --layers L (R(L) of any depth: `hasse leak --stack`)", text)
    result = stack_to_gpu_check(stack, layers, args.backend, device, task=task, seeds=args.seeds,
                                subject=(task.name or args.subject) if task is not None else stack.spec)
    names = task.names if task is not None else [str(i) for i in range(stack.n)]
    if task is not None:  # the header names the TASK; the stack is in the "stack" field
        return _emit(args, result, result.subject, names, spec_of(args.subject, "task"))
    return _emit(args, result, result.subject, names, stack.spec, given=text)  # as analyze: the stack as given


def _number(x: float):
    """A JSON-safe float: NaN (a kernel produced NaN) becomes null."""
    return None if math.isnan(x) else x


def gpu_check_json(result, subject: str) -> dict:
    """The JSON object of ``hasse gpu-check`` (design.md §7 fields and a few more)."""
    r = result.report
    leak = None if result.leak_gradients is None else [
        {"position": g.position, "targets": list(g.targets), "max_norm": _number(g.max_norm),
         "gradients": [{"source": s.source, "target": s.target, "norm": _number(s.norm),
                        "path_exists": s.path_exists, "dependent": s.dependent} for s in g.gradients]}
        for g in result.leak_gradients]
    isolation = None if result.isolation_gradients is None else [
        {"position": x.position, "source": x.source, "norm": _number(x.norm), "path_exists": x.path_exists}
        for x in result.isolation_gradients]
    theory_leaks = None if result.theory_leaks is None else [x.to_json() for x in result.theory_leaks]
    return {
        "subject": subject,
        "kind": result.kind,
        "positions": int(r.theory.shape[0]),
        "backend": r.backend,
        "device": r.device,
        "dtype": r.dtype,
        "layers": r.layers,
        "method": r.method,
        "batching": r.batching,
        "seeds": int(r.norms.shape[0]),
        "agrees": r.agrees,
        "unexpected": [list(p) for p in r.unexpected],
        "missing": [list(p) for p in r.missing],
        "cancelled": r.cancelled,
        "noise": r.noise_json(),
        "reachable_pairs": int(r.theory.sum()),
        "leak_gradients": leak,
        "isolation_gradients": isolation,
        "theory_leaks": theory_leaks,
        "gradients_match_theory": result.gradients_match_theory if result.kind == "task" else None,
        "passed": result.passed,
        "seconds": round(r.seconds, 4),
        "empty_rows": None if result.empty_rows is None else result.empty_rows.to_json(),
        **({} if result.stack is None else {"stack": _stack_json(result.stack)}),
    }


def _stack_json(stack) -> dict:
    """The ``stack`` field (with --stack only), as leak and flow write it (schema ``stack_ref``)."""
    from hasse.cli.leak import stack_json
    from hasse.theory.stack import propagate

    return stack_json(stack, propagate(stack))


def stack_lines(stack, layers: int) -> list[str]:
    """The report's lines on a stack: its depth, its note, and the layers the L blocks ran, as runs."""
    head = f"stack of {stack.depth} layer(s)"
    if layers < stack.depth:
        head += f"; L = {layers} blocks run its first {layers}"
    elif layers > stack.depth:
        head += f"; L = {layers} blocks run it cycled"
    lines = [head + (f" ({stack.note})" if stack.note else "")]
    ran = {"attention": "attention: the backend on this mask",
           "recurrent": "recurrent: a gated linear recurrence by a scan, reset where its pattern says"}
    runs: list[list] = []
    for i in range(layers):
        layer = stack.layer(i)
        if runs and runs[-1][2] is layer:
            runs[-1][1] = i + 1
        else:
            runs.append([i + 1, i + 1, layer])

    def row(run) -> str:
        a, b, layer = run
        where = f"block {a}" if a == b else f"blocks {a}-{b}"
        return f"  {where:<14} {layer.spec}  ({ran[layer.kind]})"

    return lines + capped_rows(runs, row, TABLE_ROWS)


def _pair(q: int, k: int, names) -> str:
    def one(v):
        return str(v) if names[v] == str(v) else f"{names[v]}({v})"

    return f"{one(k)} -> {one(q)}"


def noise_line(r) -> str:
    """The report's line on the noise measured and the rule that decided (gpu_check/dependency.py)."""
    if r.thresholds is None:
        return "noise: none (a vector-Jacobian product is exactly zero where no path exists): any nonzero counts"
    n = r.noise_json()
    if n["largest"] == 0:
        return ("noise: the forward twice and with a zero perturbation gave bit-identical outputs: any nonzero "
                "change counts")
    worst = int(r.noise.max(axis=0).argmax())
    return (f"noise: the forward twice and with a zero perturbation differ by up to {n['largest']:.3g} (output "
            f"{worst}; {n['relative']:.3g} relative): a change counts above {n['margin']:g} x max(noise_q, "
            f"{n['relative']:.3g} x |out_q|), detection limit {n['detection_limit']:.3g}")


def gpu_check_report(result, subject: str, names) -> str:
    """The human report of ``hasse gpu-check``."""
    r = result.report
    t = r.theory.shape[0]
    how = {"vmap": "vector-Jacobian products batched by vmap", "replicate": "vector-Jacobian products batched "
           "in the batch dimension", "loop": "one vector-Jacobian product per output position",
           None: "forward perturbations (no backward here)"}
    lines = [
        f"gpu-check {subject} ({result.kind}, {t} positions): backend {r.backend} on {r.device}, {r.dtype}, "
        f"L = {r.layers}, {r.norms.shape[0]} seed(s), {how[r.batching]}",
    ]
    reach = int(r.theory.sum())
    lines.append(noise_line(r))
    if result.empty_rows is not None:
        e = result.empty_rows
        said = {"nan": "NaN (the model's outputs are NaN from there on: the check fails)",
                "zeros": "zeros (the query keeps its residual only): checked as --empty-rows attend-none",
                "attend-all": "attention over every key: checked as --empty-rows attend-all",
                "other": "neither NaN, zeros nor attention over every key: the check fails"}[e.behaviour]
        shown = cut_items(e.rows, 10, show=lambda q: str(q) if names[q] == str(q) else f"{names[q]}({q})")
        lines.append(f"empty rows {shown}: backend {e.backend} on {e.device} gives {said}")
    if result.stack is not None:
        lines += stack_lines(result.stack, r.layers)
    zero = "exactly zero" if r.detection_limit == 0 else "within the noise"
    if r.agrees:
        lines.append(f"dependency pattern: observed == R({r.layers}) on all {t * t} pairs "
                     f"({reach} reachable, {t * t - reach} {zero}"
                     + (f"; {r.cancelled} zero in some seeds only" if r.cancelled else "") + ")")
    else:
        lines.append(f"dependency pattern DIFFERS from R({r.layers}): {len(r.unexpected)} unexpected, "
                     f"{len(r.missing)} missing")
        largest = r.norms.max(axis=0)
        above = "nonzero" if r.detection_limit == 0 else "above the noise"
        for title, pairs in ((f"unexpected ({above} where no path exists)", r.unexpected),
                             (f"missing (a path exists, not {above} in any seed)", r.missing)):
            if pairs:
                lines.append(f"  {title}:")
                lines += capped_rows(pairs, lambda qk: f"    {_pair(*qk, names):<24} norm {largest[qk[0], qk[1]]:.3g}",
                                     TABLE_ROWS, indent="    ")
    if result.leak_gradients is not None:
        grads = result.leak_gradients
        leaking = [g for g in grads if g.leaks]
        if not leaking:
            lines.append(f"leak gradients: all {len(grads)} supervised position(s) {zero} with respect to "
                         "every input holding their target")
        else:
            lines.append(f"leak gradients: NONZERO at {len(leaking)} of {len(grads)} supervised position(s)")
            lines.append(f"  {'position':<12} {'target':>6} {'source':<12} {'norm':>9}")
            rows = [(g, s) for g in leaking for s in g.gradients if s.dependent]

            def row(pair) -> str:
                g, s = pair
                return (f"  {names[g.position] + f' ({g.position})':<12} {s.target:>6} "
                        f"{names[s.source] + f' ({s.source})':<12} {s.norm:>9.3g}")

            lines += capped_rows(rows, row, TABLE_ROWS)
        named = {(x.position, x.source) for x in result.theory_leaks}
        seen = {(g.position, s.source) for g in grads for s in g.gradients if s.dependent}
        agree = named <= seen and result.gradients_match_theory
        where = f"theory (hasse leak{' --stack SPEC' if result.stack is not None else ''} --layers {r.layers})"
        if not agree:
            lines.append(f"{where}: {len(named)} leak(s); the gradients DISAGREE with it")
        elif not named:
            lines.append(f"{where}: leak-free, as the gradients show")
        else:
            lines.append(f"{where}: {len(named)} leak(s); gradients are nonzero at every witness source it names, "
                         "and only where a path exists")
        if result.isolation_gradients:
            lines.append(f"isolation: {len(result.isolation_gradients)} nonzero dependencies between isolate "
                         "groups (packed documents read each other)")
    if result.passed:
        verdict = "PASS"
    elif r.unexpected:
        verdict = "FAIL: the implementation leaks (dependencies where no path exists)"
    elif r.missing:
        verdict = "FAIL: dependencies missing in every seed"
    elif any(g.leaks for g in result.leak_gradients or ()):
        verdict = "FAIL: the design leaks (theory and gradients agree)"
    else:
        verdict = "FAIL: the design breaks isolation (theory and gradients agree)"
    lines.append(f"verdict: {verdict} ({r.seconds:.2f} s)")
    return "\n".join(lines)

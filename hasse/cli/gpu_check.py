"""``hasse gpu-check MASK|TASK``: confirm the theory in real PyTorch attention layers.

Parses the command, reads MASK|TASK and --stack, runs :func:`gpu_check.check.run_check`
once (once per distinct batch row of a mask) and prints its report or JSON
(:mod:`hasse.views.gpu_report`): the observed dependency pattern against ``R(L)``, and
for a task its leak and isolation gradients. ``--train-demo`` is handed to
:mod:`hasse.cli.train_demo`.

Needs torch (``pip install 'hasse-attention[torch]'``); without it the command
says so and exits 2 (:func:`gpu_check.torch_extra.require_torch`). Everything
torch-related lives in ``gpu_check/``, imported only after that check.
"""

from __future__ import annotations

from typing import NamedTuple

from hasse.cli.arguments import (add_code_timeout_argument, add_convention_argument, add_heads_batch_arguments,
                                add_stack_arguments)
from hasse.cli.parsers import add_command, integer
from hasse.cli.train_demo import add_train_demo_arguments, check_train_demo_args, run_train_demo
from hasse.gpu_check.torch_extra import require_torch
from hasse.theory.errors import InputError
from hasse.views.gpu_report import gpu_check_json, gpu_check_report
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header, spec_of, warn

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
    add_json_arguments(p)
    add_train_demo_arguments(p)
    p.set_defaults(run=ascii_aware(run))


# real layers hold L blocks of weights and n^2 gradient norms per seed
MAX_LAYERS, MAX_SEEDS, MAX_POSITIONS, MAX_VOCAB, MAX_STEPS = 64, 64, 8192, 1 << 20, 10 ** 6
CPU_WORK = 1 << 32  # on the CPU: n^3 x seeds x layers at most this (n = 1024, 3 seeds, 1 layer: about 2 minutes)


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
        if args.train_demo:
            return run_train_demo(args, device)
        return _check(args, device)


class Checked(NamedTuple):
    """What gpu-check runs and how it names it."""
    checked: object  # a mask (n, n), a Task, or None (a stack alone)
    stack: object  # the LayerStack of --stack or of a preset given as MASK (None: one mask at every block)
    grid: object  # a MASK's masks per batch row and head (None: a task or a stack)
    label: str  # how the report names it
    names: list  # position names
    head: dict  # the JSON header


def _check(args, device: str) -> int:
    """Read the subject, guard its size, run the one check (each distinct batch row of a mask), print."""
    from hasse.gpu_check.check import run_check

    s = _read(args)
    _guard_size(args, s, device)
    if s.grid is not None and s.grid.batch_rows > 1:
        return _run_batch_rows(args, device, s)
    result = run_check(s.checked, args.layers, args.backend, device, stack=s.stack, seeds=args.seeds, label=s.label)
    return _emit(args, {**s.head, "mode": "check", **gpu_check_json(result, s.label)},
                 lambda: gpu_check_report(result, s.label, s.names), result.passed)


def _read(args) -> Checked:
    """MASK|TASK and --stack (or a preset given as MASK: the whole stack), each read once."""
    from hasse.cli.arguments import reading_of
    from hasse.theory.inputs.read import kind_of, read

    if args.stack is None and args.subject is None:
        raise InputError("give a MASK or TASK, or --stack SPEC (with --n N when its layers have no size)")
    if args.stack is not None and args.subject is not None and kind_of(args.subject) != "task":
        raise InputError("--stack gives every layer's mask: give a TASK with it (its inputs and labels run "
                         "through the stack) or no MASK at all", args.subject)
    given = None if args.subject is None else read(
        args.subject, reading_of(args), accept=("task",) if args.stack is not None else ("preset", "task", "mask"))
    task = given.task if given is not None and given.kind == "task" else None
    if task is not None and args.stack is None and (args.heads is not None or args.batch is not None):
        raise InputError("--heads and --batch apply to a MASK (a task file has one mask)", args.subject)
    if task is not None and args.stack is not None and args.n is not None and args.n != task.size:
        raise InputError(f"--n {args.n}: the task has {task.size} positions", args.subject)
    stack = given.stack if given is not None and given.kind == "preset" else None
    if args.stack is not None:
        stack = read(args.stack, reading_of(args, n=args.n if task is None else task.size),
                     accept=("preset", "stack")).stack
        if task is not None and stack.n != task.size:
            raise InputError(f"the stack has {stack.n} positions, the task {task.size}", args.subject)
    if task is not None:
        head = json_header("gpu-check", args.subject, spec_of(args.subject, "task"))
        return Checked(task, stack, None, task.name or args.subject, task.names, head)
    if stack is not None:  # as analyze: the stack as given, its canonical spec
        head = json_header("gpu-check", args.stack if args.stack is not None else args.subject, stack.spec)
        return Checked(None, stack, None, stack.spec, [str(i) for i in range(stack.n)], head)
    named = given.mask
    if named.key_only:  # real layers run Q = K; a cache row would be an empty query row (NaN or zeros)
        raise InputError(f"gpu-check runs square masks only; this one has {named.queries} query row(s) and {named.n} "
                         f"key columns (key-only {named.key_only_kind} positions); check it with hasse analyze / "
                         "flow, or give the full square mask", args.subject)
    head = json_header("gpu-check", args.subject, spec_of(args.subject, "mask"))
    return Checked(named.matrix, None, given.grid, named.spec or args.subject, named.names, head)


def _guard_size(args, s: Checked, device: str) -> None:
    """The size guard at the depth that will run; a warning when a mask's default depth is cut at its cap."""
    from hasse.gpu_check.check import MAX_DEFAULT_LAYERS, default_layers

    if s.stack is not None:
        layers = s.stack.depth if args.layers is None else args.layers
        check_positions(s.stack.n, args.seeds, layers, device)
        if layers > MAX_LAYERS:
            raise InputError(f"the stack has {s.stack.depth} layers: more than {MAX_LAYERS} real blocks are not "
                             "built; give --layers L (R(L) of any depth: `hasse leak --stack`)",
                             args.stack if args.stack is not None else args.subject)
        return
    mask = s.checked if s.grid is not None else s.checked.mask
    check_positions(mask.shape[0], args.seeds, args.layers if args.layers is not None else lambda: default_layers(mask),
                    device)
    if args.layers is None and not args.json:
        from hasse.theory.order import mask_to_order

        depth = mask_to_order(mask).convergence_depth
        if depth > MAX_DEFAULT_LAYERS:
            warn(f"convergence depth L* = {depth}: checking L = {default_layers(mask)} layers (give --layers)")


def _run_batch_rows(args, device: str, s: Checked) -> int:
    """Every batch row of a MASK checked; the report is the first failing row's (else row 0's), with every
    row's verdict."""
    from hasse.gpu_check.check import run_batch_rows

    results = run_batch_rows(s.grid, args.layers, args.backend, device, seeds=args.seeds, label=s.label,
                             source=args.subject)
    worst = next((b for b, r in enumerate(results) if not r.passed), 0)
    rows = [{"batch": b, "passed": r.passed, "unexpected": len(r.report.unexpected),
             "missing": len(r.report.missing)} for b, r in enumerate(results)]
    label = f"{s.label} [batch row {worst} of {s.grid.batch_rows}]"
    verdicts = ", ".join(f"{r['batch']}: {'PASS' if r['passed'] else 'FAIL'}" for r in rows)
    return _emit(args, {**s.head, "mode": "check", **gpu_check_json(results[worst], label), "batch_rows": rows,
                        "batch_row": worst},
                 lambda: (f"{len(rows)} batch rows: {verdicts}; batch row {worst} in full:\n"
                          + gpu_check_report(results[worst], label, s.names)),
                 all(r.passed for r in results))


def _emit(args, data: dict, report, passed: bool) -> int:
    """The JSON object (``--json``, ``--out``) or the report (``report()``); exit 0 when ``passed``."""
    if not ((args.json or args.out) and emit_json(args, data)):
        print(report())
        if args.out:
            print(f"JSON written to {args.out}")
    return 0 if passed else 1

"""``hasse gpu-check TASK --train-demo``: the training demonstration, run and printed.

Trains the clean design and its leaky twin (:mod:`gpu_check.train_demo`) on i.i.d.
random tokens and prints both loss curves beside ``ln V`` (one row per tenth of the
run), or their JSON; ``--png`` draws them (:func:`hasse.views.draw_curves.draw_curves`).
The options are registered on the ``gpu-check`` parser by
:func:`add_train_demo_arguments`.
"""

from __future__ import annotations

from hasse.views.output import emit_json, json_header, spec_of, warn
from hasse.cli.parsers import integer
from hasse.theory.errors import InputError


def add_train_demo_arguments(parser) -> None:
    """The "training demonstration" option group of ``hasse gpu-check``."""
    demo = parser.add_argument_group("training demonstration")
    demo.add_argument("--train-demo", action="store_true",
                      help="train the clean TASK and its leaky twin on i.i.d. tokens; print both loss curves")
    demo.add_argument("--twin", metavar="SPEC", help="the leaky design to train beside TASK "
                      "(default: butterfly <-> bad_butterfly_self, block_two_stream <-> bad_block_own_content, "
                      "same parameters; given a bad design, its clean twin is trained beside it)")
    demo.add_argument("--steps", type=integer("--steps"), default=300, help="training steps per design (default 300)")
    demo.add_argument("--vocab", type=integer("--vocab"), default=16, metavar="V", help="vocabulary size V (default 16)")
    demo.add_argument("--png", metavar="FILE", help="save both loss curves and ln V as a PNG (needs matplotlib)")


def check_train_demo_args(args) -> None:
    """Raise InputError for --png without --train-demo, or too few steps or symbols."""
    if args.png and not args.train_demo:
        raise InputError("--png draws the loss curves of --train-demo; add --train-demo")
    if args.train_demo and (args.steps < 1 or args.vocab < 2):
        raise InputError(f"--steps must be >= 1 and --vocab >= 2, got {args.steps} and {args.vocab}")


def run_train_demo(args, device: str) -> int:
    from dataclasses import replace

    from hasse.gpu_check.train_demo import BAD_TWIN, DemoConfig, bad_twin, clean_twin, train_demo
    from hasse.theory.catalog import parse_spec
    from hasse.theory.inputs.read import read

    def load_task(source):
        return read(source, accept=("task",)).task

    clean = load_task(args.subject)
    spec = clean.name or args.subject
    if args.twin:
        leaky = load_task(args.twin)
    elif parse_spec(spec)[0] in BAD_TWIN.values():  # a bad design given: train its clean twin beside it
        clean, leaky = load_task(clean_twin(spec)), clean
    else:
        leaky = load_task(bad_twin(spec))
    if clean.tokens != leaky.tokens:
        warn(f"{clean.name} and {leaky.name} have samples of {clean.tokens} and {leaky.tokens} tokens")
    config = replace(DemoConfig(), steps=args.steps, vocab=args.vocab,
                     layers=args.layers if args.layers is not None else DemoConfig.layers)
    backend = args.backend if args.backend != "flex" or device == "cuda" else "sdpa"
    if backend != args.backend and not args.json:
        warn("FlexAttention has no backward on the CPU: training with sdpa")
    demo = train_demo(clean, leaky, config, backend, device)
    if args.png:
        from hasse.views.draw_curves import draw_curves

        draw_curves(demo, args.png)
    if (args.json or args.out) and emit_json(args, {
            **json_header("gpu-check", args.subject, spec_of(args.subject, "task")), "mode": "train-demo",
            "clean": {"task": demo.clean.task, "final": demo.clean.final, "losses": list(demo.clean.losses)},
            "leaky": {"task": demo.leaky.task, "final": demo.leaky.final, "losses": list(demo.leaky.losses)},
            "ln_vocab": demo.ln_vocab, "vocab": config.vocab, "steps": config.steps, "layers": config.layers,
            "backend": backend, "device": device, "shows_leak": demo.shows_leak, "seconds": round(demo.seconds, 3),
        }):
        pass
    else:
        print(train_demo_report(demo))
        if args.png:
            print(f"picture written to {args.png}")
        if args.out:
            print(f"JSON written to {args.out}")
    return 0 if demo.shows_leak else 1


def train_demo_report(demo) -> str:
    """Both loss curves beside ln V, one row per tenth of the run."""
    c = demo.config
    lines = [f"training demo: {c.steps} steps, batch {c.batch}, i.i.d. tokens over V = {c.vocab}, "
             f"{c.layers} layers of width {c.width}",
             f"clean: {demo.clean.task}    leaky: {demo.leaky.task}",
             f"  {'step':>6}  {'clean':>8}  {'leaky':>8}  {'ln V':>6}"]
    every = max(1, c.steps // 10)
    for i in list(range(0, c.steps, every)) + ([c.steps - 1] if (c.steps - 1) % every else []):
        lines.append(f"  {i + 1:>6}  {demo.clean.losses[i]:>8.4f}  {demo.leaky.losses[i]:>8.4f}  {demo.ln_vocab:>6.4f}")
    lines.append(f"final (mean of the last 10 % of steps): clean {demo.clean.task} {demo.clean.final:.4f}, "
                 f"leaky {demo.leaky.task} {demo.leaky.final:.4f}; ln V = {demo.ln_vocab:.4f}")
    lines.append(("the clean design stays at ln V: it cannot see the tokens it predicts; the leaky one copies them"
                  if demo.shows_leak else "the curves do NOT show the expected gap (clean ≥ ln V − 0.1, "
                  "leaky ≤ ln V − 1): try more --steps")
                 + f" ({demo.seconds:.1f} s)")
    return "\n".join(lines)

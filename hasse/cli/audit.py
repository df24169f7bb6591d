"""``hasse audit MODEL``: any model's measured information flow, per layer and per operator, against the intended flow.

Parses the command, builds the audited subject (a configuration built small, the
user's ``file.py:build`` module or a local checkpoint: :mod:`gpu_check.audit.engine`,
:mod:`gpu_check.audit.user_model`), runs the engine or, for ``--scenario decode |
chunked_prefill | prefix_cache``, the schedule comparison (:mod:`gpu_check.audit.schedules`)
and prints the report or JSON (:mod:`hasse.views.audit_report`,
:mod:`hasse.views.schedule_report`). Needs the ``hf`` extra (transformers and torch);
without it the command says so in one line and exits 2.
"""

from __future__ import annotations

import time

from hasse.cli.parsers import add_command, integer
from hasse.theory.errors import InputError
from hasse.views.audit_report import audit_json, audit_report, draw_audit
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header

DESCRIPTION = """\
Measure which outputs of a model depend on which input embeddings, after every layer
and at every operator (attention, linear attention, scans, convolutions, token shifts,
MLPs), and compare with the intended flow. The model is a small transformers model
built from a configuration with seeded random weights (hidden size 64, --layers L;
nothing is downloaded), your own module (--model file.py:build --trust-code) or a local
checkpoint directory (its own weights, offline). The input is a training scenario or
your own batch (--batch):

  measured[l][q, k]  iff  u_q . d h^l_q / d x_k is nonzero in some seed, for a
                         random probe u_q (vector-Jacobian products vmapped over
                         8 output rows), h^l the hidden state after block l.

The same is measured at every operator's output (to name the operator that
introduced a finding) and for each operator's output against its own input (does it
alone keep documents apart?). Without a backward (FlexAttention on the CPU, a state
written in place): measured iff perturbing input k changes the output by more than
16 x the backend's own noise, measured in the same run.

The prediction is R(l) of the INTENDED layer masks: documents isolated, causal
(encoders: bidirectional over non-pad tokens), the configuration's layer pattern
(sliding window per layer_types / sliding_window, Llama 4 chunks by position; linear
attention and scans causal within the document; a convolution-only layer a window of
its kernel), padding keys never attended; or --intended STACK, inside the documents.
Documents come from the scenario or from the batch (position_ids restarting at 0,
cu_seq_lens_q/k, seq_idx), padding from its attention_mask. Padding rows are not compared.

A measured pair that R(l) forbids after SOME layer l is UNEXPECTED (contamination
across documents, a future token, a pad key, a window wider than intended, or a NaN
gradient), reported at the first such layer and through the operator that introduced
it (the first operator of that layer whose output already carries it); a predicted
pair zero in every seed is MISSING. Each operator's own flow (its output against its
own input) says whether it keeps documents isolated.

A sliding window or chunk the input is too short to show is shrunk (and said) when
you did not choose it; when you did (or your module has one), the verdict is
INCONCLUSIVE (exit 3), with the way to shrink it.
"""

EPILOG = """\
MODEL (or --model): a family (llama, mistral, gemma2, gemma3, qwen2, qwen3, gpt_oss,
llama4, bert, xlnet; hybrids: qwen3_next, kimi_linear, lfm2, mamba2, jamba, bamba,
falcon_h1, granitemoehybrid, nemotron_h, zamba2, recurrent_gemma, rwkv, where they
build here), transformers:SomeConfig (any configuration class), a local config.json
or configuration directory (its sizes are overridden by the small ones), a local
checkpoint directory (config.json and weights: its own weights, offline), or
file.py:build / file.py:build(k=v) (your function returning an nn.Module, or a module
and a batch dict; it runs only with --trust-code).

scenarios (--scenario):
  plain        one sequence, no mask (alias: causal)
  packed       documents of --documents back to back, position_ids restarting at 0,
               NO attention_mask
  packed_mask  the same with a 2-D attention_mask of ones
  left_pad     --pad padding positions first (2-D attention_mask), then tokens
  right_pad    tokens, then --pad padding positions
  mask4d       a custom mask (--mask SPEC or file) passed as a 4-D boolean attention_mask
  perm         XLNet's perm_mask of the causal order
  decode       schedules, compared with one full forward (dependencies and values):
  chunked_prefill   a prefix of --prefix P through the cache then one token at a time;
  prefix_cache      the prompt in chunks of --step S through the cache; a prefix
                    cached once, stored, and resumed twice from copies

your batch (--batch FILE.pt|.npz|.json, or the batch your build returns): input_ids
or inputs_embeds, position_ids, attention_mask, cu_seq_lens_q/k, seq_idx, labels;
several rows: --row R (default 0, said in the report).

backends: every attention implementation that builds and runs here (eager, sdpa,
flex_attention; FlexAttention runs in float32 on the CPU and is measured by
perturbation); --backend NAME (repeatable) picks. --compare A,B[,C] runs those on
the same configuration, weights and inputs and reports the pairs measured in one
and not the other.

precision: float64 where the model runs in it, else float32 (said in the report).

examples:
  hasse audit llama                                    clean: exit 0
  hasse audit llama --scenario packed --documents 2+2    documents contaminate: exit 1
  hasse audit llama --scenario packed --documents 2+2 --no-cache   isolated
  hasse audit mistral --scenario left_pad --n 10 --json
  hasse audit gemma3 --layers 6 --compare eager,sdpa --png audit.png
  hasse audit --config transformers:Qwen2Config --scenario right_pad
  hasse audit qwen2 --set use_sliding_window=true --set max_window_layers=1 --window 3
  hasse audit qwen3_next --scenario packed --documents 3+4      per operator: GatedDeltaNet
  hasse audit --model mymodel.py:build --trust-code --batch batch.pt
  hasse audit ./checkpoint --batch batch.pt --intended "sliding_window:w=4; causal"
  hasse audit llama --scenario decode --n 12 --prefix 6

exit status: 0 no unexpected dependency (and, with --compare, the backends agree;
schedules: the same dependencies and values as the full forward); 1 an unexpected
dependency, backends that differ, or a schedule that differs; 2 bad input, or the hf
extra is not installed (pip install 'hasse-attention[hf]'); 3 inconclusive: clean, but
a window or chunk of the pattern is one the input cannot show.
"""

MAX_POSITIONS, MAX_LAYERS, MAX_SEEDS = 4096, 32, 16


def register(sub) -> None:
    p = add_command(sub, "audit", "measure a transformers model's information flow against the intended mask "
                    "(needs the hf extra)", DESCRIPTION, EPILOG)
    p.add_argument("model", nargs="?", default=None, metavar="MODEL",
                   help="family, transformers:SomeConfig, config.json, a checkpoint directory or file.py:build "
                        "(default: llama)")
    p.add_argument("--model", dest="model_flag", metavar="MODEL", help="the same as MODEL")
    p.add_argument("--config", metavar="CONFIG", help="the same as MODEL: transformers:SomeConfig or a config.json")
    p.add_argument("--batch", metavar="FILE", help="your batch (.pt, .npz or .json: input_ids or inputs_embeds, "
                   "position_ids, attention_mask, cu_seq_lens_q/k, seq_idx)")
    p.add_argument("--row", type=integer("--row", 0), default=0, metavar="R",
                   help="the row of a batch of several (default 0)")
    p.add_argument("--intended", metavar="STACK", help="the intended flow: a stack spec or preset, one mask per "
                   "layer, inside the documents (default: the configuration's or the operators' pattern)")
    p.add_argument("--trust-code", action="store_true", help="run the Python code of a file.py:build model")
    p.add_argument("--families", action="store_true",
                   help="list every family: its layer pattern, and whether it builds and runs here (else the "
                        "library's reason); builds each one (about 15 s)")
    p.add_argument("--layers", type=integer("--layers"), default=2, metavar="L", help="number of layers (default 2)")
    p.add_argument("--scenario", default="plain", help="plain, packed, packed_mask, left_pad, right_pad, mask4d, "
                   "perm; schedules: decode, chunked_prefill, prefix_cache (default plain)")
    p.add_argument("--prefix", type=integer("--prefix", 1), metavar="P",
                   help="decode / prefix_cache: positions before the first cached step (default n // 2)")
    p.add_argument("--step", type=integer("--step", 1), metavar="S",
                   help="chunked_prefill: positions per chunk (default n // 4)")
    p.add_argument("--n", type=integer("--n"), metavar="N", help="positions (default 12; packed: the sum of --documents)")
    p.add_argument("--documents", metavar="A+B+…", help="packed document lengths (default: two halves of --n)")
    p.add_argument("--pad", type=integer("--pad"), metavar="P", help="padding positions (default n // 4)")
    p.add_argument("--mask", metavar="MASK", help="mask4d: the intended mask (a spec or a mask file)")
    p.add_argument("--window", type=integer("--window", 1), metavar="W", help="sliding window of the windowed families (default 4)")
    p.add_argument("--chunk", type=integer("--chunk", 1), metavar="C", help="Llama 4 attention chunk (default 4)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="set a configuration field last (repeatable; JSON values: true, 1, [...])")
    p.add_argument("--backend", action="append", metavar="NAME",
                   help="eager, sdpa or flex_attention (repeatable; default: every one that runs here)")
    p.add_argument("--compare", metavar="A,B[,C]", help="compare these backends' measured dependencies")
    p.add_argument("--seeds", type=integer("--seeds"), default=3, metavar="S", help="seeds (weights, inputs, probes; default 3)")
    p.add_argument("--dtype", default="auto", choices=("auto", "float64", "float32"),
                   help="auto: float64 where the model runs in it, else float32")
    p.add_argument("--no-cache", action="store_true",
                   help="pass use_cache=False (default: the model's own default, as a plain call does)")
    p.add_argument("--drop-mask-layer", type=integer("--drop-mask-layer"), metavar="I",
                   help="self-test: drop the attention mask handed to layer I (the audit must fail)")
    p.add_argument("--drop-cache-position", type=integer("--drop-cache-position"), metavar="P",
                   help="self-test of a schedule: the cache loses position P (the comparison must fail)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="where the model runs (cuda: needs a GPU; up to 4096 positions)")
    p.add_argument("--png", metavar="FILE", help="predicted vs measured, side by side (.png, .svg or .pdf)")
    p.add_argument("--certificate", metavar="FILE",
                   help="write the audit's certificate: the JSON report plus the command, the Python, platform, "
                        "transformers and torch versions and the time it took (atomically)")
    add_json_arguments(p)
    p.set_defaults(run=ascii_aware(run))


SCHEDULES = ("decode", "chunked_prefill", "prefix_cache")


def _source(args) -> str:
    given = [v for v in (args.model, args.model_flag, args.config) if v]
    if len(given) > 1:
        raise InputError("give the model once: MODEL, --model or --config")
    return given[0] if given else "llama"


def _is_users(source: str) -> bool:
    """A file.py:build module or a checkpoint directory: the user's own model (fixed weights)."""
    from hasse.gpu_check.audit.user_model import is_checkpoint
    from hasse.theory.inputs.calls import split_function

    return split_function(source) is not None or is_checkpoint(source)


def _check_args(args) -> None:
    if not 1 <= args.layers <= MAX_LAYERS:
        raise InputError(f"--layers must be between 1 and {MAX_LAYERS}, got {args.layers}")
    if not 1 <= args.seeds <= MAX_SEEDS:
        raise InputError(f"--seeds must be between 1 and {MAX_SEEDS}, got {args.seeds}")
    if args.n is not None and not 1 <= args.n <= MAX_POSITIONS:
        raise InputError(f"--n must be between 1 and {MAX_POSITIONS}, got {args.n}")
    if args.drop_mask_layer is not None and not 0 <= args.drop_mask_layer < args.layers:
        raise InputError(f"--drop-mask-layer must be between 0 and {args.layers - 1}, got {args.drop_mask_layer}")
    if args.compare and args.backend:
        raise InputError("give --backend or --compare, not both")
    schedule = args.scenario in SCHEDULES
    for flag, value in (("--prefix", args.prefix), ("--step", args.step),
                        ("--drop-cache-position", args.drop_cache_position)):
        if value is not None and not schedule:
            raise InputError(f"{flag} applies to --scenario {', '.join(SCHEDULES)}, not {args.scenario}")
    if schedule and (args.compare or args.intended or args.batch or args.png):
        raise InputError(f"--scenario {args.scenario} compares a schedule with the full forward: "
                         "it takes no --compare, --intended, --batch or --png")
    if args.documents is not None:  # before transformers is imported, and before any position is laid out
        from hasse.gpu_check.audit.scenarios import ALIASES, parse_lengths

        if ALIASES.get(args.scenario, args.scenario) not in ("packed", "packed_mask") and not args.batch:
            raise InputError(f"--documents applies to --scenario packed or packed_mask, not {args.scenario}")
        parse_lengths(args.documents, MAX_POSITIONS)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise InputError("--device cuda: no CUDA device here (torch.cuda.is_available() is False)")


def _families(args) -> int:
    """``--families``: every family, its pattern at --layers, and whether it builds and runs here."""
    from hasse.gpu_check.audit.models import FAMILIES, ModelSpec, layer_pattern, pattern_text, small_config
    from hasse.gpu_check.audit.models import unavailable_families

    with_reason = unavailable_families()
    rows = []
    for name in FAMILIES:
        try:
            pattern = pattern_text(layer_pattern(small_config(ModelSpec(name, args.layers))))
        except InputError as exc:
            pattern = f"(no configuration: {exc})"
        rows.append({"family": name, "pattern": pattern, "builds": name not in with_reason,
                     "reason": with_reason.get(name)})
    data = {**json_header("audit", "--families", None), "families": rows}
    if not ((args.json or args.out) and emit_json(args, data)):
        print(f"{len(rows)} families, {args.layers} layer(s) each; {len(rows) - len(with_reason)} build and run here")
        for r in rows:
            state = "builds here" if r["builds"] else f"NOT here: {r['reason']}"
            print(f"  {r['family']:<17} {r['pattern']:<40} {state}")
    return 0


def _backends(args):
    if args.compare:
        names = [b.strip() for b in args.compare.split(",") if b.strip()]
        if len(names) < 2:
            raise InputError(f"--compare needs at least two backends, got {args.compare!r}")
        return names
    return args.backend


def _progress():
    """Progress lines on standard error when it is a terminal (a long audit says where it is)."""
    import sys

    if not sys.stderr.isatty():
        return None
    return lambda text: print(f"  … {text}", file=sys.stderr, flush=True)


def _scenario(args):
    from hasse.cli.arguments import reading_of
    from hasse.gpu_check.audit.scenarios import make_scenario, parse_lengths
    from hasse.theory.inputs.read import read

    mask = None if args.mask is None else read(args.mask, reading_of(args), accept=("mask",)).first_row().matrix
    lengths = parse_lengths(args.documents) if args.documents else None
    n = args.n if args.n is not None or lengths or mask is not None else 12
    scenario = make_scenario(args.scenario, n, lengths=lengths, pad=args.pad, mask=mask)
    if scenario.n > MAX_POSITIONS:
        raise InputError(f"at most {MAX_POSITIONS} positions, got {scenario.n}")
    return scenario


def _spec(args, source: str, n: int):
    from hasse.gpu_check.audit.models import ModelSpec, parse_override

    return ModelSpec(source, args.layers, args.window, args.chunk, max_positions=2 * n,
                     overrides=tuple(parse_override(item) for item in args.set))


def _schedule(args, source: str) -> int:
    from hasse.gpu_check.audit.schedules import drop_cache_position, schedule_for_spec
    from hasse.views.schedule_report import schedule_json, schedule_lines

    n = args.n if args.n is not None else 12
    hook = None if args.drop_cache_position is None else drop_cache_position(args.drop_cache_position)
    backend = (_backends(args) or ["eager"])[0]
    if _is_users(source):  # your module or checkpoint, its own weights, called as a transformers model is
        from hasse.gpu_check.audit.schedules import schedule_audit
        from hasse.gpu_check.audit.trace import input_embedding
        from hasse.gpu_check.audit.user_model import is_checkpoint, load_checkpoint, load_model_source

        model = (load_checkpoint(source, backend, args.dtype) if is_checkpoint(source)
                 else load_model_source(source, args.trust_code)[0])
        model.eval()
        width = int(input_embedding(model).weight.shape[1])
        result = schedule_audit(lambda seed: model, width, args.scenario, n, prefix=args.prefix, step=args.step,
                                seeds=args.seeds, dtype=args.dtype, hook=hook, label=source)
    else:
        result = schedule_for_spec(_spec(args, source, n), args.scenario, n, backend=backend, prefix=args.prefix,
                                   step=args.step, seeds=args.seeds, dtype=args.dtype, hook=hook)
    data = {**json_header("audit", source, None), **schedule_json(result), "passed": result.clean}
    if not ((args.json or args.out) and emit_json(args, data)):
        print("\n".join(schedule_lines(result)))
        if args.out:
            print(f"JSON written to {args.out}")
    return 0 if result.clean else 1


def _audit(args, source: str, backends):
    from hasse.gpu_check.audit.engine import audit_subject
    from hasse.gpu_check.audit.report import Setup, audit, drop_mask_hook
    from hasse.gpu_check.audit.user_model import intended_masks_of, subject_of

    if _is_users(source):
        if args.drop_mask_layer is not None:
            raise InputError("--drop-mask-layer plants a bug in a model built from a configuration, not in yours")
        subject = subject_of(source, args.batch, n=args.n, documents=args.documents, row=args.row,
                             trust_code=args.trust_code, layers=args.layers, dtype=args.dtype)
        intended = intended_masks_of(args.intended, subject.layout.n)
        return audit_subject(subject, intended, seeds=args.seeds, backends=backends, progress=_progress(),
                             intended_text=args.intended)
    if args.batch:
        raise InputError("a batch goes with your own module (file.py:build) or a checkpoint; a family or "
                         "configuration is built with random weights and audited on --scenario / --documents",
                         "--batch")
    scenario = _scenario(args)
    hook = drop_mask_hook(args.drop_mask_layer) if args.drop_mask_layer is not None else None
    setup = Setup(_spec(args, source, scenario.n), scenario, seeds=args.seeds, dtype=args.dtype,
                  use_cache=False if args.no_cache else None, hook=hook, device=args.device)
    return audit(setup, backends, intended_masks_of(args.intended, scenario.n), progress=_progress(),
                 intended_text=args.intended)


def run(args) -> int:
    from hasse.gpu_check.torch_extra import has_torch

    from hasse.gpu_check.audit.models import BACKENDS, has_transformers, needs_transformers

    if not has_torch() or not has_transformers():
        raise InputError(needs_transformers())
    if args.families:
        return _families(args)
    _check_args(args)
    source = _source(args)
    backends = _backends(args)
    for name in backends or ():
        if name not in BACKENDS:
            raise InputError(f"unknown backend {name!r} (one of {', '.join(BACKENDS)})")
    from hasse.gpu_check.audit.report import compare_backends, verdict_of
    from hasse.gpu_check.config import torch_threads

    started = time.perf_counter()
    with torch_threads(2):
        if args.scenario in SCHEDULES:
            return _schedule(args, source)
        result = _audit(args, source, backends)
    seconds = time.perf_counter() - started
    differences = compare_backends(result) if args.compare else None
    verdict, status = verdict_of(result, differences)
    passed = status == 0
    if args.png:
        draw_audit(result, args.png)
    data = {**json_header("audit", source, None), **audit_json(result, differences), "passed": passed,
            "verdict": verdict}
    if args.certificate:
        from hasse.proofs.certificates.format import audit_certificate, write_certificate

        write_certificate(args.certificate, audit_certificate(data, seconds, getattr(args, "argv", [])))
    if not ((args.json or args.out) and emit_json(args, data)):
        print(audit_report(result, differences, verdict))
        if args.out:
            print(f"JSON written to {args.out}")
        if args.png:
            print(f"picture written to {args.png}")
        if args.certificate:
            print(f"certificate written to {args.certificate}")
    return status

"""``hasse audit MODEL``: a transformers model's measured information flow against the intended mask.

Parses the command, runs :func:`hasse.gpu_check.audit.report.audit` and prints its report
or JSON (:mod:`hasse.views.audit_report`). Needs the ``hf`` extra (transformers and torch); without it the command
says so in one line and exits 2. transformers is imported only under gpu_check/.
"""

from __future__ import annotations

import time

from hasse.cli.parsers import add_command, integer
from hasse.theory.errors import InputError
from hasse.views.audit_report import audit_json, audit_report, draw_audit
from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header

DESCRIPTION = """\
Build a small transformers model with seeded random weights (hidden size 64, 4 heads,
--layers L), locally (nothing is downloaded), feed it the inputs of a training
scenario and measure which outputs depend on which input embeddings:

  measured[l][q, k]  iff  u_q . d h^l_q / d x_k is nonzero in some seed, for a
                         random probe u_q (batched vector-Jacobian products, the
                         input replicated along the batch), h^l the hidden state
                         after layer l; FlexAttention on the CPU (no backward):
                         iff perturbing input k changes h^l_q by more than
                         16 x the backend's own noise, measured in the same run.

The prediction is R(l) of the INTENDED layer masks: documents isolated, causal
(encoders: bidirectional over non-pad tokens), the configuration's layer pattern
(sliding window per layer_types / sliding_window, Llama 4 chunks by position),
padding keys never attended. Padding query rows are not compared.

A measured pair that R(L) forbids is UNEXPECTED (contamination across documents,
a future token, a pad key, a window wider than intended, or a NaN gradient);
a predicted pair zero in every seed is MISSING. Findings are grouped by source
document -> destination document and by the layer count at which the measured
(unexpected) or predicted (missing) dependency first appears.
"""

EPILOG = """\
MODEL: a family (llama, mistral, gemma2, gemma3, qwen2, qwen3, gpt_oss, llama4,
bert, xlnet), transformers:SomeConfig (any configuration class), or a local
config.json (its sizes are overridden by the small ones).

scenarios (--scenario):
  plain        one sequence, no mask (alias: causal)
  packed       documents of --documents back to back, position_ids restarting at 0,
               NO attention_mask
  packed_mask  the same with a 2-D attention_mask of ones
  left_pad     --pad padding positions first (2-D attention_mask), then tokens
  right_pad    tokens, then --pad padding positions
  mask4d       a custom mask (--mask SPEC or file) passed as a 4-D boolean attention_mask
  perm         XLNet's perm_mask of the causal order

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

exit status: 0 no unexpected dependency (and, with --compare, the backends agree);
1 an unexpected dependency (or backends that differ); 2 bad input, or the hf extra
is not installed (pip install 'hasse-attention[hf]').
"""

MAX_POSITIONS, MAX_LAYERS, MAX_SEEDS = 4096, 32, 16


def register(sub) -> None:
    p = add_command(sub, "audit", "measure a transformers model's information flow against the intended mask "
                    "(needs the hf extra)", DESCRIPTION, EPILOG)
    p.add_argument("model", nargs="?", default=None, metavar="MODEL",
                   help="family, transformers:SomeConfig or config.json (default: llama)")
    p.add_argument("--config", metavar="CONFIG", help="the same as MODEL: transformers:SomeConfig or a config.json")
    p.add_argument("--layers", type=integer("--layers"), default=2, metavar="L", help="number of layers (default 2)")
    p.add_argument("--scenario", default="plain", help="plain, packed, packed_mask, left_pad, right_pad, mask4d, "
                   "perm (default plain)")
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
    p.add_argument("--png", metavar="FILE", help="predicted vs measured, side by side (.png, .svg or .pdf)")
    p.add_argument("--certificate", metavar="FILE",
                   help="write the audit's certificate: the JSON report plus the command, the Python, platform, "
                        "transformers and torch versions and the time it took (atomically)")
    add_json_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def _check_args(args) -> None:
    if args.model and args.config:
        raise InputError("give MODEL or --config, not both")
    if not 1 <= args.layers <= MAX_LAYERS:
        raise InputError(f"--layers must be between 1 and {MAX_LAYERS}, got {args.layers}")
    if not 1 <= args.seeds <= MAX_SEEDS:
        raise InputError(f"--seeds must be between 1 and {MAX_SEEDS}, got {args.seeds}")
    if args.n is not None and not 1 <= args.n <= MAX_POSITIONS:
        raise InputError(f"--n must be between 1 and {MAX_POSITIONS}, got {args.n}")
    for flag in ("window", "chunk"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise InputError(f"--{flag} must be >= 1, got {value}")
    if args.drop_mask_layer is not None and not 0 <= args.drop_mask_layer < args.layers:
        raise InputError(f"--drop-mask-layer must be between 0 and {args.layers - 1}, got {args.drop_mask_layer}")
    if args.compare and args.backend:
        raise InputError("give --backend or --compare, not both")
    if args.documents is not None:  # before transformers is imported, and before any position is laid out
        from hasse.gpu_check.audit.scenarios import ALIASES, parse_lengths

        if ALIASES.get(args.scenario, args.scenario) not in ("packed", "packed_mask"):
            raise InputError(f"--documents applies to --scenario packed or packed_mask, not {args.scenario}")
        parse_lengths(args.documents, MAX_POSITIONS)


def _backends(args):
    if args.compare:
        names = [b.strip() for b in args.compare.split(",") if b.strip()]
        if len(names) < 2:
            raise InputError(f"--compare needs at least two backends, got {args.compare!r}")
        return names
    return args.backend


def run(args) -> int:
    from hasse.gpu_check.torch_extra import has_torch

    _check_args(args)
    from hasse.gpu_check.audit.models import BACKENDS, ModelSpec, has_transformers, needs_transformers, parse_override

    if not has_torch() or not has_transformers():
        raise InputError(needs_transformers())
    backends = _backends(args)
    for name in backends or ():
        if name not in BACKENDS:
            raise InputError(f"unknown backend {name!r} (one of {', '.join(BACKENDS)})")
    from hasse.cli.arguments import reading_of
    from hasse.gpu_check.audit.report import Setup, audit, compare_backends, drop_mask_hook
    from hasse.gpu_check.audit.scenarios import make_scenario, parse_lengths
    from hasse.gpu_check.config import torch_threads
    from hasse.theory.inputs.read import read

    mask = None if args.mask is None else read(args.mask, reading_of(args), accept=("mask",)).first_row().matrix
    lengths = parse_lengths(args.documents) if args.documents else None
    n = args.n if args.n is not None or lengths or mask is not None else 12
    scenario = make_scenario(args.scenario, n, lengths=lengths, pad=args.pad, mask=mask)
    if scenario.n > MAX_POSITIONS:
        raise InputError(f"at most {MAX_POSITIONS} positions, got {scenario.n}")
    model = args.config or args.model or "llama"
    spec = ModelSpec(model, args.layers, args.window, args.chunk, max_positions=2 * scenario.n,
                     overrides=tuple(parse_override(item) for item in args.set))
    hook = drop_mask_hook(args.drop_mask_layer) if args.drop_mask_layer is not None else None
    setup = Setup(spec, scenario, seeds=args.seeds, dtype=args.dtype, use_cache=False if args.no_cache else None,
                  hook=hook)
    started = time.perf_counter()
    with torch_threads(2):
        result = audit(setup, backends)
    seconds = time.perf_counter() - started
    differences = compare_backends(result) if args.compare else None
    passed = not result.unexpected and not any(not d.same for d in differences or ())
    if args.png:
        draw_audit(result, args.png)
    data = {**json_header("audit", model, None), **audit_json(result, differences), "passed": passed}
    if args.certificate:
        from hasse.proofs.certificates.format import audit_certificate, write_certificate

        write_certificate(args.certificate, audit_certificate(data, seconds, getattr(args, "argv", [])))
    if not ((args.json or args.out) and emit_json(args, data)):
        print(audit_report(result, differences, passed))
        if args.out:
            print(f"JSON written to {args.out}")
        if args.png:
            print(f"picture written to {args.png}")
        if args.certificate:
            print(f"certificate written to {args.certificate}")
    return 0 if passed else 1

"""``hasse audit MODEL``: a transformers model's measured information flow against the intended mask.

Parses the command, runs :func:`hasse.gpu_check.audit.report.audit` and prints its report
or JSON. Needs the ``hf`` extra (transformers and torch); without it the command
says so in one line and exits 2. transformers is imported only under gpu_check/.
"""

from __future__ import annotations

import math
import time

from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header
from hasse.cli.parsers import add_command, integer
from hasse.views.tables import capped_rows
from hasse.theory.errors import InputError

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
TABLE_ROWS = 12


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
    if not has_torch():
        from hasse.gpu_check.audit.models import needs_transformers

        raise InputError(needs_transformers())
    from hasse.gpu_check.audit.models import BACKENDS, ModelSpec, has_transformers, needs_transformers

    if not has_transformers():
        raise InputError(needs_transformers())
    backends = _backends(args)
    for name in backends or ():
        if name not in BACKENDS:
            raise InputError(f"unknown backend {name!r} (one of {', '.join(BACKENDS)})")
    from hasse.gpu_check.audit.report import Setup, audit, compare_backends, drop_mask_hook
    from hasse.gpu_check.audit.scenarios import make_scenario, parse_lengths
    from hasse.gpu_check.config import torch_threads

    mask = None
    if args.mask is not None:
        from hasse.cli.masks_in import load

        mask = load(args.mask, n=args.n).matrix
    lengths = parse_lengths(args.documents) if args.documents else None
    n = args.n if args.n is not None or lengths or mask is not None else 12
    scenario = make_scenario(args.scenario, n, lengths=lengths, pad=args.pad, mask=mask)
    if scenario.n > MAX_POSITIONS:
        raise InputError(f"at most {MAX_POSITIONS} positions, got {scenario.n}")
    model = args.config or args.model or "llama"
    from hasse.gpu_check.audit.models import parse_override

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
        write_certificate(args.certificate, data, seconds, getattr(args, "argv", []))
    if not ((args.json or args.out) and emit_json(args, data)):
        print(audit_report(result, differences, passed))
        if args.out:
            print(f"JSON written to {args.out}")
        if args.png:
            print(f"picture written to {args.png}")
        if args.certificate:
            print(f"certificate written to {args.certificate}")
    return 0 if passed else 1


def write_certificate(path: str, data: dict, seconds: float, argv) -> None:
    """The audit certificate: the report's JSON and how it was made (the versions are in ``data["versions"]``)."""
    import json
    import platform
    from datetime import datetime, timezone

    from hasse.views.output import to_jsonable
    from hasse.theory.atomic_file import write_text

    made = {"kind": "audit", "argv": [str(a) for a in argv], "python": platform.python_version(),
            "platform": platform.platform(), "seconds": round(seconds, 3),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    write_text(path, json.dumps({**to_jsonable(data), "certificate": made}, indent=1) + "\n")


def _number(x: float):
    return None if math.isnan(x) else round(float(x), 4)


def _pairs(pairs) -> list:
    return [list(map(int, p)) for p in pairs]


def audit_json(result, differences) -> dict:
    """The JSON object of ``hasse audit`` (less the header and ``passed``)."""
    s = result.scenario
    return {
        "model": result.model,
        "config_class": result.config_class,
        "layers": result.layers,
        "pattern": [{"kind": kind, "size": size} for kind, size in result.pattern],
        "encoder": result.encoder,
        "scenario": {
            "name": s.name, "positions": s.n, "documents": s.docs.tolist(),
            "position_ids": None if s.position_ids is None else s.position_ids.tolist(),
            "attention_mask": None if s.attention_mask is None else s.attention_mask.tolist(),
            "mask4d": None if s.mask4d is None else s.mask4d.astype(int).tolist(),
            "perm_mask": s.perm_mask is not None,
            "excluded_rows": [int(q) for q in range(s.n) if not s.real[q]],
        },
        "seeds": result.seeds,
        "use_cache": result.use_cache,
        "versions": result.versions,
        "device": "cpu",
        "backends": [{
            "backend": b.backend, "dtype": b.dtype, "method": b.method, "clean": b.clean,
            "predicted_pairs": int(b.predicted[-1][s.real].sum()),
            "measured_pairs": int(b.measured[-1][s.real].sum()),
            "noise_rule": "exact" if b.thresholds is None else "measured", "detection_limit": b.detection_limit,
            "unexpected": _pairs(b.unexpected), "missing": _pairs(b.missing), "cancelled": b.cancelled,
            "groups": [g.to_json() for g in b.groups], "seconds": _number(b.seconds),
        } for b in result.backends],
        "skipped": [{"backend": name, "reason": why} for name, why in result.skipped],
        "differences": None if differences is None else [{
            "first": d.first, "second": d.second, "only_first": _pairs(d.only_first),
            "only_second": _pairs(d.only_second)} for d in differences],
    }


WHAT = {"contamination": "contamination", "future": "future-token leak", "pad_key": "pad key attended",
        "window": "outside the intended window/chunk", "nan": "NaN gradient", "missing": "missing"}


def _doc(d: int) -> str:
    return "pad" if d < 0 else f"doc {d}"


def _scenario_line(s) -> str:
    said = {"plain": "one sequence, no mask",
            "packed": "position_ids restart per document, no attention_mask",
            "packed_mask": "position_ids restart per document, 2-D attention_mask of ones",
            "left_pad": "left padding, 2-D attention_mask", "right_pad": "right padding, 2-D attention_mask",
            "mask4d": "a custom 4-D boolean attention_mask", "perm": "XLNet perm_mask of the causal order"}[s.name]
    docs = [int((s.docs == d).sum()) for d in range(int(s.docs.max()) + 1)] if s.real.any() else []
    extra = f", documents {'+'.join(map(str, docs))}" if len(docs) > 1 else ""
    return f"scenario {s.name} ({s.n} positions{extra}; {said})"


def audit_report(result, differences, passed: bool) -> str:
    """The human report of ``hasse audit``."""
    from hasse.gpu_check.audit.report import describe_pattern

    s = result.scenario
    excluded = [q for q in range(s.n) if not s.real[q]]
    cache = {None: "use_cache as the model's default", False: "use_cache=False"}[result.use_cache]
    lines = [
        f"audit {result.model} ({result.config_class}, {result.layers} layer(s): {describe_pattern(result)})",
        _scenario_line(s),
        f"transformers {result.versions['transformers']}, torch {result.versions['torch']}; CPU; "
        f"{result.seeds} seed(s); {cache}",
        "intended: " + ("the given 4-D mask" if s.mask4d is not None else "the perm_mask order" if s.perm_mask
                        is not None else "documents isolated, " + ("bidirectional" if result.encoder else "causal")
                        + ", the configuration's layer pattern, padding keys never attended"),
    ]
    if excluded:
        lines.append(f"padding query rows {excluded[0]}..{excluded[-1]} are excluded from the comparison")
    for b in result.backends:
        noise = "" if b.thresholds is None else f" (above the noise: {b.detection_limit:.3g})"
        head = (f"  {b.backend:<15} {b.dtype}, {b.method:<12} predicted {int(b.predicted[-1][s.real].sum())} pairs, "
                f"measured {int(b.measured[-1][s.real].sum())}{noise}: ")
        if b.clean:
            lines.append(head + "as intended" + (f" ({b.cancelled} zero in some seeds only)" if b.cancelled else ""))
            continue
        lines.append(head + f"{len(b.unexpected)} UNEXPECTED, {len(b.missing)} missing")
        for g in b.groups:
            when = "first measured" if g.kind != "missing" else "predicted from"
            shown = ", ".join(f"{k}->{q}" for q, k in g.pairs[:6]) + (" …" if len(g.pairs) > 6 else "")
            lines.append(f"    {WHAT[g.kind]}: {_doc(g.source_doc)} -> {_doc(g.dest_doc)}, {when} layer {g.layer}: "
                         f"{len(g.pairs)} pair(s) (k->q: {shown})")
    for name, why in result.skipped:
        lines.append(f"  {name:<15} not run here: {why[:160]}")
    if differences is not None:
        for d in differences:
            if d.same:
                lines.append(f"compare {d.first} vs {d.second}: the same dependencies")
                continue
            lines.append(f"compare {d.first} vs {d.second}: DIFFER on {len(d.only_first) + len(d.only_second)} pair(s)")
            for title, pairs in ((f"only in {d.first}", d.only_first), (f"only in {d.second}", d.only_second)):
                if pairs:
                    lines.append(f"  {title}:")
                    lines += capped_rows(pairs, lambda p, d=d: f"    {p[1]} -> {p[0]} (layer {d.layers[p]})",
                                         TABLE_ROWS, indent="    ")
    lines.append("verdict: " + ("PASS" if passed else "FAIL: unexpected dependencies" if result.unexpected
                                else "FAIL: the backends differ"))
    return "\n".join(lines)


def draw_audit(result, path: str) -> None:
    """Predicted R(L) beside the measured dependencies of each backend (missing pairs light)."""
    from hasse.views.draw_mask import heatmap
    from hasse.views.figure import new_figure, picture_format, require_matplotlib, save_png

    picture_format(path)
    require_matplotlib()
    s = result.scenario
    names = [("p" if not s.real[i] else "") + str(i) for i in range(s.n)]
    predicted = result.backends[0].predicted[-1].copy()
    predicted[~s.real] = False  # padding rows (names p0, p1, …) are not compared
    panels = [(f"predicted R({result.layers})", predicted, None)]
    for b in result.backends:
        measured = b.measured[-1].copy()
        measured[~s.real] = False
        panels.append((f"measured, {b.backend}: {len(b.unexpected)} unexpected, {len(b.missing)} missing",
                       measured, predicted))
    side, width, height = 3.2, 3.2 * len(panels) + 0.6, 3.2 + 0.5
    fig = new_figure(width, height)
    for i, (title, mask, reach) in enumerate(panels):
        ax = fig.add_axes(((0.3 + i * side + 0.45) / width, 0.5 / height, (side - 0.7) / width, (side - 0.7) / height))
        heatmap(ax, mask, names, reach=reach, title=title, fontsize=6.0)
    save_png(fig, path)

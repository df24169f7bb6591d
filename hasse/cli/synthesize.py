"""``hasse synthesize TARGET --layers L``: the cheapest mask that realises a target order within a depth budget."""

from __future__ import annotations

import os

import numpy as np

from hasse.cli.arguments import add_convention_argument, reading_of
from hasse.cli.parsers import add_command, integer
from hasse.theory.errors import InputError
from hasse.views.output import ascii_aware, json_header, print_json, progress, spec_of, warn, write_text

HELP = "the cheapest mask that realises a target order within L layers"
DESCRIPTION = """\
Design the cheapest attention mask for a depth budget. TARGET is read as every
command reads its input, and the target T is the LIMIT order of what is read (the
preorder `hasse analyze` prints: R* of a mask, of a task's mask, of a family's
minimal merged task). A mask file (.npy/.txt/.csv/.json) is the target itself
(its diagonal added): it must be transitive.

A mask M realises T within L layers when (M or I)^L == T: with the residual,
every pair of T is reached within L attention hops and nothing outside T is ever
reached, at any depth (no leak, no lost coverage). It then realises T within
every deeper stack too. The dense mask (T itself) realises it in one layer;
with more layers far fewer pairs suffice (a chain of n positions: about n log n
pairs for 2 layers, n log log n for 3).

costs:
  pairs   allowed (query, key) pairs of M, its diagonal left out (attention FLOPs)
  tiles   non-empty B x B tiles of M (--block B, default 128), as FlexAttention's
          create_block_mask counts them; full and partial tiles are both reported,
          for M and for the mask as written (M or I)

methods (the cheapest candidate by the cost is chosen; the others are reported):
  optimal    the exact optimum (CP-SAT, else Z3) for n <= the exact limit, with
             the lower bound that proves it; --timeout S cuts it short: unknown
             (exit 3), the best mask found and the gap
  formula    a closed formula for causal, Butterfly, Block Two-Stream, ... whose
             target equals T: proved for every n by `hasse prove-mask --claim
             realises`; --out FILE.py writes it as a FlexAttention mask_mod
  construction
             a mask built from the target's structure at any n: its classes and
             components (packed documents), each a chain of classes (causal,
             block_causal, prefix_lm, chunked, bidirectional) or a product of
             two chains; checked at this n (realises, and every pair's witness
             walk up to 300,000 pairs), not proved for every n
  heuristic  beyond the exact limit when no formula applies and no construction
             does (or n <= 128, where it may be cheaper): a realising mask and a
             proved lower bound (the LP relaxation, or the necessary pairs)

Every mask is re-checked by the concrete engine ((M or I)^L == T), then three
verdicts are given: leak (nothing outside T at any depth; a task's labels, with
the mask in place of its own: butterfly, block_two_stream, next-token prediction
for a mask), prove-mask (a formula's all-n proof) and gpu-check (real sdpa
layers on M or I, 1 seed, L blocks; on the CPU a formula is run at the largest
smaller instance within the CPU limit). A verdict that fails is a bug of the kit.

--relabel (cost tiles) lets the order of positions change to pack the mask into
fewer tiles; the permutation is reported (new position i holds old perm[i]), a
layout to apply to the sequence. Pairs do not depend on the order: refused with
--cost pairs.

Every mask written for a kernel includes the diagonal (no row is empty: an empty
row is NaN in a plain softmax); --no-diagonal writes M itself.
"""
EPILOG = """\
examples:
  hasse synthesize causal:n=12 --layers 2                 the proved optimum for a chain of 12
  hasse synthesize butterfly:n=1024 --layers 2 --cost tiles
  hasse synthesize causal:n=4096 --layers 3 --out causal3.py   a mask_mod proved for every n
  hasse synthesize infill:n=3 --layers 2 --json          a family's merged order
  hasse synthesize target.npy --layers 3 --cost tiles --block 2 --relabel --out m.npy
  hasse synthesize butterfly:n=8 --layers 2 --png synthesis.png

exit status: 0 a design (optimal, formula, construction or heuristic); 3 unknown (the exact
search ran out of --timeout; the best mask is still written); 1 a verdict failed
(a bug of the kit); 2 bad input.
"""


def register(sub) -> None:
    p = add_command(sub, "synthesize", HELP, DESCRIPTION, EPILOG)
    p.add_argument("target", metavar="TARGET", help="a spec, mask file, task, family or file.py:mask_mod (with --n)")
    p.add_argument("--layers", type=integer("--layers", 1), metavar="L", required=True, help="the depth budget")
    p.add_argument("--cost", choices=("pairs", "tiles"), default="pairs", help="what to minimise (default pairs)")
    p.add_argument("--block", type=integer("--block", 1), default=128, metavar="B",
                   help="the tile side of --cost tiles and of the tile counts (default 128)")
    p.add_argument("--relabel", action="store_true", help="let the positions be reordered (--cost tiles)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds for the exact search (then unknown, exit 3) and for user code")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--out", metavar="FILE", help="write the mask: FILE.py (a formula's mask_mod), FILE.npy or "
                   "FILE.json (the mask as written, M or I)")
    p.add_argument("--png", metavar="FILE", help="draw the dense target beside the design (.png, .svg or .pdf)")
    p.add_argument("--no-diagonal", action="store_true", help="--out .npy/.json writes M without its diagonal")
    p.add_argument("--no-gpu-check", action="store_true", help="skip the real-layers verdict")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="for the gpu-check verdict")
    p.add_argument("--n", type=integer("--n", 1), help="size at which to evaluate a file.py:mask_mod")
    p.add_argument("--trust-code", action="store_true", help="let a .json input that names Python code run it")
    add_convention_argument(p)
    p.add_argument("--ascii", action="store_true", help="ASCII characters only")
    p.set_defaults(run=ascii_aware(run))


def _out_kind(path: str | None, args) -> str | None:
    if path is None:
        return None
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".py", ".npy", ".json"):
        raise InputError(f"--out writes FILE.py, FILE.npy or FILE.json, got {suffix or 'no suffix'!r}", path)
    if suffix == ".py" and args.no_diagonal:
        raise InputError("--no-diagonal applies to --out .npy/.json; a formula's mask_mod includes the diagonal",
                         path)
    return suffix


def write_mask(design, path: str, suffix: str, no_diagonal: bool) -> None:
    """--out: a formula's mask_mod (.py), or the mask as written (M or I; M with ``no_diagonal``) in the order
    of the positions as given."""
    from hasse.theory.atomic_file import atomic_output

    if suffix == ".py":
        write_text(path, design.formula.source())
        return
    mask = design.original_order(design.mask if no_diagonal else design.kernel_mask)
    if suffix == ".json":
        import json

        write_text(path, json.dumps({"mask": mask.astype(int).tolist()}, separators=(",", ":")) + "\n")
        return
    with atomic_output(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, mask)


def run(args) -> int:
    from hasse.views.synthesis_report import design_json, design_of, draw_synthesis, report

    if args.relabel and args.cost != "tiles":
        raise InputError("--relabel reorders positions to pack tiles; pairs do not depend on the order of "
                         "positions (use --cost tiles)")
    suffix = _out_kind(args.out, args)
    design, label, names = design_of(args.target, args.layers, cost=args.cost, block=args.block,
                                     relabel=args.relabel, timeout=args.timeout, gpu_check=not args.no_gpu_check,
                                     device=args.device, reading=reading_of(args),
                                     progress=lambda text: progress(text, True), formula_only=suffix == ".py")
    written = []
    if args.out:
        write_mask(design, args.out, suffix, args.no_diagonal)
        written.append(("mask_mod" if suffix == ".py" else "mask", args.out))
    if args.png:
        draw_synthesis(design, args.png, f"hasse synthesize {label} --layers {args.layers} --cost {args.cost}",
                       names)
        written.append(("picture", args.png))
    if args.json:
        print_json({**json_header("synthesize", args.target, spec_of(args.target)), **design_json(design)})
    else:
        print(report(design, label, written, ascii=args.ascii))
    if design.failed:
        for v in design.failed:
            warn(f"{v.name} verdict FAILED on the synthesised mask: {v.line} -- a bug of the kit, please report it")
        return 1
    return 3 if design.method == "unknown" else 0

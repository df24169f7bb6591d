"""``hasse prove-mask MASK --claim …``: a claim about a mask program for every length at once.

Parses the flags, runs :func:`solvers.symbolic.claim_runs.prove_claim` (MASK and the task as symbolic forms,
``--param-range``, the claim of :data:`solvers.symbolic.claims.CLAIMS`) and prints its verdict, statement,
counterexample and concrete re-check (:mod:`hasse.views.symbolic_report`). Exit codes as ``hasse prove``:
0 proved, 1 refuted (or a re-check that disagrees), 3 unknown, 2 bad input (an untraceable program included).
"""

from __future__ import annotations

from hasse.cli.claim_args import add_common_arguments, finish, preload_torch
from hasse.cli.parsers import add_command, integer
from hasse.theory.errors import InputError
from hasse.views.output import ascii_aware, json_header, spec_of

CLAIMS = ("dense", "leak-free", "isolation", "consistent", "realises")  # the keys of solvers.symbolic.claims.CLAIMS (a test)
SEARCH_LAYERS = 4  # every depth, invariant failed: a walk of at most this many hops is looked for

DESCRIPTION = """\
Prove a claim about a mask for EVERY sequence length at once, not one n at a time.

The mask program (a catalogue rule or your FlexAttention mask_mod) is run once on
symbolic integers: its comparisons and arithmetic become a Z3 formula M[q, k] of the
positions q, k, the length n and every parameter you left out. A claim is then one
Z3 query over all n (and all parameter values): unsat of its negation = proved.

"For all n" here means: every length n (and every value of each parameter left out
of the spec) that satisfies the side conditions printed in the statement, e.g.
"for all 1 <= n <= 2^31 and all l >= 1 with l | n" -- the conditions the program's
own parameter checks demand (a block must divide n), --param-range, and the bound
n <= 2^31 (each parameter within +-2^31). Nothing is claimed outside them. A
division by a value that can be 0 is where torch raises: the claim is refuted
there ("the program fails: ... at n = N, pair (q, k)"), never assumed away.
Lookups into index tensors (document ids, a permutation, a parent function) are
unknown functions with only their declared property (non-decreasing, bijection,
points backward), so a proof holds for every tensor with that property.

The program is traced as FlexAttention runs it: b, h, q_idx, kv_idx are int64
tensors; int64 arithmetic wraps modulo 2^64, bool + bool is "or", // floors and %
takes the divisor's sign. What torch refuses (bool - bool, a tensor in an if or a
chained comparison, torch.minimum(t, 10)) is a program that cannot run: exit 2,
naming your line. A tensor your mask_mod captures is read with its values (the
claim is then for n <= its length) or, with --assume NAME=PROPERTY, as every
tensor with that property.

A factory of n (FILE.py:make_mask_mod whose first parameter is n, beside
positions(n, ...) in the same file: a layout whose size depends on n) is traced
for every n: n and each int parameter not given by a literal call
(FILE.py:make_mask_mod(variant='clique')) are symbolic, named as the catalogue
names them (block -> l); str/bool parameters are given literally; --assume
NAME=PROPERTY for a parameter makes it an index tensor of length n. Where the
factory raises (its own checks) is a failure of the program, never an
assumption: the claim is refuted there unless the statement's side conditions
(--task's, --param-range) exclude it. Every verdict is re-checked by running YOUR program
(as hasse analyze FILE.py:fn --n N does) at every n <= 64, at n within 2 of each
constant, and at 2^k +- 1 up to 2^20 on sampled positions: a program that differs
from its traced formula is DISAGREES (a bug of the kit), exit 1.

claims:
  dense       M or I is transitive: one layer already realises the limit
  leak-free   no target reaches the position that predicts it: within --layers L
              hops (the intermediate positions are existential), or at every depth
              through an inductive invariant
  isolation   no flow between the task's declared groups (packed documents)
  consistent  training-inference consistency of a Block Two-Stream-style design
  realises    (M or I)^L = T: MASK realises the preorder --target T within --layers L
              (M inside T, T transitive, and every pair of T reached through the
              walk a --witness FILE.py:fn gives: witness(q_idx, kv_idx) returns the
              L-1 intermediate positions; a catalogue sparse_* mask brings its own
              target, depth and witness). A witness that fails where the concrete
              engine finds the target realised is unknown, never refuted; without
              a witness L >= 2 is never proved (a concrete search for n <= 64)

An invariant is a relation I(q, k) ("q may depend on k") with three properties the
kit checks, never assumes: M or identity is inside I; I is transitive; and no
position predicting a target t has I to a position holding t. Together they mean
no walk of any length leaks. The default is the catalogue's known closure (the
mask itself when dense; the causal order for a sliding window); --invariant
FILE.py:fn gives your own, as a mask_mod. An invariant that fails proves nothing;
the command then looks for a real leak walk of at most --search-layers K hops
(default 4), which refutes the claim at every depth, reported at the smallest n
over every walk length (or labelled "an n; smaller may exist"); none found: unknown.

verdicts: proved (with the statement of exactly what was proved); refuted (the
smallest n, the parameters, the positions and the witness path, re-checked by the
concrete engine at that n -- a disagreement is reported loudly, exit 1); unknown
(timeout or solver "unknown", never counted as proved).
"""
EPILOG = """\
examples:
  hasse prove-mask causal --claim dense                     every n >= 1
  hasse prove-mask butterfly --claim leak-free              Butterfly's own task, every n
  hasse prove-mask sliding_window:w=8 --claim leak-free --task causal_lm
  hasse prove-mask sliding_window --claim leak-free --task causal_lm --layers 3
  hasse prove-mask packed --claim isolation
  hasse prove-mask block_two_stream --claim leak-free --param-range block=1..64
  hasse prove-mask masks.py:my_mask --claim dense --timeout 30 --certificate proof.json
  hasse prove-mask m.py:dyadic --claim realises --target causal --layers 2 --witness m.py:walk
  hasse prove-mask sparse_causal:layers=3 --claim realises   its own target, depth and witness

--param-range NAME=LO..HI (repeatable; n included) adds LO <= NAME <= HI to the side
conditions. A spec that fixes n (causal:n=8) proves the claim at that n only.

exit status: 0 proved; 1 refuted (or the concrete re-check disagrees); 3 unknown
(timeout); 2 bad input, including a program that cannot be traced (one line: the
operation and the line of your file).
"""


def register(sub) -> None:
    p = add_command(sub, "prove-mask", "prove a claim about a mask for every length n (symbolic, Z3)",
                    DESCRIPTION, EPILOG)
    p.add_argument("mask", metavar="MASK", help="a catalogue spec (parameters left out are symbolic) or FILE.py:fn")
    p.add_argument("--claim", choices=CLAIMS, help="what to prove (see above; required)")
    p.add_argument("--task", metavar="TASK",
                   help="the task whose targets must not leak (a catalogue task: causal_lm, mlm, packed, …); "
                        "default: MASK's own task (butterfly, block_two_stream, …)")
    p.add_argument("--layers", type=integer("--layers"), metavar="L", help="leak-free/isolation within L layers (default: every depth); realises: the depth L")
    p.add_argument("--invariant", metavar="FILE.py:fn",
                   help="the inductive invariant for every depth, as a mask_mod (or a catalogue spec)")
    p.add_argument("--target", metavar="T",
                   help="realises: the preorder MASK must realise (a catalogue spec or FILE.py:fn, the same size "
                        "as MASK for every n; default: a sparse_* mask's own target)")
    p.add_argument("--witness", metavar="FILE.py:fn",
                   help="realises: witness(q_idx, kv_idx) -> the L-1 intermediate positions of a walk from kv_idx "
                        "to q_idx (default: a sparse_* mask's own)")
    p.add_argument("--search-layers", type=integer("--search-layers", 0), default=SEARCH_LAYERS, metavar="K",
                   help="every depth: when the invariant fails, look for a real leak walk of at most K hops "
                        f"(default {SEARCH_LAYERS}; 0: do not)")
    add_common_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def check_flags(args) -> None:
    """The flags that exclude each other or need a mask_mod (one InputError line naming the flag)."""
    from hasse.solvers.symbolic.resolve import is_function
    from hasse.theory.limits import MAX_WALK_LAYERS, require_count

    if args.claim is None:
        raise InputError(f"--claim is required: one of {', '.join(CLAIMS)}")
    if args.search_layers < 0:
        raise InputError(f"--search-layers must be >= 0, got {args.search_layers}")
    require_count("--search-layers", args.search_layers, MAX_WALK_LAYERS, "a walk holds one copy of the mask per "
                  "hop", low=0)
    for flag, given, reads in (("--heads", args.heads, "h"), ("--batch", args.batch, "b"),
                               ("--assume", args.assume, "a tensor")):
        if given and not any(is_function(s) for s in (args.mask, args.invariant) if s):
            raise InputError(f"{flag} applies to a FILE.py:fn mask_mod that reads {reads}; {args.mask} is a catalogue "
                             "spec" + (" (one mask for every head)" if flag == "--heads" else ""))
    if args.layers is not None and args.layers < 1:
        raise InputError(f"--layers must be >= 1, got {args.layers}")
    if args.layers is not None and args.invariant:
        raise InputError("--layers and --invariant exclude each other (within L layers, or at every depth)")
    if args.claim in ("dense", "consistent") and (args.layers is not None or args.invariant):
        raise InputError(f"--claim {args.claim} takes neither --layers nor --invariant")
    if args.claim != "realises" and (args.target or args.witness):
        raise InputError(f"--{'target' if args.target else 'witness'} belongs to --claim realises")
    if args.claim == "realises" and (args.task or args.invariant):
        raise InputError(f"--claim realises takes no --{'task' if args.task else 'invariant'} (give --target T)")
    if args.claim == "dense" and args.task:
        raise InputError("--claim dense is about the mask alone: no --task")


def run(args) -> int:
    """The command; a mask_mod or invariant stopped at --timeout (theory.user_code) is the verdict unknown, exit 3."""
    from hasse.solvers.symbolic.claim_runs import prove_claim
    from hasse.solvers.symbolic.resolve import parse_assume

    head = {**json_header("prove-mask", args.mask, spec_of(args.mask)), "claim": args.claim, "task": args.task,
            "layers": args.layers}
    title = f"prove-mask {args.mask} --claim {args.claim}"

    def prove():
        check_flags(args)
        preload_torch(args.mask, args.invariant, args.target, args.witness)
        return prove_claim(args.claim, args.mask, task=args.task, layers=args.layers, invariant=args.invariant,
                           search_layers=args.search_layers, heads=args.heads, batch=args.batch,
                           assume=parse_assume(args.assume), ranges=args.param_range, timeout=args.timeout,
                           **({"target": args.target, "witness": args.witness} if args.claim == "realises" else {}))

    return finish(args, args.claim, head, title + (f" --task {args.task}" if args.task else "")
                  + (f" --target {args.target}" if getattr(args, "target", None) else "")
                  + (f" --layers {args.layers}" if args.layers else "")
                  + (f" --witness {args.witness}" if getattr(args, "witness", None) else ""), prove, stopped_title=title,
                  stopped_fields={"invariant": args.invariant})

"""``hasse equiv MASK_A MASK_B``: two mask programs allow the same pairs for every length.

Both masks are traced and compared by :func:`solvers.symbolic.claim_runs.prove_equivalent`
(:func:`solvers.symbolic.claims.check_equivalence`). Proved = the same pairs at every n (under the printed
side conditions); refuted = the smallest n with a pair one allows and the other does not, re-checked on the
concrete masks at that n.
"""

from __future__ import annotations

from hasse.cli.claim_args import add_common_arguments, finish, preload_torch
from hasse.cli.parsers import add_command
from hasse.views.output import ascii_aware, json_header, spec_of

DESCRIPTION = """\
Decide whether two masks allow exactly the same pairs (q, k) for EVERY length n.

Each mask (a catalogue spec whose missing parameters, n included, are symbolic, or a
FlexAttention mask_mod FILE.py:fn) is run once on symbolic integers and becomes a
Z3 formula M[q, k] of q, k, n and the parameters left out. The two are equivalent
when no n, no parameter value allowed by the side conditions and no pair 0 <= q, k
< n makes them differ. Otherwise the smallest such n is reported, with the pair and
what each mask says there, re-checked on the two concrete masks at that n.

A factory of n (FILE.py:make_mask_mod(n, ...) beside positions(n, ...), as
hasse derive --export flex writes) is traced for every n and every parameter
it is not given literally, Q_LEN = KV_LEN = positions(n, ...); its parameters
take the catalogue's symbols (block -> l), so it is compared with a spec at
the same n and l. The statement's domain is both sides' side conditions (the
spec's l >= 1, l | n): the factory must run on all of it -- where it raises,
the claim is refuted ("the program fails"), never narrowed. A catalogue task
with a symbolic form (a derived layout) is a MASK too: its mask.

verdicts: proved (equivalent for every n of the statement), refuted (they differ:
smallest n and the pair), unknown (timeout or solver "unknown", never counted as
proved).
"""
EPILOG = """\
examples:
  hasse equiv sliding_window:w=4 sliding_window_distance:d=3      w keys = distance w-1: proved
  hasse equiv sliding_window:w=3 sliding_window_distance:d=3      differ from n = 4, pair (3, 0)
  hasse equiv masks.py:window_flex masks.py:window_ref --param-range n=1..100000
  hasse equiv theory/flex/butterfly.py:make_mask_mod butterfly     a factory of n: proved
  hasse equiv "theory/flex/block_two_stream.py:make_mask_mod(variant='clique')" block_two_stream:variant=clique
  hasse equiv theory/flex/masked_context.py:make_mask_mod masked_context --assume masked=any

exit status: 0 equivalent; 1 they differ (or the concrete re-check disagrees);
3 unknown (timeout); 2 bad input, including a program that cannot be traced.
"""


def register(sub) -> None:
    p = add_command(sub, "equiv", "decide whether two masks allow the same pairs for every length n",
                    DESCRIPTION, EPILOG)
    p.add_argument("mask_a", metavar="MASK_A", help="a catalogue spec (parameters left out are symbolic) or FILE.py:fn")
    p.add_argument("mask_b", metavar="MASK_B", help="the same forms as MASK_A")
    add_common_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def run(args) -> int:
    """The command; a mask_mod stopped at --timeout (theory.user_code) is the verdict unknown, exit 3."""
    from hasse.solvers.symbolic.claim_runs import prove_equivalent
    from hasse.solvers.symbolic.resolve import parse_assume

    head = {**json_header("equiv", args.mask_a, spec_of(args.mask_a)), "mask_b": args.mask_b,
            "spec_b": spec_of(args.mask_b)}

    def prove():
        assume = parse_assume(args.assume)
        preload_torch(args.mask_a, args.mask_b)
        return prove_equivalent(args.mask_a, args.mask_b, heads=args.heads, batch=args.batch, assume=assume,
                                ranges=args.param_range, timeout=args.timeout)

    return finish(args, "equivalent", head, f"equiv {args.mask_a} {args.mask_b}", prove)

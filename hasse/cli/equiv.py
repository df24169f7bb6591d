"""``hasse equiv MASK_A MASK_B``: two mask programs allow the same pairs for every length (issue 13).

Both masks are traced (:func:`hasse.cli.prove_mask.symbolic_mask`); the claim is
:func:`solvers.symbolic.claims.check_equivalence`. Proved = the same pairs at every n
(under the printed side conditions); refuted = the smallest n with a pair one allows and
the other does not, re-checked on the concrete masks at that n.
"""

from __future__ import annotations

import time

from hasse.views.output import ascii_aware, spec_of
from hasse.cli.parsers import add_command
from hasse.theory.errors import InputError

DESCRIPTION = """\
Decide whether two masks allow exactly the same pairs (q, k) for EVERY length n.

Each mask (a catalogue spec whose missing parameters, n included, are symbolic, or a
FlexAttention mask_mod FILE.py:fn) is run once on symbolic integers and becomes a
Z3 formula M[q, k] of q, k, n and the parameters left out. The two are equivalent
when no n, no parameter value allowed by the side conditions and no pair 0 <= q, k
< n makes them differ. Otherwise the smallest such n is reported, with the pair and
what each mask says there, re-checked on the two concrete masks at that n.

verdicts: proved (equivalent for every n of the statement), refuted (they differ:
smallest n and the pair), unknown (timeout or solver "unknown", never counted as
proved).
"""
EPILOG = """\
examples:
  hasse equiv sliding_window:w=4 sliding_window_distance:d=3      w keys = distance w-1: proved
  hasse equiv sliding_window:w=3 sliding_window_distance:d=3      differ from n = 4, pair (3, 0)
  hasse equiv masks.py:window_flex masks.py:window_ref --param-range n=1..100000

exit status: 0 equivalent; 1 they differ (or the concrete re-check disagrees);
3 unknown (timeout); 2 bad input, including a program that cannot be traced.
"""


def register(sub) -> None:
    from hasse.cli.prove_mask import add_common_arguments

    p = add_command(sub, "equiv", "decide whether two masks allow the same pairs for every length n",
                    DESCRIPTION, EPILOG)
    p.add_argument("mask_a", metavar="MASK_A", help="a catalogue spec (parameters left out are symbolic) or FILE.py:fn")
    p.add_argument("mask_b", metavar="MASK_B", help="the same forms as MASK_A")
    add_common_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def run(args) -> int:
    """The command; a mask_mod stopped at --timeout (theory.user_code) is the verdict unknown, exit 3."""
    from hasse.cli.prove_mask import TraceUnknownInput, report, timed_out_record
    from hasse.theory.user_code import UserCodeTimeout

    start = time.perf_counter()
    try:
        return _run(args)
    except (UserCodeTimeout, TraceUnknownInput) as exc:  # a trace stopped at a bound or the time limit: unknown
        obj = {**json_header_pair(args), "param_ranges": [], **timed_out_record(exc, time.perf_counter() - start)}
        return report(args, obj, {}, title=f"equiv {args.mask_a} {args.mask_b}")


def _run(args) -> int:
    from hasse.cli.prove_mask import (_claims, _copy, call_claim, narrow, parse_assume, report, symbolic_mask,
                                      verdict_record)
    from hasse.proofs.certificates.format import refuse_overwrite

    if args.certificate:
        refuse_overwrite(args.certificate, ())
    assume = parse_assume(args.assume)
    from hasse.theory.inputs.read import kind_of

    files = [s for s in (args.mask_a, args.mask_b) if kind_of(s) == "function"]
    if (args.batch is not None or assume) and not files:
        raise InputError(f"--{'batch' if args.batch is not None else 'assume'} applies to a FILE.py:fn mask_mod; "
                         f"{args.mask_a} and {args.mask_b} are catalogue specs")

    def trace(source, what):  # --assume: a tensor one of the two reads (checked below, for both together)
        return _copy(symbolic_mask(source, args.heads, what, batch=args.batch, timeout=args.timeout,
                                   assume=assume if source in files else None, strict_assume=False))

    a, b = trace(args.mask_a, "MASK_A"), trace(args.mask_b, "MASK_B")
    read = set(getattr(a, "tensors", {})) | set(getattr(b, "tensors", {}))
    for name in assume:
        if name not in read:
            raise InputError(f"--assume {name}: neither mask reads a closure or global tensor named {name} (the "
                             f"tensors they read: {', '.join(sorted(read)) or 'none'})")
    claims = _claims()
    ranges = []
    for mask in (a, b):
        usable = [r for r in args.param_range if _names(r) in _symbols(mask)]
        ranges = narrow(mask, usable) or ranges
    names = _symbols(a) | _symbols(b)
    for r in args.param_range:
        if _names(r) not in names:
            raise InputError(f"--param-range {r}: not a symbolic parameter of either mask "
                             f"(symbolic: {', '.join(sorted(names))})")
    start = time.perf_counter()
    verdict = call_claim(claims.check_equivalence, a, b, timeout=args.timeout)
    record = verdict_record(verdict, time.perf_counter() - start)
    obj = {**json_header_pair(args), "param_ranges": [{"name": n, "lo": lo, "hi": hi} for n, lo, hi in ranges],
           **record}
    return report(args, obj, {"mask_a": a, "mask_b": b}, title=f"equiv {args.mask_a} {args.mask_b}")


def _symbols(mask) -> set[str]:
    """The names --param-range knows for ``mask``: n, each parameter's key and its symbol (window and w)."""
    return {"n"} | set(mask.params) | {str(t) for t in mask.params.values()}


def _names(text: str) -> str:
    return text.partition("=")[0].strip()


def json_header_pair(args) -> dict:
    """The header of the JSON object (input: MASK_A; mask_b and its spec beside it)."""
    from hasse.views.output import json_header

    return {**json_header("equiv", args.mask_a, spec_of(args.mask_a)), "mask_b": args.mask_b,
            "spec_b": spec_of(args.mask_b)}

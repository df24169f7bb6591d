"""``hasse certificate verify CERT [--recheck FRACTION]``: re-check a proof certificate in this checkout."""

from __future__ import annotations

import math
import sys

from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header
from hasse.cli.parsers import add_command, integer
from hasse.theory.errors import InputError

DESCRIPTION = """\
A certificate (hasse prove ... --certificate F) from someone else is evidence,
not proof, until it is re-checked. `verify` reads it strictly and, for every
result: recomputes the size of the class from n and checks `checked` against it
and against each range; re-checks every counterexample and witness; compares the
fingerprint of the source files the verdict depends on with this checkout (and
names the files that differ); and re-runs a seeded random sample: FRACTION of the
exhaustive ranges (in chunks of one batch), and each other result (Z3,
task-level) with probability FRACTION. --recheck 1.0 re-runs everything;
0 (the default) runs nothing but the checks above.
"""
EPILOG = """\
examples:
  hasse prove reach_stable_by_n_minus_1 --n 5 --method both --certificate cert.json
  hasse certificate verify cert.json                   fields, counts, witnesses, fingerprint
  hasse certificate verify cert.json --recheck 0.1     and a tenth of the scan again
  hasse certificate verify cert.json --recheck 1.0     everything again

exit status: 0 everything agrees; 1 something differs (a count, a verdict, a
counterexample or witness that does not re-check, the fingerprint or the kit
version); 3 a re-run was inconclusive (timeout); 2 the file is not a valid
certificate (one line naming what is wrong).
"""


def register(sub) -> None:
    p = add_command(sub, "certificate", "re-check a proof certificate (hasse certificate verify CERT)",
                    "Work with proof certificates. " + DESCRIPTION.split("\n", 1)[0], None)
    inner = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    v = add_command(inner, "verify", "re-check a certificate in this checkout", DESCRIPTION, EPILOG)
    v.add_argument("cert", metavar="CERT", help="a certificate written by hasse prove --certificate")
    v.add_argument("--recheck", type=float, default=0.0, metavar="FRACTION",
                   help="fraction of the scans to run again, 0 … 1 (default 0; 1.0: everything)")
    v.add_argument("--seed", type=integer("--seed", 0), default=0, help="seed of the random sample (default 0)")
    v.add_argument("--timeout", type=float, metavar="S", help="seconds per re-run (unknown after)")
    add_json_arguments(v)
    v.set_defaults(run=ascii_aware(run))
    p.set_defaults(run=lambda args: _usage(p))


def _usage(parser) -> int:
    parser.print_usage(sys.stderr)
    raise InputError("say what to do with a certificate: hasse certificate verify CERT")


def run(args) -> int:
    from hasse.proofs.certificates.verify import verify

    if not (math.isfinite(args.recheck) and 0.0 <= args.recheck <= 1.0):
        raise InputError(f"--recheck must be a fraction between 0 and 1, got {args.recheck}")
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        raise InputError(f"--timeout must be positive and finite, got {args.timeout}")
    report = verify(args.cert, args.recheck, args.seed, args.timeout)
    if (args.json or args.out) and emit_json(args, {**json_header("certificate verify", args.cert),
                                                     **report.to_json()}):
        pass
    else:
        from hasse.views.tables import align

        rows = align([("AGREES" if not c.problems else "DIFFERS", c.theorem, f"n={c.n}", c.method, c.verdict,
                       f"checked {c.checked:,}" + (f"; re-ran {c.reruns} part{'s' * (c.reruns != 1)}, "
                                                   f"{c.rechecked:,} objects" if c.reruns else ""))
                      for c in report.results])
        for c, row in zip(report.results, rows):
            print(row)
            for problem in c.problems:
                print(f"         {problem}")
            for note in c.inconclusive:
                print(f"         inconclusive: {note}")
        bad = sum(bool(c.problems) for c in report.results)
        print(f"\n{len(report.results)} results: {len(report.results) - bad} agree, {bad} differ "
              f"(recheck {args.recheck:g}, seed {args.seed}, {report.seconds:.2f} s)")
        if args.out:
            print(f"JSON written to {args.out}")
    if not report.agrees:
        return 1
    return 3 if report.inconclusive else 0

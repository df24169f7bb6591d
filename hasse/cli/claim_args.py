"""What ``hasse prove-mask`` and ``hasse equiv`` share: their common flags, torch loaded once for the user's
file, and the end of a run (the certificate, the JSON or the report, the exit code).

A claim stopped while tracing user code (the mask_mod's ``--timeout``, a bound of the tracer) is the verdict
unknown, exit 3. Exit codes as ``hasse prove``: 0 proved, 1 refuted (or a re-check that disagrees), 3 unknown.
"""

from __future__ import annotations

import time

from hasse.cli.parsers import integer
from hasse.views.output import add_json_arguments, emit_json

TORCH_WORDS = ("torch", "attn_gym", "flex_attention")  # a file naming one of these imports torch (or may)


def add_common_arguments(p) -> None:
    """The flags prove-mask and equiv share: --heads, --param-range, --timeout, --json/--out/--ascii, --certificate."""
    p.add_argument("--heads", type=integer("--heads", 1), metavar="H", help="number of heads of a mask_mod that reads h (the union)")
    p.add_argument("--batch", type=integer("--batch", 1), metavar="B",
                   help="batch size of a mask_mod that reads b: b is a parameter of the claim, 0 <= b < B "
                        "(without it, a mask_mod whose mask depends on b is refused)")
    p.add_argument("--assume", action="append", default=[], metavar="NAME=PROPERTY",
                   help="a tensor NAME the mask_mod reads (a closure or global), or a parameter NAME of a factory "
                        "of n, stands for every int64 tensor of length n with PROPERTY: nondecreasing, permutation, "
                        "parents or any (repeatable; default for a closure: its values as given, the claim for "
                        "n <= its length)")
    p.add_argument("--param-range", action="append", default=[], metavar="NAME=LO..HI",
                   help="only values LO <= NAME <= HI (repeatable; NAME may be n)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds for each solver call and for tracing each file.py mask_mod (past it: unknown; "
                        "default: the claims' own, 30 s; tracing 60 s)")
    add_json_arguments(p)
    p.add_argument("--certificate", metavar="FILE",
                   help="write the claim, statement, verdict, formulas and versions as JSON")


def preload_torch(*sources) -> None:
    """Import torch here once when a user's file among ``sources`` names it: every bounded child (the rehearsal
    of the trace, the re-check's run of the program) is forked from this process and inherits it, where each
    would otherwise import torch again (about 5 s each). Only a matter of time: the runs are the same."""
    from hasse.gpu_check.torch_extra import has_torch
    from hasse.solvers.symbolic.resolve import is_function
    from hasse.theory.errors import InputError
    from hasse.theory.inputs.calls import split_function

    for source in sources:
        try:
            if not is_function(source):
                continue
            with open(split_function(source)[0], encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 20)
        except (InputError, OSError):
            continue  # the loader says what is wrong with the file
        if any(w in text for w in TORCH_WORDS) and has_torch():
            import torch  # noqa: F401 - loaded for the children to inherit
            return


def finish(args, claim: str, head: dict, title: str, prove, *, stopped_title: str | None = None,
           stopped_fields: dict | None = None) -> int:
    """Run ``prove()`` (a :class:`~solvers.symbolic.claim_runs.ClaimRun` of ``claim``), write the certificate,
    print the JSON object (``head`` and the run's fields) or the report under ``title``, and return the exit
    code. A trace stopped at its limit: the verdict unknown, ``stopped_fields`` and ``stopped_title``."""
    from hasse.proofs.certificates.format import claim_certificate, write_certificate
    from hasse.solvers.symbolic.records import stopped, verdict_record
    from hasse.solvers.symbolic.resolve import TraceUnknownInput
    from hasse.theory.user_code import UserCodeTimeout
    from hasse.views.symbolic_report import print_disagreement, print_verdict

    start = time.perf_counter()
    try:
        run = prove()
        fields, verdict, formulas = run.fields, run.verdict, run.formulas
    except (UserCodeTimeout, TraceUnknownInput) as exc:  # a trace stopped at a bound or the time limit: unknown
        verdict = stopped(claim, exc, time.perf_counter() - start)
        fields = {**(stopped_fields or {}), "param_ranges": [], **verdict_record(verdict, verdict.seconds)}
        formulas = {}
        title = stopped_title or title
    obj = {**head, **fields}
    if args.certificate:
        write_certificate(args.certificate, claim_certificate(obj, formulas, getattr(args, "argv", ()) or ()))
    if not emit_json(args, obj):
        print_verdict(obj, title, certificate=args.certificate, out=args.out)
    if verdict.disagrees:
        print_disagreement(obj["recheck"])
    return verdict.exit_code

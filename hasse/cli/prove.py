"""``hasse prove NAME|all --n N``: run the proof scripts of design.md §5."""

from __future__ import annotations

import json
import os
import sys
import time

from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header
from hasse.views.output import PROGRESS, clear_progress, progress, say
from hasse.cli.parsers import add_command, integer
from hasse.theory.errors import InputError
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN, WORDS

DESCRIPTION = """\
Check a theorem of the paper for every object of size n, by exhaustive search
(every mask / family / labelled DAG of size n, vectorised) and by Z3 (a ground,
quantifier-free encoding proved by negation: unsat = proved). Verdicts:

  proved   holds for every object of size n, by that method (an existence
           statement carries its witness)
  refuted  a counterexample is printed (a mask, a task, a path)
  unknown  timeout, solver "unknown" or a resource limit; never counted as proved

--method both runs the two independent methods and fails loudly if they
disagree. --certificate writes the results as JSON with the versions of the kit,
Python, numpy, networkx and Z3.
"""
EPILOG = """\
theorems (hasse prove all runs them in this order):
{names}

examples:
  hasse prove all --n 4 --method both
  hasse prove reach_stable_by_n_minus_1 --n 5 --method exhaustive       all 1,048,576 masks
  hasse prove limit_is_preorder --n 8 --method z3 --timeout 60
  hasse prove reach_stable_by_n_minus_1 --n 6 --method exhaustive --workers 2
  hasse prove reach_stable_by_n_minus_1 --n 6 --method exhaustive --shard 0/8 --certificate part0.json
  hasse prove reach_stable_by_n_minus_1 --n 6 --combine part*.json --certificate full.json
  hasse prove all --n 6 --orbits        one mask per isomorphism class (every mask-level theorem)
  hasse prove limit_is_preorder --n 6 --orbits --shard 0/3 --certificate orbits0.json   (then --combine)
  hasse prove limit_is_preorder --n 6 --method exhaustive --engine dask --workers 4 --certificate full.json
  hasse prove all --n 6 --orbits --engine dask --scheduler tcp://10.0.0.5:8786 --units 64

A shard alone is "unknown" (partial) unless it finds a counterexample; --combine
reads the shards' certificates and gives one verdict for the whole space. It trusts
nothing it can recompute: the space comes from n, the ranges must partition it with
`checked` equal to each range, and the parts must share one theorem, n, method set,
kit version and source fingerprint; counterexamples and witnesses are re-checked.
Every refusal is one line and exit 2. Certificates are written atomically, never
onto an input. `hasse certificate verify CERT --recheck 1.0` re-runs a certificate.

--engine dask runs the exhaustive checks as --units parts (shards of the
numbering; with --orbits, parts of the class enumeration) on Dask workers: a
local cluster of --workers processes, or the cluster of --scheduler ADDRESS. The
parts are combined as --combine does; a worker that dies has its parts run again
elsewhere, and a part that never comes back leaves the verdict unknown.

exit status: 0 every result proved; 1 a result refuted (or the methods disagree);
3 some result unknown (timeout); 2 bad input.
"""


def register(sub) -> None:
    from hasse.proofs.registry import NAMES

    p = add_command(sub, "prove", "verify the theorems for a given n (exhaustive and Z3)", DESCRIPTION,
                    EPILOG.format(names="\n".join(f"  {x}" for x in NAMES)))
    p.add_argument("name", metavar="NAME|all")
    p.add_argument("--n", type=integer("--n"), required=True, help="size of the objects quantified over")
    p.add_argument("--method", choices=("exhaustive", "z3", "both"), default="both")
    p.add_argument("--timeout", type=float, metavar="S", help="seconds per theorem and method (unknown after)")
    p.add_argument("--workers", type=integer("--workers"), default=1, help="processes for exhaustive checks (default 1)")
    p.add_argument("--shard", metavar="i/k", help="exhaustive: check only the i-th of k equal parts (with --orbits: "
                                                  "part i of k of the enumeration)")
    add_json_arguments(p, json_help='print {"n": N, "results": [...]} and nothing else')
    p.add_argument("--certificate", metavar="FILE", help="write the results as a JSON certificate")
    p.add_argument("--orbits", action="store_true",
                   help="exhaustive over one mask per isomorphism class (nauty, else a fallback up to n = 6); "
                        "for theorems invariant under relabelling positions; sparse_realisation_keeps_hasse runs over "
                        "every labelled preorder instead (design.md §5, Orbits)")
    p.add_argument("--combine", nargs="+", metavar="CERT",
                   help="combine the certificates of exhaustive shards or --orbits parts (of NAME at --n) "
                        "instead of running")
    p.add_argument("--engine", choices=("local", "dask"), default="local",
                   help="local: this process (and --workers); dask: work units on Dask workers "
                        "(pip install 'hasse-attention[dist]')")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="--engine dask: a running Dask scheduler (default: a local cluster of --workers processes)")
    p.add_argument("--units", type=integer("--units"), metavar="K",
                   help="--engine dask: parts of the enumeration (default: four per worker)")
    p.set_defaults(run=ascii_aware(run))


def run(args) -> int:
    from hasse.proofs import registry
    from hasse.proofs.certificates.format import refuse_overwrite
    from hasse.proofs.certificates.combine import combine_certificates
    from hasse.proofs.cli import parse_shard, prove
    from hasse.proofs.theorem import disagreement

    if args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    if args.timeout is not None and args.timeout <= 0:
        raise InputError(f"--timeout must be positive, got {args.timeout}")
    shard = parse_shard(args.shard)
    dask = check_engine(args)
    if getattr(args, "orbits", False):
        return run_orbits(args)
    names = registry.NAMES if args.name == "all" else (args.name,)
    if args.certificate:  # before any work: never onto an input, never onto a FIFO or a folder
        refuse_overwrite(args.certificate, tuple(args.combine or ()))
    if args.combine:
        if args.name != "all":
            registry.get(args.name)
        results, sources = combine_certificates(args.combine, names, args.n)
        return _report(args, results, [], sources=sources)
    theorems = [registry.get(name) for name in names]
    if args.name == "all" and args.method != "both":  # the engine theorems have no Z3 check (design.md §5)
        skipped = [t.name for t in theorems if t.check_for(args.method) is None]
        theorems = [t for t in theorems if t.check_for(args.method) is not None]
        if skipped:
            print(f"hasse: no {args.method} check for {', '.join(skipped)}: not run", file=sys.stderr)
    refuse_sizes(theorems, args.n, args.method, args.workers)
    results, loud = [], []
    table = verdict_columns(theorems, args.n, args.method)
    if not args.json:
        say(table.header())
    if dask:
        results = run_engine(args, [t.name for t in theorems], args.method)
        loud = [m for name in dict.fromkeys(r.theorem for r in results)
                if (m := disagreement([r for r in results if r.theorem == name]))]
        if not args.json:
            for r in results:
                say(*result_lines(table, r, ascii=getattr(args, "ascii", False)))
        return _report(args, results, loud, printed=True)
    for theorem in theorems:
        rs = prove(theorem, args.n, args.method, timeout=args.timeout, workers=args.workers, shard=shard,
                   show_progress=not args.json, progress_factory=progress_callback)
        clear_progress()  # a check stopped early (timeout, counterexample) leaves its status line
        results += rs
        message = disagreement(rs)
        if message:
            loud.append(message)
        if not args.json:
            for r in rs:
                say(*result_lines(table, r, ascii=getattr(args, "ascii", False)))
    return _report(args, results, loud, printed=True)


def run_orbits(args) -> int:
    """``hasse prove NAME|all --n N --orbits``: the classes are enumerated once for every theorem."""
    from hasse.proofs import orbit_cover, orbits_check, registry
    from hasse.proofs.certificates.format import refuse_overwrite
    from hasse.proofs.theorem import Context

    from hasse.proofs.cli import parse_shard

    if args.combine:
        raise InputError("--orbits does not combine with --combine (--combine reads the method from the "
                         "certificates: drop --orbits)")
    for flag, given in (("--method z3", args.method == "z3"),
                        ("--workers", args.workers != 1 and getattr(args, "engine", "local") != "dask")):
        if given:
            raise InputError(f"--orbits does not combine with {flag}")
    if not 1 <= args.n <= orbit_cover.MAX_N:
        raise InputError(f"--orbits: --n must be between 1 and {orbit_cover.MAX_N}, got {args.n}")
    if args.certificate:
        refuse_overwrite(args.certificate)
    if args.name == "all":
        theorems = [registry.get(x) for x in registry.MASK_THEOREMS + registry.ENGINE_THEOREMS]
        refused = [t.name for t in theorems if orbits_check.refusal(t)]
        theorems = [t for t in theorems if not orbits_check.refusal(t)]
        if refused:
            print(f"hasse: --orbits: not invariant or no class enumeration for {', '.join(refused)}: not run",
                  file=sys.stderr)
    else:
        theorems = [registry.get(args.name)]
        why = orbits_check.refusal(theorems[0])
        if why:
            raise InputError(why)
    kinds = list(dict.fromkeys(orbit_cover.kind_of(t) for t in theorems))
    covers = [orbit_cover.enumeration(args.n, kind=k) for k in kinds]  # InputError when out of reach, before any work
    table = verdict_columns(theorems, args.n, orbits_check.METHOD)
    if not args.json:
        say(table.header())
    if getattr(args, "engine", "local") == "dask":
        results = run_engine(args, [t.name for t in theorems], "exhaustive", orbits=True)
    else:
        label = f"{theorems[0].name if len(theorems) == 1 else f'{len(theorems)} theorems'} n={args.n} orbits"
        results = orbits_check.run_many(theorems, args.n, [Context(timeout=args.timeout) for _ in theorems],
                                        progress=None if args.json else progress_callback(label),
                                        part=parse_shard(args.shard))  # --shard i/k: part (i, k), for --combine
    clear_progress()
    if not args.json:
        for r in results:
            say(*result_lines(table, r, ascii=getattr(args, "ascii", False)))
    if not args.json:
        for kind, cover in zip(kinds, covers):
            say(f"{kind}: {cover.description}")
    return _report(args, results, [], printed=True)


def check_engine(args) -> bool:
    """Whether ``--engine dask`` runs this command; ``InputError`` for the options it does not combine with."""
    import importlib.util

    engine = getattr(args, "engine", "local")
    scheduler, units = getattr(args, "scheduler", None), getattr(args, "units", None)
    if engine != "dask":
        for flag, given in (("--scheduler", scheduler is not None), ("--units", units is not None)):
            if given:
                raise InputError(f"{flag} needs --engine dask")
        return False
    for flag, given in (("--shard", args.shard), ("--combine", args.combine), ("--method z3", args.method == "z3"),
                        ("--workers", scheduler is not None and args.workers != 1)):
        if given:
            why = " (the scheduler's cluster has its own workers)" if flag == "--workers" else ""
            raise InputError(f"--engine dask does not combine with {flag}{why}")
    if units is not None and units < 1:
        raise InputError(f"--units must be >= 1, got {units}")
    if units is not None:
        from hasse.theory.limits import MAX_UNITS, require_count

        require_count("--units", units, MAX_UNITS, "each unit is one Dask task, planned before any runs")
    if scheduler is not None:  # before any work, even without dask: tcp:// or tls:// HOST:PORT (an empty one too)
        from hasse.proofs.dask_cluster import scheduler_address

        scheduler_address(scheduler)
    if importlib.util.find_spec("distributed") is None or importlib.util.find_spec("dask") is None:
        from hasse.proofs.distributed import INSTALL

        raise InputError(INSTALL)
    return True


def run_engine(args, names, method: str, orbits: bool = False):
    """The results of ``names`` at ``args.n`` from Dask work units (:func:`proofs.distributed.run_dask`)."""
    from hasse.proofs.distributed import run_dask

    label = f"{names[0] if len(names) == 1 else f'{len(names)} theorems'} n={args.n} dask units"
    results = run_dask(names, args.n, orbits=orbits, method=method, units=args.units, workers=args.workers,
                       scheduler=args.scheduler, timeout=args.timeout,
                       progress=None if args.json else progress_callback(label))
    clear_progress()
    return results


WITNESS_CHARS, COUNTEREXAMPLE_CHARS = 300, 600  # longer JSON is cut, with "… (+K more characters)"


def verdict_columns(theorems, n: int, method: str):
    """The aligned columns of the verdict lines: theorem, n, method, verdict, seconds, then free text.

    The widths are fixed before the first result from every theorem name and method of
    the run, so the rows printed as each theorem finishes line up (hasse.views.tables.Columns).
    """
    from hasse.proofs.theorem import METHODS
    from hasse.views.tables import Columns

    methods = METHODS if method == "both" else (method,)
    samples = [(t.name, f"n={n}", m, "REFUTED", "9999.99 s") for t in theorems for m in methods]
    if not samples:
        samples = [("", f"n={n}", "", "REFUTED", "9999.99 s")]
    return Columns(("theorem", "n", "method", "verdict", "seconds", "checked"), samples, right=(4,))


def result_lines(table, r, *, ascii: bool = False) -> list[str]:
    """One aligned row per result, then its witness or counterexample (JSON, cut with an ellipsis and a count)."""
    from hasse.views.tables import cut

    tail = f"{r.checked:,}"
    if r.reason:
        tail += f"  ({r.reason})"
    if r.details.get("only"):
        tail += f"  [{r.details['only']}]"
    lines = [table.row((r.theorem, f"n={r.n}", r.method, WORDS[r.verdict], f"{r.seconds:.2f} s", tail))]
    for what, value, limit in (("witness", r.witness, WITNESS_CHARS),
                               ("counterexample", r.counterexample, COUNTEREXAMPLE_CHARS)):
        if value is not None:
            lines.append(f"    {what}: {cut(json.dumps(value, default=str), limit, ascii=ascii)}")
    return lines


def progress_callback(label: str):
    """The status line of one check, ``label: done/total (rate/s, s left)`` (None when stderr is no terminal)."""
    if not PROGRESS.live:
        return None
    start = time.monotonic()

    def show(done: int, total: int) -> None:
        elapsed = max(time.monotonic() - start, 1e-9)
        rate = done / elapsed
        left = f"{(total - done) / rate:,.0f} s left" if rate > 0 else "estimating"
        progress(f"  {label}: {done:,}/{total:,} ({rate:,.0f}/s, {left})", force=done >= total)

    return show


def refuse_sizes(theorems, n: int, method: str, workers: int = 1) -> None:
    """The size guard, before any work: ``InputError`` (exit 2) naming the first check that cannot run at ``n``.

    Each theorem documents its limit per method (``Theorem.max_n``; exhaustive mask checks
    stop at n = 7, 2^42 masks); the message carries the estimate of the work. ``--workers``
    is limited to four per CPU core.
    """
    cores = os.cpu_count() or 1
    if workers > 4 * cores:
        raise InputError(f"--workers must be at most {4 * cores} (four per CPU core on this machine), got {workers}")
    if n < 1:
        return  # proofs.cli reports it in its own words
    for theorem in theorems:
        for m in ("exhaustive", "z3") if method == "both" else (method,):
            why = theorem.check_for(m) is not None and theorem.too_large(n, m)
            if why:
                other = {"exhaustive": "z3", "z3": "exhaustive"}[m]
                runs = theorem.check_for(other) is not None and not theorem.too_large(n, other)
                raise InputError(f"--n {n}: {why}; use a smaller --n" + (f" or --method {other}" if runs else ""))


def _report(args, results, loud, printed: bool = False, sources: dict | None = None) -> int:
    from hasse.proofs.certificates.format import write_certificate
    from hasse.proofs.cli import exit_status

    if not args.json and not printed:
        from hasse.proofs import registry

        names = list(dict.fromkeys(r.theorem for r in results))
        methods = {r.method for r in results}  # --combine of --orbits parts: their own method's width
        table = verdict_columns([registry.get(x) for x in names], args.n,
                                methods.pop() if len(methods) == 1 else args.method)
        say(table.header())
        for r in results:
            say(*result_lines(table, r, ascii=getattr(args, "ascii", False)))
    if args.certificate:
        write_certificate(args.certificate, results, sources=sources, inputs=tuple(args.combine or ()))
    if (args.json or args.out) and emit_json(args, {**json_header("prove", args.name), "n": args.n,
                                                     "method": args.method,
                                                     "results": [r.to_json() for r in results]}):
        pass
    else:
        counts = {v: sum(r.verdict == v for r in results) for v in (PROVED, REFUTED, UNKNOWN)}
        print(f"\n{len(results)} results: {counts[PROVED]} proved, {counts[REFUTED]} refuted, "
              f"{counts[UNKNOWN]} unknown" + (f"; certificate written to {args.certificate}" if args.certificate
                                                  else "") + (f"; JSON written to {args.out}" if args.out else ""))
    for message in loud:
        print(f"hasse: {message}", file=sys.stderr)
    if loud:
        return 1
    return exit_status(results)

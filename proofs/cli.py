"""The command line every proof script shares: ``python -m hasse.proofs.<name> --n N``.

:func:`script_main` parses ``--n``, ``--method``, ``--timeout``, ``--workers``,
``--shard``, ``--json`` and ``--certificate``, runs the theorem and prints; ``hasse
prove`` uses the same pieces (:func:`prove`, :func:`format_result`, :func:`exit_status`).

>>> parse_shard("1/4")
(1, 4)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

from hasse.proofs.certificates.format import refuse_overwrite, write_certificate
from hasse.proofs.theorem import METHODS, PROVED, Context, Result, Theorem, disagreement, run_theorem
from hasse.theory.errors import InputError
from hasse.theory.verdicts import REFUTED, WORDS


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"i/k"`` -> ``(i, k)`` with ``0 <= i < k``."""
    if text is None:
        return None
    from hasse.theory.errors import clip
    from hasse.theory.limits import parse_int

    parts = text.split("/")
    if len(parts) != 2:
        raise InputError(f"--shard must be i/k with integers, got {clip(text, 40)!r}")
    i, k = (parse_int(x, "--shard") for x in parts)  # within 64 bits (a 5,000-digit k is one line too)
    if not 0 <= i < k:
        raise InputError(f"--shard i/k needs 0 <= i < k, got {text!r}")
    return i, k


def progress_printer(label: str):
    """A progress callback that prints to stderr when it is a terminal (rate and time left)."""
    if not sys.stderr.isatty():
        return None
    start = time.monotonic()
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.5 and done < total:
            return
        last[0] = now
        rate = done / max(now - start, 1e-9)
        left = (total - done) / rate if rate > 0 else float("inf")
        print(f"\r  {label}: {done:,}/{total:,} ({rate:,.0f}/s, {left:,.0f} s left)\x1b[K", end="", file=sys.stderr,
              flush=True)
        if done >= total:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)

    return show


def prove(theorem: Theorem, n: int, method: str, *, timeout: float | None = None, workers: int = 1,
          shard: tuple[int, int] | None = None, show_progress: bool = True, progress_factory=None) -> list[Result]:
    """Run ``method`` for one theorem; ``both`` runs every method the theorem has.

    ``progress_factory(label)`` returns the progress callback ``(done, total)`` of one
    method (``hasse prove`` passes its own, which ``hasse.views.output`` clears before each
    result); default: :func:`progress_printer`.

    A theorem without a Z3 check (the engine theorems: the engine is Python code,
    design.md §5) runs under ``both`` with the exhaustive method alone, and its result
    says so (``details["only"]``); asked for ``z3`` explicitly, it is ``unknown``.
    """
    if n < 1:
        raise InputError(f"--n must be >= 1, got {n}")
    if method == "both":
        methods = tuple(m for m in METHODS if theorem.check_for(m) is not None) or METHODS
    else:
        methods = (method,)
    missing = [m for m in METHODS if m not in methods] if method == "both" else []
    results = []
    for m in methods:
        label = f"{theorem.name} n={n} {m}"
        ctx = Context(timeout=timeout, progress=(progress_factory or progress_printer)(label) if show_progress else None,
                      workers=workers, shard=shard)
        result = run_theorem(theorem, n, m, ctx)
        if missing:
            only = f"{m} only: no {' or '.join(missing)} check for this theorem"
            result = replace(result, details=result.details | {"only": only})
        results.append(result)
    return results


def format_result(r: Result) -> str:
    """The printed line of a result (and its witness or counterexample, shortened)."""
    line = f"{WORDS[r.verdict]:<7}  {r.theorem}  n={r.n}  {r.method:<10} checked {r.checked:,} in {r.seconds:.2f} s"
    if r.reason:
        line += f"  ({r.reason})"
    if r.details.get("only"):
        line += f"  [{r.details['only']}]"
    if r.witness is not None:
        line += f"\n         witness: {_cut(json.dumps(r.witness, default=str), 300)}"
    if r.counterexample is not None:
        line += f"\n         counterexample: {_cut(json.dumps(r.counterexample, default=str), 600)}"
    return line


def _cut(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, then ``… (+K more characters)`` (as ``hasse.views.tables.cut``).

    >>> _cut("abcdef", 4), _cut("abc", 4)
    ('abcd… (+2 more characters)', 'abc')
    """
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit:,} more characters)"


def relabelling(theorem: Theorem) -> str | None:
    """The statement sheet's line on relabelling positions (``hasse prove --orbits``), or None."""
    if theorem.invariant:
        return f"Invariant under relabelling positions (so --orbits checks one mask per class): {theorem.invariant}."
    if theorem.limit_only:
        return (f"Not invariant under relabelling ({theorem.not_invariant}); but the predicate reads a mask only "
                f"through its limit (so --orbits checks every labelled preorder): {theorem.limit_only}.")
    if theorem.not_invariant:
        return f"Not invariant under relabelling (so --orbits is refused): {theorem.not_invariant}."
    return None


def script_main(theorem: Theorem, argv: list[str] | None = None) -> int:
    """``python -m hasse.proofs.<name>``: exit 0 proved, 1 refuted, 3 unknown, 2 bad input."""
    parser = argparse.ArgumentParser(prog=f"python -m hasse.proofs.{theorem.name}", description=theorem.statement,
                                     epilog=relabelling(theorem))
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--method", choices=(*METHODS, "both"), default="both")
    parser.add_argument("--timeout", type=float, help="seconds per method")
    parser.add_argument("--workers", type=int, default=1, help="processes for exhaustive checks")
    parser.add_argument("--shard", help="i/k: check only the i-th of k parts (exhaustive)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--certificate", metavar="FILE")
    args = parser.parse_args(argv)
    try:
        if args.certificate:  # before any work: never onto a FIFO or a folder
            refuse_overwrite(args.certificate)
        results = prove(theorem, args.n, args.method, timeout=args.timeout, workers=args.workers,
                        shard=parse_shard(args.shard))
        if args.certificate:
            write_certificate(args.certificate, results)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if sys.stderr.isatty():  # a check stopped early (timeout, counterexample) leaves its progress line: clear it
        print("\r\x1b[K", end="", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"n": args.n, "results": [r.to_json() for r in results]}, default=str))
    else:
        for r in results:
            print(format_result(r))
    message = disagreement(results)
    if message:
        print(message, file=sys.stderr)
        return 1
    return exit_status(results)


def exit_status(results: list[Result]) -> int:
    """0 every result proved, 1 one refuted, 3 otherwise (unknown)."""
    if any(r.verdict == REFUTED for r in results):
        return 1
    if all(r.verdict == PROVED for r in results):
        return 0
    return 3

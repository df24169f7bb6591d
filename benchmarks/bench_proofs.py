"""Mask-level proofs (issue 5): exhaustive n = 5 and n = 6, and the largest n Z3 proves in 60 s, better vs naive.

``python -m benchmarks.bench_proofs`` runs (a) and (c); ``--n6`` adds (b) (minutes);
``--only NAME …`` restricts the theorems; ``--quick`` stops the Z3 ladder at n = 6.

(a) Exhaustive, n = 5: every one of the 1,048,576 zero-diagonal masks (the
    no-residual control: masks with their diagonal, up to its first witness), one
    process; seconds and masks per second.
(b) Exhaustive, n = 6: ``reach_stable_by_n_minus_1`` on all 2^30 masks with
    ``--workers`` processes (default 2).
(c) Z3: for each theorem, the better encoding (the kit's) beside the naive one, in
    the same run: n climbs a ladder (1 … 16, then 18, 20, 24, … 64); every check is a
    forked child with a 60 s solver timeout, killed after 65 s. Reported: the largest
    n proved before the first n that was not (time at that n), the difference in n,
    and the time ratio naive / better at the naive encoding's largest n.
"""

from __future__ import annotations

import argparse
import importlib
import time

from benchmarks._timing import run_with_timeout
from hasse.proofs.registry import MASK_THEOREMS

THEOREMS = MASK_THEOREMS
LADDER = tuple(range(1, 17)) + (18, 20, 24, 28, 32, 40, 48, 56, 64)
LIMIT = 60.0


def _exhaustive(name: str, n: int, workers: int):
    from hasse.proofs import registry
    from hasse.proofs.theorem import Context, run_theorem

    r = run_theorem(registry.get(name), n, "exhaustive", Context(workers=workers))
    return r.verdict, r.checked, r.seconds


def _z3(name: str, n: int, encoding: str):
    from hasse.proofs.theorem import Context

    start = time.perf_counter()
    theorem = importlib.import_module(f"hasse.proofs.{name}").THEOREM
    outcome = theorem.z3_check(n, Context(timeout=LIMIT, started=time.monotonic()), encoding=encoding)
    return outcome.verdict, time.perf_counter() - start


def ladder_run(name: str, encoding: str, ladder) -> tuple[dict, int | None]:
    """``({n: seconds} proved before the first failure, that first failing n)``."""
    from hasse.proofs import registry

    times = {}
    for n in (n for n in ladder if n >= registry.get(name).min_n):
        out = run_with_timeout(_z3, (name, n, encoding), LIMIT + 5)
        if out is None or out[1][0] != "proved" or out[1][1] > LIMIT:
            return times, n
        times[n] = out[1][1]
    return times, None


def table_exhaustive(names, n: int, workers: int, label: str = "a") -> None:
    print(f"\n({label}) exhaustive, n = {n}, workers = {workers}")
    print(f"{'theorem':<34} {'verdict':<8} {'masks':>11} {'seconds':>8} {'masks/s':>12}")
    print("-" * 78)
    for name in names:
        verdict, checked, seconds = _exhaustive(name, n, workers)
        rate = checked / seconds if seconds > 0 else float("inf")
        print(f"{name:<34} {verdict:<8} {checked:>11,} {seconds:>8.2f} {rate:>12,.0f}", flush=True)


def table_z3(names, ladder) -> None:
    print(f"\n(c) Z3, largest n proved within {LIMIT:.0f} s, better vs naive (same run)")
    print(f"{'theorem':<34} {'better n':>8} {'s':>6} {'stop':>5} {'naive n':>8} {'s':>6} {'stop':>5}"
          f" {'diff':>5}  ratio at naive's n")
    print("-" * 108)
    for name in names:
        better, better_stop = ladder_run(name, "better", ladder)
        naive, naive_stop = ladder_run(name, "naive", ladder)
        nb, nn = max(better, default=0), max(naive, default=0)
        ratio = ""
        if nn and nn in better:
            x = naive[nn] / better[nn]
            ratio = f"n = {nn}: naive {naive[nn]:.2f} s / better {better[nn]:.2f} s = {x:,.{0 if x >= 10 else 1}f}x"
        fmt = lambda n, t, stop: (f"{n:>8} {t.get(n, 0):>6.1f} {stop if stop else '-':>5}")  # noqa: E731
        print(f"{name:<34} {fmt(nb, better, better_stop)} {fmt(nn, naive, naive_stop)} {nb - nn:>+5}  {ratio}",
              flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", choices=THEOREMS, metavar="NAME", help="only these theorems")
    parser.add_argument("--n6", action="store_true", help="(b): reach_stable_by_n_minus_1 on every mask of size 6")
    parser.add_argument("--workers", type=int, default=2, help="processes for (b) (default 2)")
    parser.add_argument("--skip", nargs="+", choices=("a", "c"), default=(), help="skip these tables")
    parser.add_argument("--quick", action="store_true", help="Z3 ladder 1 … 6 only")
    args = parser.parse_args(argv)
    names = args.only or THEOREMS
    if "a" not in args.skip:
        table_exhaustive(names, 5, 1)
    if args.n6:
        table_exhaustive(["reach_stable_by_n_minus_1"], 6, args.workers, label="b")
    if "c" not in args.skip:
        table_z3(names, LADDER[:6] if args.quick else LADDER)


if __name__ == "__main__":
    main()

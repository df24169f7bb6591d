"""Proofs over isomorphism classes (issue 14): ``--orbits`` beside the labelled enumeration, in one run.

``python -m benchmarks.bench_orbits`` times every mask-level theorem of design §5 at
n = 5 and 6; ``--n7`` adds n = 7 (about 40 minutes on 2 cores); ``--full6`` runs the
labelled scan of n = 6 whole instead of projecting it.

- orbits: :func:`proofs.orbits_check.run_many` over all the theorems, one pass per
  enumeration (classes; classes with loops; labelled preorders), as
  ``hasse prove all --n N --orbits`` does; the pass's wall time, and each theorem's
  own predicate time;
- labelled (the baseline): ``run_theorem(…, "exhaustive")`` with one worker, over every
  mask (n = 5), or over a fixed range of ``2^SAMPLE_BITS`` masks in the middle of the
  numbering, whose rate projects the whole ``2^(n(n-1))`` (n = 6 without ``--full6``,
  and n = 7); an existence statement is timed to its first witness (both ways).

The ratio is labelled / orbits for each theorem (predicate time plus its share of the
enumeration), and for the whole list (pass wall time against the sum of the labelled times).
"""

from __future__ import annotations

import argparse
import time

from hasse.proofs import orbits_check, registry
from hasse.proofs.theorem import UNKNOWN, Context, run_theorem
from hasse.solvers import exhaustive as ex

SAMPLE_BITS = 22


def labelled(theorem, n: int, full: bool) -> tuple[str, float, bool]:
    """(verdict, seconds for the whole space, projected?) of the labelled exhaustive scan."""
    space = ex.space_size(n, theorem.diagonal)
    if full or theorem.existence or space <= 1 << SAMPLE_BITS:
        r = run_theorem(theorem, n, "exhaustive", Context())
        return r.verdict, r.seconds, False
    start = space // 2
    r = run_theorem(theorem, n, "exhaustive", Context(span=(start, start + (1 << SAMPLE_BITS))))
    clean = r.verdict == UNKNOWN and not r.counterexample  # a part of the space, nothing flagged in it
    return f"2^{SAMPLE_BITS} {'clean' if clean else r.verdict}", r.seconds * space / (1 << SAMPLE_BITS), True


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n7", action="store_true", help="add n = 7 (about 40 minutes on 2 cores)")
    p.add_argument("--full6", action="store_true", help="run the labelled scan of n = 6 whole (about 15 minutes)")
    args = p.parse_args(argv)
    theorems = [registry.get(x) for x in registry.MASK_THEOREMS]
    for n in (5, 6) + ((7,) if args.n7 else ()):
        start = time.monotonic()
        results = orbits_check.run_many(theorems, n, [Context() for _ in theorems])
        wall = time.monotonic() - start
        print(f"\nn = {n}: hasse prove all --orbits: {wall:.1f} s wall for {len(theorems)} theorems")
        print(f"{'theorem':34} {'enumeration':22} {'count':>13} {'orbits':>18} {'pass':>9} "
              f"{'labelled':>26} {'ratio':>8}")
        total = 0.0
        for t, r in zip(theorems, results):
            verdict, seconds, projected = labelled(t, n, args.full6 or n == 5)
            total += seconds
            own = r.seconds  # the pass this theorem ran in (shared enumeration)
            shown = f"{verdict} {seconds:,.1f} s" + (" (proj.)" if projected else "")
            mine = f"{r.verdict} {r.details.get('predicate_seconds', 0):.1f} s"
            print(f"{t.name:34} {r.details.get('kind', ''):22} {r.details.get('count', 0):>13,} "
                  f"{mine:>18} {own:>8.1f}s {shown:>26} {seconds / max(own, 1e-3):>7.0f}x")
        print(f"all: orbits {wall:.1f} s, labelled {total:,.1f} s (sum), ratio {total / max(wall, 1e-3):,.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

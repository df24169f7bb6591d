"""Symmetry breaking in the exact synthesis: CP-SAT with and without the automorphism group's lex-leader constraints.

One run, side by side, per target and depth: the seconds to prove the optimum (or the status at the time limit)
without symmetry breaking (the baseline) and with it, and their ratio. Both runs must give the same optimum when
both finish (an assertion: symmetry breaking never changes the optimum).

    python -m benchmarks.bench_symmetry [--timeout S]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hasse.solvers.synthesis import cpsat
from hasse.solvers.synthesis.symmetry import automorphisms
from hasse.theory.catalog import build_mask
from hasse.theory.synthesis import check_target

TARGETS = ("document:lengths=3+3+3+3", "bidirectional:n=10", "block_causal:n=12,block=3")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per solve (default 60)")
    args = ap.parse_args()
    print(f"{'target':28} L  group order  without (s, status)     with (s, status)        ratio")
    for spec in TARGETS:
        m = build_mask(spec).matrix
        t = check_target(m | np.eye(len(m), dtype=bool))
        order = automorphisms(t)[1]
        for layers in (2, 3):
            runs = []
            for symmetry in (False, True):
                start = time.perf_counter()
                r = cpsat.minimum_cpsat(t, layers, symmetry=symmetry, workers=1, timeout=args.timeout)
                runs.append((time.perf_counter() - start, r.status, r.cost))
            (s0, st0, c0), (s1, st1, c1) = runs
            assert not (st0 == st1 == "optimal") or c0 == c1, (spec, layers, c0, c1)
            print(f"{spec:28} {layers}  {order!s:>11}  {s0:6.2f} {st0:8} {c0:4}   {s1:6.2f} {st1:8} {c1:4}"
                  f"   {s0 / max(s1, 1e-9):6.2f}x")


if __name__ == "__main__":
    main()

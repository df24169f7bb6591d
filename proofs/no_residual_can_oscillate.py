"""no_residual_can_oscillate — without the residual, information flow need not settle (negative control).

Statement (existence). For ``n >= 2`` there is a mask ``M`` of size ``n`` whose powers
``M^0 = I, M, M^2, …`` never settle: ``M^L != M^(L+1)`` for every ``L``. Proved by a
witness: the mask, its pre-period ``μ`` and period ``λ >= 2``
(``M^(μ+λ) = M^μ``, the smallest such ``μ`` and ``λ``). With the residual
(``A = I or M``) this cannot happen (``reach_stable_by_n_minus_1``); for ``n = 1``
the statement is false (both 1×1 masks settle).

Notation (design.md §2, "Without residual"). ``A = M``, the diagonal included:
``2^(n²)`` masks. The sequence of powers of a Boolean matrix is eventually periodic;
it settles iff the period is 1.

Exhaustive method. Masks in index order, in vectorised batches
(:func:`theory.batch.power_cycle`: the first repeat among the powers gives pre-period
and period of every mask at once), stopping at the first with period ≥ 2. The
witness is re-checked with plain numpy powers.

Z3 method (:func:`solvers.smt.claims.no_residual_can_oscillate`), a satisfiable query.
- naive: ``M^T != M^(T+1)`` at ``T = (n-1)² + 1``, beyond any pre-period, so the
  powers never settle (``unsat`` would refute the statement): ``T + 1`` unrolled powers;
- better: the lasso ``M^2 = I != M`` (pre-period 0, period 2): two products.

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3"): exhaustive any n up to 8 in a hundredth of a second (the first
witness, a swap of positions 0 and 1, is mask 2 + 2^n); Z3 within 60 s: better
n = 64 (22 s, the end of the ladder), naive n = 14 (42 s).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (the
role of the residual in the convergence theorem); design.md §2 and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem
from hasse.solvers.smt import claims as z3_claims
from hasse.theory import batch

NAME = "no_residual_can_oscillate"
STATEMENT = "without the residual (A = M) some mask's powers never settle (witness: mask, pre-period, period)"


def flag(rows: np.ndarray) -> np.ndarray:
    """``(B,)``: masks (taken as ``A = M``) whose powers have period at least 2."""
    _, period = batch.power_cycle(rows)
    return period >= 2


def cycle(mask: np.ndarray) -> dict:
    """Pre-period and period of the powers of ``mask`` by plain numpy matrix products (not the engine)."""
    a = np.asarray(mask, dtype=bool).astype(np.int64)
    seen = [np.eye(len(a), dtype=bool)]
    while True:
        nxt = (a @ seen[-1].astype(np.int64)) > 0
        for s, old in enumerate(seen):
            if np.array_equal(old, nxt):
                period = len(seen) - s
                return {"preperiod": s, "period": period, "settles": period == 1,
                        "cycle": [p.astype(int).tolist() for p in seen[s:]]}
        seen.append(nxt)


def explain(mask: np.ndarray) -> dict:
    pre, per = batch.power_cycle(batch.pack(np.asarray(mask, dtype=bool)[None]))
    checked = cycle(mask)
    return {"preperiod": int(pre[0]), "period": int(per[0]),
            "confirmed": (checked["preperiod"], checked["period"]) == (int(pre[0]), int(per[0]))
            and not checked["settles"], "cycle": checked["cycle"]}


def confirm(mask: np.ndarray) -> dict:
    checked = cycle(mask)
    return {"preperiod": checked["preperiod"], "period": checked["period"], "confirmed": not checked["settles"],
            "cycle": checked["cycle"]}


# why the statement is invariant under relabelling (hasse prove --orbits, proofs.orbits_check)
INVARIANT = ("(P M Pᵀ)^k = P M^k Pᵀ, so a relabelled mask settles with the same pre-period and period")
THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_claims.no_residual_can_oscillate, confirm,
                       diagonal=True, existence=True, shaped_encoding="better",
                       unconfirmed="the solver's witness settles when re-checked", min_n=2,
                       invariant=INVARIANT, max_n={"exhaustive": 8, "z3": 256})  # size guard: the first witness is mask 2 + 2^n

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

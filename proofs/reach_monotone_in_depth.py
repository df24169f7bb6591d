"""reach_monotone_in_depth — a deeper stack never loses a dependency.

Statement. For every mask ``M`` of size ``n`` and every ``L = 0 … n``:
``A^L <= A^(L+1)`` entrywise, where ``A = I or M``. (For ``L > n`` it follows from
``reach_stable_by_n_minus_1``: the powers are constant from ``n - 1`` on.)

Notation (design.md §2). ``M[q, k]``: query ``q`` attends key ``k``; ``A = I or M``
(residual); ``A^L = R(L)``, ``A^L[q, k]`` iff a walk of ``L`` steps ``k -> q`` exists.
Masks with a zero diagonal only: under the residual the diagonal plays no role,
so there are ``2^(n(n-1))`` of them.

Exhaustive method. Every mask, in vectorised batches (:mod:`theory.batch`: packed rows,
``A^0 … A^(n+1)`` by Boolean products); a mask fails if some ``A^L & ~A^(L+1)`` is
non-zero. Counterexample: the mask, ``L``, the pair ``(q, k)`` and a path ``k -> q``.

Z3 method (:func:`solvers.smt.claims.reach_monotone_in_depth`).
- naive: unrolled powers ``A^0 … A^(n+1)`` on whole matrices; negation: some
  ``L, q, k`` with ``A^L[q,k]`` and not ``A^(L+1)[q,k]``;
- better: WLOG ``k = 0`` (relabel), so only column 0 of the powers
  (``n²`` terms per power instead of ``n³``), the other positions sorted by hop
  distance from 0 (:func:`solvers.smt.masks.sorted_by_distance`).

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3"): exhaustive n = 5 (1,048,576 masks) in 0.07 s; Z3 within 60 s:
better n = 40 (58 s), naive n = 16 (27 s; the better one takes 0.5 s there).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (the
convergence of deep information flow); design.md §2 and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem, shortest_path
from hasse.solvers.smt import claims as z3_claims
from hasse.theory import batch

NAME = "reach_monotone_in_depth"
STATEMENT = "A^L <= A^(L+1) entrywise for L = 0 … n (A = I or M)"


def flag(rows: np.ndarray) -> np.ndarray:
    """``(B,)``: masks where some ``A^L`` has an entry that ``A^(L+1)`` lacks."""
    n = rows.shape[0]
    ps = batch.powers(rows, n + 1)
    bad = np.zeros(rows.shape[1], dtype=bool)
    for level in range(n + 1):
        bad |= ~batch.contained(ps[level], ps[level + 1])
    return bad


def explain(mask: np.ndarray) -> dict:
    n = len(mask)
    ps = [batch.unpack(p, n)[0] for p in batch.powers(batch.pack(mask[None]), n + 1)]
    for level in range(n + 1):
        lost = np.argwhere(ps[level] & ~ps[level + 1])
        if len(lost):
            q, k = (int(x) for x in lost[0])
            return {"L": level, "pair": [q, k], "path": shortest_path(mask, k, q),
                    "claim": f"A^{level}[{q},{k}] but not A^{level + 1}[{q},{k}]"}
    return {"note": "no failure found when re-checking this mask"}


def confirm(mask: np.ndarray) -> dict:
    """Re-check a decoded model with plain numpy powers (not the engine)."""
    n = len(mask)
    a = (np.asarray(mask, dtype=bool) | np.eye(n, dtype=bool)).astype(np.int64)
    p = np.eye(n, dtype=np.int64)
    for level in range(n + 1):
        nxt = (a @ p > 0).astype(np.int64)
        if (p > nxt).any():
            return {"confirmed": True, "L": level}
        p = nxt
    return {"confirmed": False}


# why the statement is invariant under relabelling (hasse prove --orbits, proofs.orbits_check)
INVARIANT = ("A^L <= A^(L+1) relabels entrywise: (P A Pᵀ)^L = P A^L Pᵀ, and I = P I Pᵀ")
THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_claims.reach_monotone_in_depth,
                       confirm, invariant=INVARIANT, max_n={"z3": 160})  # size guard: about 4x the n Z3 proves in 60 s

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

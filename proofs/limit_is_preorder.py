"""limit_is_preorder — in the limit, "k is upstream of q" is a preorder.

Statement. For every mask ``M`` of size ``n``, the limit ``R* = A^(L*)`` is
reflexive (``R*[q, q]``) and transitive (``R*[q, j]`` and ``R*[j, k]`` imply ``R*[q, k]``).

Notation (design.md §2). ``A = I or M``; ``L* = min{L : A^L = A^(L+1)} <= n - 1``
(``reach_stable_by_n_minus_1``), so ``R* = A^(n-1)``; ``k ≼ q`` iff ``R*[q, k]``.
Zero-diagonal masks: ``2^(n(n-1))``.

Exhaustive method. Every mask in vectorised batches; ``R*`` is the engine's batched closure
(:func:`theory.batch.closure`, ``⌈log₂(n−1)⌉`` Boolean squarings of ``A``) — the code
under test; a mask fails if a diagonal bit is missing or ``R* . R*`` has an entry
``R*`` lacks. Counterexample: the mask and the position or triple ``(q, j, k)``.

Z3 method (:func:`solvers.smt.claims.limit_is_preorder`).
- naive: ``R* = A^(n-1)`` by unrolled powers on whole matrices; negation: a
  non-reflexive position or a triple breaking transitivity, over all ``n³`` triples;
- better: a failure names at most three positions ``k, j, q``; relabel them ``0, 1,
  2`` in that order of first appearance (:func:`solvers.smt.claims.canonical_roles`:
  five ways for them to coincide) and sort the others by hop distance from 0. Only
  columns 0 and 1 of ``A^(n-1)`` are needed. Disjuncts checked one at a time on one
  solver (incremental).

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3"): exhaustive n = 5 in 0.04 s; Z3 within 60 s: better n = 20 (32 s),
naive n = 6 (8 s).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (the
limit of the flow is a preorder); design.md §2 (preorder) and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem, shortest_path
from hasse.solvers.smt import claims as z3_claims
from hasse.theory import batch

NAME = "limit_is_preorder"
STATEMENT = "R* is reflexive and transitive"


def flag(rows: np.ndarray) -> np.ndarray:
    """``(B,)``: masks whose ``R*`` misses a diagonal entry or is not transitive."""
    limit = batch.closure(rows)
    reflexive = batch.contained(batch.identity(rows.shape[0], 1), limit)
    return ~reflexive | ~batch.contained(batch.product(limit, limit), limit)


def failure(limit: np.ndarray) -> dict | None:
    """The first way a relation (``(n, n)`` bool) fails to be a preorder, or None."""
    n = len(limit)
    for q in range(n):
        if not limit[q, q]:
            return {"part": "not reflexive", "position": q}
    for q in range(n):
        for j in range(n):
            for k in range(n):
                if limit[q, j] and limit[j, k] and not limit[q, k]:
                    return {"part": "not transitive", "triple": [q, j, k],
                            "claim": f"R*[{q},{j}] and R*[{j},{k}] but not R*[{q},{k}]"}
    return None


def explain(mask: np.ndarray) -> dict:
    limit = batch.unpack(batch.closure(batch.pack(mask[None])), len(mask))[0]
    found = failure(limit) or {"note": "no failure found when re-checking this mask"}
    if "triple" in found:
        q, j, k = found["triple"]
        found["paths"] = [shortest_path(mask, k, j), shortest_path(mask, j, q)]
    return found | {"limit": limit.astype(int).tolist()}


def confirm(mask: np.ndarray, at: int | None = None) -> dict:
    """Re-check a decoded model: ``A^at`` (numpy powers, ``at = n - 1``) is not a preorder."""
    n = len(mask)
    a = (np.asarray(mask, dtype=bool) | np.eye(n, dtype=bool)).astype(np.int64)
    p = np.eye(n, dtype=np.int64)
    for _ in range(max(n - 1, 0) if at is None else at):
        p = (a @ p > 0).astype(np.int64)
    found = failure(p.astype(bool))
    return {"confirmed": found is not None} | (found or {})


# why the statement is invariant under relabelling (hasse prove --orbits, proofs.orbits_check)
INVARIANT = ("R*(P M Pᵀ) = P R*(M) Pᵀ, and reflexivity and transitivity of a relation do not depend on its "
             "labels")
THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_claims.limit_is_preorder,
                       confirm, invariant=INVARIANT, max_n={"z3": 80})  # size guard: about 4x the n Z3 proves in 60 s

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

"""reach_stable_by_n_minus_1 — the information flow settles within n − 1 layers, at the longest hop distance.

Statement. For every mask ``M`` of size ``n``: (a) ``A^(n-1) = A^n``; (b) the
convergence depth ``L*(M) = min{L >= 0 : A^L = A^(L+1)}`` equals the largest finite
hop distance ``max{dist(k, q) < inf}``.

Notation (design.md §2). ``A = I or M``; ``A^L[q, k]``: a walk of ``L`` steps
``k -> q``; ``dist(k, q)``: fewest attention edges on a path ``k -> q`` (0 for
``q = k``), computed by breadth-first layers along ``M`` alone — a second route,
not the powers. Zero-diagonal masks: ``2^(n(n-1))``.

Exhaustive method. Every mask in vectorised batches: ``A^0 … A^n`` (:func:`theory.batch.powers`),
``L*`` as the first repeat among them (:func:`theory.batch.first_repeat`, -1 if
none before ``n``), the largest hop distance by breadth-first layers
(:func:`theory.batch.max_hop_distance`). Counterexample: the mask, the part that
fails, a pair and its path.

Z3 method (:func:`solvers.smt.claims.reach_stable_by_n_minus_1`), two queries each.
- naive: unrolled powers ``A^0 … A^n``; (a) some entry of ``A^(n-1)`` and ``A^n``
  differs; (b) ``L*`` as an if-then-else chain over ``A^L = A^(L+1)``, the largest
  hop distance over the breadth-first layers ``F_0 … F_n`` from every source, with
  ``F_n`` non-empty (a distance of ``n`` or more) as a failure too. The pigeonhole
  reasoning this needs makes it blow up at n = 6 or 7.
- better: per source, WLOG source 0 (relabel). (a) column 0 of the powers differs
  between ``n - 1`` and ``n``; (b) ``L*_0`` (first ``L`` with column 0 of ``A^L`` equal to
  that of ``A^(L+1)``) against the largest hop distance from 0. Sound for (b) because
  ``L* = max_k L*_k`` and the largest distance is the maximum over sources (column
  ``k`` of ``A^(L+1)`` is ``A`` times column ``k`` of ``A^L``: columns settle
  independently and stay settled). The other positions sorted by hop distance from
  0 make every column of the powers a prefix, which removes the pigeonhole search.
  Disjuncts checked one at a time on one solver (incremental).

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3"): exhaustive n = 5 in 0.12 s, n = 6 (2^30 masks) in 103 s with
``--workers 2``; Z3 within 60 s: better n = 16 (17 s), naive n = 5 (1.4 s).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (the
convergence theorem); design.md §2 (convergence depth) and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem, shortest_path
from hasse.solvers.smt import claims as z3_claims
from hasse.theory import batch

NAME = "reach_stable_by_n_minus_1"
STATEMENT = "A^(n-1) = A^n, and L*(M) equals the largest finite hop distance"


def flag(rows: np.ndarray) -> np.ndarray:
    """``(B,)``: masks with ``A^(n-1) != A^n`` or ``L*`` different from the largest hop distance."""
    n = rows.shape[0]
    ps = batch.powers(rows, n)
    unstable = ~batch.equal_masks(ps[max(n - 1, 0)], ps[n])
    return unstable | (batch.convergence_depth(rows, ps) != batch.max_hop_distance(rows))


def explain(mask: np.ndarray) -> dict:
    n = len(mask)
    rows = batch.pack(mask[None])
    ps = [batch.unpack(p, n)[0] for p in batch.powers(rows, n)]
    new = np.argwhere(ps[n] & ~ps[max(n - 1, 0)])
    if len(new) or not np.array_equal(ps[n], ps[max(n - 1, 0)]):
        q, k = (int(x) for x in (new[0] if len(new) else np.argwhere(ps[n] != ps[max(n - 1, 0)])[0]))
        return {"part": "A^(n-1) != A^n", "pair": [q, k], "path": shortest_path(mask, k, q)}
    depth = int(batch.convergence_depth(rows, batch.powers(rows, n))[0])
    dist = batch.hop_distances(rows)[0]
    q, k = (int(x) for x in np.unravel_index(int(np.argmax(dist)), dist.shape))
    return {"part": "L* != largest hop distance", "L*": depth,
            "largest_hop_distance": int(batch.max_hop_distance(rows)[0]),
            "farthest_pair": [q, k], "path": shortest_path(mask, k, q)}


def confirm(mask: np.ndarray, at: int | None = None) -> dict:
    """Re-check a decoded model with numpy: ``A^at != A^(at+1)`` (``at = n - 1``), or ``L*`` vs hop distances."""
    n = len(mask)
    a = (np.asarray(mask, dtype=bool) | np.eye(n, dtype=bool)).astype(np.int64)
    ps = [np.eye(n, dtype=bool)]
    for _ in range(n + 1):
        ps.append((a @ ps[-1].astype(np.int64)) > 0)
    at = max(n - 1, 0) if at is None else at
    if not np.array_equal(ps[at], ps[at + 1]):
        return {"confirmed": True, "part": f"A^{at} != A^{at + 1}"}
    depth = next(L for L in range(n + 1) if np.array_equal(ps[L], ps[L + 1]))
    longest = max(int(np.argmax([p[q, k] for p in ps])) for q in range(n) for k in range(n) if ps[-1][q, k])
    return {"confirmed": depth != longest, "L*": depth, "largest_hop_distance": longest}


# why the statement is invariant under relabelling (hasse prove --orbits, proofs.orbits_check)
INVARIANT = ("(P A Pᵀ)^k = P A^k Pᵀ for every k, and hop distances are those of the relabelled pairs")
THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_claims.reach_stable_by_n_minus_1,
                       confirm, invariant=INVARIANT, max_n={"z3": 64})  # size guard: about 4x the n Z3 proves in 60 s

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

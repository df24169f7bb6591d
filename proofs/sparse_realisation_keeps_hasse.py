"""sparse_realisation_keeps_hasse — Hasse edges plus a cycle per class realise the same limit, at a predicted depth.

Statement. For every mask ``M`` of size ``n``, its sparse realisation ``S``
(:func:`theory.sparse.sparse_realisation`: the diagonal; in each class, members
ascending, every member attended by the next one and the largest by the smallest
— a cycle; for each Hasse edge ``[k] -> [q]`` the smallest member of ``[q]`` attends
the smallest member of ``[k]``) has (a) the same limit, ``R*(S) = R*(M)``, and (b)
the predicted convergence depth, ``L*(S) = pred(M)``.

Predicted depth. In ``S`` information enters and leaves a class only through its
smallest member, so the hop distance from ``x`` to ``y`` (``R*[y, x]``) is

    pd(x, y) = (j - i) mod s                          if [x] = [y] (size s),
    pd(x, y) = ((-i) mod s_x) + delta([x], [y]) + j   otherwise,

where ``i``, ``j`` are the ranks of ``x``, ``y`` among the members of their classes
(0 = smallest), ``s_x = |[x]|``, and ``delta`` the fewest edges of a path in the Hasse
diagram (shortest paths over the class DAG; the cycle steps to leave ``[x]`` and to
reach ``y`` counted). ``pred(M) = max pd(x, y)`` over the pairs with ``R*[y, x]``; it
equals ``max( max_C |C| - 1, max_{D < C} (|D| - 1) + delta(D, C) + (|C| - 1) )``.
It is computed from the classes and the Hasse diagram, never from ``S``.

Notation (design.md §2). ``L*(S) = min{L : B^L = B^(L+1)}`` with ``B = I or S``;
zero-diagonal masks: ``2^(n(n-1))``.

Exhaustive method. Every mask in vectorised batches (:mod:`theory.batch`:
``sparse_realisation``, ``closure``, ``convergence_depth`` of ``S``; the prediction
from ``equivalence``, ``covering`` and breadth-first distances along the Hasse
diagram). Counterexample: the mask, ``S``, and the pair or the two depths.

Z3 method (:func:`solvers.z3_hasse.sparse_realisation_keeps_hasse`).
- naive: ``R* = A^(n-1)`` by unrolled powers, ``S`` built from it (classes, smallest
  members, cycle successor, Hasse edges), ``R*(S) = S^(n-1)`` and ``L*(S)`` from the
  powers ``S^0 … S^n`` (if-then-else chain), ``pd`` with integers; two queries;
- better: the claim depends on ``M`` only through ``R*``, and the limits are exactly
  the preorders (:func:`solvers.z3_masks.encode_preorder`), so it quantifies over
  preorders ``R``; then a certificate instead of powers: ``R`` and ``pd`` satisfy the
  equations whose only solution is reachability and hop distance in ``S``
  (:func:`solvers.z3_masks.encode_distances`: closed under steps of ``S``, every
  entry justified by a step that lowers ``pd`` by one, no step shortens it, ``pd = 0``
  on the diagonal), hence ``R*(S) = R`` and ``dist_S = pd``, so ``L*(S)`` — the largest
  hop distance (``reach_stable_by_n_minus_1``) — is ``pred``. Bit-vector arithmetic,
  one query pair per source, disjuncts checked one at a time (``QF_BV`` solver).
  No relabelling: ``S`` depends on the numbering.

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3 (issue 5)"): exhaustive n = 5 in 2.1 s; Z3 within 60 s: better n = 7 (46 s),
naive n = 5 (9 s).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (any mask
with the same limit realises the same Hasse diagram); design.md §2 (dense mask,
sparse realisation) and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem, shortest_path
from hasse.solvers import z3_hasse
from hasse.theory import batch

NAME = "sparse_realisation_keeps_hasse"
STATEMENT = "the mask of Hasse edges plus a cycle per class has the same R*, and its depth L*(S) is as predicted"


def predicted_distances(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(pd, reach)``: ``(B, n, n)`` predicted hop distances ``pd[b, y, x]`` and ``R*`` as bool."""
    n = rows.shape[0]
    limit = batch.closure(rows)
    classes = batch.unpack(batch.equivalence(limit), n)  # (B, n, n) bool
    size = classes.sum(axis=2)  # (B, n)
    rank = (classes & np.tri(n, k=-1, dtype=bool)).sum(axis=2)  # members below each position
    delta = batch.hop_distances(batch.covering(limit))  # (B, n, n): Hasse edges x -> y
    i, j = rank[:, None, :], rank[:, :, None]  # rank of the source x, of the target y
    s_x = size[:, None, :]
    pd = np.where(classes, (j - i) % s_x, (-i) % s_x + delta + j)
    return pd, batch.unpack(limit, n)


def predicted_depth(rows: np.ndarray) -> np.ndarray:
    """``(B,)``: ``pred(M)``, the largest predicted hop distance over the pairs of ``R*``."""
    pd, reach = predicted_distances(rows)
    return np.where(reach, pd, 0).max(axis=(1, 2))


def parts(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sparse = batch.sparse_realisation(rows)
    same = batch.equal_masks(batch.closure(sparse), batch.closure(rows))
    return ~same, batch.convergence_depth(sparse), predicted_depth(rows)


def flag(rows: np.ndarray) -> np.ndarray:
    different, depth, predicted = parts(rows)
    return different | (depth != predicted)


def explain(mask: np.ndarray) -> dict:
    n = len(mask)
    rows = batch.pack(mask[None])
    sparse = batch.unpack(batch.sparse_realisation(rows), n)[0]
    limit = batch.unpack(batch.closure(rows), n)[0]
    limit_s = batch.unpack(batch.closure(batch.pack(sparse[None])), n)[0]
    out = {"sparse": sparse.astype(int).tolist()}
    diff = np.argwhere(limit != limit_s)
    if len(diff):
        q, k = (int(x) for x in diff[0])
        return out | {"part": "R*(S) != R*(M)", "pair": [q, k], "in_limit_of_mask": bool(limit[q, k]),
                      "path_in_mask": shortest_path(mask, k, q), "path_in_sparse": shortest_path(sparse, k, q)}
    _, depth, predicted = parts(rows)
    return out | {"part": "L*(S) != predicted depth", "depth": int(depth[0]), "predicted": int(predicted[0])}


def confirm(mask: np.ndarray) -> dict:
    """Re-check a decoded model with the per-mask engine (theory.sparse, theory.order, theory.reach)."""
    from hasse.theory.order import mask_to_order
    from hasse.theory.sparse import sparse_realisation

    sparse = sparse_realisation(mask)
    same = np.array_equal(mask_to_order(sparse).closure(), mask_to_order(mask).closure())
    depth = mask_to_order(sparse).convergence_depth
    predicted = int(predicted_depth(batch.pack(np.asarray(mask, dtype=bool)[None]))[0])
    return {"confirmed": not same or depth != predicted, "same_limit": same, "depth": depth, "predicted": predicted}


THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_hasse.sparse_realisation_keeps_hasse, confirm)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

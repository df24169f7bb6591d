"""sparse_realisation_keeps_hasse — Hasse edges plus a cycle per class realise the same limit, at a predicted depth.

Statement. For every mask ``M`` of size ``n``, its sparse realisation ``S``
(:func:`theory.sparse.sparse_realisation`: the diagonal; in each class, members
ascending, every member attended by the next one and the largest by the smallest
— a cycle; for each Hasse edge ``[k] -> [q]`` the smallest member of ``[q]`` attends
the smallest member of ``[k]``) is (0) exactly that mask — built here from the classes
and the covering relation of ``R*(M)`` and compared entry by entry, so each class holds
one cycle through all its members in that direction and nothing else is attended — and
has (a) the same limit, ``R*(S) = R*(M)`` (hence the same classes and the same Hasse
diagram), (b) the predicted hop distance ``dist_S(x, y) = pd(x, y)`` for every pair with
``R*[y, x]``, and (c) the predicted convergence depth, ``L*(S) = pred(M)``. (A cycle run
the other way keeps (a) and (c) but breaks (0) and (b).)

What a verdict covers. The exhaustive method checks the batched realisation
:func:`theory.batch.sparse_realisation`; the per-mask one behind the command line,
:func:`theory.sparse.sparse_realisation`, is checked against the same definition by
``engine_matches_definitions``. The Z3 method proves the statement (a)–(c) about the
realisation it builds itself from ``R``.

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
``sparse_realisation``, ``closure``, ``hop_distances`` and ``convergence_depth`` of ``S``;
the prediction from ``equivalence``, ``covering`` and breadth-first distances along the
Hasse diagram; the designed mask from ``R*`` as numpy arrays, :func:`designed_realisation`).
Counterexample: the mask, ``S``, and the entry, the pair or the two depths.

Z3 method (:func:`solvers.smt.hasse.sparse_realisation_keeps_hasse`).
- naive: ``R* = A^(n-1)`` by unrolled powers, ``S`` built from it (classes, smallest
  members, cycle successor, Hasse edges), ``R*(S) = S^(n-1)`` and ``L*(S)`` from the
  powers ``S^0 … S^n`` (if-then-else chain), ``pd`` with integers; two queries;
- better: the claim depends on ``M`` only through ``R*``, and the limits are exactly
  the preorders (:func:`solvers.smt.masks.encode_preorder`), so it quantifies over
  preorders ``R``; then a certificate instead of powers: ``R`` and ``pd`` satisfy the
  equations whose only solution is reachability and hop distance in ``S``
  (:func:`solvers.smt.masks.encode_distances`: closed under steps of ``S``, every
  entry justified by a step that lowers ``pd`` by one, no step shortens it, ``pd = 0``
  on the diagonal), hence ``R*(S) = R`` and ``dist_S = pd``, so ``L*(S)`` — the largest
  hop distance (``reach_stable_by_n_minus_1``) — is ``pred``. Bit-vector arithmetic,
  one query pair per source, disjuncts checked one at a time (``QF_BV`` solver).
  Plus a symmetry breaking that is sound for this statement
  (:mod:`solvers.smt.sparse`): ``S`` depends on the numbering only through the order of
  the members inside each class, so the preorders are taken canonically numbered
  (classes are runs of consecutive positions, each class after the classes that reach it).

``--orbits``. The statement is invariant under relabelling, but its predicate
is not: ``S`` numbers the members of each class by position, so a relabelled mask gets
another cycle, not a relabelled one, and a class representative says nothing about the
other members of its class. Every part of the predicate is, however, computed from
``R*(M)`` (:data:`LIMIT_ONLY`), so ``--orbits`` runs it over every labelled preorder ``P``
(as the mask ``P - I``, whose limit is ``P``): 9,535,241 at n = 7 instead of 2^42 masks,
with a run-time control that the flags of random masks equal those of their limits.

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3"): exhaustive n = 5 in 2.1 s; Z3 within 60 s: better n = 10 (28 s; n = 9
in 12 s), naive n = 5 (9 s).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (any mask
with the same limit realises the same Hasse diagram); design.md §2 (dense mask,
sparse realisation) and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem, shortest_path
from hasse.solvers.smt import sparse as z3_sparse
from hasse.theory import batch

NAME = "sparse_realisation_keeps_hasse"
STATEMENT = ("the mask of Hasse edges plus a cycle per class is as designed, has the same R*, and its hop distances "
             "and depth L*(S) are as predicted")


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


def designed_realisation(rows: np.ndarray) -> np.ndarray:
    """``(B, n, n)`` bool: the realisation of the statement, from ``R*`` with numpy (not :mod:`theory.batch`'s)."""
    n, count = rows.shape
    limit = batch.unpack(batch.closure(rows), n)  # (B, n, n)
    same = limit & limit.transpose(0, 2, 1)
    index = np.arange(n)
    first = same.argmax(axis=2)  # (B, n): smallest member of each position's class
    above = same & (index[None, None, :] > index[None, :, None])
    after = np.where(above.any(axis=2), above.argmax(axis=2), first)  # the member after p, cyclically
    out = np.broadcast_to(np.eye(n, dtype=bool), (count, n, n)).copy()
    b, p = np.nonzero(same.sum(axis=2) > 1)
    out[b, after[b, p], p] = True  # the next member attends p; the smallest attends the largest
    strict = limit & ~limit.transpose(0, 2, 1)
    covers = strict & ~(np.matmul(strict.astype(np.uint8), strict.astype(np.uint8)) > 0)
    is_first = first == index
    return out | (covers & is_first[:, :, None] & is_first[:, None, :])


def parts(rows: np.ndarray) -> dict[str, np.ndarray]:
    """Per mask, each part of the statement that fails (``(B,)`` bool each), and the depths."""
    n = rows.shape[0]
    sparse = batch.sparse_realisation(rows)
    pd, reach = predicted_distances(rows)
    hops = batch.hop_distances(sparse)
    depth, predicted = batch.convergence_depth(sparse), np.where(reach, pd, 0).max(axis=(1, 2))
    return {"S is not the designed mask": (batch.unpack(sparse, n) != designed_realisation(rows)).any(axis=(1, 2)),
            "R*(S) != R*(M)": ~batch.equal_masks(batch.closure(sparse), batch.closure(rows)),
            "dist_S != predicted hop distance": (reach & (hops != pd)).any(axis=(1, 2)),
            "L*(S) != predicted depth": depth != predicted, "depth": depth, "predicted": predicted}


def flag(rows: np.ndarray) -> np.ndarray:
    found = parts(rows)
    return np.logical_or.reduce([v for k, v in found.items() if k not in ("depth", "predicted")])


def explain(mask: np.ndarray) -> dict:
    n = len(mask)
    rows = batch.pack(mask[None])
    sparse = batch.unpack(batch.sparse_realisation(rows), n)[0]
    out = {"sparse": sparse.astype(int).tolist()}
    limit = batch.unpack(batch.closure(rows), n)[0]
    limit_s = batch.unpack(batch.closure(batch.pack(sparse[None])), n)[0]
    diff = np.argwhere(limit != limit_s)
    if len(diff):
        q, k = (int(x) for x in diff[0])
        return out | {"part": "R*(S) != R*(M)", "pair": [q, k], "in_limit_of_mask": bool(limit[q, k]),
                      "path_in_mask": shortest_path(mask, k, q), "path_in_sparse": shortest_path(sparse, k, q)}
    found = parts(rows)
    if found["S is not the designed mask"][0]:
        designed = designed_realisation(rows)[0]
        q, k = (int(x) for x in np.argwhere(sparse != designed)[0])
        return out | {"part": "S is not the designed mask", "designed": designed.astype(int).tolist(),
                      "entry": [q, k], "in_sparse": bool(sparse[q, k])}
    if found["dist_S != predicted hop distance"][0]:
        pd, reach = predicted_distances(rows)
        hops = batch.hop_distances(batch.pack(sparse[None]))
        y, x = (int(v) for v in np.argwhere(reach[0] & (hops[0] != pd[0]))[0])
        return out | {"part": "dist_S != predicted hop distance", "pair": [x, y], "distance": int(hops[0, y, x]),
                      "predicted": int(pd[0, y, x]), "path_in_sparse": shortest_path(sparse, x, y)}
    return out | {"part": "L*(S) != predicted depth", "depth": int(found["depth"][0]),
                  "predicted": int(found["predicted"][0])}


def confirm(mask: np.ndarray) -> dict:
    """Re-check a decoded model with the per-mask engine (theory.sparse, theory.order, theory.reach)."""
    from hasse.theory.order import mask_to_order
    from hasse.theory.sparse import sparse_realisation

    sparse = sparse_realisation(mask)
    same = np.array_equal(mask_to_order(sparse).closure(), mask_to_order(mask).closure())
    depth = mask_to_order(sparse).convergence_depth
    predicted = int(predicted_depth(batch.pack(np.asarray(mask, dtype=bool)[None]))[0])
    return {"confirmed": not same or depth != predicted, "same_limit": same, "depth": depth, "predicted": predicted}


# --orbits: the predicate is not invariant, but it reads a mask only through its limit, so the
# labelled preorders cover every mask (proofs.orbit_cover, LIMITS)
NOT_INVARIANT = ("the realisation picks its cycle orders and edge ends by position, so a relabelled mask "
                 "gets another sparse mask, not only a relabelled one")
LIMIT_ONLY = ("every part is computed from R*(M) = batch.closure(M): the realisation (theory.batch."
              "sparse_realisation starts from the closure), the designed mask, the predicted distances and depth, "
              "and the comparison of R*(S) with R*(M)")
THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_sparse.sparse_realisation_keeps_hasse,
                       confirm, not_invariant=NOT_INVARIANT, limit_only=LIMIT_ONLY,
                       max_n={"z3": 28})  # size guard: about 4x the n Z3 proves in 60 s

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

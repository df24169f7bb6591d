"""quotient_is_partial_order — on classes of mutually reachable positions, the limit is a partial order.

Statement. For every mask ``M`` of size ``n``, with classes the equivalence classes
of ``E = R* and R*^T`` (mutual reachability), the relation ``[k] <= [q] iff R*[q, k]``
is well defined (it does not depend on the members chosen), reflexive,
antisymmetric (``[k] <= [q] <= [k]`` implies ``[k] = [q]``) and transitive.

Notation (design.md §2). ``A = I or M``, ``R* = A^(L*) = A^(n-1)``; classes are the
strongly connected components; ``[q]`` the class of ``q``. Zero-diagonal masks:
``2^(n(n-1))``.

Exhaustive method. Every mask in vectorised batches with the engine's batched code
(:mod:`theory.batch`: closure, equivalence, class representatives = smallest
members): well defined iff every row and every column of ``R*`` equals that of its
representative; reflexive; antisymmetric iff mutually reachable positions have the
same representative; transitive on the representatives. Counterexample: the mask,
the part that fails, the classes involved.

Z3 method (:func:`solvers.smt.claims.quotient_is_partial_order`).
- naive: ``R* = A^(n-1)`` by unrolled powers; negation over every quadruple
  ``(q, q2, k, k2)`` with ``q ~ q2``, ``k ~ k2``, ``R*[q, k]``, not ``R*[q2, k2]`` (well
  defined), every position (reflexive), pair (antisymmetric) and triple (transitive);
- better: a failure names at most four positions; relabel them ``0 … 3`` in order of
  first appearance, the source of the missing entry first (15 ways for four to
  coincide), and sort the others by hop distance from 0; columns 0–3 of ``A^(n-1)``
  only. Disjuncts checked one at a time (incremental).

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3"): exhaustive n = 5 in 0.3 s; Z3 within 60 s: better n = 14 (28 s),
naive n = 6 (36 s).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (the
quotient of the limit preorder is the partial order drawn as the Hasse diagram);
design.md §2 (classes, partial order) and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem
from hasse.solvers.smt import claims as z3_claims
from hasse.theory import batch


NAME = "quotient_is_partial_order"
STATEMENT = "the order on classes is well defined, reflexive, antisymmetric and transitive"


def _bits_where(condition: np.ndarray, dtype) -> np.ndarray:
    """``(n, B)`` bool -> ``(B,)`` rows with bit ``k`` set where ``condition[k]``."""
    out = np.zeros(condition.shape[1], dtype=dtype)
    for k in range(condition.shape[0]):
        out |= np.where(condition[k], dtype.type(1 << k), dtype.type(0))
    return out


def parts(rows: np.ndarray) -> dict[str, np.ndarray]:
    """``(B,)`` failure flags of each part of the statement."""
    n = rows.shape[0]
    limit = batch.closure(rows)
    rep = batch.representatives(batch.equivalence(limit))
    transposed = batch.transpose(limit)
    same_class = np.stack([_bits_where(rep == rep[q], rows.dtype) for q in range(n)])  # (n, B)
    is_rep = rep == np.arange(n)[:, None]
    on_reps = np.where(is_rep, limit & _bits_where(is_rep, rows.dtype), 0).astype(rows.dtype)
    return {
        "not well defined (rows)": np.any(np.take_along_axis(limit, rep, axis=0) != limit, axis=0),
        "not well defined (columns)": np.any(np.take_along_axis(transposed, rep, axis=0) != transposed, axis=0),
        "not reflexive": ~batch.contained(batch.identity(n, 1), limit),
        "not antisymmetric": np.any(limit & transposed & ~same_class, axis=0),
        "not transitive": ~batch.contained(batch.product(on_reps, on_reps), on_reps),
    }


def flag(rows: np.ndarray) -> np.ndarray:
    return np.logical_or.reduce(list(parts(rows).values()))


def explain(mask: np.ndarray) -> dict:
    rows = batch.pack(mask[None])
    n = len(mask)
    failing = [name for name, bad in parts(rows).items() if bad[0]]
    limit = batch.closure(rows)
    rep = batch.representatives(batch.equivalence(limit))[:, 0]
    classes = sorted({tuple(int(p) for p in np.flatnonzero(rep == r)) for r in set(rep.tolist())})
    return {"parts": failing, "classes": [list(c) for c in classes], "limit": batch.unpack(limit, n)[0].astype(int).tolist()}


def confirm(mask: np.ndarray) -> dict:
    """Re-check a decoded model with numpy powers and classes from mutual reachability."""
    n = len(mask)
    a = (np.asarray(mask, dtype=bool) | np.eye(n, dtype=bool)).astype(np.int64)
    r = np.eye(n, dtype=np.int64)
    for _ in range(max(n - 1, 0)):
        r = (a @ r > 0).astype(np.int64)
    r = r.astype(bool)
    e = r & r.T
    for q in range(n):
        for q2 in range(n):
            for k in range(n):
                for k2 in range(n):
                    if e[q, q2] and e[k, k2] and r[q, k] != r[q2, k2]:
                        return {"confirmed": True, "part": "not well defined", "positions": [q, q2, k, k2]}
    transitive = not ((r.astype(np.int64) @ r.astype(np.int64) > 0) & ~r).any()
    return {"confirmed": not (np.diagonal(r).all() and transitive)}


# why the statement is invariant under relabelling (hasse prove --orbits, proofs.orbits_check)
INVARIANT = ("relabelling maps the classes of R* onto the classes of the relabelled R* and keeps the order "
             "between them")
THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_claims.quotient_is_partial_order,
                       confirm, invariant=INVARIANT, max_n={"z3": 56})  # size guard: about 4x the n Z3 proves in 60 s

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

"""Z3 for ``sparse_realisation_keeps_hasse`` at larger n: the preorder encoding plus a sound symmetry breaking.

The claim (the sparse realisation ``S`` built from ``R*`` has ``R*(S) = R*`` and hop
distances ``dist_S = pd``, hence ``L*(S) = pred``) is checked on the certificate queries
of :func:`solvers.smt.hasse.sparse_realisation_keeps_hasse` (``better``: over preorders
``R``, one query pair per source). Those stall at ``n = 8``: the search ranges over all
preorders, most of them the same structure numbered another way. This module adds
*canonical numbering* hypotheses (:func:`canonical_numbering`), with ``e`` the classes
of ``R``:

- classes are runs of consecutive positions: ``e[q][k]`` and ``q < j < k`` give ``e[q][j]``;
- numbered along the order: ``R[q][k]`` with ``q < k`` (``k`` reaches ``q``, ``k`` later)
  only inside a class — every class is numbered after the classes that reach it.

Why it is sound. ``S``, ``pd`` and the statement depend on the numbering only through
the order of the members inside each class (smallest member, the member after, ranks).
Let ``sigma`` be a relabelling that keeps that order inside every class of ``R``. Then
the smallest member of ``sigma(C)`` is ``sigma(min C)``, the member after ``sigma(x)`` is
``sigma(next x)``, ranks, sizes and Hasse edges are carried over, so
``S(sigma R) = sigma S(R)``, ``pd(sigma R) = sigma pd(R)``, and the statement holds for
``R`` iff it holds for ``sigma R``. Every preorder has such a relabelling onto one that
meets both hypotheses: take the classes in an order that extends the order between
them (a class before every class it reaches), give them consecutive blocks of
positions in that order, members ascending inside a block. So proving the claim on
the canonically numbered preorders proves it on all. (The test
``tests/test_z3_sparse.py`` builds that relabelling for every preorder of 4 positions and
evaluates these hypotheses on it.)

Encodings: ``better`` (default) = the certificate queries plus :func:`canonical_numbering`,
and the premises must admit, besides the causal and bidirectional limits, a mixed
canonical one (:func:`mixed_limit`); ``preorder`` = the certificate queries alone, without
the canonical numbering; ``naive`` = unrolled powers (:mod:`solvers.smt.hasse`).
Nothing here comes from the theory code (design.md §5).

>>> len(canonical_numbering([[z3.BoolVal(True)] * 3] * 3, 3))
4
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import z3

from hasse.solvers.smt import hasse as z3_hasse
from hasse.solvers.smt.prove import and_, not_

ENCODINGS = ("better", "preorder", "naive")


def classes_of(r):
    """``e[q][k] = R[q][k] and R[k][q]`` (same class)."""
    n = len(r)
    return [[and_(r[q][k], r[k][q]) for k in range(n)] for q in range(n)]


def canonical_numbering(r, n: int) -> list:
    """The symmetry-breaking clauses: classes are consecutive runs, numbered along the order (module doc)."""
    e = classes_of(r)
    out = []
    for q in range(n):
        for k in range(q + 1, n):
            out.append(z3.Implies(r[q][k], e[q][k]))  # a later position reaches an earlier one only in its class
            out += [z3.Implies(e[q][k], e[q][j]) for j in range(q + 1, k)]  # no gap inside a class
    return out


def mixed_limit(n: int) -> np.ndarray:
    """A canonically numbered limit with classes of several sizes and incomparable classes (zero diagonal).

    Classes ``{0, 1}``, ``{2}``, ``{3, 4, 5}``, ``{6}``, … (runs of 2, 1, 3, 1, 2, 1, 3, …);
    class ``c`` is reached by the classes ``c - 2`` and below (so ``c - 1`` and ``c`` are
    incomparable).

    >>> mixed_limit(4).astype(int).tolist()
    [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0]]
    """
    label, sizes, c = [], (2, 1, 3, 1), 0
    while len(label) < n:
        label += [c] * sizes[c % len(sizes)]
        c += 1
    label = np.array(label[:n])
    out = (label[:, None] == label[None, :]) | (label[:, None] >= label[None, :] + 2)
    return out & ~np.eye(n, dtype=bool)


def sparse_realisation_keeps_hasse(n: int, encoding: str = "better", planted: bool = False) -> list:
    """The queries of :func:`solvers.smt.hasse.sparse_realisation_keeps_hasse`; ``better`` adds the canonical
    numbering to every query's hypotheses (planted variants included) and asks them to admit :func:`mixed_limit`."""
    if encoding not in ENCODINGS:
        raise ValueError(f"sparse_realisation_keeps_hasse: encoding {encoding!r}, expected one of {ENCODINGS}")
    if encoding != "better":  # "preorder" is z3_hasse's "better", without the canonical numbering
        return z3_hasse.sparse_realisation_keeps_hasse(n, "better" if encoding == "preorder" else encoding, planted)
    queries = z3_hasse.sparse_realisation_keeps_hasse(n, "better", planted)
    if not queries:
        return queries
    extra = canonical_numbering(queries[0].mask, n)
    mixed = {f"mixed:n={n}": mixed_limit(n) | np.eye(n, dtype=bool)}
    return [replace(q, name=f"{q.name}, canonical numbering", hypotheses=list(q.hypotheses) + extra,
                    admits=dict(q.admits) | mixed) for q in queries]

"""hasse_closure_is_limit — the Hasse diagram (classes as cliques) generates the limit, and minimally.

Statement. For every mask ``M`` of size ``n``: (a) the reflexive–transitive closure of
``G = H or E`` is ``R*``, where ``H`` is the Hasse diagram on positions (``H[q, k]`` iff
``[k]`` is covered by ``[q]``) and ``E`` joins the members of each class (a clique);
(b) no proper subset of the Hasse edges gives that closure.

(b) is checked as: for every Hasse edge ``[k] -> [q]``, the closure of ``G`` without
that edge (without every pair ``x in [q]``, ``y in [k]``) does not contain ``(q, k)``.
That implies (b): a proper subset misses some edge ``e`` and its closure is inside
the closure of ``G - e``, which lacks a pair of ``R*``.

Notation (design.md §2). ``R* = A^(L*)``; strict order ``S = R* and not R*^T``;
covering ``H = S and not (S . S)``; classes = mutual reachability. Zero-diagonal
masks: ``2^(n(n-1))``.

Exhaustive method. Every mask in vectorised batches with the engine's batched code
(:func:`theory.batch.closure`, :func:`theory.batch.covering`): ``closure(H or E) = R*``;
then, pair by pair of class representatives ``(c, d)`` with a Hasse edge, the
sub-batch of masks having it gets the edge removed and its closure computed.
Counterexample: the mask, the pair, or the redundant edge and the other path.

Z3 method (:func:`solvers.smt.hasse.hasse_closure_is_limit`).
- naive: ``R* = A^(n-1)`` and the closure of ``G`` as ``G^(n-1)`` by unrolled powers;
  (a) every pair; (b) for every pair ``(q, k)``, ``H[q, k]`` and the ``(n-1)``-th power
  of ``G`` minus that class edge still has ``(q, k)``: ``n²`` extra closures;
- better: both closures by their characterisation
  (:func:`solvers.smt.masks.encode_closure_relation`: reflexive, contains the
  relation, transitive, every entry justified by a step to an entry of smaller
  integer rank — its only solution is the closure; that ``A^(L*)`` is this closure
  is ``reach_stable_by_n_minus_1`` with ``limit_is_preorder``); (a) WLOG the pair is
  ``(1, 0)`` or ``(0, 0)``; (b) WLOG the edge is ``[0] -> [1]``: one extra closure.

Largest n that runs fast (2 CPU cores; docs/benchmarks.md, "Proofs: exhaustive and
Z3"): exhaustive n = 5 in 0.3 s; Z3 within 60 s: better n = 9 (25 s),
naive n = 5 (4 s).

References: C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (the
Hasse diagram as the minimal description of the limit order); design.md §2 (Hasse
diagram) and §5.
"""

from __future__ import annotations

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.mask_checks import mask_theorem, shortest_path
from hasse.solvers.smt import hasse as z3_hasse
from hasse.theory import batch

NAME = "hasse_closure_is_limit"
STATEMENT = "the closure of the Hasse diagram (classes as cliques) is R*, and no proper subset of its edges has it"


def _structure(rows: np.ndarray):
    limit = batch.closure(rows)
    classes = batch.equivalence(limit)
    hasse = batch.covering(limit)
    return limit, classes, hasse, batch.representatives(classes)


def _without_edge(g: np.ndarray, classes: np.ndarray, upper: int, lower: int) -> np.ndarray:
    """``g`` without the pairs ``(x, y)``, ``x`` in the class of ``upper``, ``y`` in the class of ``lower``."""
    n = g.shape[0]
    out = g.copy()
    for x in range(n):
        in_upper = ((classes[upper] >> g.dtype.type(x)) & g.dtype.type(1)).astype(bool)
        out[x] = np.where(in_upper, g[x] & ~classes[lower], g[x])
    return out


def parts(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(B,)`` failures of (a) the closure and (b) minimality."""
    n = rows.shape[0]
    limit, classes, hasse, rep = _structure(rows)
    g = hasse | classes
    wrong_closure = ~batch.equal_masks(batch.closure(g), limit)
    redundant = np.zeros(rows.shape[1], dtype=bool)
    for c in range(n):
        for d in range(n):
            edge = (rep[c] == c) & (rep[d] == d) & (((hasse[c] >> rows.dtype.type(d)) & rows.dtype.type(1)) != 0)
            idx = np.flatnonzero(edge)
            if idx.size:
                sub = _without_edge(g[:, idx], classes[:, idx], c, d)
                kept = (batch.closure(sub)[c] >> rows.dtype.type(d)) & rows.dtype.type(1)
                redundant[idx[kept != 0]] = True
    return wrong_closure, redundant


def flag(rows: np.ndarray) -> np.ndarray:
    wrong, redundant = parts(rows)
    return wrong | redundant


def explain(mask: np.ndarray) -> dict:
    n = len(mask)
    rows = batch.pack(mask[None])
    limit, classes, hasse, rep = _structure(rows)
    g = hasse | classes
    unpack = lambda x: batch.unpack(x, n)[0]  # noqa: E731
    out = {"limit": unpack(limit).astype(int).tolist(), "hasse": unpack(hasse).astype(int).tolist()}
    diff = np.argwhere(unpack(batch.closure(g)) != unpack(limit))
    if len(diff):
        q, k = (int(x) for x in diff[0])
        return out | {"part": "closure of the Hasse diagram != R*", "pair": [q, k],
                      "in_closure": bool(unpack(batch.closure(g))[q, k]), "in_limit": bool(unpack(limit)[q, k])}
    for c in range(n):
        for d in range(n):
            if rep[c, 0] == c and rep[d, 0] == d and unpack(hasse)[c, d]:
                sub = unpack(_without_edge(g, classes, c, d))
                if unpack(batch.closure(batch.pack(sub[None])))[c, d]:
                    members = lambda p: np.flatnonzero(unpack(classes)[p]).tolist()  # noqa: E731
                    return out | {"part": "a Hasse edge is implied by the others",
                                  "edge": [members(d), members(c)], "other_path": shortest_path(sub, d, c)}
    return out | {"note": "no failure found when re-checking this mask"}


def confirm(mask: np.ndarray) -> dict:
    """Re-check a decoded model with networkx (closure, condensation, transitive reduction)."""
    import networkx as nx

    n = len(mask)
    graph = nx.DiGraph([(int(k), int(q)) for q, k in zip(*np.nonzero(mask)) if q != k])
    graph.add_nodes_from(range(n))
    cond = nx.condensation(graph)
    reduction = nx.transitive_reduction(cond)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for c in cond.nodes:
        members = cond.nodes[c]["members"]
        g.add_edges_from((x, y) for x in members for y in members if x != y)
    for a, b in reduction.edges:
        g.add_edges_from((x, y) for x in cond.nodes[a]["members"] for y in cond.nodes[b]["members"])
    same = all(nx.has_path(g, k, q) == nx.has_path(graph, k, q) for q in range(n) for k in range(n))
    return {"confirmed": not same}


# why the statement is invariant under relabelling (hasse prove --orbits, proofs.orbits_check)
INVARIANT = ("the Hasse diagram of the relabelled quotient is the relabelled Hasse diagram, and closure and "
             "minimality do not depend on labels")
THEOREM = mask_theorem(NAME, STATEMENT, flag, explain, z3_hasse.hasse_closure_is_limit,
                       confirm, invariant=INVARIANT, max_n={"z3": 36})  # size guard: about 4x the n Z3 proves in 60 s

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

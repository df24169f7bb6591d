"""Readable reference pipeline on networkx: the oracle for tests and the benchmark baseline.

Written straight from the definitions of design.md §2, with no shared code with
the engine in :mod:`theory.order`: the flow graph has an edge ``k -> q`` for every
``M[q, k]`` with ``k != q``; classes are its strongly connected components; the
Hasse diagram is the transitive reduction of the condensation; the convergence
depth is the largest finite shortest-path length.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np


@dataclass(frozen=True)
class ReferenceOrder:
    classes: frozenset[frozenset[int]]
    hasse_edges: frozenset[tuple[frozenset[int], frozenset[int]]]  # (lower class, upper class)
    closure: np.ndarray  # (n, n) bool R*
    convergence_depth: int
    dense: bool


def flow_graph(mask: np.ndarray) -> nx.DiGraph:
    """The information-flow graph: nodes ``0..n-1``, an edge ``k -> q`` iff ``M[q, k]`` and ``k != q``."""
    mask = np.asarray(mask, dtype=bool)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(mask.shape[0]))
    graph.add_edges_from((int(k), int(q)) for q, k in zip(*np.nonzero(mask)) if q != k)
    return graph


def reference_order(mask: np.ndarray) -> ReferenceOrder:
    """Classes, Hasse diagram, closure and depth by networkx (condensation + transitive_reduction + BFS)."""
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    graph = flow_graph(mask)
    cond = nx.condensation(graph)
    members = {c: frozenset(cond.nodes[c]["members"]) for c in cond.nodes}
    reduced = nx.transitive_reduction(cond)
    edges = frozenset((members[a], members[b]) for a, b in reduced.edges)
    closure = np.eye(n, dtype=bool)
    depth = 0
    for k, lengths in nx.all_pairs_shortest_path_length(graph):
        for q, d in lengths.items():
            closure[q, k] = True
            depth = max(depth, d)
    dense = bool(np.array_equal(mask | np.eye(n, dtype=bool), closure))
    return ReferenceOrder(frozenset(members.values()), edges, closure, depth, dense)


def depth_by_powers(mask: np.ndarray) -> int:
    """``L* = min{L : A^L = A^(L+1)}`` by explicit Boolean matrix powers (``A = I or M``)."""
    a = np.asarray(mask, dtype=bool) | np.eye(len(mask), dtype=bool)
    power = np.eye(len(mask), dtype=bool)
    level = 0
    while True:
        nxt = (a.astype(np.int64) @ power.astype(np.int64)) > 0
        if np.array_equal(nxt, power):
            return level
        power, level = nxt, level + 1

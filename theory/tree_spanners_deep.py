"""Forests within 3 or more hops: cut sets, the cut forest within ``L - 2`` hops, the pieces recursively.

The scheme of :func:`deep_forest` generalises the chain's blocks (:mod:`theory.spanners`) to a forest ``S``
(``T[q, k]``: ``k`` is ``q`` or an ancestor of ``q``):

- a cut set ``K``: bottom-up, a node is cut when the uncut nodes below it and itself reach ``b``
  (``b ~ sqrt(|S|)`` for ``L = 3``, ``~ log2 |S|`` beyond), so every piece of ``S - K`` has fewer
  than ``b`` nodes and ``|K| <= |S| / b``;
- every node not in ``K`` attends ``up(v)``, its nearest strict ancestor in ``K``; every ``x`` in
  ``K`` attends its ancestors strictly below ``up(x)`` (the piece just above it);
- the cut forest (``K``, ordered by ancestry) within ``L - 2`` hops, recursively (dense at 1);
- every piece of ``S - K`` within ``L`` hops, recursively (2 hops: the centroid mask).

A pair ``(q, k)`` inside one piece is the piece's. Otherwise let ``x`` be the node of ``K`` on the
path from ``k`` to ``q`` nearest ``k`` and ``y`` the one nearest ``q``: ``x`` attends ``k`` (no node
of ``K`` lies strictly between them, so ``k`` is in the piece above ``x``, or ``k == x``), ``q``
attends ``y`` (``y == up(q)``, or ``q == y``), and the cut forest walks ``x ~> y`` within ``L - 2``
hops: ``k -> x ~> y -> q``, at most ``L`` hops.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from hasse.theory.spanners import _walk

SMALL = 8  # a piece this small gets the 2-hop mask


def _piece(nodes: np.ndarray, lp: np.ndarray, depth: int, target: np.ndarray, level: np.ndarray,
           mask: np.ndarray, shallow: Callable) -> Callable[[int, int], list[int]]:
    """Add the piece's edges to ``mask`` (global positions ``nodes``, local parents ``lp``); its witness."""
    m = len(nodes)
    loc = {int(v): i for i, v in enumerate(nodes)}
    if depth <= 2 or m <= SMALL:
        c = shallow(lp, min(depth, 2))
        mask[np.ix_(nodes, nodes)] |= c.mask
        return lambda q, k: [int(nodes[w]) for w in c.witness(loc[q], loc[k])]
    b = math.isqrt(m) + 1 if depth == 3 else max(2, math.ceil(math.log2(m)))
    order = np.argsort(-level[nodes], kind="stable")  # deepest first: children before parents
    acc, cut = np.ones(m, dtype=np.int64), np.zeros(m, dtype=bool)
    for v in order:
        if acc[v] >= b:
            cut[v], acc[v] = True, 0
        if lp[v] >= 0:
            acc[lp[v]] += acc[v]
    up, comp = np.full(m, -1), np.arange(m)
    for v in order[::-1]:  # parents first
        u = lp[v]
        if u >= 0:
            up[v] = u if cut[u] else up[u]
            comp[v] = comp[v] if cut[u] else comp[u]
    for v in range(m):
        if not cut[v] and up[v] >= 0:
            mask[nodes[v], nodes[up[v]]] = True
        if cut[v]:
            a = lp[v]
            while a >= 0 and a != up[v]:
                mask[nodes[v], nodes[a]] = True
                a = lp[a]
    ks = np.flatnonzero(cut)
    kloc = {int(v): i for i, v in enumerate(ks)}
    kparent = np.array([kloc.get(int(up[v]), -1) for v in ks], dtype=np.int64)
    kwalk = _piece(nodes[ks], kparent, depth - 2, target, level, mask, shallow) if len(ks) else None
    walks = {}
    for top in np.unique(comp[~cut]):
        members = np.flatnonzero((comp == top) & ~cut)
        mloc = {int(v): i for i, v in enumerate(members)}
        sub = np.array([mloc.get(int(lp[v]), -1) for v in members], dtype=np.int64)
        walks[int(top)] = _piece(nodes[members], sub, depth, target, level, mask, shallow)
    in_k = np.zeros(len(target), dtype=bool)
    in_k[nodes[ks]] = True

    def witness(q: int, k: int) -> list[int]:
        lq, lk = loc[q], loc[k]
        if not cut[lq] and not cut[lk] and comp[lq] == comp[lk]:
            return walks[int(comp[lq])](q, k)
        on = np.flatnonzero(in_k & target[q] & target[:, k])  # the cut nodes on the path k … q
        x, y = int(on[np.argmin(level[on])]), int(on[np.argmax(level[on])])
        middle = [] if x == y else kwalk(y, x)
        return _walk([k, x, *middle, y, q])

    return witness


def deep_forest(parent: np.ndarray, target: np.ndarray, level: np.ndarray, depth: int,
                shallow: Callable) -> tuple[np.ndarray, Callable[[int, int], list[int]]]:
    """The mask (no diagonal) and witness of the scheme above for the whole forest (``level``: node depths;
    ``shallow(parent, d)``: the construction within ``d <= 2`` hops)."""
    n = len(parent)
    mask = np.zeros((n, n), dtype=bool)
    witness = _piece(np.arange(n), np.asarray(parent, dtype=np.int64), depth, target, level, mask, shallow)
    np.fill_diagonal(mask, False)
    return mask, witness

"""Sparse masks for forests (tree masks): ``T[q, k]`` iff ``k`` is ``q`` or an ancestor of ``q``.

A forest is given by ``parent`` (``parent[i] = -1`` for a root). Tree attention for
speculative decoding (Medusa, the catalogue's ``tree:parents=…``) has this target: a node
sees itself and its ancestors. :func:`forest` returns a :class:`~theory.spanners.Construction`:

- ``depth = 1``: the target itself (no diagonal);
- ``depth >= 2``: centroid decomposition. In a connected piece ``S`` of the forest its centroid
  ``c`` (no piece of ``S - c`` above half of ``S``) attends every ancestor of ``c`` inside ``S``
  and every descendant of ``c`` inside ``S`` attends ``c``; then each piece of ``S - c``
  recursively. A pair ``(q, k)`` (``k`` an ancestor of ``q``) lies in one piece until the
  first centroid on the path from ``k`` to ``q`` is removed: the walk is ``k -> c -> q`` (one
  hop when ``c`` is ``q`` or ``k``). Each position joins at most ``log2 n + 1`` pieces, and in
  each piece it gains at most one pair with the piece's centroid, so there are at most
  ``n (log2 n + 1)`` pairs. A path is the causal chain, where this is the centre-point
  construction.

- ``depth >= 3``: the cheaper of that mask and :func:`~theory.tree_spanners_deep.deep_forest`
  (cut sets, the cut forest within ``depth - 2`` hops, the pieces recursively: the chain's blocks
  on a tree). Measured at n = 4,096: a path gets 23,625 pairs at depth 3 (the chain's own scheme:
  23,256), a random tree 10,666 (18,842 at depth 2), a complete binary tree 13,591 (40,974).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.spanners import Construction
from hasse.theory.tree_spanners_deep import deep_forest


def check_parent(parent: Sequence[int]) -> np.ndarray:
    """``parent`` as an int array, checked: integers in ``-1 … n-1``, no node its own ancestor.

    >>> check_parent([-1, 0, 0]).tolist()
    [-1, 0, 0]
    >>> check_parent([1, 0])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: parent: a cycle through node 0 (a forest has none)
    """
    try:
        p = np.asarray(parent)
    except (TypeError, ValueError):
        raise InputError("parent must be a list of integers (-1 for a root)", "parent") from None
    if p.ndim != 1 or p.size == 0 or not np.issubdtype(p.dtype, np.integer) or p.dtype == bool:
        raise InputError("parent must be a non-empty list of integers (-1 for a root)", "parent")
    n = p.size
    if (p < -1).any() or (p >= n).any():
        bad = int(np.flatnonzero((p < -1) | (p >= n))[0])
        raise InputError(f"parent[{bad}] = {int(p[bad])} is not -1 or a node 0 … {n - 1}", "parent")
    p = p.astype(np.int64)
    state = np.zeros(n, dtype=np.int8)  # 0 unseen, 1 on the current path, 2 done
    for start in range(n):
        path, v = [], start
        while v != -1 and state[v] == 0:
            state[v] = 1
            path.append(v)
            v = int(p[v])
        if v != -1 and state[v] == 1:
            raise InputError(f"a cycle through node {v} (a forest has none)", "parent")
        state[path] = 2
    return p


def _depths(parent: np.ndarray) -> np.ndarray:
    """Each node's depth (roots 0), without recursion."""
    depth = np.full(len(parent), -1, dtype=np.int64)
    for start in range(len(parent)):
        path, v = [], start
        while v != -1 and depth[v] < 0:
            path.append(v)
            v = int(parent[v])
        d = -1 if v == -1 else int(depth[v])
        for u in reversed(path):
            d += 1
            depth[u] = d
    return depth


def forest_target(parent: Sequence[int]) -> np.ndarray:
    """``T[q, k]``: ``k`` is ``q`` or an ancestor of ``q``.

    >>> forest_target([-1, 0, 0]).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 0, 1]]
    """
    p = check_parent(parent)
    n = len(p)
    target = np.eye(n, dtype=bool)
    for v in np.argsort(_depths(p), kind="stable"):  # parents first
        if p[v] >= 0:
            target[v] |= target[p[v]]
    return target


def _centroids(parent: np.ndarray, children: list[list[int]]) -> tuple[np.ndarray, list[tuple[int, list[int]]]]:
    """The centroid decomposition: each node's level (the depth of the piece it is the centroid of) and,
    for each piece, its centroid and members."""
    n = len(parent)
    level = np.full(n, -1, dtype=np.int64)
    pieces: list[tuple[int, list[int]]] = []
    todo = [(int(r), 0) for r in np.flatnonzero(parent < 0)]  # (the piece's top node, its level)
    size = np.zeros(n, dtype=np.int64)
    while todo:
        top, lev = todo.pop()
        order, stack = [], [top]  # the piece: nodes below top not yet removed
        while stack:
            v = stack.pop()
            order.append(v)
            stack += [c for c in children[v] if level[c] < 0]
        for v in reversed(order):
            size[v] = 1 + sum(int(size[c]) for c in children[v] if level[c] < 0)
        total, c = len(order), top
        while True:  # walk down to the child holding over half of the piece, if any
            heavy = [d for d in children[c] if level[d] < 0 and 2 * size[d] > total]
            if not heavy:
                break
            c = heavy[0]
        level[c] = lev
        pieces.append((c, order))
        todo += [(d, lev + 1) for d in children[c] if level[d] < 0]
        if c != top:
            todo.append((top, lev + 1))
    return level, pieces


def forest(parent: Sequence[int], depth: int) -> Construction:
    """A mask realising :func:`forest_target` within ``depth`` layers, with its witness (module docstring).

    >>> c = forest([-1, 0, 1, 2, 3], 2)
    >>> c.pairs, c.witness(4, 0)
    (6, [2])
    """
    p = check_parent(parent)
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise InputError(f"depth must be an integer >= 1, got {depth!r}", "depth")
    target = forest_target(p)
    n = len(p)
    if depth == 1 or n == 1:
        return Construction(target & ~np.eye(n, dtype=bool), target, int(depth), lambda q, k: [])
    children: list[list[int]] = [[] for _ in range(n)]
    for v in range(n):
        if p[v] >= 0:
            children[int(p[v])].append(v)
    level, pieces = _centroids(p, children)
    mask = np.zeros((n, n), dtype=bool)
    for c, members in pieces:
        inside = np.zeros(n, dtype=bool)
        inside[members] = True
        inside &= level >= level[c]  # the piece: nodes not removed before c
        ancestors = np.flatnonzero(target[c] & inside)
        descendants = np.flatnonzero(target[:, c] & inside)
        mask[c, ancestors] = True
        mask[descendants, c] = True
    np.fill_diagonal(mask, False)

    def centroid(q: int, k: int) -> list[int]:
        on_path = np.flatnonzero(target[q] & target[:, k])  # k … q
        c = int(on_path[np.argmin(level[on_path])])  # the first centroid removed on the path
        return [] if c in (q, k) else [c]

    walk = centroid
    if depth >= 3:  # the deeper scheme, where it is cheaper
        deep, deep_walk = deep_forest(p, target, _depths(p), int(depth), forest)
        if deep.sum() < mask.sum():
            mask, walk = deep, deep_walk

    def witness(q: int, k: int) -> list[int]:
        if not target[q, k]:
            raise InputError(f"({q}, {k}) is not a pair of the target: {k} is not an ancestor of {q}", "pair")
        return walk(q, k)

    return Construction(mask, target, int(depth), witness)


__all__ = ["check_parent", "forest", "forest_target"]

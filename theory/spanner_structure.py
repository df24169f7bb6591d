"""Recognise the structure of a target order and build a sparse construction for it at any size.

A target ``T`` (an ``(n, n)`` preorder, ``T[q, k]``: ``k`` below ``q``) is read through its
*classes* (the equivalence classes of ``T & T.T``, in order of first position) and the
*quotient* partial order ``Q`` on them. ``Q`` splits into the connected components of its
comparability graph (packed documents); each component is recognised as

- a **chain** of classes (causal, block_causal, prefix_lm, chunked, bidirectional: one class),
- a **forest** of classes (every strict down-set a chain: tree masks) or a **reversed forest**
  (every up-set a chain: built on ``T.T`` and transposed),
- a **product of two chains** (an ``a x b`` grid, the coordinates read from the minimum's covers),

and anything else is not recognised (``None``: the heuristic stays for it). A construction on
the classes (:func:`hasse.theory.spanners.chain`, ``chain_product``, ``tree_spanners.forest``) is lifted to the positions
by the cheapest of these lifts (``r``: a class's first member):

- ``full``: a class edge ``(A, C)`` becomes every member of ``A`` attending every member of ``C``;
  inside a class all pairs at depth 1, else a star through ``r`` (2 hops);
- ``stars``: ``r`` attends and is attended by its class, class edges join representatives only,
  the class construction within ``L - 2`` hops (needs ``L >= 3``);
- ``half stars``: ``r_A`` attends every member of ``C`` for a class edge ``(A, C)``, the class
  construction within ``L - 1`` hops, with the stars inside each class (walk ``k -> r_W1 -> … -> r_Q -> q``);
- ``centres`` (a chain, ``L >= 2``): :func:`hasse.theory.spanners.centres`, block_causal's block centres.

The components are joined by :func:`hasse.theory.spanners.union` and mapped back to the positions
as given. Work: ``O(n^2)`` numpy (no matrix product) plus the class constructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.spanners import Construction, _centre_pairs, _walk, centres, chain, chain_product, union
from hasse.theory.tree_spanners import forest


@dataclass(frozen=True)
class StructuredDesign:
    """The construction for the whole target, a one-line description, and the lift chosen per component."""

    construction: Construction
    description: str
    lifts: tuple[str, ...]


def classes(target: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cls, first, Q)``: each position's class, each class's first position, the quotient order.

    >>> cls, first, q = classes(np.array([[1, 1, 0], [1, 1, 0], [1, 1, 1]], dtype=bool))
    >>> cls.tolist(), first.tolist(), q.astype(int).tolist()
    ([0, 0, 1], [0, 2], [[1, 0], [1, 1]])
    """
    t = np.asarray(target, dtype=bool)
    first_equal = (t & t.T).argmax(axis=1)
    first, cls = np.unique(first_equal, return_inverse=True)
    return cls.astype(np.int64), first.astype(np.int64), t[np.ix_(first, first)]


def components(order: np.ndarray) -> list[np.ndarray]:
    """The connected components of the comparability graph of ``order``, each sorted, by first element.

    >>> [c.tolist() for c in components(np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1]], dtype=bool))]
    [[0, 2], [1]]
    """
    linked = order | order.T
    label = np.full(len(order), -1)
    out = []
    for start in range(len(order)):
        if label[start] >= 0:
            continue
        seen = np.zeros(len(order), dtype=bool)
        seen[start] = True
        frontier = seen.copy()
        while frontier.any():
            frontier = linked[frontier].any(axis=0) & ~seen
            seen |= frontier
        label[seen] = len(out)
        out.append(np.flatnonzero(seen))
    return out


def is_chain(order: np.ndarray) -> bool:
    """Every two elements comparable."""
    return bool((order | order.T).all())


def forest_parent(order: np.ndarray) -> np.ndarray | None:
    """The parent of each element (-1: a root) when every strict down-set is a chain, else None.

    The parent is the largest element of the strict down-set; the down-set must then be the parent's plus itself.

    >>> forest_parent(np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1]], dtype=bool)).tolist()
    [-1, 0, 0]
    >>> forest_parent(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1]], dtype=bool)) is None
    True
    """
    m = len(order)
    eye = np.eye(m, dtype=bool)
    strict = order & ~eye
    parent = np.where(strict, order.sum(axis=1)[None, :], -1).argmax(axis=1)
    has = strict.any(axis=1)
    expected = eye | (order[parent] & has[:, None])
    return np.where(has, parent, -1) if np.array_equal(expected, order) else None


def grid_coordinates(order: np.ndarray) -> tuple[int, int, np.ndarray] | None:
    """``(a, b, index)`` when ``order`` is the product of chains ``a x b`` (``a, b >= 2``), ``index[x] = i * b + j``;
    else None. The axes run from the minimum through its two covers.

    >>> a, b, index = grid_coordinates(np.array([[1, 0, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], bool))
    >>> a, b, index.tolist()
    (2, 2, [0, 2, 1, 3])
    """
    size = order.sum(axis=1)
    minima, covers = np.flatnonzero(size == 1), np.flatnonzero((size == 2) & order[:, np.argmin(size)])
    if len(minima) != 1 or len(covers) != 2:
        return None
    c1, c2 = covers
    axis1 = order[:, c1] & ~order[:, c2]
    axis2 = order[:, c2] & ~order[:, c1]
    axis1[minima] = axis2[minima] = True
    a, b = int(axis1.sum()), int(axis2.sum())
    i, j = order[:, axis1].sum(axis=1) - 1, order[:, axis2].sum(axis=1) - 1
    index = i * b + j
    if a * b != len(order) or len(np.unique(index)) != len(order):
        return None
    product = (i[None, :] <= i[:, None]) & (j[None, :] <= j[:, None])
    return (a, b, index) if np.array_equal(product, order) else None


def relabel(c: Construction, new: np.ndarray) -> Construction:
    """``c`` with its element ``x`` renamed ``new[x]`` (a permutation)."""
    new = np.asarray(new, dtype=np.int64)
    old = np.argsort(new)
    mask, target = c.mask[np.ix_(old, old)], c.target[np.ix_(old, old)]

    def witness(q: int, k: int) -> list[int]:
        return [int(new[w]) for w in c.witness(int(old[q]), int(old[k]))]

    return Construction(mask, target, c.depth, witness)


def transpose(c: Construction) -> Construction:
    """The construction of the reversed order: every edge turned round, every walk read backwards."""
    return Construction(c.mask.T.copy(), c.target.T.copy(), c.depth, lambda q, k: c.witness(k, q)[::-1])


def _shape(order: np.ndarray) -> tuple[str, Callable[[int], Construction], np.ndarray | None] | None:
    """The component's shape, a builder of a construction on its elements at a given depth, and (a chain) each
    element's rank; None: not recognised."""
    m = len(order)
    if is_chain(order):
        rank = np.argsort(np.argsort(order.sum(axis=1), kind="stable"), kind="stable")
        return "chain", lambda d: relabel(chain(m, d), np.argsort(rank)), rank
    parent = forest_parent(order)
    if parent is not None:
        return "forest", lambda d: forest(parent, d), None
    parent = forest_parent(order.T)
    if parent is not None:
        return "reversed forest", lambda d: transpose(forest(parent, d)), None
    grid = grid_coordinates(order)
    if grid is not None:
        a, b, index = grid
        return f"product of chains {a} x {b}", lambda d: relabel(chain_product(a, b, d), np.argsort(index)), None
    return None


def _lift_costs(sizes: np.ndarray, build, depth: int) -> dict[str, tuple[int, Construction]]:
    """The pairs of each lift that applies at ``depth`` (module docstring), with the class construction it uses."""
    inner = int((sizes * (sizes - 1)).sum()) if depth == 1 else int(2 * (sizes - 1).sum())
    star = int(2 * (sizes - 1).sum())
    full = build(depth)
    q, k = np.nonzero(full.mask)
    out = {"full": (int((sizes[q] * sizes[k]).sum()) + inner, full)}
    if depth >= 2 and sizes.max() > 1:
        half = build(depth - 1)
        out["half stars"] = (int(sizes[np.nonzero(half.mask)[1]].sum()) + star, half)
    if depth >= 3 and sizes.max() > 1:
        stars = build(depth - 2)
        out["stars"] = (int(stars.mask.sum()) + star, stars)
    return out


def lift(cc: Construction, cls: np.ndarray, first: np.ndarray, how: str, depth: int) -> Construction:
    """The class construction ``cc`` lifted to positions (``cls``: each position's class, ``first``: each class's
    first position) by ``how`` (full | stars | half stars), realising the lifted order within ``depth`` layers."""
    n = len(cls)
    pos, rep = np.arange(n), first[cls]
    target = cc.target[cls[:, None], cls[None, :]]
    if how == "full":
        mask = cc.mask[cls[:, None], cls[None, :]]
        if depth == 1:
            mask |= cls[:, None] == cls[None, :]
    elif how == "half stars":
        mask = np.zeros((n, n), dtype=bool)
        mask[first, :] = cc.mask[:, cls]
    else:
        mask = np.zeros((n, n), dtype=bool)
        q, k = np.nonzero(cc.mask)
        mask[first[q], first[k]] = True
    if depth > 1:
        mask[rep, pos] = mask[pos, rep] = True
    np.fill_diagonal(mask, False)

    def witness(q: int, k: int) -> list[int]:
        cq, ck = int(cls[q]), int(cls[k])
        if cq == ck:
            return [] if depth == 1 else _walk([k, int(first[cq]), q])
        middle = [int(first[w]) for w in cc.witness(cq, ck)]
        if how == "full":
            return _walk([k] + middle + [q])
        if how == "half stars":
            return _walk([k] + middle + [int(first[cq]), q])
        return _walk([k, int(first[ck])] + middle + [int(first[cq]), q])

    return Construction(mask, target, depth, witness)


def _sizes_text(sizes) -> str:
    shown = "+".join(map(str, sizes[:4]))
    return shown + ("+…" if len(sizes) > 4 else "")


def structured(target: np.ndarray, depth: int) -> StructuredDesign | None:
    """A construction realising ``target`` within ``depth`` layers from its recognised structure (None: unknown).

    >>> s = structured(np.kron(np.tril(np.ones((3, 3), bool)), np.ones((4, 4), bool)), 3)
    >>> s.description, s.lifts, s.construction.pairs
    ('chain of 3 classes (4+4+4), stars', ('stars',), 21)
    """
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise InputError(f"layers must be a positive integer, got {depth!r}", "layers")
    target = np.asarray(target, dtype=bool)
    cls, first, order = classes(target)
    parts, lines, lifts, positions = [], [], [], []
    for comp in components(order):
        shape = _shape(order[np.ix_(comp, comp)])
        if shape is None:
            return None
        what, build, rank = shape
        local = np.full(len(order), -1)
        local[comp] = np.arange(len(comp))
        members = np.flatnonzero(local[cls] >= 0)
        sub = local[cls[members]]
        sizes = np.bincount(sub, minlength=len(comp))
        costs = _lift_costs(sizes, build, depth)
        if rank is not None and depth >= 2 and len(comp) > 1:
            costs["centres"] = (_centre_pairs(sizes[np.argsort(rank)].tolist()), None)
        how, (_, cc) = min(costs.items(), key=lambda item: item[1][0])
        first_local = np.searchsorted(members, first[comp])
        parts.append(centres(rank[sub], depth) if how == "centres" else lift(cc, sub, first_local, how, depth))
        if len(comp) == 1:
            lines.append(f"one class of {sizes[0]} positions")
        elif sizes.max() == 1:
            lines.append(f"{what} of {len(comp)} positions")
        else:
            lines.append(f"{what} of {len(comp)} classes ({_sizes_text(sizes.tolist())}), {how}")
        lifts.append(how)
        positions.append(members)
    joined = union(parts) if len(parts) > 1 else parts[0]
    construction = relabel(joined, np.concatenate(positions))
    if len(lines) == 1:
        return StructuredDesign(construction, lines[0], tuple(lifts))
    kinds = sorted(set(lines), key=lines.index)
    text = "; ".join(f"{lines.count(x)} x {x}" if lines.count(x) > 1 else x for x in kinds[:3])
    more = f"; … ({len(kinds) - 3} more kinds)" if len(kinds) > 3 else ""
    return StructuredDesign(construction, f"{len(parts)} components: {text}{more}", tuple(lifts))


def bad_witness(c: Construction, target: np.ndarray) -> tuple[int, int] | None:
    """The first pair of ``target`` whose witness walk is not a walk of ``M or I`` of at most ``depth`` hops
    (None: every pair verified). One Python call per pair."""
    edge = c.mask | np.eye(c.n, dtype=bool)
    for q, k in zip(*np.nonzero(target)):
        walk = [int(k)] + [int(w) for w in c.witness(int(q), int(k))] + [int(q)]
        if len(walk) - 1 > c.depth or not all(edge[b, a] for a, b in zip(walk, walk[1:])):
            return int(q), int(k)
    return None

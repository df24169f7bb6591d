"""The exact choice of copies in a merge whose down-sets hold equivalent duplicates.

An *embedding* of a family into a merged diagram (design.md §3) maps every task node
``c`` to a merged node of its equivalence group whose covers are exactly the images of
``c``'s covers, one-to-one on every down-set (two nodes with a common upper bound never
share an image). A merged node is therefore fixed by its *key* — its group and the set
of its covers — and the embedding by which existing node of the key each task node
takes, or whether it opens a new one. The greedy merge (:mod:`theory.merge`) takes the
first free node of the key. That is optimal when no down-set holds two distinct
equivalent nodes (one node per group), but not always otherwise: in
``{a → a, [[], [], [1], [0, 2]]}`` (all ``a``) the second task's lone ``a`` at node 0
takes the chain's bottom, so node 1 opens a second ``a`` and node 2 (``a`` above node 1)
a second chain — 5 nodes where 4 suffice (node 1 on the chain's bottom, node 0 on a new
``a``).

:func:`minimum_embedding` decides the minimum exactly, by a depth-first search over
those choices (tasks in the given order, nodes in topological order; each node takes a
free existing node of its key, or a new one). Every embedding is reached this way, so
the search is exact. Bounds:

- *lower bound* ``L = Σ_g need(g)``, ``need(g)`` the largest number of distinct nodes of
  group ``g`` in one down-set ``↓u`` of one task (they need distinct merged nodes);
  a branch whose nodes so far already force ``Σ_g max(need(g), made(g)) >= best`` is cut,
  and the search stops as soon as an embedding with ``L`` nodes is found;
- *upper bound*: the greedy embedding (the search's first leaf); only a strictly smaller
  one replaces it, so the result is the greedy one whenever that is minimum, and it is
  deterministic (first minimum in search order);
- *symmetry*: two free nodes of a key with the same upper covers and no preimage in the
  current task are interchangeable (swapping them is an automorphism of the state), so
  only the first is tried;
- *budget*: at most :data:`STEP_BUDGET` search steps. A search cut by the budget keeps
  the best embedding found and says so (``minimum=False``): never a false "minimum".

>>> lower = [((), (0,)), ((), (), (1,), (0, 2))]           # a -> a;  the 4-node task (all a)
>>> group = [(0, 1), (0, 0, 1, 2)]                          # lone a, a above a, a above both
>>> found, minimum = minimum_embedding(lower, group, greedy_nodes=5)
>>> found.nodes, found.maps, minimum
(4, ((0, 1), (2, 0, 1, 3)), True)
>>> minimum_embedding(lower, group, greedy_nodes=4)             # nothing below 4: the greedy one is minimum
(None, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

STEP_BUDGET = 200_000  # search steps before the search stops with the best embedding found


@dataclass(frozen=True)
class Embedding:
    """Merged nodes (group and covers, created in order) and every task's map into them."""

    nodes: int
    node_group: tuple[int, ...]
    node_lower: tuple[tuple[int, ...], ...]
    first: tuple[tuple[int, int], ...]  # (task, node) that created each merged node
    maps: tuple[tuple[int, ...], ...]  # maps[i][c]: merged node of node c of task i


def down_set_sharing(lower: Sequence[Sequence[int]]) -> list[int]:
    """``up[c]``: bit set of the nodes ``>= c``; ``c`` and ``d`` share a down-set iff ``up[c] & up[d]``.

    >>> down_set_sharing(((), (), (0, 1)))   # two nodes below a third: every pair shares ↓2
    [5, 6, 4]
    """
    below: list[int] = []
    for c, lows in enumerate(lower):
        acc = 1 << c
        for d in lows:
            acc |= below[d]
        below.append(acc)
    up = [0] * len(lower)
    for w, acc in enumerate(below):
        c = 0
        while acc:
            if acc & 1:
                up[c] |= 1 << w
            acc >>= 1
            c += 1
    return up


def copies_needed(lower: Sequence[Sequence[Sequence[int]]], group: Sequence[Sequence[int]]) -> dict[int, int]:
    """``need[g]``: the most distinct nodes of group ``g`` in one down-set ``↓u`` of one task.

    >>> copies_needed([((), (), (0, 1))], [(0, 0, 1)])
    {0: 2, 1: 1}
    """
    need: dict[int, int] = {}
    for lows, groups in zip(lower, group):
        below: list[int] = []
        for c, ls in enumerate(lows):
            acc = 1 << c
            for d in ls:
                acc |= below[d]
            below.append(acc)
            counts: dict[int, int] = {}
            for d in range(c + 1):
                if acc >> d & 1:
                    counts[groups[d]] = counts.get(groups[d], 0) + 1
            for g, k in counts.items():
                need[g] = max(need.get(g, 0), k)
    return need


def minimum_embedding(lower: Sequence[Sequence[Sequence[int]]], group: Sequence[Sequence[int]], *,
                      greedy_nodes: int | None = None, budget: int | None = None,
                      deadline: Callable[[], None] | None = None) -> tuple[Embedding | None, bool]:
    """``(embedding, minimum)``: the embedding with the fewest merged nodes found below ``greedy_nodes``
    (``None``: none found), and whether the search finished (then nothing has fewer nodes).

    ``lower[i][c]``: covered nodes of node ``c`` of task ``i`` (topological order);
    ``group[i][c]``: its equivalence group. ``deadline()`` (optional) is called now and
    then and may raise ``TimeoutError``.
    """
    budget = STEP_BUDGET if budget is None else budget
    need = copies_needed(lower, group)
    floor = sum(need.values())
    best_nodes = greedy_nodes if greedy_nodes is not None else sum(len(g) for g in group) + 1
    if best_nodes <= floor:
        return None, True  # the greedy embedding already meets the lower bound
    ups = [down_set_sharing(ls) for ls in lower]
    made: dict[int, int] = {}
    excess = [0]  # Σ_g max(0, made(g) - need(g)): merged nodes beyond the lower bound
    keys: list[tuple[int, frozenset[int]]] = []  # (group, covers) of each merged node, in creation order
    index: dict[tuple[int, frozenset[int]], list[int]] = {}
    uppers: list[set[int]] = []  # merged nodes covering each merged node
    first: list[tuple[int, int]] = []
    maps: list[tuple[int, ...]] = []
    best: list = [best_nodes, None]
    steps = [0]

    def rec(i: int, c: int, images: list[int]) -> None:
        steps[0] += 1
        if steps[0] > budget:
            raise _Stop
        if deadline is not None and steps[0] % 1024 == 0:
            deadline()
        if floor + excess[0] >= best[0]:
            return
        if i == len(lower):
            best[0] = len(keys)
            best[1] = (tuple(k[0] for k in keys), tuple(tuple(sorted(k[1])) for k in keys), tuple(first), tuple(maps))
            if best[0] == floor:
                raise _Stop
            return
        if c == len(lower[i]):
            maps.append(tuple(images))
            rec(i + 1, 0, [])
            maps.pop()
            return
        covers = frozenset(images[d] for d in lower[i][c])
        key = (group[i][c], covers)
        taken = {images[d] for d in range(c) if ups[i][c] & ups[i][d]}
        tried: set[frozenset[int]] = set()
        for m in index.get(key, ()):
            if m in taken:
                continue
            if m not in images:  # no preimage in this task: interchangeable with a node of the same uppers
                if frozenset(uppers[m]) in tried:
                    continue
                tried.add(frozenset(uppers[m]))
            images.append(m)
            rec(i, c + 1, images)
            images.pop()
        m, g = len(keys), key[0]
        keys.append(key)
        index.setdefault(key, []).append(m)
        uppers.append(set())
        for d in covers:
            uppers[d].add(m)
        first.append((i, c))
        made[g] = made.get(g, 0) + 1
        grew = made[g] > need.get(g, 0)
        excess[0] += grew
        images.append(m)
        rec(i, c + 1, images)
        images.pop()
        excess[0] -= grew
        made[g] -= 1
        first.pop()
        for d in covers:
            uppers[d].discard(m)
        uppers.pop()
        index[key].pop()
        keys.pop()

    try:
        rec(0, 0, [])
        finished = True
    except _Stop:
        finished = steps[0] <= budget  # stopped at the lower bound (finished) or by the budget
    if best[1] is None:
        return None, finished
    return Embedding(best[0], *best[1]), finished


class _Stop(Exception):
    """Ends the search: the lower bound is met, or the budget is spent."""

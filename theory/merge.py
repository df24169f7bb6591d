"""The minimal merged task of a task family: ``family_to_merged_task``.

Design.md §3: take all nodes of all tasks, group them by equivalence, keep one
representative per group (first task, then canonical order), add the
representatives' Hasse edges between groups, copy inputs and collect labels. The
merged task's dense mask is ``M*[q, k]`` iff ``node(k) <= node(q)``.

Construction. The tasks are mapped one after the other into a growing merged
diagram: a task node goes to an existing merged node of its group whose covered
nodes are exactly the images of its own covered nodes — unless that merged node is
already the image of another node of the same task with which it shares an upper
bound (both in one down-set) — otherwise to a new merged node with those covers.
The map is then one-to-one on every down-set and maps covers exactly onto covers,
so each ``↓u`` is mapped isomorphically onto ``↓node(u)``: every node has an
equivalent merged node carrying its labels. Two nodes of one task never share a
merged node only when they lie in a common down-set; equal ones in different
down-sets (two separate ``a``, a lone ``a`` and the bottom of ``a -> a``) share it.
When no down-set holds two distinct equivalent nodes, every group therefore gets
exactly one merged node (its covers' groups coincide for all equivalent nodes) —
one node per group, which no merged task can beat: the greedy map above is the
result (the fast path; the case studies always take it). Otherwise (design.md §3, the
duplicate-copies case) which free copy a node takes matters — the first free one can
force later nodes onto new copies — so :func:`theory.merge_copies.minimum_embedding`
chooses the copies exactly (a bounded depth-first search that keeps the greedy map
unless a strictly smaller one exists), and the result lists the groups kept more
than once in ``copies``. ``minimum`` is False only if that search hit its step
budget. The theorem ``merge_is_minimum`` checks the node count against an
independent quotient search and Z3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hasse.theory.bitset import unpack_rows
from hasse.theory.deadline import tick
from hasse.theory.equivalence import Grouping, group_nodes
from hasse.theory.errors import InputError
from hasse.theory.labelled import LabelledHasse, nodes_of_positions, task_to_hasse
from hasse.theory.merge_copies import minimum_embedding
from hasse.theory.task import Task, make_task


@dataclass(frozen=True)
class MergedTask:
    """The merged task and how every task node maps into it."""

    task: Task  # an ordinary task: it can be leak-checked, analysed, saved
    grouping: Grouping  # equivalence groups of all task nodes
    node_of: tuple[tuple[int, ...], ...]  # node_of[i][c]: merged node of node c of task i
    node_members: tuple[tuple[int, ...], ...]  # positions of each merged node in the merged task
    node_group: tuple[int, ...]  # group of each merged node
    node_lower: tuple[tuple[int, ...], ...]  # Hasse edges of the merged diagram (covered nodes)
    copies: tuple[tuple[int, int], ...]  # (group, number of merged nodes) for groups kept more than once
    minimum: bool = True  # no merged task has fewer nodes (False only when the copy search hit its step budget)

    @property
    def nodes(self) -> int:
        return len(self.node_members)

    @property
    def task_nodes(self) -> int:
        return sum(len(row) for row in self.node_of)

    @property
    def groups(self) -> int:
        return len(self.grouping.members)

    def node_of_position(self) -> tuple[int, ...]:
        """The merged node of each position of the merged task."""
        return nodes_of_positions(self.node_members, self.task.size)

    def hasse_edges(self) -> tuple[tuple[int, int], ...]:
        return tuple(sorted((lo, up) for up, lows in enumerate(self.node_lower) for lo in lows))


def check_family(tasks: Sequence[Task], source: str = "family") -> int:
    """The common sample size of a family; :class:`InputError` for an empty or mixed family."""
    if not tasks:
        raise InputError("empty family: it has no tasks", source)
    sizes = sorted({t.tokens for t in tasks})
    if len(sizes) > 1:
        raise InputError(f"tasks over different token counts {sizes}: a family shares one sample", source)
    return sizes[0]


def family_to_merged_task(tasks: Sequence[Task], name: str = "merged") -> MergedTask:
    """The minimal merged task of a family (see the module docstring).

    >>> from hasse.theory.catalog import build_family
    >>> merged = family_to_merged_task(build_family("ar:n=4"))
    >>> merged.task.size, merged.task.labels, merged.copies
    (3, ((1,), (2,), (3,)), ())
    """
    tokens = check_family(tasks)
    diagrams = [task_to_hasse(t) for t in tasks]
    grouping = group_nodes(diagrams)

    node_group, node_lower, first, node_of = _greedy_embedding(diagrams, grouping)
    minimum = True
    if len(node_group) > len(grouping.members):  # a down-set holds equivalent duplicates: choose copies exactly
        found, minimum = minimum_embedding([h.lower for h in diagrams], grouping.group, greedy_nodes=len(node_group))
        if found is not None:
            node_group, node_lower, first, node_of = (list(found.node_group), list(found.node_lower),
                                                      list(found.first), list(found.maps))

    # Positions, inputs and collected labels of the merged task.
    inputs: list[tuple[str, int]] = []
    members: list[tuple[int, ...]] = []
    names: list[str] = []
    for i, c in first:
        h = diagrams[i]
        ps = h.members[c]
        members.append(tuple(range(len(inputs), len(inputs) + len(ps))))
        inputs += [h.task.inputs[p] for p in ps]
        names += [h.task.names[p] for p in ps]
    labels: list[set[int]] = [set() for _ in inputs]
    for i, h in enumerate(diagrams):
        for c in range(h.size):
            m = node_of[i][c]
            _collect_labels(h, c, members[m], inputs, labels)

    mask = _dense_mask(node_lower, members, len(inputs))
    counts: dict[int, int] = {}
    for g in node_group:
        counts[g] = counts.get(g, 0) + 1
    copies = tuple(sorted((g, k) for g, k in counts.items() if k > 1))
    task = make_task(tokens, inputs, [sorted(ls) or None for ls in labels], mask, name=name,
                     names=_unique_names(names))
    return MergedTask(task, grouping, tuple(node_of), tuple(members), tuple(node_group), tuple(node_lower), copies,
                      minimum)


def _greedy_embedding(diagrams: Sequence[LabelledHasse], grouping: Grouping):
    """Map the tasks one after the other, each node to the first free merged node of its key (or a new one).

    Returns ``(node_group, node_lower, first, node_of)``; minimum whenever it has one node per group.
    """
    index: dict[tuple[int, frozenset[int]], list[int]] = {}
    node_group: list[int] = []
    node_lower: list[tuple[int, ...]] = []
    first: list[tuple[int, int]] = []  # (task, node) whose inputs a merged node copies
    node_of: list[tuple[int, ...]] = []
    for i, h in enumerate(diagrams):
        images: list[int] = []
        up = _up_sets(h)
        for c in range(h.size):
            tick()
            covers = frozenset(images[d] for d in h.lower[c])
            key = (grouping.group[i][c], covers)
            taken = {images[d] for d in range(c) if up[d] & up[c]}  # images within a common down-set
            target = next((m for m in index.get(key, ()) if m not in taken), None)
            if target is None:
                target = len(node_group)
                node_group.append(key[0])
                node_lower.append(tuple(sorted(covers)))
                first.append((i, c))
                index.setdefault(key, []).append(target)
            images.append(target)
        node_of.append(tuple(images))
    return node_group, node_lower, first, node_of


def _up_sets(h: LabelledHasse) -> list[int]:
    """``up[c]``: bitset of the nodes ``>= c``; two nodes lie in a common down-set iff their up-sets meet."""
    up = [0] * h.size
    for w, down in enumerate(h.down_sets):
        for c in down:
            up[c] |= 1 << w
    return up


def _collect_labels(h: LabelledHasse, c: int, merged_positions, inputs, labels) -> None:
    """Move the labels of node ``c`` onto the merged positions with the same inputs (k-th to k-th)."""
    pool: dict[tuple[str, int], list[int]] = {}
    for q in merged_positions:
        pool.setdefault(inputs[q], []).append(q)
    seen: dict[tuple[str, int], int] = {}
    for p in h.members[c]:
        key = h.task.inputs[p]
        q = pool[key][seen.get(key, 0)]
        seen[key] = seen.get(key, 0) + 1
        labels[q].update(h.task.labels[p])


def _dense_mask(node_lower, members, size: int) -> np.ndarray:
    """``M*[q, k]`` iff ``node(k) <= node(q)``: the reflexive–transitive closure of the merged diagram."""
    below: list[int] = []
    for m, lows in enumerate(node_lower):  # nodes are created after the nodes they cover
        acc = 1 << m
        for d in lows:
            acc |= below[d]
        below.append(acc)
    node_mask = unpack_rows(below, len(below))
    node_of = np.empty(size, dtype=np.int64)
    for m, ps in enumerate(members):
        node_of[list(ps)] = m
    return node_mask[np.ix_(node_of, node_of)]


def _unique_names(names: list[str]) -> list[str]:
    """Keep the tasks' position names, suffixing repeats (``P0``, ``P0'``) so rows stay distinct."""
    seen: dict[str, int] = {}
    out = []
    for s in names:
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.append(s if k == 0 else s + "'" * k)
    return out

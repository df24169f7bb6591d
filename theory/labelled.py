"""The labelled Hasse diagram of a task: ``task_to_hasse``.

Each node is a class of the task's limit order (design.md §2) and carries the
multiset of its positions' inputs ``(symbol, pos)``; edges are the covering
relation, lower -> upper. The down-set ``↓c`` of a node is the sub-diagram of the
nodes ``<= c``. Two nodes are *equivalent* when an isomorphism of their down-sets
maps one to the other and preserves edges and input multisets (theory.equivalence).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx

from hasse.theory.order import mask_to_order
from hasse.theory.task import Task

Inputs = tuple[tuple[str, int], ...]  # a sorted multiset of (symbol, pos)


@dataclass(frozen=True)
class LabelledHasse:
    """The labelled Hasse diagram of one task. Nodes are numbered in canonical class order."""

    task: Task
    members: tuple[tuple[int, ...], ...]  # positions of each node, ascending
    inputs: tuple[Inputs, ...]  # sorted input multiset of each node
    lower: tuple[tuple[int, ...], ...]  # nodes covered by each node (its Hasse predecessors)

    @property
    def size(self) -> int:
        return len(self.members)

    @cached_property
    def down_sets(self) -> tuple[frozenset[int], ...]:
        """``down_sets[c]``: the nodes ``<= c`` (``c`` included)."""
        out: list[frozenset[int]] = []
        for c, low in enumerate(self.lower):  # canonical order is topological
            acc = {c}
            for d in low:
                acc |= out[d]
            out.append(frozenset(acc))
        return tuple(out)

    @cached_property
    def node_of_position(self) -> tuple[int, ...]:
        """``node_of_position[p]``: the node that holds position ``p``."""
        return nodes_of_positions(self.members, self.task.size)

    def upstream_inputs(self, c: int) -> Inputs:
        """The sorted multiset of the inputs of every position in ``↓c`` (what node ``c`` sees).

        Equivalent nodes have equal upstream inputs (the theorem
        ``equivalence_preserves_upstream_inputs``); consistency compares them.
        """
        return tuple(sorted(x for d in self.down_sets[c] for x in self.inputs[d]))

    def labels(self, c: int) -> tuple[tuple[tuple[str, int], int], ...]:
        """``((input, target), …)`` for every labelled position of node ``c``, sorted."""
        return tuple(sorted((self.task.inputs[p], t) for p in self.members[c] for t in self.task.labels[p]))

    def down_graph(self, c: int) -> nx.DiGraph:
        """``↓c`` as a networkx DiGraph (edges lower -> upper) with node attributes ``inputs`` and ``root``."""
        graph = nx.DiGraph()
        for d in self.down_sets[c]:
            graph.add_node(d, inputs=self.inputs[d], root=(d == c))
            graph.add_edges_from((e, d) for e in self.lower[d])
        return graph

    def graph(self, with_labels: bool = True) -> nx.DiGraph:
        """The whole diagram as a DiGraph; nodes carry ``inputs`` (and ``labels``)."""
        graph = nx.DiGraph()
        for c in range(self.size):
            attrs = {"inputs": self.inputs[c]}
            if with_labels:
                attrs["labels"] = self.labels(c)
            graph.add_node(c, **attrs)
            graph.add_edges_from((d, c) for d in self.lower[c])
        return graph


def nodes_of_positions(members, size: int) -> tuple[int, ...]:
    """The node of each of ``size`` positions, given the positions ``members[c]`` of each node ``c``.

    >>> nodes_of_positions(((0, 2), (1,)), 3)
    (0, 1, 0)
    """
    out = [0] * size
    for c, ps in enumerate(members):
        for p in ps:
            out[p] = c
    return tuple(out)


def task_to_hasse(task: Task) -> LabelledHasse:
    """The labelled Hasse diagram of ``task``.

    >>> from hasse.theory.task import make_task
    >>> t = make_task(2, [("x0", 0), ("x1", 1), ("[MASK]", 1)], [None, None, 1],
    ...               [[1, 0, 0], [1, 1, 0], [1, 0, 1]])
    >>> h = task_to_hasse(t)
    >>> h.inputs, h.lower
    (((('x0', 0),), (('x1', 1),), (('[MASK]', 1),)), ((), (0,), (0,)))
    """
    order = mask_to_order(task.mask)
    lower: list[list[int]] = [[] for _ in order.classes]
    for lo, up in order.hasse_edges:
        lower[up].append(lo)
    inputs = tuple(tuple(sorted(task.inputs[p] for p in members)) for members in order.classes)
    return LabelledHasse(task, order.classes, inputs, tuple(tuple(sorted(ls)) for ls in lower))

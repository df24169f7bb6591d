"""The minimum merged task of a small family by exhaustive search (the reference for Z3).

A *merged diagram* for a family is a labelled DAG into which every task maps so
that every node has an equivalent node (design.md §3): a map of each task's nodes
that keeps input multisets, maps each node's cover set exactly onto its image's
cover set, and is one-to-one on every down-set (two nodes with a common upper
bound never share an image) — then ``↓c`` is mapped isomorphically onto
``↓f(c)``. These are the maps the kit's merge records in ``node_of``. The images
of all tasks form a down-closed part of any merged diagram that is a merged
diagram by itself, so a minimum one is a *quotient* of the tasks' disjoint union:
an identification of task nodes that never joins two nodes of one down-set and
joins only nodes with the same inputs and identified cover sets.
:func:`min_merged_nodes` enumerates such quotients depth first — each task node
(largest task first, nodes in topological order) joins a merged node already made
(same inputs, same image of its covers, not the image of a node sharing a down-set
with it) or makes a new one — and prunes at the best size found so far.

Exponential in the number of same-input nodes: meant for families of a few
dozen nodes whose inputs are mostly distinct, or tiny families.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Quotient:
    nodes: int  # merged nodes
    inputs: tuple  # input multiset of each merged node
    lower: tuple[tuple[int, ...], ...]  # covers of each merged node
    maps: tuple[tuple[int, ...], ...]  # maps[i][c]: merged node of node c of task i


def min_merged_nodes(diagrams: Sequence[tuple[Sequence, Sequence[Sequence[int]]]], below: int,
                     *, deadline=None) -> Quotient | None:
    """A merged diagram with fewer than ``below`` nodes, the smallest there is; ``None`` if there is none.

    ``diagrams[i] = (inputs, lower)``: input multiset and covered nodes of each node of task
    ``i``, nodes in a topological order. ``deadline()`` (optional) is called now and then
    and may raise ``TimeoutError``.

    >>> chain = ((("a",), ("a",)), ((), (0,)))            # a -> a
    >>> split = ((("a",), ("a",), ("a",)), ((), (), (1,))) # a,  a -> a
    >>> min_merged_nodes([chain, split], 5).nodes          # the split's lone a joins the chain's lower a
    2
    """
    order = sorted(range(len(diagrams)), key=lambda i: -len(diagrams[i][0]))  # largest task first: an early bound
    result = _search([diagrams[i] for i in order], below, deadline)
    if result is None:
        return None
    maps = [None] * len(diagrams)
    for j, i in enumerate(order):
        maps[i] = result.maps[j]
    return Quotient(result.nodes, result.inputs, result.lower, tuple(maps))


def _search(diagrams, below: int, deadline) -> Quotient | None:
    merged_inputs: list = []
    merged_lower: list[frozenset[int]] = []
    best: list = [below, None]
    steps = [0]

    ups = [_common_down_set(lower) for _, lower in diagrams]

    def rec(i: int, c: int, images: list[int], maps: list[tuple[int, ...]]) -> None:
        steps[0] += 1
        if deadline is not None and steps[0] % 4096 == 0:
            deadline()
        if len(merged_inputs) >= best[0]:
            return
        if i == len(diagrams):
            best[0] = len(merged_inputs)
            best[1] = Quotient(len(merged_inputs), tuple(merged_inputs),
                               tuple(tuple(sorted(s)) for s in merged_lower), tuple(maps))
            return
        inputs, lower = diagrams[i]
        if c == len(inputs):
            rec(i + 1, 0, [], maps + [tuple(images)])
            return
        covers = frozenset(images[d] for d in lower[c])
        taken = {images[d] for d in range(c) if ups[i][c][d]}  # one-to-one on every down-set
        for m in range(len(merged_inputs)):
            if m not in taken and merged_inputs[m] == inputs[c] and merged_lower[m] == covers:
                rec(i, c + 1, images + [m], maps)
        merged_inputs.append(inputs[c])
        merged_lower.append(covers)
        m = len(merged_inputs) - 1
        rec(i, c + 1, images + [m], maps)
        merged_inputs.pop()
        merged_lower.pop()

    rec(0, 0, [], [])
    return best[1]


def _common_down_set(lower) -> list[list[bool]]:
    """``share[c][d]``: nodes ``c`` and ``d`` lie in a common down-set (they have a common upper bound)."""
    size = len(lower)
    below: list[set[int]] = []
    for c in range(size):
        acc = {c}
        for d in lower[c]:
            acc |= below[d]
        below.append(acc)
    up = [{w for w in range(size) if c in below[w]} for c in range(size)]
    return [[bool(up[c] & up[d]) for d in range(size)] for c in range(size)]

"""Node equivalence: labelled isomorphism of down-sets with the root fixed.

Nodes ``u`` (of task ``T_a``) and ``v`` (of ``T_b``) are equivalent iff an
isomorphism ``↓u -> ↓v`` maps ``u`` to ``v`` and preserves edges and input
multisets (design.md §3). Equivalent nodes compute the same hidden states under
dense masks.

Fast path. A *signature* interns ``(inputs, sorted signatures of the covered
nodes)`` to an integer: it is the canonical form of the down-set's unfolding into
a tree, so an isomorphism preserves it — equivalent nodes always share it. It may
join non-equivalent nodes (a shared lower node versus two equal copies), so it only
buckets candidates. Inside a bucket the exact test is

* immediate when every node of both down-sets has a distinct signature (the map
  by signature is then forced and is an isomorphism);
* networkx VF2 (node match on inputs and on the root) otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from networkx.algorithms.isomorphism import DiGraphMatcher

from hasse.theory.deadline import tick
from hasse.theory.labelled import LabelledHasse


@dataclass
class SignatureTable:
    """Interns signatures; share one table across every diagram that is compared."""

    ids: dict[tuple, int] = field(default_factory=dict)

    def signatures(self, h: LabelledHasse) -> tuple[int, ...]:
        out: list[int] = []
        for c in range(h.size):  # canonical order is topological
            key = (h.inputs[c], tuple(sorted(out[d] for d in h.lower[c])))
            out.append(self.ids.setdefault(key, len(self.ids)))
        return tuple(out)


def _distinct(h: LabelledHasse, sigs: Sequence[int], c: int) -> bool:
    """Whether the nodes of ``↓c`` have pairwise distinct signatures."""
    down = h.down_sets[c]
    return len({sigs[d] for d in down}) == len(down)


def _match(a: dict, b: dict) -> bool:
    return a["inputs"] == b["inputs"] and a["root"] == b["root"]


def equivalent_exact(ha: LabelledHasse, u: int, hb: LabelledHasse, v: int) -> bool:
    """Equivalence by VF2 isomorphism of the rooted, labelled down-sets (the reference)."""
    ga, gb = ha.down_graph(u), hb.down_graph(v)
    if ga.number_of_nodes() != gb.number_of_nodes() or ga.number_of_edges() != gb.number_of_edges():
        return False
    return DiGraphMatcher(ga, gb, node_match=_match).is_isomorphic()


@dataclass
class Grouping:
    """Nodes of several diagrams grouped by equivalence.

    ``group[i][c]`` is the group of node ``c`` of diagram ``i``; ``members[g]`` lists
    ``(i, c)`` in order of appearance (the first is the representative).
    """

    diagrams: tuple[LabelledHasse, ...]
    group: tuple[tuple[int, ...], ...]
    members: tuple[tuple[tuple[int, int], ...], ...]
    exact_tests: int  # VF2 runs needed (the rest were settled by signatures)


def group_nodes(diagrams: Sequence[LabelledHasse], table: SignatureTable | None = None) -> Grouping:
    """Group every node of every diagram by equivalence (signature buckets, then the exact test).

    >>> from hasse.theory.catalog import build_family
    >>> from hasse.theory.labelled import task_to_hasse
    >>> g = group_nodes([task_to_hasse(t) for t in build_family("ar:n=4")])
    >>> len(g.members), [len(m) for m in g.members]
    (3, [3, 2, 1])
    """
    table = table or SignatureTable()
    sigs = [table.signatures(h) for h in diagrams]
    buckets: dict[int, list[int]] = {}  # signature -> groups holding it
    reps: list[tuple[int, int]] = []
    members: list[list[tuple[int, int]]] = []
    groups: list[list[int]] = []
    exact = 0
    for i, h in enumerate(diagrams):
        row = []
        tick()
        for c in range(h.size):
            s = sigs[i][c]
            found = None
            for g in buckets.get(s, ()):
                j, d = reps[g]
                if _distinct(h, sigs[i], c) and _distinct(diagrams[j], sigs[j], d):
                    found = g
                else:
                    exact += 1
                    if equivalent_exact(h, c, diagrams[j], d):
                        found = g
                if found is not None:
                    break
            if found is None:
                found = len(reps)
                reps.append((i, c))
                members.append([])
                buckets.setdefault(s, []).append(found)
            members[found].append((i, c))
            row.append(found)
        groups.append(row)
    return Grouping(tuple(diagrams), tuple(tuple(r) for r in groups), tuple(tuple(m) for m in members), exact)


def equivalent(ha: LabelledHasse, u: int, hb: LabelledHasse, v: int) -> bool:
    """Whether node ``u`` of ``ha`` and node ``v`` of ``hb`` are equivalent (fast path, then VF2)."""
    table = SignatureTable()
    sa, sb = table.signatures(ha), table.signatures(hb)
    if sa[u] != sb[v]:
        return False
    if _distinct(ha, sa, u) and _distinct(hb, sb, v):
        return True
    return equivalent_exact(ha, u, hb, v)


def _task_match(a: dict, b: dict) -> bool:
    return a["inputs"] == b["inputs"] and a["labels"] == b["labels"]


def diagrams_isomorphic(ha: LabelledHasse, hb: LabelledHasse) -> bool:
    """Whether two whole labelled Hasse diagrams are isomorphic (inputs and labels preserved)."""
    ga, gb = ha.graph(), hb.graph()
    if ga.number_of_nodes() != gb.number_of_nodes() or ga.number_of_edges() != gb.number_of_edges():
        return False
    return DiGraphMatcher(ga, gb, node_match=_task_match).is_isomorphic()

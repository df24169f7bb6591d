"""Is there a merged diagram with ``K`` nodes into which every task maps? (Z3, for minimality.)

A merged diagram for a family (design.md §3) is a labelled DAG into which every task
maps cover-exactly and one-to-one on down-sets (:mod:`solvers.smt.task_maps`), so that
every node has an equivalent node. :func:`merge_within` encodes ``K`` merged nodes with
symbolic inputs and covers (:func:`encode_merged_nodes`), one such map per task
(:func:`encode_task_embedding`) and a symmetry breaking that fixes the largest
down-set (:func:`encode_first_task_fixed`): unsat at one node fewer than the kit's
merge proves the merge minimum. :func:`merged_value_to_task` turns a model into a
task for display.

>>> from hasse.solvers.posets import Diagram
>>> chain = Diagram(members=((0,), (1,)), inputs=((("x0", 0),), (("x1", 1),)), labels=(frozenset(), frozenset()),
...                 lower=((), (0,)))  # x0 -> x1
>>> merge_within([chain], 1).status, merge_within([chain], 2).status
('unsat', 'sat')
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import z3

from hasse.solvers.posets import Diagram, closure
from hasse.solvers.smt.prove import Answer, check
from hasse.solvers.smt.task_maps import decode_map, encode_injective_on_down_sets, encode_map


def encode_merged_nodes(solver, k: int, alphabet: int) -> tuple[list, dict]:
    """``K`` merged nodes: an input-multiset index per node and cover Booleans ``cov[m, m']`` (``m' < m``).

    Numbering the merged nodes topologically loses nothing (every DAG has such a numbering).
    """
    inputs = [z3.Int(f"in_{m}") for m in range(k)]
    for x in inputs:
        solver.add(0 <= x, x < max(alphabet, 1))
    cov = {(m, m2): z3.Bool(f"cov_{m}_{m2}") for m in range(k) for m2 in range(m)}
    return inputs, cov


def encode_task_embedding(solver, i: int, d: Diagram, k: int, index: dict, inputs: list, cov: dict) -> dict:
    """Task ``i`` maps into the ``K`` merged nodes, one-to-one on down-sets, inputs kept, covers mapped exactly."""
    f = encode_map(solver, f"f{i}", range(d.size), {c: list(range(k)) for c in range(d.size)})
    encode_injective_on_down_sets(solver, f, d, range(d.size))
    for (c, m), x in f.items():
        parts = [inputs[m] == index[d.inputs[c]]]
        for m2 in range(k):
            image = z3.Or([f[e, m2] for e in d.lower[c]])
            parts.append(cov[m, m2] == image if m2 < m else z3.Not(image))
        solver.add(z3.Implies(x, z3.And(parts)))
    return f


def largest_down_set(d: Diagram) -> list[int]:
    """The nodes of the largest down-set ``↓c`` of ``d``, in topological order."""
    below = d.below()
    return sorted(max(below, key=len)) if below else []


def encode_first_task_fixed(solver, f: dict, d: Diagram, k: int) -> None:
    """Symmetry breaking: the ``j``-th node of ``d``'s largest down-set is merged node ``j`` (for ``j < K``).

    Loses no solution: the map is one-to-one on that down-set and its image is the
    down-set of the root's image (nothing outside it lies below it), so numbering that
    image first, in the task's own topological order, and the other merged nodes after
    it is again a topological numbering.
    """
    for j, c in enumerate(largest_down_set(d)[:k]):
        solver.add(f[c, j])


def merge_within(diagrams: Sequence[Diagram], k: int, *, symmetry_breaking: bool = True,
                 timeout: float | None = None) -> Answer:
    """Is there a merged diagram with ``k`` nodes into which every task maps (cover-exact, one-to-one on down-sets)?

    sat: ``value`` is ``{"inputs": [multiset per node], "lower": [covers per node],
    "maps": [{task node: merged node} per task]}`` (maps in the order of ``diagrams``).
    ``symmetry_breaking=False`` is the naive encoding (the benchmark's baseline).
    """
    order = sorted(range(len(diagrams)), key=lambda i: -len(largest_down_set(diagrams[i])))  # largest down-set first
    multisets = sorted({x for d in diagrams for x in d.inputs})
    index = {x: u for u, x in enumerate(multisets)}
    solver = z3.Solver()
    inputs, cov = encode_merged_nodes(solver, k, len(multisets))
    maps = [None] * len(diagrams)
    for i in order:
        maps[i] = encode_task_embedding(solver, i, diagrams[i], k, index, inputs, cov)
    if diagrams and k > 0 and symmetry_breaking:
        encode_first_task_fixed(solver, maps[order[0]], diagrams[order[0]], k)

    def decode(model) -> dict:
        return {
            "inputs": [list(multisets[model.eval(x, model_completion=True).as_long()]) for x in inputs],
            "lower": [[m2 for m2 in range(m) if z3.is_true(model.eval(cov[m, m2], model_completion=True))]
                      for m in range(k)],
            "maps": [decode_map(model, f) for f in maps],
        }

    return check(solver, timeout, decode)


def merged_value_to_task(value: dict, diagrams: Sequence[Diagram], tokens: int):
    """A decoded merged diagram as a task (dense mask, labels collected through the maps), for display."""
    from hasse.theory.task import make_task

    used = sorted({m for f in value["maps"] for m in f.values()})
    renum = {m: i for i, m in enumerate(used)}
    inputs, node_of, labels = [], [], []
    for m in used:
        for x in value["inputs"][m]:
            inputs.append(tuple(x))
            node_of.append(renum[m])
            labels.append(set())
    for d, f in zip(diagrams, value["maps"]):
        for c, m in f.items():
            for inp, t in d.labels[c]:
                q = next(p for p, x in enumerate(inputs) if node_of[p] == renum[m] and x == inp)
                labels[q].add(t)
    k = len(used)
    node_mask = np.eye(k, dtype=bool)
    for m in used:
        for m2 in value["lower"][m]:
            if m2 in renum:
                node_mask[renum[m], renum[m2]] = True
    node_mask = closure(node_mask)
    mask = node_mask[np.ix_(node_of, node_of)]
    return make_task(tokens, inputs, [sorted(ls) or None for ls in labels], mask, name=f"merged with {k} nodes")



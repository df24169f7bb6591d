"""Every small labelled Hasse diagram, and tasks and families built from them.

The exhaustive checks of the task-level theorems (design.md §5) quantify over
labelled DAGs. A *Hasse diagram on k nodes* is given by ``lower[j]``, the nodes
that node ``j`` covers, with nodes ``0 … k-1`` numbered in a topological order
(``i < j`` for every ``i`` in ``lower[j]``) and the edges transitively reduced
(no covered node lies below another covered node of the same node). Every DAG
has such a numbering, so the enumeration reaches every labelled Hasse diagram up
to isomorphism, some several times; :func:`canonical_form` (brute force over
relabellings) tells the copies apart.

- :func:`hasse_shapes` — every Hasse diagram on ``k`` topologically numbered nodes;
- :func:`rooted_hasse_diagrams` — those with one maximal node ``k-1`` (a down-set),
  with every labelling from an alphabet: the objects node equivalence compares;
- :func:`labelled_dags` — every labelled Hasse diagram on ``k`` nodes up to isomorphism;
- :func:`dag_to_task` — the task whose labelled Hasse diagram is a given one;
- :func:`small_families` — every family of one or two such tasks with ``n`` nodes
  in all (the exhaustive class of ``merged_task_embeds_every_task`` and
  ``merged_task_is_minimum``).

Counts (2-symbol alphabet), for k = 1 … 5 nodes: Hasse diagrams on k topologically
numbered nodes 1, 2, 7, 40, 357; rooted labelled diagrams with at most k nodes 2, 6,
22, 134, 1414; labelled diagrams on k nodes up to isomorphism 2, 7, 32, 192, 1490;
families of one or two of them with k nodes in all 2, 11, 60, 369, 2706.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Iterator, Sequence

import numpy as np

from hasse.theory.deadline import tick

Lower = tuple[tuple[int, ...], ...]  # lower[j]: the nodes node j covers (all < j)

ALPHABET = ("a", "b")
# inputs given to the two symbols when a diagram is turned into a task (tokens = 2):
# "a" is clean content of token 0, "b" a [MASK] query that predicts token 1
TASK_INPUTS = {"a": ("x0", 0), "b": ("[MASK]", 1)}
TASK_LABELS = {"a": None, "b": 1}


def below_sets(lower: Lower) -> list[frozenset[int]]:
    """``below[j]``: the nodes ``<= j`` (``j`` included), for a topologically numbered diagram."""
    out: list[frozenset[int]] = []
    for j, low in enumerate(lower):
        acc = {j}
        for i in low:
            acc |= out[i]
        out.append(frozenset(acc))
    return out


def is_reduced(lower: Lower) -> bool:
    """No covered node of a node lies below another covered node of it (edges are covers only)."""
    below = below_sets(lower)
    return not any(i in below[i2] for low in lower for i in low for i2 in low if i != i2)


@lru_cache(maxsize=None)
def hasse_shapes(k: int) -> tuple[Lower, ...]:
    """Every Hasse diagram on ``k`` topologically numbered nodes (``2^(k(k-1)/2)`` edge sets, reduced ones kept).

    >>> [len(hasse_shapes(k)) for k in range(1, 5)]
    [1, 2, 7, 40]
    """
    pairs = [(i, j) for j in range(k) for i in range(j)]
    out = []
    for bits in itertools.product((0, 1), repeat=len(pairs)):
        tick()  # generation honours the time limit (theory.deadline)
        lower: list[list[int]] = [[] for _ in range(k)]
        for (i, j), b in zip(pairs, bits):
            if b:
                lower[j].append(i)
        shape = tuple(tuple(ls) for ls in lower)
        if is_reduced(shape):
            out.append(shape)
    return tuple(out)


def rooted_hasse_diagrams(max_nodes: int = 5, alphabet: Sequence[str] = ALPHABET) -> Iterator[tuple[int, Lower, tuple]]:
    """Every rooted labelled Hasse diagram with up to ``max_nodes`` nodes: ``(k, lower, labels)``.

    Nodes ``0 … k-1`` in a fixed topological order, node ``k-1`` the root (the only
    maximal node: everything is below it), edges transitively reduced; one label per
    node from the alphabet. Each is the down-set of its root; isomorphic copies
    (other topological numberings) are all listed.

    >>> sum(1 for _ in rooted_hasse_diagrams(3))
    22
    """
    for k in range(1, max_nodes + 1):
        for lower in hasse_shapes(k):
            if below_sets(lower)[k - 1] != frozenset(range(k)):
                continue  # not rooted at k-1
            for labels in itertools.product(alphabet, repeat=k):
                yield k, lower, labels


def canonical_form(lower: Lower, labels: Sequence, root_last: bool = True) -> tuple:
    """Brute force: the smallest encoding ``(k, edges, labels)`` over all relabellings of the nodes.

    With ``root_last`` the last node stays last (rooted diagrams: the isomorphism must
    map root to root). Two diagrams are isomorphic (edges and labels preserved) iff
    their canonical forms are equal. ``k!`` relabellings: meant for ``k <= 6``.

    >>> canonical_form(((), (), (0,)), "aab") == canonical_form(((), (), (1,)), "aab")
    True
    """
    k = len(labels)
    best = None
    movable = range(k - 1) if root_last else range(k)
    for perm in itertools.permutations(movable):
        tick()
        new = list(perm) + ([k - 1] if root_last else [])
        edges = tuple(sorted((new[i], new[j]) for j in range(k) for i in lower[j]))
        labs = tuple(labels[old] for old in sorted(range(k), key=lambda o: new[o]))
        code = (k, edges, labs)
        if best is None or code < best:
            best = code
    return best


@lru_cache(maxsize=None)
def labelled_dags(k: int, alphabet: tuple[str, ...] = ALPHABET) -> tuple[tuple[Lower, tuple[str, ...]], ...]:
    """Every labelled Hasse diagram on ``k`` nodes, one per isomorphism class: ``(lower, labels)``.

    >>> [len(labelled_dags(k)) for k in range(1, 4)]
    [2, 7, 32]
    """
    seen = set()
    out = []
    for lower in hasse_shapes(k):
        for labels in itertools.product(alphabet, repeat=k):
            form = canonical_form(lower, labels, root_last=False)
            if form not in seen:
                seen.add(form)
                out.append((lower, tuple(labels)))
    return tuple(out)


def closure_mask(lower: Lower) -> np.ndarray:
    """``M[q, k]`` iff ``k <= q`` in the diagram: the dense mask of a topologically numbered diagram."""
    below = below_sets(lower)
    k = len(lower)
    mask = np.zeros((k, k), dtype=bool)
    for j in range(k):
        mask[j, list(below[j])] = True
    return mask


def cover_mask(lower: Lower) -> np.ndarray:
    """``M[q, k]`` iff ``k = q`` or ``q`` covers ``k``: the sparsest mask with the diagram as its limit order."""
    k = len(lower)
    mask = np.eye(k, dtype=bool)
    for j, low in enumerate(lower):
        mask[j, list(low)] = True
    return mask


def dag_to_task(lower: Lower, labels: Sequence[str], *, dense: bool = False, name: str = ""):
    """The task with one position per node: inputs and labels from the symbols, mask from the covers.

    ``"a"`` -> ``x0`` at pos 0 (unsupervised), ``"b"`` -> ``[MASK]`` at pos 1 predicting
    token 1 (:data:`TASK_INPUTS`, :data:`TASK_LABELS`); two tokens. The mask holds the
    covers and the diagonal (``dense``: the whole order), so the task's labelled Hasse
    diagram is the given one.

    >>> t = dag_to_task(((), (0,)), "ab")
    >>> t.inputs, t.labels, t.mask.astype(int).tolist()
    ((('x0', 0), ('[MASK]', 1)), ((), (1,)), [[1, 0], [1, 1]])
    """
    from hasse.theory.task import make_task

    mask = closure_mask(lower) if dense else cover_mask(lower)
    return make_task(2, [TASK_INPUTS[s] for s in labels], [TASK_LABELS[s] for s in labels], mask,
                     name=name or f"dag {''.join(labels)} {list(map(list, lower))}")


def small_families(n: int, alphabet: tuple[str, ...] = ALPHABET) -> Iterator[tuple[tuple[Lower, tuple[str, ...]], ...]]:
    """Every family of one or two labelled Hasse diagrams with ``n`` nodes in all (each up to isomorphism).

    One task on ``n`` nodes, or an ordered pair on ``a + b = n`` nodes (``a, b >= 1``;
    the order matters to the merge, which embeds the tasks one after the other).
    Counts: 2, 11, 60, 369, 2706 for n = 1 … 5 (:func:`family_count`).
    """
    yield from ((d,) for d in labelled_dags(n, alphabet))
    for a in range(1, n):
        for first in labelled_dags(a, alphabet):
            for second in labelled_dags(n - a, alphabet):
                yield first, second


def family_count(n: int, alphabet: tuple[str, ...] = ALPHABET) -> int:
    """How many families :func:`small_families` lists at ``n``.

    >>> [family_count(n) for n in range(1, 5)]
    [2, 11, 60, 369]
    """
    counts = [len(labelled_dags(k, alphabet)) for k in range(1, n + 1)]
    return counts[n - 1] + sum(counts[a - 1] * counts[n - a - 1] for a in range(1, n))


def main() -> None:
    for k in range(1, 5):
        print(f"{k} nodes: {len(hasse_shapes(k))} topologically numbered Hasse diagrams, "
              f"{len(labelled_dags(k))} labelled ones up to isomorphism, "
              f"{sum(1 for _ in rooted_hasse_diagrams(k))} rooted labelled ones with <= {k} nodes, "
              f"{family_count(k)} families")


if __name__ == "__main__":
    main()

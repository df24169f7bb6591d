"""A seeded uniform sample of the exhaustive family class at sizes too large to list.

The class of :func:`solvers.task_sets.small_families` at ``n`` — ordered lists of labelled
Hasse diagrams (2 symbols, each up to isomorphism) with ``n`` nodes in all — has
32,898 members at n = 6, and listing its 6-node diagrams (:func:`solvers.dags.labelled_dags`)
takes far too long. :func:`sample_families` draws families uniformly from it without
listing it:

1. a family index ``r`` uniform in ``[0, N)``, ``N`` the class size (per composition of ``n``
   the product of the diagram counts ``c_k``: :func:`solvers.dags.labelled_dags` for
   ``k <= 5``, Burnside's count :func:`solvers.class_sizes.coloured_posets` beyond), decoded
   into a composition and, mixed radix, one diagram per part — the family
   :func:`~solvers.task_sets.small_families` lists at position ``r`` when every part has
   at most :data:`LISTED` nodes;
2. a part with more nodes is drawn uniformly among the isomorphism classes by rejection
   (:func:`uniform_diagram`): propose a topologically numbered Hasse diagram
   (:func:`solvers.dags.hasse_shapes`) and a labelling uniformly, accept with probability
   ``|Aut| / e``. A coloured poset with ``e`` linear extensions and ``|Aut|`` automorphisms
   arises from ``e / |Aut|`` such proposals (automorphisms act freely on the linear
   extensions), so every class is accepted with the same probability.

Draws are with replacement; the same ``(n, count, seed)`` always gives the same families.

>>> fams = sample_families(4, 3, seed=1)
>>> len(fams), all(sum(len(t.inputs) for t in tasks) == 4 for _, tasks in fams)
(3, True)
"""

from __future__ import annotations

import itertools
from typing import Callable, Sequence

import numpy as np

from hasse.solvers.dags import ALPHABET, Lower, dag_to_task, hasse_shapes, labelled_dags
from hasse.solvers.task_sets import compositions

LISTED = 5  # parts with at most this many nodes are indexed in labelled_dags; larger ones drawn by rejection


def diagram_count(k: int) -> int:
    """Labelled Hasse diagrams on ``k`` nodes up to isomorphism (2 symbols)."""
    if k <= LISTED:
        return len(labelled_dags(k, ALPHABET))
    from hasse.solvers.class_sizes import coloured_posets

    return coloured_posets(k, len(ALPHABET))


def class_size(n: int) -> int:
    """The size of the family class at ``n``: ``Σ`` over compositions of the product of the parts' counts.

    >>> [class_size(n) for n in range(1, 6)]
    [2, 11, 68, 469, 3640]
    """
    return sum(int(np.prod([diagram_count(k) for k in sizes], dtype=object)) for sizes in compositions(n))


def linear_extensions(lower: Lower) -> int:
    """How many orders of the nodes put every node after the nodes below it (DP over down-closed sets).

    >>> linear_extensions(((), (), ())), linear_extensions(((), (0,), (1,))), linear_extensions(((), (), (0, 1)))
    (6, 1, 2)
    """
    k = len(lower)
    need = [sum(1 << d for d in low) for low in lower]
    ways = [0] * (1 << k)
    ways[0] = 1
    for s in range(1 << k):
        if ways[s]:
            for c in range(k):
                if not s >> c & 1 and need[c] & s == need[c]:
                    ways[s | 1 << c] += ways[s]
    return ways[-1]


def automorphisms(lower: Lower, labels: Sequence[str]) -> int:
    """How many permutations of the nodes keep the covers and the labels (brute force within invariant cells).

    >>> automorphisms(((), (), (0, 1)), "aab"), automorphisms(((), (), (0, 1)), "abb")
    (2, 1)
    """
    k = len(lower)
    edges = {(d, c) for c in range(k) for d in lower[c]}
    ups = [sum(1 for c in range(k) if d in lower[c]) for d in range(k)]
    cell = [(labels[c], len(lower[c]), ups[c]) for c in range(k)]
    options = [[d for d in range(k) if cell[d] == cell[c]] for c in range(k)]
    count = 0
    for perm in itertools.product(*options):
        if len(set(perm)) == k and all((perm[d], perm[c]) in edges for d, c in edges):
            count += 1
    return count


def uniform_diagram(k: int, rng: np.random.Generator) -> tuple[Lower, tuple[str, ...]]:
    """A labelled Hasse diagram on ``k`` nodes, every isomorphism class equally likely (rejection, see above)."""
    shapes = hasse_shapes(k)
    while True:
        lower = shapes[int(rng.integers(len(shapes)))]
        labels = tuple(ALPHABET[int(b)] for b in rng.integers(len(ALPHABET), size=k))
        if rng.random() * linear_extensions(lower) < automorphisms(lower, labels):
            return lower, labels


def _blocks(n: int) -> list[tuple[tuple[int, ...], int]]:
    return [(sizes, int(np.prod([diagram_count(k) for k in sizes], dtype=object))) for sizes in compositions(n)]


def family_at(n: int, index: int, rng: np.random.Generator | None = None) -> tuple[str, tuple]:
    """The family at position ``index`` of the class at ``n``, as :func:`solvers.task_sets.small_families`
    lists it (``(description, tasks)``); a part of more than :data:`LISTED` nodes is drawn by
    :func:`uniform_diagram` with ``rng`` instead.

    >>> from hasse.solvers.task_sets import small_families
    >>> family_at(3, 17)[0] == list(small_families(3))[17][0]
    True
    """
    r = index
    for sizes, block in _blocks(n):
        if r < block:
            break
        r -= block
    else:
        raise IndexError(f"family {index} of a class of {class_size(n)}")
    parts = []
    for k in reversed(sizes):  # itertools.product order: the last part varies fastest
        c = diagram_count(k)
        if k <= LISTED:
            parts.append(labelled_dags(k, ALPHABET)[r % c])
        else:
            if rng is None:
                raise ValueError(f"a part of {k} nodes is drawn, not listed: pass rng")
            parts.append(uniform_diagram(k, rng))
        r //= c
    parts.reverse()
    text = " + ".join(f"{''.join(labels)}{[list(low) for low in lower]}" for lower, labels in parts)
    return text, tuple(dag_to_task(lower, labels) for lower, labels in parts)


def sample_families(n: int, count: int, seed: int = 0,
                    deadline: Callable[[], None] | None = None) -> list[tuple[str, tuple]]:
    """``count`` families drawn uniformly (with replacement) from the class at ``n``: ``(description, tasks)``."""
    rng = np.random.default_rng([seed, n])
    total = class_size(n)
    out = []
    for _ in range(count):
        if deadline is not None:
            deadline()
        out.append(family_at(n, int(rng.integers(total)), rng))
    return out

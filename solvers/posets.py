"""The labelled order of a task from its raw rows, written independently of ``theory``.

The Z3 checks of the task-level theorems must not call the code they check
(``theory.order``, ``theory.labelled``, ``theory.equivalence``, ``theory.merge``,
``theory.leak``). They read only what a task *is* — its mask rows, inputs and
labels — and rebuild its labelled Hasse diagram here with the plainest algorithm:

- ``closure``: the reflexive–transitive closure of ``M`` by Boolean squaring of
  ``M ∨ I`` until it stops changing (``R*[q, k]`` iff ``k`` is upstream of ``q``);
- nodes: the classes of mutual reachability, numbered by a topological order of
  the quotient (fewest nodes below first, then smallest member);
- ``lower[c]``: the nodes ``c`` covers (``d < c`` with nothing strictly between);
- ``inputs[c]``: the sorted multiset of the inputs of ``c``'s positions;
- ``labels[c]``: the set of ``(input, target)`` pairs of ``c``'s supervised positions.

Plain numpy on small matrices: meant for the sizes the proofs check (a few hundred
positions at most).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Inputs = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Diagram:
    """A labelled Hasse diagram at node level, rebuilt from raw rows."""

    members: tuple[tuple[int, ...], ...]  # positions of each node, ascending
    inputs: tuple[Inputs, ...]  # sorted input multiset of each node
    labels: tuple[frozenset, ...]  # {(input, target)} of each node
    lower: tuple[tuple[int, ...], ...]  # nodes each node covers (all numbered before it)

    @property
    def size(self) -> int:
        return len(self.members)

    def below(self) -> list[frozenset[int]]:
        """``below[c]``: the nodes ``<= c``."""
        out: list[frozenset[int]] = []
        for c, low in enumerate(self.lower):
            acc = {c}
            for d in low:
                acc |= out[d]
            out.append(frozenset(acc))
        return out

    def upstream_inputs(self, c: int) -> tuple:
        """The sorted multiset of the inputs of every position in ``↓c``.

        The independent reference for ``theory.labelled.LabelledHasse.upstream_inputs``:
        computed on this diagram rebuilt from raw rows, never by calling the code under test.
        """
        return tuple(sorted(x for d in self.below()[c] for x in self.inputs[d]))


def closure(mask) -> np.ndarray:
    """``R*``: the reflexive–transitive closure of a Boolean mask (squaring ``M ∨ I``).

    >>> closure(np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=bool)).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    m = np.asarray(mask, dtype=bool)
    r = m | np.eye(m.shape[0], dtype=bool)
    while True:
        nxt = (r.astype(np.int64) @ r.astype(np.int64)) > 0
        if np.array_equal(nxt, r):
            return r
        r = nxt


def diagram(mask, inputs, labels) -> Diagram:
    """The labelled Hasse diagram of a task given as raw ``mask`` rows, ``inputs`` and ``labels``.

    ``labels[p]`` is a collection of targets (empty when ``p`` is unsupervised).

    >>> d = diagram([[1, 0, 0], [1, 1, 0], [1, 0, 1]], [("x0", 0), ("x1", 1), ("[MASK]", 1)], [(), (), (1,)])
    >>> d.inputs, d.lower, sorted(d.labels[2])
    (((('x0', 0),), (('x1', 1),), (('[MASK]', 1),)), ((), (0,), (0,)), [(('[MASK]', 1), 1)])
    """
    r = closure(mask)
    n = r.shape[0]
    same = r & r.T
    cls: list[tuple[int, ...]] = []
    seen = set()
    for p in range(n):
        if p not in seen:
            members = tuple(int(q) for q in np.flatnonzero(same[p]))
            seen.update(members)
            cls.append(members)
    upstream = [frozenset(int(q) for q in np.flatnonzero(r[c[0]])) for c in cls]
    order = sorted(range(len(cls)), key=lambda i: (len(upstream[i]), cls[i][0]))  # topological
    cls = [cls[i] for i in order]
    upstream = [upstream[i] for i in order]
    node_of = {p: c for c, ms in enumerate(cls) for p in ms}
    below = [frozenset(node_of[q] for q in up) for up in upstream]
    lower = []
    for c in range(len(cls)):
        strict = below[c] - {c}
        lower.append(tuple(sorted(d for d in strict if not any(d in below[e] for e in strict if e != d))))
    node_inputs = tuple(tuple(sorted(tuple(inputs[p]) for p in ms)) for ms in cls)
    node_labels = tuple(frozenset((tuple(inputs[p]), int(t)) for p in ms for t in labels[p]) for ms in cls)
    return Diagram(tuple(cls), node_inputs, node_labels, tuple(lower))


def task_diagram(task) -> Diagram:
    """:func:`diagram` of a :class:`~theory.task.Task` (reads its fields only)."""
    return diagram(task.mask, task.inputs, task.labels)

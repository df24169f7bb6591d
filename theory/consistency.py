"""Training–inference consistency: ``check_consistency``.

Design.md §3. An inference procedure is a list of inference tasks (what the model
sees at each decoding step, including what a KV cache keeps). A training task is
consistent with it iff every supervised node of every inference task has an
equivalent node in the training task carrying the same label (on a position with
the same input). Each node without a match is reported with how its upstream
differs from the closest training node that has that input and label.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from hasse.theory.equivalence import group_nodes
from hasse.theory.labelled import task_to_hasse
from hasse.theory.merge import check_family
from hasse.theory.task import Task

Inputs = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Mismatch:
    """A supervised inference node that no equivalent training node reproduces."""

    task: int  # index of the inference task
    position: int  # its supervised position (in the inference task)
    input: tuple[str, int]
    target: int
    closest: int | None  # training position with the same input and label, closest upstream; None if none
    extra_upstream: Inputs  # inputs the training node sees that the inference node does not
    missing_upstream: Inputs  # inputs the inference node sees that the training node does not


@dataclass(frozen=True)
class ConsistencyReport:
    checked: int  # supervised (inference node, label) pairs checked
    mismatches: tuple[Mismatch, ...]

    @property
    def consistent(self) -> bool:
        return not self.mismatches


def check_consistency(train: Task, inference: Sequence[Task]) -> ConsistencyReport:
    """Check a training task against the inference tasks of a decoding procedure.

    >>> from hasse.theory.catalog import build_family, build_task
    >>> check_consistency(build_task("block_two_stream:n=4,block=2"), build_family("block:n=4,block=2")).consistent
    True
    """
    check_family([train, *inference], "training task and inference family")
    diagrams = [task_to_hasse(train)] + [task_to_hasse(t) for t in inference]
    grouping = group_nodes(diagrams)
    ht = diagrams[0]
    # (group, input, target) available in the training task
    offered = {(grouping.group[0][c], ht.task.inputs[p], t)
               for c in range(ht.size) for p in ht.members[c] for t in ht.task.labels[p]}
    mismatches = []
    checked = 0
    for i, h in enumerate(diagrams[1:], start=1):
        for p in h.task.supervised:
            c = h.node_of_position[p]
            for t in h.task.labels[p]:
                checked += 1
                if (grouping.group[i][c], h.task.inputs[p], t) in offered:
                    continue
                mismatches.append(_explain(i - 1, h, c, p, t, ht))
    return ConsistencyReport(checked, tuple(mismatches))


def _explain(index: int, h, c: int, p: int, target: int, ht) -> Mismatch:
    """Compare the inference node's upstream inputs with the closest training candidate's."""
    want = Counter(h.upstream_inputs(c))
    best = None
    for q in range(ht.task.size):
        if ht.task.inputs[q] == h.task.inputs[p] and target in ht.task.labels[q]:
            have = Counter(ht.upstream_inputs(ht.node_of_position[q]))
            score = sum(((have - want) + (want - have)).values())
            if best is None or score < best[0]:
                best = (score, q, have)
    if best is None:
        return Mismatch(index, p, h.task.inputs[p], target, None, (), tuple(sorted(want.elements())))
    _, q, have = best
    return Mismatch(index, p, h.task.inputs[p], target, q, tuple(sorted((have - want).elements())),
                    tuple(sorted((want - have).elements())))

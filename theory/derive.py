"""The paper's recipe in one call (issue 25): a task family → each task's Hasse diagram → node
equivalence → the minimal merged task → its verdicts, its layout and the published designs.

:func:`derive` runs every step at one n (concrete, exact): the tasks' labelled Hasse diagrams
(:func:`theory.labelled.task_to_hasse`), the equivalence groups of all their nodes
(:func:`theory.equivalence.group_nodes`), the minimal merged task
(:func:`theory.merge.family_to_merged_task`), its leaks at every depth with witness paths
(:func:`theory.leak.find_leaks`), its coverage, and whether it *serves* every task of the family
(each supervised node of each task has an equivalent merged node with the same label:
:func:`theory.consistency.check_consistency` with the tasks as the inference procedure — true
of a correct merge by construction, so it checks the merge, not the family). With a
:class:`~theory.derivations.Recipe` it also checks that the merge is isomorphic to the recipe's
closed-form layout at this n (:func:`isomorphic`: labelled Hasse diagrams, inputs and labels
kept) and compares each published design: its size, its pairs, its leaks, whether it serves the
family, whether it is the derived design up to the order of positions.

The proofs for every n (Z3) and the export are the command's (:mod:`hasse.cli.derive`); this
module is concrete and imports neither torch nor z3.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from hasse.theory.consistency import ConsistencyReport, check_consistency
from hasse.theory.equivalence import diagrams_isomorphic
from hasse.theory.errors import InputError
from hasse.theory.labelled import LabelledHasse, task_to_hasse
from hasse.theory.leak import LeakReport, find_leaks
from hasse.theory.merge import MergedTask, family_to_merged_task
from hasse.theory.task import Task


def isomorphic(a: Task, b: Task) -> bool:
    """Whether two tasks are the same design up to the order of their positions.

    Their labelled Hasse diagrams (classes of the limit order, each with the multiset of its
    inputs and of its (input, label) pairs) are isomorphic: the same nodes, covers, inputs
    and labels. The sample size must agree too.

    >>> from hasse.theory.catalog import build_family, build_task
    >>> isomorphic(family_to_merged_task(build_family("infill:n=4")).task, build_task("butterfly:n=4"))
    True
    >>> isomorphic(build_task("butterfly:n=4"), build_task("bad_butterfly_crossed:n=4"))
    False
    """
    if a.tokens != b.tokens or a.size != b.size:
        return False
    return diagrams_isomorphic(task_to_hasse(a), task_to_hasse(b))


def pairs(task: Task) -> int:
    """The allowed ``(query, key)`` pairs of the task's dense mask, the diagonal included."""
    return int(task.mask.sum())


@dataclass(frozen=True)
class Comparison:
    """A published design at the family's values, against the derived (merged) task."""

    name: str
    source: str  # where its mask comes from
    spec: str | None  # the catalogue task built; None when it has no form at these values
    task: Task | None
    leaks: LeakReport | None
    serves: ConsistencyReport | None  # does it serve every task of the family?
    same: bool | None  # isomorphic to the merged task
    why_not: str = ""  # why no task was built (spec None or refused)

    @property
    def positions(self) -> int | None:
        return None if self.task is None else self.task.size

    @property
    def pairs(self) -> int | None:
        return None if self.task is None else pairs(self.task)


@dataclass(frozen=True)
class Derivation:
    """Every step of the recipe at one n."""

    family: str  # the family's spec or file
    tasks: tuple[Task, ...]
    diagrams: tuple[LabelledHasse, ...]
    merged: MergedTask
    leaks: LeakReport  # of the merged task, at every depth
    served: ConsistencyReport  # the merged task against the family's own tasks
    layout: str | None = None  # the recipe's closed-form layout at these values
    layout_task: Task | None = None
    layout_same: bool | None = None  # merged ≅ layout (None: no layout)
    comparisons: tuple[Comparison, ...] = ()

    @property
    def task(self) -> Task:
        return self.merged.task

    @property
    def coverage(self) -> Fraction:
        """Distinct targets of the merged task / n."""
        return Fraction(len(self.leaks.targets), self.task.tokens)

    @property
    def task_positions(self) -> int:
        """Σ positions over the family's tasks: the cost of one sequence per task."""
        return sum(t.size for t in self.tasks)


def derive(tasks: Sequence[Task], family: str = "family", recipe=None, values: dict | None = None,
           *, compare: bool = True) -> Derivation:
    """Run the recipe on ``tasks`` (one family); with ``recipe`` and its ``values``, also the layout
    check and the published comparisons (``compare=False`` leaves those out).

    >>> from hasse.theory.catalog import build_family
    >>> from hasse.theory.derivations import recipe_of
    >>> d = derive(build_family("infill:n=4"), "infill:n=4", recipe_of("infill"), {"n": 4})
    >>> d.task.size, d.merged.nodes, d.leaks.leak_free, d.served.consistent, d.layout, d.layout_same
    (10, 10, True, True, 'butterfly:n=4', True)
    """
    from hasse.theory.catalog import build_task

    tasks = tuple(tasks)
    diagrams = tuple(task_to_hasse(t) for t in tasks)
    merged = family_to_merged_task(tasks, name=f"derive({family})")
    leaks = find_leaks(merged.task)
    served = check_consistency(merged.task, tasks)
    layout = layout_task = layout_same = None
    comparisons = []
    if recipe is not None:
        values = dict(values or {})
        layout = recipe.layout(values)
        if layout is not None:
            layout_task = build_task(layout)
            layout_same = isomorphic(merged.task, layout_task)
        if compare:
            for pub in recipe.published:
                comparisons.append(_compare(pub, values, merged.task, tasks))
    return Derivation(family, tasks, diagrams, merged, leaks, served, layout, layout_task, layout_same,
                      tuple(comparisons))


def _compare(pub, values: dict, merged: Task, tasks: Sequence[Task]) -> Comparison:
    from hasse.theory.catalog import build_task

    spec = pub.task(values)
    if spec is None:
        return Comparison(pub.name, pub.source, None, None, None, None, None,
                          "no single task of it at these values")
    try:
        task = build_task(spec)
    except InputError as exc:
        return Comparison(pub.name, pub.source, spec, None, None, None, None, str(exc))
    serves = check_consistency(task, tasks) if task.tokens == merged.tokens else None
    return Comparison(pub.name, pub.source, spec, task, find_leaks(task), serves, isomorphic(task, merged))

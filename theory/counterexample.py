"""The smallest counterexample of a parametric design: the first size ``n`` that breaks it.

A *design* is a recipe for tasks at every size ``n``: a built-in task or bad design
with its other parameters fixed (``bad_block_own_content:block=2``), a built-in
family (``infill``: every task of the family), or ``file.py:make_task`` — a
function of ``n`` returning a task (a :class:`~theory.task.Task` or its JSON
object) or a list of them (:mod:`theory.designs`).

A search makes one pass over ``n = 1, 2, …, max_n`` (:func:`theory.designs.design_sizes`; a design
spec that gives ``n`` itself, ``butterfly:n=4``, is searched at that size only) and
stops at the first ``n`` where, in this order,

1. a task of the design leaks or breaks isolation in the limit (tasks in order; leak
   before isolation);
2. with ``merged``, the design is a family (more than one task) and its merged task
   (``family_to_merged_task``) leaks;
3. with ``inference``, a task of the design is inconsistent with the inference family
   at that ``n`` (e.g. ``block:block=2``: decoding by the block tasks).

Two searches answer these questions and return the same :class:`Counterexample`:
:func:`find_counterexample` here, with the kit's own analysis (``find_leaks``,
``check_consistency``), and ``solvers.z3_counterexample.search_z3``, with Z3 on the
raw rows. :func:`disagreement` compares the two answers.

>>> found = find_counterexample("bad_butterfly_crossed", 4)
>>> found.n, found.property, found.where, found.witness["path"]
(2, 'leak', 'task 0', [1, 0, 3])
>>> find_counterexample("butterfly", 3).n is None
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from hasse.theory.designs import design_builder, design_sizes, inference_builder
from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.errors import InputError
from hasse.theory.leak import Flow, Leak, LeakReport, find_leaks
from hasse.theory.task import Task


@dataclass(frozen=True)
class Counterexample:
    """What one search found: the smallest ``n`` and the property broken there.

    ``n`` is None when nothing breaks up to ``max_n`` (or when the search is
    inconclusive: then ``unknown`` says why).
    """

    method: str  # direct | z3
    design: str
    n: int | None  # the smallest size that breaks it; None if none up to max_n
    property: str | None  # leak | isolation | inconsistency
    where: str | None  # "task i" or "merged task"
    task: Task | None  # the task that breaks
    witness: dict | None  # leak / isolation: position, [target], source, path, depth; inconsistency: the node
    checked: tuple[int, ...]  # sizes checked
    skipped: tuple[tuple[int, str], ...]  # sizes at which the design does not exist, and why
    report: LeakReport | None = None  # direct leak / isolation: the full LeakReport
    mismatches: tuple = ()  # direct inconsistency: every Mismatch
    unknown: str | None = None  # z3: why the search is inconclusive
    solver_calls: int = 0  # z3: how many solver checks ran
    seconds: float = 0.0
    stack: object = None  # searched with a stack (theory.stack): the LayerStack of the task found (or the last built)
    empty_rows: str = LEAK_DEFAULT  # the policy the search read empty rows by

    def to_json(self) -> dict:
        """The answer as JSON (design §7): ``tokens`` (the size that breaks it, null if none), ``property``,
        ``where``, ``checked``, ``skipped``; when one was found, the task's own fields
        (:func:`theory.task_io.task_to_dict`, so the object is a task file ``hasse leak`` reads)
        with ``names``, ``positions`` and, for a leak or isolation, ``leaks``, ``isolation``
        and ``empty_rows``.

        >>> data = find_counterexample("bad_butterfly_crossed", 3).to_json()
        >>> data["tokens"], data["property"], data["labels"], data["leaks"][0]["path"]
        (2, 'leak', [None, None, 0, 1], [1, 0, 3])
        """
        from hasse.theory.inputs.tasks import task_to_dict

        out = {"tokens": self.n, "property": self.property, "where": self.where, "checked": list(self.checked),
               "skipped": [{"tokens": n, "reason": r} for n, r in self.skipped]}
        if self.stack is not None:  # the one shape of a stack in every command's JSON
            from hasse.theory.stack import propagate, stack_ref
            from hasse.theory.stack_leak import apply_stack_policy

            out["stack"] = stack_ref(self.stack, propagate(apply_stack_policy(self.stack, self.empty_rows)[0]))
        if self.task is None:
            return out
        t = self.task
        out.update(task_to_dict(t), names=list(t.names), positions=t.size)
        report = self.leak_report()
        if report is not None:
            out["leaks"] = [x.to_json() for x in report.leaks_within()]  # within --layers, when given
            out["isolation"] = [x.to_json() for x in report.isolation_within()]
            out["empty_rows"] = report.empty_row_report.to_json()
        return out

    def leak_report(self) -> LeakReport | None:
        """The LeakReport of a leak or isolation counterexample.

        The direct search's full report, or a one-witness report built from the Z3
        walk; None for an inconsistency or when nothing was found.
        """
        if self.report is not None or self.property not in ("leak", "isolation"):
            return self.report
        t, w = self.task, self.witness
        leaks, iso = (), ()
        if self.property == "leak":
            leaks = (Leak(w["position"], w["target"], w["source"], tuple(w["path"]), w["depth"]),)
        else:
            iso = (Flow(w["position"], w["source"], tuple(w["path"]), w["depth"]),)
        targets = tuple(sorted({x for ts in t.labels for x in ts}))
        return LeakReport(None, leaks, iso, t.supervised, targets, t.tokens, t.size, ())


def check_max_n(max_n: int) -> None:
    """Raise InputError unless ``max_n >= 1``."""
    if max_n < 1:
        raise InputError(f"max_n must be >= 1, got {max_n}")


def find_counterexample(design: str, max_n: int, *, merged: bool = False, inference: str | None = None,
                        progress: Callable[[int], None] | None = None,
                        empty_rows: str = LEAK_DEFAULT, layers: int | None = None,
                        stack: Callable[[int], object] | None = None) -> Counterexample:
    """The direct search: the first ``n`` at which (1), (2) with ``merged``, or (3) with ``inference`` holds.

    Each size is decided by the kit's analysis: ``find_leaks`` on every task and, with
    ``merged``, on the merged task of a family; ``check_consistency`` with the
    inference family. ``progress(n)`` is called before each size. Empty rows are
    read by the policy ``empty_rows`` (:mod:`theory.empty_rows`; default attend-all).
    With ``layers``, a leak or isolation violation counts only within that many layers.

    With ``stack`` (``positions -> LayerStack``, :mod:`theory.stack`), each task is run
    through the stack built at its number of positions instead of its own mask
    (:func:`theory.stack_leak.find_stack_leaks`), within ``layers`` or, without it, the
    stack's own depth; ``merged`` and ``inference`` are refused with it (they ask about
    the task's one mask). The answer's ``stack`` is the stack of the task found (or of the
    largest size searched). Without ``stack`` a task runs through its own mask at every layer.

    >>> from hasse.theory.inputs.stacks import build_stack
    >>> found = find_counterexample("causal_lm", 4, stack=lambda n: build_stack("causal x2, bidirectional", n))
    >>> found.n, found.witness["depth"], found.witness["hop_layers"], found.stack.depth
    (2, 3, [3], 3)

    Raises
    ------
    InputError : ``max_n < 1``, a design that cannot be built, or a ``file.py``
        design whose function fails.
    """
    import hasse.theory.merge as merge
    from hasse.theory.consistency import check_consistency
    from hasse.theory.stack_leak import find_stack_leaks

    check_max_n(max_n)
    if stack is not None and (merged or inference):
        raise InputError("a stack search checks each task through the stack; merged tasks and inference "
                         "consistency are about one mask")
    start = time.perf_counter()
    build = design_builder(design)
    infer = inference_builder(inference)
    sizes, skipped = design_sizes(design, max_n, build, progress)
    checked: list[int] = []
    through = None  # the stack the last task ran through

    def found(n=None, prop=None, where=None, task=None, witness=None, report=None, mismatches=()):
        return Counterexample("direct", design, n, prop, where, task, witness, tuple(checked), tuple(skipped),
                              report, mismatches, seconds=time.perf_counter() - start, stack=through,
                              empty_rows=empty_rows)

    for n, tasks in sizes:
        checked.append(n)
        for i, task in enumerate(tasks):
            through = stack(task.size) if stack is not None else None
            depth = through.depth if through is not None and layers is None else layers
            report = find_stack_leaks(task, through, depth, empty_rows=empty_rows)
            leaks, isolation = report.leaks_within(), report.isolation_within()
            if leaks or isolation:
                return found(n, "leak" if leaks else "isolation", f"task {i}", task, (leaks or isolation)[0].to_json(),
                             report)
        if merged and len(tasks) > 1:
            merged_task = merge.family_to_merged_task(tasks).task
            report = find_leaks(merged_task, layers, empty_rows=empty_rows)
            if report.leaks_within():
                return found(n, "leak", "merged task", merged_task, report.leaks_within()[0].to_json(), report)
        inference_tasks = infer(n) if infer else None
        if inference_tasks:
            for i, task in enumerate(tasks):
                result = check_consistency(task, inference_tasks)
                if not result.consistent:
                    m = result.mismatches[0]
                    witness = {"inference_task": m.task, "position": m.position, "input": list(m.input),
                               "target": m.target}
                    return found(n, "inconsistency", f"task {i}", task, witness, mismatches=result.mismatches)
    return found()


def disagreement(direct: Counterexample, z3: Counterexample) -> str | None:
    """A loud message when two searches found different things (an inconclusive Z3 search is not a disagreement)."""
    if z3.unknown:
        return None
    a = (direct.n, direct.property, direct.where)
    b = (z3.n, z3.property, z3.where)
    if a != b:
        return (f"METHODS DISAGREE on {direct.design}: direct finds n = {direct.n} ({direct.property}, "
                f"{direct.where}), z3 finds n = {z3.n} ({z3.property}, {z3.where})")
    return None

"""The Z3 search for the smallest counterexample of a design.

``hasse counterexample DESIGN --method z3|both [--inference FAMILY]``. The design's
sizes, the three properties and their order are those of
:mod:`theory.counterexample` (one pass over ``n``, the same
:class:`~theory.counterexample.Counterexample` returned); here each size is decided by
Z3 (:mod:`solvers.smt.leak_walks`, :mod:`solvers.smt.task_maps`, on raw rows, inputs and labels only): a walk in
``A = M ∨ I`` of ``N - 1`` steps from a holder of a target to its supervised position
(or from one isolate group to another) — sat is a leak, decoded into its shortest
path; and for an inference family, an injective cover-exact map of each supervised
inference node's down-set into the training task's diagram with the label at the
root — unsat is an inconsistency. A family's merged task is always checked (2).
"""

from __future__ import annotations

import time
from typing import Callable

from hasse.theory.counterexample import Counterexample, check_max_n
from hasse.theory.designs import design_builder, design_sizes, inference_builder
from hasse.theory.empty_rows import LEAK_DEFAULT, read_task


def search_z3(design: str, max_n: int, *, inference: str | None = None, timeout: float | None = None,
              progress: Callable[[int], None] | None = None, empty_rows: str = LEAK_DEFAULT,
              layers: int | None = None) -> Counterexample:
    """The Z3 search (see the module docstring); ``timeout`` bounds the whole search (then ``unknown``).

    With ``layers``, the walks have at most that many steps (a violation within L layers).

    Each task's rows are read by the empty-row policy first (:func:`theory.empty_rows.read_task`).
    """
    import hasse.theory.merge as merge
    from hasse.solvers.smt.leak_walks import find_leak_or_isolation_walk

    check_max_n(max_n)
    start = time.perf_counter()
    calls = [0]

    def left() -> float | None:
        if timeout is None:
            return None
        remaining = timeout - (time.perf_counter() - start)
        if remaining <= 0:
            raise TimeoutError
        return remaining

    build = design_builder(design)
    infer = inference_builder(inference)
    sizes, skipped = design_sizes(design, max_n, build, progress)
    checked: list[int] = []

    def found(n, prop, where, task, witness, unknown=None):
        return Counterexample("z3", design, n, prop, where, task, witness, tuple(checked), tuple(skipped),
                              unknown=unknown, solver_calls=calls[0], seconds=time.perf_counter() - start)

    try:
        for n, tasks in sizes:
            checked.append(n)
            for i, task in enumerate(tasks):
                task = read_task(task, empty_rows)
                prop, witness, why = find_leak_or_isolation_walk(task, left, calls, layers=layers)
                if why:
                    return found(None, None, None, None, None, f"n = {n}, task {i}: {why}")
                if prop:
                    return found(n, prop, f"task {i}", task, witness)
            if len(tasks) > 1:
                merged = merge.family_to_merged_task(tasks).task
                prop, witness, why = find_leak_or_isolation_walk(merged, left, calls, isolation=False,
                                                                 layers=layers)
                if why:
                    return found(None, None, None, None, None, f"n = {n}, merged task: {why}")
                if prop:
                    return found(n, prop, "merged task", merged, witness)
            inference_tasks = infer(n) if infer else None
            if inference_tasks:
                for i, task in enumerate(tasks):
                    witness, why = _z3_consistency(task, inference_tasks, left, calls)
                    if why:
                        return found(None, None, None, None, None, f"n = {n}, consistency of task {i}: {why}")
                    if witness:
                        return found(n, "inconsistency", f"task {i}", task, witness)
    except TimeoutError:
        return found(None, None, None, None, None, f"timeout after {timeout:g} s")
    return found(None, None, None, None, None)


def _z3_consistency(train, inference_tasks, left, calls):
    """The first supervised inference (node, label) with no equivalent training node: ``(witness, unknown reason)``."""
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.prove import UNKNOWN, UNSAT
    from hasse.solvers.smt.task_maps import find_embedding

    td = task_diagram(train)
    for b, task in enumerate(inference_tasks):
        d = task_diagram(task)
        for c in range(d.size):
            for pair in sorted(d.labels[c]):
                calls[0] += 1
                answer = find_embedding(d, td, root=c, labels=False, root_labels={pair}, timeout=left())
                if answer.status == UNKNOWN:
                    return None, answer.reason
                if answer.status == UNSAT:
                    position = next(p for p in d.members[c] if tuple(task.inputs[p]) == pair[0]
                                    and pair[1] in task.labels[p])
                    return {"inference_task": b, "position": position, "input": list(pair[0]),
                            "target": pair[1]}, None
    return None, None

"""The smallest counterexample of a design, by Z3 and by the direct search, with the same properties.

``hasse counterexample DESIGN --method direct|z3|both [--inference FAMILY]``. A design
builds tasks for every size n (:func:`theory.counterexample.design_builder`: a task or
bad design with its other parameters, a built-in family, ``file.py:function``). For
``n = 1, 2, …`` both searches stop at the first n where, in this order,

1. a task of the design leaks or breaks isolation (tasks in order; leak before isolation);
2. the design is a family (more than one task) and its merged task
   (``family_to_merged_task``) leaks;
3. with ``inference``, a task of the design is inconsistent with the inference family at
   that n (e.g. ``block:block=2``: decoding by the block tasks, KV cache of content only).

Direct: :func:`theory.counterexample.find_counterexample` for (1), then
``find_leaks`` on the merged task and ``check_consistency`` for (2) and (3) at the sizes
before it. Z3 (:mod:`solvers.z3_tasks`, on raw rows, inputs and labels only): a walk in
``A = M ∨ I`` of ``N - 1`` steps from a holder of a target to its supervised position (or from
one isolate group to another) — sat is a leak, decoded into its shortest path; and for
(3) an injective cover-exact map of each supervised inference node's down-set into the
training task's diagram with the label at the root — unsat is an inconsistency.
:func:`disagreement` compares the two answers (n, property, which task).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from hasse.theory.errors import InputError


@dataclass(frozen=True)
class Found:
    """What one search found: the smallest ``n`` and the property broken there (``None``: nothing up to max_n)."""

    method: str  # direct | z3
    design: str
    n: int | None
    property: str | None  # leak | isolation | inconsistency
    where: str | None  # "task i" or "merged task"
    task: object | None  # the task that breaks (a theory.task.Task)
    witness: dict | None  # leak / isolation: position, [target], source, path, depth; inconsistency: the node
    checked: tuple[int, ...]
    skipped: tuple[tuple[int, str], ...]
    report: object | None = None  # direct leak / isolation: the full LeakReport
    mismatches: tuple = ()  # direct inconsistency: every Mismatch
    unknown: str | None = None  # z3: why the search is inconclusive
    solver_calls: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def summary(self) -> dict:
        out = {"method": self.method, "n": self.n, "property": self.property, "where": self.where,
               "checked": list(self.checked), "seconds": round(self.seconds, 4)}
        if self.witness is not None:
            out["witness"] = self.witness
        if self.unknown:
            out["unknown"] = self.unknown
        if self.method == "z3":
            out["solver_calls"] = self.solver_calls
        return out


def _sizes(design: str, max_n: int, build, progress):
    """``(n, tasks)`` for every n at which the design exists; skipped sizes collected in the returned list."""
    from hasse.theory.counterexample import design_sizes

    return design_sizes(design, max_n, build, progress)


def _inference_builder(inference: str | None):
    if inference is None:
        return None
    from hasse.theory.counterexample import design_builder

    build = design_builder(inference)

    def at(n: int):
        try:
            return build(n)
        except InputError:
            return None  # the inference family does not exist at this n

    return at


# ---------------------------------------------------------------- direct


def search_direct(design: str, max_n: int, *, inference: str | None = None,
                  progress: Callable[[int], None] | None = None) -> Found:
    """The direct search: ``find_counterexample`` for (1), then the merged task and consistency before it."""
    import hasse.theory.merge as merge
    from hasse.theory.consistency import check_consistency
    from hasse.theory.counterexample import design_builder, find_counterexample
    from hasse.theory.leak import find_leaks

    start = time.perf_counter()
    base = find_counterexample(design, max_n, progress=progress)
    build = design_builder(design)
    infer = _inference_builder(inference)
    for n in base.checked:
        if base.n is not None and n >= base.n:
            break
        tasks = build(n)
        if len(tasks) > 1:
            merged = merge.family_to_merged_task(tasks).task
            report = find_leaks(merged)
            if report.leaks:
                return Found("direct", design, n, "leak", "merged task", merged, _leak_witness(report.leaks[0]),
                             tuple(m for m in base.checked if m <= n), _skipped_before(base.skipped, n), report,
                             seconds=time.perf_counter() - start)
        inference_tasks = infer(n) if infer else None
        if inference_tasks:
            for i, task in enumerate(tasks):
                result = check_consistency(task, inference_tasks)
                if not result.consistent:
                    m = result.mismatches[0]
                    witness = {"inference_task": m.task, "position": m.position, "input": list(m.input),
                               "target": m.target}
                    return Found("direct", design, n, "inconsistency", f"task {i}", task, witness,
                                 tuple(k for k in base.checked if k <= n), _skipped_before(base.skipped, n),
                                 mismatches=result.mismatches, seconds=time.perf_counter() - start)
    if base.n is None:
        return Found("direct", design, None, None, None, None, None, base.checked, base.skipped,
                     seconds=time.perf_counter() - start)
    tasks = build(base.n)
    index = next(i for i, t in enumerate(tasks) if t is base.task or t == base.task)
    first = (base.report.leaks or base.report.isolation)[0]
    witness = _leak_witness(first) if base.report.leaks else _flow_witness(first)
    return Found("direct", design, base.n, base.property, f"task {index}", base.task, witness, base.checked,
                 base.skipped, base.report, seconds=time.perf_counter() - start)


def _skipped_before(skipped, n):
    return tuple(s for s in skipped if s[0] < n)


def _leak_witness(leak) -> dict:
    return {"position": leak.position, "target": leak.target, "source": leak.source, "path": list(leak.path),
            "depth": leak.depth}


def _flow_witness(flow) -> dict:
    return {"position": flow.position, "source": flow.source, "path": list(flow.path), "depth": flow.depth}


# ---------------------------------------------------------------- z3


def search_z3(design: str, max_n: int, *, inference: str | None = None, timeout: float | None = None,
              progress: Callable[[int], None] | None = None) -> Found:
    """The Z3 search (see the module docstring); ``timeout`` bounds the whole search (then ``unknown``)."""
    import hasse.theory.merge as merge
    from hasse.theory.counterexample import design_builder

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
    infer = _inference_builder(inference)
    sizes, skipped = _sizes(design, max_n, build, progress)
    checked: list[int] = []

    def found(n, prop, where, task, witness, unknown=None):
        return Found("z3", design, n, prop, where, task, witness, tuple(checked), tuple(skipped), unknown=unknown,
                     solver_calls=calls[0], seconds=time.perf_counter() - start)

    try:
        for n, tasks in sizes:
            checked.append(n)
            for i, task in enumerate(tasks):
                prop, witness, why = _z3_task(task, left, calls)
                if why:
                    return found(None, None, None, None, None, f"n = {n}, task {i}: {why}")
                if prop:
                    return found(n, prop, f"task {i}", task, witness)
            if len(tasks) > 1:
                merged = merge.family_to_merged_task(tasks).task
                prop, witness, why = _z3_task(merged, left, calls, isolation=False)
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


def _z3_task(task, left, calls, *, isolation: bool = True):
    """``(property, witness, unknown reason)`` for one task: a leak walk, then isolation walks."""
    from hasse.solvers.z3_tasks import SAT, UNKNOWN, find_flow_path, find_leak_path

    calls[0] += 1
    answer = find_leak_path(task.mask, task.inputs, task.labels, timeout=left())
    if answer.status == UNKNOWN:
        return None, None, answer.reason
    if answer.status == SAT:
        return "leak", answer.value, None
    if isolation:
        for g, group in enumerate(task.isolate):
            others = [p for h, members in enumerate(task.isolate) if h != g for p in members]
            calls[0] += 1
            answer = find_flow_path(task.mask, others, group, timeout=left())
            if answer.status == UNKNOWN:
                return None, None, answer.reason
            if answer.status == SAT:
                return "isolation", answer.value, None
    return None, None, None


def _z3_consistency(train, inference_tasks, left, calls):
    """The first supervised inference (node, label) with no equivalent training node: ``(witness, unknown reason)``."""
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.z3_tasks import UNKNOWN, UNSAT, find_embedding

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


# ---------------------------------------------------------------- both


def disagreement(direct: Found, z3: Found) -> str | None:
    """A loud message when the two searches found different things (an inconclusive Z3 search is not a disagreement)."""
    if z3.unknown:
        return None
    a = (direct.n, direct.property, direct.where)
    b = (z3.n, z3.property, z3.where)
    if a != b:
        return (f"METHODS DISAGREE on {direct.design}: direct finds n = {direct.n} ({direct.property}, "
                f"{direct.where}), z3 finds n = {z3.n} ({z3.property}, {z3.where})")
    return None

"""The smallest counterexample of a parametric design: the first size ``n`` that breaks it.

A *design* is a recipe for tasks at every size ``n``: a built-in task or bad design
with its other parameters fixed (``bad_block_own_content:block=2``), a built-in
family (``infill``: every task of the family), or ``file.py:make_task`` — a
function of ``n`` returning a task (a :class:`~theory.task.Task` or its JSON
object) or a list of them (:func:`design_builder`).

A search makes one pass over ``n = 1, 2, …, max_n`` (:func:`design_sizes`; a design
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

import os
import time
from dataclasses import dataclass
from typing import Callable

from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.errors import InputError, TooLargeError, clip
from hasse.theory.limits import MAX_SEARCH_N, MEMORY_BYTES, number_text
from hasse.theory.leak import Flow, Leak, LeakReport, find_leaks
from hasse.theory.inputs.read import kind_of
from hasse.theory.task import Task
from hasse.theory.inputs.tasks import task_from_dict


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
    stack: object = None  # the LayerStack (theory.stack) the task found was run through, when searched with one

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
        if self.stack is not None:
            out["stack"] = {"spec": self.stack.spec, "depth": self.stack.depth}
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


def _is_file_design(design: str) -> bool:
    return kind_of(design) == "function"


def design_fixes_n(design: str) -> bool:
    """True when a built-in design spec gives ``n`` itself (then the search tries that size only).

    A ``file.py:function`` design never does.

    >>> design_fixes_n("bad_butterfly_crossed:n=3"), design_fixes_n("bad_block_own_content:block=2")
    (True, False)
    """
    if _is_file_design(design):
        return False
    from hasse.theory.catalog import parse_spec

    return "n" in parse_spec(design)[1]


def design_size(design: str | None) -> int | None:
    """The size a built-in design spec fixes (``butterfly:n=4`` -> 4), or None when it leaves ``n`` out.

    >>> design_size("butterfly:n=4"), design_size("bad_block_own_content:block=2"), design_size(None)
    (4, None, None)
    >>> design_size("butterfly:n=four")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: butterfly:n=four: n must be a positive integer, got 'four'
    """
    if design is None:
        return None
    if not design_fixes_n(design):
        return _size_without_n(design)
    from hasse.theory.catalog import parse_spec

    raw = parse_spec(design)[1]["n"]
    if not raw.isdigit() or len(raw) > 9 or int(raw) < 1:  # the length first: no int() of 5,000 digits
        raise InputError(f"n must be a positive integer, got {clip(raw, 40)!r}", design)
    return int(raw)


def _size_without_n(design: str) -> int | None:
    """The size of a built-in design that has no parameter ``n`` (``bad_packed_window:lengths=3+3,window=2``
    fixes 6 by its lengths); None for every other design."""
    if _is_file_design(design):
        return None
    from hasse.theory.catalog import build_spec, get_entry, parse_spec

    name = parse_spec(design)[0]
    for kind in ("task", "family"):
        try:
            entry = get_entry(name, kind)
        except InputError:
            continue
        if entry.param("n") is not None:
            return None
        _, built = build_spec(design, kind)
        tasks = [built] if kind == "task" else list(built)
        return tasks[0].tokens
    return None


def without_n(design: str) -> str:
    """The design spec with its ``n`` left out (``butterfly:n=4`` -> ``butterfly``); other designs unchanged.

    >>> without_n("bad_block_own_content:n=4,block=2"), without_n("butterfly:n=4"), without_n("infill")
    ('bad_block_own_content:block=2', 'butterfly', 'infill')
    """
    if not design_fixes_n(design):
        return design
    from hasse.theory.catalog import parse_spec

    name, raw = parse_spec(design)
    params = ",".join(f"{k}={v}" for k, v in raw.items() if k != "n")
    return name + (f":{params}" if params else "")


def design_builder(design: str) -> Callable[[int], list[Task]]:
    """A function ``n -> tasks`` for a design spec, a family name or ``file.py:function``."""
    if _is_file_design(design):
        head, _, function = design.rpartition(":")
        return _file_builder(head, function, design)
    from hasse.theory.catalog import build_spec, parse_spec, resolve_spec

    name, raw = parse_spec(without_n(design))  # a fixed n is the size to search (design_sizes), not a parameter
    params = ",".join(f"{k}={v}" for k, v in raw.items())
    for kind in ("task", "family"):
        text = f"{name}:n=2" + (f",{params}" if params else "")
        try:
            spec = resolve_spec(text, kind)
        except InputError:
            try:
                spec = resolve_spec(design, kind)
            except InputError:
                continue
        if spec.entry.param("n") is None:  # its size comes from its other parameters (design_size)
            def fixed(n: int, kind=kind) -> list[Task]:
                _, built = build_spec(design, kind)
                return [built] if kind == "task" else list(built)

            return fixed

        def build(n: int, kind=kind) -> list[Task]:
            _, built = build_spec(f"{name}:n={n}" + (f",{params}" if params else ""), kind)
            return [built] if kind == "task" else list(built)

        return build
    resolve_spec(f"{name}:n=2" + (f",{params}" if params else ""))  # raises the clearest error
    raise InputError("this design has no size parameter n", design)


def _file_builder(path: str, function: str, source: str) -> Callable[[int], list[Task]]:
    """``build(n)``: the tasks ``function(n)`` of the file ``path`` makes, each call a bounded run (theory.user_code).

    A design is only ever an argument (the command line's DESIGN, the API's ``design``):
    no data file names one, so it runs with :data:`theory.user_code.ARGUMENT`.
    """
    from hasse.theory.inputs.user_files import import_function
    from hasse.theory.user_code import ARGUMENT, raised, run

    if not os.path.isfile(path):
        raise InputError("no such file", path)
    run(lambda: (import_function(path, function, source, ARGUMENT), None)[1], source=source,
        what=f"importing {os.path.basename(path)}", path=path)  # a missing function: refused before the search

    def make(n: int) -> list[Task]:
        fn = import_function(path, function, source, ARGUMENT)
        try:
            result = fn(n)
        except InputError:
            raise
        except Exception as exc:  # the user's function failed at this size
            raise InputError(raised(f"{function}({n})", exc, path), source) from None
        items = result if isinstance(result, (list, tuple)) else [result]
        tasks = []
        for item in items:
            if isinstance(item, Task):
                tasks.append(item)
            elif isinstance(item, dict):
                tasks.append(task_from_dict(item, f"{source} (n = {n})", os.path.dirname(path)))
            else:
                raise InputError(f"{function}({n}) must return a Task or a task JSON object, "
                                 f"got {type(item).__name__}", source)
        return tasks

    def build(n: int) -> list[Task]:
        return run(lambda: make(n), source=source, what=f"{function}({n})", path=path)

    return build


def design_sizes(design: str, max_n: int, build, progress=None):
    """``(generator of (n, tasks), skipped)`` for ``n = 1 … max_n``, or only the size the design fixes.

    Sizes at which a built-in design does not exist (its builder raises InputError)
    are skipped and collected as ``(n, reason)``; a ``file.py`` design's error is raised.
    """
    skipped: list[tuple[int, str]] = []
    fixed = design_size(design)
    if fixed is None and max_n > MAX_SEARCH_N:  # every size up to max_n is built: about max_n^3 / 3 entries
        raise InputError(f"a search over n = 1 … {number_text(max_n)} builds about n^3 / 3 mask entries in all, "
                         f"more than {MEMORY_BYTES / 1e9:.1f} GB (as a family): search at most n = {MAX_SEARCH_N:,}",
                         design)
    sizes = range(1, max_n + 1) if fixed is None else (fixed,)

    def gen():
        for n in sizes:
            if progress:
                progress(n)
            try:
                tasks = build(n)
            except TooLargeError:  # a size that does not fit is no answer: never "skipped, none found"
                raise
            except InputError as exc:
                if _is_file_design(design):
                    raise
                skipped.append((n, str(exc).split(": ", 1)[-1]))
                continue
            yield n, tasks

    return gen(), skipped


def inference_builder(inference: str | None) -> Callable[[int], list[Task] | None] | None:
    """``n -> tasks`` of an inference family (None at sizes where it does not exist); None without one."""
    if inference is None:
        return None
    build = design_builder(inference)

    def at(n: int) -> list[Task] | None:
        try:
            return build(n)
        except InputError:
            return None  # the inference family does not exist at this n

    return at


def check_max_n(max_n: int) -> None:
    """Raise InputError unless ``max_n >= 1``."""
    if max_n < 1:
        raise InputError(f"max_n must be >= 1, got {max_n}")


def witness_of(violation: Leak | Flow) -> dict:
    """A leak or isolation violation as a witness: position, [target], source, path, depth."""
    return violation.to_json()


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
    the task's one mask). The answer's ``stack`` is the stack of the task found.

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

    check_max_n(max_n)
    if stack is not None and (merged or inference):
        raise InputError("a stack search checks each task through the stack; merged tasks and inference "
                         "consistency are about one mask")
    start = time.perf_counter()
    build = design_builder(design)
    infer = inference_builder(inference)
    sizes, skipped = design_sizes(design, max_n, build, progress)
    checked: list[int] = []
    through = None  # the stack of the task found

    def found(n=None, prop=None, where=None, task=None, witness=None, report=None, mismatches=()):
        return Counterexample("direct", design, n, prop, where, task, witness, tuple(checked), tuple(skipped),
                              report, mismatches, seconds=time.perf_counter() - start, stack=through)

    for n, tasks in sizes:
        checked.append(n)
        for i, task in enumerate(tasks):
            if stack is None:
                report = find_leaks(task, layers, empty_rows=empty_rows)
            else:
                from hasse.theory.stack_leak import find_stack_leaks

                layered = stack(task.size)
                report = find_stack_leaks(task, layered, layered.depth if layers is None else layers,
                                          empty_rows=empty_rows)
            leaks, isolation = report.leaks_within(), report.isolation_within()
            if leaks or isolation:
                first = (leaks or isolation)[0]
                through = layered if stack is not None else None
                return found(n, "leak" if leaks else "isolation", f"task {i}", task, witness_of(first), report)
        if merged and len(tasks) > 1:
            merged_task = merge.family_to_merged_task(tasks).task
            report = find_leaks(merged_task, layers, empty_rows=empty_rows)
            if report.leaks_within():
                return found(n, "leak", "merged task", merged_task, witness_of(report.leaks_within()[0]), report)
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

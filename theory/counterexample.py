"""The smallest counterexample of a parametric design: the first size ``n`` that leaks.

A *design* is a recipe for tasks at every size ``n``: a built-in task or bad design
with its other parameters fixed (``bad_block_own_content:block=2``), a built-in
family (``infill``: every task of the family), or ``file.py:make_task`` — a
function of ``n`` returning a task (a :class:`~theory.task.Task` or its JSON
object) or a list of them. :func:`find_counterexample` tries ``n = 1, 2, …`` and
stops at the first task with a leak or an isolation violation (in the limit).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from hasse.theory.errors import InputError
from hasse.theory.leak import LeakReport, find_leaks
from hasse.theory.task import Task, task_from_dict


@dataclass(frozen=True)
class Counterexample:
    design: str
    n: int | None  # the smallest size that breaks it; None if none up to max_n
    property: str | None  # "leak" or "isolation"
    task: Task | None
    report: LeakReport | None
    checked: tuple[int, ...]  # sizes checked
    skipped: tuple[tuple[int, str], ...]  # sizes at which the design does not exist, and why


def _is_file_design(design: str) -> bool:
    head, sep, _ = design.rpartition(":")
    return bool(sep) and head.endswith(".py")


def design_builder(design: str) -> Callable[[int], list[Task]]:
    """A function ``n -> tasks`` for a design spec, a family name or ``file.py:function``."""
    if _is_file_design(design):
        head, _, function = design.rpartition(":")
        return _file_builder(head, function, design)
    from hasse.theory.catalog import build_spec, parse_spec, resolve_spec

    name, raw = parse_spec(design)
    if "n" in raw:
        raise InputError("leave n out of the design: --max-n sets the sizes to try", design)
    params = ",".join(f"{k}={v}" for k, v in raw.items())
    for kind in ("task", "family"):
        text = f"{name}:n=2" + (f",{params}" if params else "")
        try:
            spec = resolve_spec(text, kind)
        except InputError:
            continue
        if spec.entry.param("n") is None:
            continue

        def build(n: int, kind=kind) -> list[Task]:
            _, built = build_spec(f"{name}:n={n}" + (f",{params}" if params else ""), kind)
            return [built] if kind == "task" else list(built)

        return build
    resolve_spec(f"{name}:n=2" + (f",{params}" if params else ""))  # raises the clearest error
    raise InputError("this design has no size parameter n", design)


def _file_builder(path: str, function: str, source: str) -> Callable[[int], list[Task]]:
    from hasse.theory.mask_mod import import_function

    if not os.path.isfile(path):
        raise InputError("no such file", path)
    fn = import_function(path, function, source)

    def build(n: int) -> list[Task]:
        try:
            result = fn(n)
        except InputError:
            raise
        except Exception as exc:  # the user's function failed at this size
            raise InputError(f"{function}({n}) raised {type(exc).__name__}: {exc}", source) from None
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

    return build


def design_sizes(design: str, max_n: int, build, progress=None):
    """``(generator of (n, tasks), skipped)`` for ``n = 1 … max_n``.

    Sizes at which a built-in design does not exist (its builder raises InputError)
    are skipped and collected as ``(n, reason)``; a ``file.py`` design's error is raised.
    """
    skipped: list[tuple[int, str]] = []

    def gen():
        for n in range(1, max_n + 1):
            if progress:
                progress(n)
            try:
                tasks = build(n)
            except InputError as exc:
                if _is_file_design(design):
                    raise
                skipped.append((n, str(exc).split(": ", 1)[-1]))
                continue
            yield n, tasks

    return gen(), skipped


def find_counterexample(design: str, max_n: int, *, progress: Callable[[int], None] | None = None) -> Counterexample:
    """Try ``n = 1 … max_n`` and return the first task that leaks or breaks isolation."""
    if max_n < 1:
        raise InputError(f"--max-n must be >= 1, got {max_n}")
    build = design_builder(design)
    checked: list[int] = []
    found, skipped = design_sizes(design, max_n, build, progress)
    for n, tasks in found:
        checked.append(n)
        for task in tasks:
            report = find_leaks(task)
            if report.leaks or report.isolation:
                prop = "leak" if report.leaks else "isolation"
                return Counterexample(design, n, prop, task, report, tuple(checked), tuple(skipped))
    return Counterexample(design, None, None, None, None, tuple(checked), tuple(skipped))

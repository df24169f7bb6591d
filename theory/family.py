"""Task families: ``load_family`` reads a built-in family spec or a family JSON file.

A family file is ``{"tokens": n, "tasks": [task, …]}`` (design.md §8); each task
is a task object (its ``tokens`` may be left out and defaults to the family's).
"""

from __future__ import annotations

import os

from hasse.theory.errors import InputError
from hasse.theory.merge import check_family
from hasse.theory.task import Task, read_json, task_from_dict


def load_family(source: str) -> tuple[Task, ...]:
    """The tasks of a family spec (``infill:n=5``) or a family ``.json`` file.

    Empty families, tasks over different token counts and malformed tasks are an
    :class:`InputError` naming the file (and the task index).
    """
    if source.lower().endswith(".json") or os.path.isfile(source):
        data = read_json(source)
        if not isinstance(data, dict) or "tasks" not in data:
            hint = " (this looks like a single task: a family is {\"tokens\": n, \"tasks\": [...]})" \
                if isinstance(data, dict) and "inputs" in data else ""
            raise InputError(f"a family needs a 'tasks' list{hint}", source)
        items = data["tasks"]
        if not isinstance(items, list):
            raise InputError("'tasks' must be a list of task objects", source)
        tokens = data.get("tokens")
        folder = os.path.dirname(source)
        tasks = []
        for i, item in enumerate(items):
            try:
                tasks.append(task_from_dict(item, f"{source}: task {i}", folder, tokens=tokens))
            except InputError as exc:
                raise InputError(str(exc)) from None
        tasks = [t if t.name else _named(t, f"task {i}") for i, t in enumerate(tasks)]
    else:
        from hasse.theory.catalog import build_family

        tasks = list(build_family(source))
    check_family(tasks, source)
    return tuple(tasks)


def _named(task: Task, name: str) -> Task:
    from dataclasses import replace

    return replace(task, name=name)

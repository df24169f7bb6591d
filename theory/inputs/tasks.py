"""Tasks and task families as JSON: reading (``load_task``, ``load_family``) and writing (``task_to_dict``).

A task file is ``{"name": …, "tokens": n, "inputs": [[symbol, pos], …], "labels":
[null | t | [t, …], …], "mask": spec | path | rows, "isolate": [[…], …], "names":
[…]}`` (design.md §8); its ``mask`` is read like a MASK argument
(:func:`theory.inputs.masks.read_grid`, a path relative to the task file's folder). A
family file is ``{"tokens": n, "tasks": [task, …]}``; each task is a task object (its
``tokens`` may be left out and defaults to the family's). A TASK or FAMILY argument
is a file or a built-in spec, as :func:`theory.inputs.forms.form_of` decides; files
are read by :func:`theory.inputs.json_file.read_json`. The task model and its checks are
:mod:`theory.task`. Commands and the API reach these readers through
:func:`theory.inputs.read.read`.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from hasse.theory.catalog import build_family, build_task
from hasse.theory.errors import InputError
from hasse.theory.inputs.json_file import read_json
from hasse.theory.inputs.formats import rows_to_mask
from hasse.theory.mask import NamedMask
from hasse.theory.inputs.calls import split_function
from hasse.theory.inputs.forms import form_of
from hasse.theory.inputs.mask_files import refuse_code_in_json
from hasse.theory.inputs.masks import read_grid
from hasse.theory.inputs.reading import Reading
from hasse.theory.merge import check_family
from hasse.theory.task import Task, make_task
from hasse.theory.tasks.prior_art import causal_lm
from hasse.theory.user_code import TRUSTED


def _mask_field(value, source: str, folder: str, size: int, trust_code: bool = False) -> np.ndarray:
    """The task's mask from its JSON ``mask`` field; ``size`` is the number of positions its ``inputs`` fix.

    A ``file.py:function`` (or factory call) is refused unless ``trust_code``; then it
    is read relative to ``folder`` and evaluated on ``size`` positions.
    """
    if isinstance(value, list):
        return rows_to_mask(value, source=source)
    if isinstance(value, str):
        code = split_function(value)
        if not trust_code:
            refuse_code_in_json(value, source)
        candidate = os.path.join(folder, value)
        try:
            if code is not None:
                path, function = code
                reading = Reading(n=size, code=TRUSTED if trust_code else None)  # a data file: only --trust-code
                return read_grid(f"{os.path.join(folder, path)}:{function}", reading)[0].matrix
            reading = Reading(n=size if trust_code else None, trust_code=trust_code)
            return read_grid(candidate if os.path.exists(candidate) else value, reading)[0].matrix
        except InputError as exc:
            raise exc.within("'mask': ", source) from None
    raise InputError(f"'mask' must be a spec, a file path or a list of 0/1 rows, got {type(value).__name__}", source)


TASK_FIELDS = frozenset({"name", "tokens", "inputs", "labels", "mask", "isolate", "names"})
# The report fields that `hasse counterexample --json`, `hasse flow --json` and `hasse merge --json`
# write beside the task fields (design §7): a task reader accepts and ignores them, so those
# outputs are task files; any other unknown field is still an error (a typo in a hand-written file).
REPORT_FIELDS = frozenset({
    "command", "version", "input", "spec", "positions", "layers", "empty_rows", "key_only", "heads",
    # counterexample
    "property", "where", "checked", "skipped", "leaks", "isolation", "method", "methods", "agree", "inference",
    "mismatches",
    # flow
    "from", "to", "flow_free", "flows", "flows_beyond_layers",
    # --stack (leak, flow, counterexample): the stack the task was run through; read past, give --stack again
    "stack", "flow_free_in_limit",
    # merge
    "family", "tasks", "task_nodes", "groups", "nodes", "node_of_position", "hasse_edges", "mapping", "copies",
    "minimum", "exact_isomorphism_tests", "formulas", "formulas_hold", "sparse",
})


def task_from_dict(data, source: str, folder: str = "", tokens: int | None = None, *,
                   trust_code: bool = False) -> Task:
    """Build a task from its JSON object (§8). ``tokens`` is the family's sample size, if any.

    ``trust_code``: a ``mask`` naming ``file.py:function`` runs it on as many positions
    as ``inputs`` lists (default: refused).
    """
    if not isinstance(data, dict):
        raise InputError(f"a task must be a JSON object, got {type(data).__name__}", source)
    unknown = set(data) - TASK_FIELDS - REPORT_FIELDS  # a command's report fields are read past (design §7)
    if unknown:
        raise InputError(f"unknown task field(s): {', '.join(sorted(unknown))}", source)
    for key in ("inputs", "labels", "mask"):
        if key not in data:
            raise InputError(f"a task needs '{key}'", source)
    n = data.get("tokens", tokens)
    if n is None:
        raise InputError("a task needs 'tokens' (the sample size n)", source)
    if tokens is not None and n != tokens:
        raise InputError(f"task has tokens = {n} but its family has tokens = {tokens}", source)
    if not isinstance(data["inputs"], list) or not isinstance(data["labels"], list):
        raise InputError("'inputs' and 'labels' must be lists", source)
    mask = _mask_field(data["mask"], source, folder, len(data["inputs"]), trust_code)
    return make_task(n, data["inputs"], data["labels"], mask, isolate=data.get("isolate", ()),
                     name=str(data.get("name", "")), names=data.get("names"), source=source)


def task_to_dict(task: Task) -> dict:
    """The JSON object of a task (mask as rows of 0/1), readable by :func:`task_from_dict`."""
    out = {
        "name": task.name,
        "tokens": task.tokens,
        "inputs": [[s, pos] for s, pos in task.inputs],
        "labels": [None if not ts else (ts[0] if len(ts) == 1 else list(ts)) for ts in task.labels],
        "mask": task.mask.astype(int).tolist(),
    }
    if task.isolate:
        out["isolate"] = [list(g) for g in task.isolate]
    if task.names and task.names != tuple(str(p) for p in range(task.size)):
        out["names"] = list(task.names)
    return out


def load_task(source: str, *, trust_code: bool = False) -> Task:
    """A task from a built-in spec (``butterfly:n=4``, ``infill:n=5,k=2``) or a ``.json`` file.

    ``trust_code`` lets a task file's ``mask`` name a mask_mod to run (``--trust-code``).
    """
    if form_of(source) == "file":
        data = read_json(source)
        if isinstance(data, dict) and "tasks" in data and "inputs" not in data:
            raise InputError("this is a task family (it has 'tasks'); give a single task", source)
        return task_from_dict(data, source, os.path.dirname(source), trust_code=trust_code)
    return build_task(source)


def next_token_task(mask: NamedMask) -> Task:
    """The task a bare mask is checked as: next-token prediction, the catalogue's ``causal_lm`` under ``mask``.

    Position ``q`` holds ``x_q`` at position id ``q`` and is supervised with ``x_{q+1}``
    (``q < n-1``); the mask replaces the causal one.

    >>> import numpy as np
    >>> t = next_token_task(NamedMask(np.ones((2, 2), dtype=bool), ("0", "1"), "bidirectional:n=2"))
    >>> t.name, t.inputs, t.labels
    ('bidirectional:n=2', (('x0', 0), ('x1', 1)), ((1,), ()))
    """
    lm = causal_lm(mask.n)
    task = make_task(lm.tokens, lm.inputs, [list(t) or None for t in lm.labels], mask.matrix, name=mask.spec,
                     names=mask.names)
    if mask.key_only:  # a KV cache or a memory: never read as empty rows, named by the report
        task = replace(task, key_only=tuple(mask.key_only), key_only_kind=mask.key_only_kind)
    return task


def load_family(source: str, *, trust_code: bool = False) -> tuple[Task, ...]:
    """The tasks of a family spec (``infill:n=5``) or a family ``.json`` file.

    Empty families, tasks over different token counts and malformed tasks are an
    :class:`InputError` naming the file (and the task index).
    """
    if form_of(source) == "file":
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
                tasks.append(task_from_dict(item, f"{source}: task {i}", folder, tokens=tokens, trust_code=trust_code))
            except InputError as exc:
                raise InputError(exc.template, param=exc.param) from None
        tasks = [t if t.name else _named(t, f"task {i}") for i, t in enumerate(tasks)]
    else:
        tasks = list(build_family(source))
    check_family(tasks, source)
    return tuple(tasks)


def _named(task: Task, name: str) -> Task:
    return replace(task, name=name)

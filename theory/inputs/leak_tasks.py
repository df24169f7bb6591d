"""A TASK|MASK read for a leak check: the task, or a mask read as next-token prediction, one task per batch row.

What ``hasse leak TASK|MASK`` and :func:`hasse.find_leaks` check (:func:`load_leak_subject`).
"""

from __future__ import annotations

from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.errors import InputError
from hasse.theory.inputs.read import Reading, read
from hasse.theory.mask import NamedMask
from hasse.theory.task import Task


def load_leak_subject(source, reading: Reading = Reading(), *,
                      empty_rows: str = LEAK_DEFAULT) -> tuple[list[Task], bool, list]:
    """``(tasks, bare, found)``: the TASK argument, or a MASK read as next-token prediction (``bare`` True).

    ``source`` is read once (:func:`theory.inputs.read.read`, as a task or else a mask).
    A MASK gives one task per batch row (each row's layer is the union over its heads,
    each head's empty rows read by ``empty_rows`` first: :meth:`theory.heads.HeadMasks.layer`);
    ``found[b]`` is batch row ``b``'s :class:`~theory.empty_rows.EmptyRows` (every query
    empty in some head: the layer the task holds may have none left), None where the
    task's own mask shows them (a task, one mask).

    A task (spec, ``.json`` with ``inputs``, a :class:`~theory.task.Task`) has its number
    of positions compared with ``reading.n``; a task with nothing to check (no supervised
    position and no isolate group) is refused. A MASK (``--n`` for a mask_mod; an array, a
    tensor, a ``BlockMask`` or a NamedMask from the API) is checked as
    :func:`theory.inputs.tasks.next_token_task`.
    """
    from hasse.theory.inputs.tasks import next_token_task

    subject = read(source, reading, accept=("task", "mask"))
    if subject.kind == "task":
        task, n = subject.task, reading.n
        label = source if isinstance(source, str) else task.name or None
        if n is not None and n != task.size:
            raise InputError(f"{{n = {n}}} was given but the task has {task.size} positions", label, param="n")
        if reading.heads is not None or reading.batch is not None:
            raise InputError("{heads} and {batch} apply to a MASK (a task file has one mask)", label, param="heads")
        if not task.supervised and not task.isolate:  # design §10: refused, not a vacuous LEAK-FREE
            raise InputError("nothing to check: no position is supervised (every label is null) and there is no "
                             "isolate group", label)
        return [task], False, [None]
    named, grid = subject.mask, subject.grid
    if grid.masks.shape[:2] == (1, 1):
        return [next_token_task(named)], True, [None]
    tasks, found = [], []
    label = source if isinstance(source, str) else named.spec
    for b in range(grid.batch_rows):
        layer, rows = grid.layer(b, empty_rows, label)
        spec = named.spec if grid.batch_rows == 1 else f"{named.spec} [batch row {b} of {grid.batch_rows}]"
        row = NamedMask(layer, named.names, spec, named.key_only, named.key_only_kind)
        tasks.append(next_token_task(row))
        found.append(rows)
    return tasks, True, found

"""Designs: recipes for tasks at every size ``n`` (what ``hasse counterexample`` searches).

A design is a built-in task or bad design with its other parameters fixed
(``bad_block_own_content:block=2``), a built-in family (``infill``: every task of the
family), or ``file.py:make_task`` — a function of ``n`` returning a task (a
:class:`~theory.task.Task` or its JSON object) or a list of them, each call a bounded
run (:mod:`theory.user_code`). A design spec that gives ``n`` itself
(``butterfly:n=4``) fixes the one size searched (:func:`design_sizes`).
"""

from __future__ import annotations

import os
from typing import Callable

from hasse.theory.errors import InputError, TooLargeError, clip
from hasse.theory.inputs.read import kind_of
from hasse.theory.inputs.tasks import task_from_dict
from hasse.theory.limits import MAX_SEARCH_N, MEMORY_BYTES, number_text
from hasse.theory.task import Task


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

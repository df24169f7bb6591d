"""The checks of the task-level theorems: outcomes, families, leak checks and time limits they share.

Outcomes (:func:`proved_outcome`, :func:`refuted_outcome`, :func:`z3_unknown`; the verdicts
are those of :mod:`proofs.theorem`), the families the merge
theorems check (:func:`families_at`), and leak checks by the kit (:func:`kit_leak`) and
by Z3 on raw rows (:func:`z3_leak`), both returning the same JSON-able violation.

Time limits: :func:`deadline` turns ``ctx`` into a callable that raises
``TimeoutError`` once the check's time is spent (``run_theorem`` reports that as
``unknown``); :func:`solver_time` is the time left for the next Z3 call.
"""

from __future__ import annotations

from typing import Callable

from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome


def deadline(ctx: Context) -> Callable[[], None]:
    """A callable that raises ``TimeoutError`` once the check's time is spent."""
    def check() -> None:
        if ctx.expired():
            raise TimeoutError(f"after {ctx.timeout:g} s")

    return check


def solver_time(ctx: Context) -> float | None:
    """Seconds left for the next solver call (``None``: no limit); raises ``TimeoutError`` when none is left."""
    left = ctx.remaining()
    if left is not None and left <= 0:
        raise TimeoutError(f"after {ctx.timeout:g} s")
    return left


def report(ctx: Context, done: int, total: int) -> None:
    """Progress ``done`` of ``total``, if the caller asked for it."""
    if ctx.progress is not None:
        ctx.progress(done, total)


def z3_unknown(answer, checked: int, what: str) -> Outcome:
    """The solver said unknown: never proved."""
    return Outcome(UNKNOWN, checked, reason=f"Z3 returned unknown on {what} ({answer.reason})")


def proved_outcome(checked: int, **details) -> Outcome:
    """Proved after ``checked`` objects (or solver calls), with method-specific ``details``.

    >>> proved_outcome(3, families=3).verdict
    'proved'
    """
    return Outcome(PROVED, checked, details=details)


def refuted_outcome(checked: int, counterexample, **details) -> Outcome:
    """Refuted by ``counterexample`` (JSON-able) after ``checked`` objects."""
    return Outcome(REFUTED, checked, counterexample=counterexample, details=details)


def task_json(task) -> dict:
    """A task as its JSON object (mask rows of 0/1), with its position names."""
    from hasse.theory.inputs.tasks import task_to_dict

    out = task_to_dict(task)
    out["names"] = list(task.names)
    return out


RANDOM_FAMILIES = 8  # seeded random families merge_is_minimum adds beyond the exhaustive class


def families_at(n: int, *, with_random: bool = False) -> list[tuple[str, tuple]]:
    """The families the merge theorems check at ``n``: the built-in families on n tokens, then every
    family of :func:`solvers.task_sets.small_families` with n nodes in all (then seeded random ones)."""
    from hasse.solvers.task_sets import builtin_families, random_families, small_families

    out = builtin_families(n) + list(small_families(n))
    if with_random:
        out += random_families(n, RANDOM_FAMILIES)
    return out


def family_space(n: int, *, with_random: bool = False) -> int:
    """How many families :func:`families_at` must list at ``n``, counted without the generators
    (:mod:`solvers.class_sizes`: built-in families from the divisors of n, the exhaustive class by
    Burnside's lemma and a recurrence, plus the random sample).

    >>> [family_space(n) for n in range(1, 5)]
    [4, 16, 73, 476]
    """
    from hasse.solvers import class_sizes

    return class_sizes.builtin_families(n) + class_sizes.small_families(n) + (RANDOM_FAMILIES if with_random else 0)


def named_path(task, path) -> list[str]:
    """Positions of a path with their names: ``["x0 (0)", "P1 (3)"]``."""
    return [f"{task.names[p]} ({p})" for p in path]


def kit_leak(task) -> dict | None:
    """The first leak or isolation violation ``theory.leak.find_leaks`` reports in the limit (None: leak-free)."""
    import hasse.theory.leak as leak

    found = leak.find_leaks(task)
    first = (found.leaks or found.isolation or (None,))[0]
    if first is None:
        return None
    return {"property": "leak" if found.leaks else "isolation", "position": first.position,
            "source": first.source, "path": named_path(task, first.path), "depth": first.depth,
            **({"target": first.target} if found.leaks else {}), "leaks": len(found.leaks)}


def z3_leak(task, ctx):
    """``(None, None)`` when Z3 proves the task clean (no leak walk, no isolation walk);
    ``(violation, None)`` when it finds one; ``(None, answer)`` when the solver says unknown."""
    from hasse.solvers.smt.leak_walks import find_leak_or_isolation_walk
    from hasse.solvers.smt.prove import UNKNOWN as SOLVER_UNKNOWN, Answer

    prop, found, why = find_leak_or_isolation_walk(task, lambda: solver_time(ctx), [0])
    if why is not None:
        return None, Answer(SOLVER_UNKNOWN, reason=why)
    if prop is None:
        return None, None
    return {"property": prop, **found, "path": named_path(task, found["path"])}, None

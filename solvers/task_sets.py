"""The task families the task-level theorems quantify over at size ``n``.

- :func:`builtin_families` — the families of design.md §4 on ``n`` tokens: ``ar`` (``n >= 2``),
  ``block`` for every block size dividing ``n`` (``chain``, and ``clique`` where it differs,
  ``l >= 2``) and ``infill``;
- :func:`small_families` — the exhaustive class: every family (an ordered list of tasks,
  each a labelled Hasse diagram over a 2-symbol alphabet up to isomorphism) with ``n``
  nodes in all, as tasks (:func:`solvers.dags.dag_to_task`);
- :func:`random_families` — a seeded sample of larger families (two or three tasks of up to
  ``n`` nodes each, three symbols), beyond what the exhaustive class reaches.

Counts of the exhaustive class for n = 1 … 5: 2, 11, 68, 469, 3640 (any number of tasks);
:func:`count_problems` checks the generators against a second count at run time.
"""

from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np

from hasse.solvers.dags import ALPHABET, Lower, dag_to_task, hasse_shapes, labelled_dags
from hasse.theory.deadline import tick


def block_specs(n: int) -> list[str]:
    """``block:n=…,block=l,variant=v`` for every ``l`` dividing ``n`` (``clique`` where it differs: ``l >= 2``)."""
    out = []
    for block in range(1, n + 1):
        if n % block == 0:
            for variant in ("chain", "clique") if block >= 2 else ("chain",):
                out.append(f"block:n={n},block={block},variant={variant}")
    return out


def builtin_families(n: int) -> list[tuple[str, tuple]]:
    """``(spec, tasks)`` for every built-in family on ``n`` tokens."""
    from hasse.theory.catalog import build_family

    specs = ([f"ar:n={n}"] if n >= 2 else []) + block_specs(n) + [f"infill:n={n}"]
    return [(spec, tuple(build_family(spec))) for spec in specs]


def compositions(n: int) -> Iterator[tuple[int, ...]]:
    """Every ordered way to write ``n`` as a sum of positive integers."""
    if n == 0:
        yield ()
        return
    for first in range(1, n + 1):
        for rest in compositions(n - first):
            yield (first, *rest)


def small_family_diagrams(n: int) -> Iterator[tuple[tuple[Lower, tuple[str, ...]], ...]]:
    """Every family of labelled Hasse diagrams (2 symbols, each up to isomorphism) with ``n`` nodes in all."""
    for sizes in compositions(n):
        yield from itertools.product(*(labelled_dags(k, ALPHABET) for k in sizes))


def small_families(n: int) -> Iterator[tuple[str, tuple]]:
    """``(description, tasks)`` for every family of :func:`small_family_diagrams`."""
    for family in small_family_diagrams(n):
        tick()  # generation honours the time limit (theory.deadline)
        text = " + ".join(f"{''.join(labels)}{[list(low) for low in lower]}" for lower, labels in family)
        yield text, tuple(dag_to_task(lower, labels) for lower, labels in family)


def small_family_count(n: int) -> int:
    """How many families :func:`small_families` lists, counted without :func:`compositions`.

    A family of ``n`` nodes is a first task of ``k`` nodes and a family of ``n - k``:
    ``F(0) = 1``, ``F(m) = sum_(k=1..m) c_k F(m - k)`` with ``c_k`` the labelled diagrams of size ``k``.

    >>> [small_family_count(n) for n in range(1, 5)]
    [2, 11, 68, 469]
    """
    counts = [0] + [len(labelled_dags(k, ALPHABET)) for k in range(1, n + 1)]
    families = [1]
    for m in range(1, n + 1):
        families.append(sum(counts[k] * families[m - k] for k in range(1, m + 1)))
    return families[n]


KNOWN_FAMILY_COUNTS = (2, 11, 68, 469, 3640)  # small_family_count(1 … 5), written out: a changed enumeration differs


def count_problems(n: int) -> list[str]:
    """What is wrong with the generators' counts at size ``n`` (empty when every count checks out).

    :func:`compositions` lists ``2^(n-1)`` distinct compositions of ``n`` (closed form);
    :func:`small_family_diagrams` lists :func:`small_family_count` families (a second
    enumeration, by recurrence), which matches :data:`KNOWN_FAMILY_COUNTS` where known.

    >>> count_problems(4)
    []
    """
    out = []
    parts = list(compositions(n))
    if len(parts) != 2 ** (n - 1) or len(set(parts)) != len(parts) or any(
            sum(p) != n or min(p, default=1) < 1 for p in parts):
        out.append(f"compositions({n}) lists {len(parts)} (distinct: {len(set(parts))}), expected 2^(n-1) = "
                   f"{2 ** (n - 1)} distinct compositions of {n}")
    expected = small_family_count(n)
    if n <= len(KNOWN_FAMILY_COUNTS) and expected != KNOWN_FAMILY_COUNTS[n - 1]:
        out.append(f"small_family_count({n}) = {expected}, the known count is {KNOWN_FAMILY_COUNTS[n - 1]}")
    listed = sum(1 for _ in small_family_diagrams(n))
    if listed != expected:
        out.append(f"small_family_diagrams({n}) lists {listed} families, small_family_count({n}) = {expected}")
    return out


def random_families(n: int, count: int = 8, seed: int = 0) -> list[tuple[str, tuple]]:
    """``count`` seeded random families of two or three tasks, each a random labelled Hasse diagram on 1 … n nodes.

    Symbols ``a`` (``x0``), ``b`` (``[MASK]`` predicting 1) and a third, ``c`` (``x1`` at pos 1),
    so families mix three inputs. The same ``(n, count, seed)`` always gives the same families.
    """
    from hasse.theory.task import make_task

    rng = np.random.default_rng([seed, n])
    inputs = {"a": ("x0", 0), "b": ("[MASK]", 1), "c": ("x1", 1)}
    labels = {"a": None, "b": 1, "c": None}
    out = []
    for f in range(count):
        tasks = []
        for _ in range(int(rng.integers(2, 4))):
            k = int(rng.integers(1, n + 1))
            shapes = hasse_shapes(k)
            lower = shapes[int(rng.integers(len(shapes)))]
            symbols = "".join(rng.choice(list("abc"), size=k))
            mask = dag_to_task(lower, "a" * k).mask
            tasks.append(make_task(2, [inputs[s] for s in symbols], [labels[s] for s in symbols], mask,
                                   name=f"{symbols}{[list(low) for low in lower]}"))
        out.append((f"random family {f} (n={n}, seed={seed}): " + " + ".join(t.name for t in tasks), tuple(tasks)))
    return out

"""Leaks and isolation violations as walks in ``A = M ∨ I`` (Z3, on a task's raw rows, inputs and labels).

A leak (design.md §3) is a path from a position holding the content of a supervised
position's target to that position; with the residual a walk may stutter, so a walk of
exactly ``N - 1`` steps exists iff a path of any length does. The encodings read only
the mask rows, the input symbols and the labels — never ``theory.leak``:

- :func:`encode_walk` — one-hot ``at[d][v]``, each step an edge of ``A = M ∨ I``;
- :func:`encode_leak_end` — the walk ends at a supervised ``p`` and starts at a holder
  of one of its targets;
- :func:`find_leak_path` — sat: the leak with its shortest path; unsat: leak-free at every depth;
- :func:`find_flow_path` — a walk from one set of positions to another (isolation);
- :func:`find_leak_or_isolation_walk` — the leak walk, then one isolation walk per
  isolate group: the one check of a task that the proofs and the counterexample
  search share.

>>> import numpy as np
>>> inputs, labels = [("x0", 0), ("x1", 1), ("x2", 2)], [None, [2], None]  # position 1 predicts token 2
>>> find_leak_path(np.tril(np.ones((3, 3), dtype=bool), -1), inputs, labels).status  # causal
'unsat'
>>> find_leak_path(np.ones((3, 3), dtype=bool), inputs, labels).value  # bidirectional: 1 reads x2
{'position': 1, 'target': 2, 'source': 2, 'path': [2, 1], 'depth': 1}
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import z3

from hasse.solvers.smt.prove import SAT, UNKNOWN, Answer, check


def sources_of(symbol: str) -> frozenset[int]:
    """The sample tokens whose content an input symbol holds (``x3`` -> {3}, ``agg(x1,x3)`` -> {1, 3})."""
    return frozenset(int(i) for i in re.findall(r"x(\d+)", symbol))


def encode_walk(solver, mask: np.ndarray, steps: int) -> list[list]:
    """One-hot ``at[d][v]``: a walk ``v_0 … v_steps``, each step an edge of ``A = M ∨ I`` (staying = residual)."""
    n = mask.shape[0]
    at = [[z3.Bool(f"at_{d}_{v}") for v in range(n)] for d in range(steps + 1)]
    for row in at:
        solver.add(z3.PbEq([(x, 1) for x in row], 1))
    for d in range(steps):
        for v in range(n):
            keys = [u for u in range(n) if u == v or mask[v, u]]
            solver.add(z3.Implies(at[d + 1][v], z3.Or([at[d][u] for u in keys])))
    return at


def encode_leak_end(solver, at: list[list], pairs: Sequence[tuple[int, int]], holders: dict[int, list[int]]) -> dict:
    """The walk ends at a supervised ``p`` and starts at a holder of one of ``p``'s targets ``t``."""
    choose = {(p, t): z3.Bool(f"leak_{p}_{t}") for p, t in pairs}
    solver.add(z3.PbEq([(x, 1) for x in choose.values()], 1) if choose else z3.BoolVal(False))
    for (p, t), x in choose.items():
        solver.add(z3.Implies(x, z3.And(at[-1][p], z3.Or([at[0][j] for j in holders.get(t, [])]))))
    return choose


def find_leak_path(mask, inputs, labels, *, steps: int | None = None, shortest: bool = True,
                   timeout: float | None = None) -> Answer:
    """A leak as a walk in the raw rows: sat with ``{"position", "target", "source", "path", "depth"}``.

    ``steps`` defaults to ``N - 1``: a walk of any length contains a simple path with at
    most ``N - 1`` hops, and the residual lets a walk stutter, so unsat at ``N - 1``
    means no leak at any depth. With ``shortest``, a sat answer is re-solved for
    ``L = 0, 1, …`` to report the smallest depth.
    """
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    holders: dict[int, list[int]] = {}
    for j, (symbol, _) in enumerate(inputs):
        for t in sources_of(symbol):
            holders.setdefault(t, []).append(j)
    pairs = [(p, int(t)) for p, ts in enumerate(labels) for t in (ts or ())]
    bound = n - 1 if steps is None else steps
    answer = _walk(mask, pairs, holders, bound, timeout)
    if answer.status != SAT or not shortest:
        return answer
    for length in range(bound):
        shorter = _walk(mask, pairs, holders, length, timeout)
        if shorter.status == SAT:
            return shorter
    return answer


def _walk(mask, pairs, holders, steps: int, timeout) -> Answer:
    solver = z3.Solver()
    at = encode_walk(solver, mask, steps)
    choose = encode_leak_end(solver, at, pairs, holders)

    def decode(model) -> dict:
        walk = [next(v for v, x in enumerate(row) if z3.is_true(model.eval(x, model_completion=True))) for row in at]
        path = [walk[0]]
        for v in walk[1:]:
            if v != path[-1]:
                path.append(v)
        p, t = next(k for k, x in choose.items() if z3.is_true(model.eval(x, model_completion=True)))
        return {"position": p, "target": t, "source": path[0], "path": path, "depth": len(path) - 1}

    return check(solver, timeout, decode)


def find_flow_path(mask, sources: Sequence[int], sinks: Sequence[int], *, timeout: float | None = None,
                   steps: int | None = None) -> Answer:
    """A walk from a position of ``sources`` to one of ``sinks`` (isolation violations): sat with its path.

    ``steps`` bounds the walk (a model of that many layers); default ``N - 1`` (any depth).
    """
    mask = np.asarray(mask, dtype=bool)
    holders = {0: sorted(set(sources))}
    pairs = [(p, 0) for p in sorted(set(sinks))]
    bound = mask.shape[0] - 1 if steps is None else min(steps, mask.shape[0] - 1)
    answer = _walk(mask, pairs, holders, bound, timeout)
    if answer.status == SAT:
        value = dict(answer.value)
        del value["target"]
        return Answer(SAT, value)
    return answer


def find_leak_or_isolation_walk(task, left, calls: list[int], *, isolation: bool = True, layers: int | None = None):
    """``(property, witness, unknown reason)`` for one task: a leak walk, then isolation walks.

    ``task`` has ``mask``, ``inputs``, ``labels`` and ``isolate`` (a ``theory.task.Task``).
    ``property`` is ``"leak"`` or ``"isolation"`` with its ``witness`` (the value of
    :func:`find_leak_path` / :func:`find_flow_path`), or ``None`` when the task is clean
    (``isolation=False``: only the leak walk). ``left()`` gives the seconds for the next
    solver call (it may raise ``TimeoutError``); ``calls[0]`` counts the solver calls.
    A solver ``unknown`` ends the search with its reason. ``layers`` bounds the walks
    (a violation within that many layers); default: any depth.
    """
    steps = None if layers is None else min(layers, task.mask.shape[0] - 1)
    calls[0] += 1
    answer = find_leak_path(task.mask, task.inputs, task.labels, timeout=left(), steps=steps)
    if answer.status == UNKNOWN:
        return None, None, answer.reason
    if answer.status == SAT:
        return "leak", answer.value, None
    if isolation:
        for g, group in enumerate(task.isolate):
            others = [p for h, members in enumerate(task.isolate) if h != g for p in members]
            calls[0] += 1
            answer = find_flow_path(task.mask, others, group, timeout=left(), steps=steps)
            if answer.status == UNKNOWN:
                return None, None, answer.reason
            if answer.status == SAT:
                return "isolation", answer.value, None
    return None, None, None

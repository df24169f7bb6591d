"""Leaks, isolation and forbidden flows through a stack of different masks per layer.

The same questions as :mod:`theory.leak`, asked of a :class:`~theory.stack.LayerStack`:
a supervised position ``p`` with target ``t`` leaks after ``L`` layers iff some ``j``
whose content holds ``t`` has ``R(L)[p, j]``. Each violation carries the number of
layers after which it first appears (``depth``, the first-arrival ``F[p, j]``) and a
witness path whose every hop names its layer (``hop_layers``, increasing). With one mask
at every layer the depth is the hop count; in a stack it can be larger (a hop may wait
for a layer that has the edge). Violations are found in the limit of the repeated stack;
:meth:`LeakReport.leaks_within` keeps those of a model with ``L`` layers.

A single mask is the one-layer stack, repeated: ``stack=None`` (:func:`find_stack_leaks`)
or an ``(n, n)`` layer (:func:`find_stack_flows`) asks the same questions of one mask at
every layer, answered by :mod:`theory.leak`'s hop-count search (depth = hops, no
first-arrival matrix). A forbidden flow is exactly a leak of :func:`flow_task`.

Empty rows are read per layer by the policy (:mod:`theory.empty_rows`), as for one mask.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

import numpy as np

from hasse.theory.empty_rows import LEAK_DEFAULT, EmptyRows, apply_empty_row_policy
from hasse.theory.leak import Flow, Leak, LeakReport, find_flows, find_leaks
from hasse.theory.stack import LayerStack, StackFlow, propagate


def apply_stack_policy(stack: LayerStack, policy: str = LEAK_DEFAULT, key_only=()) -> tuple[LayerStack, tuple[int, ...]]:
    """The stack with each layer's empty rows read by ``policy``, and the rows empty in some layer."""
    done: dict[int, np.ndarray] = {}
    rows: set[int] = set()
    layers = []
    for i, layer in enumerate(stack.layers):
        if id(layer.mask) not in done:
            mask, found = apply_empty_row_policy(layer.mask, policy, f"layer {i + 1} ({layer.spec})",
                                                 key_only=tuple(key_only))
            done[id(layer.mask)] = mask
            rows.update(found.rows)
        layers.append(replace(layer, mask=done[id(layer.mask)]) if done[id(layer.mask)] is not layer.mask else layer)
    return LayerStack(tuple(layers), stack.spec, stack.note), tuple(sorted(rows))


def _nearest(flow: StackFlow, p: int, candidates: Iterable[int] | np.ndarray) -> int | None:
    """The candidate ``p`` sees first (fewest layers, then smallest position); None if none ever."""
    cands = candidates if isinstance(candidates, np.ndarray) else np.fromiter(candidates, dtype=np.int64)
    if cands.size == 0:
        return None
    f = flow.first[p, cands]
    seen = f >= 0
    if not seen.any():
        return None
    order = np.lexsort((cands[seen], f[seen]))
    return int(cands[seen][order[0]])


def _path(flow: StackFlow, k: int, p: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    path, hops = flow.witness(k, p)
    return path, hops, int(flow.first[p, k])


def find_stack_leaks(task, stack: LayerStack | None = None, layers: int | None = None, *,
                     empty_rows: str = LEAK_DEFAULT, flow: StackFlow | None = None) -> LeakReport:
    """Every leak and isolation violation of ``task`` run through ``stack`` (each with its first layer).

    ``stack`` None: the task's own mask at every layer (:func:`theory.leak.find_leaks`:
    each depth a hop count, no ``hop_layers``).

    >>> import numpy as np
    >>> from hasse.theory.stack import StackLayer
    >>> from hasse.theory.task import make_task
    >>> causal, full = np.tril(np.ones((3, 3), dtype=bool)), np.ones((3, 3), dtype=bool)
    >>> t = make_task(3, [("x0", 0), ("x1", 1), ("x2", 2)], [1, None, None], causal)
    >>> s = LayerStack((StackLayer(causal, "causal"), StackLayer(full, "bidirectional")), "causal, bidirectional")
    >>> leak, = find_stack_leaks(t, s).leaks
    >>> leak.path, leak.depth, leak.hop_layers
    ((1, 0), 2, (2,))
    """
    if stack is None:
        return find_leaks(task, layers, empty_rows=empty_rows)
    if stack.n != task.size:
        from hasse.theory.errors import InputError

        raise InputError(f"the stack has {stack.n} positions, the task {task.size}")
    key_only = tuple(getattr(task, "key_only", ()))
    read, rows = apply_stack_policy(stack, empty_rows, key_only)
    flow = flow or propagate(read)
    sources = task.all_sources()
    holders: dict[int, list[int]] = {}
    for j, held in enumerate(sources):
        for t in held:
            holders.setdefault(t, []).append(j)
    held_by = {t: np.array(js, dtype=np.int64) for t, js in holders.items()}
    none = np.zeros(0, dtype=np.int64)
    leaks = []
    for p in task.supervised:
        for t in task.labels[p]:
            j = _nearest(flow, p, held_by.get(t, none))
            if j is not None:
                path, hops, depth = _path(flow, j, p)
                leaks.append(Leak(p, t, j, path, depth, hops))
    isolation = find_stack_isolation(read, task.isolate, flow=flow)
    targets = tuple(sorted({t for ts in task.labels for t in ts}))
    kind = getattr(task, "key_only_kind", "")
    return LeakReport(layers, tuple(leaks), isolation, task.supervised, targets, task.tokens, task.size, rows,
                      empty_rows, key_only, kind if key_only else "")


def find_stack_isolation(stack: LayerStack, groups: Sequence[Sequence[int]], *,
                         flow: StackFlow | None = None) -> tuple[Flow, ...]:
    """Positions of one group that depend on a position of another (one per position and foreign group).

    For each group at once: the first arrival of every member from every grouped position, keyed
    ``layers * n + position`` (unseen: past every key), and its minimum per group by one
    ``minimum.reduceat``: the nearest member of each group, as :func:`_nearest` picks it.
    """
    if not groups:
        return ()
    flow = flow or propagate(stack)
    n = flow.n
    lists = [np.asarray(list(members), dtype=np.int64) for members in groups]
    nonempty = [h for h, members in enumerate(lists) if members.size]
    if not nonempty:
        return ()
    everyone = np.concatenate([lists[h] for h in nonempty])
    starts = np.cumsum([0] + [lists[h].size for h in nonempty[:-1]])
    unseen = np.iinfo(np.int64).max
    out = []
    column_of = np.array(nonempty)
    chunk = max(1, (1 << 22) // everyone.size)  # rows of first arrivals held at a time
    for g, members in enumerate(lists):
        for lo in range(0, members.size, chunk):
            rows = members[lo:lo + chunk]
            first = flow.first[np.ix_(rows, everyone)].astype(np.int64)
            keys = np.where(first >= 0, first * n + everyone, unseen)
            nearest = np.minimum.reduceat(keys, starts, axis=1)  # (rows, nonempty groups)
            nearest[:, column_of == g] = unseen
            for row, column in zip(*np.nonzero(nearest != unseen)):  # row by row, groups in order
                p, k = int(rows[row]), int(nearest[row, column] % n)
                path, hops, depth = _path(flow, k, p)
                out.append(Flow(p, k, path, depth, hops))
    return tuple(out)


def find_stack_flows(stack: LayerStack | np.ndarray, sources: Iterable[int], sinks: Iterable[int], *,
                     empty_rows: str = LEAK_DEFAULT, flow: StackFlow | None = None) -> tuple[Flow, ...]:
    """Positions of ``sinks`` that depend on some position of ``sources`` (the earliest source, its witness).

    ``stack`` an ``(n, n)`` mask: that mask at every layer (:func:`theory.leak.find_flows`, hop counts).
    """
    if not isinstance(stack, LayerStack):
        return find_flows(stack, sources, sinks, empty_rows=empty_rows)
    if flow is None:
        read, _ = apply_stack_policy(stack, empty_rows)
        flow = propagate(read)
    src = np.array(sorted(set(sources)), dtype=np.int64)
    out = []
    for p in sorted(set(sinks)):
        k = _nearest(flow, p, src)
        if k is not None:
            path, hops, depth = _path(flow, k, p)
            out.append(Flow(p, k, path, depth, hops))
    return tuple(out)


def with_empty_rows(report: LeakReport, found: EmptyRows | None) -> LeakReport:
    """``report`` naming the empty rows ``found`` (read per head before the layer was built) too."""
    if found is None or not found.rows:
        return report
    from dataclasses import replace

    rows = tuple(sorted(set(report.empty_rows) | set(found.rows)))
    return replace(report, empty_rows=rows, empty_row_policy=found.policy)


def flow_task(named, layer, sources: list[int], sinks: list[int]):
    """The task a flow question encodes (design §7): a forbidden flow is exactly a leak of this task.

    Source ``i`` of ``--from`` (in increasing order) holds the sample token ``x<i>``;
    every other position holds ``[MASK]``; every position of ``--to`` is supervised
    with every source token (``0 … k-1``); the position id of position ``p`` is ``p``.
    The mask is the layer as analysed (union over heads, empty rows read by the
    policy); a row that is still empty (attend-none, key-only positions) keeps only
    its diagonal, which with the residual is the same as attending nothing, so
    ``hasse leak`` (which reads empty rows as attend-all) sees the same flows.

    >>> from hasse.theory.mask import NamedMask
    >>> t = flow_task(NamedMask(np.tril(np.ones((3, 3), bool)), ("0", "1", "2"), "causal:n=3"),
    ...               np.tril(np.ones((3, 3), bool)), [0], [2])
    >>> t.tokens, t.inputs, t.labels
    (1, (('x0', 0), ('[MASK]', 1), ('[MASK]', 2)), ((), (), (0,)))
    """
    from hasse.theory.task import make_task

    mask = np.array(layer, dtype=bool)
    empty = ~mask.any(axis=1)
    mask[empty, empty] = True  # still-empty rows: attend nothing but themselves (the residual keeps their content)
    token = {p: i for i, p in enumerate(sources)}
    inputs = [(f"x{token[p]}" if p in token else "[MASK]", p) for p in range(mask.shape[0])]
    every = list(range(len(sources)))
    labels = [every if p in set(sinks) else None for p in range(mask.shape[0])]
    name = f"flow {named.spec} --from {set_text(sources)} --to {set_text(sinks)}"
    return make_task(len(sources), inputs, labels, mask, name=name, names=list(named.names))


def set_text(positions: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``.

    >>> set_text([0, 1, 2, 5]), set_text([])
    ('0-2,5', '')
    """
    parts, start = [], None
    for i, p in enumerate(positions):
        if start is None:
            start = p
        if i + 1 == len(positions) or positions[i + 1] != p + 1:
            parts.append(str(p) if p == start else f"{start}-{p}")
            start = None
    return ",".join(parts)

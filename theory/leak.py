"""Leaks, isolation and forbidden flows, each with a shortest witness path.

Definitions (design.md §3). A supervised position ``p`` with target ``t`` *leaks
within L layers* iff some position ``j`` whose content holds ``t`` has
``R(L)[p, j]``. The witness is a shortest hop path ``j -> … -> p``; its length
``d`` is the smallest depth at which the leak appears, so an ``L``-layer model
leaks iff ``d <= L``. An *isolation* violation is a position of one ``isolate``
group that depends on a position of another; a *forbidden flow* is a position of
a set ``D`` that depends on a position of a set ``S``.

All three are one question — "which (position, colour) pairs are reached, how
early, by which path" — answered by :func:`nearest_sources` for every pair at
once: the limit by one AND per pair against the closure bitsets of
:func:`theory.order.mask_to_order`; depths and paths only for the pairs that do
leak, by one shared level-synchronous propagation of colour bitsets (depth 0 or
1 with no propagation at all when the mask is dense).

Empty rows (queries attending no key) are read by a policy first
(:mod:`theory.empty_rows`): by default ``attend-all``, the conservative reading of
additive-mask kernels, so such a query depends on every position; ``attend-none``
keeps the mask as given; ``error`` refuses them. Reports name the rows and policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from hasse.theory.bitset import transpose
from hasse.theory.empty_rows import LEAK_DEFAULT, EmptyRows, apply_empty_row_policy
from hasse.theory.mask import as_mask
from hasse.theory.order import LimitOrder, mask_to_order


@dataclass(frozen=True)
class Leak:
    """Supervised ``position`` depends on ``source``, whose content holds its ``target``."""

    position: int
    target: int
    source: int
    path: tuple[int, ...]  # source -> ... -> position, a real path in the mask
    depth: int  # the first depth at which the leak appears: len(path) - 1 for one mask at every layer
    hop_layers: tuple[int, ...] = field(default=(), repr=False)  # a stack (theory.stack): the layer (1-based) of each hop of path

    def to_json(self) -> dict:
        """The leak as a JSON object: ``position``, ``target``, ``source``, ``path`` (a list), ``depth``
        (and ``hop_layers`` for a stack).

        >>> Leak(2, 0, 0, (0, 1, 2), 2).to_json()
        {'position': 2, 'target': 0, 'source': 0, 'path': [0, 1, 2], 'depth': 2}
        """
        out = {"position": self.position, "target": self.target, "source": self.source, "path": list(self.path),
               "depth": self.depth}
        if self.hop_layers:
            out["hop_layers"] = list(self.hop_layers)
        return out


@dataclass(frozen=True)
class Flow:
    """``position`` depends on ``source``, which it must not (isolation or a forbidden flow)."""

    position: int
    source: int
    path: tuple[int, ...]
    depth: int
    hop_layers: tuple[int, ...] = field(default=(), repr=False)  # a stack (theory.stack): the layer (1-based) of each hop of path

    def to_json(self) -> dict:
        """The flow as a JSON object: ``position``, ``source``, ``path`` (a list), ``depth`` (and
        ``hop_layers`` for a stack).

        >>> Flow(2, 1, (1, 2), 1).to_json()
        {'position': 2, 'source': 1, 'path': [1, 2], 'depth': 1}
        """
        out = {"position": self.position, "source": self.source, "path": list(self.path), "depth": self.depth}
        if self.hop_layers:
            out["hop_layers"] = list(self.hop_layers)
        return out


@dataclass(frozen=True)
class LeakReport:
    """Everything ``hasse leak`` reports. ``leaks`` and ``isolation`` hold every violation in
    the limit, each with its depth; :meth:`leaks_within` keeps those of an ``L``-layer model."""

    layers: int | None  # the depth asked for; None = the limit (every depth)
    leaks: tuple[Leak, ...]
    isolation: tuple[Flow, ...]
    supervised: tuple[int, ...]
    targets: tuple[int, ...]  # distinct targets
    tokens: int
    size: int  # N, the number of positions
    empty_rows: tuple[int, ...]  # queries of the task's mask that attend no key
    empty_row_policy: str = LEAK_DEFAULT  # how they were read (theory.empty_rows)
    key_only: tuple[int, ...] = ()  # positions that feed the queries and attend nothing (theory.mask.square_up)
    key_only_kind: str = ""  # "cache" | "memory" | "" (none)

    @property
    def key_only_json(self) -> dict:
        """``{"positions": […], "kind": "cache" | "memory" | null}`` (an empty list when there are none)."""
        return key_only_json(self.key_only, self.key_only_kind)

    @property
    def empty_row_report(self) -> EmptyRows:
        """The empty rows and the policy applied to them."""
        return EmptyRows(self.empty_rows, self.empty_row_policy)

    def leaks_within(self, layers: int | None = None) -> tuple[Leak, ...]:
        layers = self.layers if layers is None else layers
        return self.leaks if layers is None else tuple(x for x in self.leaks if x.depth <= layers)

    def isolation_within(self, layers: int | None = None) -> tuple[Flow, ...]:
        layers = self.layers if layers is None else layers
        return self.isolation if layers is None else tuple(x for x in self.isolation if x.depth <= layers)

    @property
    def leak_free(self) -> bool:
        """No leak and no isolation violation within ``layers`` (in the limit when None)."""
        return not self.leaks_within() and not self.isolation_within()

    @property
    def target_coverage(self) -> float:
        """Distinct targets / n."""
        return len(self.targets) / self.tokens

    @property
    def label_density(self) -> float:
        """Supervised positions / N."""
        return len(self.supervised) / self.size


def nearest_sources(
    mask: np.ndarray,
    colours: Sequence[Iterable[int]],
    queries: Sequence[tuple[int, int]],
    *,
    order: LimitOrder | None = None,
) -> dict[tuple[int, int], tuple[int, ...]]:
    """Shortest paths to each queried position from the positions holding a colour.

    ``colours[v]`` are the colours position ``v`` holds (the tokens in its
    content, its isolate group, membership of a source set). For every query
    ``(p, c)`` for which some position holding ``c`` is upstream of ``p`` in the
    limit, returns a shortest path ``j -> … -> p`` (``j`` holds ``c``; the smallest
    position wins ties at each step back). Unreached queries are absent.

    >>> chain = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=bool)
    >>> nearest_sources(chain, [[7], [], []], [(2, 7), (0, 8)])
    {(2, 7): (0, 1, 2)}
    """
    mask = as_mask(mask)
    n = mask.shape[0]
    order = order or mask_to_order(mask)
    held = [frozenset(c) for c in colours]
    holders: dict[int, list[int]] = {}
    for v, cs in enumerate(held):
        for c in cs:
            holders.setdefault(c, []).append(v)
    colour_bits = {c: order.bit_of(vs) for c, vs in holders.items()}

    reached = [(p, c) for p, c in queries if c in colour_bits and order.upstream_bits(p) & colour_bits[c]]
    paths: dict[tuple[int, int], tuple[int, ...]] = {}
    pending = []
    holder_bits: dict[int, int] = {}  # in the positions' own numbering (colour_bits: the order's)
    for p, c in reached:
        if c in held[p]:
            paths[(p, c)] = (p,)
        elif order.dense:  # the limit is M or I: a reachable holder is attended directly (the smallest one)
            if c not in holder_bits:
                holder_bits[c] = sum(1 << v for v in holders[c])
            row = int.from_bytes(np.packbits(mask[p], bitorder="little").tobytes(), "little") & ~(1 << p)
            first = row & holder_bits[c]
            paths[(p, c)] = ((first & -first).bit_length() - 1, p)
        else:
            pending.append((p, c))
    if pending:
        paths.update(_propagated_paths(mask, held, pending))
    return paths


def _propagated_paths(mask, held, pending) -> dict[tuple[int, int], tuple[int, ...]]:
    """Shortest witness paths for the pending pairs: one bidirectional search per pair on bitset rows.

    For a pair ``(p, c)``, ``F_a`` (the positions within ``a`` hops downstream of the
    holders of ``c``) and ``B_b`` (within ``b`` hops upstream of ``p``) grow one level at
    a time, the side with fewer positions to expand first (a colour's forward levels
    are shared by its pairs); the first ``a + b`` with ``F_a & B_b`` nonempty is the
    depth ``d``. The path is then taken back from ``p`` by the rule of
    :func:`nearest_sources`: the smallest attended position one hop nearer the holders,
    which is the smallest attended position of ``F_i`` (``i < a``), or of level ``i`` of
    the shortest-path DAG (``F_a & B_b``, then ``succ(level) & B_(d-i)`` for ``i > a``).
    A level costs one OR of ``n / 64`` words per position it expands (numpy for wide
    levels), never a loop over edges: a pair costs what its two balls hold.
    """
    pred, succ = _BitRows(mask), _BitRows(transpose(mask))
    holders: dict[int, int] = {}
    for v, cs in enumerate(held):
        for c in cs:
            holders[c] = holders.get(c, 0) | (1 << v)
    by_colour: dict[int, list[int]] = {}
    for p, c in pending:
        by_colour.setdefault(c, []).append(p)
    out = {}
    for c, positions in by_colour.items():
        forward = _Ball(holders.get(c, 0), succ)  # shared by the pairs of colour c, dropped after them
        for p in positions:
            path = _witness(forward, _Ball(1 << p, pred), p, pred, succ)
            if path is not None:
                out[(p, c)] = path
    return out


class _BitRows:
    """The off-diagonal rows of a square Boolean matrix as bitsets (``ints``) and as packed 64-bit words."""

    WIDE = 24  # from this many rows on, their OR is one numpy reduction (faster than bigint ORs, measured)

    def __init__(self, matrix: np.ndarray):
        n = matrix.shape[0]
        self.nbytes = 8 * max(1, (n + 63) // 64)
        packed = np.zeros((n, self.nbytes), dtype=np.uint8)
        packed[:, : (n + 7) // 8] = np.packbits(np.asarray(matrix, dtype=bool), axis=1, bitorder="little")
        q = np.arange(n)
        packed[q, q >> 3] &= ~(np.uint8(1) << (q & 7).astype(np.uint8))  # no self-loops
        self.ints = [int.from_bytes(row.tobytes(), "little") for row in packed]
        self.words = packed.view(np.uint64)

    def union(self, x: int) -> int:
        """The OR of the rows whose indices are the bits of ``x``."""
        if x.bit_count() < self.WIDE:
            acc = 0
            while x:
                low = x & -x
                acc |= self.ints[low.bit_length() - 1]
                x ^= low
            return acc
        index = np.flatnonzero(np.unpackbits(np.frombuffer(x.to_bytes(self.nbytes, "little"), dtype=np.uint8),
                                             bitorder="little"))
        return int.from_bytes(np.bitwise_or.reduce(self.words[index], axis=0).tobytes(), "little")


class _Ball:
    """``within[d]``: the positions at most ``d`` hops from ``start`` along ``rows``, grown on demand."""

    def __init__(self, start: int, rows: _BitRows):
        self.within, self.fresh, self.rows, self.done = [start], start, rows, False

    def can_grow(self, level: int) -> bool:
        return level + 1 < len(self.within) or not self.done

    def cost(self, level: int) -> int:
        """What reaching ``level + 1`` costs: 0 when grown already, else the rows to OR."""
        return 0 if level + 1 < len(self.within) else self.fresh.bit_count()

    def grow(self, level: int) -> int | None:
        """``within[level + 1]``, computed if need be; None when the ball stopped growing."""
        if level + 1 == len(self.within) and not self.done:
            new = self.rows.union(self.fresh) & ~self.within[-1]
            if new:
                self.within.append(self.within[-1] | new)
                self.fresh = new
            else:
                self.done = True
        return self.within[level + 1] if level + 1 < len(self.within) else None


def _witness(forward: _Ball, backward: _Ball, p: int, pred: _BitRows, succ: _BitRows) -> tuple[int, ...] | None:
    """The shortest path (holder -> … -> ``p``) that :func:`_propagated_paths` describes; None if none."""
    a = b = 0
    ahead, behind = forward.within[0], backward.within[0]
    while not ahead & behind:
        more_ahead, more_behind = forward.can_grow(a), backward.can_grow(b)
        if not (more_ahead or more_behind):
            return None
        if more_ahead and (not more_behind or forward.cost(a) <= backward.cost(b)):
            grown = forward.grow(a)
            if grown is not None:
                a, ahead = a + 1, grown
        else:
            grown = backward.grow(b)
            if grown is not None:
                b, behind = b + 1, grown
    depth = a + b
    levels = forward.within[:a]
    level = ahead & behind  # level a of the shortest-path DAG: hop distance a from the holders, b to p
    levels.append(level)
    for i in range(a + 1, depth):
        level = succ.union(level) & backward.within[depth - i]
        levels.append(level)
    path, cur = [p], p
    for d in range(depth - 1, -1, -1):
        step = pred.ints[cur] & levels[d]
        cur = (step & -step).bit_length() - 1
        path.append(cur)
    return tuple(reversed(path))


def key_only_json(key_only, kind: str = "") -> dict:
    """The JSON object every report gives its key-only positions (:func:`theory.mask.square_up`).

    >>> key_only_json((0, 1), "cache"), key_only_json(())
    ({'positions': [0, 1], 'kind': 'cache'}, {'positions': [], 'kind': None})
    """
    return {"positions": [int(p) for p in key_only], "kind": (kind or None) if key_only else None}


def find_leaks(task, layers: int | None = None, *, order: LimitOrder | None = None,
               empty_rows: str = LEAK_DEFAULT, key_only=None, key_only_kind: str | None = None) -> LeakReport:
    """Every leak and isolation violation of a task (in the limit, each with its depth).

    ``empty_rows`` reads the queries that attend no key (:mod:`theory.empty_rows`):
    ``attend-all`` (default) lets them attend every position, ``attend-none``
    keeps the mask, ``error`` raises InputError. ``order``, if given, must be the
    order of the mask after that reading. ``key_only`` (default: the task's own
    ``key_only``, if it has one) are positions that feed the queries and attend
    nothing (a KV cache): they are not empty rows, and the report names them.

    >>> from hasse.theory.task import make_task
    >>> t = make_task(2, [("x0", 0), ("x1", 1)], [1, None], [[1, 1], [1, 1]])
    >>> find_leaks(t).leaks
    (Leak(position=0, target=1, source=1, path=(1, 0), depth=1),)
    >>> lonely = make_task(2, [("x0", 0), ("[MASK]", 1)], [None, 0], [[1, 0], [0, 0]])
    >>> find_leaks(lonely).leaks, find_leaks(lonely, empty_rows="attend-none").leaks
    ((Leak(position=1, target=0, source=0, path=(0, 1), depth=1),), ())
    """
    key_only = tuple(getattr(task, "key_only", ()) if key_only is None else key_only)
    kind = getattr(task, "key_only_kind", "") if key_only_kind is None else key_only_kind
    extra = {"key_only": key_only} if key_only else {}  # key-only rows are not empty rows
    mask, found = apply_empty_row_policy(task.mask, empty_rows, task.name or None, **extra)
    order = order or mask_to_order(mask)
    sources = task.all_sources()
    queries = [(p, t) for p in task.supervised for t in task.labels[p]]
    paths = nearest_sources(mask, sources, queries, order=order)
    leaks = tuple(
        Leak(p, t, path[0], path, len(path) - 1)
        for (p, t) in queries
        if (path := paths.get((p, t))) is not None
    )
    isolation = find_isolation(mask, task.isolate, order=order)
    targets = tuple(sorted({t for ts in task.labels for t in ts}))
    return LeakReport(layers, leaks, isolation, task.supervised, targets, task.tokens, task.size, found.rows,
                      found.policy, key_only, kind if key_only else "")


def find_isolation(mask, groups: Sequence[Sequence[int]], *, order: LimitOrder | None = None) -> tuple[Flow, ...]:
    """Positions of one group that depend on a position of another (one per position and group).

    >>> window = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=bool)
    >>> find_isolation(window, [[0, 1], [2]])
    (Flow(position=2, source=1, path=(1, 2), depth=1),)
    """
    if not groups:
        return ()
    mask = as_mask(mask)
    order = order or mask_to_order(mask)
    group_of = {p: g for g, members in enumerate(groups) for p in members}
    colours = [[group_of[p]] if p in group_of else [] for p in range(mask.shape[0])]
    grouped = order.bit_of(group_of)
    own = [order.bit_of(members) for members in groups]
    queries = []
    for g, members in enumerate(groups):
        foreign = grouped & ~own[g]
        for p in members:
            if order.upstream_bits(p) & foreign:
                queries += [(p, h) for h in range(len(groups)) if h != g]
    paths = nearest_sources(mask, colours, queries, order=order)
    return tuple(_flow(paths[q]) for q in queries if q in paths)


def find_flows(mask, sources: Iterable[int], sinks: Iterable[int], *, order: LimitOrder | None = None,
               empty_rows: str = LEAK_DEFAULT, key_only=()) -> tuple[Flow, ...]:
    """Positions of ``sinks`` that depend on some position of ``sources`` (nearest source, shortest path).

    A position in both sets depends on itself: it is reported at depth 0. Empty
    rows are read by the policy ``empty_rows``, as in :func:`find_leaks`
    (:func:`theory.empty_rows.apply_empty_row_policy` names them); rows of
    ``key_only`` positions (a KV cache, a memory) are not empty rows and stay empty.

    >>> causal = np.tril(np.ones((4, 4), dtype=bool))
    >>> find_flows(causal, [1], [0, 3])
    (Flow(position=3, source=1, path=(1, 3), depth=1),)
    """
    extra = {"key_only": tuple(key_only)} if key_only else {}
    mask, _ = apply_empty_row_policy(as_mask(mask), empty_rows, **extra)
    src = set(sources)
    colours = [[0] if p in src else [] for p in range(mask.shape[0])]
    queries = [(p, 0) for p in sorted(set(sinks))]
    paths = nearest_sources(mask, colours, queries, order=order)
    return tuple(_flow(paths[q]) for q in queries if q in paths)


def _flow(path: tuple[int, ...]) -> Flow:
    return Flow(path[-1], path[0], path, len(path) - 1)

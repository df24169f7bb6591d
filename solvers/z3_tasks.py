"""Z3 encodings of the task-level theorems: maps between labelled Hasse diagrams, and leak walks.

Every encoding is ground and quantifier-free, built from small named functions,
and reads only raw task data (mask rows, inputs, labels) through
:mod:`solvers.posets` — never the ``theory`` code the proofs check.

Maps between diagrams (nodes with input multisets, covers ``lower[c]``):

- :func:`encode_map` — a one-hot Boolean ``f[c, m]`` per allowed pair, every source
  node mapped exactly once;
- :func:`encode_injective` / :func:`encode_onto` — at most / exactly one source per target;
- :func:`encode_cover_exact` — ``f`` maps the cover set of ``c`` exactly onto the
  cover set of ``f(c)`` (both inclusions).

A cover-exact map that is one-to-one on ``↓c`` is an isomorphism of ``↓c`` onto ``↓f(c)``: by
induction in topological order the nodes below ``f(c)`` are exactly the images of the
nodes below ``c``, and edges are preserved both ways. So :func:`find_embedding` decides
node equivalence (design.md §3) and, over a whole task, a coherent embedding of the
task as a down-closed part of another diagram.

- :func:`find_isomorphism` — a bijection preserving covers, inputs and labels;
- :func:`find_embedding` — a cover-exact map, one-to-one on every down-set, optionally of one down-set with
  a given root, optionally carrying labels;
- :func:`merge_within` — a merged diagram with ``K`` nodes into which every task embeds
  (design.md §3, minimality: unsat at one node fewer than the kit's merge);
- :func:`find_leak_path` — a walk ``j = v_0, …, v_L = p`` in ``A = M ∨ I`` from a holder of a
  supervised position's target (a leak in the limit when ``L = N - 1``).

Each ``find_…``/``merge_within`` returns a :class:`Answer`: ``sat`` with the decoded
object, ``unsat``, or ``unknown`` with the solver's reason.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import z3

from hasse.solvers.posets import Diagram, closure

SAT, UNSAT, UNKNOWN = "sat", "unsat", "unknown"


@dataclass(frozen=True)
class Answer:
    """One solver call: ``status`` sat / unsat / unknown, the decoded model when sat, the reason when unknown."""

    status: str
    value: Any = None
    reason: str | None = None


def check(solver: z3.Solver, timeout: float | None) -> tuple[str, str | None]:
    """Run ``solver`` within ``timeout`` seconds (``None``: no limit); ``TimeoutError`` when none is left."""
    if timeout is not None:
        if timeout <= 0:
            raise TimeoutError("no time left for the next solver call")
        solver.set("timeout", max(1, int(timeout * 1000)))
    result = solver.check()
    if result == z3.sat:
        return SAT, None
    if result == z3.unsat:
        return UNSAT, None
    return UNKNOWN, solver.reason_unknown()


# ---------------------------------------------------------------- maps between diagrams


def encode_map(solver, name: str, sources: Sequence[int], allowed: dict[int, list[int]]) -> dict:
    """One-hot ``f[(c, m)]`` for ``m`` in ``allowed[c]``; each source node maps to exactly one target."""
    f = {(c, m): z3.Bool(f"{name}_{c}_{m}") for c in sources for m in allowed[c]}
    for c in sources:
        options = [f[c, m] for m in allowed[c]]
        solver.add(z3.PbEq([(x, 1) for x in options], 1) if options else z3.BoolVal(False))
    return f


def _by_target(f: dict) -> dict[int, list]:
    out: dict[int, list] = {}
    for (c, m), x in f.items():
        out.setdefault(m, []).append(x)
    return out


def encode_injective(solver, f: dict) -> None:
    """No two source nodes share a target."""
    for xs in _by_target(f).values():
        if len(xs) > 1:
            solver.add(z3.AtMost(*xs, 1))


def encode_injective_on_down_sets(solver, f: dict, d: Diagram, nodes) -> None:
    """No two source nodes with a common upper bound (both in one down-set) share a target."""
    below = d.below()
    up = {c: {w for w in range(d.size) if c in below[w]} for c in nodes}
    targets = {m for (_, m) in f}
    nodes = sorted(nodes)
    for a_i, a in enumerate(nodes):
        for b in nodes[a_i + 1:]:
            if up[a] & up[b]:
                for m in targets:
                    if (a, m) in f and (b, m) in f:
                        solver.add(z3.Not(z3.And(f[a, m], f[b, m])))


def encode_onto(solver, f: dict, targets: Sequence[int]) -> None:
    """Every target node is hit exactly once (with :func:`encode_map`: a bijection)."""
    hit = _by_target(f)
    for m in targets:
        xs = hit.get(m, [])
        solver.add(z3.PbEq([(x, 1) for x in xs], 1) if xs else z3.BoolVal(False))


def encode_cover_exact(solver, f: dict, src_lower, tgt_lower) -> None:
    """``f(c) = m`` implies ``f`` maps the covers of ``c`` onto the covers of ``m`` (both inclusions)."""
    for (c, m), x in f.items():
        parts = []
        for m2 in tgt_lower[m]:  # every cover of m is the image of a cover of c
            parts.append(z3.Or([f[d, m2] for d in src_lower[c] if (d, m2) in f]))
        for d in src_lower[c]:  # every cover of c lands on a cover of m
            parts.append(z3.Or([f[d, m2] for m2 in tgt_lower[m] if (d, m2) in f]))
        if parts:
            solver.add(z3.Implies(x, z3.And(parts)))


def _decode_map(model, f: dict) -> dict[int, int]:
    return {c: m for (c, m), x in f.items() if z3.is_true(model.eval(x, model_completion=True))}


def find_isomorphism(a: Diagram, b: Diagram, *, labels: bool = True, root: bool = False,
                     timeout: float | None = None) -> Answer:
    """A bijection of nodes preserving covers, input multisets (and labels; the last node with ``root``).

    sat: ``value`` is the map ``{node of a: node of b}``.
    """
    if a.size != b.size:
        return Answer(UNSAT, reason="different numbers of nodes")
    allowed = {c: [m for m in range(b.size) if a.inputs[c] == b.inputs[m]
                   and (not labels or a.labels[c] == b.labels[m])] for c in range(a.size)}
    if root:
        last = b.size - 1
        allowed[a.size - 1] = [m for m in allowed[a.size - 1] if m == last]
    solver = z3.Solver()
    f = encode_map(solver, "iso", range(a.size), allowed)
    encode_onto(solver, f, range(b.size))
    encode_cover_exact(solver, f, a.lower, b.lower)
    status, reason = check(solver, timeout)
    return Answer(status, _decode_map(solver.model(), f) if status == SAT else None, reason)


def find_embedding(src: Diagram, tgt: Diagram, *, root: int | None = None, labels: bool = True,
                   root_labels=None, timeout: float | None = None) -> Answer:
    """A cover-exact map of ``src`` (or of ``↓root``) into ``tgt``, one-to-one on every down-set, inputs preserved.

    With ``labels`` every node's ``(input, target)`` pairs must be carried by its image;
    with ``root_labels`` (a set of such pairs) only those, at the image of the root
    (node equivalence with labels, and consistency, ask no more).
    sat: ``value`` is the map ``{node of src: node of tgt}``.
    """
    nodes = sorted(src.below()[root]) if root is not None else list(range(src.size))
    allowed = {c: [m for m in range(tgt.size) if src.inputs[c] == tgt.inputs[m]
                   and (not labels or src.labels[c] <= tgt.labels[m])] for c in nodes}
    if root is not None and root_labels is not None:
        allowed[root] = [m for m in allowed[root] if set(root_labels) <= tgt.labels[m]]
    solver = z3.Solver()
    f = encode_map(solver, "emb", nodes, allowed)
    encode_injective_on_down_sets(solver, f, src, nodes)
    encode_cover_exact(solver, f, src.lower, tgt.lower)
    status, reason = check(solver, timeout)
    return Answer(status, _decode_map(solver.model(), f) if status == SAT else None, reason)


# ---------------------------------------------------------------- a merged diagram with K nodes


def encode_merged_nodes(solver, k: int, alphabet: int) -> tuple[list, dict]:
    """``K`` merged nodes: an input-multiset index per node and cover Booleans ``cov[m, m']`` (``m' < m``).

    Numbering the merged nodes topologically loses nothing (every DAG has such a numbering).
    """
    inputs = [z3.Int(f"in_{m}") for m in range(k)]
    for x in inputs:
        solver.add(0 <= x, x < max(alphabet, 1))
    cov = {(m, m2): z3.Bool(f"cov_{m}_{m2}") for m in range(k) for m2 in range(m)}
    return inputs, cov


def encode_task_embedding(solver, i: int, d: Diagram, k: int, index: dict, inputs: list, cov: dict) -> dict:
    """Task ``i`` maps into the ``K`` merged nodes, one-to-one on down-sets, inputs kept, covers mapped exactly."""
    f = encode_map(solver, f"f{i}", range(d.size), {c: list(range(k)) for c in range(d.size)})
    encode_injective_on_down_sets(solver, f, d, range(d.size))
    for (c, m), x in f.items():
        parts = [inputs[m] == index[d.inputs[c]]]
        for m2 in range(k):
            image = z3.Or([f[e, m2] for e in d.lower[c]])
            parts.append(cov[m, m2] == image if m2 < m else z3.Not(image))
        solver.add(z3.Implies(x, z3.And(parts)))
    return f


def largest_down_set(d: Diagram) -> list[int]:
    """The nodes of the largest down-set ``↓c`` of ``d``, in topological order."""
    below = d.below()
    return sorted(max(below, key=len)) if below else []


def encode_first_task_fixed(solver, f: dict, d: Diagram, k: int) -> None:
    """Symmetry breaking: the ``j``-th node of ``d``'s largest down-set is merged node ``j`` (for ``j < K``).

    Loses no solution: the map is one-to-one on that down-set and its image is the
    down-set of the root's image (nothing outside it lies below it), so numbering that
    image first, in the task's own topological order, and the other merged nodes after
    it is again a topological numbering.
    """
    for j, c in enumerate(largest_down_set(d)[:k]):
        solver.add(f[c, j])


def merge_within(diagrams: Sequence[Diagram], k: int, *, symmetry_breaking: bool = True,
                 timeout: float | None = None) -> Answer:
    """Is there a merged diagram with ``k`` nodes into which every task maps (cover-exact, one-to-one on down-sets)?

    sat: ``value`` is ``{"inputs": [multiset per node], "lower": [covers per node],
    "maps": [{task node: merged node} per task]}`` (maps in the order of ``diagrams``).
    ``symmetry_breaking=False`` is the naive encoding (the benchmark's baseline).
    """
    order = sorted(range(len(diagrams)), key=lambda i: -len(largest_down_set(diagrams[i])))  # largest down-set first
    multisets = sorted({x for d in diagrams for x in d.inputs})
    index = {x: u for u, x in enumerate(multisets)}
    solver = z3.Solver()
    inputs, cov = encode_merged_nodes(solver, k, len(multisets))
    maps = [None] * len(diagrams)
    for i in order:
        maps[i] = encode_task_embedding(solver, i, diagrams[i], k, index, inputs, cov)
    if diagrams and k > 0 and symmetry_breaking:
        encode_first_task_fixed(solver, maps[order[0]], diagrams[order[0]], k)
    status, reason = check(solver, timeout)
    if status != SAT:
        return Answer(status, None, reason)
    model = solver.model()
    value = {
        "inputs": [list(multisets[model.eval(x, model_completion=True).as_long()]) for x in inputs],
        "lower": [[m2 for m2 in range(m) if z3.is_true(model.eval(cov[m, m2], model_completion=True))]
                  for m in range(k)],
        "maps": [_decode_map(model, f) for f in maps],
    }
    return Answer(SAT, value)


def merged_value_to_task(value: dict, diagrams: Sequence[Diagram], tokens: int):
    """A decoded merged diagram as a task (dense mask, labels collected through the maps), for display."""
    from hasse.theory.task import make_task

    used = sorted({m for f in value["maps"] for m in f.values()})
    renum = {m: i for i, m in enumerate(used)}
    inputs, node_of, labels = [], [], []
    for m in used:
        for x in value["inputs"][m]:
            inputs.append(tuple(x))
            node_of.append(renum[m])
            labels.append(set())
    for d, f in zip(diagrams, value["maps"]):
        for c, m in f.items():
            for inp, t in d.labels[c]:
                q = next(p for p, x in enumerate(inputs) if node_of[p] == renum[m] and x == inp)
                labels[q].add(t)
    k = len(used)
    node_mask = np.eye(k, dtype=bool)
    for m in used:
        for m2 in value["lower"][m]:
            if m2 in renum:
                node_mask[renum[m], renum[m2]] = True
    node_mask = closure(node_mask)
    mask = node_mask[np.ix_(node_of, node_of)]
    return make_task(tokens, inputs, [sorted(ls) or None for ls in labels], mask, name=f"merged with {k} nodes")


# ---------------------------------------------------------------- leaks: walks in A = M ∨ I


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
    status, reason = check(solver, timeout)
    if status != SAT:
        return Answer(status, None, reason)
    model = solver.model()
    walk = [next(v for v, x in enumerate(row) if z3.is_true(model.eval(x, model_completion=True))) for row in at]
    path = [walk[0]]
    for v in walk[1:]:
        if v != path[-1]:
            path.append(v)
    p, t = next(k for k, x in choose.items() if z3.is_true(model.eval(x, model_completion=True)))
    return Answer(SAT, {"position": p, "target": t, "source": path[0], "path": path, "depth": len(path) - 1})


def find_flow_path(mask, sources: Sequence[int], sinks: Sequence[int], *, timeout: float | None = None) -> Answer:
    """A walk from a position of ``sources`` to one of ``sinks`` (isolation violations): sat with its path."""
    mask = np.asarray(mask, dtype=bool)
    holders = {0: sorted(set(sources))}
    pairs = [(p, 0) for p in sorted(set(sinks))]
    answer = _walk(mask, pairs, holders, mask.shape[0] - 1, timeout)
    if answer.status == SAT:
        value = dict(answer.value)
        del value["target"]
        return Answer(SAT, value)
    return answer


# ---------------------------------------------------------------- symbolic rooted diagrams (equivalence)


def encode_symbolic_diagram(solver, name: str, k: int) -> tuple[dict, list]:
    """A rooted DAG on ``k`` topologically numbered nodes with symbolic edges and 2-symbol labels.

    ``edge[u, v]`` (``v < u``): ``u`` covers ``v``; ``label[u]``: True for the second symbol.
    Rooted: every node reaches node ``k - 1`` upwards (``reach[u]`` defined in topological order).
    """
    edge = {(u, v): z3.Bool(f"{name}_e_{u}_{v}") for u in range(k) for v in range(u)}
    label = [z3.Bool(f"{name}_l_{u}") for u in range(k)]
    reach: list = [None] * k
    for u in range(k - 1, -1, -1):
        reach[u] = z3.BoolVal(True) if u == k - 1 else z3.Or([z3.And(edge[w, u], reach[w]) for w in range(u + 1, k)])
        solver.add(reach[u])
    return edge, label


def encode_symbolic_bijection(solver, k: int, edge_a: dict, label_a: list, edge_b: dict, label_b: list) -> dict:
    """A bijection ``p[u, x]`` of the nodes, root to root, preserving edges both ways and labels."""
    p = {(u, x): z3.Bool(f"p_{u}_{x}") for u in range(k) for x in range(k)}
    for u in range(k):
        solver.add(z3.PbEq([(p[u, x], 1) for x in range(k)], 1))
        solver.add(z3.PbEq([(p[x, u], 1) for x in range(k)], 1))
    solver.add(p[k - 1, k - 1])

    def e(edges, u, v):
        return edges[u, v] if v < u else z3.BoolVal(False)

    for u, x in itertools.product(range(k), repeat=2):
        solver.add(z3.Implies(p[u, x], label_a[u] == label_b[x]))
        for v, y in itertools.product(range(k), repeat=2):
            if u != v and x != y:
                solver.add(z3.Implies(z3.And(p[u, x], p[v, y]), e(edge_a, u, v) == e(edge_b, x, y)))
    return p


def upstream_counts_differ(label_a: list, label_b: list):
    """The negated claim: the roots' upstream multisets differ (over 2 symbols: the counts of the second)."""
    count = lambda labels: z3.Sum([z3.If(x, 1, 0) for x in labels])  # noqa: E731
    return count(label_a) != count(label_b)


def equivalent_roots_with_other_upstream(k: int, *, timeout: float | None = None) -> Answer:
    """Two equivalent roots (isomorphic rooted ``k``-node DAGs) whose upstream input multisets differ?

    unsat proves "equivalent ⇒ equal upstream multisets" for every rooted DAG on ``k`` nodes
    and every 2-symbol labelling at once. sat: ``value`` holds the two decoded diagrams.
    """
    solver = z3.Solver()
    edge_a, label_a = encode_symbolic_diagram(solver, "a", k)
    edge_b, label_b = encode_symbolic_diagram(solver, "b", k)
    encode_symbolic_bijection(solver, k, edge_a, label_a, edge_b, label_b)
    solver.add(upstream_counts_differ(label_a, label_b))
    status, reason = check(solver, timeout)
    if status != SAT:
        return Answer(status, None, reason)
    model = solver.model()

    def decode(edge, label):
        true = lambda x: z3.is_true(model.eval(x, model_completion=True))  # noqa: E731
        return {"lower": [[v for v in range(u) if true(edge[u, v])] for u in range(k)],
                "labels": "".join("b" if true(x) else "a" for x in label)}

    return Answer(SAT, {"first": decode(edge_a, label_a), "second": decode(edge_b, label_b)})


# ---------------------------------------------------------------- coverage


def find_uncovered_target(labels, tokens: int, *, timeout: float | None = None) -> Answer:
    """A token ``T`` (``0 <= T < tokens``) that no position predicts: unsat means coverage 100 %."""
    solver = z3.Solver()
    t = z3.Int("T")
    solver.add(0 <= t, t < tokens)
    for target in sorted({int(x) for ts in labels for x in (ts or ())}):
        solver.add(t != target)
    status, reason = check(solver, timeout)
    return Answer(status, solver.model()[t].as_long() if status == SAT else None, reason)

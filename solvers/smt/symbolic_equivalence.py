"""Equivalent roots have equal upstream inputs, for every rooted DAG on ``k`` nodes at once (Z3, symbolic).

Two rooted DAGs on ``k`` topologically numbered nodes with symbolic edges and
2-symbol labels (:func:`encode_symbolic_diagram`), a bijection between them that
keeps edges both ways and labels (:func:`encode_symbolic_bijection`), and the negated
claim that the roots' upstream multisets differ (:func:`upstream_counts_differ`):
:func:`equivalent_roots_with_other_upstream` is unsat exactly when the statement of
``equivalence_preserves_upstream_inputs`` holds for every such pair.

>>> equivalent_roots_with_other_upstream(3).status
'unsat'
"""

from __future__ import annotations

import itertools

import z3

from hasse.solvers.smt.prove import Answer, check


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

    def decode(model) -> dict:
        true = lambda x: z3.is_true(model.eval(x, model_completion=True))  # noqa: E731

        def diagram(edge, label):
            return {"lower": [[v for v in range(u) if true(edge[u, v])] for u in range(k)],
                    "labels": "".join("b" if true(x) else "a" for x in label)}

        return {"first": diagram(edge_a, label_a), "second": diagram(edge_b, label_b)}

    return check(solver, timeout, decode)



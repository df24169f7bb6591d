"""Z3 encodings of the theorems on the Hasse diagram and the sparse realisation, naive and better.

Same conventions as :mod:`solvers.smt.claims` (queries proved by negation, nothing
from the theory code): ``hasse_closure_is_limit`` and
``sparse_realisation_keeps_hasse``. Both claims depend on the mask only through its
limit ``R*``, so the better encodings describe ``R*`` by a characterisation instead
of unrolled powers: the reflexive–transitive closure relation
(:func:`solvers.smt.masks.encode_closure_relation`) or, for the sparse realisation,
any preorder (:func:`solvers.smt.masks.encode_preorder`).

``planted=True`` gives false variants on the same hypotheses (run-time controls,
:func:`solvers.smt.queries.run_controls`; ``[]`` at ``n = 1``): "the closure of the
Hasse diagram relates no two positions", "every Hasse edge is implied by the others",
"no predicted hop distance is ``n - 1``".
"""

from __future__ import annotations

import numpy as np
import z3

from hasse.solvers.smt.claims import (canonical_roles, constant, first_index, mask_and_dependency, naive_limit,
                                     named_disjuncts)
from hasse.solvers.smt.masks import (encode_closure_relation, encode_layers, encode_powers,
                                    encode_preorder, encode_product, matrices_equal)
from hasse.solvers.smt.prove import and_, not_, or_
from hasse.solvers.smt.queries import Query, known_masks


# ---------------------------------------------------------------- hasse_closure_is_limit


def encode_hasse_diagram(r, n):
    """Strict order, covering relation (Hasse diagram on positions), classes and ``G = H or E``."""
    s = [[and_(r[q][k], not_(r[k][q])) for k in range(n)] for q in range(n)]
    ss = encode_product(s, s)
    h = [[and_(s[q][k], not_(ss[q][k])) for k in range(n)] for q in range(n)]
    e = [[and_(r[q][k], r[k][q]) for k in range(n)] for q in range(n)]
    g = [[or_([h[q][k], e[q][k]]) for k in range(n)] for q in range(n)]
    return s, h, e, g


def _without_class_edge(g, e, upper, lower):
    """``G`` minus every pair (x, y) with x in the class of ``upper`` and y in the class of ``lower``."""
    n = len(g)
    return [[and_(g[x][y], not_(and_(e[x][upper], e[y][lower]))) for y in range(n)] for x in range(n)]


def hasse_closure_is_limit(n: int, encoding: str = "better", planted: bool = False) -> list[Query]:
    """The closure of the Hasse diagram with classes as cliques is ``R*``; no Hasse edge can be left out.

    ``planted``: the false claims "the closure relates no two positions" and "every Hasse
    edge is implied by the others".
    """
    m, a = mask_and_dependency(n, encoding)
    if planted:
        return [] if n < 2 else _hasse_planted(m, a, n, encoding)
    if encoding == "naive":
        r = naive_limit(a, n)
        _, h, e, g = encode_hasse_diagram(r, n)
        c = encode_powers(g, max(n - 1, 0))[-1]
        closure = Query("closure of the Hasse diagram = R*", m, [], named_disjuncts(
            (f"closure[{q},{k}] != R*[{q},{k}]", z3.Xor(c[q][k], r[q][k])) for q in range(n) for k in range(n)))
        minimal = Query("no Hasse edge can be left out", m, [], named_disjuncts(
            (f"Hasse edge [{k}]->[{q}] implied by the others",
             and_(h[q][k], encode_powers(_without_class_edge(g, e, q, k), max(n - 1, 0))[-1][q][k]))
            for q in range(n) for k in range(n)))
        return [closure, minimal]
    r, hyp = encode_closure_relation(m, "R")
    _, h, e, g = encode_hasse_diagram(r, n)
    c, hyp_c = encode_closure_relation(g, "C")
    pairs = [(k, q) for k, q in canonical_roles(2) if max(k, q) < n]  # (k, q) relabelled 0, 1
    closure = Query("closure of the Hasse diagram = R*, (k, q) relabelled", m, hyp + hyp_c, named_disjuncts(
        (f"closure[{q},{k}] != R*[{q},{k}]", z3.Xor(c[q][k], r[q][k])) for k, q in pairs))
    if n < 2:
        return [closure]
    c2, hyp_c2 = encode_closure_relation(_without_class_edge(g, e, 1, 0), "C2")
    minimal = Query("no Hasse edge can be left out, edge [0]->[1]", m, hyp + hyp_c2,
                    {"Hasse edge [0]->[1] implied by the others": and_(h[1][0], c2[1][0])})
    return [closure, minimal]


def _hasse_planted(m, a, n, encoding):
    """The planted false variants of :func:`hasse_closure_is_limit`, on its hypotheses (``n >= 2``)."""
    if encoding == "naive":
        r = naive_limit(a, n)
        _, h, e, g = encode_hasse_diagram(r, n)
        c = encode_powers(g, max(n - 1, 0))[-1]
        c2 = encode_powers(_without_class_edge(g, e, 1, 0), max(n - 1, 0))[-1]
        hyp = hyp_c = hyp_c2 = []
    else:
        r, hyp = encode_closure_relation(m, "R")
        _, h, e, g = encode_hasse_diagram(r, n)
        c, hyp_c = encode_closure_relation(g, "C")
        c2, hyp_c2 = encode_closure_relation(_without_class_edge(g, e, 1, 0), "C2")
    related = Query("the closure of the Hasse diagram relates no two positions (planted false claim)", m,
                    hyp + hyp_c, named_disjuncts((f"closure[{q},{k}]", c[q][k])
                                                 for q in range(n) for k in range(n) if q != k))
    implied = Query("the Hasse edge [0]->[1] is implied by the others (planted false claim)", m, hyp + hyp_c2,
                    {"Hasse edge [0]->[1] not implied by the others": and_(h[1][0], not_(c2[1][0]))})
    return [related, implied]


# ---------------------------------------------------------------- sparse_realisation_keeps_hasse


def encode_sparse_realisation(r, n):
    """Classes, smallest members, the cycle successor and the sparse mask ``S`` built from ``R*``.

    ``S[t][x]``: ``t == x``; or ``t`` is the member after ``x`` in its class (members
    ascending, the largest followed by the smallest); or ``t`` and ``x`` are the
    smallest members of their classes and ``[x] -> [t]`` is a Hasse edge.
    """
    _, h, e, _ = encode_hasse_diagram(r, n)
    first = [z3.And([not_(e[q][j]) for j in range(q)]) if q else z3.BoolVal(True) for q in range(n)]
    last = [z3.And([not_(e[q][j]) for j in range(q + 1, n)]) if q < n - 1 else z3.BoolVal(True) for q in range(n)]
    nxt = [[None] * n for _ in range(n)]  # nxt[x][t]: t follows x in the cycle of its class
    for x in range(n):
        for t in range(n):
            if t > x:
                nxt[x][t] = z3.And([e[x][t]] + [not_(e[x][j]) for j in range(x + 1, t)])
            else:  # wrap around to the smallest member (t == x: a class of one position)
                nxt[x][t] = z3.And(last[x], e[x][t], first[t])
    s = [[z3.BoolVal(True) if t == x else or_([nxt[x][t], z3.And(first[t], first[x], h[t][x])]) for x in range(n)]
         for t in range(n)]
    return e, h, first, s


def _gt(a, b):
    return z3.UGT(a, b) if z3.is_bv(a) else a > b


def encode_predicted_distances(e, h, first, n, bits=None):
    """``pd[y][x]``, the predicted hop distance in ``S`` from ``x`` to ``y`` (``R*[y][x]``): with ``i``, ``j`` the
    ranks of ``x``, ``y`` in their classes and ``s`` sizes, ``(j - i) mod s`` in one class, else
    ``((-i) mod s_x) + delta([x], [y]) + j`` (``delta``: breadth-first layers over the Hasse diagram)."""
    one, zero = constant(1, bits), constant(0, bits)
    size = [z3.Sum([z3.If(e[c][j], one, zero) for j in range(n)]) for c in range(n)]
    rank = [z3.Sum([z3.If(e[c][j], one, zero) for j in range(c)]) if c else zero for c in range(n)]
    pd = [[None] * n for _ in range(n)]
    for x in range(n):
        layers = encode_layers(h, x, n)  # H joins whole classes, so layer t is the classes t Hasse edges above [x]
        for y in range(n):
            hops = first_index([layers[t][y] for t in range(n)], bits)
            around = z3.If(rank[x] == 0, zero, size[x] - rank[x])
            inside = z3.If(_gt(rank[x], rank[y]), rank[y] - rank[x] + size[x], rank[y] - rank[x])
            pd[y][x] = z3.If(e[y][x], inside, around + hops + rank[y])
    return pd


def _largest(values, where):
    """``max`` of ``values[q][k]`` over the pairs where ``where[q][k]`` (0 if none)."""
    n = len(values)
    best = values[0][0] * 0
    for q in range(n):
        for k in range(n):
            best = z3.If(and_(where[q][k], _gt(values[q][k], best)), values[q][k], best)
    return best


def sparse_realisation_keeps_hasse(n: int, encoding: str = "better", planted: bool = False) -> list[Query]:
    """The sparse mask ``S`` has the limit ``R*`` of ``M``; ``L*(S)`` equals the predicted depth.

    ``planted``: the false claim "``L*(S)`` (naive) / every predicted hop distance from
    position 0 (better) is at most ``n - 2``".
    """
    m, a = mask_and_dependency(n, encoding)
    if planted and n < 2:
        return []
    if encoding == "naive":
        r = naive_limit(a, n)
        e, h, first, s = encode_sparse_realisation(r, n)
        ps = encode_powers(s, n)
        if planted:
            depth = first_index([matrices_equal(ps[L], ps[L + 1]) for L in range(n)])
            return [Query("L*(S) <= n - 2 (planted false claim)", m, [], {"L*(S) = n - 1": depth == n - 1})]
        same = Query("R*(S) = R*(M)", m, [], named_disjuncts(
            (f"R*(S)[{q},{k}] != R*[{q},{k}]", z3.Xor(ps[max(n - 1, 0)][q][k], r[q][k]))
            for q in range(n) for k in range(n)))
        depth = first_index([matrices_equal(ps[L], ps[L + 1]) for L in range(n)])
        deep = Query("L*(S) = predicted depth", m, [], {"L*(S) != predicted": depth != _largest(encode_predicted_distances(e, h, first, n), r)})
        return [same, deep]
    # Over preorders R (the limits R*, encode_preorder), then a certificate: R and the
    # predicted distances pd satisfy the equations whose only solution is reachability
    # and hop distance in S (solvers.smt.masks.encode_distances): R*(S) = R, dist_S = pd.
    r, hyp = encode_preorder(n, "R")
    e, h, first, s = encode_sparse_realisation(r, n)
    bits = (3 * n + 1).bit_length() + 1  # distances and sizes stay below 3n
    pd = encode_predicted_distances(e, h, first, n, bits)
    known = {name: values | np.eye(n, dtype=bool) for name, values in known_masks(n).items()}  # their limits
    if planted:
        return [Query("every predicted hop distance from 0 is at most n - 2 (planted false claim)", r, hyp,
                      named_disjuncts((f"pd[{y},0] = n - 1", and_(r[y][0], pd[y][0] == n - 1)) for y in range(n)),
                      logic="QF_BV", admits=known)]
    queries = []
    for x in range(n):  # one pair of queries per source x: smaller problems, solved one after the other
        closed, justified, shortest = [], [], []
        for y in range(n):
            steps = []
            for j in range(n):
                if j == y:
                    continue
                via = and_(s[y][j], r[j][x])
                closed.append((f"S[{y},{j}] and R*[{j},{x}] but not R*[{y},{x}]", and_(via, not_(r[y][x]))))
                shortest.append((f"pd[{y},{x}] > pd[{j},{x}] + 1 with S[{y},{j}]",
                                 and_(via, _gt(pd[y][x], pd[j][x] + 1))))
                steps.append(and_(via, pd[y][x] == pd[j][x] + 1))
            if y != x:
                justified.append((f"no step of S justifies pd[{y},{x}]", and_(r[y][x], not_(or_(steps)))))
        justified.append((f"pd[{x},{x}] != 0", pd[x][x] != 0))
        queries.append(Query(f"source {x}: R*(S) = R* (closed under S, justified by S-steps)", r, hyp,
                             named_disjuncts(closed + justified), incremental=True, logic="QF_BV", admits=known))
        queries.append(Query(f"source {x}: no path of S shorter than pd", r, hyp, named_disjuncts(shortest),
                             incremental=True, logic="QF_BV", admits=known))
    return queries

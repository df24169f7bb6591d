"""solvers/smt/sparse.py: the canonical-numbering encoding of sparse_realisation_keeps_hasse (issue 14).

The reference below is written here, independently of theory/ and of the encoding:
closure by repeated boolean products, classes and the covering relation from the
closure, the sparse mask from its definition, hop distances by breadth-first search,
the predicted distance by its formula. The encoding's terms (the queries' hypotheses
and negated claims, ``e``, Hasse edges, ``S``, ``pd``) are evaluated on concrete
preorders by substitution and compared with it. Planted bugs: a symmetry breaking
that drops some preorders (caught by the relabelling check and by the run-time
control), a predicted distance one too long across classes (caught by the
evaluation and refuted by Z3 on the canonical encoding).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import z3

from hasse.proofs import registry
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, run_theorem
from hasse.solvers.smt import hasse as z3_hasse
from hasse.solvers.smt import sparse as z3_sparse
from hasse.solvers.smt.queries import check_query, prove

# ---------------------------------------------------------------- the independent reference


def closure(mask):
    """``R[y][x]``: ``x`` reaches ``y`` (``mask[q][k]``: ``q`` attends ``k``), reflexive."""
    n = len(mask)
    r = np.asarray(mask, dtype=bool) | np.eye(n, dtype=bool)
    while True:
        nxt = (r.astype(int) @ r.astype(int)) > 0
        if (nxt == r).all():
            return r
        r = nxt


def structure(r):
    """Classes (member lists, ascending), class index per position, Hasse edges between positions."""
    n = len(r)
    label = [-1] * n
    classes = []
    for p in range(n):
        if label[p] < 0:
            members = [q for q in range(n) if r[p][q] and r[q][p]]
            for q in members:
                label[q] = len(classes)
            classes.append(members)
    strict = r & ~r.T
    hasse = np.zeros((n, n), dtype=bool)
    for y in range(n):
        for x in range(n):
            hasse[y][x] = strict[y][x] and not any(strict[y][j] and strict[j][x] for j in range(n))
    return classes, label, hasse


def sparse(r):
    """The sparse realisation by its definition: diagonal, one cycle per class, smallest-to-smallest Hasse edges."""
    n = len(r)
    classes, label, hasse = structure(r)
    s = np.eye(n, dtype=bool)
    for members in classes:
        for i, x in enumerate(members):
            s[members[(i + 1) % len(members)]][x] = True  # the next member attends x
    for y in range(n):
        for x in range(n):
            if hasse[y][x] and y == classes[label[y]][0] and x == classes[label[x]][0]:
                s[y][x] = True
    return s


def bfs(s):
    """``dist[y][x]``: fewest steps ``x -> t`` (``s[t][x]``) from ``x`` to ``y``; -1 if unreachable."""
    n = len(s)
    dist = -np.ones((n, n), dtype=int)
    for x in range(n):
        dist[x][x], frontier = 0, [x]
        while frontier:
            nxt = []
            for p in frontier:
                for t in range(n):
                    if s[t][p] and dist[t][x] < 0:
                        dist[t][x] = dist[p][x] + 1
                        nxt.append(t)
            frontier = nxt
    return dist


def predicted(r):
    """``pd[y][x]`` by the statement's formula (class distances by breadth-first search over the Hasse edges)."""
    n = len(r)
    classes, label, hasse = structure(r)
    delta = bfs(hasse | np.eye(n, dtype=bool))
    pd = np.zeros((n, n), dtype=int)
    for y in range(n):
        for x in range(n):
            i, j, size = classes[label[x]].index(x), classes[label[y]].index(y), len(classes[label[x]])
            pd[y][x] = (j - i) % size if label[x] == label[y] else (-i) % size + delta[y][x] + j
    return pd


def is_canonical(r):
    """Classes are runs of consecutive positions and a later position reaches an earlier one only in its class."""
    classes, _, _ = structure(r)
    runs = all(m == list(range(m[0], m[-1] + 1)) for m in classes)
    n = len(r)
    return runs and not any(r[q][k] and not r[k][q] for q in range(n) for k in range(q + 1, n))


def canonical_relabelling(r):
    """``perm[p]``: new position of ``p``; classes in an order extending the order between them, members ascending."""
    classes, label, _ = structure(r)
    order, placed = [], set()
    while len(order) < len(classes):  # a class whose reachers (other classes) are all placed
        for c, members in enumerate(classes):
            x = members[0]
            if c not in placed and all(label[k] in placed or label[k] == c for k in range(len(r)) if r[x][k]):
                order.append(c)
                placed.add(c)
                break
    perm, nxt = [0] * len(r), 0
    for c in order:
        for p in classes[c]:
            perm[p], nxt = nxt, nxt + 1
    return perm


def relabel(matrix, perm):
    out = np.zeros_like(matrix)
    for a in range(len(perm)):
        for b in range(len(perm)):
            out[perm[a]][perm[b]] = matrix[a][b]
    return out


def preorders(n):
    for bits in itertools.product([False, True], repeat=n * (n - 1)):
        m = np.zeros((n, n), dtype=bool)
        m[~np.eye(n, dtype=bool)] = bits
        if (closure(m) == (m | np.eye(n, dtype=bool))).all():
            yield m | np.eye(n, dtype=bool)


def random_preorders(n, count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield closure(rng.random((n, n)) < rng.uniform(0.05, 0.5))


# ---------------------------------------------------------------- evaluating the encoding's terms


def values(r_vars, r):
    n = len(r)
    return [(r_vars[q][k], z3.BoolVal(bool(r[q][k]))) for q in range(n) for k in range(n) if not z3.is_true(r_vars[q][k])]


def evaluate(term, subst):
    out = z3.simplify(z3.substitute(term, *subst) if subst else term)
    if z3.is_bool(out):
        assert z3.is_true(out) or z3.is_false(out), out
        return z3.is_true(out)
    return out.as_long()


def encoded_terms(r):
    """``e``, Hasse edges, ``S`` and ``pd`` of the encoding (solvers.z3_hasse, as z3_sparse uses them) on a concrete ``R``."""
    n = len(r)
    rb = [[z3.BoolVal(bool(r[q][k])) for k in range(n)] for q in range(n)]
    e, h, first, s = z3_hasse.encode_sparse_realisation(rb, n)
    pd = z3_hasse.encode_predicted_distances(e, h, first, n, (3 * n + 1).bit_length() + 1)
    grid = lambda t: np.array([[evaluate(t[q][k], []) for k in range(n)] for q in range(n)])  # noqa: E731
    return grid(e), grid(h), grid(s), grid(pd)


def mismatches(r):
    """Where the encoding's terms differ from the reference on the preorder ``r`` (empty: none)."""
    classes, label, hasse = structure(r)
    e, h, s, pd = encoded_terms(r)
    out = []
    same = np.array([[label[q] == label[k] for k in range(len(r))] for q in range(len(r))])
    for name, got, want in (("classes", e, same), ("Hasse", h, hasse), ("S", s, sparse(r))):
        if not np.array_equal(got.astype(bool), want):
            out.append(name)
    if not np.array_equal(np.where(r, pd, 0), np.where(r, predicted(r), 0)):
        out.append("pd")
    return out


def test_reference_agrees_with_itself_on_the_statement():
    """The statement, on the reference: R*(S) = R*, dist_S = pd on R*, L*(S) = max pd (n = 1 … 4, all preorders)."""
    for n in range(1, 5):
        for r in preorders(n):
            s = sparse(r)
            assert np.array_equal(closure(s), r)
            dist = bfs(s)
            assert np.array_equal(np.where(r, dist, 0), np.where(r, predicted(r), 0))


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_encoded_terms_equal_the_reference_on_random_preorders(n):
    for r in random_preorders(n, 40, seed=n):
        assert mismatches(r) == [], r.astype(int).tolist()


@pytest.mark.parametrize("n", [3, 4, 5])
def test_queries_evaluated_on_concrete_preorders(n):
    """Hypotheses (transitivity, canonical numbering) hold exactly on canonical preorders; no negated claim holds."""
    queries = z3_sparse.sparse_realisation_keeps_hasse(n)
    r_vars = queries[0].mask
    for r in random_preorders(n, 25, seed=10 + n):
        for candidate in (r, relabel(r, canonical_relabelling(r))):
            subst = values(r_vars, candidate)
            for q in queries:
                assert all(evaluate(h, subst) for h in q.hypotheses) == is_canonical(candidate)
                assert not any(evaluate(t, subst) for t in q.target.values()), q.name


def uncovered(n):
    """Preorders of ``n`` positions whose canonical relabelling the encoding's canonical_numbering rejects."""
    r_vars = [[z3.BoolVal(True) if q == k else z3.Bool(f"R_{q}_{k}") for k in range(n)] for q in range(n)]
    clauses = z3_sparse.canonical_numbering(r_vars, n)
    out = []
    for r in preorders(n):
        c = relabel(r, canonical_relabelling(r))
        assert np.array_equal(sparse(c), relabel(sparse(r), canonical_relabelling(r)))  # S(sigma R) = sigma S(R)
        assert np.array_equal(predicted(c), relabel(predicted(r), canonical_relabelling(r)))
        if not all(evaluate(t, values(r_vars, c)) for t in clauses):
            out.append(r)
    return out


def test_every_preorder_of_4_has_an_admitted_relabelling():
    assert uncovered(4) == []


def test_planted_too_strong_symmetry_breaking_is_caught(monkeypatch):
    """Planted: also 'any two classes are comparable' — sound for neither the relabelling check nor the control."""
    original = z3_sparse.canonical_numbering

    def too_strong(r, n):
        e = z3_sparse.classes_of(r)
        return original(r, n) + [z3.Or(r[k][q], e[k][q]) for q in range(n) for k in range(q + 1, n)]

    monkeypatch.setattr(z3_sparse, "canonical_numbering", too_strong)
    assert len(uncovered(4)) > 0
    result = run_theorem(registry.get("sparse_realisation_keeps_hasse"), 4, "z3", Context(timeout=60))
    assert result.verdict == UNKNOWN and result.reason.startswith("vacuous premises"), result.reason


def test_planted_predicted_distance_bug_is_caught(monkeypatch):
    """Planted: pd one too long across classes — the evaluation sees it and Z3 refutes it on the canonical encoding."""
    original = z3_hasse.encode_predicted_distances

    def off_by_one(e, h, first, n, bits=None):
        pd = original(e, h, first, n, bits)
        return [[z3.If(e[y][x], pd[y][x], pd[y][x] + 1) for x in range(n)] for y in range(n)]

    monkeypatch.setattr(z3_hasse, "encode_predicted_distances", off_by_one)
    assert "pd" in mismatches(closure(np.tri(3, k=-1, dtype=bool)))
    answers = prove(z3_sparse.sparse_realisation_keeps_hasse(3), lambda: 60)
    assert answers[-1].status == "sat"
    result = run_theorem(registry.get("sparse_realisation_keeps_hasse"), 3, "z3", Context(timeout=60))
    assert result.verdict == REFUTED


@pytest.mark.parametrize("n", [1, 2, 5])
def test_proved_with_controls(n):
    result = run_theorem(registry.get("sparse_realisation_keeps_hasse"), n, "z3", Context(timeout=120))
    assert result.verdict == PROVED, result.reason


def test_mixed_limit_is_a_canonical_preorder():
    for n in range(1, 9):
        r = z3_sparse.mixed_limit(n) | np.eye(n, dtype=bool)
        assert np.array_equal(closure(r), r) and is_canonical(r)


def test_planted_queries_are_refuted_under_the_canonical_numbering():
    answers = [check_query(q, 60) for q in z3_sparse.sparse_realisation_keeps_hasse(4, planted=True)]
    assert [a.status for a in answers] == ["sat"]


def test_other_encodings_are_passed_through():
    assert [q.name for q in z3_sparse.sparse_realisation_keeps_hasse(3, "preorder")] == \
        [q.name for q in z3_hasse.sparse_realisation_keeps_hasse(3, "better")]
    with pytest.raises(ValueError):
        z3_sparse.sparse_realisation_keeps_hasse(3, "fast")

"""The Z3 encodings of solvers.z3_masks / z3_claims / z3_hasse against the plain definitions.

Each better encoding is built from pieces shown here to agree with the plain
definition (numpy, not the engine) on every mask of size n <= 3 (2^(n(n-1)) = 1, 4,
64 masks) and, where cheap, every mask of size 4 (4096) or random ones:
columns of powers = powers; breadth-first layers = hop distances; the closure and
distance characterisations have exactly one solution, the closure and the hop
distances; the preorders are exactly the limits; sorting by distance is a
relabelling every mask admits; the per-source depths give the global depth; the
predicted distances of the sparse realisation are its hop distances.
"""

import itertools

import numpy as np
import pytest
import z3

from hasse.solvers.smt import claims as z3_claims
from hasse.solvers.smt import hasse as z3_hasse
from hasse.solvers.smt.masks import (encode_closure_relation, encode_column_powers, encode_dependency, encode_distances,
                                    encode_layers, encode_mask, encode_powers, encode_preorder, sorted_by_distance)
from hasse.solvers.smt.queries import prove


def every_mask(n):
    for bits in itertools.product((False, True), repeat=n * (n - 1)):
        m = np.zeros((n, n), dtype=bool)
        m[~np.eye(n, dtype=bool)] = bits
        yield m


def some_masks(n, count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        m = rng.random((n, n)) < rng.uniform(0.1, 0.6)
        np.fill_diagonal(m, False)
        yield m


def np_powers(mask, upto):
    a = (mask | np.eye(len(mask), dtype=bool)).astype(np.int64)
    out = [np.eye(len(mask), dtype=bool)]
    for _ in range(upto):
        out.append((a @ out[-1].astype(np.int64)) > 0)
    return out


def np_distances(mask):
    """dist[q, k] = fewest edges k -> q (first power that has the pair), -1 if none."""
    n = len(mask)
    ps = np_powers(mask, n)
    return np.array([[next((L for L, p in enumerate(ps) if p[q, k]), -1) for k in range(n)] for q in range(n)])


class Evaluator:
    """Evaluate Z3 terms over the mask variables at a concrete mask."""

    def __init__(self, m):
        self.m = m

    def __call__(self, term, mask):
        n = len(mask)
        pairs = [(self.m[q][k], z3.BoolVal(bool(mask[q, k])))
                 for q in range(n) for k in range(n) if z3.is_const(self.m[q][k]) and q != k]
        value = z3.simplify(z3.substitute(term, *pairs) if pairs else term)
        return value.as_long() if z3.is_int_value(value) else z3.is_true(value)


def masks_up_to(n_max, extra=0, seed=0):
    for n in range(1, n_max + 1):
        yield from ((n, m) for m in every_mask(n))
    if extra:
        yield from ((n_max + 1, m) for m in some_masks(n_max + 1, extra, seed))


@pytest.mark.parametrize("n", range(1, 5))
def test_powers_columns_and_layers_match_numpy(n):
    m = encode_mask(n)
    a = encode_dependency(m)
    ev = Evaluator(m)
    plain = encode_powers(a, n + 1)
    cols = {k: encode_column_powers(a, k, n + 1) for k in range(n)}
    layers = {k: encode_layers(m, k, n) for k in range(n)}
    masks = every_mask(n) if n <= 3 else some_masks(n, 12, seed=n)
    for mask in masks:
        ps, dist = np_powers(mask, n + 1), np_distances(mask)
        for L in range(n + 2):
            for q in range(n):
                for k in range(n):
                    assert ev(plain[L][q][k], mask) == ps[L][q, k]
                    assert ev(cols[k][L][q], mask) == ps[L][q, k]
        for k in range(n):
            for t in range(n + 1):
                assert [ev(x, mask) for x in layers[k][t]] == [dist[q, k] == t for q in range(n)]


@pytest.mark.parametrize("n", range(1, 4))
@pytest.mark.parametrize("bits", [None, 6])
def test_closure_and_distance_characterisations_have_one_solution(n, bits):
    m = encode_mask(n)
    for mask in every_mask(n):
        fixed = [m[q][k] == bool(mask[q, k]) for q in range(n) for k in range(n) if q != k]
        expected, dist = np_powers(mask, n)[-1], np_distances(mask)
        c, hyp = encode_closure_relation(m, "C")
        cd, d, hyp_d = encode_distances(m, "D", bits)
        s = z3.Solver()
        s.add(*fixed, *hyp, *hyp_d)
        assert s.check() == z3.sat
        model = s.model()
        value = lambda t: z3.is_true(model.eval(t, model_completion=True))  # noqa: E731
        assert [[value(c[q][k]) for k in range(n)] for q in range(n)] == expected.tolist()
        assert [[value(cd[q][k]) for k in range(n)] for q in range(n)] == expected.tolist()
        for q in range(n):
            for k in range(n):
                if expected[q, k]:
                    got = model.eval(d[q][k], model_completion=True)
                    assert (got.as_long()) == dist[q, k]
        # the only solution: any other closure or distance is unsat
        other = [z3.Xor(c[q][k], bool(expected[q, k])) for q in range(n) for k in range(n)]
        other += [z3.Xor(cd[q][k], bool(expected[q, k])) for q in range(n) for k in range(n)]
        other += [z3.And(cd[q][k], d[q][k] != int(dist[q, k])) for q in range(n) for k in range(n) if expected[q, k]]
        s.add(z3.Or(other))
        assert s.check() == z3.unsat


@pytest.mark.parametrize("n", range(1, 4))
def test_preorders_are_exactly_the_limits(n):
    r, hyp = encode_preorder(n)
    limits = {np_powers(mask, n)[-1].tobytes() for mask in every_mask(n)}
    preorders = set()
    for rel in every_mask(n):
        rel = rel | np.eye(n, dtype=bool)
        pairs = [(r[q][k], z3.BoolVal(bool(rel[q, k]))) for q in range(n) for k in range(n) if q != k]
        if all(z3.is_true(z3.simplify(z3.substitute(h, *pairs))) for h in hyp):
            preorders.add(rel.tobytes())
    assert preorders == limits


@pytest.mark.parametrize("n", range(2, 5))
@pytest.mark.parametrize("first", [1, 2, 3])
def test_sorting_by_distance_is_a_relabelling_every_mask_admits(n, first):
    """Positions 0 … first-1 stay, the others are sorted by hop distance from 0: the constraints then hold."""
    if first >= n:
        pytest.skip("nothing left to sort")
    m = encode_mask(n)
    a = encode_dependency(m)
    constraints = z3.And(sorted_by_distance(encode_column_powers(a, 0, n + 1), first))
    ev = Evaluator(m)
    for mask in every_mask(n):
        dist = np_distances(mask)[:, 0]
        rest = sorted(range(first, n), key=lambda p: (dist[p] < 0, dist[p], p))
        perm = list(range(first)) + rest  # new position i is old position perm[i]
        relabelled = mask[np.ix_(perm, perm)]
        assert ev(constraints, relabelled)


def test_canonical_roles_are_the_set_partitions():
    assert [len(z3_claims.canonical_roles(k)) for k in range(1, 6)] == [1, 2, 5, 15, 52]  # Bell numbers


@pytest.mark.parametrize("n", range(1, 5))
def test_the_depth_is_the_largest_depth_of_a_source(n):
    """L* (plain, whole matrices) = max over sources k of L*_k (the better encoding, with k relabelled 0)."""
    m = encode_mask(n)
    a = encode_dependency(m)
    ev = Evaluator(m)
    plain = z3_claims.encode_convergence_depth(encode_powers(a, n))
    longest, _ = z3_claims.encode_longest_distance([encode_layers(m, k, n) for k in range(n)])
    per_source = z3_claims.encode_convergence_depth(encode_column_powers(a, 0, n))
    longest_0, _ = z3_claims.encode_longest_distance([encode_layers(m, 0, n)])
    for mask in (every_mask(n) if n <= 3 else some_masks(n, 40, seed=4)):
        swaps = [list(range(n)) for _ in range(n)]
        for k in range(n):
            swaps[k][0], swaps[k][k] = k, 0
        relabelled = [mask[np.ix_(p, p)] for p in swaps]
        depth = ev(plain, mask)
        ps = np_powers(mask, n)
        assert depth == next(L for L in range(n) if np.array_equal(ps[L], ps[L + 1]))
        assert depth == max(ev(per_source, r) for r in relabelled)
        assert ev(longest, mask) == max(ev(longest_0, r) for r in relabelled) == np_distances(mask).max()


@pytest.mark.parametrize("n", range(1, 5))
def test_predicted_distances_are_the_hop_distances_of_the_sparse_realisation(n):
    from hasse.proofs.sparse_realisation_keeps_hasse import predicted_distances
    from hasse.theory import batch
    from hasse.theory.sparse import sparse_realisation

    r, _ = encode_preorder(n)
    e, h, first, s = z3_hasse.encode_sparse_realisation(r, n)
    pd = z3_hasse.encode_predicted_distances(e, h, first, n)
    for mask in (every_mask(n) if n <= 3 else some_masks(n, 25, seed=5)):
        limit = np_powers(mask, n)[-1]
        pairs = [(r[q][k], z3.BoolVal(bool(limit[q, k]))) for q in range(n) for k in range(n) if q != k]
        value = lambda t: z3.simplify(z3.substitute(t, *pairs) if pairs else t)  # noqa: E731
        sparse = np.array([[z3.is_true(value(s[q][k])) for k in range(n)] for q in range(n)])
        assert np.array_equal(sparse, sparse_realisation(mask))  # the encoding builds the kit's S
        dist = np_distances(sparse)
        batched, _ = predicted_distances(batch.pack(mask[None]))
        for q in range(n):
            for k in range(n):
                if limit[q, k]:
                    assert value(pd[q][k]).as_long() == dist[q, k] == batched[0, q, k]


@pytest.mark.parametrize("encoding", z3_claims.ENCODINGS)
def test_false_claims_are_refuted_with_real_counterexamples(encoding):
    """A^(n-2) = A^(n-1) and 'A^(n-2) is transitive' are false at n = 4: both encodings find a mask that breaks them."""
    from hasse.proofs import limit_is_preorder, reach_stable_by_n_minus_1

    n = 4
    answers = prove(z3_claims.reach_stable_by_n_minus_1(n, encoding, at=n - 2), lambda: 60)
    assert answers[0].status == "sat"
    ps = np_powers(answers[0].value, n)
    assert not np.array_equal(ps[n - 2], ps[n - 1])
    assert reach_stable_by_n_minus_1.confirm(answers[0].value, at=n - 2)["confirmed"]
    answers = prove(z3_claims.limit_is_preorder(n, encoding, at=n - 2), lambda: 60)
    assert answers[0].status == "sat"
    r = np_powers(answers[0].value, n)[n - 2].astype(np.int64)
    assert ((r @ r > 0) & ~r.astype(bool)).any()  # A^(n-2) is not transitive on this mask
    assert limit_is_preorder.confirm(answers[0].value, at=n - 2)["confirmed"]


def test_the_encodings_do_not_import_the_code_they_check():
    import subprocess
    import sys

    # hasse.theory's __init__, its version, its lazy-export helper and the clock of --timeout (deadline) are all that
    # `import hasse.solvers` may load of theory.
    code = ("import sys, hasse.solvers.smt.masks, hasse.solvers.smt.claims, hasse.solvers.smt.hasse, "
            "hasse.solvers.smt.queries, hasse.solvers.smt.prove; "
            "bad = [m for m in sys.modules if m.startswith('hasse.theory') "
            "and m not in ('hasse.theory', 'hasse.theory.version', 'hasse.theory.lazy', 'hasse.theory.deadline')]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr

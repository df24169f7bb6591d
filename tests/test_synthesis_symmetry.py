"""symmetry.automorphisms: the group order equals a brute-force count; every permutation is an automorphism."""

import itertools

import numpy as np
import pytest

from hasse.solvers.synthesis.problem import SynthesisBug
from hasse.solvers.synthesis.symmetry import automorphisms, check_automorphisms, lex_leader_perms


def _closure(rel):
    out = rel | np.eye(rel.shape[0], dtype=bool)
    for k in range(rel.shape[0]):
        out = out | (out[:, [k]] & out[[k], :])
    return out


def _brute(target):
    n = target.shape[0]
    return sum(np.array_equal(target[np.ix_(p, p)], target) for p in map(list, itertools.permutations(range(n))))


def _targets():
    rng = np.random.default_rng(3)
    for _ in range(25):
        n = int(rng.integers(1, 8))
        yield _closure(rng.random((n, n)) < 0.25)
    yield np.ones((6, 6), dtype=bool)
    yield np.kron(np.eye(3, dtype=bool), np.tril(np.ones((2, 2), dtype=bool)))
    yield np.kron(np.eye(2, dtype=bool), np.ones((3, 3), dtype=bool))
    yield _closure(np.kron(np.tril(np.ones((3, 3), dtype=bool)), np.ones((2, 2), dtype=bool)))


@pytest.mark.parametrize("target", list(_targets()))
def test_order_matches_brute_force(target):
    perms, order = automorphisms(target)
    assert order == _brute(target)
    check_automorphisms(target, perms)


def test_non_automorphism_is_rejected():
    target = np.tril(np.ones((3, 3), dtype=bool))
    assert lex_leader_perms(target) == []
    with pytest.raises(SynthesisBug):
        check_automorphisms(target, [np.array([1, 0, 2])])

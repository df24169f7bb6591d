"""Run-time controls of the Z3 checks (issue 10, point 5): a verdict stands only if the
premises admit known non-trivial masks and a planted false variant of the claim is refuted.

The planted bugs: an encoding whose premises admit only the empty mask, symmetry
breaking so strong that it excludes the causal mask, symmetry breaking that keeps the
causal and bidirectional masks but cuts away every deep mask, and a no-residual search
that forgets the residual in its planted control. Each leaves the claim's own queries
``unsat`` (the old pipeline said PROVED, shown here) and must now come out unknown.
"""

import json

import numpy as np
import pytest
import z3

from hasse.proofs import registry
from hasse.proofs.theorem import PROVED, UNKNOWN, Context, run_theorem
from hasse.solvers.smt import claims as z3_claims
from hasse.solvers.smt import hasse as z3_hasse
from hasse.solvers.smt.masks import encode_column_powers
from hasse.solvers.smt.prove import FALSE, TRUE
from hasse.solvers.smt.queries import known_masks, prove

ENCODERS = {name: getattr(z3_hasse if name in ("hasse_closure_is_limit", "sparse_realisation_keeps_hasse")
                          else z3_claims, name) for name in registry.MASK_THEOREMS}


def np_depth(mask):
    """Largest finite hop distance, by plain numpy powers (the reference for the planted claims)."""
    n = len(mask)
    a = (mask | np.eye(n, dtype=bool)).astype(np.int64)
    p, depth = np.eye(n, dtype=bool), 0
    for level in range(1, n + 1):
        nxt = (a @ p.astype(np.int64)) > 0
        if (nxt != p).any():
            depth = level
        p = nxt
    return depth


@pytest.mark.parametrize("name", registry.MASK_THEOREMS)
@pytest.mark.parametrize("encoding", ["naive", "better"])
def test_every_z3_verdict_records_passing_controls(name, encoding):
    theorem = registry.get(name)
    for n in range(2, 5):
        outcome = theorem.z3_check(n, Context(), encoding=encoding)
        assert outcome.verdict == PROVED, (n, outcome.reason)
        controls = outcome.details["controls"]
        assert controls["passed"] and controls["planted"], controls
        assert {c["admits"] for c in controls["premises"]} >= set(known_masks(n))  # z3_sparse adds a mixed limit
        expected = "unsat" if theorem.existence else "sat"
        assert all(c["status"] == expected for c in controls["planted"])


@pytest.mark.parametrize("encoding", ["naive", "better"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_planted_claims_are_really_false_the_models_show_it(encoding, n):
    """The planted reach claims are refuted by masks that numpy shows to have a hop distance of n - 1."""
    for build in (z3_claims.reach_monotone_in_depth, z3_claims.reach_stable_by_n_minus_1):
        for query in build(n, encoding, planted=True):
            answer = prove([query], lambda: 60)[0]
            assert answer.status == "sat"
            assert np_depth(answer.value) == n - 1


def test_the_known_masks_are_what_their_names_say():
    from hasse.theory.catalog import build_mask

    for name, values in known_masks(5).items():
        expected = build_mask(name).matrix & ~np.eye(5, dtype=bool)
        assert np.array_equal(values, expected), name


def _z3_result(name, n=4):
    return run_theorem(registry.get(name), n, "z3", Context(timeout=60))


def test_premises_that_admit_only_the_empty_mask_are_unknown_not_proved(monkeypatch):
    """Planted: the mask variables are replaced by constant False (only the empty mask is encoded)."""
    only_empty = lambda n, **kw: [[FALSE] * n for _ in range(n)]  # noqa: E731
    monkeypatch.setattr(z3_claims, "encode_mask", only_empty)
    # the better sparse encoding quantifies over preorders R: its premises admit only R = I
    identity = lambda n, name="R": ([[TRUE if q == k else FALSE for k in range(n)] for q in range(n)], [])  # noqa: E731
    monkeypatch.setattr(z3_hasse, "encode_preorder", identity)
    for name in ("reach_monotone_in_depth", "reach_stable_by_n_minus_1", "limit_is_preorder",
                 "quotient_is_partial_order", "hasse_closure_is_limit", "sparse_realisation_keeps_hasse"):
        assert all(a.status == "unsat" for a in prove(ENCODERS[name](4), lambda: 60)), name  # old: PROVED
        result = _z3_result(name)
        assert result.verdict == UNKNOWN, name
        assert result.reason.startswith("vacuous premises"), result.reason
        assert result.details["controls"]["passed"] is False


def test_symmetry_breaking_that_excludes_the_causal_mask_is_vacuous(monkeypatch):
    """Planted: 'sorting' that makes every position unreachable from position 0."""
    def isolate_zero(columns, first):
        return [z3.Not(col[q]) for col in columns for q in range(1, len(col)) if not z3.is_false(col[q])]

    monkeypatch.setattr(z3_claims, "sorted_by_distance", isolate_zero)
    for name in ("reach_monotone_in_depth", "reach_stable_by_n_minus_1", "limit_is_preorder"):
        assert all(a.status == "unsat" for a in prove(ENCODERS[name](4), lambda: 60)), name
        result = _z3_result(name)
        assert (result.verdict, result.reason.split(":")[0]) == (UNKNOWN, "vacuous premises"), name


def test_too_strong_symmetry_breaking_is_caught_by_the_planted_claim(monkeypatch):
    """Planted: symmetry breaking that also demands every position reachable from 0 be at distance <= 1.

    The causal and the bidirectional mask still pass it (so the premise control passes),
    but no mask with a long path does: the planted false claim 'A^(n-2) = A^(n-1)' is not
    refuted any more, so the verdict is unknown ('control failed').
    """
    real = z3_claims.sorted_by_distance

    def shallow(columns, first):
        return real(columns, first) + [col_q == columns[-1][q] for q, col_q in enumerate(columns[1])]

    monkeypatch.setattr(z3_claims, "sorted_by_distance", shallow)
    for name in ("reach_monotone_in_depth", "reach_stable_by_n_minus_1", "limit_is_preorder"):
        assert all(a.status == "unsat" for a in prove(ENCODERS[name](4), lambda: 60)), name  # old: PROVED
        result = _z3_result(name)
        assert result.verdict == UNKNOWN, name
        assert result.reason.startswith("control failed: the planted false claim"), result.reason
        premises = result.details["controls"]["premises"]
        assert premises and all(p["status"] == "sat" for p in premises)


def test_a_witness_search_that_finds_witnesses_everywhere_is_caught(monkeypatch):
    """Planted: the dependency ignores the residual flag, so the false 'with the residual' search finds a witness."""
    real = z3_claims.encode_dependency
    monkeypatch.setattr(z3_claims, "encode_dependency", lambda m, residual=True: real(m, residual=False))
    result = _z3_result("no_residual_can_oscillate")
    assert result.verdict == UNKNOWN
    assert "expected unsat" in result.reason


def test_the_controls_reach_the_certificate(tmp_path, capsys):
    from hasse.cli import main

    cert = tmp_path / "cert.json"
    assert main(["prove", "limit_is_preorder", "--n", "3", "--method", "z3", "--certificate", str(cert)]) == 0
    capsys.readouterr()
    (result,) = json.loads(cert.read_text())["results"]
    controls = result["details"]["controls"]
    assert controls["passed"] and controls["planted"][0]["status"] == "sat"
    assert [p["admits"] for p in controls["premises"]] == ["causal:n=3", "bidirectional:n=3"]

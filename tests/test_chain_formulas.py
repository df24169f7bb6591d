"""The chain-lifted formulas (theory.masks.sparse_chains, theory.chain_formulas): each realises its target.

References: the catalogue's target built independently, theory.synthesis.realises (matrix
powers) and a walk-by-walk check of every pair's witness; the all-n claim by prove_realises;
planted bugs (an edge removed, a near-miss target) are caught.
"""

from __future__ import annotations

import numpy as np
import pytest

from hasse.theory.catalog import build_mask
from hasse.theory.chain_formulas import BUILD, TARGETS, WITNESSES
from hasse.theory.spanner_formulas import formula_designs
from hasse.theory.synthesis import realises

CASES = [("sparse_block_causal", {"n": 12, "block": 3}), ("sparse_block_causal", {"n": 16, "block": 4}),
         ("sparse_block_causal", {"n": 9, "block": 1}), ("sparse_block_causal", {"n": 6, "block": 6}),
         ("sparse_chunked", {"n": 13, "chunk": 5}), ("sparse_chunked", {"n": 16, "chunk": 16}),
         ("sparse_prefix_lm", {"n": 12, "prefix": 5}), ("sparse_prefix_lm", {"n": 9, "prefix": 0}),
         ("sparse_prefix_lm", {"n": 7, "prefix": 7})]
TILES = {"sparse_block_causal": ({"units": 0}, {"units": 1}, {"units": 2}),
         "sparse_chunked": ({"tile": 0}, {"tile": 2}), "sparse_prefix_lm": ({},)}


def walk_failures(mask: np.ndarray, target: np.ndarray, witness, layers: int) -> int:
    """Pairs of the target whose witness walk is not a walk of ``mask or I`` of ``layers`` hops."""
    size = mask.shape[0]
    a = mask | np.eye(size, dtype=bool)
    bad = 0
    for q, k in np.argwhere(target):
        if q == k:
            continue
        path = [int(k), *(int(w) for w in witness(int(q), int(k))), int(q)]
        if len(path) != layers + 1 or not all(0 <= x < size for x in path) or \
                not all(a[y, x] for x, y in zip(path, path[1:])):
            bad += 1
    return bad


@pytest.mark.parametrize("entry,params", CASES)
@pytest.mark.parametrize("layers", [1, 2, 3, 4])
def test_realises_and_every_walk_checks(entry, params, layers):
    target = build_mask(TARGETS[entry](**params)).matrix
    for tiling in TILES[entry]:
        p = {**params, "layers": layers, **tiling}
        mask = BUILD[entry](**p).matrix
        assert np.diag(mask).all() and not (mask & ~target).any()
        assert realises(mask, target, layers)
        assert walk_failures(mask, target, WITNESSES[entry](**p), layers) == 0


def test_a_dropped_edge_is_caught_by_realises_and_the_walks():
    params = {"n": 16, "block": 4, "layers": 2}
    mask = BUILD["sparse_block_causal"](**params).matrix.copy()
    target = build_mask(TARGETS["sparse_block_causal"](**params)).matrix
    mask[8, 5] = False  # r_2 no longer attends position 5 of block 1
    assert not realises(mask, target, 2)
    assert walk_failures(mask, target, WITNESSES["sparse_block_causal"](**params), 2) > 0


@pytest.mark.parametrize("spec", ["block_causal:n=48,block=4", "chunked:n=40,chunk=6", "prefix_lm:n=40,prefix=9"])
def test_formula_designs_recognise_the_target_and_not_a_near_miss(spec):
    target = build_mask(spec).matrix
    designs = formula_designs(target, 3, "pairs", 8)
    assert any(d.target_spec == spec for d in designs)
    for d in designs:
        assert realises(d.mask, target, d.layers)
    order = np.arange(len(target))
    order[[1, -1]] = order[[-1, 1]]  # the same preorder with two positions swapped: counts match, arrays differ
    near = target[np.ix_(order, order)]
    assert all(d.target_spec != spec for d in formula_designs(near, 3, "pairs", 8))


@pytest.mark.parametrize("spec,cost", [("block_causal:n=32,block=4", "pairs"), ("block_causal:n=32,block=4", "tiles"),
                                       ("chunked:n=30,chunk=8", "tiles"), ("prefix_lm:n=30,prefix=5", "pairs")])
def test_design_source_round_trips(spec, cost):
    design = formula_designs(build_mask(spec).matrix, 2, cost, 8)[0]
    namespace: dict = {}
    exec(compile(design.source(), "m.py", "exec"), namespace)  # noqa: S102 - our own generated file
    size = design.mask.shape[0]
    q, k = np.arange(size)[:, None], np.arange(size)[None, :]
    assert np.array_equal(np.broadcast_to(namespace["mask_mod"](0, 0, q, k), (size, size)), design.mask)
    assert walk_failures(design.mask, build_mask(spec).matrix, namespace["witness"], design.layers) == 0


@pytest.mark.parametrize("spec,layers", [("sparse_chunked:chunk=8,layers=2", 2),
                                         ("sparse_block_causal:block=4,layers=3", 3),
                                         ("sparse_prefix_lm:prefix=3,layers=2", 2)])
def test_proved_for_every_n(spec, layers):
    from hasse.solvers.symbolic.catalog import symbolic_mask
    from hasse.solvers.symbolic.claims.realises import prove_realises
    from hasse.solvers.symbolic.claims.solve import _conditions_of
    from hasse.solvers.symbolic.witness import known_design, witness_for

    known = known_design(spec)
    mask, target = symbolic_mask(known["spec"]), symbolic_mask(known["target"])
    witness = witness_for(known["spec"], None, known, mask, _conditions_of(mask, target), layers, 60)
    assert prove_realises(mask, target, layers, witness, timeout=60).verdict == "proved"


def test_a_planted_bug_is_refuted_at_the_smallest_n(tmp_path):
    from hasse.solvers.symbolic.catalog import symbolic_mask, symbolic_mask_mod
    from hasse.solvers.symbolic.claims.realises import prove_realises
    from hasse.theory.user_code import ARGUMENT

    design = formula_designs(build_mask("block_causal:n=8,block=2").matrix, 2, "pairs", 8)[0]
    head = "def mask_mod(b, h, q_idx, kv_idx):\n    return "
    source = design.source().replace(head, head + "~((q_idx == 5) & (kv_idx == 4)) & ")  # one edge removed
    path = tmp_path / "m.py"
    path.write_text(source)
    mask = symbolic_mask_mod(str(path), "mask_mod", code=ARGUMENT)
    verdict = prove_realises(mask, symbolic_mask("block_causal:block=2"), 2, None, timeout=60)
    assert verdict.verdict == "refuted"
    assert verdict.counterexample["n"] == 6


def test_the_printed_command_proves_the_written_file(tmp_path, capsys):
    from hasse.views.synthesis_report import _prove_hint
    from tests.cli_run import run

    design = formula_designs(build_mask("block_causal:n=64,block=8").matrix, 2, "pairs", 16)[0]
    path = tmp_path / "m.py"
    path.write_text(design.source())
    hint = _prove_hint(design, str(path))
    assert "prove the file as written" in hint and "--target block_causal:block=8 " in hint
    code, out, err = run(capsys, *hint.split("hasse ", 1)[1].split())
    assert code == 0 and "PROVED" in out, (out, err)

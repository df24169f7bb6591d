"""Closed-form sparse masks (theory/masks/sparse_spanners.py, theory/spanner_formulas.py, theory/spanner_counts.py).

References, independent of the formulas: the targets are the catalogue's own masks
(``causal``, ``butterfly``, ``block_two_stream``, built by their rules); "realises" is the
concrete engine's ``(M ∨ I)^L == T`` (theory.synthesis.realises) and, for small sizes,
integer matrix powers written here; witnesses are checked hop by hop against the mask
grid; counts against the grid's own counts (pair_cost, tile_cost) and, at n = 131072,
against a per-row count written again here; the 2-hop lower bound against the brute
force minimum. Each test is named after the bug it catches; ``test_a_dropped_edge_type_
is_caught`` plants them (every edge type of every formula removed in turn).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from hasse.solvers.synthesis.problem import brute_force_minimum
from hasse.theory.catalog import build_mask
from hasse.theory.errors import InputError
from hasse.theory.masks import sparse_spanners as ss
from hasse.theory.spanner_counts import formula_counts
from hasse.theory.reach import reach
from hasse.theory.spanner_formulas import (TARGETS, WITNESSES, chain_lower_bound, design_source, formula_designs)
from hasse.theory.synthesis import pair_cost, realises, tile_cost

BUILD = {"sparse_causal": ss.build_sparse_causal, "sparse_butterfly": ss.build_sparse_butterfly,
         "sparse_block_two_stream": ss.build_sparse_block_two_stream}


def cases(n: int):
    """``(entry, extra params)`` at ``n``: every entry, Block Two-Stream at every block dividing n."""
    yield "sparse_causal", {}
    yield "sparse_butterfly", {}
    for block in range(1, n + 1):
        if n % block == 0:
            yield "sparse_block_two_stream", {"block": block}


def target_of(entry: str, n: int, extra: dict) -> np.ndarray:
    return build_mask(TARGETS[entry](n=n, **extra)).matrix


def _power(mask: np.ndarray, layers: int) -> np.ndarray:
    a = (mask | np.eye(mask.shape[0], dtype=bool)).astype(np.int64)
    r = np.eye(mask.shape[0], dtype=np.int64)
    for _ in range(layers):
        r = np.minimum(a @ r, 1)
    return r.astype(bool)


def check_realises(entry, n, extra, layers, tile, exact_power=False):
    mask = BUILD[entry](n=n, layers=layers, tile=tile, **extra).matrix
    target = target_of(entry, n, extra)
    where = f"{entry}:n={n},{extra},layers={layers},tile={tile}"
    assert mask.shape == target.shape, where
    assert mask.diagonal().all(), f"{where}: an empty diagonal entry"
    assert not (mask & ~target).any(), f"{where}: a pair outside the target"
    assert realises(mask, target, layers), f"{where}: does not realise its target"
    if exact_power:
        assert np.array_equal(_power(mask, layers), target), where
    return mask, target


@pytest.mark.parametrize("layers", (1, 2, 3, 4))
def test_every_mask_realises_its_target_for_every_n_up_to_40(layers):
    for n in range(1, 41):
        for entry, extra in cases(n):
            for tile in (0, 2, 4):
                check_realises(entry, n, extra, layers, tile, exact_power=n <= 8)


def test_every_mask_realises_its_target_at_random_larger_n():
    rng = random.Random(24)
    for _ in range(4):
        n = rng.randint(41, 300)
        for layers in (2, 3):
            check_realises("sparse_causal", n, {}, layers, rng.choice((0, 3, 8)))
            check_realises("sparse_butterfly", n if n <= 160 else n // 2, {}, layers, rng.choice((0, 4, 16)))
            block = rng.choice([b for b in range(1, n + 1) if n % b == 0])
            check_realises("sparse_block_two_stream", n, {"block": block}, layers, rng.choice((0, 4)))


def walk_ok(mask: np.ndarray, target: np.ndarray, witness, layers: int) -> None:
    """Every pair of the target: the witness has layers - 1 positions, each hop an entry of M ∨ I."""
    size = mask.shape[0]
    a = mask | np.eye(size, dtype=bool)
    q, k = np.nonzero(target)
    path = witness(q, k)
    assert isinstance(path, tuple) and len(path) == layers - 1
    nodes = [k] + [np.broadcast_to(np.asarray(w, dtype=np.int64), q.shape) for w in path] + [q]
    for w in nodes[1:-1]:
        assert ((w >= 0) & (w < size)).all(), "a witness position outside the mask"
    for hop, (src, dst) in enumerate(zip(nodes, nodes[1:])):
        bad = ~a[dst, src]
        assert not bad.any(), f"hop {hop}: ({int(q[bad][0])}, {int(k[bad][0])}) goes {int(src[bad][0])} -> {int(dst[bad][0])}"


@pytest.mark.parametrize("layers", (1, 2, 3, 4))
def test_witness_is_a_walk_through_the_mask_hop_by_hop(layers):
    for n in list(range(1, 25)) + [37, 64]:
        for entry, extra in cases(n):
            for tile in (0, 2, 3):
                mask = BUILD[entry](n=n, layers=layers, tile=tile, **extra).matrix
                witness = WITNESSES[entry](n=n, layers=layers, tile=tile, **extra)
                walk_ok(mask, target_of(entry, n, extra), witness, layers)


def test_witness_on_python_ints_equals_on_arrays():
    rng = random.Random(3)
    for entry, extra in (("sparse_causal", {}), ("sparse_butterfly", {}), ("sparse_block_two_stream", {"block": 4})):
        n = 20
        target = target_of(entry, n, extra)
        q, k = np.nonzero(target)
        for layers, tile in ((2, 0), (3, 0), (3, 4)):
            witness = WITNESSES[entry](n=n, layers=layers, tile=tile, **extra)
            arrays = witness(q, k)
            for i in rng.sample(range(len(q)), 30):
                assert tuple(int(w) for w in witness(int(q[i]), int(k[i]))) == tuple(int(w[i]) for w in arrays)


def test_counts_equal_the_grid_counts():
    for n in range(1, 21):
        for entry, extra in cases(n):
            for layers in (1, 2, 3):
                for tile in (0, 1, 2, 3):
                    mask = BUILD[entry](n=n, layers=layers, tile=tile, **extra).matrix
                    for block in (1, 3, 4, 128):
                        want = (pair_cost(mask) - mask.shape[0], *tile_cost(mask, block))
                        got = formula_counts(entry, n, layers, block, tile, **({"l": extra["block"]} if extra else {}))
                        assert got == want, (entry, n, extra, layers, tile, block)


def test_counts_equal_the_grid_counts_at_n_1024():
    for entry, extra in (("sparse_causal", {}), ("sparse_butterfly", {}), ("sparse_block_two_stream", {"block": 16})):
        n = 1024 if entry != "sparse_butterfly" else 400
        for layers, tile in ((2, 0), (3, 0), (2, 128), (3, 64)):
            mask = BUILD[entry](n=n, layers=layers, tile=tile, **extra).matrix
            want = (pair_cost(mask) - mask.shape[0], *tile_cost(mask, 128))
            assert formula_counts(entry, n, layers, 128, tile, **({"l": 16} if extra else {})) == want


def test_counts_at_n_131072_equal_the_row_count():
    """Two layers on the chain: row a has lowbit(a) centre keys and popcount(a) - 2 prefixes below them."""
    n = 131072
    a = np.arange(1, n)
    popcount = np.array([bin(x).count("1") for x in range(1, n)])
    expected = int((a & -a).sum() + np.maximum(popcount - 2, 0).sum())
    assert formula_counts("sparse_causal", n, 2)[0] == expected
    pairs, full, partial = formula_counts("sparse_causal", n, 1)
    assert pairs == n * (n - 1) // 2 and full == (n // 128) * (n // 128 - 1) // 2 and partial == n // 128


def test_counts_refuse_bad_input():
    with pytest.raises(InputError, match="needs its block"):
        formula_counts("sparse_block_two_stream", 8, 2)
    with pytest.raises(InputError, match="unknown sparse formula"):
        formula_counts("sparse_nothing", 8, 2)
    with pytest.raises(InputError, match="layers must be a positive"):
        formula_counts("sparse_causal", 8, 0)


def test_source_file_evaluates_to_the_mask_and_its_witness():
    for target, layers, block in ((build_mask("causal:n=37").matrix, 2, 8),
                                  (build_mask("butterfly:n=9").matrix, 3, 4),
                                  (build_mask("block_two_stream:n=12,block=3,variant=chain").matrix, 3, 4)):
        designs = formula_designs(target, layers, "pairs", block)
        assert designs
        for d in designs:
            text = d.source()
            assert "import" not in text
            space: dict = {}
            exec(compile(text, "<mask_mod>", "exec"), space)
            size = d.mask.shape[0]
            q, k = np.arange(size)[:, None], np.arange(size)[None, :]
            assert np.array_equal(np.broadcast_to(space["mask_mod"](0, 0, q, k), (size, size)), d.mask), d.spec
            walk_ok(d.mask, target, space["witness"], d.layers)


def test_source_file_runs_on_torch_tensors():
    torch = pytest.importorskip("torch")
    d = formula_designs(build_mask("butterfly:n=6").matrix, 2, "pairs", 4)[0]
    space: dict = {}
    exec(compile(d.source(), "<mask_mod>", "exec"), space)
    size = d.mask.shape[0]
    q, k = torch.arange(size)[:, None], torch.arange(size)[None, :]
    got = space["mask_mod"](torch.tensor(0), torch.tensor(0), q, k)
    assert got.dtype == torch.bool and np.array_equal(got.numpy(), d.mask)
    t_q, t_k = (torch.tensor(x) for x in np.nonzero(build_mask("butterfly:n=6").matrix))
    assert [w.tolist() for w in space["witness"](t_q, t_k)] == [
        np.asarray(w).tolist() for w in WITNESSES["sparse_butterfly"](n=6, layers=2, tile=0)(t_q.numpy(), t_k.numpy())]


def test_designs_recognise_the_three_targets_at_the_cheapest_depth():
    for spec, entry in (("causal:n=30", "sparse_causal"), ("butterfly:n=7", "sparse_butterfly"),
                        ("block_two_stream:n=12,block=4,variant=chain", "sparse_block_two_stream")):
        target = build_mask(spec).matrix
        for layers in (1, 2, 3, 5):
            for cost in ("pairs", "tiles"):
                designs = formula_designs(target, layers, cost, 4)
                assert designs and {d.target_spec for d in designs} == {spec}
                key = (lambda d: d.pairs) if cost == "pairs" else (lambda d: (sum(d.tiles), d.pairs))
                assert [key(d) for d in designs] == sorted(key(d) for d in designs)
                for d in designs:
                    assert d.layers <= layers and d.spec.startswith(entry)
                    assert realises(d.mask, target, d.layers) and d.mask.diagonal().all()
                    assert d.pairs == int(d.mask.sum()) - d.mask.shape[0] and d.tiles == tile_cost(d.mask, 4)
                    params = dict(d.params)
                    cheapest = min(_cost(BUILD[entry](**{**params, "layers": depth}).matrix, cost)
                                   for depth in range(1, min(layers, 3) + 1))
                    assert key(d) == cheapest, (spec, layers, cost, d.spec)


def _cost(mask: np.ndarray, cost: str):
    pairs = int(mask.sum()) - mask.shape[0]
    return pairs if cost == "pairs" else (sum(tile_cost(mask, 4)), pairs)


def test_designs_recognise_nothing_else():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 12))
        r = rng.random((n, n)) < 0.3
        closure = _power(r, n)  # a random preorder: the reflexive-transitive closure of a random relation
        expected = [s for s in (f"causal:n={n}",) if np.array_equal(closure, build_mask(s).matrix)]
        assert [d.target_spec for d in formula_designs(closure, 2)][:len(expected)] == expected
        if not expected:
            assert all(np.array_equal(build_mask(d.target_spec).matrix, closure) for d in formula_designs(closure, 2))
    causal = build_mask("causal:n=9").matrix.copy()
    causal[1, 0] = False  # still a preorder, not causal
    assert formula_designs(causal, 3) == []
    butterfly = build_mask("butterfly:n=5").matrix.copy()
    butterfly[1, 0] = False
    assert formula_designs(butterfly, 3) == []
    assert formula_designs(np.eye(6, dtype=bool), 2) == []


def test_chain_lower_bound_is_below_the_optimum_and_the_formula():
    for n in range(1, 6):
        optimum = brute_force_minimum(np.tril(np.ones((n, n), dtype=bool)), 2).minimum
        assert chain_lower_bound(n) <= optimum
    for n in (1, 2, 3, 7, 64, 100, 1000):
        assert chain_lower_bound(n) <= formula_counts("sparse_causal", n, 2)[0]


DROPS = {  # (function, the edge type's code) -> the edge type removed
    "prefix": ("prefix = (c != 0) & (c < a) & ((a & ~((c & -c) - 1)) == c)", "prefix = (c != c)"),
    "centre": ("centre = (a - (a & -a) <= c) & (c < a)", "centre = (c != c)"),
    "last": ("last = ((c | (b - 1)) == a) & (a != c) & (a % bb != bb - 1)", "last = (c != c)"),
    "across": ("across = (a % b == 0) & (c % b == b - 1) & (c < a) & (a // bb == c // bb)", "across = (c != c)"),
    "first": ("first = ((a & ~(b - 1)) == c) & (a != c) & (c % bb != 0)", "first = (c != c)"),
}


@pytest.mark.parametrize("drop", sorted(DROPS))
def test_a_dropped_edge_type_is_caught(drop, monkeypatch):
    """The planted bugs: each edge type of the chain formulas removed; the realises check must fail."""
    import inspect
    import textwrap

    old, new = DROPS[drop]
    text = textwrap.dedent(inspect.getsource(ss.chain_edges))
    assert old in text, f"edge type {drop} not found in chain_edges"
    space = dict(vars(ss))
    exec(compile(text.replace(old, new), "<mutant>", "exec"), space)
    monkeypatch.setattr(ss, "chain_edges", space["chain_edges"])
    layers = 2 if drop in ("prefix", "centre") else 3
    with pytest.raises(AssertionError, match="does not realise"):
        for n in range(1, 41):
            for entry, extra in cases(n):
                check_realises(entry, n, extra, layers, 0)


def test_catalogue_specs_and_bad_input():
    m = build_mask("sparse_butterfly:n=3,layers=2")
    assert m.spec == "sparse_butterfly:n=3,layers=2,tile=0" and m.names == build_mask("butterfly:n=3").names
    assert np.array_equal(build_mask("sparse_causal:n=9,layers=7").matrix, build_mask("sparse_causal:n=9,layers=3").matrix)
    for spec, words in (("sparse_causal:n=4,layers=0", "layers must be a positive"),
                        ("sparse_causal:n=4,layers=2,tile=-1", "tile must be a non-negative"),
                        ("sparse_block_two_stream:n=4,block=3,layers=2", "does not divide"),
                        ("sparse_causal:n=4", "layers")):
        with pytest.raises(InputError, match=words):
            build_mask(spec)


def test_source_names_its_constants():
    text = design_source("sparse_block_two_stream", {"n": 8, "block": 2, "layers": 3, "tile": 4}, "s", "t")
    assert "N = 8" in text and "L = 3" in text and "B = 4" in text and "BLOCK = 2" in text


def test_chain_cover_bound_never_exceeds_the_optimum():
    """The down-closed chains' 2-hop bound is <= the brute-force minimum (random preorders, n <= 6) and <= the
    exact optimum of the case-study targets; a bound one too high (planted) fails here."""
    from hasse.solvers.synthesis import brute_force_minimum, optimise
    from hasse.theory.catalog import build_mask
    from hasse.theory.spanner_formulas import chain_cover_bound

    rng = np.random.default_rng(24)
    seen = 0
    for _ in range(40):
        n = int(rng.integers(2, 7))
        m = rng.random((n, n)) < 0.3
        t = reach(m, n)  # a random preorder: the limit of a random mask
        bound, _ = chain_cover_bound(t)
        free = int((t & ~np.eye(n, dtype=bool)).sum())
        best = brute_force_minimum(t, 2).minimum if free <= 20 else optimise(t, 2).cost
        assert bound <= best
        seen += bound > 0
    assert seen > 10
    for spec in ("causal:n=9", "butterfly:n=3", "block_two_stream:n=4,block=2", "document:lengths=3+4"):
        t = build_mask(spec).matrix | np.eye(build_mask(spec).matrix.shape[0], dtype=bool)
        best = optimise(t, 2)
        assert best.status == "optimal" and chain_cover_bound(t)[0] <= best.cost, spec

"""The hand-made sparse patterns (theory/handmade.py) against references written again here.

References are independent of the module: each pattern is rebuilt from its definition by
comparisons of indices, realisation is ``theory.synthesis.realises`` (the concrete engine),
"cheapest" is checked by trying every parameter of the searched family (brute force), the
log-sparse depth by raising ``L`` until the mask realises, and the chain formulas against
the grid counts (``tile_cost``, ``count_nonzero``). Each test is named after the bug it
catches; the planted bugs are listed in the module's report (an off-by-one in the dilated
stride, in the window, in the global positions, in the tile spans).
"""

from __future__ import annotations

import numpy as np
import pytest

from hasse.theory.errors import InputError
from hasse.theory.handmade import PATTERNS, chain_handmade, chain_handmade_counts, global_steps, handmade
from hasse.theory.synthesis import realises, tile_cost

DEPTHS = (1, 2, 3, 4, 8)


def _diff(n: int) -> np.ndarray:
    q, k = np.indices((n, n))
    return q - k


def _window_global(n: int, w: int, g: int) -> np.ndarray:
    d = _diff(n)
    glob = (np.arange(n) % g == 0) if g else np.zeros(n, dtype=bool)
    return (d > 0) & ((d <= w) | glob[:, None] | glob[None, :])


def _dilated(n: int, b: int, layers: int) -> np.ndarray:
    d, out = _diff(n), np.zeros((n, n), dtype=bool)
    for i in range(layers):
        for digit in range(1, b):
            out |= d == digit * b ** i
    return out


def _log_sparse(n: int) -> np.ndarray:
    d = _diff(n)
    return (d > 0) & ((d & (d - 1)) == 0)


def _chain(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n), dtype=bool))


def _closure(rel: np.ndarray) -> np.ndarray:
    n = rel.shape[0]
    t = (rel | np.eye(n, dtype=bool)).astype(np.int64)
    for _ in range(max(1, n.bit_length())):
        t = np.minimum(t @ t, 1)
    return t.astype(bool)


def _targets():
    """Chains, packed documents and random preorders inside the causal order (seeded)."""
    rng = np.random.default_rng(7)
    out = [(f"chain{n}", _chain(n)) for n in (1, 2, 3, 5, 9, 16, 23)]
    docs = np.zeros((12, 12), dtype=bool)
    for lo, hi in ((0, 5), (5, 6), (6, 12)):
        docs[lo:hi, lo:hi] = _chain(hi - lo)
    out.append(("documents", docs))
    for i in range(6):
        n = int(rng.integers(4, 15))
        rel = np.tril(rng.random((n, n)) < rng.uniform(0.05, 0.5), -1)
        out.append((f"random{i}", _closure(rel)))
    return out


TARGETS = _targets()


def _parameters(parameter: str) -> dict[str, int]:
    return {k: 0 if v == "none" else int(v) for k, v in (x.split("=") for x in parameter.split(","))}


def _rebuild(name: str, parameter: str, n: int, layers: int) -> np.ndarray:
    """The pattern of a reported row, from its definition here."""
    if name == "log-sparse":
        return _log_sparse(n)
    p = _parameters(parameter)
    return _window_global(n, p["w"], p["g"]) if name == "window+global" else _dilated(n, p["b"], layers)


def _pairs(mask):
    return int(np.count_nonzero(mask & ~np.eye(mask.shape[0], dtype=bool)))


@pytest.mark.parametrize("name,target", TARGETS, ids=[t[0] for t in TARGETS])
@pytest.mark.parametrize("layers", (1, 2, 3))
def test_window_global_is_the_cheapest_of_its_family(name, target, layers):
    """The reported (w, g) realises, (w - 1, g) does not, and no (w', g') of the family is cheaper."""
    n = target.shape[0]
    h = handmade(target, layers, block=4, formulas=False)[0]
    assert h.name == "window+global" and h.realises
    w, g = _parameters(h.parameter)["w"], _parameters(h.parameter)["g"]
    mask = _window_global(n, w, g) & target
    assert realises(mask, target, layers) and h.pairs == _pairs(mask)
    assert np.array_equal(h.mask, mask | np.eye(n, dtype=bool))
    if w > 0:
        assert not realises(_window_global(n, w - 1, g) & target, target, layers)
    for g2 in global_steps(n):
        for w2 in range(n):
            m = _window_global(n, w2, g2) & target
            if realises(m, target, layers):
                assert (_pairs(m), g2) >= (h.pairs, g)
                break  # larger w2 only add pairs


@pytest.mark.parametrize("name,target", TARGETS, ids=[t[0] for t in TARGETS])
@pytest.mark.parametrize("layers", (1, 2, 3, 4))
def test_dilated_stride_is_the_least_that_realises(name, target, layers):
    """The reported b realises and every smaller b >= 2 does not (planted: the stride off by one)."""
    n = target.shape[0]
    h = handmade(target, layers, block=4, formulas=False)[1]
    b = int(h.parameter.split("=")[1])
    mask = _dilated(n, b, layers) & target
    assert h.realises and realises(mask, target, layers) and h.pairs == _pairs(mask)
    assert np.array_equal(h.mask, mask | np.eye(n, dtype=bool))
    for smaller in range(2, b):
        assert not realises(_dilated(n, smaller, layers) & target, target, layers), smaller


@pytest.mark.parametrize("name,target", TARGETS, ids=[t[0] for t in TARGETS])
def test_log_sparse_depth_is_the_convergence_depth(name, target):
    """The reported depth is the least L with (M or I)^L == T, found by raising L (None: never)."""
    n = target.shape[0]
    mask = _log_sparse(n) & target
    depth = next((L for L in range(1, n + 1) if realises(mask, target, L)), None)
    for layers in (1, 2, 3):
        h = handmade(target, layers, block=4, formulas=False)[2]
        assert h.depth == depth and h.pairs == _pairs(mask)
        assert h.realises == (depth is not None and depth <= layers)
        assert (h.mask is not None) == h.realises


@pytest.mark.parametrize("n", (1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 100))
def test_log_sparse_chain_depth_is_floor_log2(n):
    h = chain_handmade(n, 64)[2]
    mask = _log_sparse(n)
    assert h.depth == next(L for L in range(1, n + 1) if realises(mask, _chain(n), L))


CHAIN_CASES = [(n, layers, block) for n in (1, 2, 3, 4, 6, 8, 11, 16, 20, 33) for layers in DEPTHS
               for block in (1, 3, 4, 8)] + [(130, 2, 16), (200, 3, 32), (257, 4, 128), (256, 8, 128)]


@pytest.mark.parametrize("n,layers,block", CHAIN_CASES)
def test_chain_formulas_equal_the_grid_counts(n, layers, block):
    """chain_handmade (formulas, no grid) gives the grid's parameters, pairs, tiles, verdicts and depths."""
    formula = chain_handmade(n, layers, block)
    grid = handmade(_chain(n), layers, block, formulas=False)
    assert [(h.parameter, h.pairs, h.tiles, h.depth) for h in handmade(_chain(n), layers, block)] == \
        [(h.parameter, h.pairs, h.tiles, h.depth) for h in grid]
    for f, h in zip(formula, grid):
        assert (f.name, f.parameter, f.realises, f.depth) == (h.name, h.parameter, h.realises, h.depth)
        assert f.pairs == h.pairs
        built = _rebuild(f.name, f.parameter, n, layers)
        written = built | np.eye(n, dtype=bool)
        assert f.tiles == h.tiles == tile_cost(written, block)
        assert f.pairs == _pairs(built)
    counts = chain_handmade_counts(n, layers, block)
    assert counts == {f.name: (f.pairs, f.tiles) if f.realises else None for f in formula}


@pytest.mark.parametrize("n,w,g,block", [(20, 2, 3, 4), (37, 5, 0, 8), (64, 0, 8, 16), (50, 3, 7, 1), (129, 9, 10, 32)])
def test_window_global_tiles_formula(n, w, g, block):
    """The tile formula on parameters the search would not pick (planted: a tile span off by one)."""
    from hasse.theory.handmade_chain import _wg_pairs, _wg_tiles

    mask = _window_global(n, w, g)
    assert _wg_tiles(n, w, g, block) == tile_cost(mask | np.eye(n, dtype=bool), block)
    assert _wg_pairs(n, w, g) == _pairs(mask)


def test_non_causal_target_never_realises():
    target = np.ones((4, 4), dtype=bool)
    rows = handmade(target, 3)
    assert [h.name for h in rows] == list(PATTERNS)
    assert all(not h.realises and h.depth is None and h.mask is None for h in rows)


def test_errors_are_input_errors():
    with pytest.raises(InputError, match="transitive"):
        handmade([[1, 0, 0], [1, 1, 0], [0, 1, 1]], 2)
    with pytest.raises(InputError, match="layers"):
        handmade(_chain(3), 0)
    with pytest.raises(InputError, match="n must be"):
        chain_handmade(0, 2)


def test_masks_keep_the_diagonal_and_stay_inside_the_target():
    for _, target in TARGETS[-6:]:
        for h in handmade(target, 2, block=4):
            if h.mask is not None:
                assert np.diag(h.mask).all() and not (h.mask & ~target).any()
                assert h.tiles == tile_cost(h.mask, 4) and h.tiles_bare == tile_cost(h.mask & ~np.eye(len(h.mask), dtype=bool), 4)


def test_bench_synthesis_runs_small(capsys, tmp_path):
    """benchmarks/bench_synthesis.py end to end at n = 256 (its grid self-check included), FlexAttention eager."""
    torch = pytest.importorskip("torch")
    from benchmarks import bench_synthesis

    out = tmp_path / "bench.json"
    device = "cpu" if not torch.cuda.is_available() else "cuda"
    assert bench_synthesis.main(["--sizes", "256", "--depths", "2", "3", "--flex-n", "256", "--repeats", "1",
                                 "--no-compile", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "checked against the grid" in text and "FlexAttention forward at n = 256" in text
    rows = __import__("json").loads(out.read_text())
    assert [r["layers"] for r in rows["causal"]] == [2, 3]
    assert all(r["eager_error"] < 1e-4 for r in rows["flex"])
    if device == "cpu":
        assert bench_synthesis.main(["--sizes", "256", "--depths", "2", "--device", "cuda"]) == 0
        assert "skipped (no CUDA device here)" in capsys.readouterr().out

"""``hasse synthesize`` end to end: the cost it prints against the brute-force minimum, the masks it writes, exits.

The reference is :func:`hasse.solvers.synthesis.brute_force_minimum` (every mask inside the target,
enumerated); every mask written is re-checked here by :func:`hasse.theory.synthesis.realises` and,
for a formula's ``.py``, by evaluating its ``mask_mod`` on a numpy grid.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from hasse.solvers.synthesis import brute_force_minimum
from hasse.theory.catalog import build_mask
from hasse.theory.reach import reach
from hasse.theory.synthesis import necessary_pairs, realises
from tests.cli_run import run

SPECS = ("causal:n=4", "causal:n=6", "bidirectional:n=4", "prefix_lm:n=5,prefix=2", "block_causal:n=6,block=2",
         "sliding_window:n=5,w=2", "document:lengths=2+3", "butterfly:n=2", "block_two_stream:n=2,block=1")
MAX_FREE = {"pairs": 20, "tiles": 14}  # free pairs the brute force enumerates quickly (tiles: every subset)


def limit_of(spec: str) -> np.ndarray:
    mask = build_mask(spec).matrix
    return reach(mask, mask.shape[0])


def random_preorders(count: int, seed: int) -> list[np.ndarray]:
    """Seeded preorders of 3 to 6 positions: the closure of a random relation, sparse enough to enumerate."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        n = int(rng.integers(3, 7))
        relation = rng.random((n, n)) < rng.uniform(0.1, 0.35)
        t = reach(relation, n)
        free = t & ~np.eye(n, dtype=bool) & ~necessary_pairs(t, 2)
        if free.sum() <= MAX_FREE["tiles"]:
            out.append(t)
    return out


def synth(capsys, target, layers, *extra):
    code, out, err = run(capsys, "synthesize", target, "--layers", layers, "--no-gpu-check", *extra)
    return code, out, err


def targets(tmp_path):
    found = [(s, s, limit_of(s)) for s in SPECS]
    for i, t in enumerate(random_preorders(20, seed=24)):
        path = tmp_path / f"random{i}.npy"
        np.save(path, t)
        found.append((f"random #{i}", str(path), t))
    return found


def test_cost_equals_the_brute_force_minimum_and_the_mask_realises(capsys, tmp_path):
    checked = 0
    for name, source, t in targets(tmp_path):
        n = len(t)
        for layers in (1, 2, 3):
            for cost in ("pairs", "tiles"):
                free = t & ~np.eye(n, dtype=bool) & ~necessary_pairs(t, layers)
                if free.sum() > MAX_FREE[cost]:
                    continue
                out_file = tmp_path / "m.npy"
                code, out, err = synth(capsys, source, layers, "--cost", cost, "--block", 2, "--json",
                                       "--out", out_file)
                assert code == 0, (name, layers, cost, err)
                data = json.loads(out)
                ref = brute_force_minimum(t, layers, cost=cost, block=2)
                assert data["cost"] == ref.minimum, (name, layers, cost, data["cost"], ref.minimum)
                assert data["method"] in ("optimal", "formula") and data["optimal"], (name, data["method"])
                written = np.load(out_file)
                assert written.diagonal().all(), name  # every mask written for a kernel has its diagonal
                assert realises(written, t, layers), (name, layers, cost)
                assert data["depth"] <= layers and realises(written, t, data["depth"]), name
                assert all(v["status"] != "fail" for v in data["verdicts"]), (name, data["verdicts"])
                checked += 1
    assert checked >= 120


def test_no_diagonal_writes_m_itself(capsys, tmp_path):
    out_file = tmp_path / "m.json"
    code, out, err = synth(capsys, "causal:n=5", 2, "--out", out_file, "--no-diagonal", "--json")
    assert code == 0, err
    m = np.array(json.loads(out_file.read_text())["mask"], dtype=bool)
    assert not m.diagonal().any() and realises(m, limit_of("causal:n=5"), 2)
    assert int(m.sum()) == json.loads(out)["pairs"]


@pytest.mark.parametrize("spec", ["document:lengths=6+6", "causal:n=12"])  # no formula; a formula (cheaper)
def test_a_tiny_timeout_is_unknown_with_a_mask_that_realises(capsys, tmp_path, spec):
    t = limit_of(spec)
    out_file = tmp_path / "m.npy"
    code, out, err = synth(capsys, spec, 3, "--timeout", "0.001", "--json", "--out", out_file)
    data = json.loads(out)
    assert code in (0, 3), err
    assert (code == 3) == (data["method"] == "unknown")  # never exit 0 with status unknown
    assert data["gap"] == data["cost"] - data["lower_bound"] >= 0
    assert data["optimal"] == (data["gap"] == 0)
    if data["method"] == "optimal":
        assert data["optimal"]
    assert realises(np.load(out_file), t, 3)


def test_a_formula_target_writes_a_mask_mod_that_realises(capsys, tmp_path):
    out_file = tmp_path / "causal2.py"
    code, out, err = synth(capsys, "causal:n=64", 2, "--out", out_file)
    assert code == 0, err
    assert "formula" in out and f"mask_mod written to {out_file}" in out
    spec = importlib.util.spec_from_file_location("causal2", out_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    q, k = np.arange(64)[:, None], np.arange(64)[None, :]
    mask = np.broadcast_to(np.asarray(module.mask_mod(0, 0, q, k), dtype=bool), (64, 64))
    t = limit_of("causal:n=64")
    assert realises(mask, t, 2) and mask.sum() - 64 < t.sum() - 64
    # the command the report prints proves the file as written, for every n
    hint = next(line for line in out.splitlines() if "prove the file as written" in line)
    argv = hint.split("hasse ", 1)[1].split()
    code, proved, err = run(capsys, *argv)
    assert code == 0 and "PROVED" in proved, (proved, err)


def test_butterfly_tiles_beside_the_dense_and_the_gpu_check(capsys):
    pytest.importorskip("torch")
    code, out, err = run(capsys, "synthesize", "butterfly:n=16", "--layers", 2, "--cost", "tiles", "--block", 8,
                         "--device", "cpu", "--timeout", 0.5)  # the all-n proof: 0.5 s per solver call
    assert code == 0, err
    dense = [line for line in out.splitlines() if line.startswith("dense T")]
    design = [line for line in out.splitlines() if line.startswith("as written")]
    assert dense and design and "tiles" in dense[0] and "tiles" in design[0]
    assert "gpu-check: PASS" in out


@pytest.mark.parametrize("argv, needle", [
    (["synthesize", "causal:n=4", "--layers", "0"], "--layers must be a positive integer"),
    (["synthesize", "causal:n=4", "--layers", "2", "--relabel"], "pairs do not depend on the order"),
    (["synthesize", "causal:n=4", "--layers", "2", "--out", "m.txt"], "--out writes"),
])
def test_bad_inputs_exit_2_with_one_line(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv, "--no-gpu-check")
    assert code == 2 and needle in err and err.strip().count("\n") == 0, err


def test_a_non_transitive_target_file_exits_2(capsys, tmp_path):
    path = tmp_path / "chain.txt"
    path.write_text("1 1 0\n0 1 1\n0 0 1\n")
    code, out, err = synth(capsys, path, 2)
    assert code == 2 and "not transitive" in err and err.strip().count("\n") == 0, err


def test_out_py_for_an_array_design_exits_2(capsys, tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, random_preorders(1, seed=7)[0])
    code, out, err = synth(capsys, path, 2, "--out", tmp_path / "m.py")
    assert code == 2 and "no closed formula is known for this target" in err and err.strip().count("\n") == 0, err
    assert not (tmp_path / "m.py").exists()


def test_relabel_reports_a_permutation_and_writes_the_mask_in_the_order_given(capsys, tmp_path):
    two = np.zeros((16, 16), dtype=bool)  # two interleaved documents: q attends the earlier positions of its parity
    for q in range(16):
        two[q, q % 2:q + 1:2] = True
    path, out_file = tmp_path / "two.npy", tmp_path / "m.npy"
    np.save(path, two)
    code, out, err = synth(capsys, path, 2, "--cost", "tiles", "--block", 4, "--relabel", "--json", "--out", out_file)
    assert code == 0, err
    data = json.loads(out)
    perm = data["permutation"]
    assert sorted(perm) == list(range(16))
    written = np.load(out_file)  # in the order of the positions given
    assert realises(written, two, 2)
    from hasse.theory.synthesis import tile_cost

    moved = written[np.ix_(perm, perm)]  # new position i holds old position perm[i]
    assert list(tile_cost(moved, 4)) == [data["kernel_tiles"]["full"], data["kernel_tiles"]["partial"]]
    plain = json.loads(synth(capsys, path, 2, "--cost", "tiles", "--block", 4, "--json")[1])
    assert data["cost"] <= plain["cost"]


def test_png_draws_the_target_beside_the_design(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    picture = tmp_path / "s.png"
    code, out, err = synth(capsys, "butterfly:n=3", 2, "--cost", "tiles", "--block", 2, "--png", picture)
    assert code == 0, err
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"picture written to {picture}" in out


def doctored(extra_pair=None, drop_pair=None):
    """A design for butterfly:n=3 within 2 layers, its kernel mask given a pair outside T or one of its pairs less."""
    from dataclasses import replace

    import hasse

    d = hasse.synthesize("butterfly:n=3", 2, gpu_check=False)
    kernel = d.kernel_mask.copy()
    if extra_pair is not None:
        q, k = np.argwhere(~d.target)[0]
        kernel[q, k] = True
    if drop_pair is not None:
        q, k = np.argwhere(d.mask)[0]
        kernel[q, k] = False
    return replace(d, kernel_mask=kernel)


def test_the_leak_verdict_fails_on_a_mask_that_leaks_or_loses_a_pair():
    from hasse.solvers.synthesis.design import leak_verdict

    assert leak_verdict(doctored()).status == "pass"
    assert leak_verdict(doctored(extra_pair=True)).status == "fail"
    assert leak_verdict(doctored(drop_pair=True)).status == "fail"


def test_the_gpu_verdict_fails_when_real_layers_miss_a_pair_of_t():
    pytest.importorskip("torch")
    from hasse.views.synthesis_report import gpu_verdict

    assert gpu_verdict(doctored(), "cpu").status == "pass"
    assert gpu_verdict(doctored(drop_pair=True), "cpu").status == "fail"  # R(L) != T, though observed == R(L)
    assert gpu_verdict(doctored(extra_pair=True), "cpu").status == "fail"


def test_block_causal_at_256_is_a_construction_or_a_formula_and_the_written_mask_realises(capsys, tmp_path):
    from tests.cli_run import schema_problems

    out_path = tmp_path / "m.npy"
    code, out, err = synth(capsys, "block_causal:n=256,block=16", 2, "--json", "--out", out_path)
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] in ("construction", "formula") and not schema_problems("synthesize", data)
    written = np.load(out_path)
    assert realises(written & ~np.eye(256, dtype=bool), limit_of("block_causal:n=256,block=16"), 2)
    assert data["pairs"] <= 1088  # the block centres of theory.spanners.block_causal
    if data["method"] == "construction":
        assert data["structure"].startswith("chain of 16 classes (16+16+16+16+")
        proof = next(v for v in data["verdicts"] if v["name"] == "prove-mask")
        assert proof["status"] == "pass" and proof["line"].startswith("checked at this n")


def test_a_shuffled_product_of_chains_gets_a_construction(capsys, tmp_path):
    i, j = np.divmod(np.arange(144), 12)
    grid = (i[None, :] <= i[:, None]) & (j[None, :] <= j[:, None])
    perm = np.random.default_rng(5).permutation(144)
    target = grid[np.ix_(perm, perm)]
    path, out_path = tmp_path / "grid.npy", tmp_path / "m.npy"
    np.save(path, target)
    code, out, err = synth(capsys, path, 3, "--json", "--out", out_path)
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == "construction" and data["structure"] == "product of chains 12 x 12 of 144 positions"
    assert realises(np.load(out_path) & ~np.eye(144, dtype=bool), target, 3)
    assert data["pairs"] < data["dense"]["pairs"]


def test_a_construction_whose_witness_walk_fails_is_a_synthesis_bug(monkeypatch):
    from dataclasses import replace

    from hasse.solvers.synthesis import design as design_module
    from hasse.solvers.synthesis.problem import SynthesisBug
    from hasse.theory.spanner_structure import structured

    cls = np.repeat(np.arange(40), [3, 1, 4, 1, 5, 9, 2, 6] * 5)  # 155 positions: no formula, no heuristic run
    perm = np.random.default_rng(2).permutation(len(cls))
    target = (cls[None, :] <= cls[:, None])[np.ix_(perm, perm)]
    assert design_module.synthesize(target, 3).method == "construction"
    real = structured(target, 3)
    lying = replace(real, construction=replace(real.construction, witness=lambda q, k: []))  # "direct edges"
    monkeypatch.setattr(design_module, "structured", lambda t, layers: lying)
    with pytest.raises(SynthesisBug, match="witness walk"):
        design_module.synthesize(target, 3)


def test_out_py_takes_the_formula_where_a_construction_is_cheaper(capsys, tmp_path):
    code, out, err = synth(capsys, "block_causal:n=64,block=4", 2, "--out", tmp_path / "m.py", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["method"] == "formula"
    others = [c for c in got["candidates"] if c["method"] == "construction"]
    assert others and others[0]["cost"] <= got["cost"]  # the cheaper construction is still reported
    assert (tmp_path / "m.py").exists()

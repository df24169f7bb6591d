"""Masks as the ecosystem hands them over (issue 11.1): tensors, additive values, ranks 2–4, .pt files, BlockMask.

Every form is checked against an independent reference: the same mask written out a
second way in numpy, or real torch attention run on CPU with that very mask (SDPA,
nn.MultiheadAttention), whose gradients say which inputs reach which outputs.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import hasse  # noqa: E402
from hasse.gpu_check.torch_masks import read_torch  # noqa: E402
from hasse.theory.inputs import arrays as mask_arrays  # noqa: E402
from hasse.theory.errors import InputError  # noqa: E402
from tests.mask_reading import load_mask, load_mask_grid  # noqa: E402
from tests.cli_run import run  # noqa: E402

Q = 6  # positions of the HF-style masks
PAD = 2  # batch row 1 is left-padded: its first PAD positions are padding


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code in (0, 1), err
    return json.loads(out)


# --- references ------------------------------------------------------------------------


def hf_expected() -> np.ndarray:
    """(B, Q, K) allowed pairs, written out with loops: causal, and batch row 1 ignores its padding keys."""
    out = np.zeros((2, Q, Q), dtype=bool)
    for b in range(2):
        for q in range(Q):
            for k in range(Q):
                out[b, q, k] = k <= q and not (b == 1 and k < PAD)
    return out


def hf_mask(dtype, blocked_value=None):
    """An additive (B, 1, Q, K) mask built the way Hugging Face models build it."""
    low = torch.finfo(dtype).min if blocked_value is None else blocked_value
    causal = torch.full((Q, Q), low, dtype=dtype).triu(diagonal=1)
    mask = causal[None, None].expand(2, 1, Q, Q).clone()
    mask[1, :, :, :PAD] = low  # padding columns of batch row 1
    return mask


def sdpa_reach(mask_2d) -> np.ndarray:
    """Which value vectors reach which outputs of one real SDPA call under ``mask_2d`` (gradients)."""
    gen = torch.Generator().manual_seed(0)
    n = mask_2d.shape[-1]
    q, k, v = (torch.randn(1, 1, n, 8, generator=gen) for _ in range(3))
    if mask_2d.dtype != torch.bool:
        mask_2d = mask_2d.float()
    jac = torch.autograd.functional.jacobian(lambda x: F.scaled_dot_product_attention(q, k, x, attn_mask=mask_2d), v)
    return (jac[0, 0, :, :, 0, 0].abs().sum(dim=(1, 3)) != 0).numpy()  # (n, n): [query, key]


def mha_reach(attn_mask, batch: int, n: int, heads: int) -> np.ndarray:
    """(B, n, n): which inputs reach which outputs of a real nn.MultiheadAttention under ``attn_mask``."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, heads, batch_first=True)
    x = torch.randn(batch, n, 8)
    jac = torch.autograd.functional.jacobian(lambda y: mha(y, y, y, attn_mask=attn_mask, need_weights=False)[0], x)
    return np.stack([(jac[b, :, :, b].abs().sum(dim=(1, 3)) != 0).numpy() for b in range(batch)])


def closure(mask: np.ndarray) -> np.ndarray:
    """R*: reflexive-transitive closure of ``mask`` by Floyd–Warshall (no kit code)."""
    r = mask | np.eye(mask.shape[0], dtype=bool)
    for m in range(r.shape[0]):
        r = r | (r[:, [m]] & r[[m], :])
    return r


# --- HF-style additive 4-D masks -----------------------------------------------------------

VARIANTS = {
    "fp32-min": (torch.float32, None, "attend-all"),  # finite: an empty row's softmax is uniform
    "bf16-min": (torch.bfloat16, None, "attend-all"),
    "-inf": (torch.float32, float("-inf"), "attend-none"),  # SDPA's safe softmax returns zeros
    "-1e9": (torch.float32, -1e9, "attend-all"),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_hf_additive_4d_mask(variant):
    dtype, low, policy = VARIANTS[variant]
    mask = hf_mask(dtype, low)
    named, grid = load_mask_grid(mask)
    assert (grid.batch, grid.heads, grid.masks.shape) == (2, None, (2, 1, Q, Q))
    assert np.array_equal(grid.masks[:, 0], hf_expected())
    assert np.array_equal(named.matrix, hf_expected()[0]) and named.spec == f"tensor (2, 1, {Q}, {Q})"
    for b in range(2):  # real SDPA with the very tensor: its gradients are the layer mask under the kernel's policy
        layer, found = grid.layer(b, policy)
        assert np.array_equal(layer, sdpa_reach(mask[b, 0])), (variant, b)
        assert found.rows == ((0, 1) if b == 1 else ())
    assert hasse.load_mask(mask).spec.endswith("[batch row 0 of 2]")


def test_additive_bias_is_allowed_and_small_values_block():
    bias = torch.tensor([[0.0, -3.5, -1e4], [2.0, -9999.0, float("-inf")]])  # an ALiBi-like bias, -1e4 blocks
    assert load_mask(bias, queries="end").matrix[-2:].astype(int).tolist() == [[1, 1, 0], [1, 1, 0]]


def test_planted_additive_zero_read_as_blocked_is_caught(monkeypatch):
    """Plant the bug 'additive 0 is blocked' (threshold above 0): the HF reference no longer matches."""
    monkeypatch.setattr(mask_arrays, "BLOCKED_AT", 0.5)
    grid = load_mask_grid(hf_mask(torch.float32))[1]
    assert not np.array_equal(grid.masks[:, 0], hf_expected())


def test_hf_pt_file_through_analyze_and_flow(tmp_path, capsys):
    path = tmp_path / "hf.pt"
    torch.save(hf_mask(torch.bfloat16), path)
    np.save(tmp_path / "hf.npy", hf_mask(torch.float32).numpy())
    for source in (path, tmp_path / "hf.npy"):
        data = run_json(capsys, "analyze", source, "--layers", "1")
        assert data["batch"] == 2 and len(data["batches"]) == 2
        for b, row in enumerate(data["batches"]):
            expected = hf_expected()[b] | np.eye(Q, dtype=bool)
            assert np.array_equal(np.array(row["reachability"], dtype=bool), expected), (source, b)
        for s in range(Q):  # which positions depend on s, in the limit
            flows = run_json(capsys, "flow", source, "--from", s, "--to", f"0-{Q - 1}", "--empty-rows", "attend-none")
            for b, row in enumerate(flows["batches"]):
                found = {f["position"] for f in row["flows"]}
                assert found == set(np.flatnonzero(closure(hf_expected()[b])[:, s]).tolist()), (source, s, b)
    code, out, err = run(capsys, "analyze", path)
    assert code == 0 and "batch row 1 of 2" in out


# --- FlexAttention BlockMask -------------------------------------------------------------------

flex = pytest.importorskip("torch.nn.attention.flex_attention")


def sliding(w):
    def mask_mod(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx).abs() <= w
    return mask_mod


def causal_mod(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


@pytest.mark.parametrize("n, block, mod, reference", [
    (37, 8, sliding(3), lambda q, k: abs(q - k) <= 3),  # n not a multiple of the block: partial blocks and a cut
    (20, 4, sliding(5), lambda q, k: abs(q - k) <= 5),
    (37, 16, causal_mod, lambda q, k: k <= q),  # full blocks below the diagonal skip mask_mod
])
def test_block_mask_is_token_exact(n, block, mod, reference):
    bm = flex.create_block_mask(mod, None, None, n, n, device="cpu", BLOCK_SIZE=block)
    assert int(bm.kv_num_blocks.sum()) > 0  # partial blocks exist, so to_dense() alone is coarser
    expected = np.fromfunction(reference, (n, n), dtype=int).astype(bool)
    named = hasse.load_mask(bm)
    assert np.array_equal(named.matrix, expected)
    assert named.spec == f"BlockMask(Q={n}, K={n}, BLOCK_SIZE=({block},{block}))"
    coarse = np.kron(bm.to_dense()[0, 0].numpy(), np.ones((block, block)))[:n, :n].astype(bool)
    assert not np.array_equal(coarse, expected) and (coarse >= expected).all()  # what block size alone would say


def test_block_mask_per_batch_and_head():
    def mod(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & ((q_idx - kv_idx) <= 2 + 3 * h + 7 * b)
    bm = flex.create_block_mask(mod, 2, 3, 22, 22, device="cpu", BLOCK_SIZE=8)
    named, grid = load_mask_grid(bm, torch_reader=read_torch)
    assert (grid.batch, grid.heads) == (2, 3) and named.spec.startswith("BlockMask(B=2, H=3, Q=22")
    q, k = np.arange(22)[:, None], np.arange(22)[None, :]
    for b in range(2):
        for h in range(3):
            assert np.array_equal(grid.masks[b, h], (k <= q) & (q - k <= 2 + 3 * h + 7 * b)), (b, h)
        assert np.array_equal(grid.layer(b)[0], (k <= q) & (q - k <= 8 + 7 * b))  # union over heads


def test_block_mask_without_mask_mod_warns_block_granular():
    bm = flex.create_block_mask(sliding(3), None, None, 20, 20, device="cpu", BLOCK_SIZE=8)
    bare = flex.BlockMask.from_kv_blocks(bm.kv_num_blocks, bm.kv_indices, BLOCK_SIZE=8, seq_lengths=(20, 20))
    with pytest.warns(UserWarning, match="block-granular.*block size 8 x 8"):
        named = hasse.load_mask(bare)
    coarse = np.kron(bm.to_dense()[0, 0].numpy(), np.ones((8, 8)))[:20, :20].astype(bool)
    assert np.array_equal(named.matrix, coarse)


def test_block_mask_refuses_other_conventions():
    bm = flex.create_block_mask(causal_mod, None, None, 8, 8, device="cpu", BLOCK_SIZE=4)
    with pytest.raises(InputError, match="BlockMask says which pairs are allowed"):
        load_mask(bm, convention="blocked", torch_reader=read_torch)


# --- nn.MultiheadAttention conventions ---------------------------------------------------------


def test_mha_blocked_bool_mask(tmp_path, capsys):
    n = 5
    blocked = torch.triu(torch.ones(n, n), 1).bool()  # True = NOT allowed
    named = hasse.load_mask(blocked, convention="blocked")
    assert np.array_equal(named.matrix | np.eye(n, dtype=bool), mha_reach(blocked, 1, n, 2)[0])
    assert np.array_equal(named.matrix, np.tril(np.ones((n, n), dtype=bool)))
    with pytest.warns(UserWarning, match="no query attends itself"):  # read the wrong way round: said so
        assert not hasse.load_mask(blocked).matrix.diagonal().any()
    torch.save(blocked, tmp_path / "mha.pt")
    data = run_json(capsys, "analyze", tmp_path / "mha.pt", "--convention", "blocked", "--layers", "1")
    assert np.array_equal(np.array(data["reachability"], dtype=bool), np.tril(np.ones((n, n), dtype=bool)))


def test_generate_square_subsequent_mask_auto(tmp_path, capsys):
    n = 6
    mask = torch.nn.Transformer.generate_square_subsequent_mask(n)  # float: 0 and -inf
    named = hasse.load_mask(mask)
    assert np.array_equal(named.matrix, mha_reach(mask, 1, n, 2)[0])
    torch.save({"attn_mask": mask, "note": 3}, tmp_path / "sub.pt")
    data = run_json(capsys, "analyze", tmp_path / "sub.pt", "--layers", "1")
    assert np.array_equal(np.array(data["reachability"], dtype=bool), np.tril(np.ones((n, n), dtype=bool)))


def test_mha_batch_times_heads_layout(tmp_path, capsys):
    batch, heads, n = 2, 2, 5
    gen = torch.Generator().manual_seed(3)
    blocked = torch.rand(batch * heads, n, n, generator=gen) < 0.6  # MHA's (B * H, L, S), True = blocked
    blocked[:, torch.arange(n), torch.arange(n)] = False  # no empty rows
    named, grid = load_mask_grid(blocked, convention="blocked", heads=heads)
    assert (grid.batch, grid.heads) == (batch, heads)
    real = mha_reach(blocked, batch, n, heads)
    for b in range(batch):
        assert np.array_equal(grid.layer(b)[0] | np.eye(n, dtype=bool), real[b]), b
    torch.save(blocked, tmp_path / "bh.pt")
    data = run_json(capsys, "analyze", tmp_path / "bh.pt", "--convention", "blocked", "--heads", heads,
                    "--layers", "1")
    for b, row in enumerate(data["batches"]):
        assert np.array_equal(np.array(row["reachability"], dtype=bool), real[b]), b


def test_planted_head_dropped_from_union_is_caught():
    """Plant 'the union forgets the last head': the MHA reference no longer matches."""
    batch, heads, n = 1, 2, 4
    blocked = torch.ones(batch * heads, n, n, dtype=torch.bool)
    blocked[0] = ~torch.eye(n, dtype=torch.bool)  # head 0: itself only
    blocked[1] = torch.triu(torch.ones(n, n), 1).bool()  # head 1: causal
    grid = load_mask_grid(blocked, convention="blocked", heads=heads)[1]
    real = mha_reach(blocked, batch, n, heads)[0]
    assert np.array_equal(grid.layer(0)[0], real)
    assert not np.array_equal(grid.masks[0, :-1].any(axis=0), real)


# --- the Python API with tensors and .pt files ---------------------------------------------------


def test_api_tensor_and_pt_file(tmp_path):
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4)
    hasse.assert_no_leak(causal, labels=[1, 2, 3, None])
    with pytest.raises(AssertionError, match="depends on position 1"):
        hasse.assert_no_leak(torch.zeros(4, 4, dtype=torch.bool), labels=[1, 2, 3, None], convention="blocked")
    with pytest.raises(AssertionError, match="batch row 1"):  # every batch row is checked
        padded = hf_mask(torch.float32)
        padded[1, 0, 0, 1] = 0.0  # batch row 1: query 0 sees key 1
        hasse.assert_no_leak(padded, labels=[1, 2, 3, 4, 5, None])
    torch.save({"attention_mask": hf_mask(torch.float32)}, tmp_path / "m.pt")
    assert np.array_equal(hasse.load_mask(str(tmp_path / "m.pt")).matrix, hf_expected()[0])
    hasse.assert_no_leak(str(tmp_path / "m.pt"), labels=[None, None, 3, 4, 5, None])  # padding: no labels
    with pytest.raises(AssertionError, match="batch row 1: 1 leak"):  # an empty padding row attends every key
        hasse.assert_no_leak(str(tmp_path / "m.pt"), labels=[1, None, 3, 4, 5, None])
    assert hasse.mask_to_analysis(hf_mask(torch.bfloat16)).convergence_depth == 1


# --- refusals: one line naming the source, the shape and what to do -------------------------------


def expect(exc_match, *args, **kwargs):
    with pytest.raises(InputError, match=exc_match) as info:
        load_mask(*args, torch_reader=read_torch, **kwargs)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_refusals(tmp_path, capsys):
    expect(r"all-zero float mask of shape \(3, 3\) is ambiguous.*--convention", torch.zeros(3, 3))
    nan = torch.zeros(1, 2, 3, 4)
    nan[0, 1, 2, 3] = float("nan")
    expect(r"NaN at \[0, 1, 2, 3\]", nan)
    expect(r"2-D \(Q, K\), 3-D \(H, Q, K\) or 4-D \(B, H, Q, K\), got 5-D with shape \(1, 1, 1, 2, 2\)",
           torch.ones(1, 1, 1, 2, 2, dtype=torch.bool))
    expect("a bool array cannot be additive", torch.ones(2, 2, dtype=torch.bool), convention="additive")
    expect(r"heads = 4 does not divide the leading dimension 6", torch.ones(6, 2, 2, dtype=torch.bool), heads=4)
    expect(r"neither 0/1 nor an additive mask \(found 0.5 at \[0, 1\]", np.array([[1, 0.5], [1, 1]]))
    expect(r"values must be 0/1 or true/false, found 2 at \[1, 0\]", np.array([[1, 0], [2, 1]]))
    expect("convention must be one of", torch.ones(2, 2), convention="inverse")
    torch.save(torch.zeros(3, 3), tmp_path / "zero.pt")
    torch.save({"a": torch.ones(2, 2), "b": torch.ones(2, 2)}, tmp_path / "two.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a pickle at all")
    expect("holds a dict with 2 tensors", str(tmp_path / "two.pt"))
    expect("torch.load.weights_only=True. cannot read it", str(tmp_path / "junk.pt"))
    with pytest.raises(InputError, match="reading a .pt file needs torch"):  # no torch reader: the extra is named
        load_mask(str(tmp_path / "zero.pt"))
    with pytest.raises(InputError, match="convention blocked applies to arrays"):
        load_mask("causal:n=3", convention="blocked")
    code, out, err = run(capsys, "analyze", tmp_path / "zero.pt")
    assert code == 2 and err.count("\n") == 1 and "zero.pt" in err and "--convention" in err
    code, out, err = run(capsys, "analyze", "causal:n=3", "--heads", "2")
    assert code == 2 and "--heads and --batch apply to" in err


def test_no_warnings_for_ordinary_masks():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_mask_grid(hf_mask(torch.float32))
        load_mask(np.tril(np.ones((3, 3), dtype=bool)))


def test_leak_and_gpu_check_take_pt_files_and_conventions(tmp_path, capsys):
    n = 5
    torch.save(torch.triu(torch.ones(n, n), 1).bool(), tmp_path / "mha.pt")  # True = blocked
    code, out, err = run(capsys, "leak", tmp_path / "mha.pt", "--convention", "blocked")
    assert code == 0 and "LEAK-FREE" in out
    code, out, err = run(capsys, "leak", tmp_path / "mha.pt")  # read as allowed: every query sees the future
    assert code == 1 and "no query attends itself" in err
    code, out, err = run(capsys, "gpu-check", tmp_path / "mha.pt", "--convention", "blocked", "--layers", "1")
    assert code == 0 and "PASS" in out


def flex_probe(bm, n: int) -> np.ndarray:
    """Which values reach which outputs of real FlexAttention (CPU, forward only: one value perturbed at a time)."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, n, 16, generator=gen) for _ in range(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager flex_attention warns that it is not compiled
        base = flex.flex_attention(q, k, v, block_mask=bm)
        out = np.zeros((n, n), dtype=bool)
        for j in range(n):
            v2 = v.clone()
            v2[0, 0, j] += 1.0
            out[:, j] = ((flex.flex_attention(q, k, v2, block_mask=bm) - base).abs().sum(-1)[0, 0] != 0).numpy()
    return out


def test_block_mask_against_real_flex_attention():
    n = 20
    for bm in (flex.create_block_mask(sliding(3), None, None, n, n, device="cpu", BLOCK_SIZE=8),
               flex.create_block_mask(causal_mod, None, None, n, n, device="cpu", BLOCK_SIZE=4)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a consistent BlockMask: no warning
            loaded = hasse.load_mask(bm).matrix
        assert np.array_equal(loaded, flex_probe(bm, n))


def blocks_to_tokens(num, idx, size: int, n: int) -> np.ndarray:
    """Token mask of FlexAttention's ordered block lists, written with loops (no kit code)."""
    out = np.zeros((n, n), dtype=bool)
    for qb in range(num.shape[-1]):
        for j in range(int(num[0, 0, qb])):
            kb = int(idx[0, 0, qb, j])
            out[qb * size:(qb + 1) * size, kb * size:(kb + 1) * size] = True
    return out


def test_hand_built_block_mask_read_as_the_block_sparse_kernel():
    """Blocks that disagree with the mask_mod: a dropped partial block, a full block where mask_mod says no.

    The kernel reads full blocks whole and partial ones through mask_mod, nothing else (written out below
    with loops); flex_attention's eager CPU path evaluates the mask_mod alone (the probe shows it), and a
    warning names the difference."""
    n, size = 16, 4
    causal = flex.create_block_mask(causal_mod, None, None, n, n, device="cpu", BLOCK_SIZE=size)
    num = causal.kv_num_blocks.clone()
    num[0, 0, 3] -= 1  # drop the last partial block of queries 12-15 (the diagonal block)

    def not_key_1(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (kv_idx != 1)
    odd = flex.BlockMask.from_kv_blocks(num, causal.kv_indices, causal.full_kv_num_blocks, causal.full_kv_indices,
                                        BLOCK_SIZE=size, mask_mod=not_key_1, seq_lengths=(n, n))
    with pytest.warns(UserWarning, match="blocks and its mask_mod disagree"):
        loaded = hasse.load_mask(odd).matrix
    q, k = np.arange(n)[:, None], np.arange(n)[None, :]
    partial = blocks_to_tokens(num, causal.kv_indices, size, n)
    full = blocks_to_tokens(causal.full_kv_num_blocks, causal.full_kv_indices, size, n)
    assert np.array_equal(loaded, full | (partial & (k <= q) & (k != 1)))
    assert loaded[4:, 1].all() and not loaded[12:, 12:].any()
    assert np.array_equal(flex_probe(odd, n), (k <= q) & (k != 1))  # the CPU path: the mask_mod alone


def test_a_task_file_whose_mask_is_a_pt_file_reads_it_with_torch(tmp_path):
    # The task reader once got no torch_reader: "reading a .pt file needs torch" with torch installed.
    import json as _json

    import hasse
    from hasse.cli import main

    causal = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    torch.save(causal, tmp_path / "m.pt")
    inputs = [["x0", 0], ["x1", 1], ["x2", 2], ["x3", 3]]
    task = {"tokens": 4, "inputs": inputs, "labels": [1, 2, 3, None], "mask": "m.pt"}
    (tmp_path / "t.json").write_text(_json.dumps(task))
    loaded = hasse.load_task(str(tmp_path / "t.json"))
    assert loaded.mask.tolist() == causal.numpy().tolist()
    assert main(["leak", str(tmp_path / "t.json")]) == 0
    task["mask"] = "m_bidir.pt"
    torch.save(torch.ones(4, 4, dtype=torch.bool), tmp_path / "m_bidir.pt")
    (tmp_path / "t.json").write_text(_json.dumps(task))
    assert main(["leak", str(tmp_path / "t.json")]) == 1

"""Non-square masks (issue 11): Q_LEN != KV_LEN read as positions, with key-only positions named.

A ``(Q, K)`` mask is embedded in a square mask over positions (``theory.mask.square_up``):
queries at the end (a KV cache: decoding, chunked prefill, tree speculation over a cached
prefix) or after a separate memory (cross-attention). Key-only positions feed the queries
and attend nothing; they are never empty rows.

Independent references: the catalogue's causal and tree specs (built by their own rules,
square), a hand-derived reach for the tree, and real torch attention (SDPA reads a
``(Q, K)`` boolean mask natively; which values reach which output is read off gradients).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from hasse.cli import main
from hasse.theory.catalog import build_mask
from hasse.theory.errors import InputError
from hasse.theory.mask import square_up
from tests.mask_reading import load_mask
from hasse.theory.user_code import ARGUMENT  # a mask_mod named by the caller (issue 20)

CACHE = 6  # cached positions before the decoded token


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv, expect=0):
    code, out, err = run(capsys, *argv, "--json")
    assert code == expect, err
    return json.loads(out)


def hf_decode_mask(cache: int, new: int = 1) -> np.ndarray:
    """The boolean mask Hugging Face builds for ``new`` tokens after ``cache`` cached ones: (new, cache + new).

    ``cache_position = arange(cache, cache + new)``; key ``k`` is allowed iff ``k <= cache_position[q]``.
    """
    torch = pytest.importorskip("torch")
    cache_position = torch.arange(cache, cache + new)
    kv = torch.arange(cache + new)
    return (kv[None, :] <= cache_position[:, None]).numpy()  # (new, cache + new)


def torch_dependencies(mask: np.ndarray) -> np.ndarray:
    """``D[i, k]``: query row ``i`` of one real SDPA layer depends on value ``k`` (nonzero gradient), (Q, K)."""
    torch = pytest.importorskip("torch")
    q_len, k_len = mask.shape
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, q_len, 8, generator=gen, dtype=torch.float64)
    k = torch.randn(1, 1, k_len, 8, generator=gen, dtype=torch.float64)
    deps = np.zeros((q_len, k_len), dtype=bool)
    for i in range(q_len):
        v = torch.randn(1, 1, k_len, 8, generator=gen, dtype=torch.float64, requires_grad=True)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=torch.from_numpy(mask))
        out[0, 0, i].sum().backward()
        deps[i] = (v.grad[0, 0].abs().sum(dim=-1) > 0).numpy()
    return deps


# --------------------------------------------------------------- square_up


def test_square_up_layouts_by_hand():
    sq, key_only, kind = square_up(np.array([[1, 0, 1]], dtype=bool))
    assert key_only == (0, 1) and kind == "cache"
    assert sq.astype(int).tolist() == [[0, 0, 0], [0, 0, 0], [1, 0, 1]]
    sq, key_only, kind = square_up(np.array([[1, 0], [0, 1], [1, 1]], dtype=bool), "separate")
    assert key_only == (0, 1) and kind == "memory" and sq.shape == (5, 5)
    assert sq.astype(int).tolist() == [[0] * 5, [0] * 5, [1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 1, 0, 0, 0]]
    square = np.tril(np.ones((3, 3), dtype=bool))
    same, key_only, kind = square_up(square)
    assert same is not None and np.array_equal(same, square) and key_only == () and kind == ""


# --------------------------------------------------------------- KV-cache decoding, 1 x (cache + 1)


@pytest.fixture
def decode_file(tmp_path):
    path = tmp_path / "decode.npy"
    np.save(path, hf_decode_mask(CACHE))
    return path


def test_decode_loads_with_the_cache_key_only(decode_file):
    named = load_mask(str(decode_file))
    assert named.n == CACHE + 1 and named.queries == 1
    assert named.key_only == tuple(range(CACHE)) and named.key_only_kind == "cache"
    assert named.matrix[CACHE].all()  # the query sits at position `cache` and attends every key
    assert not named.matrix[:CACHE].any()  # cache entries attend nothing in this layer


def test_decode_matches_real_sdpa(decode_file):
    """Which values reach the decoded token in real SDPA = which positions flow into it here."""
    mask = hf_decode_mask(CACHE)
    from hasse.theory.leak import find_flows

    flows = {f.source for f in find_flows(load_mask(str(decode_file)).matrix, range(CACHE), [CACHE])}
    # find_flows reports the nearest source only; check each cache position on its own
    reached = [bool(find_flows(load_mask(str(decode_file)).matrix, [k], [CACHE])) for k in range(CACHE)]
    assert flows and reached == torch_dependencies(mask)[0, :CACHE].tolist() == [True] * CACHE


def test_decode_reports_carry_key_only(capsys, decode_file):
    data = run_json(capsys, "analyze", decode_file)
    assert data["key_only"] == {"positions": list(range(CACHE)), "kind": "cache"}
    assert data["empty_rows"]["rows"] == []
    code, out, _ = run(capsys, "analyze", decode_file)
    assert code == 0
    assert f"key-only positions (KV cache, feed the queries, attend nothing): 0-{CACHE - 1}" in out

    into = run_json(capsys, "flow", decode_file, "--from", f"0-{CACHE - 1}", "--to", CACHE, expect=1)
    assert into["key_only"] == {"positions": list(range(CACHE)), "kind": "cache"}
    assert [f["path"] for f in into["flows"]] == [[0, CACHE]]
    out_of = run_json(capsys, "flow", decode_file, "--from", CACHE, "--to", f"0-{CACHE - 1}")
    assert out_of["flows"] == [] and out_of["key_only"]["positions"] == list(range(CACHE))
    plain = run_json(capsys, "flow", "causal:n=3", "--from", 0, "--to", 2, expect=1)
    assert plain["key_only"] == {"positions": [], "kind": None}


def test_leak_report_carries_key_only(capsys, decode_file):
    """next-token prediction over the squared decode mask: the decoded token predicts x_{cache+1}... here the
    query is supervised with a cached token, so it leaks through the cache, and the report names the cache."""
    from hasse.views.leak_report import leak_json, leak_report
    from hasse.theory.leak import find_leaks
    from hasse.theory.task import make_task

    named = load_mask(str(decode_file))
    n = named.n
    task = make_task(n, [(f"x{i}", i) for i in range(n)], [None] * CACHE + [0], named.matrix)
    report = find_leaks(task, key_only=named.key_only, key_only_kind=named.key_only_kind)
    assert not report.leak_free and report.leaks[0].path == (0, CACHE)
    assert report.empty_rows == ()  # the cache rows are not empty rows, even under attend-all
    assert leak_json(task, report)["key_only"] == {"positions": list(range(CACHE)), "kind": "cache"}
    assert "key-only positions (KV cache" in leak_report(task, report)
    data = run_json(capsys, "leak", "butterfly:n=3")
    assert data["key_only"] == {"positions": [], "kind": None}


# --------------------------------------------------------------- chunked prefill


def test_chunked_prefill_is_the_bottom_of_causal(tmp_path, capsys):
    """Q = 4 new tokens after 8 cached ones: a mask_mod offset by the cache, on the 4 x 12 grid."""
    (tmp_path / "prefill.py").write_text("def chunk(b, h, q_idx, kv_idx):\n    return kv_idx <= q_idx + 8\n")
    source = f"{tmp_path / 'prefill.py'}:chunk"
    named = load_mask(source, n=4, kv_len=12, code=ARGUMENT)
    causal = build_mask("causal:n=12")  # the catalogue's own rule
    causal = getattr(causal, "matrix", causal)
    assert named.n == 12 and named.key_only == tuple(range(8)) and named.key_only_kind == "cache"
    assert np.array_equal(named.matrix[8:], causal[8:])
    assert not named.matrix[:8].any()
    assert np.array_equal(torch_dependencies(named.matrix[8:]), causal[8:])  # real SDPA on the 4 x 12 mask
    data = run_json(capsys, "analyze", source, "--n", 4, "--kv-len", 12)
    assert data["key_only"] == {"positions": list(range(8)), "kind": "cache"}


def test_leak_takes_kv_len(tmp_path, capsys):
    """hasse leak on a decoding mask_mod (Q = 1, K = 7), read as next-token prediction: the cache is named and,
    attending nothing, does not leak even under the default attend-all reading of empty rows."""
    (tmp_path / "dec.py").write_text("def dec(b, h, q_idx, kv_idx):\n    return kv_idx <= q_idx + 6\n")
    data = run_json(capsys, "leak", f"{tmp_path / 'dec.py'}:dec", "--n", 1, "--kv-len", 7)
    assert data["key_only"] == {"positions": list(range(6)), "kind": "cache"} and data["leak_free"]


def test_kv_len_needs_n(tmp_path, capsys):
    (tmp_path / "m.py").write_text("def f(b, h, q_idx, kv_idx):\n    return kv_idx <= q_idx\n")
    code, _, err = run(capsys, "analyze", f"{tmp_path / 'm.py'}:f", "--kv-len", 5)
    assert code == 2 and err.count("\n") == 1 and "--n" in err


# --------------------------------------------------------------- cross-attention


def test_cross_attention_separate(tmp_path, capsys):
    path = tmp_path / "cross.npy"
    np.save(path, np.ones((3, 5), dtype=bool))
    named = load_mask(str(path), queries="separate")
    assert named.n == 8 and named.key_only == (0, 1, 2, 3, 4) and named.key_only_kind == "memory"
    expected = np.zeros((8, 8), dtype=bool)
    expected[5:, :5] = True
    assert np.array_equal(named.matrix, expected)
    data = run_json(capsys, "analyze", path, "--queries", "separate")
    assert data["key_only"] == {"positions": [0, 1, 2, 3, 4], "kind": "memory"}
    code, out, _ = run(capsys, "analyze", path, "--queries", "separate")
    assert "key-only positions (cross-attended memory, feed the queries, attend nothing): 0-4" in out


def test_more_queries_than_keys_needs_separate(tmp_path, capsys):
    path = tmp_path / "wide.npy"
    np.save(path, np.ones((5, 3), dtype=bool))
    with pytest.raises(InputError, match="5 query rows but 3 key columns"):
        load_mask(str(path))
    code, out, err = run(capsys, "analyze", path)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "wide.npy" in err and "--queries separate" in err and "Traceback" not in err
    assert load_mask(str(path), queries="separate").n == 8


# --------------------------------------------------------------- tree speculation over a cached prefix

PARENTS = (-1, 0, 0, 1)  # t0 root; t1, t2 children of t0; t3 child of t1
PREFIX = 6


def tree_reach(q: int, k: int) -> bool:
    """Hand-derived limit: q depends on k iff k = q, or q is a tree node and k is cached or an ancestor of q."""
    if k == q:
        return True
    if q < PREFIX:
        return False  # cached positions attend nothing in this layer
    if k < PREFIX:
        return True
    node, ancestors = q - PREFIX, set()
    while PARENTS[node] >= 0:
        node = PARENTS[node]
        ancestors.add(node)
    return k - PREFIX in ancestors


def test_tree_speculation_over_a_cached_prefix(tmp_path):
    from hasse.theory.leak import find_flows

    tree = build_mask(f"tree:parents={'+'.join(map(str, PARENTS))},prefix={PREFIX}").matrix
    path = tmp_path / "tree.npy"
    np.save(path, tree[PREFIX:])  # the 4 x 10 mask a speculative step passes to attention
    named = load_mask(str(path))
    assert named.key_only == tuple(range(PREFIX))
    n = named.n
    got = np.array([[bool(find_flows(named.matrix, [k], [q], key_only=named.key_only)) for k in range(n)]
                    for q in range(n)])
    expected = np.array([[tree_reach(q, k) for k in range(n)] for q in range(n)])
    assert np.array_equal(got, expected)
    assert got[PREFIX + 3, PREFIX + 1] and not got[PREFIX + 3, PREFIX + 2]  # t3 sees t1, not its uncle t2


# --------------------------------------------------------------- key-only rows are not empty rows


def check_key_only_rows_not_filled(capsys, decode_file):
    data = run_json(capsys, "analyze", decode_file, "--empty-rows", "attend-all", "--layers", 1)
    assert data["empty_rows"]["rows"] == []
    reach = np.array(data["reachability"], dtype=bool)
    assert np.array_equal(reach[:CACHE], np.eye(CACHE + 1, dtype=bool)[:CACHE])  # a cache entry: itself only
    out_of = run_json(capsys, "flow", decode_file, "--from", CACHE, "--to", f"0-{CACHE - 1}",
                      "--empty-rows", "attend-all")
    assert out_of["flows"] == []
    # hasse leak on the bare mask (next-token prediction): a cache entry that attended every key would see x_{i+1}
    leak = run_json(capsys, "leak", decode_file)
    assert leak["leak_free"] and leak["empty_rows"]["rows"] == []
    assert leak["key_only"] == {"positions": list(range(CACHE)), "kind": "cache"}


def test_key_only_rows_are_not_filled_by_attend_all(capsys, decode_file):
    check_key_only_rows_not_filled(capsys, decode_file)


def test_planted_policy_fills_key_only_rows_is_caught(capsys, decode_file, monkeypatch):
    """Plant: the empty-row policy forgets the key-only positions, so attend-all fills the cache rows."""
    import hasse.theory.empty_rows as er
    import hasse.theory.heads as heads_module

    real = er.empty_rows

    def forgetful(mask, key_only=()):
        return real(mask)

    monkeypatch.setattr(er, "empty_rows", forgetful)
    monkeypatch.setattr(heads_module, "empty_rows", forgetful)
    with pytest.raises(AssertionError):
        check_key_only_rows_not_filled(capsys, decode_file)


# --------------------------------------------------------------- mask_mod on Q x K = the same mask as an array


@pytest.mark.parametrize("queries", [None, "separate"])
def test_mask_mod_kv_len_equals_array(tmp_path, queries):
    (tmp_path / "win.py").write_text(
        "def window(b, h, q_idx, kv_idx):\n    q = q_idx + 5\n    return (kv_idx <= q) & (kv_idx > q - 3)\n")
    array = np.array([[(k <= i + 5) and (k > i + 5 - 3) for k in range(8)] for i in range(3)], dtype=bool)
    path = tmp_path / "win.npy"
    np.save(path, array)
    from_mod = load_mask(f"{tmp_path / 'win.py'}:window", n=3, kv_len=8, queries=queries, code=ARGUMENT)
    from_array = load_mask(str(path), queries=queries)
    assert np.array_equal(from_mod.matrix, from_array.matrix)
    assert (from_mod.key_only, from_mod.key_only_kind, from_mod.names) == \
        (from_array.key_only, from_array.key_only_kind, from_array.names)
    assert from_mod.key_only == (tuple(range(5)) if queries is None else tuple(range(8)))


def test_mask_mod_kv_len_with_heads(tmp_path, capsys):
    """Heads on a Q x K grid: the union over heads, squared up, with the cache named."""
    (tmp_path / "heads.py").write_text(
        "def f(b, h, q_idx, kv_idx):\n    return (kv_idx == q_idx + 4) | ((h == 1) & (kv_idx == 0))\n")
    data = run_json(capsys, "analyze", f"{tmp_path / 'heads.py'}:f", "--n", 2, "--kv-len", 6, "--heads", 2)
    assert data["key_only"] == {"positions": [0, 1, 2, 3], "kind": "cache"}
    assert data["empty_rows"]["rows"] == []


def test_torch_mask_mod_on_q_by_k(tmp_path):
    """A mask_mod written with torch ops (numpy fails on it) is evaluated on the Q x K grid by the torch fallback."""
    pytest.importorskip("torch")
    from hasse.gpu_check.torch_masks import register_input_hooks
    from hasse.theory.inputs.read import Reading, read

    register_input_hooks()  # as the command line and hasse.api do: the torch fallback

    (tmp_path / "t.py").write_text(
        "def f(b, h, q_idx, kv_idx):\n"
        "    return kv_idx.le(q_idx + 3)  # Tensor.le: numpy arrays have no .le\n")
    with pytest.raises(InputError, match="on numpy index arrays"):  # so the torch fallback is what runs below
        load_mask(f"{tmp_path / 't.py'}:f", n=2, kv_len=5, code=ARGUMENT)
    named = read(f"{tmp_path / 't.py'}:f", Reading(n=2, kv_len=5), accept=("mask",)).mask
    assert named.key_only == (0, 1, 2)
    assert named.matrix[3:].astype(int).tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]


# --------------------------------------------------------------- real torch objects through the API


def test_hf_additive_4d_decode_mask_through_the_api():
    """A decode step as Hugging Face eager attention gets it: (B, 1, 1, cache + 1) additive, finfo.min where
    blocked; batch row 1 has its first cached key padded out."""
    torch = pytest.importorskip("torch")
    import hasse

    dtype = torch.float32
    mask = torch.zeros(2, 1, 1, CACHE + 1, dtype=dtype)  # (B, H, Q, K): the new token sees every key
    mask[1, :, :, 0] = torch.finfo(dtype).min  # left padding in batch row 1
    named = hasse.load_mask(mask)
    assert named.key_only == tuple(range(CACHE)) and named.key_only_kind == "cache"
    assert named.matrix[CACHE].all() and not named.matrix[:CACHE].any()
    analysis = hasse.mask_to_analysis(mask, empty_rows="attend-all")
    assert analysis.key_only == tuple(range(CACHE)) and analysis.empty_rows == ()


def test_cross_attention_tensor_through_the_api():
    """A cross-attention mask (4 decoder queries over a memory of 3 encoder keys, one key padded): Q > K."""
    torch = pytest.importorskip("torch")
    import hasse

    mask = torch.ones(4, 3, dtype=torch.bool)
    mask[:, 2] = False  # the padded encoder position
    with pytest.raises(InputError, match="queries=separate"):
        hasse.load_mask(mask)
    named = hasse.load_mask(mask, queries="separate")
    assert named.n == 7 and named.key_only == (0, 1, 2) and named.key_only_kind == "memory"
    flows = hasse.find_flows(mask, [0, 1, 2], range(3, 7), queries="separate")
    assert sorted(f.position for f in flows) == [3, 4, 5, 6] and {f.source for f in flows} == {0}
    assert not hasse.find_flows(mask, [2], range(3, 7), queries="separate")  # the padded key feeds nobody


def test_assert_no_leak_on_a_non_square_array():
    """assert_no_leak reads a (Q, K) array like every command: cache rows are not filled by attend-all."""
    import hasse

    decode = np.ones((1, CACHE + 1), dtype=bool)
    hasse.assert_no_leak(decode, [i + 1 for i in range(CACHE)] + [None])  # cache entries attend nothing: clean
    prefill = np.ones((2, 4), dtype=bool)  # 2 queries (positions 2, 3) attending every key, itself and the next
    with pytest.raises(AssertionError, match="3 -> 2"):
        hasse.assert_no_leak(prefill, [None, None, 3, None])


def test_error_policy_refuses_query_rows_only(tmp_path, capsys, decode_file):
    """--empty-rows error (and --strict) accept the cache rows; an empty *query* row is still an empty row."""
    assert run(capsys, "analyze", decode_file, "--strict")[0] == 0
    assert run(capsys, "flow", decode_file, "--from", CACHE, "--to", 0, "--empty-rows", "error")[0] == 0
    lonely = tmp_path / "lonely.npy"
    np.save(lonely, np.array([[0, 0, 0, 0], [1, 1, 1, 1]], dtype=bool))  # query at position 2 attends nothing
    data = run_json(capsys, "analyze", lonely)
    assert data["empty_rows"]["rows"] == [2] and data["key_only"]["positions"] == [0, 1]
    code, _, err = run(capsys, "analyze", lonely, "--strict")
    assert code == 2 and err.count("\n") == 1 and "empty row" in err and ": 2;" in err

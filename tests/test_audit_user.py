"""hasse audit of the user's own model: a hand-written module, a transformers model with a patched attention
function, a checkpoint directory, and the user's batch (readers, layout, refusals).

The truth is measured here directly: full autograd Jacobians of each block's output with respect to the
input embedding (a forward hook puts the leaf there), at the model's own embedding and at a seeded random
one, against the intended flow written as explicit loops. The planted bugs: a short convolution that reads
across document boundaries (its twin resets at them), and an attention function that drops the document
mask for the queries of the last document only.
"""

from __future__ import annotations

import importlib.util
import json
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hasse.gpu_check.audit.batch import (batch_for_layout, layout_of_batch, normalize_batch,  # noqa: E402
                                         read_batch)
from hasse.gpu_check.audit.scenarios import PAD, make_scenario  # noqa: E402
from hasse.theory.errors import InputError  # noqa: E402

TINY = textwrap.dedent('''
    """Block 0: a depthwise causal Conv1d of width 3 (+ MLP); block 1: attention within documents (+ MLP)."""
    import torch
    from torch import nn


    def documents(position_ids):
        return torch.cumsum(position_ids == 0, dim=-1)  # a new document at each restart at 0


    class ShortConv(nn.Module):
        def __init__(self, width, kernel=3, reset=False):
            super().__init__()
            self.conv = nn.Conv1d(width, width, kernel, groups=width, padding=kernel - 1)
            self.kernel, self.reset = kernel, reset

        def forward(self, x, position_ids):
            n = x.shape[1]
            if not self.reset:  # the bug: the convolution reads across document boundaries
                return self.conv(x.transpose(1, 2))[..., :n].transpose(1, 2)
            doc = documents(position_ids)
            w = self.conv.weight[:, 0]  # (C, K): tap j reads x[q - (K - 1 - j)]
            y = self.conv.bias.expand_as(x)
            for j in range(self.kernel):
                shift = self.kernel - 1 - j
                moved = torch.nn.functional.pad(x, (0, 0, shift, 0))[:, :n]
                same = torch.zeros_like(doc, dtype=torch.bool)
                same[:, shift:] = doc[:, shift:] == doc[:, :n - shift]
                y = y + moved * same[..., None] * w[:, j]
            return y


    class DocAttention(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(width, width) for _ in range(4))

        def forward(self, x, position_ids):
            n = x.shape[1]
            doc = documents(position_ids)
            allowed = (doc[:, :, None] == doc[:, None, :]) & torch.ones(n, n, dtype=torch.bool).tril()
            scores = self.q(x) @ self.k(x).transpose(1, 2) / x.shape[-1] ** 0.5
            return self.o(scores.masked_fill(~allowed, float("-inf")).softmax(-1) @ self.v(x))


    class MLP(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.up, self.down = nn.Linear(width, 2 * width), nn.Linear(2 * width, width)

        def forward(self, x):
            return self.down(torch.nn.functional.gelu(self.up(x)))


    class Block(nn.Module):
        def __init__(self, width, kind, reset):
            super().__init__()
            self.mixer = ShortConv(width, 3, reset) if kind == "conv" else DocAttention(width)
            self.mlp = MLP(width)

        def forward(self, x, position_ids):
            x = x + self.mixer(x, position_ids)
            return x + self.mlp(x)


    class Tiny(nn.Module):
        def __init__(self, vocab=16, width=16, reset=False):
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            self.layers = nn.ModuleList([Block(width, "conv", reset), Block(width, "attn", reset)])

        def forward(self, input_ids=None, position_ids=None, inputs_embeds=None):
            x = self.embed(input_ids) if inputs_embeds is None else inputs_embeds
            if position_ids is None:
                position_ids = torch.arange(x.shape[1])[None]
            for block in self.layers:
                x = block(x, position_ids)
            return x


    def build(reset=False, lengths=(4, 4)):
        torch.manual_seed(0)
        model = Tiny(reset=reset).double()
        positions = torch.cat([torch.arange(m) for m in lengths])[None]
        return model, {"input_ids": torch.arange(sum(lengths))[None] % 16, "position_ids": positions}


    def broken(reset=False):
        return 1 / 0  # the line the message names


    def not_a_model():
        return {"input_ids": [1, 2]}
''')

LEAKY = textwrap.dedent('''
    """A llama whose registered attention function drops the document mask for the last document's queries."""
    import torch
    from transformers import AttentionInterface, AttentionMaskInterface, LlamaConfig, LlamaModel
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import sdpa_mask

    LAST = {"start": None}


    def leaky_last(module, query, key, value, attention_mask, **kwargs):
        start = LAST["start"]
        if attention_mask is not None and start is not None:
            n = attention_mask.shape[-1]
            mask = attention_mask.clone()
            mask[..., start:, :] = torch.ones(n, n, dtype=torch.bool).tril()[start:]  # every earlier key
            attention_mask = mask
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


    def build(lengths=(3, 3, 4), leak=True):
        AttentionInterface.register("leaky_last", leaky_last)
        AttentionMaskInterface.register("leaky_last", sdpa_mask)
        LAST["start"] = sum(lengths[:-1]) if leak else None
        config = LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                             num_hidden_layers=2, vocab_size=32, max_position_embeddings=128)
        config._attn_implementation = "leaky_last"
        torch.manual_seed(0)
        model = LlamaModel(config).double().eval()
        positions = torch.cat([torch.arange(m) for m in lengths])[None]
        ids = (torch.arange(sum(lengths)) * 7 % 32)[None]
        return model, {"input_ids": ids, "position_ids": positions, "use_cache": False}
''')


BROKEN_LINE = next(i for i, line in enumerate(TINY.splitlines(), 1) if "return 1 / 0" in line)


def module_of(path):
    spec = importlib.util.spec_from_file_location(f"user_model_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.py"
    path.write_text(TINY)
    return path


# ---------------------------------------------------------------- the independent reference


def measured_directly(model, batch, blocks):
    """(L, n, n) bool: block l's output at q depends on the input embedding at k (full Jacobians, two inputs)."""
    from hasse.gpu_check.audit.trace import input_embedding

    embed = input_embedding(model)
    kwargs = {k: v for k, v in batch.items()}
    with torch.no_grad():
        own = embed(kwargs["input_ids"])
    gen = torch.Generator().manual_seed(5)
    found = None
    for x0 in (own, torch.randn(own.shape, generator=gen, dtype=torch.float64).to(own.dtype)):
        outs = []
        handles = [b.register_forward_hook(lambda m, a, o: outs.append(o[0] if isinstance(o, tuple) else o))
                   for b in blocks]

        def f(x):
            outs.clear()
            h = embed.register_forward_hook(lambda m, a, o: x)
            try:
                model(**kwargs)
            finally:
                h.remove()
            return torch.stack([o[0] for o in outs])  # (L, n, C)

        try:
            jac = torch.autograd.functional.jacobian(f, x0, vectorize=True)  # (L, n, C, 1, n, C)
        finally:
            for h in handles:
                h.remove()
        dep = (jac[:, :, :, 0] != 0).any(dim=(2, 4)).numpy()  # (L, n, n)
        found = dep if found is None else found | dep
    return found


def reach_by_loops(masks):
    """R(l) for l = 1..L: a path k -> ... -> q taking one hop (or staying) per layer, by explicit loops."""
    n = masks[0].shape[0]
    dep, out = np.eye(n, dtype=bool), []
    for m in masks:
        new = np.zeros_like(dep)
        for q in range(n):
            for j in range(n):
                if m[q, j] or q == j:
                    new[q] |= dep[j]
        dep = new
        out.append(dep.copy())
    return np.stack(out)


def layer_by_loops(docs, kind, width=None):
    n = len(docs)
    m = np.zeros((n, n), dtype=bool)
    for q in range(n):
        for k in range(n):
            m[q, k] = docs[q] == docs[k] != PAD and k <= q and (kind != "conv" or k > q - width)
    return m


def expected_findings(direct, intended):
    """{(q, k): first layer (1-based)} of the pairs measured directly and not intended, at the last layer."""
    predicted = reach_by_loops(intended)
    extra = direct & ~predicted
    return {(int(q), int(k)): int(np.argmax(extra[:, q, k])) + 1 for q, k in np.argwhere(extra[-1])}


def api_audit(*args, **kwargs):
    from hasse.api import audit

    return audit(*args, **kwargs)


# ---------------------------------------------------------------- (a) a hand-written model


def tiny_intended(lengths=(4, 4)):
    docs = np.repeat(np.arange(len(lengths)), lengths)
    return [layer_by_loops(docs, "conv", 3), layer_by_loops(docs, "full")]


def test_a_convolution_that_ignores_documents_is_caught_at_layer_1_through_the_conv(tiny):
    model, batch = module_of(tiny).build(reset=False)
    result = api_audit(model, batch, intended=tiny_intended(), seeds=2)
    (b,) = result.backends
    direct = measured_directly(model, batch, list(model.layers))
    want = expected_findings(direct, tiny_intended())
    assert want and set(b.unexpected) == set(want) and not b.missing
    first = min(b.groups, key=lambda g: g.layer)
    assert (first.kind, first.source_doc, first.dest_doc, first.layer) == ("contamination", 0, 1, 1)
    assert "layers.0.mixer" in first.operator and "conv" in first.operator.lower()
    assert {p: g.layer for g in b.groups for p in g.pairs} == want  # each pair at the layer it first appears
    by_path = {o.op.path: o for o in b.operators}
    conv = by_path["layers.0.mixer"]
    assert conv.op.kind == "convolution" and conv.isolated is False
    x = torch.randn(1, 8, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    own = torch.autograd.functional.jacobian(lambda v: model.layers[0].mixer(v, batch["position_ids"]), x)
    assert np.array_equal(conv.own, (own[0, :, :, 0] != 0).any(dim=(1, 3)).numpy())  # its own flow, directly
    assert by_path["layers.1.mixer"].isolated is True and by_path["layers.0.mlp"].isolated is True


STACK = "conv:width=3,documents=4+4, document:lengths=4+4,causal=true"  # tiny_intended() as a stack spec


def test_the_intended_stack_spec_reads_as_the_loops_say(tiny):
    from hasse.gpu_check.audit.user_model import intended_masks_of

    got = intended_masks_of(STACK, 8)
    assert all(np.array_equal(a, b) for a, b in zip(got, tiny_intended())) and len(got) == 2
    with pytest.raises(InputError, match=r"shape \(4, 4\), not \(8, 8\)"):
        intended_masks_of([np.ones((4, 4))], 8)


def test_its_twin_that_resets_at_boundaries_is_clean_through_a_model_file(tiny):
    result = api_audit(f"{tiny}:build(reset=True)", intended=tiny_intended(), seeds=2, trust_code=True)
    (b,) = result.backends
    model, batch = module_of(tiny).build(reset=True)
    direct = measured_directly(model, batch, list(model.layers))
    assert not expected_findings(direct, tiny_intended())  # the reference agrees: isolated
    assert not b.unexpected and not b.missing and not b.groups
    assert result.fixed_weights and b.backend == "model"


def test_the_intended_flow_defaults_to_the_operators_found(tiny):
    from hasse.gpu_check.audit.scenarios import intended_layer_mask

    try:
        intended_layer_mask(make_scenario("packed", lengths=(4, 4)), "conv", 3)
    except InputError:
        pytest.skip("the conv layer kind is not in gpu_check/audit/scenarios.py yet")
    model, batch = module_of(tiny).build(reset=False)
    b = api_audit(model, batch, seeds=1).backends[0]
    assert set(b.unexpected) == set(expected_findings(measured_directly(model, batch, list(model.layers)),
                                                      tiny_intended()))


def test_a_module_without_a_batch_gets_a_row_for_documents(tiny):
    model, _ = module_of(tiny).build(reset=False)
    b = api_audit(model, documents="4+4", intended=tiny_intended(), seeds=1).backends[0]
    assert {g.layer for g in b.groups if g.kind == "contamination"} == {1, 2}
    with pytest.raises(InputError, match="not both"):
        api_audit(model, {"input_ids": torch.zeros(1, 8, dtype=torch.long)}, documents="4+4")


def audit_command_takes_a_model_file():
    from hasse.cli import audit as command

    return "trust-code" in command.DESCRIPTION + command.EPILOG or "--trust-code" in open(command.__file__).read()


def test_the_command_line_audits_a_model_file_only_with_trust_code(tiny, tmp_path, capsys):
    from tests.cli_run import run

    if not audit_command_takes_a_model_file():
        pytest.skip("hasse audit --model FILE.py:build --trust-code is not wired yet (hasse/cli/audit.py)")
    marker = tmp_path / "ran.txt"
    guarded = tmp_path / "guarded.py"
    guarded.write_text(f"open({str(marker)!r}, 'w').write('ran')\nfrom tiny import build\n")
    code, out, err = run(capsys, "audit", "--model", f"{guarded}:build")
    assert code == 2 and "--trust-code" in err and len(err.strip().splitlines()) == 1
    assert not marker.exists()  # nothing of the file ran
    code, out, err = run(capsys, "audit", "--model", f"{tiny}:build", "--trust-code", "--json", "--intended", STACK)
    data = json.loads(out)
    assert code == 1, err
    groups = [g for b in data["backends"] for g in b["groups"]]
    first = min(groups, key=lambda g: g["layer"])
    assert (first["kind"], first["source_doc"], first["dest_doc"], first["layer"]) == ("contamination", 0, 1, 1)
    assert "layers.0.mixer" in first["operator"]
    code, out, err = run(capsys, "audit", "--model", f"{tiny}:build(reset=True)", "--trust-code", "--intended", STACK)
    assert code == 0, out + err


# ---------------------------------------------------------------- (b) a transformers model, patched attention


@pytest.fixture(scope="module")
def leaky(tmp_path_factory):
    pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp("leaky") / "leaky.py"
    path.write_text(LEAKY)
    return module_of(path)


@pytest.mark.parametrize("leak", [True, False])
def test_an_attention_function_that_leaks_only_for_the_last_document_is_caught_there(leaky, leak):
    model, batch = leaky.build(leak=leak)
    result = api_audit(model, batch, seeds=2)
    (b,) = result.backends
    assert result.pattern == (("full", None), ("full", None))
    docs = result.scenario.docs
    assert docs.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2]
    intended = [layer_by_loops(docs, "full")] * 2
    direct = measured_directly(model, {k: v for k, v in batch.items()}, list(model.layers))
    want = expected_findings(direct, intended)
    assert set(b.unexpected) == set(want) and not b.missing
    if not leak:
        assert not want and not b.groups
        return
    assert want and {docs[q] for q, _ in want} == {2}  # only into the last document
    assert {(g.kind, g.source_doc, g.dest_doc, g.layer) for g in b.groups} == {
        ("contamination", 0, 2, 1), ("contamination", 1, 2, 1)}
    assert all("layers.0.self_attn" in g.operator for g in b.groups)
    attn = {o.op.path: o for o in b.operators}["layers.0.self_attn"]
    assert attn.isolated is False


def test_the_patched_attention_model_through_the_command_line(leaky, capsys):
    """The same llama with its leaky registered attention function, as a model file: --model path:build."""
    from tests.cli_run import run

    path = leaky.__file__
    code, out, err = run(capsys, "audit", "--model", f"{path}:build(leak=True)", "--trust-code", "--seeds", "1",
                         "--json")
    assert code == 1, err
    groups = json.loads(out)["backends"][0]["groups"]
    assert groups and {g["dest_doc"] for g in groups} == {2}  # only into the last document
    assert {(g["source_doc"], g["layer"]) for g in groups if not g["carried"]} == {(0, 1), (1, 1)}
    assert all("layers.0.self_attn" in g["operator"] for g in groups if not g["carried"])
    code, out, err = run(capsys, "audit", "--model", f"{path}:build(leak=False)", "--trust-code", "--seeds", "1")
    assert code == 0 and "verdict: PASS" in out, out + err


def test_a_checkpoint_directory_is_audited_with_its_own_weights(leaky, tmp_path):
    from hasse.gpu_check.audit.user_model import is_checkpoint, load_checkpoint

    model, _ = leaky.build(leak=False)
    model.config._attn_implementation = "eager"
    model.save_pretrained(tmp_path / "ckpt")
    assert is_checkpoint(tmp_path / "ckpt")
    (tmp_path / "config_only").mkdir()
    (tmp_path / "config_only" / "config.json").write_text((tmp_path / "ckpt" / "config.json").read_text())
    assert not is_checkpoint(tmp_path / "config_only")
    loaded = load_checkpoint(str(tmp_path / "ckpt"), "eager")
    assert not loaded.training
    assert torch.equal(loaded.layers[0].mlp.up_proj.weight.double(), model.layers[0].mlp.up_proj.weight)
    result = api_audit(str(tmp_path / "ckpt"), documents=(3, 3), seeds=1, backends=("eager",))
    (b,) = result.backends
    assert result.fixed_weights and result.scenario.docs.tolist() == [0, 0, 0, 1, 1, 1]
    assert not b.missing  # llama under the default cache: packed documents contaminate (tests/test_audit.py)


# ---------------------------------------------------------------- the model file: permission and refusals


def test_a_model_file_runs_only_with_trust_code(tiny, tmp_path):
    from hasse.gpu_check.audit.user_model import load_model_source

    marker = tmp_path / "ran.txt"
    guarded = tmp_path / "guarded.py"
    guarded.write_text(f"open({str(marker)!r}, 'w').write('ran')\ndef build():\n    return None\n")
    with pytest.raises(InputError, match="--trust-code") as info:
        api_audit(f"{guarded}:build")
    assert "\n" not in str(info.value) and not marker.exists()
    model, batch = load_model_source(f"{tiny}:build(lengths=(2, 3))", True)
    assert isinstance(model, torch.nn.Module) and batch["position_ids"].tolist() == [[0, 1, 0, 1, 2]]


@pytest.mark.parametrize("call, needle", [
    ("broken", rf"broken raised ZeroDivisionError at tiny\.py:{BROKEN_LINE}: division by zero"),
    ("not_a_model", "returned dict"),
    ("missing", "no function 'missing'"),
    ("build(__import__('os'))", "not a literal"),
    ("build(wrong=1)", "unexpected keyword"),
])
def test_a_model_file_that_goes_wrong_is_one_line(tiny, call, needle):
    from hasse.gpu_check.audit.user_model import load_model_source

    with pytest.raises(InputError, match=needle) as info:
        load_model_source(f"{tiny}:{call}", True)
    assert "\n" not in str(info.value)


def test_other_refusals_of_the_model(tiny, tmp_path):
    from hasse.gpu_check.audit.user_model import load_model_source

    with pytest.raises(InputError, match="no such file"):
        load_model_source(f"{tmp_path / 'absent.py'}:build", True)
    with pytest.raises(InputError, match="nn.Module"):
        api_audit(42)
    model, batch = module_of(tiny).build()
    with pytest.raises(InputError, match="16 tokens"):
        api_audit(model, {"input_ids": torch.tensor([[1, 99]])})
    with pytest.raises(InputError, match="input_ids or inputs_embeds"):
        from hasse.gpu_check.audit.user_model import built_for_module
        built_for_module(model, {"position_ids": torch.tensor([[0, 1]])})


def test_the_api_module_imports_no_torch():
    from tests.fresh_python import modules_after

    loaded = modules_after("import hasse, hasse.api", timeout=120)
    assert "torch" not in loaded and "transformers" not in loaded


# ---------------------------------------------------------------- (c) the batch: readers, layout, refusals


def ids(n):
    return torch.arange(n)[None] % 7


LAYOUTS = [  # (batch, documents, padding)
    ({"input_ids": ids(5)}, [0, 0, 0, 0, 0], None),
    ({"input_ids": ids(5), "position_ids": torch.tensor([[0, 1, 0, 1, 2]])}, [0, 0, 1, 1, 1], None),
    ({"input_ids": ids(6), "position_ids": torch.tensor([[5, 6, 0, 1, 0, 1]])}, [0, 0, 1, 1, 2, 2], None),
    ({"input_ids": ids(5), "cu_seq_lens_q": torch.tensor([0, 3, 5])}, [0, 0, 0, 1, 1], None),
    ({"input_ids": ids(5), "cu_seq_lens_q": torch.tensor([0, 1, 5]), "cu_seq_lens_k": torch.tensor([0, 1, 5]),
      "position_ids": torch.tensor([[0, 0, 1, 2, 3]])}, [0, 1, 1, 1, 1], None),
    ({"input_ids": ids(5), "seq_idx": torch.tensor([[0, 0, 1, 1, 3]])}, [0, 0, 1, 1, 2], None),
    ({"input_ids": ids(5), "attention_mask": torch.tensor([[0, 0, 1, 1, 1]]),
      "position_ids": torch.tensor([[0, 0, 0, 1, 2]])}, [PAD, PAD, 0, 0, 0], [0, 0, 1, 1, 1]),
    ({"input_ids": ids(6), "attention_mask": torch.tensor([[1, 1, 1, 1, 0, 0]]),
      "position_ids": torch.tensor([[0, 1, 0, 1, 1, 1]])}, [0, 0, 1, 1, PAD, PAD], [1, 1, 1, 1, 0, 0]),
    ({"inputs_embeds": torch.zeros(1, 4, 3), "cu_seq_lens_q": torch.tensor([0, 2, 4]),
      "seq_idx": torch.tensor([[0, 0, 1, 1]])}, [0, 0, 1, 1], None),
]


def documents_by_loops(batch):
    """The documents as a reader of the contract would find them, position by position."""
    n = next(v.shape[1] for k, v in batch.items() if k in ("input_ids", "inputs_embeds"))
    mask = batch.get("attention_mask", torch.ones(1, n))[0].tolist()
    seg, cur = [], -1
    for i in range(n):
        if "cu_seq_lens_q" in batch:
            cur = sum(1 for c in batch["cu_seq_lens_q"].tolist()[1:] if c <= i)
        elif "seq_idx" in batch:
            cur = cur + 1 if i == 0 or batch["seq_idx"][0, i] != batch["seq_idx"][0, i - 1] else cur
        elif "position_ids" in batch:
            cur = cur + 1 if i == 0 or batch["position_ids"][0, i] == 0 else cur
        else:
            cur = 0
        seg.append(cur)
    real = [s for s, m in zip(seg, mask) if m]
    order = sorted(set(real))
    return [order.index(s) if m else PAD for s, m in zip(seg, mask)]


@pytest.mark.parametrize("case", range(len(LAYOUTS)))
def test_layout_of_a_batch(case):
    batch, docs, pad = LAYOUTS[case]
    s = layout_of_batch(batch)
    assert s.name == "batch" and s.docs.tolist() == docs == documents_by_loops(batch)
    assert (s.attention_mask is None and pad is None) or s.attention_mask.tolist() == pad


def test_a_4d_mask_is_kept_as_the_row_s_mask():
    m = torch.tensor([[1, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=torch.bool)
    s = layout_of_batch({"input_ids": ids(3), "attention_mask": m[None, None]})
    assert np.array_equal(s.mask4d, m.numpy())
    additive = torch.where(m, 0.0, float("-inf"))[None, None]
    row, _ = normalize_batch({"input_ids": ids(3), "attention_mask": additive})
    assert torch.equal(row["attention_mask"][0, 0], m)


REFUSED = [
    ({"input_ids": ids(3), "inputs_embeds": torch.zeros(1, 3, 2)}, "both input_ids and inputs_embeds"),
    ({"input_ids": torch.zeros(1, 1, 1, 3)}, "must have 2 dimensions"),
    ({"input_ids": ids(3), "position_ids": torch.tensor([[0, 1]])}, "has 2 positions"),
    ({"input_ids": torch.zeros(2, 3, dtype=torch.long), "position_ids": torch.zeros(3, 3, dtype=torch.long)},
     "rows"),
    ({"input_ids": ids(3), "attention_mask": torch.tensor([[1, 2, 1]])}, "0 \\(pad\\) and 1"),
    ({"input_ids": ids(3), "attention_mask": torch.ones(1, 1, 3)}, "2-D .* or 4-D"),
    ({"input_ids": ids(3), "attention_mask": torch.zeros(1, 3, dtype=torch.long)}, "every position as padding"),
    ({"input_ids": ids(3), "attention_mask": torch.zeros(1, 1, 3, 3, dtype=torch.bool)}, "attends nothing"),
    ({"input_ids": ids(3), "cu_seq_lens_q": torch.tensor([1, 3])}, "must start at 0"),
    ({"input_ids": ids(5), "cu_seq_lens_q": torch.tensor([0, 3, 2, 5])}, "increase strictly"),
    ({"input_ids": ids(5), "cu_seq_lens_q": torch.tensor([0, 2, 4])}, "ends at 4"),
    ({"input_ids": ids(5), "cu_seq_lens_q": torch.tensor([0.0, 5.0])}, "1-D integer"),
    ({"input_ids": ids(5), "cu_seq_lens_q": torch.tensor([0, 2, 5]), "cu_seq_lens_k": torch.tensor([0, 3, 5])},
     "different documents"),
    ({"input_ids": ids(4), "seq_idx": torch.tensor([[0, 1, 0, 1]])}, "must not decrease"),
    ({"input_ids": ids(3), "position_ids": torch.tensor([[0, -1, 0]])}, ">= 0"),
    ({"input_ids": ids(4), "position_ids": torch.tensor([[0, 1, 3, 4]])}, "go from 1 to 3"),
    ({"input_ids": ids(4), "position_ids": torch.tensor([[0, 1, 0, 1]]), "seq_idx": torch.tensor([[0, 0, 0, 1]])},
     "different documents"),
    ({"input_ids": torch.tensor([[0.5, 1.0]])}, "integers"),
    ({"input_ids": torch.tensor([[-1, 1]])}, ">= 0"),
    ({"inputs_embeds": torch.zeros(1, 3, 2, dtype=torch.long)}, "floating point"),
    ({"labels": torch.zeros(1, 3, dtype=torch.long)}, None),  # labels only: normalized, then no positions
    ({}, "non-empty dict"),
    ({1: ids(3)}, "keys must be strings"),
]


@pytest.mark.parametrize("case", range(len(REFUSED)))
def test_every_inconsistent_batch_is_one_line(case):
    batch, needle = REFUSED[case]
    with pytest.raises(InputError, match=needle or "no positions") as info:
        row, _ = normalize_batch(batch)
        layout_of_batch(row)
    assert "\n" not in str(info.value)


def test_several_rows_pick_one_and_say_so():
    batch = {"input_ids": torch.arange(12).reshape(2, 6), "position_ids": torch.tensor([[0, 1, 2, 0, 1, 2]]),
             "labels": torch.zeros(2, 6), "cu_seq_lens_q": torch.tensor([0, 3, 6])}
    row, note = normalize_batch(batch, row=1)
    assert row["input_ids"].tolist() == [[6, 7, 8, 9, 10, 11]] and row["input_ids"].dtype == torch.int64
    assert row["position_ids"].shape == (1, 6) and "labels" not in row and row["cu_seq_lens_q"].tolist() == [0, 3, 6]
    assert "2 rows" in note and "row 1" in note and "labels" in note
    with pytest.raises(InputError, match="--row must be between 0 and 1"):
        normalize_batch(batch, row=2)
    with pytest.raises(InputError, match="2 rows"):
        layout_of_batch(batch)
    assert normalize_batch({"input_ids": ids(3)})[1] is None


def test_batch_files_read_alike(tmp_path):
    batch = {"input_ids": torch.tensor([[1, 2, 3, 4]]), "position_ids": torch.tensor([[0, 1, 0, 1]]),
             "attention_mask": torch.tensor([[1, 1, 1, 1]])}
    torch.save(batch, tmp_path / "b.pt")
    np.savez(tmp_path / "b.npz", **{k: v.numpy() for k, v in batch.items()})
    (tmp_path / "b.json").write_text(json.dumps({k: v.tolist() for k, v in batch.items()}))
    for name in ("b.pt", "b.npz", "b.json"):
        got = read_batch(tmp_path / name)
        assert sorted(got) == sorted(batch) and all(torch.equal(got[k].long(), batch[k]) for k in batch)
        assert layout_of_batch(normalize_batch(got)[0]).docs.tolist() == [0, 0, 1, 1]
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "ragged.json").write_text('{"input_ids": [[1, 2], [3]]}')
    (tmp_path / "b.txt").write_text("1 2")
    torch.save({"input_ids": torch.zeros(1, 2), "f": lambda: 0} if False else [1, 2], tmp_path / "list.pt")
    np.savez(tmp_path / "obj.npz", x=np.array([{"a": 1}], dtype=object))
    for name, needle in [("absent.pt", "no such file"), ("list.json", "dict of named arrays"),
                         ("ragged.json", "rectangular"), ("b.txt", ".pt, .npz or .json"),
                         ("list.pt", "dict of named arrays"), ("obj.npz", "cannot read it as .npz")]:
        with pytest.raises(InputError, match=needle):
            read_batch(tmp_path / name)


@pytest.mark.parametrize("name, kwargs", [("plain", dict(n=6)), ("packed", dict(lengths=(2, 3, 1))),
                                          ("packed_mask", dict(lengths=(3, 3))), ("left_pad", dict(n=6, pad=2)),
                                          ("right_pad", dict(n=6, pad=2))])
def test_a_built_in_scenario_as_a_batch_reads_back_as_the_same_layout(name, kwargs):
    s = make_scenario(name, kwargs.get("n"), lengths=kwargs.get("lengths"), pad=kwargs.get("pad"))
    batch = batch_for_layout(s, s.n, vocab=11)
    assert batch["input_ids"].shape == (1, s.n) and int(batch["input_ids"].max()) < 11
    back = layout_of_batch(normalize_batch(batch)[0])
    assert back.docs.tolist() == s.docs.tolist()
    with pytest.raises(InputError, match="differs"):
        batch_for_layout(s, s.n + 1, vocab=11)

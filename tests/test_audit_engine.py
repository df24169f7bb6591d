"""The audit engine on hand-written models: operators found, flows per layer, attribution, isolation, planted bugs.

Every model here is written in the test (torch only, no transformers), small enough
(n = 7, width 8) for the reference to be the FULL jacobian by direct autograd
(``torch.autograd.functional.jacobian``: every output entry against every input entry,
no probes, no hooks of the kit). Each planted bug is a one-line change of a correct
operator; the audit must name the layer and the operator that carry it, and the fixed
twin must come back clean.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from hasse.gpu_check.audit.engine import audit_subject  # noqa: E402
from hasse.gpu_check.audit.operators import blocks_of, find_operators, operator_kind  # noqa: E402
from hasse.gpu_check.audit.user_model import subject_for_module  # noqa: E402

WIDTH = 8


def doc_ids(position_ids: torch.Tensor) -> torch.Tensor:
    """(B, n) document index of each position: a new document wherever position_ids restarts at 0."""
    return (position_ids == 0).long().cumsum(-1) - 1


class CausalConv(nn.Module):
    """A depthwise causal convolution of width K; ``reset``: taps never cross a document boundary."""

    def __init__(self, k: int = 3, reset: bool = True):
        super().__init__()
        self.conv1d = nn.Conv1d(WIDTH, WIDTH, k, groups=WIDTH, padding=k - 1)
        self.k, self.reset = k, reset

    def forward(self, hidden_states, docs):
        n = hidden_states.shape[1]
        if not self.reset:  # the planted bug: the boundary metadata never reaches the convolution
            return self.conv1d(hidden_states.transpose(1, 2))[..., :n].transpose(1, 2)
        out = torch.zeros_like(hidden_states)
        for d in docs.unique():  # each document alone (a state reset at its start)
            idx = (docs[0] == d).nonzero()[:, 0]
            part = hidden_states[:, idx]
            out[:, idx] = self.conv1d(part.transpose(1, 2))[..., :len(idx)].transpose(1, 2)
        return out


class LinearScan(nn.Module):
    """h_t = a ⊙ h_{t-1} + W x_t, reset to 0 at each document start unless ``reset`` is False."""

    def __init__(self, reset: bool = True):
        super().__init__()
        self.w = nn.Linear(WIDTH, WIDTH)
        self.a = nn.Parameter(torch.full((WIDTH,), 0.7))
        self.reset = reset

    def forward(self, hidden_states, docs):
        u = self.w(hidden_states)
        h = torch.zeros_like(u[:, 0])
        out = []
        for t in range(u.shape[1]):
            if self.reset and t > 0:
                h = torch.where((docs[:, t] != docs[:, t - 1])[:, None], torch.zeros_like(h), h)
            h = self.a * h + u[:, t]
            out.append(h)
        return torch.stack(out, 1)


class DocAttention(nn.Module):
    """One-head causal attention inside documents; ``leak_last``: the last document's queries see every earlier key."""

    def __init__(self, leak_last: bool = False, window: int | None = None):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(WIDTH, WIDTH) for _ in range(3))
        self.leak_last, self.window = leak_last, window

    def forward(self, hidden_states, docs):
        n = hidden_states.shape[1]
        i = torch.arange(n)
        allowed = (i[None, :] <= i[:, None]) & (docs[0][:, None] == docs[0][None, :])
        if self.window is not None:
            allowed &= i[None, :] > i[:, None] - self.window
        if self.leak_last:
            last = docs[0] == docs[0].max()
            allowed |= last[:, None] & (i[None, :] <= i[:, None])
        scores = self.q(hidden_states) @ self.k(hidden_states).transpose(1, 2)
        scores = scores.masked_fill(~allowed, float("-inf"))
        return torch.softmax(scores, -1) @ self.v(hidden_states)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(WIDTH, 2 * WIDTH), nn.Linear(2 * WIDTH, WIDTH)

    def forward(self, x):
        return self.down(torch.tanh(self.up(x)))


class Block(nn.Module):
    def __init__(self, mixer: nn.Module):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.mixer = mixer
        self.mlp = MLP()

    def forward(self, x, docs):
        x = x + self.mixer(self.norm(x), docs)
        return x + self.mlp(x)


class Tiny(nn.Module):
    """embed -> blocks -> hidden states; documents from position_ids."""

    def __init__(self, *mixers):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(16, WIDTH)
        self.layers = nn.ModuleList(Block(m) for m in mixers)
        self.double()

    def forward(self, input_ids, position_ids):
        docs = doc_ids(position_ids)
        x = self.embed(input_ids)
        for block in self.layers:
            x = block(x, docs)
        return x


def packed_batch(lengths=(3, 4)):
    ids = torch.arange(sum(lengths))[None] % 16
    pos = torch.cat([torch.arange(m) for m in lengths])[None]
    return {"input_ids": ids, "position_ids": pos}


def reference_flow(model, batch) -> np.ndarray:
    """(L, n, n) bool: block l's output at q depends on embedding k, by the full jacobian (direct autograd)."""
    docs = doc_ids(batch["position_ids"])
    x0 = model.embed(batch["input_ids"]).detach()

    def upto(layer):
        def f(x):
            for block in model.layers[:layer + 1]:
                x = block(x, docs)
            return x
        return f

    out = []
    for layer in range(len(model.layers)):
        jac = torch.autograd.functional.jacobian(upto(layer), x0)  # (1, n, C, 1, n, C)
        out.append((jac[0, :, :, 0] != 0).any(dim=(1, 3)).numpy())
    return np.stack(out)


def run(model, batch=None, intended=None, seeds=2):
    return audit_subject(subject_for_module(model, batch or packed_batch(), "tiny"), intended, seeds=seeds)


def test_operators_are_found_with_their_kinds_nested_convolutions_first():
    model = Tiny(CausalConv(3), LinearScan(), DocAttention())
    ops = find_operators(blocks_of(model))
    assert [(o.layer, o.path, o.kind, o.width) for o in ops] == [
        (0, "layers.0.mixer.conv1d", "convolution", 3), (0, "layers.0.mixer", "convolution", None),
        (0, "layers.0.mlp", "mlp", None), (1, "layers.1.mixer", "scan", None), (1, "layers.1.mlp", "mlp", None),
        (2, "layers.2.mixer", "attention", None), (2, "layers.2.mlp", "mlp", None)]
    assert operator_kind(nn.LayerNorm(3)) is None and operator_kind(nn.ZeroPad2d((0, 0, 1, -1))) == "token_shift"


@pytest.mark.parametrize("mixers", [
    lambda: (CausalConv(3), DocAttention()), lambda: (LinearScan(), DocAttention()),
    lambda: (CausalConv(3, reset=False), DocAttention()), lambda: (LinearScan(reset=False), DocAttention()),
    lambda: (DocAttention(), DocAttention(leak_last=True))])
def test_measured_flow_per_layer_equals_the_full_jacobian(mixers):
    model = Tiny(*mixers())
    batch = packed_batch()
    result = run(model, batch)
    (b,) = result.backends
    assert np.array_equal(b.measured, reference_flow(model, batch))


@pytest.mark.parametrize("bug, layer, path, kind", [
    (lambda: (CausalConv(3, reset=False), DocAttention()), 1, "layers.0.mixer.conv1d (Conv1d)", "convolution"),
    (lambda: (LinearScan(reset=False), DocAttention()), 1, "layers.0.mixer (LinearScan)", "scan"),
    (lambda: (DocAttention(), DocAttention(leak_last=True)), 2, "layers.1.mixer (DocAttention)", "attention"),
])
def test_a_planted_bug_is_caught_at_its_layer_and_operator_and_its_twin_is_clean(bug, layer, path, kind):
    model = Tiny(*bug())
    (b,) = run(model).backends
    assert b.unexpected and {g.kind for g in b.groups} == {"contamination"}
    introduced = [g for g in b.groups if not g.carried]  # later pairs: the attention moves them along, carried
    assert {(g.source_doc, g.dest_doc, g.layer, g.operator) for g in introduced} == {(0, 1, layer, path)}
    assert all(g.operator is None and g.layer > layer for g in b.groups if g.carried)
    crossing = [f for f in b.operators if f.isolated is False]
    assert crossing and crossing[0].op.kind == kind and crossing[0].op.layer == layer - 1
    fixed = Tiny(CausalConv(3), DocAttention()) if kind == "convolution" else Tiny(LinearScan(), DocAttention())
    (clean,) = run(fixed).backends
    assert clean.clean and all(f.isolated is not False for f in clean.operators)


def test_a_leak_only_for_the_last_document_reaches_only_the_last_document():
    model = Tiny(DocAttention(), DocAttention(leak_last=True))
    (b,) = run(model, packed_batch((2, 3, 2))).backends
    assert {(g.source_doc, g.dest_doc) for g in b.groups} == {(0, 2), (1, 2)}
    assert {g.operator for g in b.groups} == {"layers.1.mixer (DocAttention)"}


def test_a_window_one_key_too_wide_before_a_full_layer_is_found_at_layer_1():
    """The full layer after it reaches every pair anyway: only a per-layer check sees it."""
    from hasse.theory.masks import causal, sliding_window

    n, w = 7, 3
    model = Tiny(DocAttention(window=w + 1), DocAttention())
    batch = {"input_ids": torch.arange(n)[None], "position_ids": torch.arange(n)[None]}
    intended = [sliding_window.build(n, w).matrix, causal.build(n).matrix]
    (b,) = run(model, batch, intended).backends
    assert {(g.kind, g.layer, g.operator) for g in b.groups} == {("window", 1, "layers.0.mixer (DocAttention)")}
    assert set(b.unexpected) == {(q, q - w) for q in range(w, n)}
    (ok,) = run(Tiny(DocAttention(window=w), DocAttention()), batch, intended).backends
    assert ok.clean


def test_padding_from_the_attention_mask_and_documents_from_cu_seq_lens():
    from hasse.gpu_check.audit.batch import layout_of_batch

    lay = layout_of_batch({"input_ids": torch.zeros(1, 5, dtype=torch.long),
                           "cu_seq_lens_q": torch.tensor([0, 2, 5]), "cu_seq_lens_k": torch.tensor([0, 2, 5])})
    assert lay.docs.tolist() == [0, 0, 1, 1, 1]
    lay = layout_of_batch({"input_ids": torch.zeros(1, 4, dtype=torch.long),
                           "attention_mask": torch.tensor([[0, 1, 1, 1]])})
    assert lay.docs.tolist() == [-1, 0, 0, 0]


# ------------------------------------------------------------------ transformers models (the hf extra)


@pytest.fixture
def hf():
    return pytest.importorskip("transformers")


def test_gemma3_window_one_key_too_wide_before_a_full_layer(hf):
    """Issue 23: [sliding, full] with the window one key too wide in layer 1 passed (the full layer reaches all)."""
    from hasse.gpu_check.audit.models import ModelSpec
    from hasse.gpu_check.audit.report import Setup, audit, compare_backends
    from hasse.gpu_check.audit.scenarios import make_scenario

    n, w = 9, 3
    types = ("layer_types", ["sliding_attention", "full_attention"])
    spec = ModelSpec("gemma3", 2, window=w, max_positions=2 * n, overrides=(types,))

    def wider(model, backend):
        if backend == "sdpa":
            model.config.sliding_window += 1

    result = audit(Setup(spec, make_scenario("plain", n), seeds=1, hook=wider), ["eager", "sdpa"])
    eager, sdpa = result.backends
    assert eager.clean
    assert {(g.kind, g.layer, g.operator) for g in sdpa.groups} == {("window", 1, "layers.0.self_attn (Gemma3Attention)")}
    assert set(sdpa.unexpected) == {(q, q - w) for q in range(w, n)}  # exactly the one extra key per row
    (d,) = compare_backends(result)
    assert set(d.only_second) == set(sdpa.unexpected) and set(d.layers.values()) == {1}


def test_a_config_window_the_input_cannot_show_is_shrunk_and_said(hf, tmp_path):
    import json

    from hasse.gpu_check.audit.models import ModelSpec
    from hasse.gpu_check.audit.report import Setup, audit
    from hasse.gpu_check.audit.scenarios import make_scenario

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "mistral", "sliding_window": 4096}))
    result = audit(Setup(ModelSpec(str(path), 2, max_positions=16), make_scenario("plain", 8), seeds=1), ["eager"])
    assert result.pattern == (("sliding", 4), ("sliding", 4)) and not result.vacuous
    assert any("shrunk from 4096 to 4" in note for note in result.notes)
    chosen = audit(Setup(ModelSpec(str(path), 2, window=8, max_positions=16), make_scenario("plain", 8), seeds=1),
                   ["eager"])  # the user's own choice is kept: the check is then not exercised
    from hasse.gpu_check.audit.report import verdict_of

    assert chosen.vacuous and verdict_of(chosen)[1] == 3 and chosen.backends[0].clean


def test_the_cli_says_inconclusive_with_exit_3(hf, capsys):
    from hasse.cli import main

    code = main(["audit", "mistral", "--window", "12", "--n", "6", "--seeds", "1", "--backend", "eager"])
    out = capsys.readouterr().out
    assert code == 3 and "INCONCLUSIVE" in out and "--window" in out


def test_families_lists_every_family_and_says_which_build_here(hf, capsys):
    from hasse.cli import main
    from hasse.gpu_check.audit.models import FAMILIES, unavailable_families

    assert main(["audit", "--families"]) == 0
    out = capsys.readouterr().out
    missing = unavailable_families()
    assert f"{len(FAMILIES) - len(missing)} build and run here" in out
    for name in FAMILIES:
        assert any(line.split()[:1] == [name] for line in out.splitlines()), name


def test_a_schedule_of_your_own_module_through_the_cli(hf, capsys, tmp_path):
    """--model file.py:build --scenario decode: your module's own weights through its own cache."""
    from hasse.cli import main

    path = tmp_path / "mine.py"
    path.write_text(
        "import torch, transformers\n"
        "def build():\n"
        "    cfg = transformers.LlamaConfig(hidden_size=32, intermediate_size=64, num_attention_heads=4,\n"
        "                                   num_key_value_heads=2, num_hidden_layers=2, vocab_size=16)\n"
        "    torch.manual_seed(0)\n"
        "    return transformers.AutoModel.from_config(cfg, attn_implementation='eager').double()\n")
    argv = ["audit", "--model", f"{path}:build", "--trust-code", "--scenario", "decode", "--n", "6", "--seeds", "1"]
    assert main(argv) == 0 and "decode MATCHES" in capsys.readouterr().out
    assert main(argv + ["--drop-cache-position", "1"]) == 1
    out = capsys.readouterr().out
    assert "DIFFERS" in out and "first at step 1" in out and "the dependencies differ" in out  # position 1 lost
    assert main([a for a in argv if a != "--trust-code"]) == 2  # without --trust-code nothing runs
    assert "--trust-code" in capsys.readouterr().err


def test_a_model_that_bypasses_its_embedding_module_is_refused_not_measured_as_zeros():
    from hasse.theory.errors import InputError

    class Functional(Tiny):
        def forward(self, input_ids, position_ids):  # the weights read through a function: no hook fires
            docs = doc_ids(position_ids)
            x = torch.nn.functional.embedding(input_ids, self.embed.weight)
            for block in self.layers:
                x = block(x, docs)
            return x

    with pytest.raises(InputError, match="never called its input embedding module"):
        run(Functional(DocAttention(), DocAttention()))

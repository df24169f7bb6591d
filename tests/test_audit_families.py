"""hasse audit's hybrid families: layer patterns, the new intended kinds, and the engine against direct autograd.

- the intended masks of ``recurrent``, ``conv`` and ``none`` layers against a
  brute-force loop (the kinds of tests/test_audit.py too);
- each family's layer pattern against the blocks the model is built with;
- the reference (tests/audit_reference.py: full jacobians) against
  ``torch.autograd.functional.jacobian`` on a hand-written model with a causal
  convolution, a token shift and a scan (one that resets at documents, one planted
  that does not);
- every hybrid family that builds here, in the packed scenario (documents 3 + 4,
  position_ids restarting, no attention_mask), with the default cache and with
  ``use_cache=False``: the engine's per-operator isolation and per-layer measured
  flow equal the reference's. What each family does (isolated or not) is a finding,
  never asserted.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from hasse.gpu_check.audit.scenarios import intended_masks, make_scenario
from tests.audit_reference import first_crossing_layer, isolated, model_jacobian, operator_jacobians
from tests.intended_reference import reference_layer

LENGTHS = (3, 4)


@pytest.mark.parametrize("name, kwargs", [
    ("plain", dict(n=9)), ("packed", dict(lengths=(3, 5, 4))), ("packed_mask", dict(lengths=(2, 2))),
    ("left_pad", dict(n=9, pad=3)), ("right_pad", dict(n=9, pad=2))])
@pytest.mark.parametrize("pattern", [[("recurrent", None), ("full", None)], [("conv", 3), ("full", None)],
                                     [("conv", 1), ("none", None), ("recurrent", None)], [("conv", 4)] * 2])
@pytest.mark.parametrize("encoder", [False, True])
def test_new_layer_kinds_match_the_brute_force_reference(name, kwargs, pattern, encoder):
    s = make_scenario(name, kwargs.get("n"), lengths=kwargs.get("lengths"), pad=kwargs.get("pad"))
    for got, (kind, size) in zip(intended_masks(s, pattern, bidirectional=encoder), pattern):
        assert np.array_equal(got, reference_layer(s.docs, s.positions, kind, size, encoder)), (kind, size)


@pytest.fixture(scope="module")
def hf():
    pytest.importorskip("torch")
    return pytest.importorskip("transformers")


def hybrids():
    from hasse.gpu_check.audit.families import HYBRIDS

    return list(HYBRIDS)


def spec_of(name):
    from hasse.gpu_check.audit.models import ModelSpec

    return ModelSpec(name, 3 if name == "nemotron_h" else 2)  # nemotron_h: mamba, attention, MLP


# the classes in a block that say what kind of layer it is (read from the built model, not the configuration)
BLOCK_KINDS = (("recurrent", r"DeltaNet|DeltaAttention|Mixer|MambaLayer|RecurrentBlock|RwkvSelfAttention"),
               ("full", r"Attention"), ("conv", r"ShortConv"), ("none", r"MLP|Mlp|MoE|FeedForward"))


def block_kind(block) -> str:
    kinds = set()
    for _, m in block.named_modules():  # each class its first matching kind
        kinds |= {next((kind for kind, pat in BLOCK_KINDS if re.search(pat, type(m).__name__)), None)}
    if {"full", "recurrent"} <= kinds:  # attention and a scan side by side (Falcon-H1, Zamba 2)
        return "full"
    return next(kind for kind, _ in BLOCK_KINDS if kind in kinds)


@pytest.mark.parametrize("family", hybrids())
def test_each_family_builds_and_its_layer_pattern_follows_its_blocks(hf, family):
    from hasse.gpu_check.audit.models import build_model, layer_pattern, small_config
    from hasse.gpu_check.audit.operators import blocks_of

    config = small_config(spec_of(family))
    pattern = layer_pattern(config)
    model, _ = build_model(config, "eager", 0)
    blocks = blocks_of(model)
    assert len(pattern) == len(blocks)
    assert [kind if kind != "sliding" else "full" for kind, _ in pattern] == [block_kind(b) for _, b in blocks]
    assert len({kind for kind, _ in pattern}) == (1 if family in ("mamba2", "rwkv", "falcon_h1") else
                                                  3 if family == "nemotron_h" else 2)  # both kinds in 2 layers
    for kind, size in pattern:
        if kind == "conv":
            convs = [m for _, b in blocks for m in b.modules() if type(m).__name__ == "Conv1d"]
            assert size == convs[0].kernel_size[0]


def test_no_family_is_listed_unavailable_here(hf):
    from hasse.gpu_check.audit.models import unavailable_families

    assert unavailable_families(["lfm2", "rwkv"]) == {}
    why = unavailable_families(["transformers:NoSuchConfig"])
    assert list(why) == ["transformers:NoSuchConfig"] and "NoSuchConfig" in why["transformers:NoSuchConfig"]


# ---------------------------------------------------------------- the reference on a hand-written model


def toy_model(reset: bool):
    """Blocks of (causal depthwise conv of width 2, token shift, a cumulative scan reset at position 0 iff reset)."""
    import torch

    class ScanMixer(torch.nn.Module):
        def forward(self, hidden_states, position_ids):
            out, state = [], torch.zeros_like(hidden_states[:, 0])
            for t in range(hidden_states.shape[1]):
                keep = (position_ids[:, t] != 0).to(hidden_states.dtype)[:, None] if reset else 1.0
                state = -0.5 * state * keep + hidden_states[:, t]  # signs alternate: J is negative at odd lags
                out.append(state)
            return torch.stack(out, 1)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1d = torch.nn.Conv1d(4, 4, 2, groups=4, padding=1, dtype=torch.float64)
            self.time_shift = torch.nn.ZeroPad2d((0, 0, 1, -1))
            self.mixer = ScanMixer()

        def forward(self, h, position_ids):
            h = h + self.conv1d(h.transpose(1, 2))[..., :h.shape[1]].transpose(1, 2)
            h = h + self.time_shift(h)
            return h + self.mixer(h, position_ids)

    class Toy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([Block(), Block()])

        def forward(self, inputs_embeds, position_ids):
            h = inputs_embeds
            for block in self.layers:
                h = block(h, position_ids)
            return h

    torch.manual_seed(0)
    return Toy()


@pytest.mark.parametrize("reset", [True, False])
def test_the_reference_equals_dense_jacobians_on_a_hand_written_model(reset):
    torch = pytest.importorskip("torch")
    from torch.autograd.functional import jacobian

    s = make_scenario("packed", lengths=LENGTHS)
    model = toy_model(reset)
    pos = torch.as_tensor(s.position_ids)[None]
    x = torch.randn(1, s.n, 4, dtype=torch.float64)
    ops = operator_jacobians(model, {"position_ids": pos}, x)
    assert sorted(ops) == sorted(f"layers.{i}.{m}" for i in (0, 1) for m in ("conv1d", "time_shift", "mixer"))

    def dense(f, inp):  # (n, n) from the dense jacobian (1, n, C, 1, n, C) of a map of (1, n, C)
        return (jacobian(f, inp)[0, :, :, 0] != 0).any(dim=3).any(dim=1).numpy()

    h = torch.randn(1, s.n, 4, dtype=torch.float64)
    block = model.layers[0]
    assert np.array_equal(ops["layers.0.mixer"], dense(lambda t: block.mixer(t, pos), h))
    assert np.array_equal(ops["layers.0.time_shift"], dense(block.time_shift, h))
    assert np.array_equal(ops["layers.0.conv1d"], np.tril(np.ones((s.n, s.n), bool)) &
                          ~np.tril(np.ones((s.n, s.n), bool), -2))  # width 2, no reset: a conv is a conv
    assert isolated(ops["layers.0.mixer"], s.docs) is reset
    assert not isolated(ops["layers.0.time_shift"], s.docs)  # the shift crosses the boundary at position 3
    flow = model_jacobian(model, {"position_ids": pos}, x)
    whole = jacobian(lambda t: model(t, pos), x)[0]  # (n, C, 1, n, C)
    assert np.array_equal(flow[-1], (whole != 0).any(dim=(1, 2, 4)).numpy())
    assert first_crossing_layer(flow, s.docs) == 1


# ---------------------------------------------------------------- every family: the engine against the reference


FINDINGS: dict = {}  # (family, use_cache) -> {operator path: isolated}, printed with -s


def family_case(family, use_cache):
    marks = [pytest.mark.slow] if family == "kimi_linear" else []  # its KDA pads every row to 64 positions
    return pytest.param(family, use_cache, marks=marks, id=f"{family}-{'nocache' if use_cache is False else 'cache'}")


@pytest.mark.parametrize("family, use_cache", [family_case(f, c) for f in hybrids() for c in (None, False)])
def test_engine_per_operator_isolation_and_per_layer_flow_equal_the_reference(hf, family, use_cache):
    import torch

    from hasse.gpu_check.audit import engine

    layout = make_scenario("packed", lengths=LENGTHS)
    subject = engine.family_subject(spec_of(family), layout, use_cache=use_cache)
    result = engine.audit_subject(subject, seeds=1, backends=("eager",))
    (b,) = result.backends
    built = subject.build("eager", 0)
    gen = torch.Generator().manual_seed(11)
    width = built.model.get_input_embeddings().weight.shape[1]
    x = torch.randn(1, layout.n, width, generator=gen, dtype=torch.float64).to(getattr(torch, built.dtype))
    ref_ops = operator_jacobians(built.model, built.batch, x)
    ref_flow = model_jacobian(built.model, built.batch, x)
    assert np.array_equal(b.measured, ref_flow), f"per-layer flow differs at {np.argwhere(b.measured != ref_flow)}"
    if b.method == "perturbation":  # no backward (RWKV writes its cached state in place): forward perturbations
        assert family == "rwkv" and use_cache is None, "only RWKV's cache has no backward here"
        carried = {f.op.path for f in b.operators if f.introduced}  # the operators the findings went through
        crossing = {p for p, dep in ref_ops.items() if isolated(dep, layout.docs) is False}
        assert carried and all(any(c == p or c.startswith(p + ".") for p in crossing) for c in carried)
        return
    measured = [f for f in b.operators if f.own is not None]
    assert measured, "the engine measured no operator"
    found = {}
    for flow in measured:
        path = flow.op.path
        if path not in ref_ops:  # the reference's class-name rules missed it: measure it by path
            ref_ops.update(operator_jacobians(built.model, built.batch, x, paths=[path]))
        want = isolated(ref_ops[path], layout.docs)
        assert flow.isolated == want, f"{path}: engine says isolated={flow.isolated}, the reference {want}"
        assert np.array_equal(flow.own, ref_ops[path]), f"{path}: own pattern differs"
        found[path] = want
    mixing = {p for p, dep in ref_ops.items() if not np.array_equal(dep, np.eye(layout.n, dtype=bool))}
    covered = {p for p in mixing if any(p == f or p.startswith(f + ".") or f.startswith(p + ".") for f in found)}
    assert covered == mixing, f"token mixers outside every measured operator: {sorted(mixing - covered)}"
    FINDINGS[family, use_cache] = found

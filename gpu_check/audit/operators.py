"""The operators of a model's blocks (attention, linear attention, scans, convolutions, token shifts, MLPs) and their hooks.

A *block* is one element of the model's list of layers (:func:`blocks_of`: ``layers``,
``h``, ``blocks``, ``encoder.layer``, … or, for any module, its largest ``ModuleList``
of one class). An *operator* is a module inside a block whose output at position ``q``
may read other positions (a token mixer) or that transforms positions one by one (an
MLP, a mixture of experts); :func:`find_operators` names them:

- every direct child of the block that is not a norm, a dropout, an activation, a
  linear map or an identity is an operator; its kind comes from its class name
  (:data:`PATTERNS`, first match: ``GatedDeltaNet`` is ``linear_attention``,
  ``MambaMixer`` a ``scan``, ``…Attention`` ``attention``, ``…MLP`` / ``…MoE`` ``mlp``;
  no match: ``other``);
- inside an operator, a ``Conv1d`` (a short causal convolution: ``convolution`` of
  width ``kernel_size``), a time shift (``ZeroPad2d``, ``token_shift`` of width 2) and a
  nested scan or linear attention of a different kind are operators too, so a finding
  can name the convolution inside a Gated DeltaNet rather than the whole mixer.

:class:`Recorder` hooks each operator once (a module shared by several blocks, as in
Zamba 2, is recorded per block: a pre-hook on every block says which block runs) and
keeps, per forward pass, each operator's input hidden tensor and its output in the
layout ``(batch, positions, features)`` (a ``Conv1d`` works on ``(batch, channels,
positions + K - 1)``; its output is cut to the first ``n`` positions, as the models do).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from hasse.theory.errors import InputError

OPERATOR_KINDS = ("attention", "linear_attention", "scan", "convolution", "token_shift", "mlp", "other")
MIXERS = ("attention", "linear_attention", "scan", "convolution", "token_shift", "other")
PATTERNS = (  # (kind, pattern) on the class name less the model's own prefix (KimiLinear, RecurrentGemma, …)
    ("linear_attention", r"DeltaNet|DeltaAttention|LinearAttention|Lightning|GatedLinear|GLA|RetNet|KDA"),
    ("scan", r"Mamba|Mixer|SSM|Scan|Rglru|RGLRU|LRU|RecurrentBlock|TimeMix|LSTM|Recurren"),
    ("mlp", r"MLP|Mlp|MoE|Moe|FeedForward|Experts|FFN|Ffn|Expert"),
    ("convolution", r"ShortConv|CausalConv|Conv"),
    ("attention", r"Attention|Attn"),
)
EXCEPTIONS = {"RwkvSelfAttention": "scan"}  # RWKV's time mix is named attention
PLAIN = r"Norm|Dropout|Activation|Identity|GELU|SiLU|ReLU|Tanh|Softmax|Rotary|Embedding|Router|Gate$"
BLOCK_PATHS = ("layers", "model.layers", "h", "transformer.h", "blocks", "backbone.layers", "encoder.layer",
               "layer", "decoder.layers", "mixers")


@dataclass(frozen=True)
class Operator:
    """One operator of one block (contract: the kinds of :data:`OPERATOR_KINDS`)."""

    layer: int  # 0-based index of the block it sits in
    path: str  # module path in the model, e.g. "layers.0.linear_attn.conv1d"
    kind: str
    class_name: str
    width: int | None = None  # convolution kernel / token shift width (keys, self included)

    @property
    def label(self) -> str:
        """``layers.0.linear_attn (Qwen3NextGatedDeltaNet)``."""
        return f"{self.path} ({self.class_name})"

    @property
    def mixes(self) -> bool:
        """Whether the operator may read other positions (everything but an MLP)."""
        return self.kind in MIXERS


def operator_kind(module: torch.nn.Module, prefix: str = "") -> str | None:
    """The kind of ``module`` as an operator, None for a plain map (norm, linear, activation, …).

    ``prefix``: the model's own name (``KimiLinear`` of ``KimiLinearModel``), left out of
    the class name before it is matched, so that a model called "…Linear…" or
    "Recurrent…" does not make its attention a linear attention or a scan.

    >>> operator_kind(torch.nn.Conv1d(4, 4, 3, groups=4)), operator_kind(torch.nn.ZeroPad2d((0, 0, 1, -1)))
    ('convolution', 'token_shift')
    >>> operator_kind(torch.nn.LayerNorm(4)), operator_kind(torch.nn.Linear(2, 2))
    (None, None)
    """
    if isinstance(module, torch.nn.Conv1d):
        return "convolution"
    if isinstance(module, (torch.nn.ZeroPad2d, torch.nn.ConstantPad2d, torch.nn.ConstantPad1d)):
        return "token_shift"
    if isinstance(module, (torch.nn.Linear, torch.nn.Embedding, torch.nn.LayerNorm, torch.nn.Dropout,
                           torch.nn.Identity)):
        return None
    name = type(module).__name__
    if name in EXCEPTIONS:
        return EXCEPTIONS[name]
    if prefix and name.startswith(prefix) and len(name) > len(prefix):
        name = name[len(prefix):]
    if re.search(PLAIN, name):  # a norm is never a mixer, even a gated one named after Mamba
        return None
    for kind, pattern in PATTERNS:
        if re.search(pattern, name):
            return kind
    if not any(True for _ in module.parameters()) and not list(module.children()):
        return None
    return "other"


def _width(module: torch.nn.Module, kind: str) -> int | None:
    if isinstance(module, torch.nn.Conv1d):
        return int(module.kernel_size[0])
    if kind == "token_shift":
        return 2
    return None


def blocks_of(model: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    """``[(path, block)]``: the model's layers (:data:`BLOCK_PATHS`, else its largest ModuleList of one class)."""
    for path in BLOCK_PATHS:
        obj = model
        for part in path.split("."):
            obj = getattr(obj, part, None)
        if isinstance(obj, torch.nn.ModuleList) and len(obj):
            return [(f"{path}.{i}", block) for i, block in enumerate(obj)]
    best = None
    for path, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) and len({type(m) for m in module}) == 1:
            if best is None or len(module) > len(best[1]):
                best = (path, module)
    if best is None:
        raise InputError(f"cannot find the layers of {type(model).__name__} (no ModuleList of blocks): "
                         "give the blocks (hasse.audit(..., blocks=[...]))")
    return [(f"{best[0]}.{i}", block) for i, block in enumerate(best[1])]


def model_prefix(model: torch.nn.Module) -> str:
    """The model's own name: its class name less ``Model`` / ``ForCausalLM`` / … (``KimiLinearModel`` -> ``KimiLinear``).

    >>> model_prefix(torch.nn.Module())
    ''
    """
    name = type(model).__name__
    for suffix in ("ForCausalLM", "ForMaskedLM", "LMHeadModel", "Model"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return ""


def _children(module: torch.nn.Module, path: str, prefix: str):
    """``(path, child)`` of a block; a nested decoder layer (Zamba 2's hybrid layer) is opened."""
    for name, child in module.named_children():
        here = f"{path}.{name}"
        if type(child).__name__.endswith("DecoderLayer") and list(child.children()):
            yield from _children(child, here, prefix)
        else:
            yield here, child


def find_operators(blocks, prefix: str = "") -> list[Operator]:
    """The operators of each block (module docstring), nested ones before their parent, in module order."""
    out: list[Operator] = []
    for layer, (path, block) in enumerate(blocks):
        for here, child in _children(block, path, prefix):
            kind = operator_kind(child, prefix)
            if kind is None:
                continue
            for sub_name, sub in child.named_modules():
                if not sub_name:
                    continue
                sub_kind = operator_kind(sub, prefix)
                if sub_kind in ("convolution", "token_shift", "scan", "linear_attention"):
                    out.append(Operator(layer, f"{here}.{sub_name}", sub_kind, type(sub).__name__,
                                        _width(sub, sub_kind)))
            out.append(Operator(layer, here, kind, type(child).__name__, _width(child, kind)))
    return out


def module_at(model: torch.nn.Module, path: str) -> torch.nn.Module:
    """The submodule of ``model`` at dotted ``path``."""
    return model.get_submodule(path)


def _first_tensor(value):
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, dict) or hasattr(value, "to_tuple"):
        value = list(value.values()) if isinstance(value, dict) else list(value.to_tuple())
    if isinstance(value, (tuple, list)):
        for item in value:
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


INPUT_NAMES = ("hidden_states", "hidden_state", "x", "input", "inputs", "input_states")


def input_tensor(args, kwargs):
    """The hidden-state input of an operator call: its first tensor argument, or a keyword of :data:`INPUT_NAMES`."""
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return a
    for name in INPUT_NAMES:
        if isinstance(kwargs.get(name), torch.Tensor):
            return kwargs[name]
    for value in kwargs.values():
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.ndim >= 3:
            return value
    return None


def positions_view(t: torch.Tensor | None, n: int, channels_first: bool) -> torch.Tensor | None:
    """``t`` as ``(batch, n, features)``, None if it has no axis of ``n`` positions.

    A (B, C, T >= n) convolution tensor is cut to ``n`` and transposed; a sequence-first
    (n, B, C) tensor (XLNet) is transposed.
    """
    if t is None or not t.is_floating_point():
        return None
    if channels_first:
        return t[..., :n].transpose(1, 2) if t.ndim == 3 and t.shape[-1] >= n else None
    if t.ndim >= 3 and t.shape[1] == n:
        return t.reshape(t.shape[0], n, -1)
    if t.ndim == 3 and t.shape[0] == n:
        return t.transpose(0, 1)
    return None


class Recorder:
    """Forward hooks that record each block's output and each operator's input and output (module docstring).

    ``records`` is reset by :meth:`start`; after a forward, ``layers[i]`` is block ``i``'s
    output ``(B, n, C)`` and ``ops[j]`` the pair ``(input, output)`` of operator ``j``
    (either may be None: not called, or no position axis). Inputs are kept as the
    tensors the module received (a gradient is taken with respect to them) with the
    function that brings them to ``(B, n, features)``.
    """

    def __init__(self, model, blocks, operators, n: int):
        self.n = n
        self.operators = operators
        self.block_index = {id(b): i for i, (_, b) in enumerate(blocks)}
        self.current: int | None = None
        self.handles = []
        self.layers: list = []
        self.ops: list = []
        where: dict[tuple[int, int], int] = {}
        seen: set[int] = set()
        for j, op in enumerate(operators):
            module = module_at(model, op.path)
            where[(op.layer, id(module))] = j
            if id(module) not in seen:
                seen.add(id(module))
                self.handles.append(module.register_forward_hook(self._op_hook, with_kwargs=True))
        self.where = where
        for i, (_, block) in enumerate(blocks):
            self.handles.append(block.register_forward_pre_hook(self._enter(i)))
            self.handles.append(block.register_forward_hook(self._leave(i)))

    def start(self) -> None:
        self.layers = [None] * len(self.block_index)
        self.ops = [None] * len(self.operators)
        self.completed: list[int] = []  # operator indices in the order their calls finished

    def _enter(self, i):
        def hook(module, args):
            self.current = i
        return hook

    def _leave(self, i):
        def hook(module, args, output):
            self.layers[i] = positions_view(_first_tensor(output), self.n, False)
            self.current = None
        return hook

    def _op_hook(self, module, args, kwargs, output):
        j = self.where.get((self.current, id(module)))
        if j is None or self.ops[j] is not None:
            return
        conv = isinstance(module, torch.nn.Conv1d)
        inp = input_tensor(args, kwargs)
        out = positions_view(_first_tensor(output), self.n, conv)
        shaped = positions_view(inp, self.n, conv)
        self.ops[j] = (inp if shaped is not None else None, out, conv)
        self.completed.append(j)

    def close(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []

"""An independent reference for hasse audit: full jacobians by direct autograd on the same model (tests only).

Nothing here uses the kit's measuring code (gpu_check/audit/measure.py, engine.py,
operators.py): the operators are found by their class names and module types, each
operator's input is made a leaf by a forward pre-hook, and the FULL jacobian (an
identity over the output rows and channels, never a random probe) is read exactly:
a pair depends iff some entry is nonzero (NaN counts).

- :func:`find_operator_paths`: the token-mixing and MLP modules under each block;
- :func:`operator_jacobians`: ``{path: (n, n) bool}``, output row q of the operator
  against its own input row k (nn.Conv1d: the (B, C, T) layout, output step q), every
  entry at once: the row replicated along the batch, one copy per output row and
  channel with its one-hot cotangent, and ONE backward;
- :func:`model_jacobian`: ``(L, n, n) bool``, each block's output against the input
  embeddings;
- :func:`isolated`: no pair between two different real documents, none from a pad key
  to a real row.
"""

from __future__ import annotations

import re

import numpy as np
import torch

MIXING = re.compile(r"(Attention|Attn|Mixer|GatedDeltaNet|ShortConv|RecurrentBlock|Rglru|MambaLayer)")
MLP = re.compile(r"(MLP|Mlp|MoE|MoeBlock|FeedForward)")
LAYERS = ("DecoderLayer", "HybridLayer")  # containers of operators, not operators


def blocks_of(model) -> list[tuple[str, torch.nn.Module]]:
    """``(path, block)`` of the model's decoder layers: the longest ModuleList of its children."""
    lists = [(name, mod) for name, mod in model.named_modules() if isinstance(mod, torch.nn.ModuleList)
             and name.count(".") == 0 and len(mod) > 0]
    if not lists:
        raise ValueError(f"{type(model).__name__} has no list of blocks")
    name, blocks = max(lists, key=lambda item: len(item[1]))
    return [(f"{name}.{i}", block) for i, block in enumerate(blocks)]


def find_operator_paths(model) -> list[str]:
    """Module paths of every operator under every block (convolutions and token shifts nested in them too)."""
    paths = []
    for base, block in blocks_of(model):
        mlp_paths: list[str] = []
        for name, mod in block.named_modules():
            if not name:
                continue
            cls = type(mod).__name__
            path = f"{base}.{name}"
            if isinstance(mod, (torch.nn.Conv1d, torch.nn.ZeroPad2d)):
                paths.append(path)
            elif cls.endswith(LAYERS):
                continue
            elif MIXING.search(cls):
                paths.append(path)
            elif MLP.search(cls) and not any(path.startswith(p + ".") for p in mlp_paths):
                mlp_paths.append(path)
                paths.append(path)
    return paths


def _hidden_argument(args, kwargs):
    """``(where, tensor)``: the hidden tensor a module is called with (its first positional or hidden_states)."""
    if args and torch.is_tensor(args[0]) and args[0].is_floating_point():
        return ("arg", 0), args[0]
    for key in ("hidden_states", "input_states", "x", "hidden"):
        if torch.is_tensor(kwargs.get(key)):
            return ("kw", key), kwargs[key]
    raise ValueError("no hidden tensor among the module's arguments")


def _first_tensor(output):
    if torch.is_tensor(output):
        return output
    for item in output:
        if torch.is_tensor(item):
            return item
    raise ValueError("the module returned no tensor")


def _replicated(kwargs: dict, b: int) -> dict:
    """``kwargs`` with every tensor of batch 1 (position_ids, masks, input_ids) repeated to batch ``b``."""
    out = {}
    for key, value in kwargs.items():
        if torch.is_tensor(value) and value.dim() >= 2 and value.shape[0] == 1:
            value = value.expand(b, *value.shape[1:])
        elif torch.is_tensor(value) and value.dim() == 1 and b > 1:  # packing metadata of one row
            raise ValueError(f"{key}: metadata of one row cannot be replicated along the batch")
        out[key] = value
    return out


def _run(model, kwargs: dict, x: torch.Tensor, inputs: str):
    """One forward with ``x`` (B, n, C) as the input embeddings (``inputs``: "inputs_embeds" or "hook")."""
    kwargs = _replicated(kwargs, x.shape[0])
    if inputs == "inputs_embeds":
        return model(inputs_embeds=x, **kwargs)
    embed = model.get_input_embeddings()
    handle = embed.register_forward_hook(lambda mod, args, out: x)
    try:
        return model(**kwargs)
    finally:
        handle.remove()


def identity_batch(n: int, c: int, like: torch.Tensor, layout: str = "tokens") -> torch.Tensor:
    """(n * c, n, c) one-hot tensors, element ``t * c + j`` 1 at row t, channel j (``"channels"``: (n * c, c, n))."""
    eye = torch.eye(n * c, dtype=like.dtype).reshape(n * c, n, c)
    return eye.transpose(1, 2).contiguous() if layout == "channels" else eye


def _dependent(grad: torch.Tensor, n_out: int, n_in: int, conv: bool) -> np.ndarray:
    """(n_out, n_in) bool from jacobian rows ``grad`` (n_out * C_out, n_in, C_in); conv: (…, C_in, n_in)."""
    if conv:
        grad = grad.transpose(1, 2)
    g = grad.reshape(n_out, -1, n_in, grad.shape[-1])
    return ((g != 0) | torch.isnan(g)).any(dim=3).any(dim=1).numpy()


class Capture:
    """Forward hooks: one module's hidden input replaced by ``make(hidden)``, its output kept (first call only)."""

    def __init__(self, module, make):
        self.make, self.leaf, self.out = make, None, None
        self.handles = [module.register_forward_pre_hook(self.pre, with_kwargs=True),
                        module.register_forward_hook(self.post, with_kwargs=True)]

    def pre(self, module, args, kw):
        if self.leaf is not None:
            return None
        where, hidden = _hidden_argument(args, kw)
        self.leaf = self.make(hidden)
        if where[0] == "arg":
            return (self.leaf,) + tuple(args[1:]), kw
        return args, {**kw, where[1]: self.leaf}

    def post(self, module, args, kw, output):
        if self.out is None:
            self.out = _first_tensor(output)

    def remove(self):
        for h in self.handles:
            h.remove()


def _captured(model, mod, kwargs, x, inputs, make) -> Capture:
    cap = Capture(mod, make)
    try:
        _run(model, kwargs, x, inputs)
    finally:
        cap.remove()
    return cap


def rounds_of(paths) -> list[list[str]]:
    """``paths`` in rounds without nesting (a convolution inside a mixer goes to a later round than the mixer).

    >>> rounds_of(["a.attn", "a.attn.conv", "a.mlp", "b.attn"])
    [['a.attn', 'a.mlp', 'b.attn'], ['a.attn.conv']]
    """
    rounds: list[list[str]] = []
    for path in paths:
        for group in rounds:
            if not any(path.startswith(p + ".") or p.startswith(path + ".") for p in group):
                group.append(path)
                break
        else:
            rounds.append([path])
    return rounds


def _operators_reverse(model, mods: dict, kwargs, x, inputs) -> dict:
    """Reverse mode for operators that are not nested in one another: ONE forward of ``n * max C_out`` copies.

    Cutting the input of one operator leaves the others' own jacobians unchanged
    (none lies on another's path from its input to its output); then one backward
    per operator, copy ``t * C_out + j`` with the cotangent ``e_(t, j)``.
    """
    n = x.shape[1]
    with torch.no_grad():
        probes = {p: Capture(m, lambda h: h) for p, m in mods.items()}
        try:
            _run(model, kwargs, x, inputs)
        finally:
            for cap in probes.values():
                cap.remove()
    conv = {p: isinstance(m, torch.nn.Conv1d) for p, m in mods.items()}
    width = {p: cap.out.shape[1 if conv[p] else -1] for p, cap in probes.items() if cap.out is not None}
    if not width:
        return {}
    b = n * max(width.values())
    caps = {p: Capture(mods[p], lambda h: h.detach().clone().requires_grad_(True)) for p in width}
    try:
        with torch.enable_grad():
            _run(model, kwargs, x.expand(b, *x.shape[1:]).clone(), inputs)
    finally:
        for cap in caps.values():
            cap.remove()
    out = {}
    for path, cap in caps.items():
        rows = n * width[path]
        result = cap.out[:rows, :, :n] if conv[path] else cap.out[:rows, :n]
        grad = None
        if result.requires_grad:
            eye = identity_batch(n, width[path], result, "channels" if conv[path] else "tokens")
            (grad,) = torch.autograd.grad(result, cap.leaf, eye, retain_graph=True, allow_unused=True)
        out[path] = np.zeros((n, n), dtype=bool) if grad is None else _dependent(grad[:rows], n, n, conv[path])
    return out


def _operator_forward(model, mod, kwargs, x, inputs, conv: bool) -> np.ndarray | None:
    """Forward mode (graphs a backward refuses: a state updated in place): ``n * C_in`` copies, one tangent each."""
    import torch.autograd.forward_ad as fwad

    n = x.shape[1]
    with fwad.dual_level(), torch.no_grad():
        probe = _captured(model, mod, kwargs, x, inputs, lambda h: h)
        if probe.out is None:
            return None
        c_in = probe.leaf.shape[1 if conv else -1]
        tangent = identity_batch(n, c_in, probe.leaf, "channels" if conv else "tokens")
        cap = _captured(model, mod, kwargs, x.expand(n * c_in, *x.shape[1:]).clone(), inputs,
                        lambda h: fwad.make_dual(h.detach().clone(), tangent))
        t = fwad.unpack_dual(cap.out).tangent
        if t is None:
            return np.zeros((n, n), dtype=bool)
        t = t[:, :, :n] if conv else t[:, :n]  # copy t * C_in + c: the tangent of input (k, c)
        return _dependent(t, n, n, conv).T


def operator_jacobians(model, kwargs: dict, x: torch.Tensor, paths=None, inputs: str = "inputs_embeds") -> dict:
    """``{path: (n, n) bool}``: each operator's output row q against its own input row k, by full jacobians.

    Per operator: a pre-hook replaces its hidden input by a leaf (the same values), a
    hook keeps its output; the forward runs on ``n * C_out`` copies of the row, copy
    ``t * C_out + j`` with the one-hot cotangent ``e_(t, j)`` (an identity over the
    output rows and channels), so ONE backward gives every entry of the jacobian
    (the batch copies are independent rows); operators not nested in one another
    share the forward (:func:`rounds_of`). Where the backward refuses (a state
    updated in place), forward mode, one operator at a time: ``n * C_in`` copies,
    each with one tangent ``e_(k, c)``. An operator the forward never calls is left out; one called more
    than once (a shared block) is read at its first call.
    """
    modules = dict(model.named_modules())
    out: dict = {}
    for group in rounds_of(find_operator_paths(model) if paths is None else paths):
        try:
            out.update(_operators_reverse(model, {p: modules[p] for p in group}, kwargs, x, inputs))
        except RuntimeError as exc:
            if "inplace operation" not in str(exc):
                raise
            for path in group:
                mod = modules[path]
                dep = _operator_forward(model, mod, kwargs, x, inputs, isinstance(mod, torch.nn.Conv1d))
                if dep is not None:
                    out[path] = dep
    return out


def _block_outputs(model, kwargs, x, inputs) -> list:
    outs: list = []
    handles = [block.register_forward_hook(lambda mod, args, output: outs.append(_first_tensor(output)))
               for _, block in blocks_of(model)]
    try:
        _run(model, kwargs, x, inputs)
    finally:
        for h in handles:
            h.remove()
    return outs


def model_jacobian(model, kwargs: dict, x: torch.Tensor, inputs: str = "inputs_embeds") -> np.ndarray:
    """(L, n, n) bool: block l's output row q against input embedding row k, by full jacobians.

    ``n * C`` copies of the row, copy ``t * C + j`` with the cotangent ``e_(t, j)``:
    one forward, one backward per block; forward mode where the backward refuses.
    """
    import torch.autograd.forward_ad as fwad

    n, c = x.shape[1], x.shape[2]
    try:
        leaf = x.detach().expand(n * c, n, c).clone().requires_grad_(True)
        with torch.enable_grad():
            outs = _block_outputs(model, kwargs, leaf, inputs)
            eye = identity_batch(n, outs[0].shape[-1], leaf)
            grads = [torch.autograd.grad(h[:, :n], leaf, eye, retain_graph=True, allow_unused=True)[0]
                     for h in outs]
        return np.stack([np.zeros((n, n), bool) if g is None else _dependent(g, n, n, False) for g in grads])
    except RuntimeError as exc:
        if "inplace operation" not in str(exc):
            raise
    with fwad.dual_level(), torch.no_grad():
        dual = fwad.make_dual(x.detach().expand(n * c, n, c).clone(), identity_batch(n, c, x))
        tangents = [fwad.unpack_dual(h).tangent for h in _block_outputs(model, kwargs, dual, inputs)]
        return np.stack([np.zeros((n, n), bool) if t is None else _dependent(t[:, :n], n, n, False).T
                         for t in tangents])



def isolated(own: np.ndarray, docs) -> bool:
    """No pair (q, k) of ``own`` between two different real documents, nor from a pad key (-1) to a real row."""
    docs = np.asarray(docs)
    real_q = docs[:, None] != -1
    crossing = (docs[:, None] != docs[None, :]) & real_q
    return not bool((own & crossing).any())


def first_crossing_layer(flow: np.ndarray, docs) -> int | None:
    """The first layer (1-based) whose flow ``(L, n, n)`` is not isolated, None when every layer is."""
    for layer, step in enumerate(flow, start=1):
        if not isolated(step, docs):
            return layer
    return None

"""Measuring every block and every operator of a model at once: batched VJPs, or perturbation where there is no backward.

:func:`runner` turns a built model (:class:`~gpu_check.audit.engine.Built`) into
``run(x) -> (layers, ops)``: the input embeddings ``x`` (B, n, C) go in (as
``inputs_embeds``, or through a hook that replaces the output of the model's input
embedding module), and the :class:`~gpu_check.audit.operators.Recorder` hands back each
block's output and each operator's ``(input, output)``. Then

- :func:`measure_vjp` gives, per output row ``q`` and input ``k``, ``‖u_qᵀ ∂T_q/∂x_k‖``
  for every block output and every operator output ``T`` (the *composed* flow, which
  attributes a finding to the operator that introduced it), and ``‖u_qᵀ ∂out_q/∂in_k‖``
  of each operator's output with respect to its own input (its *own* pattern, which says
  whether that operator alone keeps documents apart); one forward, per chunk of rows one
  backward per tensor, vmapped over the chunk's cotangents (or, for kernels without a
  batching rule, the probes ride in the batch: ``replicate``);
- :func:`measure_perturbation` gives the composed flow by forward passes only (FlexAttention
  on the CPU), with the noise of the same run (:mod:`gpu_check.dependency`'s rule).

A VJP is exactly zero where no path exists.
"""

from __future__ import annotations

import numpy as np
import torch

from hasse.gpu_check.dependency import random_probes
from hasse.gpu_check.audit.operators import Recorder
from hasse.theory.errors import InputError


def expand_batch(batch: dict, rows: int) -> dict:
    """The model's keyword arguments for ``rows`` copies of one row (1-D metadata such as cu_seq_lens kept as is)."""
    out = {}
    for key, value in batch.items():
        if isinstance(value, torch.Tensor) and value.ndim >= 2 and value.shape[0] == 1 and rows != 1:
            value = value.expand(rows, *value.shape[1:]).clone()
        out[key] = value
    return out


def batchable(batch: dict) -> bool:
    """False when the batch holds 1-D metadata (cu_seq_lens): its copies cannot ride in the batch."""
    return not any(isinstance(v, torch.Tensor) and v.ndim == 1 for v in batch.values())


def input_embedding(model):
    """The module whose output is the input embedding (``get_input_embeddings()``, else the first nn.Embedding)."""
    getter = getattr(model, "get_input_embeddings", None)
    if callable(getter):
        try:
            found = getter()
        except (NotImplementedError, AttributeError):
            found = None
        if isinstance(found, torch.nn.Module):
            return found
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding):
            return module
    raise InputError(f"{type(model).__name__} has no input embedding module: give the batch inputs_embeds")


def runner(built, blocks, operators, n: int):
    """``(run, recorder)``: ``run(x)`` -> ``(layers, ops)`` for input embeddings ``x`` (B, n, C) (module docstring)."""
    recorder = Recorder(built.model, blocks, operators, n)
    leaf: list = [None]
    fired: list = [0]
    if built.inputs == "hook":
        embedding = input_embedding(built.model)

        def replace(module, args, output):
            fired[0] += 1
            return leaf[0].to(output.dtype) if leaf[0].shape[0] == output.shape[0] else leaf[0]
        recorder.handles.append(embedding.register_forward_hook(replace))
    elif built.inputs != "inputs_embeds":
        raise ValueError(f"inputs must be 'inputs_embeds' or 'hook', got {built.inputs!r}")

    def run(x: torch.Tensor):
        recorder.start()
        kwargs = expand_batch(built.batch, x.shape[0])
        if built.inputs == "hook":
            leaf[0], fired[0] = x, 0
            built.model(**kwargs)
            if not fired[0]:  # the leaf never entered: every measured dependency would be a silent zero
                raise InputError(f"{type(built.model).__name__} never called its input embedding module "
                                 f"{type(embedding).__name__} as a module: give the batch inputs_embeds")
        else:
            built.model(inputs_embeds=x, **kwargs)
        missing = [i for i, h in enumerate(recorder.layers) if h is None]
        if missing:
            raise InputError(f"block {missing[0]}'s output is not (batch, {n} positions, features)")
        return list(recorder.layers), list(recorder.ops)

    return run, recorder


def _row_norms(grad, conv: bool, vmapped: bool) -> torch.Tensor:
    """(b, n) float64 norms over features of a gradient batch (vmapped: (b, 1, …); else (b, …))."""
    g = grad[:, 0] if vmapped else grad
    if conv:
        g = g.transpose(1, 2)  # (b, C, n) -> (b, n, C)
    return g.reshape(g.shape[0], g.shape[1], -1).norm(dim=-1).double()


def measure_vjp(run, x: torch.Tensor, rows, *, seed: int, chunk: int = 8, batched: str = "vmap"):
    """``(layers (L, n, n), ops (P, n, n), own (P, n, n), own_measured (P,) bool)`` (module docstring).

    Rows outside ``rows`` stay 0. ``own_measured[j]`` is 2 where operator ``j``'s own
    pattern was measured, 1 where its input or output has no position axis, 0 where it
    was never called as a module (a model that uses its weights through a function).
    """
    _, n, c = x.shape
    rows = [int(q) for q in rows]
    if batched not in ("vmap", "replicate"):
        raise ValueError(f"batched must be 'vmap' or 'replicate', got {batched!r}")
    vmapped = batched == "vmap"
    if vmapped:
        leaf = x.detach().clone().requires_grad_(True)
        layers, ops = run(leaf)
    layer_norms = op_norms = own_norms = own_ok = None
    for start in range(0, len(rows), chunk):
        part = torch.tensor(rows[start:start + chunk])
        b = len(part)
        if not vmapped:
            leaf = x.detach().expand(b, n, c).clone().requires_grad_(True)
            layers, ops = run(leaf)
        if layer_norms is None:
            layer_norms = torch.zeros(len(layers), n, n, dtype=torch.float64)
            op_norms = torch.zeros(len(ops), n, n, dtype=torch.float64)
            own_norms = torch.zeros(len(ops), n, n, dtype=torch.float64)
            own_ok = np.array([0 if o is None else 2 if o[0] is not None and o[1] is not None else 1 for o in ops],
                              dtype=np.int8)  # 0: never called as a module, 1: no position axis, 2: measured
        targets = [(h, None, False, layer_norms, i) for i, h in enumerate(layers)]
        targets += [(o[1], o, o[2], op_norms, j) for j, o in enumerate(ops) if o is not None and o[1] is not None]
        for t_index, (out, op, conv, sink, slot) in enumerate(targets):
            width = out.shape[-1]
            probes = random_probes(n, width, seed + 7_919 * t_index, out)  # (n, W)
            cot = torch.zeros(b, n, width, dtype=out.dtype, device=out.device)
            cot[torch.arange(b, device=out.device), part.to(out.device)] = probes[part.to(out.device)]
            cot = cot[:, None] if vmapped else cot  # vmapped: (b, 1, n, W)
            wanted = [leaf] + ([op[0]] if op is not None and own_ok[slot] == 2 else [])
            grads = torch.autograd.grad(out, wanted, cot, retain_graph=True, allow_unused=True,
                                        is_grads_batched=vmapped)
            if grads[0] is not None:
                sink[slot, part] = _row_norms(grads[0], False, vmapped).cpu()
            if len(grads) > 1 and grads[1] is not None:
                own_norms[slot, part] = _row_norms(grads[1], conv, vmapped).cpu()
    return layer_norms.numpy(), op_norms.numpy(), own_norms.numpy(), own_ok


def outputs_of(run, last_ops: list | None = None):
    """``tensors(x)``: every block output then every operator output of ``run(x)`` (a dummy where none).

    ``last_ops``, when given, receives the operator records of the last call.
    """
    def tensors(inp):
        layers, ops = run(inp)
        if last_ops is not None:
            last_ops[:] = ops
        return layers + [o[1] if o is not None and o[1] is not None else inp[..., :1] * 0 for o in ops]

    return tensors


def measure_perturbation(tensors, x: torch.Tensor, rows, *, seed: int, chunk: int = 32, batched: bool = True):
    """``(norms (T, n, n), noise (T, n), scale (T, n))`` of the T tensors ``tensors(x)`` (B, n, W_t), forward only.

    ``‖T_q(x + δ e_k) − T_q(x)‖``; the noise is measured as
    :func:`gpu_check.dependency.observe_perturbation` measures it (the unperturbed forward
    twice; each batch once more with every perturbation zero, copy ``i`` against copy 0
    and its element 0 against the perturbed batch's; never across batch shapes);
    ``scale`` is ``‖T_q(x)‖``. ``batched=False`` (a batch with 1-D metadata) runs one
    perturbed input per forward.
    """
    _, n, c = x.shape
    deltas = random_probes(n, c, seed + 10_007, x)  # (n, C) on x's device

    def change(a, b):  # lists of (B, n, W) -> (T, B, n)
        return torch.stack([(u - v).norm(dim=-1).double().cpu() for u, v in zip(a, b)])

    with torch.no_grad():
        base = tensors(x)
        noise = change(tensors(x), base)[:, 0]  # (T, n)
        norms = torch.zeros(len(base), n, n, dtype=torch.float64)
        step = chunk if batched else 1
        for start in range(0, n, step):
            keys = torch.arange(start, min(start + step, n))
            if batched:
                b = len(keys)
                batch = x.expand(1 + b, n, c).clone()
                same = tensors(batch)
                batch[1 + torch.arange(b), keys] += deltas[keys]
                outs = tensors(batch)
                slots = change([s[1:] for s in same], [s[:1] for s in same]).amax(dim=1)
                noise = torch.stack([noise, slots, change([o[:1] for o in outs], [s[:1] for s in same])[:, 0]]
                                    ).amax(dim=0)
                norms[:, :, start:start + b] = change([o[1:] for o in outs], [o[:1] for o in outs]).permute(0, 2, 1)
            else:
                moved = x.clone()
                moved[0, keys] += deltas[keys]
                norms[:, :, start] = change(tensors(moved), base)[:, 0]
    keep = torch.zeros(n, dtype=torch.bool)
    keep[[int(q) for q in rows]] = True
    norms[:, ~keep] = 0
    noise[:, ~keep] = 0
    scale = torch.stack([t[0].norm(dim=-1).double().cpu() for t in base])
    return norms.numpy(), noise.numpy(), scale.numpy()


def measure_loop(run, x: torch.Tensor, rows, *, seed: int):
    """:func:`measure_vjp`'s four results, one backward per output row and tensor (the baseline).

    The same tensors and probes (``u_q`` of tensor ``t`` drawn with seed
    ``seed + 7919 t``): one forward, then for every block output and operator output
    ``T`` and every row ``q`` of ``rows`` one ``autograd.grad`` of ``u_qᵀ T_q`` with
    respect to the input and, for an operator, its own input (benchmarks/bench_audit.py).
    """
    _, n, _ = x.shape
    rows = [int(q) for q in rows]
    leaf = x.detach().clone().requires_grad_(True)
    layers, ops = run(leaf)
    layer_norms = torch.zeros(len(layers), n, n, dtype=torch.float64)
    op_norms = torch.zeros(len(ops), n, n, dtype=torch.float64)
    own_norms = torch.zeros(len(ops), n, n, dtype=torch.float64)
    own_ok = np.array([0 if o is None else 2 if o[0] is not None and o[1] is not None else 1 for o in ops],
                      dtype=np.int8)  # as measure_vjp's: 0 never called, 1 no position axis, 2 measured
    targets = [(h, None, False, layer_norms, i) for i, h in enumerate(layers)]
    targets += [(o[1], o, o[2], op_norms, j) for j, o in enumerate(ops) if o is not None and o[1] is not None]
    for t_index, (out, op, conv, sink, slot) in enumerate(targets):
        probes = random_probes(n, out.shape[-1], seed + 7_919 * t_index, out)  # (n, W) on out's device
        wanted = [leaf] + ([op[0]] if op is not None and own_ok[slot] == 2 else [])
        for q in rows:
            grads = torch.autograd.grad((out[0, q] * probes[q]).sum(), wanted, retain_graph=True, allow_unused=True)
            if grads[0] is not None:
                sink[slot, q] = _row_norms(grads[0], False, False)[0].cpu()
            if len(grads) > 1 and grads[1] is not None:
                own_norms[slot, q] = _row_norms(grads[1], conv, False)[0].cpu()
    return layer_norms.numpy(), op_norms.numpy(), own_norms.numpy(), own_ok

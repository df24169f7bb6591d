"""The dependency check of a stack of different masks per layer: block ``i`` runs layer ``i``.

Definition (design.md §9, "Stacks"). For a :class:`~theory.stack.LayerStack` and a depth
``L`` (default: the stack's own depth; beyond it the layers cycle, as in
:meth:`~theory.stack.LayerStack.layer`), block ``i`` of the seeded model runs

- an attention layer (kind ``attention``) with the chosen backend on that layer's mask
  (:func:`gpu_check.backends.make_attention`);
- a recurrent layer (kind ``recurrent``) as a real gated linear recurrence evaluated
  by a scan, reset where its dependency pattern says (:mod:`gpu_check.recurrence`),
  whatever the backend;

and the observed pattern (:func:`gpu_check.dependency.observe_dependencies`) is
compared with the stack's ``R(L) = A_L · … · A_1`` (:func:`theory.stack.propagate`).

Empty rows: an attention layer whose mask has a query attending nothing is refused
(kernels disagree on it; check that layer alone with ``hasse gpu-check MASK``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np
import torch

from hasse.gpu_check.backends import backend_info, make_attention
from hasse.gpu_check.config import StackConfig
from hasse.gpu_check.dependency import DependencyReport, EmptyRowsError, observe_dependencies
from hasse.gpu_check.recurrence import make_recurrence
from hasse.theory.empty_rows import empty_rows
from hasse.theory.errors import InputError
from hasse.theory.stack import LayerStack, StackLayer, propagate


def layer_attention(layer: StackLayer, backend: str, device: str = "cpu", *, invert_mha: bool = True,
                    source: str | None = None) -> Callable:
    """``attention(attn, h) -> (B, T, C)`` for one layer: the backend on its mask, or the recurrence."""
    if layer.kind == "recurrent":
        return make_recurrence(layer.mask, device, source=source)
    return make_attention(backend, layer.mask, device, invert_mha=invert_mha)


def layer_attentions(stack: LayerStack, layers: int, backend: str, device: str = "cpu", *,
                     invert_mha: bool = True) -> list[Callable]:
    """One callable per block for ``layers`` blocks (layers cycle past the depth); equal layers share one.

    Raises :class:`~gpu_check.dependency.EmptyRowsError` for an attention layer with an empty row.
    """
    built: dict[tuple[int, str], Callable] = {}
    out = []
    for i in range(layers):
        layer = stack.layer(i)
        key = (id(layer.mask), layer.kind)
        if key not in built:
            where = f"layer {i + 1} ({layer.spec})"
            rows = empty_rows(layer.mask) if layer.kind == "attention" else []
            if rows:
                raise EmptyRowsError(f"{len(rows)} empty row(s) (queries attending no key: {_shown(rows)}); kernels "
                                     "disagree there, so a stack's attention layers must have none (check this "
                                     "layer alone with hasse gpu-check MASK, which reads its empty rows)", where)
            built[key] = layer_attention(layer, backend, device, invert_mha=invert_mha, source=where)
        out.append(built[key])
    return out


def _shown(rows) -> str:
    """The first ten rows, then an ellipsis."""
    return ", ".join(map(str, rows[:10])) + (" …" if len(rows) > 10 else "")


def stack_reach(stack: LayerStack, layers: int) -> np.ndarray:
    """``R(layers)`` of ``stack`` (cycled past its depth): (n, n) bool."""
    return propagate(stack, layers, until_converged=False).reach(layers)


def stack_dependency_check(
    stack: LayerStack,
    layers: int | None = None,
    backend: str = "manual",
    device: str = "cpu",
    *,
    seeds: int = 3,
    config: StackConfig | None = None,
    inputs: Callable[[int, StackConfig], torch.Tensor] | None = None,
    method: str | None = None,
    chunk: int | None = None,
    invert_mha: bool = True,
) -> DependencyReport:
    """Observe the pattern of an ``L``-block model whose block ``i`` runs layer ``i`` of ``stack``; compare with ``R(L)``.

    ``layers`` defaults to ``stack.depth``. Seeds, inputs, probes and methods are those
    of :func:`gpu_check.dependency.dependency_check`.

    >>> from hasse.theory.inputs.stacks import build_stack
    >>> s = build_stack("sliding_window:w=2, recurrent:chunk=2", n=4)
    >>> r = stack_dependency_check(s, config=StackConfig(width=4, heads=1), seeds=1)
    >>> r.agrees, r.layers, r.observed.astype(int).tolist()[3]
    (True, 2, [0, 1, 1, 1])
    """
    layers = stack.depth if layers is None else layers
    if layers < 0:
        raise InputError(f"layers must be >= 0, got {layers}")
    backend_info(backend)
    config = replace(config or StackConfig(), layers=layers)
    attentions = layer_attentions(stack, layers, backend, device, invert_mha=invert_mha)
    return observe_dependencies(attentions, stack_reach(stack, layers), backend, device, seeds=seeds, config=config,
                                inputs=inputs, method=method, chunk=chunk)

"""The whole empirical check: a seeded model whose block ``i`` runs layer ``i`` of a stack, against ``R(L)``.

Definition (design.md §9, "Stacks"). For a :class:`~theory.stack.LayerStack` and a depth
``L`` (beyond the stack's depth its layers cycle, as in
:meth:`~theory.stack.LayerStack.layer`), block ``i`` of the seeded model runs

- an attention layer (kind ``attention``) with the chosen backend on that layer's mask
  (:func:`gpu_check.backends.make_attention`);
- a recurrent layer (kind ``recurrent``) as a real gated linear recurrence evaluated
  by a scan, reset where its dependency pattern says (:mod:`gpu_check.recurrence`),
  whatever the backend;

and the observed pattern (:func:`gpu_check.dependency.observe_dependencies`) is compared
with the stack's ``R(L) = A_L · … · A_1``. A single mask is a stack of one layer (every
block runs it, :func:`one_layer`); its default depth is its convergence depth ``L*``.

:func:`run_check` is the pipeline behind ``hasse gpu-check``: for a single mask, observe
what the kernel does with empty rows, if any (:func:`gpu_check.empty_rows.probe_empty_rows`:
every key, zeros or NaN), and read them that way in theory; observe the dependency
pattern (:func:`dependency_check`); for a task, read the leak gradients of its
supervised positions and the cross-group gradients of its isolate groups
(:mod:`gpu_check.leak_gradients`) beside the leaks theory predicts within ``L`` layers.

The check *passes* when the observed pattern equals ``R(L)`` and, for a task, no
leak or isolation gradient is nonzero: a bad design fails it even though the
kernels behave exactly as theory says. A kernel that returns NaN at an empty row
fails it too (its NaN gradients contradict any pattern). An attention layer of a
stack of several layers with an empty row is refused (kernels disagree on it; check
that layer alone).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import torch

from hasse.gpu_check.backends import backend_info, make_attention
from hasse.gpu_check.config import StackConfig
from hasse.gpu_check.dependency import DependencyReport, check_no_empty_rows, observe_dependencies
from hasse.gpu_check.empty_rows import EmptyRowProbe, probe_empty_rows
from hasse.gpu_check.leak_gradients import (
    DEFAULT_VOCAB,
    CrossGradient,
    PositionGradients,
    isolation_gradients,
    leak_gradients,
    task_inputs,
)
from hasse.gpu_check.recurrence import make_recurrence
from hasse.theory.errors import InputError
from hasse.theory.leak import Flow, Leak
from hasse.theory.order import mask_to_order
from hasse.theory.reach import reach
from hasse.theory.stack import LayerStack, StackLayer, propagate
from hasse.theory.stack_leak import apply_stack_policy, find_stack_leaks
from hasse.theory.task import Task

MAX_DEFAULT_LAYERS = 6
MAX_BATCH_ROWS = 64  # distinct batch rows checked for real (each a full gradient check)

# why an attention layer of a stack may not have empty rows (a single mask's are probed instead)
STACK_EMPTY_ROWS = ("kernels disagree there, so a stack's attention layers must have none (check this layer alone "
                    "with hasse gpu-check MASK, which reads its empty rows)")


@dataclass(frozen=True)
class GpuCheck:
    """One gpu-check: the dependency report and, for a task, its leak gradients."""

    subject: str  # the spec or file checked
    kind: str  # "mask", "task" or "stack" (a stack alone; a task run through a stack is "task")
    report: DependencyReport
    leak_gradients: tuple[PositionGradients, ...] | None  # None for a mask
    isolation_gradients: tuple[CrossGradient, ...] | None
    theory_leaks: tuple[Leak, ...] | None  # the leaks theory finds within L layers
    theory_isolation: tuple[Flow, ...] | None
    empty_rows: EmptyRowProbe | None = None  # what the kernel did with empty rows (None: there are none)
    stack: LayerStack | None = None  # the layers run, one per block (None: one mask at every layer)

    @property
    def leaking(self) -> bool:
        """Some supervised output moves with an input holding its target, or a group reads another."""
        return any(g.leaks for g in self.leak_gradients or ()) or bool(self.isolation_gradients)

    @property
    def gradients_match_theory(self) -> bool:
        """Leak gradients are dependencies exactly where theory says a leak path exists within L layers."""
        return all(s.dependent == s.path_exists for g in self.leak_gradients or () for s in g.gradients)

    @property
    def passed(self) -> bool:
        nan = self.empty_rows is not None and self.empty_rows.behaviour in ("nan", "other")
        return self.report.agrees and not self.leaking and not nan


def default_layers(mask: np.ndarray) -> int:
    """The convergence depth ``L*`` (so ``R(L) = R*``), at least 1 and at most :data:`MAX_DEFAULT_LAYERS`."""
    return int(min(max(1, mask_to_order(mask).convergence_depth), MAX_DEFAULT_LAYERS))


def one_layer(mask, spec: str = "") -> LayerStack:
    """A single mask as a stack of one layer: every block runs it."""
    return LayerStack((StackLayer(np.asarray(mask, dtype=bool), spec),), spec)


def layer_attention(layer: StackLayer, backend: str, device: str = "cpu", *, invert_mha: bool = True,
                    source: str | None = None) -> Callable:
    """``attention(attn, h) -> (B, T, C)`` for one layer: the backend on its mask, or the recurrence."""
    if layer.kind == "recurrent":
        return make_recurrence(layer.mask, device, source=source)
    return make_attention(backend, layer.mask, device, invert_mha=invert_mha)


def layer_attentions(stack: LayerStack, layers: int, backend: str, device: str = "cpu", *,
                     invert_mha: bool = True, refuse_empty_rows: bool = True) -> list[Callable]:
    """One callable per block for ``layers`` blocks (layers cycle past the depth); equal layers share one.

    Raises :class:`~gpu_check.dependency.EmptyRowsError` for an attention layer with an empty
    row, unless ``refuse_empty_rows`` is false (the caller reads them by a policy).
    """
    built: dict[tuple[int, str], Callable] = {}
    out = []
    for i in range(layers):
        layer = stack.layer(i)
        key = (id(layer.mask), layer.kind)
        if key not in built:
            where = f"layer {i + 1} ({layer.spec})"
            if refuse_empty_rows and layer.kind == "attention":
                check_no_empty_rows(layer.mask, where, why=STACK_EMPTY_ROWS)
            built[key] = layer_attention(layer, backend, device, invert_mha=invert_mha, source=where)
        out.append(built[key])
    return out


def stack_reach(stack: LayerStack, layers: int) -> np.ndarray:
    """``R(layers)`` of ``stack`` (cycled past its depth): (n, n) bool; one layer: the powers of its mask."""
    if stack.depth == 1:
        return reach(stack.layers[0].mask, layers)
    return propagate(stack, layers, until_converged=False).reach(layers)


def dependency_check(
    stack: LayerStack | np.ndarray,
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
    empty_rows: str | None = None,
) -> DependencyReport:
    """The observed pattern of ``L`` blocks, block ``i`` running layer ``i`` of ``stack``, compared with ``R(L)``.

    ``stack`` is a :class:`~theory.stack.LayerStack` or one mask (a stack of one layer);
    ``layers`` defaults to the stack's depth. ``empty_rows`` is the policy
    (:mod:`theory.empty_rows`) that gives ``R(L)`` for layers with empty rows: the kernel
    runs on the masks themselves, the theory on the masks read the way that kernel
    reads them (:mod:`gpu_check.empty_rows` observes which). None refuses empty rows.

    Seed ``s`` draws the model's weights (``config.seed + s``), the input
    (``inputs(s, config)`` if given, else standard normal) and the probes.
    ``method`` defaults to ``vjp`` where the backend has a backward on ``device``,
    else ``perturbation``.

    Raises
    ------
    EmptyRowsError : some query attends nothing and ``empty_rows`` is None (detected before running).
    InputError : the backend cannot run on the device, or ``vjp`` is asked of a
        backend without a backward there.

    >>> r = dependency_check(np.tril(np.ones((4, 4), bool)), 1, config=StackConfig(width=4, heads=1), seeds=1)
    >>> r.agrees, r.method, r.observed.astype(int).tolist()[1]
    (True, 'vjp', [1, 1, 0, 0])
    >>> from hasse.theory.inputs.stacks import build_stack
    >>> s = build_stack("sliding_window:w=2, recurrent:chunk=2", n=4)
    >>> r = dependency_check(s, config=StackConfig(width=4, heads=1), seeds=1)
    >>> r.agrees, r.layers, r.observed.astype(int).tolist()[3]
    (True, 2, [0, 1, 1, 1])
    """
    if not isinstance(stack, LayerStack):
        mask = np.asarray(stack, dtype=bool)
        if empty_rows is None:
            check_no_empty_rows(mask)
        stack = one_layer(mask)
    layers = stack.depth if layers is None else layers
    if layers < 0:
        raise InputError(f"layers must be >= 0, got {layers}")
    if seeds < 1:
        raise InputError(f"seeds must be >= 1, got {seeds}")
    backend_info(backend)
    config = replace(config or StackConfig(), layers=layers)
    attentions = layer_attentions(stack, layers, backend, device, invert_mha=invert_mha,
                                  refuse_empty_rows=empty_rows is None)
    read = stack if empty_rows is None else apply_stack_policy(stack, empty_rows)[0]
    return observe_dependencies(attentions, stack_reach(read, layers), backend, device, seeds=seeds, config=config,
                                inputs=inputs, method=method, chunk=chunk)


def run_check(subject, layers: int | None = None, backend: str = "manual", device: str = "cpu", *,
              stack: LayerStack | None = None, seeds: int = 3, config: StackConfig | None = None,
              label: str = "", vocab: int = DEFAULT_VOCAB, invert_mha: bool = True) -> GpuCheck:
    """The check of a mask, a task or a stack: the dependency pattern vs ``R(L)``, and a task's gradients.

    ``subject`` is a mask (an (n, n) array: one layer at every block, ``L`` defaults to
    :func:`default_layers`, its empty rows read as the backend reads them), a
    :class:`~theory.task.Task` (its inputs embedded, its mask at every block) or a
    :class:`~theory.stack.LayerStack` (``L`` defaults to its depth). ``stack`` runs a
    task's inputs through that stack instead of its own mask (same size). A task's leaks
    are those :func:`theory.stack_leak.find_stack_leaks` finds within ``L`` layers.
    ``label`` names the subject in the result (default: the task's name, the stack's spec).
    """
    if isinstance(subject, LayerStack):
        subject, stack = None, subject
    task = subject if isinstance(subject, Task) else None
    probe = None
    if stack is None:
        mask = np.asarray(task.mask if task is not None else subject, dtype=bool)
        probe = probe_empty_rows(mask, backend, device)
        layers = default_layers(mask) if layers is None else layers
    elif task is not None and task.size != stack.n:
        raise InputError(f"the stack has {stack.n} positions, the task {task.size}", label or task.name)
    policy = probe.policy if probe else None
    inputs = None if task is None else task_inputs(task, vocab, device)
    report = dependency_check(mask if stack is None else stack, layers, backend, device, seeds=seeds, config=config,
                              inputs=inputs, invert_mha=invert_mha, empty_rows=policy)
    if task is None:
        return GpuCheck(label or ("" if stack is None else stack.spec), "mask" if stack is None else "stack", report,
                        None, None, None, None, probe, stack)
    theory = find_stack_leaks(task, stack, report.layers, empty_rows=policy or "attend-none")
    return GpuCheck(label or task.name, "task", report, leak_gradients(task, report),
                    isolation_gradients(task, report), theory.leaks_within(), theory.isolation_within(), probe, stack)


def run_batch_rows(grid, layers: int | None = None, backend: str = "manual", device: str = "cpu", *,
                   seeds: int = 3, label: str = "", source: str | None = None) -> tuple[GpuCheck, ...]:
    """:func:`run_check` of every batch row of ``grid`` (a :class:`~theory.heads.HeadMasks`), each row's union
    over heads on its own (as batch row 0 alone would be); equal rows are checked once."""
    masks = [grid.masks[b].any(axis=0) for b in range(grid.batch_rows)]
    distinct = {m.tobytes(): m for m in masks}
    if len(distinct) > MAX_BATCH_ROWS:
        raise InputError(f"gpu-check runs each batch row for real: at most {MAX_BATCH_ROWS} distinct batch rows, got "
                         f"{len(distinct):,} (check fewer rows, e.g. a slice of the array)", source)
    done = {key: run_check(m, layers, backend, device, seeds=seeds, label=label) for key, m in distinct.items()}
    return tuple(done[m.tobytes()] for m in masks)

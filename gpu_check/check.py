"""The whole empirical check: ``mask_to_gpu_check``, ``task_to_gpu_check`` and ``stack_to_gpu_check``.

Pipeline: observe what the kernel does with empty rows, if any
(:func:`gpu_check.empty_rows.probe_empty_rows`: every key, zeros or NaN) and read
them that way in theory -> build a seeded ``L``-layer stack -> observe its
dependency pattern with one backend (:mod:`gpu_check.dependency`) -> compare with
``R(L)`` -> for a task, read the leak gradients of its supervised positions and
the cross-group gradients of its isolate groups (:mod:`gpu_check.leak_gradients`)
beside the leaks ``theory.leak.find_leaks`` predicts within ``L`` layers.

The check *passes* when the observed pattern equals ``R(L)`` and, for a task, no
leak or isolation gradient is nonzero: a bad design fails it even though the
kernels behave exactly as theory says. A kernel that returns NaN at an empty row
fails it too (its NaN gradients contradict any pattern).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hasse.gpu_check.config import StackConfig
from hasse.gpu_check.dependency import DependencyReport, dependency_check
from hasse.gpu_check.empty_rows import EmptyRowProbe, probe_empty_rows
from hasse.gpu_check.leak_gradients import (
    DEFAULT_VOCAB,
    CrossGradient,
    PositionGradients,
    isolation_gradients,
    leak_gradients,
    task_inputs,
)
from hasse.gpu_check.stack_check import stack_dependency_check
from hasse.theory.errors import InputError
from hasse.theory.leak import Flow, Leak, find_leaks
from hasse.theory.order import mask_to_order
from hasse.theory.stack import LayerStack
from hasse.theory.stack_leak import find_stack_leaks

MAX_DEFAULT_LAYERS = 6


@dataclass(frozen=True)
class GpuCheck:
    """One gpu-check: the dependency report and, for a task, its leak gradients."""

    subject: str  # the spec or file checked
    kind: str  # "mask", "task" or "stack" (a stack alone; a task run through a stack is "task")
    report: DependencyReport
    leak_gradients: tuple[PositionGradients, ...] | None  # None for a mask
    isolation_gradients: tuple[CrossGradient, ...] | None
    theory_leaks: tuple[Leak, ...] | None  # find_leaks within L layers
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


def mask_to_gpu_check(mask: np.ndarray, layers: int | None = None, backend: str = "manual", device: str = "cpu",
                      *, seeds: int = 3, config: StackConfig | None = None, subject: str = "",
                      invert_mha: bool = True) -> GpuCheck:
    """Dependency pattern of a stack under ``mask`` vs ``R(L)`` (``L`` = :func:`default_layers` when None)."""
    mask = np.asarray(mask, dtype=bool)
    probe = probe_empty_rows(mask, backend, device)
    layers = default_layers(mask) if layers is None else layers
    report = dependency_check(mask, layers, backend, device, seeds=seeds, config=config, invert_mha=invert_mha,
                              empty_rows=probe.policy if probe else None)
    return GpuCheck(subject, "mask", report, None, None, None, None, probe)


def task_to_gpu_check(task, layers: int | None = None, backend: str = "manual", device: str = "cpu", *,
                      seeds: int = 3, config: StackConfig | None = None, vocab: int = DEFAULT_VOCAB,
                      invert_mha: bool = True) -> GpuCheck:
    """The dependency check on the task's embedded inputs, plus its leak and isolation gradients."""
    probe = probe_empty_rows(task.mask, backend, device)
    policy = probe.policy if probe else "attend-none"
    layers = default_layers(task.mask) if layers is None else layers
    report = dependency_check(task.mask, layers, backend, device, seeds=seeds, config=config,
                              inputs=task_inputs(task, vocab, device), invert_mha=invert_mha,
                              empty_rows=policy if probe else None)
    theory = find_leaks(task, layers, empty_rows=policy)
    return GpuCheck(task.name, "task", report, leak_gradients(task, report), isolation_gradients(task, report),
                    theory.leaks_within(), theory.isolation_within(), probe)


def stack_to_gpu_check(stack: LayerStack, layers: int | None = None, backend: str = "manual", device: str = "cpu",
                       *, task=None, seeds: int = 3, config: StackConfig | None = None, subject: str = "",
                       vocab: int = DEFAULT_VOCAB, invert_mha: bool = True) -> GpuCheck:
    """The check of a stack of different masks per layer (``L`` = the stack's depth when None).

    Block ``i`` runs layer ``i`` of ``stack`` (:mod:`gpu_check.stack_check`); the pattern is
    compared with the stack's ``R(L)``. With a ``task`` (same size as the stack) its inputs
    are embedded, its own mask is ignored, and its leak and isolation gradients are read
    beside the leaks :func:`theory.stack_leak.find_stack_leaks` finds within ``L`` layers.
    An attention layer with an empty row is refused (no empty-row probe for stacks).
    """
    layers = stack.depth if layers is None else layers
    if task is not None and task.size != stack.n:
        raise InputError(f"the stack has {stack.n} positions, the task {task.size}", subject or task.name)
    inputs = None if task is None else task_inputs(task, vocab, device)
    report = stack_dependency_check(stack, layers, backend, device, seeds=seeds, config=config, inputs=inputs,
                                    invert_mha=invert_mha)
    if task is None:
        return GpuCheck(subject or stack.spec, "stack", report, None, None, None, None, None, stack)
    theory = find_stack_leaks(task, stack, layers, empty_rows="attend-none")
    return GpuCheck(subject or task.name, "task", report, leak_gradients(task, report),
                    isolation_gradients(task, report), theory.leaks_within(), theory.isolation_within(), None, stack)

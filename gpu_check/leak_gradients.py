"""Leak gradients: does a supervised position's output move with an input holding its target?

Definition. Embed a task's inputs (:mod:`gpu_check.embedding`), run the stack, and
for every supervised position ``p``, every target ``t`` of ``p`` and every input
position ``j`` whose content holds ``t`` (``t ∈ sources(j)``, design.md §3), read the
observed dependency of ``out_p`` on ``e_j`` (:mod:`gpu_check.dependency`, the
largest over seeds) and whether it is a dependency in some seed (above the
report's noise threshold, :func:`gpu_check.dependency.dependent`; for a VJP any
nonzero). A leak-free design gives exact zeros everywhere (forward perturbations:
nothing above the measured noise); a design that leaks within ``L`` layers gives a
dependency exactly where ``R(L)[p, j]``, which includes the witness source ``hasse
leak`` names. Isolation groups (packed documents) are read the same way: every pair
of positions in different groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from hasse.gpu_check.config import StackConfig, dtype_for
from hasse.gpu_check.dependency import DependencyReport
from hasse.gpu_check.embedding import TaskEmbedding, input_table
from hasse.gpu_check.model import seeded

DEFAULT_VOCAB = 16


@dataclass(frozen=True)
class SourceGradient:
    """The observed dependency of a supervised output on one input holding its target."""

    source: int  # input position j, t in sources(j)
    target: int  # the token t
    norm: float  # largest over seeds; 0.0 means exactly zero in every seed
    path_exists: bool  # R(L)[position, source]: theory says this leaks within L layers
    dependent: bool  # a dependency in some seed (above the noise threshold, or NaN)


@dataclass(frozen=True)
class PositionGradients:
    """Leak gradients of one supervised position."""

    position: int
    targets: tuple[int, ...]
    gradients: tuple[SourceGradient, ...]

    @property
    def max_norm(self) -> float:
        return max((g.norm for g in self.gradients), default=0.0)

    @property
    def leaks(self) -> bool:
        """Some input holding a target moves this output."""
        return any(g.dependent for g in self.gradients)


@dataclass(frozen=True)
class CrossGradient:
    """A dependency (above the noise threshold) between positions of two isolate groups."""

    position: int
    source: int
    norm: float
    path_exists: bool


def _largest(norms: np.ndarray) -> np.ndarray:
    """Largest over seeds (axis 0), NaN kept as NaN (it counts as nonzero)."""
    nan = np.isnan(norms).any(axis=0)
    return np.where(nan, np.nan, np.nan_to_num(norms, nan=0.0).max(axis=0))


def leak_gradients(task, report: DependencyReport) -> tuple[PositionGradients, ...]:
    """Per supervised position, the observed dependency on every input holding one of its targets."""
    largest = _largest(report.norms)  # (N, N)
    seen = report.observed  # (N, N): a dependency in some seed
    sources = task.all_sources()
    out = []
    for p in task.supervised:
        grads = tuple(
            SourceGradient(j, t, float(largest[p, j]), bool(report.theory[p, j]), bool(seen[p, j]))
            for t in task.labels[p]
            for j in range(task.size)
            if t in sources[j]
        )
        out.append(PositionGradients(p, task.labels[p], grads))
    return tuple(out)


def isolation_gradients(task, report: DependencyReport) -> tuple[CrossGradient, ...]:
    """Dependencies (above the noise threshold) between positions of different isolate groups."""
    largest = _largest(report.norms)
    seen = report.observed
    group_of = {p: g for g, members in enumerate(task.isolate) for p in members}
    return tuple(
        CrossGradient(p, j, float(largest[p, j]), bool(report.theory[p, j]))
        for p, gp in group_of.items()
        for j, gj in group_of.items()
        if gp != gj and seen[p, j]
    )


def task_inputs(task, vocab: int = DEFAULT_VOCAB, device: str = "cpu"):
    """``inputs(seed, config) -> (1, N, C)``: a random sample of ``vocab`` tokens embedded with seeded weights."""
    table = input_table(task)

    def inputs(seed: int, config: StackConfig) -> torch.Tensor:
        embed = seeded(config.seed + 104_729, lambda: TaskEmbedding(table, vocab, config.width))
        generator = torch.Generator().manual_seed(config.seed + 15_485_863)
        sample = torch.randint(vocab, (1, task.tokens), generator=generator)  # (1, n)
        with torch.no_grad():
            e = embed(sample)  # (1, N, C)
        return e.to(device=device, dtype=dtype_for(device))

    return inputs

"""The training demonstration of leakage: a clean design cannot beat ``ln V``, its leaky twin can.

Definition. Draw every sample ``x_0 … x_{n-1}`` i.i.d. uniform over a vocabulary of
``V`` tokens, fresh at every step. A supervised position ``p`` with target ``t`` is
trained with cross-entropy on ``x_t``. If ``p`` cannot depend on any input holding
``t`` (a leak-free design), its prediction is independent of ``x_t`` and the expected
loss is at least the entropy ``ln V``, whatever the model learns. A design that
leaks lets the model copy ``x_t``: the loss falls towards 0.

The model is the stack of :mod:`gpu_check.model` between the task embedding of
:mod:`gpu_check.embedding` and a LayerNorm + linear head over ``V`` tokens, trained
with Adam in float32 (this demonstrates learning, not exact zeros).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch
from torch import nn

from hasse.gpu_check.backends import make_attention
from hasse.gpu_check.config import StackConfig
from hasse.gpu_check.embedding import TaskEmbedding, input_table
from hasse.gpu_check.model import Stack, seeded
from hasse.theory.catalog import parse_spec
from hasse.theory.errors import InputError

# clean design -> a bad twin of design.md §4 that leaks, with the same parameters
# (other pairs: --twin, e.g. mlm:n=8,masked=1+4 beside bad_mlm_unmasked:n=8)
BAD_TWIN = {
    "butterfly": "bad_butterfly_self",
    "block_two_stream": "bad_block_own_content",
}


@dataclass(frozen=True)
class DemoConfig:
    """Size of the demonstration."""

    steps: int = 300  # optimiser steps per design
    vocab: int = 16  # V; the clean loss cannot fall below ln V
    batch: int = 64  # samples per step, drawn fresh
    lr: float = 3e-3  # Adam learning rate
    width: int = 32  # C
    heads: int = 2  # H
    layers: int = 2  # L; bad_butterfly_crossed leaks only from depth 2
    seed: int = 0  # weights and samples


@dataclass(frozen=True)
class Curve:
    """One design's training loss, one value per step."""

    task: str
    losses: tuple[float, ...]

    @property
    def final(self) -> float:
        """Mean loss of the last 10 % of the steps (at least one)."""
        tail = self.losses[-max(1, len(self.losses) // 10):]
        return sum(tail) / len(tail)


@dataclass(frozen=True)
class TrainDemo:
    clean: Curve
    leaky: Curve
    ln_vocab: float  # ln V
    seconds: float
    config: DemoConfig

    @property
    def shows_leak(self) -> bool:
        """The clean loss stays at ln V (within 0.1) and the leaky one ends at least 1 nat below it."""
        return self.clean.final >= self.ln_vocab - 0.1 and self.leaky.final <= self.ln_vocab - 1.0


def _twin(spec: str, pairs: dict[str, str], what: str) -> str:
    """``spec`` with its name replaced by ``pairs[name]``, keeping the parameters the twin accepts."""
    from hasse.theory.catalog import get_entry

    name, params = parse_spec(spec)
    if name not in pairs:
        raise InputError(f"no {what} is known for {name!r} (known: {', '.join(pairs)}); name one with --twin SPEC")
    accepted = {p.name for p in get_entry(pairs[name], "task").params}
    kept = ",".join(f"{k}={v}" for k, v in params.items() if k in accepted)
    return f"{pairs[name]}:{kept}" if kept else pairs[name]


def bad_twin(spec: str) -> str:
    """The leaky twin of a clean built-in design, with the same parameters.

    >>> bad_twin("butterfly:n=8")
    'bad_butterfly_self:n=8'
    >>> bad_twin("block_two_stream:n=8,block=2,variant=chain")
    'bad_block_own_content:n=8,block=2'
    """
    return _twin(spec, BAD_TWIN, "bad twin")


def clean_twin(spec: str) -> str:
    """The clean design of a bad twin in :data:`BAD_TWIN`, with the same parameters.

    >>> clean_twin("bad_block_own_content:n=8,block=2")
    'block_two_stream:n=8,block=2'
    """
    return _twin(spec, {bad: good for good, bad in BAD_TWIN.items()}, "clean twin")


class TaskModel(nn.Module):
    """Embedding -> stack -> LayerNorm -> logits over V tokens, for one task."""

    def __init__(self, task, config: DemoConfig):
        super().__init__()
        stack_config = StackConfig(layers=config.layers, width=config.width, heads=config.heads, seed=config.seed)
        self.embed = TaskEmbedding(input_table(task), config.vocab, config.width)
        self.stack = Stack(stack_config)
        self.norm = nn.LayerNorm(config.width)
        self.head = nn.Linear(config.width, config.vocab)

    def forward(self, sample: torch.Tensor, attention) -> torch.Tensor:  # (B, n) -> (B, N, V)
        return self.head(self.norm(self.stack(self.embed(sample), attention)))


def train_curve(task, config: DemoConfig = DemoConfig(), backend: str = "sdpa", device: str = "cpu") -> Curve:
    """Train a fresh :class:`TaskModel` on i.i.d. samples; the loss of every step."""
    pairs = [(p, t) for p in task.supervised for t in task.labels[p]]
    if not pairs:
        raise InputError("the task has no supervised position to train", task.name or None)
    positions = torch.tensor([p for p, _ in pairs], device=device)
    targets = torch.tensor([t for _, t in pairs], device=device)
    model = seeded(config.seed, lambda: TaskModel(task, config)).float().to(device)
    attention = make_attention(backend, task.mask, device)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    generator = torch.Generator().manual_seed(config.seed + 1)
    losses = []
    for _ in range(config.steps):
        sample = torch.randint(config.vocab, (config.batch, task.tokens), generator=generator).to(device)  # (B, n)
        logits = model(sample, attention)[:, positions]  # (B, P, V)
        loss = nn.functional.cross_entropy(logits.reshape(-1, config.vocab), sample[:, targets].reshape(-1))
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return Curve(task.name, tuple(losses))


def train_demo(clean_task, leaky_task, config: DemoConfig = DemoConfig(), backend: str = "sdpa",
               device: str = "cpu") -> TrainDemo:
    """Train the clean design and its leaky twin with the same seeds; both curves beside ``ln V``."""
    start = time.perf_counter()
    clean = train_curve(clean_task, config, backend, device)
    leaky = train_curve(leaky_task, config, backend, device)
    return TrainDemo(clean, leaky, math.log(config.vocab), time.perf_counter() - start, config)

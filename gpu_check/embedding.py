"""Embedding a task's inputs: symbol embedding + position embedding.

Definition. For a task (design.md §3) and a sample of token ids ``s_0 … s_{n-1}``
(vocabulary ``V``), position ``p`` with input ``(symbol, pos)`` is embedded as

    e_p = content(symbol) + kind(symbol) + position(pos)

where ``content(x<i>) = E[s_i]``, ``content(agg(x<i>,x<j>,…))`` is the mean of
``E[s_i], E[s_j], …`` and ``content([MASK]) = content([BOS]) = 0``; ``kind`` tells the
four symbol kinds apart (token, aggregate, [MASK], [BOS]). So ``e_p`` carries the
content of exactly the tokens ``task.sources(p)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

KINDS = ("token", "agg", "[MASK]", "[BOS]")


@dataclass(frozen=True)
class InputTable:
    """A task's inputs as index tensors: which tokens each position averages, its kind and position id."""

    mix: torch.Tensor  # (N, n) float: mix[p, i] = 1/|sources(p)| for i in sources(p), else 0
    kinds: torch.Tensor  # (N,) long: index into KINDS
    positions: torch.Tensor  # (N,) long: the position id fed to the model

    @property
    def max_position(self) -> int:
        return int(self.positions.max()) + 1 if len(self.positions) else 1


def input_table(task) -> InputTable:
    """The :class:`InputTable` of a task.

    >>> from hasse.theory.catalog import build_task
    >>> t = input_table(build_task("butterfly:n=3"))
    >>> t.mix[-2].tolist(), t.kinds.tolist()[-3:], t.positions.tolist()
    ([0.5, 0.0, 0.5], [1, 1, 1], [0, 1, 1, 2, 0, 1, 2])
    """
    n_pos = task.size
    mix = np.zeros((n_pos, task.tokens))
    kinds = []
    for p, (symbol, _) in enumerate(task.inputs):
        sources = sorted(task.sources(p))
        if sources:
            mix[p, sources] = 1.0 / len(sources)
        kinds.append(KINDS.index(symbol) if symbol in KINDS else (1 if symbol.startswith("agg") else 0))
    return InputTable(torch.tensor(mix, dtype=torch.float64), torch.tensor(kinds, dtype=torch.long),
                      torch.tensor([pos for _, pos in task.inputs], dtype=torch.long))


class TaskEmbedding(nn.Module):
    """``forward(sample)``: (B, n) token ids -> (B, N, C) embedded task inputs."""

    def __init__(self, table: InputTable, vocab: int, width: int):
        super().__init__()
        self.token = nn.Embedding(vocab, width)
        self.kind = nn.Embedding(len(KINDS), width)
        self.position = nn.Embedding(table.max_position, width)
        self.register_buffer("mix", table.mix)
        self.register_buffer("kinds", table.kinds)
        self.register_buffer("positions", table.positions)

    def forward(self, sample: torch.Tensor) -> torch.Tensor:
        tokens = self.token(sample)  # (B, n, C)
        content = self.mix.to(tokens.dtype) @ tokens  # (N, n) @ (B, n, C) -> (B, N, C)
        return content + self.kind(self.kinds) + self.position(self.positions)  # (B, N, C)

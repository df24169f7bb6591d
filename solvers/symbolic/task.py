"""A symbolic task: which token each position holds and predicts, as formulas of the position.

The contract between the task families (:mod:`solvers.symbolic.tasks`, built by formulas)
and the claims (:mod:`solvers.symbolic.claims`). For a sample of ``n`` tokens (``mask.n``):

- ``holds(p, t)`` — the content of position ``p`` includes token ``t`` (``x_t``, or an
  aggregate over ``t``); design.md §3's ``t ∈ sources(p)``;
- ``predicts(p, t)`` — ``p`` is supervised with target ``t``;
- ``group(p)`` — the isolation group of ``p`` (packed documents), or None when the task
  declares no isolation; positions with a negative group belong to none.

Each is a function of Z3 terms returning a Z3 term, over the same symbols (``n`` and the
parameters) as ``mask``. ``concrete(n, **params)`` builds the same task with the concrete
engine (:mod:`theory.task`), for the re-check of every counterexample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import z3

from hasse.solvers.symbolic.mask import SymbolicMask


@dataclass
class SymbolicTask:
    name: str
    mask: SymbolicMask
    holds: Callable[[z3.ArithRef, z3.ArithRef], z3.BoolRef]
    predicts: Callable[[z3.ArithRef, z3.ArithRef], z3.BoolRef]
    group: Callable[[z3.ArithRef], z3.ArithRef] | None = None
    concrete: Callable[..., object] | None = None  # (n, **params) -> theory.task.Task
    conditions: list = field(default_factory=list)  # side conditions beyond the mask's
    statement: str = ""  # the side conditions in words (default: the mask's)

    @property
    def n(self) -> z3.ArithRef:
        return self.mask.n

    def all_conditions(self) -> list:
        return list(self.mask.conditions) + list(self.conditions)

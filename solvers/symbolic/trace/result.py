"""What tracing gives: a :class:`Traced` formula with what the statement carries, or a one-line error."""

from __future__ import annotations

from dataclasses import dataclass, field

import z3


class TraceError(Exception):
    """A mask program the tracer cannot turn into a formula (one line: the operation and where); exit 2."""


class TraceUnknown(TraceError):
    """A bound of the tracer was reached (``TraceLimit``: a loop over a symbolic value, too many
    paths) or the time limit was spent while tracing: the verdict is unknown (exit 3), the line named."""


class TraceTimeout(TraceUnknown, TimeoutError):
    """The time limit (:mod:`theory.deadline`) was spent while tracing: unknown (exit 3). It is also a
    ``TimeoutError``, so whoever runs the tracer inside a larger time-limited job (a theorem of
    ``hasse prove``, which turns a spent limit into ``unknown``) sees the limit, never a finding."""


@dataclass
class Traced:
    """A traced program: its result as a formula, and what the statement must carry along."""

    formula: z3.BoolRef  # the mask: M[q, k] as a formula of the symbolic arguments
    conditions: list = field(default_factory=list)  # side conditions the program's checks demand (n >= 1, l | n)
    obligations: list = field(default_factory=list)  # (formula, why): must hold wherever the mask is read
    indexes: list = field(default_factory=list)  # SymIndex objects looked up (their axioms go with every query)
    paths: int = 1
    constants: set = field(default_factory=set)  # every concrete Python int that met a symbolic value (Tracer.constants)
    tensors: dict = field(default_factory=dict)  # closure/global tensors looked up: name -> "as given" or the property assumed
    values: list = field(default_factory=list)  # trace(value=…): (path condition, term) of each path

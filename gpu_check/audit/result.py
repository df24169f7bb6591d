"""The result of an audit: per backend the measured flow and findings, the backends' differences, the verdict.

:class:`Audit` holds the model, its layer pattern, the row, and one :class:`BackendAudit`
per attention implementation (or ``model``, the user's module as it is): the predicted
``R(l)``, the measured norms per seed and layer, the findings grouped by documents, first
layer and operator (:class:`~gpu_check.audit.findings.Group`) and each operator's own
flow (:class:`~gpu_check.audit.findings.OperatorFlow`). :func:`compare_backends` says
where two backends differ, per layer; :func:`verdict_of` gives the verdict and exit status.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hasse.gpu_check.audit.findings import Group, OperatorFlow, first_layers
from hasse.gpu_check.audit.scenarios import Scenario
from hasse.gpu_check.dependency import dependent

Pair = tuple[int, int]  # (q, k): output q, input k


@dataclass(frozen=True)
class BackendAudit:
    """One attention implementation (or the user's own module: ``model``) on one row."""

    backend: str
    dtype: str
    method: str  # vjp or perturbation
    predicted: np.ndarray  # (L, n, n) bool: R(l) for l = 1..L
    norms: np.ndarray  # (S, L, n, n): measured per seed and layer (padding rows 0)
    unexpected: tuple[Pair, ...]  # measured where R(l) forbids it, at some layer l
    missing: tuple[Pair, ...]  # R(l) predicts it, no seed measures it, at some layer l
    cancelled: int
    groups: tuple[Group, ...]
    seconds: float
    thresholds: np.ndarray | None = None  # (S, L, n): a norm counts above this (None: vjp, above 0)
    relative_noise: float = 0.0  # ρ of the noise rule (perturbation)
    operators: tuple[OperatorFlow, ...] = ()  # per operator: its own pattern, isolation, what it introduced

    @property
    def measured(self) -> np.ndarray:
        """(L, n, n) bool: a dependency (nonzero or above the noise, or NaN) in some seed."""
        return dependent(self.norms, self.thresholds).any(axis=0)

    @property
    def detection_limit(self) -> float:
        """The largest noise threshold (0: any nonzero counts)."""
        return 0.0 if self.thresholds is None else float(self.thresholds.max(initial=0.0))

    @property
    def clean(self) -> bool:
        return not self.unexpected and not self.missing


@dataclass(frozen=True)
class Audit:
    """An audit: the model, the row, and one result per backend."""

    model: str
    config_class: str
    layers: int
    pattern: tuple  # (kind, size) per layer
    encoder: bool
    scenario: Scenario
    seeds: int
    use_cache: bool | None
    versions: dict
    backends: tuple[BackendAudit, ...]
    skipped: tuple[tuple[str, str], ...] = field(default=())  # (backend, why) not available here
    operators: tuple = ()  # gpu_check.audit.operators.Operator, in module order
    notes: tuple[str, ...] = ()  # what the kit changed so the input shows the pattern (a window shrunk)
    vacuous: tuple[str, ...] = ()  # parts of the pattern the input is too short to show (verdict: inconclusive)
    fixed_weights: bool = False  # the user's own weights (seeds vary the inputs only)
    intended: str | None = None  # the stack the user gave as the intended flow (None: the pattern's)

    @property
    def unexpected(self) -> bool:
        return any(b.unexpected for b in self.backends)


def verdict_of(result: Audit, differences=None) -> tuple[str, int]:
    """``(verdict line, exit status)``: FAIL (1) on an unexpected pair or backends that differ, else
    INCONCLUSIVE (3) when part of the pattern is one the input cannot show, else PASS (0)."""
    if result.unexpected:
        return "FAIL: unexpected dependencies", 1
    if any(not d.same for d in differences or ()):
        return "FAIL: the backends differ", 1
    if result.vacuous:
        return "INCONCLUSIVE: " + "; ".join(result.vacuous) + (
            " (give a smaller --window / --chunk, --set FIELD=VALUE, or longer documents)"), 3
    return "PASS", 0


@dataclass(frozen=True)
class Difference:
    """Where two backends' measured dependencies differ (rows of real tokens, any seed, any layer)."""

    first: str
    second: str
    only_first: tuple[Pair, ...]  # measured in ``first`` at some layer, not in ``second`` there
    only_second: tuple[Pair, ...]
    layers: dict  # pair -> first layer count at which the two differ

    @property
    def same(self) -> bool:
        return not self.only_first and not self.only_second


def compare_backends(result: Audit) -> tuple[Difference, ...]:
    """Every pair of backends of ``result`` (same configuration, weights, inputs): where they differ, per layer."""
    out = []
    real = result.scenario.real
    for i, a in enumerate(result.backends):
        for b in result.backends[i + 1:]:
            ma, mb = a.measured.copy(), b.measured.copy()
            ma[:, ~real] = False
            mb[:, ~real] = False
            first = first_layers(ma != mb)
            only_a = tuple(map(tuple, np.argwhere((ma & ~mb).any(axis=0)).tolist()))
            only_b = tuple(map(tuple, np.argwhere((mb & ~ma).any(axis=0)).tolist()))
            layers = {p: int(first[p]) for p in only_a + only_b}
            out.append(Difference(a.backend, b.backend, only_a, only_b, layers))
    return tuple(out)

"""What one all-n claim comes to (:class:`SymbolicVerdict`), and the claims' defaults."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass

from hasse.theory.verdicts import EXIT_CODES, NOT_RECHECKED, PROVED, disagrees

DEFAULT_TIMEOUT = 30.0  # seconds per solver call
RECHECK_UPTO = 12  # a proved claim is re-checked on the programs at the re-check's instances with n <= this


@dataclass
class SymbolicVerdict:
    """What one all-n claim came to."""

    claim: str  # the claim's name: "dense", "leak-free", "isolation", "equivalent"
    verdict: str  # proved | refuted | unknown
    statement: str  # exactly what was proved (or refuted): "for all 1 <= n <= 2^31 and all 1 <= w <= 2^31: M or I is transitive"
    seconds: float = 0.0
    counterexample: dict | None = None  # refuted: n, params, positions, path, …
    recheck: str | None = None  # "confirmed", "confirmed at n = 1…6", or "DISAGREES: …"
    reason: str = ""  # unknown: why; refuted: what the counterexample shows; proved: how

    @property
    def exit_code(self) -> int:
        """0 proved, 1 refuted, 3 unknown; 1 whenever the concrete re-check disagrees (a bug of the kit);
        3 for a proof whose re-check could not run its program ("not re-checked": not confirmed)."""
        if self.disagrees:
            return 1
        if self.verdict == PROVED and getattr(self.recheck, "outcome", None) == NOT_RECHECKED:
            return 3
        return EXIT_CODES[self.verdict]

    @property
    def disagrees(self) -> bool:
        """Whether the concrete re-check contradicts the verdict (:class:`theory.verdicts.Recheck`'s outcome)."""
        return disagrees(self.recheck)

    def to_json(self) -> dict:
        return asdict(self)


def _how(v: SymbolicVerdict, how: str) -> SymbolicVerdict:
    return dataclasses.replace(v, reason=f"{v.reason} ({how})")


def _label(walk: SymbolicVerdict, why: str) -> SymbolicVerdict:
    cx = dict(walk.counterexample or {})
    cx["smallest"] = False
    return dataclasses.replace(walk, counterexample=cx, reason=f"{walk.reason} (an n; smaller may exist: {why})")

"""The one verdict vocabulary: what a theorem's check or an all-n claim comes to, and the words printed for it.

- :data:`PROVED`, :data:`REFUTED`, :data:`UNKNOWN` — the verdicts (the strings the JSON carries);
- :data:`DISAGREES` — a concrete re-check that contradicts the verdict (a bug of the kit);
- :data:`WORDS` — how the command line prints each one (``PROVED``, ``REFUTED``, …);
- :data:`EXIT_CODES` — the exit status of each verdict (``hasse prove``, ``hasse prove-mask``);
- :class:`Recheck` — a re-check's text with its outcome as a field (:data:`CONFIRMED`,
  :data:`DISAGREES` or :data:`NOT_RECHECKED`): the text is what is printed and stored, the
  outcome is what is read, never the text's first word.

>>> r = disagreement("the concrete engine finds a leak at n = 3")
>>> r, r.outcome, r.disagrees
('DISAGREES: the concrete engine finds a leak at n = 3', 'disagrees', True)
>>> Recheck("confirmed").disagrees, not_rechecked("no program").outcome, WORDS[UNKNOWN], EXIT_CODES[REFUTED]
(False, 'not re-checked', 'UNKNOWN', 1)
"""

from __future__ import annotations

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
DISAGREES = "disagrees"
VERDICTS = (PROVED, REFUTED, UNKNOWN)
WORDS = {PROVED: "PROVED", REFUTED: "REFUTED", UNKNOWN: "UNKNOWN", DISAGREES: "DISAGREES"}
EXIT_CODES = {PROVED: 0, REFUTED: 1, UNKNOWN: 3}

CONFIRMED = "confirmed"
NOT_RECHECKED = "not re-checked"


class Recheck(str):
    """The text of a concrete re-check, carrying its ``outcome`` (:data:`CONFIRMED` unless said otherwise)."""

    outcome: str

    def __new__(cls, text: str, outcome: str = CONFIRMED) -> "Recheck":
        self = super().__new__(cls, text)
        self.outcome = outcome
        return self

    def __reduce__(self):
        return (Recheck, (str(self), self.outcome))

    @property
    def disagrees(self) -> bool:
        return self.outcome == DISAGREES


def disagreement(text: str) -> Recheck:
    """``DISAGREES: text``, a re-check that contradicts the verdict."""
    return Recheck(f"{WORDS[DISAGREES]}: {text}", DISAGREES)


def not_rechecked(text: str) -> Recheck:
    """``not re-checked: text``, a re-check that could not run (a proof it leaves unconfirmed)."""
    return Recheck(f"{NOT_RECHECKED}: {text}", NOT_RECHECKED)


def disagrees(recheck) -> bool:
    """Whether ``recheck`` (a :class:`Recheck`, or None) contradicts its verdict."""
    return getattr(recheck, "outcome", None) == DISAGREES

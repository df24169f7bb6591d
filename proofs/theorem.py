"""Theorems, their checks and verdicts: the types every proof script shares, and the runner.

A theorem (design.md §5) has one name and up to two independent checks for a
size ``n``: ``exhaustive_check`` (every object of size n, vectorised) and ``z3_check``
(a ground, quantifier-free encoding proved by negation). Each check returns an
:class:`Outcome`; :func:`run_theorem` times it and wraps it in a :class:`Result`
with the versions a certificate needs (:mod:`proofs.certificate` writes them);
:func:`disagreement` says when two methods contradict each other. Verdicts:

- ``proved``: holds for every object of size n, by that method (an existence
  statement carries its ``witness``);
- ``refuted``: a ``counterexample`` (decoded into masks / tasks and a witness);
- ``unknown``: timeout, solver ``unknown`` or a resource limit, with a ``reason``.
  Never reported as proved.

Complete or not proved: a theorem states the size of the class it quantifies over
at ``n`` (``Theorem.space``, computed independently of the enumeration:
:mod:`solvers.class_sizes`). An exhaustive verdict that needs the whole class
(``proved``; ``refuted`` for an existence statement: no object has the property)
stands only when ``checked`` equals that size; otherwise it is ``unknown``
("scan incomplete: checked 1,048,561 of 1,048,576").

>>> always = Theorem("true_statement", "nothing can fail", lambda n, ctx: Outcome(PROVED, 1), None)
>>> r = run_theorem(always, 3, "exhaustive")
>>> r.verdict, r.checked, run_theorem(always, 3, "z3").reason
('proved', 1, 'no z3 check for this theorem')
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from hasse.theory.deadline import deadline
from hasse.theory.errors import InputError, clip
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN
from hasse.theory.version import versions

METHODS = ("exhaustive", "z3")
# Size guard: the largest n a check may start at unless its Theorem says otherwise
# (exhaustive: 2^(n(n-1)) masks is 2^42 at n = 7 and 2^72 at n = 9).
DEFAULT_MAX_N = {"exhaustive": 7, "z3": 64}


@dataclass(frozen=True)
class Outcome:
    """What one check found."""

    verdict: str  # proved | refuted | unknown
    checked: int  # objects checked (masks, families, labelled DAGs, solver calls …)
    counterexample: Any = None  # refuted: JSON-able description (mask rows, path, …)
    witness: Any = None  # existence statements: the object that proves them
    reason: str | None = None  # unknown: why
    details: dict = field(default_factory=dict)  # method-specific extras (encoding, shards, …)
    space: int | None = None  # size of the class at n, computed independently of the enumeration


@dataclass
class Context:
    """Options every check receives."""

    timeout: float | None = None  # seconds for this check; None = no limit
    progress: Callable[[int, int], None] | None = None  # progress(done, total)
    workers: int = 1  # processes for exhaustive runs
    shard: tuple[int, int] | None = None  # (i, k): check only the i-th of k equal parts
    span: tuple[int, int] | None = None  # (a, b): check exactly the objects a … b-1 (re-checks of certificates)
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float | None:
        if self.timeout is None:
            return None
        return self.timeout - (time.monotonic() - self.started)

    def expired(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0


@dataclass(frozen=True)
class Theorem:
    """A theorem of design.md §5 and its checks."""

    name: str
    statement: str  # one line
    exhaustive_check: Callable[[int, Context], Outcome] | None  # every object of size n
    z3_check: Callable[[int, Context], Outcome] | None  # proof by negation with Z3
    existence: bool = False  # an existence statement (proved by a witness)
    min_n: int = 1
    space: Callable[[int], int] | None = None  # size of the class at n, independent of the enumeration
    indexed: bool = False  # the exhaustive check numbers its objects (shards, ranges, re-checks of sub-ranges)
    recheck: Callable[[str, int, Any], str | None] | None = None  # ("counterexample"|"witness", n, obj) -> why not
    max_n: dict = field(default_factory=dict)  # method -> largest n the size guard lets run (default DEFAULT_MAX_N)
    estimate: Callable[[int, str], str] | None = None  # (n, method) -> the work at n, in words (guard messages)
    # --orbits: why the statement is invariant under relabelling positions (M -> P M Pᵀ), None: not
    # claimed (not_invariant: why not); flag/explain: the exhaustive predicate and its description of a mask
    invariant: str | None = None
    not_invariant: str | None = None
    # why the exhaustive predicate reads a mask only through its limit R*(M) (then --orbits runs it over
    # every labelled preorder, proofs.orbits_check), None: not claimed
    limit_only: str | None = None
    flag: Callable | None = None
    explain: Callable | None = None
    diagonal: bool = False

    def check_for(self, method: str) -> Callable[[int, Context], Outcome] | None:
        """The check of ``method`` (``"exhaustive"`` or ``"z3"``), ``None`` if the theorem has none."""
        return {"exhaustive": self.exhaustive_check, "z3": self.z3_check}.get(method)

    def too_large(self, n: int, method: str) -> str | None:
        """Why the ``method`` check cannot run at ``n`` (beyond :attr:`max_n`), with an estimate; ``None`` if it can.

        >>> t = Theorem("t", "", None, None, max_n={"z3": 10}, estimate=lambda n, m: f"{n ** 3:,} terms")
        >>> t.too_large(10, "z3") is None, t.too_large(11, "z3")
        (True, 't: the z3 check is limited to n <= 10 (at n = 11: 1,331 terms)')
        """
        limit = self.max_n.get(method, DEFAULT_MAX_N[method])
        if n <= limit:
            return None
        work = f" (at n = {n}: {self.estimate(n, method)})" if self.estimate is not None else ""
        return f"{self.name}: the {method} check is limited to n <= {limit}{work}"


@dataclass(frozen=True)
class Result:
    """One check of one theorem at one ``n``: what a certificate records and ``--json`` prints."""

    theorem: str
    n: int
    method: str
    verdict: str
    checked: int
    seconds: float
    counterexample: Any = None
    witness: Any = None
    reason: str | None = None
    details: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    space: int | None = None  # size of the class at n (independent of the enumeration); None: not stated
    fingerprint: dict | None = None  # sha256 of the sources it ran (set when a certificate is written or combined)

    def to_json(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if v is not None and v != {}}
        out.setdefault("checked", self.checked)
        return out


def run_theorem(theorem: Theorem, n: int, method: str, ctx: Context | None = None) -> Result:
    """Run one check of ``theorem`` at size ``n``; never raises for a failing or slow check."""
    ctx = ctx or Context()
    check = theorem.check_for(method)
    start = time.monotonic()
    ctx.started = start
    if check is None:
        outcome = Outcome(UNKNOWN, 0, reason=f"no {method} check for this theorem")
    elif n < theorem.min_n:
        outcome = Outcome(UNKNOWN, 0, reason=f"the statement needs n >= {theorem.min_n}")
    else:
        try:
            with deadline(ctx.timeout):  # honoured inside encoders and generators too (theory.deadline.tick)
                outcome = check(n, ctx)
        except MemoryError:
            outcome = Outcome(UNKNOWN, 0, reason="out of memory")
        except TimeoutError as exc:
            outcome = Outcome(UNKNOWN, 0, reason=f"timeout ({exc})" if str(exc) else "timeout")
        except InputError:
            raise  # bad input (n too large, ...): exit 2, as for every command
        except Exception as exc:  # a bug in one check must not abort `prove all`: unknown, loudly
            outcome = Outcome(UNKNOWN, 0, reason=f"crashed: {crash_site(exc)} (a bug in this check; please report)")
    if outcome.verdict not in (PROVED, REFUTED, UNKNOWN):
        raise ValueError(f"{theorem.name}: bad verdict {outcome.verdict!r}")
    if outcome.verdict == PROVED and theorem.existence and outcome.witness is None:
        outcome = Outcome(UNKNOWN, outcome.checked, reason="existence statement reported without a witness")
    space = outcome.space
    if theorem.space is not None and method == "exhaustive" and needs_whole_class(theorem, outcome.verdict):
        space = theorem.space(n)  # only here: a huge n never gets this far
    incomplete = incompleteness(theorem, method, outcome, space)
    if incomplete is not None:
        outcome = Outcome(UNKNOWN, outcome.checked, reason=incomplete, details=outcome.details)
    return Result(theorem.name, n, method, outcome.verdict, outcome.checked, round(time.monotonic() - start, 4),
                  outcome.counterexample, outcome.witness, outcome.reason, outcome.details, versions(), space=space)


def crash_site(exc: BaseException) -> str:
    """``Type: message at file:line`` of the innermost frame of ``exc``'s traceback.

    >>> try:
    ...     {}["x"]
    ... except KeyError as e:
    ...     crash_site(e).split(" at ")[0]
    "KeyError: 'x'"
    """
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    return clip(text.splitlines()[0], 200) + where


def needs_whole_class(theorem: Theorem, verdict: str) -> bool:
    """Whether ``verdict`` speaks for every object of the class (proved, or no witness of an existence statement)."""
    return verdict == (REFUTED if theorem.existence else PROVED)


def incompleteness(theorem: Theorem, method: str, outcome: Outcome, space: int | None) -> str | None:
    """Why an exhaustive ``outcome`` cannot stand for the whole class of size ``space`` (None: it can).

    >>> t = Theorem("t", "", None, None, space=lambda n: 4)
    >>> incompleteness(t, "exhaustive", Outcome(PROVED, 3), 4)
    'scan incomplete: checked 3 of 4'
    >>> incompleteness(t, "exhaustive", Outcome(PROVED, 4), 4) is None
    True
    """
    if method != "exhaustive" or space is None or not needs_whole_class(theorem, outcome.verdict):
        return None
    if outcome.checked != space:
        return f"scan incomplete: checked {outcome.checked:,} of {space:,}"
    return None


def disagreement(results: list[Result]) -> str | None:
    """A loud message when two methods give opposite definite verdicts on the same theorem and n."""
    definite = {r.method: r.verdict for r in results if r.verdict != UNKNOWN}
    if len(set(definite.values())) > 1:
        listing = ", ".join(f"{m}: {v}" for m, v in definite.items())
        return f"METHODS DISAGREE on {results[0].theorem} at n = {results[0].n} ({listing})"
    return None

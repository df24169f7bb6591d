"""The plumbing of the engine theorems: the code the command line runs, checked mask by mask against the definitions.

An *engine theorem* (:data:`proofs.registry.ENGINE_THEOREMS`) says that a per-mask
function of the engine (:mod:`theory.order`, :mod:`theory.reach`, :mod:`theory.sparse`,
:mod:`theory.leak`, the catalogue) returns, for every object of size ``n``, what the
definitions of design.md §2–§4 give, computed independently (the batched algebra of
:mod:`theory.batch`, or brute force in the proof module). The engine is Python code, so
there is no Z3 check: these theorems are exhaustive only, and ``hasse prove … --method
both`` runs them with the exhaustive method alone, saying so (design.md §5).

- :func:`engine_theorem`: the :class:`~proofs.theorem.Theorem` of a mask-level engine
  check — every mask of size ``n`` for ``n <= full_upto`` (:func:`proofs.mask_checks.exhaustive_outcome`:
  shards, workers, timeouts as for every mask theorem), a seeded uniform sample beyond;
- :func:`sampled_outcome`: the sample. It is never called a full proof: the verdict
  line's reason and the details (``sample``, ``seed``, ``class_size``, ``scope``) say
  how many masks of how many were checked;
- :func:`check_each` (one object at a time against its definition) and :func:`first_finding`
  (checks run in turn), the verdicts of the theorems that are not over masks;
- :func:`safely`: run one engine call, turning an exception into a finding.

>>> safely(lambda: int("x"))
(None, "ValueError: invalid literal for int() with base 10: 'x'")
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from hasse.proofs.mask_checks import exhaustive_outcome, rows01
from hasse.proofs.theorem import PROVED, REFUTED, UNKNOWN, Context, Outcome, Theorem
from hasse.solvers import exhaustive as ex
from hasse.theory import batch

NO_Z3 = "exhaustive only: the engine is Python code, no Z3 encoding can call it (design.md §5)"
# an engine theorem refuses --orbits (design.md §5)
NOT_INVARIANT = ("the engine is code that could treat positions differently, so its answer on one mask of a class "
                 "says nothing about the others")
FULL_UPTO = 4  # every mask up to this size; a seeded sample beyond
SAMPLE = 4096  # masks in the sample beyond FULL_UPTO
SEED = 0


def safely(call: Callable[[], Any]) -> tuple[Any, str | None]:
    """``(value, None)``, or ``(None, "Type: message")`` when the engine raised.

    A spent time limit (``TimeoutError``, :func:`theory.deadline.tick`) or memory is not a
    finding about the engine: it propagates, and :func:`proofs.theorem.run_theorem` makes the
    verdict ``unknown``.
    """
    try:
        return call(), None
    except (TimeoutError, MemoryError):
        raise
    except Exception as exc:  # a crash of the engine is a finding, not a crash of the proof
        return None, f"{type(exc).__name__}: {exc}"


def random_masks(n: int, count: int, seed: int, *, diagonal: bool = False) -> np.ndarray:
    """``(count, n, n)`` bool: masks drawn uniformly (each entry a fair coin; zero diagonal unless ``diagonal``)."""
    rng = np.random.default_rng([seed, n])
    masks = rng.random((count, n, n)) < 0.5
    if not diagonal:
        masks[:, np.arange(n), np.arange(n)] = False
    return masks


def sampled_outcome(n: int, ctx: Context, flag: Callable[[np.ndarray], np.ndarray],
                    explain: Callable[[np.ndarray], dict], *, count: int = SAMPLE, seed: int = SEED,
                    chunk: int = 512) -> Outcome:
    """Check ``count`` uniformly drawn masks of size ``n`` (seeded): refuted by the first flagged one.

    A clean sample is ``proved`` *for the sample only*: ``reason`` and ``details``
    say ``sample k of N masks (seed s)``, never a full proof.
    """
    total = ex.space_size(n)
    masks = random_masks(n, count, seed)
    details = {"sample": count, "seed": seed, "class_size": total, "scope": "sample",
               "space": "masks drawn uniformly (zero diagonal), with replacement"}
    checked = 0
    for a in range(0, count, chunk):
        if ctx.expired():
            return Outcome(UNKNOWN, checked, reason=f"timeout after {checked:,} of a sample of {count:,} masks",
                           details=details)
        part = masks[a:a + chunk]
        flags = np.asarray(flag(batch.pack(part)), dtype=bool)
        hits = np.flatnonzero(flags)
        if hits.size:
            mask = part[int(hits[0])]
            checked += int(hits[0]) + 1
            return Outcome(REFUTED, checked, counterexample={"mask": rows01(mask)} | explain(mask), details=details)
        checked += len(part)
        if ctx.progress:
            ctx.progress(checked, count)
    reason = f"sample: {count:,} of {total:,} masks (seed {seed}), not a full proof"
    return Outcome(PROVED, checked, reason=reason, details=details)


def engine_theorem(name: str, statement: str, flag: Callable[[np.ndarray], np.ndarray],
                   explain: Callable[[np.ndarray], dict], *, full_upto: int = FULL_UPTO,
                   sample: int = SAMPLE) -> Theorem:
    """An engine theorem over masks: every mask up to ``full_upto``, a seeded sample beyond; no Z3 check."""

    def exhaustive_check(n: int, ctx: Context) -> Outcome:
        start = time.monotonic()
        if n <= full_upto:
            outcome = exhaustive_outcome(n, ctx, flag, explain)
        else:
            outcome = sampled_outcome(n, ctx, flag, explain, count=sample)
        details = outcome.details | {"methods": NO_Z3, "engine_seconds": round(time.monotonic() - start, 4)}
        return Outcome(outcome.verdict, outcome.checked, outcome.counterexample, outcome.witness, outcome.reason,
                       details)

    return Theorem(name, statement, exhaustive_check, None, not_invariant=NOT_INVARIANT, flag=flag, explain=explain)


def check_each(listed, total: int, ctx: Context, difference: Callable[[Any], dict | None],
               describe: Callable[[Any], dict], details: dict, start: float, *, noun: str, sample: str | None = None,
               every: int = 256) -> Outcome:
    """Every object of ``listed`` (``total`` of them) through ``difference``: the first finding refutes.

    ``describe(obj)`` heads the counterexample; ``sample`` (the seed's words) marks a
    sampled class, whose clean run is ``proved`` for the sample only, never a full proof.
    ``ctx.progress`` hears every ``every`` objects.
    """
    checked = 0
    for obj in listed:
        if ctx.expired():
            return Outcome(UNKNOWN, checked, reason=f"timeout after {checked:,} of {total:,} {noun}", details=details)
        found = difference(obj)
        checked += 1
        if found:
            return Outcome(REFUTED, checked, counterexample=describe(obj) | found, details=details)
        if ctx.progress and checked % every == 0:
            ctx.progress(checked, total)
    details["engine_seconds"] = round(time.monotonic() - start, 4)
    reason = f"sample: {checked:,} {noun} ({sample}), not a full proof" if sample else None
    return Outcome(PROVED, checked, reason=reason, details=details)


def first_finding(steps, n: int, details: dict, start: float, ctx: Context | None = None) -> Outcome:
    """``steps``: callables returning ``(finding or None, how many they checked)``, run in turn.

    The first finding refutes (its counterexample ``{"n": n} | finding``); a finding
    ``{"timeout": True}``, or ``ctx`` expired before a step, is ``unknown`` (timeout).
    """
    checked = 0
    for step in steps:
        if ctx is not None and ctx.expired():
            return Outcome(UNKNOWN, checked, reason="timeout", details=details)
        found, count = step()
        checked += count
        if found and found.get("timeout"):
            return Outcome(UNKNOWN, checked, reason="timeout", details=details)
        if found:
            return Outcome(REFUTED, checked, counterexample={"n": n} | found, details=details)
    details["engine_seconds"] = round(time.monotonic() - start, 4)
    return Outcome(PROVED, checked, details=details)

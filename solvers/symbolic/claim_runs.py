"""A claim for every n, run from what the command line names (``hasse prove-mask``, ``hasse equiv``).

:func:`prove_claim` resolves MASK, the task and the invariant (:mod:`solvers.symbolic.resolve`), narrows the
parameters and decides one claim of :data:`solvers.symbolic.claims.CLAIMS`; :func:`prove_equivalent` does the
same for two masks (:func:`solvers.symbolic.claims.check_equivalence`). Each returns a :class:`ClaimRun`: the
verdict, the fields it adds to the command's JSON object, and the formulas a certificate keeps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hasse.solvers.symbolic.resolve import (call_claim, copy_mask, is_function, narrow, own_task, symbolic_mask,
                                            symbolic_task, symbols)
from hasse.theory.errors import InputError


@dataclass
class ClaimRun:
    """What :func:`prove_claim` came to: the verdict, the JSON fields it adds, the formulas a certificate keeps."""

    verdict: object  # a SymbolicVerdict
    fields: dict  # invariant, param_ranges, then the verdict's record (solvers.symbolic.records.verdict_record)
    formulas: dict = field(default_factory=dict)  # name -> SymbolicMask or SymbolicTask


def ranges_json(ranges) -> list[dict]:
    return [{"name": n, "lo": lo, "hi": hi} for n, lo, hi in ranges]


def prove_claim(claim: str, source: str, *, task: str | None = None, layers: int | None = None,
                invariant: str | None = None, search_layers: int = 0, heads: int | None = None,
                batch: int | None = None, assume: dict | None = None, ranges=(),
                timeout: float | None = None, target: str | None = None, witness: str | None = None) -> ClaimRun:
    """``claim`` (a key of :data:`~solvers.symbolic.claims.CLAIMS`) about MASK ``source``, for every n.

    The task is ``task`` read through MASK, else MASK's own (a catalogue design that is a task);
    at every depth (no ``layers``) the invariant is ``invariant`` (a mask_mod or a spec) or the
    one the kit knows (:func:`~solvers.symbolic.claims.known_invariant`); ``ranges`` narrow the
    parameters (``NAME=LO..HI``). ``realises``: ``target`` (a spec or ``FILE.py:fn``), ``layers`` and
    ``witness`` (``FILE.py:fn``), defaulting to the catalogue's own for a sparse formula of MASK.
    """
    from hasse.solvers.symbolic.claims import CLAIMS, known_invariant
    from hasse.solvers.symbolic.records import name_positions, verdict_record

    entry = CLAIMS[claim]
    subject = None
    known = None
    if claim == "realises":  # a catalogue sparse formula: its own target, depth and witness, its defaults given
        from hasse.solvers.symbolic.witness import known_design

        known = known_design(source)
        source = known["spec"] if known else source
    if entry.needs_task and not task:
        subject = own_task(source, claim)  # MASK is a task (butterfly, packed): its own mask and labels
        mask = subject.mask = copy_mask(subject.mask)
    else:
        mask = copy_mask(symbolic_mask(source, heads, batch=batch, assume=assume, timeout=timeout))
    parsed = narrow(mask, list(ranges))
    inv = None
    start = time.perf_counter()
    if entry.needs_task and subject is None:
        subject = symbolic_task(task, mask)
    if entry.walks and layers is None:
        inv = (symbolic_mask(invariant, heads, "--invariant", batch=batch, assume=assume, timeout=timeout)
               if invariant else call_claim(known_invariant, subject, timeout=timeout))
        if inv is None:
            raise InputError(f"{source}: no known invariant for every depth; give --layers L or "
                             f"--invariant FILE.py:fn")
    if claim == "realises":
        return _realises_run(entry, source, known, mask, parsed, target, layers, witness, heads, timeout, start)
    if claim == "isolation" and subject.group is None:
        raise InputError(f"{task or source}: the task declares no isolation groups")
    verdict = call_claim(entry.run, subject if entry.needs_task else mask, layers=layers, invariant=inv,
                         search_layers=search_layers, timeout=timeout)
    record = verdict_record(verdict, time.perf_counter() - start)
    name_positions(record["counterexample"], subject)
    formulas = {"mask": mask, **({"invariant": inv} if inv is not None else {}),
                **({"task": subject} if subject is not None else {})}
    return ClaimRun(verdict, {"invariant": invariant or (getattr(inv, "name", None) if inv is not None else None),
                              "param_ranges": ranges_json(parsed), **record}, formulas)


def _realises_run(entry, source, known, mask, parsed, target, layers, witness, heads, timeout, start) -> ClaimRun:
    """``--claim realises``: the target and the witness resolved (the catalogue's own by default), then the claim."""
    from hasse.solvers.symbolic.claims.solve import _conditions_of
    from hasse.solvers.symbolic.records import verdict_record
    from hasse.solvers.symbolic.witness import witness_for

    target = target or (known["target"] if known else None)
    layers = layers if layers is not None else (known["layers"] if known else None)
    if not target:
        raise InputError("--claim realises needs --target TARGET (a catalogue spec or FILE.py:fn: the preorder "
                         "MASK must realise)")
    if layers is None:
        raise InputError("--claim realises needs --layers L (the depth within which MASK realises the target)")
    goal = copy_mask(symbolic_mask(target, heads, "--target", timeout=timeout))
    traced = witness_for(source, witness, known, mask, _conditions_of(mask, goal), layers, timeout)
    verdict = call_claim(entry.run, mask, layers=layers, target=goal, witness=traced, timeout=timeout)
    record = verdict_record(verdict, time.perf_counter() - start)
    fields = {"invariant": None, "layers": layers, "target": target, "witness": witness or (traced.name if traced is not None else None),
              "param_ranges": ranges_json(parsed), **record}
    return ClaimRun(verdict, fields, {"mask": mask, "target": goal})


def prove_equivalent(source_a: str, source_b: str, *, heads: int | None = None, batch: int | None = None,
                     assume: dict | None = None, ranges=(), timeout: float | None = None) -> ClaimRun:
    """MASK_A and MASK_B allow the same pairs for every n; ``assume`` names tensors either mask_mod reads, and a
    range applies to each mask that has the parameter (one that neither has is refused)."""
    from hasse.solvers.symbolic.claims import check_equivalence
    from hasse.solvers.symbolic.records import verdict_record

    assume = assume or {}
    files = [s for s in (source_a, source_b) if is_function(s)]
    if (batch is not None or assume) and not files:
        raise InputError(f"--{'batch' if batch is not None else 'assume'} applies to a FILE.py:fn mask_mod; "
                         f"{source_a} and {source_b} are catalogue specs")

    def trace(source, what):  # --assume: a tensor one of the two reads (checked below, for both together)
        return copy_mask(symbolic_mask(source, heads, what, batch=batch, timeout=timeout,
                                       assume=assume if source in files else None, strict_assume=False))

    a, b = trace(source_a, "MASK_A"), trace(source_b, "MASK_B")
    read = set(getattr(a, "tensors", {})) | set(getattr(b, "tensors", {}))
    for name in assume:
        if name not in read:
            raise InputError(f"--assume {name}: neither mask reads a closure or global tensor named {name} nor "
                             f"has a factory parameter {name} (the "
                             f"tensors they read: {', '.join(sorted(read)) or 'none'})")
    parsed = []
    for mask in (a, b):
        usable = [r for r in ranges if _name(r) in symbols(mask)]
        parsed = narrow(mask, usable) or parsed
    names = symbols(a) | symbols(b)
    for r in ranges:
        if _name(r) not in names:
            raise InputError(f"--param-range {r}: not a symbolic parameter of either mask "
                             f"(symbolic: {', '.join(sorted(names))})")
    start = time.perf_counter()
    verdict = call_claim(check_equivalence, a, b, timeout=timeout)
    record = verdict_record(verdict, time.perf_counter() - start)
    return ClaimRun(verdict, {"param_ranges": ranges_json(parsed), **record}, {"mask_a": a, "mask_b": b})


def _name(text: str) -> str:
    return text.partition("=")[0].strip()

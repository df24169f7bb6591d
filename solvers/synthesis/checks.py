"""Mask synthesis, the checks of a design: its target read and checked, and the leak and prove-mask verdicts.

:func:`target_of` reads what ``hasse synthesize`` is given (its limit preorder, and the task whose
labels are checked). :func:`leak_verdict` (the concrete engine) and :func:`prove_verdict` (a formula's
claim for every ``n``, ``hasse prove-mask --claim realises``) judge a
:class:`~hasse.solvers.synthesis.design.Design`; a verdict never says "proved" on a timeout.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.synthesis import check_target

PROVE_TIMEOUT = 10.0  # seconds per solver call of the all-n claim when no timeout is given (it makes several)


@dataclass(frozen=True)
class Verdict:
    """One check of the designed mask: ``name`` (leak, prove-mask, gpu-check), ``status`` (pass, fail, unknown,
    not-run) and the one ``line`` the report prints."""

    name: str
    status: str
    line: str

    def to_json(self) -> dict:
        return {"name": self.name, "status": self.status, "line": self.line}


def target_of(source, reading=None):
    """``(T, task, label)``: ``source`` read as every command reads its input, T its limit preorder (a data file and
    an array: the target itself, its diagonal added, transitive), the task whose leaks are checked, its name."""
    from hasse.theory.inputs.forms import form_of
    from hasse.theory.inputs.read import Reading, read
    from hasse.theory.inputs.tasks import next_token_task
    from hasse.theory.order import mask_to_order

    if not isinstance(source, str):
        arr = np.asarray(source)
        return check_target(arr | np.eye(len(arr), dtype=bool) if arr.ndim == 2 else arr), None, "the array"
    subject = read(source, reading or Reading(), accept=("family", "task", "mask"))
    if subject.kind == "family":
        from hasse.theory.merge import family_to_merged_task

        task = family_to_merged_task(subject.family, name=f"merge({source})").task
    elif subject.kind == "task":
        task = subject.task
    else:
        task = next_token_task(subject.first_row())
        if form_of(source) == "file":
            return check_target(task.mask | np.eye(task.size, dtype=bool), source), task, subject.label
    return mask_to_order(np.asarray(task.mask, dtype=bool)).closure(), task, subject.label


def leak_verdict(design, task=None) -> Verdict:
    """The concrete engine on ``M or I``: its limit is ``T`` (nothing outside ``T`` at any depth, nothing of ``T``
    lost), and with ``task`` its labels do not leak when the task's mask is replaced by it (unless ``T`` itself
    leaks under that task: then the check does not apply)."""
    from hasse.theory.leak import find_leaks
    from hasse.theory.order import mask_to_order

    kernel = design.original_order(design.kernel_mask)
    target = design.original_order(design.target)
    closure = mask_to_order(kernel).closure()
    outside = np.argwhere(closure & ~target)
    lost = np.argwhere(target & ~closure)
    if outside.size or lost.size:
        q, k = (int(v) for v in (outside if outside.size else lost)[0])
        what = "reaches a pair outside T" if outside.size else "never reaches a pair of T"
        return Verdict("leak", "fail", f"FAIL: the designed mask {what}: ({q}, {k}) (a bug of the kit)")
    line = "no pair outside T at any depth, and the limit is T (concrete engine)"
    if task is None:
        return Verdict("leak", "pass", line)
    if task.size != design.n:
        return Verdict("leak", "pass", line + f"; task check not run: the task has {task.size} positions")
    name = task.name or "the task"
    own = find_leaks(replace(task, mask=target))
    if not own.leak_free:
        return Verdict("leak", "pass", line + f"; {name}: not applicable, the target itself leaks under it")
    report = find_leaks(replace(task, mask=kernel))
    if not report.leak_free:
        first = (report.leaks + report.isolation)[0]
        return Verdict("leak", "fail", f"FAIL: {name} with the designed mask leaks: position {first.position} "
                                       f"from {first.source}, path {list(first.path)} (a bug of the kit)")
    return Verdict("leak", "pass", line + f"; the task {name} (its labels), its mask replaced by the design: leak-free at every depth")


def every_n(spec: str) -> str:
    """``spec`` without its ``n=`` parameter (a claim for every n).

    >>> every_n("sparse_butterfly:n=1024,layers=2,tile=128"), every_n("causal:n=64"), every_n("block_two_stream:n=8,block=2")
    ('sparse_butterfly:layers=2,tile=128', 'causal', 'block_two_stream:block=2')
    """
    name, _, params = spec.partition(":")
    kept = [p for p in params.split(",") if p and p.split("=", 1)[0].strip() != "n"]
    return name + (":" + ",".join(kept) if kept else "")


def prove_verdict(design, timeout: float | None = None) -> Verdict:
    """A formula's claim "realises T within L layers" for every n (``hasse prove-mask --claim realises``);
    an array design is checked at this n only."""
    f = design.formula
    if f is None:
        return Verdict("prove-mask", "not-run", "not a formula: realises checked at this n by the concrete engine "
                                                "only")
    from hasse.solvers.symbolic.claim_runs import prove_claim

    seconds = timeout or PROVE_TIMEOUT
    at_n = ""
    try:  # for every n: the spec and the target's spec without their n
        run = prove_claim("realises", every_n(f.spec), target=every_n(f.target_spec), layers=f.layers,
                          timeout=seconds)
    except TimeoutError as exc:
        return Verdict("prove-mask", "unknown", f"unknown: {exc}")
    except InputError as exc:  # the prover cannot take this formula for every n: at this n then, said so
        at_n = f" (at this n only; for every n not decided: {str(exc)[:160]})"
        try:
            run = prove_claim("realises", f.spec, target=f.target_spec, layers=f.layers, timeout=seconds)
        except (InputError, TimeoutError) as again:
            return Verdict("prove-mask", "unknown", f"not decided: {again}")
    v = run.verdict
    statement = f"{f.spec} realises {f.target_spec} within {f.layers} layer(s)"
    if getattr(v, "disagrees", False):
        return Verdict("prove-mask", "fail", f"FAIL: the concrete re-check disagrees with the prover on {statement}: "
                                             f"{v.recheck} (a bug of the kit)")
    if v.verdict == "proved":
        return Verdict("prove-mask", "pass", f"proved: {v.statement or statement}{at_n}")
    if v.verdict == "refuted":
        return Verdict("prove-mask", "fail", f"REFUTED: {statement}: {v.reason} (a bug of the kit)")
    return Verdict("prove-mask", "unknown", f"unknown ({seconds:g} s per solver call; --timeout S gives more): "
                                            f"{v.reason or 'the prover did not decide'}")

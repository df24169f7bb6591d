"""The claims of ``hasse prove-mask``, by name: :data:`CLAIMS` (one :class:`Claim` per ``--claim``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hasse.solvers.symbolic.claims.consistency import prove_consistent
from hasse.solvers.symbolic.claims.dense import prove_dense
from hasse.solvers.symbolic.claims.depth import walk_search
from hasse.solvers.symbolic.claims.leaks import prove_isolation, prove_leak_free
from hasse.solvers.symbolic.claims.realises import prove_realises
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, SymbolicVerdict
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask


@dataclass(frozen=True)
class Claim:
    """One ``--claim`` of ``hasse prove-mask``.

    ``run(subject, *, layers=None, invariant=None, timeout=DEFAULT_TIMEOUT, search_layers=0)``
    decides it (``realises`` also takes ``target=`` and ``witness=``): ``subject`` is a :class:`SymbolicTask` when ``needs_task``, else a
    :class:`SymbolicMask`; ``walks``: the claim is about walks (``layers`` within L hops, or
    every depth through ``invariant``, then ``search_layers`` K > 0 looks for a real walk of
    at most K hops when the invariant fails: :func:`walk_search`).
    """

    name: str
    needs_task: bool
    run: Callable[..., SymbolicVerdict]
    walks: bool = False


def _run_dense(mask: SymbolicMask, *, layers=None, invariant=None, timeout: float | None = DEFAULT_TIMEOUT,
               search_layers: int = 0) -> SymbolicVerdict:
    return prove_dense(mask, timeout=timeout)


def _run_consistent(task: SymbolicTask, *, layers=None, invariant=None, timeout: float | None = DEFAULT_TIMEOUT,
                    search_layers: int = 0) -> SymbolicVerdict:
    return prove_consistent(task, timeout=timeout)


def _run_realises(mask: SymbolicMask, *, layers=None, invariant=None, timeout: float | None = DEFAULT_TIMEOUT,
                  search_layers: int = 0, target: SymbolicMask | None = None, witness=None) -> SymbolicVerdict:
    """``(M or I)^L = T`` for every n: ``target`` (a SymbolicMask over the same n) and ``layers`` are required."""
    if target is None or layers is None:
        raise TypeError("--claim realises needs a target and layers")
    return prove_realises(mask, target, layers, witness, timeout=timeout)


def _walk_claim(fn: Callable) -> Callable[..., SymbolicVerdict]:
    def run(task: SymbolicTask, *, layers: int | None = None, invariant=None,
            timeout: float | None = DEFAULT_TIMEOUT, search_layers: int = 0) -> SymbolicVerdict:
        verdict = fn(task, layers=layers, invariant=invariant, timeout=timeout)
        if layers is None and search_layers > 0:
            verdict = walk_search(fn, task, verdict, search_layers, timeout=timeout)
        return verdict
    return run


CLAIMS: dict[str, Claim] = {
    "dense": Claim("dense", False, _run_dense),
    "leak-free": Claim("leak-free", True, _walk_claim(prove_leak_free), walks=True),
    "isolation": Claim("isolation", True, _walk_claim(prove_isolation), walks=True),
    "consistent": Claim("consistent", True, _run_consistent),
    "realises": Claim("realises", False, _run_realises),
}

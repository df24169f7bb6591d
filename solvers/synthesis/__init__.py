"""Mask synthesis: the fewest attention pairs (or tiles) whose L-layer reach is a given target preorder.

The problem and its costs: :mod:`hasse.theory.synthesis`. Here: the brute-force reference
(:mod:`.problem`, ``brute_force_minimum``), the exact optimisers (:mod:`.cpsat`,
``minimum_cpsat``, CP-SAT; :mod:`.exact`, ``minimum``, Z3) behind :func:`optimise`, the
greedy heuristic with a proved lower bound (:mod:`.heuristic`) and the relabelling that
packs a mask into fewer tiles (:mod:`.relabel`).
"""

from __future__ import annotations

import numpy as np

from hasse.solvers.synthesis import cpsat
from hasse.solvers.synthesis.exact import minimum
from hasse.solvers.synthesis.heuristic import heuristic
from hasse.solvers.synthesis.problem import BruteForce, Synthesis, SynthesisBug, brute_force_minimum
from hasse.solvers.synthesis.relabel import Relabelled, relabel
from hasse.theory.errors import InputError
from hasse.theory.synthesis import BLOCK, check_target

# The size up to which the exact optimum is the default. Measured (CP-SAT, one worker, core-based): L = 2
# optima proved in <= 0.5 s at n = 12 and <= 4.3 s at n = 14 (causal, random preorders), causal n = 16
# not within 20 s; L = 3 up to n = 10 in <= 0.5 s, one random n = 8 preorder in ~6 s.
EXACT_MAX_N = 12
OPTIMISE_MAX_N = cpsat.MAX_N  # the largest n optimise() builds a model for (with a timeout beyond EXACT_MAX_N)


def optimise(target, layers: int, cost: str = "pairs", block: int = BLOCK, timeout: float | None = None,
             *, workers: int | None = None) -> Synthesis:
    """The exact optimum: CP-SAT when ortools imports, else Z3's :func:`minimum`; re-checked by ``realises``.

    Status ``"optimal"``, or ``"unknown"`` on a timeout (the best mask, a proved bound and
    the gap). ``engine`` says which solver ran. InputError beyond n = ``OPTIMISE_MAX_N``.

    >>> r = optimise(np.tril(np.ones((5, 5), dtype=bool)), 2, workers=1)
    >>> r.cost, r.status
    (6, 'optimal')
    """
    n = check_target(target).shape[0]
    if n > OPTIMISE_MAX_N:
        raise InputError(f"the exact optimiser reaches n <= {OPTIMISE_MAX_N}, got n = {n} "
                         f"(use the heuristic)")
    if cpsat.available():
        return cpsat.minimum_cpsat(target, layers, cost, block, timeout, workers=workers)
    return minimum(target, layers, cost, timeout, block=block)


__all__ = ["BruteForce", "EXACT_MAX_N", "OPTIMISE_MAX_N", "Relabelled", "Synthesis", "SynthesisBug",
           "brute_force_minimum", "heuristic", "minimum", "optimise", "relabel"]

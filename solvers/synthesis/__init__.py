"""Mask synthesis: the fewest attention pairs (or tiles) whose L-layer reach is a given target preorder.

The problem and its costs: :mod:`hasse.theory.synthesis`. Here: the brute-force reference
(:mod:`.problem`, ``brute_force_minimum``) and the exact optimiser (:mod:`.exact`, ``minimum``).
"""

from hasse.solvers.synthesis.exact import minimum
from hasse.solvers.synthesis.problem import BruteForce, Synthesis, SynthesisBug, brute_force_minimum

__all__ = ["BruteForce", "Synthesis", "SynthesisBug", "brute_force_minimum", "minimum"]

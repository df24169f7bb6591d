"""Automorphisms of a target preorder: permutations ``p`` with ``T[p][:, p] == T``, by a stabiliser chain.

For each base point ``i`` (with ``0..i-1`` fixed) a backtracking search (pruned by a colour
refinement on out/in-degrees and by checking ``T`` on every assigned pair) finds one
automorphism per element of the orbit of ``i``: the coset representatives of a strong
generating set, Schreier-Sims style; the group order is the product of the orbit sizes.

Soundness of lex-leader constraints built from these: for any set ``S`` of group elements the
lexicographically least member of each orbit satisfies ``x <=lex sigma(x)`` for every sigma in
``S``, and sigma maps optimal masks to optimal masks because it is an automorphism of ``T`` (so of
the realises condition and of the pair cost). :func:`check_automorphisms` raises
:class:`SynthesisBug` on any permutation that is not one. Used by :mod:`.exact` and :mod:`.cpsat`
(cost pairs; tiles depend on where positions are, so they get no symmetry breaking).
"""

from __future__ import annotations

import numpy as np

from hasse.solvers.synthesis.problem import SynthesisBug


def _colours(target: np.ndarray) -> list[int]:
    """A refined colouring: positions an automorphism can exchange share a colour."""
    n = target.shape[0]
    col = [0] * n
    for _ in range(n):
        sig = [(col[a], tuple(sorted(col[b] for b in np.flatnonzero(target[a]))),
                tuple(sorted(col[b] for b in np.flatnonzero(target[:, a])))) for a in range(n)]
        names = {s: i for i, s in enumerate(sorted(set(sig)))}
        new = [names[s] for s in sig]
        if len(set(new)) == len(set(col)):
            return new
        col = new
    return col


STEPS = 200_000  # backtracking steps in all; beyond them the search stops (fewer constraints, still sound)


class _Budget(Exception):
    pass


def _extend(target, col, perm: list[int], used: set[int], steps: list[int]) -> list[int] | None:
    """Complete the partial automorphism ``perm`` (a prefix of images) by backtracking, or None."""
    n = target.shape[0]
    a = len(perm)
    if a == n:
        return list(perm)
    steps[0] -= 1
    if steps[0] < 0:
        raise _Budget
    for b in range(n):
        if b in used or col[b] != col[a]:
            continue
        if target[a, a] != target[b, b] or any(target[a, c] != target[b, perm[c]] or target[c, a] != target[perm[c], b]
                                               for c in range(a)):
            continue
        perm.append(b)
        used.add(b)
        found = _extend(target, col, perm, used, steps)
        perm.pop()
        used.discard(b)
        if found is not None:
            return found
    return None


def automorphisms(target, limit: int = 200, steps: int = STEPS) -> tuple[list[np.ndarray], int | None]:
    """Coset representatives of a strong generating set (at most ``limit``) and the group order
    (None when the search ran out of ``steps``: the permutations found are still automorphisms).

    >>> gens, order = automorphisms(np.ones((3, 3), dtype=bool))
    >>> order
    6
    """
    target = np.asarray(target, dtype=bool)
    n = target.shape[0]
    col = _colours(target)
    gens: list[np.ndarray] = []
    order = 1
    budget = [steps]
    for i in range(n):
        orbit = 1
        for j in range(i + 1, n):
            if col[j] != col[i]:
                continue
            prefix = list(range(i)) + [j]
            used = set(prefix)
            if any(target[i, c] != target[j, c] or target[c, i] != target[c, j] for c in range(i)):
                continue
            try:
                found = _extend(target, col, prefix, used, budget)
            except _Budget:
                return gens, None
            if found is not None:
                orbit += 1
                if len(gens) < limit:
                    gens.append(np.array(found))
        order *= orbit
    return gens, order


def check_automorphisms(target, perms) -> None:
    """Raise :class:`SynthesisBug` unless every permutation maps ``T`` to itself."""
    target = np.asarray(target, dtype=bool)
    for p in perms:
        if not np.array_equal(target[np.ix_(p, p)], target):
            raise SynthesisBug(f"permutation {list(map(int, p))} is not an automorphism of the target")


def lex_leader_perms(target, limit: int = 64) -> list[np.ndarray]:
    """The permutations to constrain: the coset representatives, capped, each checked."""
    perms = automorphisms(target, limit)[0]
    check_automorphisms(target, perms)
    return perms

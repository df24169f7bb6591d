"""The sizes of the classes the theorems quantify over, computed without the enumerations that list them.

A proof by exhaustion is complete only when the number of objects it checked
equals the size of its class ("complete or not proved", design.md §5). These are
that size, by closed forms, recurrences and counting arguments that share no
code with the generators (:mod:`solvers.exhaustive`, :mod:`solvers.dags`,
:mod:`solvers.task_sets`, the catalogue):

- :func:`masks`: ``2^(n(n-1))`` zero-diagonal masks, ``2^(n²)`` with the diagonal;
- :func:`natural_posets`: partial orders on ``0 … k-1`` for which the identity is a
  linear extension (OEIS A006455: 1, 1, 2, 7, 40, 357, 4824), by testing every
  strict upper-triangular relation for transitivity — a second enumeration, of
  closures where :func:`solvers.dags.hasse_shapes` lists covers;
- :func:`coloured_posets`: posets on ``k`` points with each point coloured by one of
  ``colours`` symbols, up to isomorphism, by Burnside's lemma over the symmetric
  group (the labelled diagrams of :func:`solvers.dags.labelled_dags`: 2, 7, 32, 192, 1490);
- :func:`rooted_diagrams`: rooted labelled diagrams with at most ``n`` nodes, copies
  included (those of :func:`solvers.dags.rooted_hasse_diagrams`);
- :func:`small_families`: ordered lists of coloured posets with ``n`` points in all, by
  the recurrence ``F(0) = 1``, ``F(m) = Σ_k c_k F(m - k)`` (:func:`solvers.task_sets.small_families`);
- :func:`block_designs`, :func:`builtin_families`: the built-in block designs and
  families on ``n`` tokens, from the number of divisors of ``n``.

>>> [coloured_posets(k) for k in range(1, 5)], [small_families(n) for n in range(1, 5)]
([2, 7, 32, 192], [2, 11, 68, 469])
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from math import factorial


def masks(n: int, diagonal: bool = False) -> int:
    """The number of ``n × n`` masks: ``2^(n(n-1))`` with a zero diagonal, ``2^(n²)`` with the diagonal free.

    >>> masks(5), masks(2, diagonal=True)
    (1048576, 16)
    """
    return 1 << (n * n if diagonal else n * (n - 1))


@lru_cache(maxsize=None)
def _natural_orders(k: int) -> tuple[int, ...]:
    """Every strict partial order on ``0 … k-1`` contained in ``<``, as a bit set (bit ``i*k + j``: i below j)."""
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    out = []
    for bits in range(1 << len(pairs)):
        rel = {pairs[b] for b in range(len(pairs)) if bits >> b & 1}
        if all((i, m) in rel for (i, j) in rel for (j2, m) in rel if j2 == j):
            out.append(sum(1 << (i * k + j) for i, j in rel))
    return tuple(out)


def natural_posets(k: int) -> int:
    """Naturally labelled posets on ``k`` points (OEIS A006455).

    >>> [natural_posets(k) for k in range(0, 6)]
    [1, 1, 2, 7, 40, 357]
    """
    return len(_natural_orders(k))


def _apply(rel: int, perm: tuple[int, ...], k: int) -> int:
    out = 0
    while rel:
        low = rel & -rel
        b = low.bit_length() - 1
        out |= 1 << (perm[b // k] * k + perm[b % k])
        rel ^= low
    return out


@lru_cache(maxsize=None)
def _labelled_orders(k: int) -> frozenset[int]:
    """Every strict partial order on ``0 … k-1``: the natural ones under every relabelling (OEIS A001035)."""
    return frozenset(_apply(rel, perm, k) for rel in _natural_orders(k) for perm in itertools.permutations(range(k)))


def _cycle_types(k: int):
    """``(a permutation of that type, how many permutations have it, its number of cycles)`` per cycle type."""
    def partitions(m, largest):
        if m == 0:
            yield ()
            return
        for part in range(min(m, largest), 0, -1):
            for rest in partitions(m - part, part):
                yield (part, *rest)

    for parts in partitions(k, k):
        perm, start = [], 0
        for length in parts:
            perm += [start + (i + 1) % length for i in range(length)]
            start += length
        size = factorial(k)
        for length in set(parts):
            count = parts.count(length)
            size //= length ** count * factorial(count)
        yield tuple(perm), size, len(parts)


@lru_cache(maxsize=None)
def coloured_posets(k: int, colours: int = 2) -> int:
    """Posets on ``k`` points, each point one of ``colours`` colours, up to isomorphism (Burnside).

    The number of orbits of the symmetric group on (labelled order, colouring) pairs
    is ``(1/k!) Σ_σ fix(σ) · colours^cycles(σ)``, ``fix(σ)`` the labelled orders σ
    maps onto themselves; it depends on the cycle type only.

    >>> [coloured_posets(k, 1) for k in range(1, 6)]  # unlabelled posets, OEIS A000112
    [1, 2, 5, 16, 63]
    """
    orders = _labelled_orders(k)
    total = 0
    for perm, size, cycles in _cycle_types(k):
        fixed = sum(1 for rel in orders if _apply(rel, perm, k) == rel)
        total += size * fixed * colours ** cycles
    assert total % factorial(k) == 0, "Burnside's sum must be a multiple of k!"
    return total // factorial(k)


def rooted_diagrams(n: int, colours: int = 2) -> int:
    """Rooted labelled Hasse diagrams on ``k <= n`` topologically numbered nodes, root last, copies included.

    Removing the root (which lies above every node) leaves any naturally labelled
    poset on ``k - 1`` points: ``Σ_k natural_posets(k-1) · colours^k``.

    >>> [rooted_diagrams(n) for n in range(1, 6)]
    [2, 6, 22, 134, 1414]
    """
    return sum(natural_posets(k - 1) * colours ** k for k in range(1, n + 1))


def small_families(n: int, colours: int = 2) -> int:
    """Ordered lists (any length) of coloured posets up to isomorphism with ``n`` points in all.

    >>> small_families(5)
    3640
    """
    f = [1]
    for m in range(1, n + 1):
        f.append(sum(coloured_posets(k, colours) * f[m - k] for k in range(1, m + 1)))
    return f[n]


def divisors(n: int) -> int:
    """How many positive integers divide ``n``, from its prime factorisation.

    >>> [divisors(n) for n in (1, 4, 6, 12)]
    [1, 3, 4, 6]
    """
    count, p, m = 1, 2, n
    while p * p <= m:
        e = 0
        while m % p == 0:
            m //= p
            e += 1
        count *= e + 1
        p += 1
    return count * (2 if m > 1 else 1)


def block_designs(n: int) -> int:
    """Block designs on ``n`` tokens: one per block size dividing ``n``, two (chain, clique) when it is at least 2.

    >>> [block_designs(n) for n in (1, 2, 4, 6)]
    [1, 3, 5, 7]
    """
    return 2 * divisors(n) - 1


def builtin_families(n: int) -> int:
    """Built-in families on ``n`` tokens: ``ar`` (``n >= 2``), every block design, ``infill``.

    >>> [builtin_families(n) for n in (1, 2, 4)]
    [2, 5, 7]
    """
    return (n >= 2) + block_designs(n) + 1

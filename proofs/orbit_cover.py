"""The enumerations ``hasse prove --orbits`` runs over, how many masks each yields, and the digest of a part.

Relabelling positions (the same permutation ``P`` on rows and columns, ``M -> P M Pᵀ``)
splits the masks of size ``n`` into classes (orbits); the classes of zero-diagonal masks
are the digraphs on ``n`` unlabelled vertices (mask ``M[q, k]`` is the edge ``k -> q``;
loops would be the diagonal). Each theorem gets one of three enumerations (:func:`kind_of`):

- :data:`CLASSES` (an invariant statement about zero-diagonal masks): the
  representatives of :func:`solvers.orbits.orbit_masks` (nauty when installed, else a
  numpy fallback up to n = 6), exactly one per class (OEIS A000273) or a cover;
- :data:`LOOPS` (an invariant statement about masks with their diagonal, the
  no-residual control): every representative with every set of loops (``2^n``); every
  mask is ``P (R + D) Pᵀ`` for a representative ``R`` and a diagonal ``D``;
- :data:`LIMITS` (a predicate that reads a mask only through its limit ``R*``,
  ``Theorem.limit_only``, such as the sparse realisation, whose construction numbers
  class members by position so it is not invariant): every labelled preorder ``P`` as
  the mask ``P - I`` (:mod:`solvers.preorders`, OEIS A000798); every mask's limit is one.

:func:`expected` is how many distinct masks a complete enumeration yields;
:func:`orbit_batches` yields them (``part = (i, k)``: its i-th of k disjoint parts).
:data:`DIGEST` is what binds a part to its content: :func:`content` (and
:func:`contents`, every part in one pass) recomputes it from the enumeration alone, no
predicate, for the scan (:mod:`proofs.orbits_check`), the combiners
(:mod:`proofs.certificates.combine`, :mod:`proofs.distributed`) and ``certificate verify``.

>>> expected(4, "fallback"), enumeration(4, "fallback").exact, expected(4, "fallback", LIMITS)
(218, True, 355)
"""

from __future__ import annotations

import hashlib
from typing import Iterator

import numpy as np

from hasse.proofs.theorem import Theorem
from hasse.solvers import exhaustive as ex
from hasse.theory.errors import InputError

MAX_N = 7  # the size guard of --orbits (n = 7: 882,033,440 classes)
CLASSES, LOOPS, LIMITS = "classes", "classes with loops", "limits"


def kind_of(theorem: Theorem) -> str | None:
    """Which enumeration ``--orbits`` runs ``theorem`` over, or None (then :func:`refusal` says why)."""
    if theorem.flag is None:
        return None
    if theorem.invariant is not None:
        return LOOPS if theorem.diagonal else CLASSES
    if theorem.limit_only is not None and not theorem.diagonal:
        return LIMITS
    return None


def enumeration(n: int, method: str = "auto", kind: str = CLASSES):
    """The :class:`solvers.orbits.Cover` of the masks enumerated for ``kind`` at ``n`` (InputError when out of reach)."""
    from hasse.solvers import orbits, preorders

    if kind == LIMITS:
        if not 1 <= n <= preorders.MAX_N:
            raise InputError(f"preorder enumeration: n must be between 1 and {preorders.MAX_N}, got {n}")
        return orbits.Cover(n, "preorders", True, f"every labelled preorder on {n} positions (OEIS A000798), "
                                                  "each as its zero-diagonal mask")
    c = orbits.cover(n, method)
    if kind == LOOPS:
        return orbits.Cover(n, f"{c.method}+loops", c.exact, f"{c.description}, each with each of the {2 ** n} "
                                                             "sets of loops")
    return c


def expected(n: int, method: str = "auto", kind: str = CLASSES) -> int:
    """How many distinct masks a complete enumeration yields (A000273 or the cover's size; times ``2^n``; A000798)."""
    from hasse.solvers import orbits, preorders

    if kind == LIMITS:
        return preorders.preorder_count(n)
    c = orbits.cover(n, method)
    if c.exact:
        count = orbits.CLASS_COUNTS[n] if n < len(orbits.CLASS_COUNTS) else orbits.orbit_count(n, method)
    else:
        count = orbits.orbit_count(n, method)
    return count * 2 ** n if kind == LOOPS else count


def orbit_batches(n: int, method: str = "auto", kind: str = CLASSES,
                  part: tuple[int, int] | None = None) -> Iterator[np.ndarray]:
    """Packed rows ``(n, B)`` of the enumeration ``kind`` (``part = (i, k)``: its i-th of k disjoint parts)."""
    from hasse.solvers import orbits, preorders

    if kind == LIMITS:
        for rows in preorders.preorder_masks(n):
            mine = rows if part is None else np.ascontiguousarray(rows[:, part[0]::part[1]])
            if mine.shape[1]:
                yield mine
        return
    for rows in orbits.orbit_masks(n, method, part=part):
        if kind == CLASSES:
            yield rows
            continue
        for loops in range(2 ** n):  # LOOPS: every set of loops on the representatives
            diag = np.array([(loops >> q) & 1 for q in range(n)], dtype=rows.dtype) << np.arange(n, dtype=rows.dtype)
            yield rows | diag[:, None]


DIGEST = ("sha256 of a header naming n and the enumeration's kind, then the labelled index of each mask checked "
          "(8 bytes, little-endian), in enumeration order")


def digester(n: int, kind: str):
    return hashlib.sha256(f"hasse orbit masks: n={n}, kind={kind}\n".encode())


def digest_bytes(index: np.ndarray) -> bytes:
    return np.ascontiguousarray(index, dtype="<u8").tobytes()


def content(n: int, method: str = "auto", kind: str = CLASSES, part: tuple[int, int] | None = None,
            masks: int | None = None, count: bool = True) -> tuple[int, str]:
    """``(size, sha256)``: how many masks ``part`` of the enumeration holds here, and the digest of its first ``masks``.

    The content a part's result claims (``details.digest``, :data:`DIGEST`), recomputed from
    the enumerator of this checkout without running any predicate (``masks``: every mask
    of the part when None). The combiners and ``certificate verify`` compare it with the claim.
    ``count=False``: stop once the first ``masks`` are read (``size`` is then how many were
    read, at least ``masks`` unless the part holds fewer).

    >>> content(3)[0], content(3, part=(0, 2))[0] + content(3, part=(1, 2))[0]
    (16, 16)
    >>> content(3, masks=5)[1] == content(3, masks=6)[1]
    False
    """
    digest, size = digester(n, kind), 0
    for rows in orbit_batches(n, method, kind, part):
        index, _ = ex.encode(n, rows, diagonal=kind == LOOPS)
        take = index.size if masks is None else max(0, min(index.size, masks - size))
        if take:
            digest.update(digest_bytes(index[:take]))
        size += index.size
        if not count and masks is not None and size >= masks:
            break
    return size, digest.hexdigest()


def contents(n: int, method: str = "auto", kind: str = CLASSES, k: int = 1,
             masks: list[int | None] | None = None) -> list[tuple[int, str]]:
    """:func:`content` of every part ``(i, k)``, ``i = 0 … k-1`` (``masks[i]``: the prefix of part i), in one pass.

    nauty's parts are separate directg runs over geng's graphs ``j mod k = i`` (one pass in
    all); the fallback and the preorders take the masks ``j mod k = i`` of each batch of the
    whole enumeration, so the whole enumeration is read once and each batch split here
    (tests/test_prove_orbits.py checks this against :func:`content` part by part).

    >>> [size for size, _ in contents(4, "fallback", k=3)]
    [73, 73, 72]
    """
    masks = list(masks) if masks is not None else [None] * k
    if "nauty" in enumeration(n, method, kind).method:
        return [content(n, method, kind, (i, k), masks[i]) for i in range(k)]
    digests, sizes = [digester(n, kind) for _ in range(k)], [0] * k
    for rows in orbit_batches(n, method, kind):
        index, _ = ex.encode(n, rows, diagonal=kind == LOOPS)
        for i in range(k):
            mine = index[i::k]
            take = mine.size if masks[i] is None else max(0, min(mine.size, masks[i] - sizes[i]))
            if take:
                digests[i].update(digest_bytes(mine[:take]))
            sizes[i] += mine.size
    return [(size, digest.hexdigest()) for size, digest in zip(sizes, digests)]


def collect(n: int, method: str = "auto") -> list[np.ndarray]:
    """Every batch of representatives at ``n``, in memory (tests; runs stream them)."""
    return list(orbit_batches(n, method))

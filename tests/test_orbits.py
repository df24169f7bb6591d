"""solvers/orbits.py: one mask per isomorphism class of loopless digraphs, checked against our own canonical forms.

The reference here is independent of the module: masks are unpacked to ``(B, n, n)``
bool arrays, keyed row-major *with* the diagonal (another numbering than the
exhaustive one), and relabelled by fancy indexing ``M[p][:, p]``. A class is covered
when the orbits of the enumerated masks together hold every labelled loopless mask;
the enumeration is exact when, in addition, no two enumerated masks share a
canonical key (least key over the ``n!`` relabellings). Counts are OEIS A000273,
written out here, not read from the module.
"""

from __future__ import annotations

import inspect
import itertools
import textwrap

import numpy as np
import pytest

from hasse.solvers import exhaustive as ex
from hasse.solvers import orbits
from hasse.theory import batch
from hasse.theory.errors import InputError

A000273 = {1: 1, 2: 3, 3: 16, 4: 218, 5: 9608, 6: 1540944}
HAVE_NAUTY = orbits.nauty_programs() is not None
needs_nauty = pytest.mark.skipif(not HAVE_NAUTY, reason="nauty (nauty-geng, nauty-directg) is not installed")
METHODS = ["fallback", pytest.param("nauty", marks=needs_nauty)]


def keys(masks: np.ndarray) -> np.ndarray:
    """``(B,)`` int64: row-major key of each ``(n, n)`` mask, diagonal included."""
    n = masks.shape[1]
    weights = np.int64(1) << np.arange(n * n, dtype=np.int64)
    return masks.reshape(len(masks), -1).astype(np.int64) @ weights


def all_relabellings(masks: np.ndarray) -> np.ndarray:
    """``(n!, B)`` keys of every relabelling of every mask."""
    n = masks.shape[1]
    return np.stack([keys(masks[:, p][:, :, p]) for p in map(list, itertools.permutations(range(n)))])


def canonical(masks: np.ndarray) -> np.ndarray:
    return all_relabellings(masks).min(axis=0)


def every_loopless_mask(n: int) -> np.ndarray:
    """Every ``(n, n)`` bool mask with zero diagonal, built here from bits of a counter."""
    off = [(q, k) for q in range(n) for k in range(n) if q != k]
    count = np.arange(2 ** len(off), dtype=np.int64)
    masks = np.zeros((count.size, n, n), dtype=bool)
    for b, (q, k) in enumerate(off):
        masks[:, q, k] = (count >> b) & 1
    return masks


def collect(n: int, batches) -> np.ndarray:
    rows = [r for r in batches]
    for r in rows:
        assert r.ndim == 2 and r.shape[0] == n and r.dtype == batch.row_dtype(n)
    return batch.unpack(np.concatenate(rows, axis=1), n)


def missing(n: int, masks: np.ndarray) -> int:
    """How many labelled loopless masks of size n lie in no enumerated mask's orbit."""
    covered = np.unique(all_relabellings(masks))
    return int(np.count_nonzero(~np.isin(keys(every_loopless_mask(n)), covered)))


def duplicates(masks: np.ndarray) -> int:
    """Enumerated masks whose class another enumerated mask already has."""
    return len(masks) - np.unique(canonical(masks)).size


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", range(1, 6))
def test_one_mask_per_class(n, method):
    masks = collect(n, orbits.orbit_masks(n, method, batch_size=1000))
    assert len(masks) == A000273[n]
    assert not masks[:, np.arange(n), np.arange(n)].any()  # loopless, like the exhaustive numbering
    assert duplicates(masks) == 0
    assert missing(n, masks) == 0
    assert orbits.cover(n, method).exact and orbits.orbit_count(n, method) == A000273[n]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", range(1, 5))
def test_every_labelled_mask_has_its_canonical_form_enumerated(n, method):
    """The brief's check, literally: each labelled mask's canonical form is the canonical form of an enumerated one."""
    enumerated = set(canonical(collect(n, orbits.orbit_masks(n, method))).tolist())
    assert set(canonical(every_loopless_mask(n)).tolist()) == enumerated


@needs_nauty
def test_nauty_size_6_count():
    total, seen_diagonal = 0, False
    for rows in orbits.orbit_masks(6, "nauty"):
        total += rows.shape[1]
        seen_diagonal |= bool((rows & batch.identity(6, rows.shape[1])).any())
    assert total == A000273[6] and not seen_diagonal


@needs_nauty
def test_digraph6_decoding_against_nauty_text():
    """Our own scalar reader of digraph6 on nauty's lines for n = 4 agrees with the vectorised one."""
    from subprocess import run

    geng, directg = orbits.nauty_programs()
    text = run(f"{geng} -q 4 | {directg} -q", shell=True, capture_output=True, check=True).stdout
    fast = batch.unpack(orbits.decode_digraph6(text, 4), 4)
    slow = []
    for line in text.decode().split():
        bits = "".join(format(ord(c) - 63, "06b") for c in line[2:])[:16]
        slow.append(np.array([int(b) for b in bits], dtype=bool).reshape(4, 4))
    assert np.array_equal(fast, np.array(slow))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_extension_cover_complete(n):
    """The n = 6 fallback's construction (size n-1 classes plus a node of largest degree), checked at n <= 5."""
    masks = collect(n, orbits._extension(n, 1 << 12))
    assert missing(n, masks) == 0
    assert len(masks) >= A000273[n]


def test_fallback_size_6():
    c = orbits.cover(6, "fallback")
    assert not c.exact and "at least once" in c.description
    assert orbits.orbit_count(6, "fallback") >= A000273[6]


def test_bad_input():
    with pytest.raises(InputError, match="method"):
        next(orbits.orbit_masks(3, "fast"))
    with pytest.raises(InputError, match="n <= 6"):
        next(orbits.orbit_masks(7, "fallback"))
    with pytest.raises(InputError, match="positive"):
        orbits.cover(0)
    with pytest.raises(InputError, match="digraph6"):
        orbits.decode_digraph6(b"&C??\n", 3)


def test_without_nauty_auto_falls_back(monkeypatch):
    monkeypatch.setattr(orbits.shutil, "which", lambda name: None)
    assert orbits.cover(4).method == "canonical"
    assert sum(r.shape[1] for r in orbits.orbit_masks(4)) == 218
    with pytest.raises(InputError, match="not installed"):
        next(orbits.orbit_masks(4, "nauty"))


# Planted bugs: each must make the checks above fail.

def mutate(monkeypatch, function, original: str, mutated: str):
    """Replace ``function`` in :mod:`solvers.orbits` by a copy of its source with one line changed."""
    source = textwrap.dedent(inspect.getsource(function))
    assert source.count(original) == 1, original
    namespace = dict(vars(orbits))
    exec(compile(source.replace(original, mutated), "<mutated>", "exec"), namespace)
    monkeypatch.setattr(orbits, function.__name__, namespace[function.__name__])


def test_planted_dropped_class_is_caught():
    masks = collect(4, orbits.orbit_masks(4, "fallback"))
    assert missing(4, masks[1:]) > 0 and len(masks[1:]) != A000273[4]


def test_planted_duplicate_is_caught():
    masks = collect(4, orbits.orbit_masks(4, "fallback"))
    assert duplicates(np.concatenate([masks, masks[:1, :, ::-1][:, ::-1]])) == 1


@needs_nauty
def test_planted_bit_order_in_decoder_is_caught(monkeypatch):
    mutate(monkeypatch, orbits.decode_digraph6, "np.arange(5, -1, -1)", "np.arange(6)")
    with pytest.raises((InputError, AssertionError)):
        masks = collect(4, orbits.orbit_masks(4, "nauty"))
        assert not masks[:, np.arange(4), np.arange(4)].any() and missing(4, masks) == 0


def test_planted_strict_degree_in_extension_is_caught(monkeypatch):
    mutate(monkeypatch, orbits._extension, "(degree[new] >= degree[:new])", "(degree[new] > degree[:new])")
    assert missing(4, collect(4, orbits._extension(4, 1 << 12))) > 0


def test_planted_canonical_filter_is_caught(monkeypatch):
    orbits.canonical_indices.cache_clear()
    mutate(monkeypatch, orbits.canonical_indices, "for perm in itertools.permutations(range(n)):",
           "for perm in list(itertools.permutations(range(n)))[:-3]:")  # 3 relabellings never tried
    # (leaving out only the last one is harmless at n = 4, though not at n = 5: 9611 masks)
    try:
        masks = collect(4, orbits.orbit_masks(4, "fallback"))
        assert duplicates(masks) > 0 or missing(4, masks) > 0 or len(masks) != A000273[4]
    finally:
        monkeypatch.undo()
        orbits.canonical_indices.cache_clear()


@needs_nauty
@pytest.mark.slow
def test_nauty_size_7_count_by_parts():
    """n = 7 (about 15 minutes): the parts of a distributed run add up to A000273(7), and none is empty."""
    sizes = [sum(rows.shape[1] for rows in orbits.orbit_masks(7, "nauty", part=(i, 3))) for i in range(3)]
    assert sum(sizes) == 882033440 and min(sizes) > 0


@needs_nauty
@pytest.mark.parametrize("n", [4, 5, 6])
def test_nauty_parts_partition_the_classes(n):
    whole = np.sort(np.concatenate([ex.encode(n, rows)[0] for rows in orbits.orbit_masks(n, "nauty")]))
    parts = [np.concatenate([ex.encode(n, r)[0] for r in orbits.orbit_masks(n, "nauty", part=(i, 5))] or
                            [np.zeros(0, np.int64)]) for i in range(5)]
    assert all(p.size for p in parts)  # balanced enough that no part is empty
    assert np.array_equal(np.sort(np.concatenate(parts)), whole)  # disjoint, and together every class

"""One mask per isomorphism class: the loopless digraphs on ``n`` nodes, in packed rows.

A statement about masks that does not depend on the positions' names (every
statement invariant under relabelling ``M -> P M P^T``) needs only one mask of
each isomorphism class instead of all ``2^(n(n-1))`` (n = 6: 1,540,944 classes
instead of 2^30 masks). :func:`orbit_masks` yields batches of packed rows
``(n, B)`` (:mod:`theory.batch_rows`, zero diagonal as in the exhaustive
numbering of :mod:`solvers.exhaustive`), ready for a predicate ``flag(rows)``.

Two sources, both covering every class at least once:

- ``"nauty"``: ``nauty-geng -q n | nauty-directg -q`` (every simple graph, then
  every orientation with digons allowed: exactly one digraph per class, OEIS
  A000273), digraph6 lines decoded with numpy. Only when the programs are
  installed (Debian package ``nauty``; also found as ``geng``/``directg``).
- ``"fallback"``, pure numpy. ``n <= 5``: the *canonical* masks, those whose index
  is the smallest over all ``n!`` relabellings: exactly one per class. ``n = 6``:
  the *extension* cover: each canonical mask of size 5 with a sixth node added in
  every way (2^10) whose total degree (in + out) is at least every other node's.
  Complete: given any mask on 6 nodes, relabel a node of largest total degree to
  5; the mask on nodes 0..4 is isomorphic to a canonical one by a relabelling of
  0..4, which fixes node 5 and keeps its degree largest. Larger than the class
  count (:func:`orbit_count` gives its size), every class present at least once.

``"auto"`` is nauty when installed, else the fallback. :func:`cover` says which
was used, whether it is exact, and a one-line description for certificates.
"""

from __future__ import annotations

import itertools
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np

from hasse.theory import batch
from hasse.theory.errors import InputError

# OEIS A000273: isomorphism classes of loopless digraphs on n nodes, n = 0 … 7.
CLASS_COUNTS = (1, 1, 3, 16, 218, 9608, 1540944, 882033440)
FALLBACK_MAX_N = 6
METHODS = ("auto", "nauty", "fallback")


@dataclass(frozen=True)
class Cover:
    """Which masks :func:`orbit_masks` yields for ``n``."""

    n: int
    method: str  # "nauty", "canonical" (fallback n <= 5) or "extension" (fallback n = 6)
    exact: bool  # exactly one mask per isomorphism class (else: every class at least once)
    description: str  # one line, for certificates


def nauty_programs() -> tuple[str, str] | None:
    """Paths of nauty's ``geng`` and ``directg``, or None when either is missing."""
    for geng, directg in (("nauty-geng", "nauty-directg"), ("geng", "directg")):
        a, b = shutil.which(geng), shutil.which(directg)
        if a and b:
            return a, b
    return None


def _check(n: int, method: str) -> str:
    """The concrete method (``"nauty"`` or ``"fallback"``) for ``method``; InputError if impossible."""
    if method not in METHODS:
        raise InputError(f"orbit enumeration: unknown method {method!r} (one of {', '.join(METHODS)})")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"orbit enumeration: size n must be a positive integer, got {n!r}")
    if method == "auto":
        method = "nauty" if nauty_programs() else "fallback"
    if method == "nauty":
        if nauty_programs() is None:
            raise InputError("orbit enumeration: nauty (nauty-geng, nauty-directg) is not installed")
        if n > 62:
            raise InputError(f"orbit enumeration: nauty's digraph6 reader here takes n <= 62, got {n}")
    elif n > FALLBACK_MAX_N:
        raise InputError(f"orbit enumeration without nauty: n <= {FALLBACK_MAX_N}, got {n}")
    return method


def cover(n: int, method: str = "auto") -> Cover:
    """What :func:`orbit_masks` ``(n, method)`` yields.

    >>> c = cover(4, "fallback")
    >>> c.method, c.exact
    ('canonical', True)
    """
    method = _check(n, method)
    if method == "nauty":
        return Cover(n, "nauty", True, f"one mask per isomorphism class of loopless digraphs on {n} nodes "
                                       f"(nauty geng | directg)")
    if n <= 5:
        return Cover(n, "canonical", True, f"one mask per isomorphism class of loopless digraphs on {n} nodes "
                                           f"(least index over all {n}! relabellings)")
    return Cover(n, "extension", False, f"every isomorphism class of loopless digraphs on {n} nodes at least once "
                                        f"(canonical masks of size {n - 1} plus a node of largest total degree)")


def decode_digraph6(lines: bytes, n: int) -> np.ndarray:
    """Packed rows ``(n, B)`` of the digraph6 lines in ``lines`` (each ``&``, size, ``n²`` bits; one per line).

    Bit ``i n + j`` of the matrix (6 per character, most significant first, plus 63)
    is the edge ``i -> j``, read as ``M[i, j]``. Every line must have size ``n`` and a
    zero diagonal.

    >>> batch.unpack(decode_digraph6(b"&BG?\\n&BW?\\n", 3), 3).astype(int).tolist()
    [[[0, 0, 1], [0, 0, 0], [0, 0, 0]], [[0, 1, 1], [0, 0, 0], [0, 0, 0]]]
    """
    width = 2 + (n * n + 5) // 6  # '&', size, data characters
    data = np.frombuffer(lines, dtype=np.uint8)
    if data.size % (width + 1):
        raise InputError(f"nauty output: not a whole number of digraph6 lines of size {n}")
    table = data.reshape(-1, width + 1)  # (B, width + 1)
    if (table[:, 0] != ord("&")).any() or (table[:, 1] != 63 + n).any() or (table[:, -1] != ord("\n")).any():
        raise InputError(f"nauty output: a line is not a digraph6 digraph of size {n}")
    six = table[:, 2:width].astype(np.int64) - 63  # (B, chars)
    if ((six < 0) | (six > 63)).any():
        raise InputError("nauty output: a digraph6 character out of range")
    bits = (six[:, :, None] >> np.arange(5, -1, -1)) & 1  # (B, chars, 6)
    masks = bits.reshape(len(table), -1)[:, :n * n].reshape(-1, n, n).astype(bool)  # (B, n, n)
    if masks[:, np.arange(n), np.arange(n)].any():
        raise InputError("nauty output: a digraph with a loop")
    return batch.pack(masks)


def _nauty(n: int, batch_size: int, part: tuple[int, int] | None) -> Iterator[np.ndarray]:
    geng, directg = nauty_programs()
    width = 3 + (n * n + 5) // 6
    if part is None:
        first = subprocess.Popen([geng, "-q", str(n)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        source, feed = first.stdout, None
    else:  # this part's simple graphs (n = 7: 1,044 graphs; n = 8: 12,346), each oriented by directg
        first = subprocess.run([geng, "-q", str(n)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        graphs = first.stdout.splitlines(keepends=True)
        feed = tempfile.NamedTemporaryFile("wb", suffix=".g6", delete=False)
        feed.write(b"".join(graphs[part[0]::part[1]]))  # round robin in geng's order
        feed.close()
        source = subprocess.DEVNULL
    second = subprocess.Popen([directg, "-q", *([feed.name] if feed else [])], stdin=source,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if feed is None:
        first.stdout.close()  # directg owns the pipe now
    chunks: queue.Queue = queue.Queue(maxsize=4)
    stop = threading.Event()

    def read() -> None:  # keeps directg writing while the caller computes (a pipe holds only 64 KiB)
        try:
            while not stop.is_set():
                chunk = second.stdout.read(width * batch_size)
                while not stop.is_set():
                    try:
                        chunks.put(chunk, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if not chunk:
                    return
        except (OSError, ValueError):  # the pipe closed under us: the caller stopped early
            if not stop.is_set():
                chunks.put(b"")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while True:
            chunk = chunks.get()
            if not chunk:
                break
            yield decode_digraph6(chunk, n)
    finally:
        stop.set()
        for proc in (second,) + ((first,) if feed is None else ()):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        reader.join()
        second.stdout.close()
        if feed is not None:
            os.unlink(feed.name)
    status = (second.returncode,) + ((first.returncode,) if feed is None else ())
    if any(code not in (0, None) for code in status):
        raise RuntimeError(f"nauty exited with status {' | '.join(map(str, status))}")


def _bit_position(n: int, q: int, k: int) -> int:
    """Bit of entry ``(q, k)``, ``k != q``, in the exhaustive numbering (zero diagonal)."""
    return q * (n - 1) + (k if k < q else k - 1)


def _relabel_tables(n: int, perm: tuple[int, ...]) -> list[np.ndarray]:
    """Byte tables: ``OR_c tables[c][(i >> 8c) & 255]`` is the index of mask ``i`` relabelled by ``perm``.

    Relabelling moves entry ``(q, k)`` to ``(perm[q], perm[k])``.
    """
    m = n * (n - 1)
    target = np.zeros(m, dtype=np.uint64)
    for q in range(n):
        for k in range(n):
            if k != q:
                target[_bit_position(n, q, k)] = 1 << _bit_position(n, perm[q], perm[k])
    tables = []
    for c in range((m + 7) // 8):
        values = np.arange(256, dtype=np.uint64)
        table = np.zeros(256, dtype=np.uint64)
        for j in range(8):
            if 8 * c + j < m:
                table |= np.where((values >> np.uint64(j)) & np.uint64(1), target[8 * c + j], np.uint64(0))
        tables.append(table)
    return tables


@lru_cache(maxsize=8)
def canonical_indices(n: int) -> np.ndarray:
    """The indices ``i`` (ascending) with ``i <= relabel(i)`` for every relabelling: one per class (``n <= 5``).

    >>> canonical_indices(2).tolist(), canonical_indices(3).size
    ([0, 1, 3], 16)
    """
    if n > 5:
        raise InputError(f"canonical indices by every relabelling: n <= 5, got {n}")
    alive = np.arange(2 ** (n * (n - 1)), dtype=np.uint64)
    for perm in itertools.permutations(range(n)):
        tables = _relabel_tables(n, perm)
        image = np.zeros_like(alive)
        for c, table in enumerate(tables):
            image |= table[(alive >> np.uint64(8 * c)) & np.uint64(255)]
        alive = alive[image >= alive]
    alive.flags.writeable = False
    return alive


def _extension(n: int, batch_size: int) -> Iterator[np.ndarray]:
    """The extension cover of size ``n`` (see the module docstring), in batches."""
    base = batch.masks_from_indices(n - 1, canonical_indices(n - 1))  # (n-1, R)
    dtype = batch.row_dtype(n)
    new = n - 1  # the added node
    extra = np.arange(2 ** (2 * (n - 1)), dtype=np.int64)  # bits 0..n-2: column `new`; the rest: row `new`
    column = extra & ((1 << (n - 1)) - 1)
    row_new = (extra >> (n - 1)).astype(dtype)  # (E,)
    per_batch = max(1, batch_size // extra.size)
    for start in range(0, base.shape[1], per_batch):
        part = base[:, start:start + per_batch].astype(dtype)  # (n-1, r)
        r = part.shape[1]
        rows = np.empty((n, r, extra.size), dtype=dtype)
        for q in range(n - 1):
            rows[q] = part[q][:, None] | (((column >> q) & 1).astype(dtype) << dtype.type(new))[None, :]
        rows[new] = row_new[None, :]
        rows = rows.reshape(n, -1)
        degree = batch.popcount(rows)  # (n, B): out-degree
        for k in range(n):
            degree[k] += ((rows >> dtype.type(k)) & dtype.type(1)).astype(np.int64).sum(axis=0)  # in-degree
        keep = (degree[new] >= degree[:new]).all(axis=0)
        yield np.ascontiguousarray(rows[:, keep])


def orbit_masks(n: int, method: str = "auto", batch_size: int = 1 << 16,
                part: tuple[int, int] | None = None) -> Iterator[np.ndarray]:
    """Batches of packed rows ``(n, B)`` covering every isomorphism class of loopless digraphs on ``n`` nodes.

    ``method``: ``"nauty"``, ``"fallback"`` or ``"auto"`` (nauty when installed).
    Exactly one mask per class unless :func:`cover` says otherwise (fallback, n = 6).
    ``part = (i, k)``: only the i-th of k disjoint parts, whose union is the whole
    enumeration, balanced (nauty: the simple graphs ``j`` of geng's output with
    ``j % k == i``, each oriented by directg; fallback: the masks ``j`` of each batch with
    ``j % k == i``) -- the work units of a distributed run.
    Raises InputError for an unknown method, nauty asked for and missing, n too
    large for the fallback, or a part outside ``0 <= i < k``.

    >>> sum(rows.shape[1] for rows in orbit_masks(3, "fallback"))
    16
    >>> sum(rows.shape[1] for i in range(3) for rows in orbit_masks(4, "fallback", 50, part=(i, 3)))
    218
    """
    method = _check(n, method)
    if part is not None:
        i, k = part
        if not (isinstance(i, (int, np.integer)) and isinstance(k, (int, np.integer)) and 0 <= i < k):
            raise InputError(f"orbit enumeration: part must be (i, k) with 0 <= i < k, got {part!r}")
    if method == "nauty":
        yield from _nauty(n, batch_size, part)
        return
    if n <= 5:
        every = batch.masks_from_indices(n, canonical_indices(n))
        batches = (np.ascontiguousarray(every[:, s:s + batch_size]) for s in range(0, every.shape[1], batch_size))
    else:
        batches = _extension(n, batch_size)
    for rows in batches:
        mine = rows if part is None else np.ascontiguousarray(rows[:, part[0]::part[1]])
        if mine.shape[1]:
            yield mine


@lru_cache(maxsize=16)
def orbit_count(n: int, method: str = "auto") -> int:
    """How many masks :func:`orbit_masks` ``(n, method)`` yields (A000273 when the cover is exact).

    >>> orbit_count(4, "fallback")
    218
    """
    c = cover(n, method)
    if c.exact and n < len(CLASS_COUNTS):
        return CLASS_COUNTS[n]
    return sum(rows.shape[1] for rows in orbit_masks(n, method))

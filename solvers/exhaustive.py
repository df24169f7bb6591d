"""Exhaustive search over every mask of size n, in vectorised batches decoded from integer indices.

The masks of size ``n`` are numbered ``0 … 2^(n(n-1)) - 1`` (zero diagonal: under
the residual the diagonal does not matter; n = 5 → 1,048,576 masks, n = 6 → 2^30),
or ``0 … 2^(n²) - 1`` with the diagonal (the no-residual control). Mask ``i`` is
:func:`theory.batch.masks_from_indices`; a batch is a contiguous index range,
decoded at once (aligned power-of-two batches reuse the decoding of their low
bits, since decoding is bitwise).

:func:`search` runs a vectorised predicate ``flag(rows) -> (B,) bool`` over an
index range and returns the first flagged index (a counterexample, or a witness
for an existence statement):

- ``ctx.shard = (i, k)``: only the i-th of k contiguous equal parts of the range;
- ``ctx.workers = K``: the range is split into K contiguous parts, one process
  each (forked); ``checked`` is their sum and the first flagged index is the
  smallest any of them found;
- ``ctx.span = (a, b)``: exactly the index range ``[a, b)`` (a re-check of part of a
  certificate, :mod:`proofs.certificates.verify`);
- ``ctx.progress(done, total)`` after every batch; ``ctx.expired()`` stops the
  search (the result says how many masks were checked).

``checked`` counts what was actually enumerated, not the nominal range: every
decoded batch is re-encoded into indices by :func:`encode` (a second, independent
implementation of the numbering) and only the distinct indices of the range,
in increasing order, that some decoded mask carries are counted
(:class:`Coverage`). A decoder that skips a mask, repeats one, or never sets an
entry (``M[q, q+1]`` always 0 maps two indices onto one mask) therefore checks
fewer than ``b - a`` masks, and the proof says "scan incomplete" instead of
proved (:func:`proofs.mask_checks.exhaustive_outcome`). The round trip
``encode(decode(i)) = i`` is stronger than a checksum of bit counts: it proves
the decoded masks of a batch distinct and exactly those of its index range.

Shards run separately are combined into one verdict by :func:`proofs.certificate.combine`
(on the JSON objects of their certificates): ``hasse prove NAME --n N --combine part*.json``.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from hasse.theory import batch
from hasse.theory.errors import InputError

Flag = Callable[[np.ndarray], np.ndarray]  # packed rows (n, B) -> (B,) bool


@dataclass(frozen=True)
class Search:
    """What an exhaustive search over ``[start, stop)`` of ``total`` masks found."""

    total: int  # masks in the whole space
    start: int
    stop: int
    checked: int  # masks checked
    found: int | None  # smallest flagged index, or None
    timed_out: bool
    workers: int

    @property
    def complete(self) -> bool:
        """Every mask of ``[start, stop)`` was checked (no timeout, no early stop, nothing skipped)."""
        return self.checked == self.stop - self.start


def encode(n: int, rows: np.ndarray, diagonal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The indices of the masks held in packed ``rows`` ``(n, B)``, and which of them are well formed.

    The inverse of :func:`theory.batch.masks_from_indices`, written out again from
    the numbering (not by calling it): without ``diagonal``, entry ``(q, k)``,
    ``k != q``, is bit ``q(n-1) + (k if k < q else k - 1)``; with ``diagonal``, bit
    ``qn + k``. A mask is well formed when no row has a bit at or beyond ``n`` and,
    without ``diagonal``, its diagonal is zero.

    >>> idx, ok = encode(3, batch.masks_from_indices(3, np.arange(64, dtype=np.uint64)))
    >>> bool((idx == np.arange(64)).all()), bool(ok.all())
    (True, True)
    """
    width = n if diagonal else n - 1
    rows = np.asarray(rows)
    one = rows.dtype.type(1)
    index = np.zeros(rows.shape[1], dtype=np.uint64)
    stray = np.zeros(rows.shape[1], dtype=rows.dtype)  # bits that no mask of the class has
    for q in range(n):
        r = rows[q]
        allowed = (1 << n) - 1 if diagonal else ((1 << n) - 1) & ~(1 << q)
        stray |= r & ~rows.dtype.type(allowed)
        chunk = r if diagonal else (r & ((one << q) - one)) | ((r >> (q + 1)) << q)
        index |= chunk.astype(np.uint64) << np.uint64(q * width)
    ok = stray == 0
    return index, ok


class Coverage:
    """The distinct indices of ``[a, b)`` that the decoded masks carried, counted as batches arrive in order.

    Batches come in increasing index order, so an index is new iff it lies at or
    beyond ``low`` (one past the largest counted so far). The fast path is a batch
    of consecutive well-formed indices; anything else is deduplicated.

    >>> c = Coverage(0, 8)
    >>> c.add(np.array([0, 1, 2, 3], dtype=np.uint64), np.ones(4, bool))
    >>> c.add(np.array([5, 6, 6, 7], dtype=np.uint64), np.ones(4, bool))  # 4 skipped, 6 twice
    >>> c.count
    7
    """

    def __init__(self, a: int, b: int):
        self.a, self.b, self.low, self.count = a, b, a, 0

    def add(self, index: np.ndarray, ok: np.ndarray) -> None:
        m = index.size
        if m == 0:
            return
        first, last = int(index[0]), int(index[-1])
        if (ok.all() and first >= self.low and last < self.b and last - first == m - 1
                and np.array_equal(index, np.arange(first, first + m, dtype=np.uint64))):
            self.count += m
            self.low = last + 1
            return
        new = np.unique(index[ok])
        new = new[(new >= np.uint64(max(self.low, self.a))) & (new < np.uint64(self.b))]
        self.count += int(new.size)
        if new.size:
            self.low = int(new[-1]) + 1


def space_size(n: int, diagonal: bool = False) -> int:
    """Number of masks of size ``n``: ``2^(n(n-1))``, or ``2^(n²)`` with the diagonal."""
    return 2 ** (n * n if diagonal else n * (n - 1))


def part(start: int, stop: int, i: int, k: int) -> tuple[int, int]:
    """The i-th of k contiguous, nearly equal parts of ``[start, stop)``.

    >>> [part(0, 10, i, 3) for i in range(3)]
    [(0, 3), (3, 6), (6, 10)]
    """
    size = stop - start
    return start + size * i // k, start + size * (i + 1) // k


def decode(n: int, index: int, diagonal: bool = False) -> np.ndarray:
    """Mask number ``index`` as an ``(n, n)`` bool array."""
    return batch.unpack(batch.masks_from_indices(n, np.array([index], dtype=np.uint64), diagonal=diagonal), n)[0]


@lru_cache(maxsize=8)
def _low_rows(n: int, diagonal: bool, size: int) -> np.ndarray:
    return batch.masks_from_indices(n, np.arange(size, dtype=np.uint64), diagonal=diagonal)


def _rows(n: int, diagonal: bool, a: int, b: int, size: int) -> np.ndarray:
    """Packed rows of masks ``a … b-1``; an aligned full batch ORs its high bits onto a cached low part."""
    if b > 1 << 64:
        raise InputError(f"exhaustive search of masks of size {n}: indices beyond 2^64 are out of reach")
    if b - a == size and a % size == 0:
        high = batch.masks_from_indices(n, np.array([a], dtype=np.uint64), diagonal=diagonal)
        return _low_rows(n, diagonal, size) | high
    return batch.masks_from_indices(n, np.arange(a, b, dtype=np.uint64), diagonal=diagonal)


def default_batch(n: int) -> int:
    """Masks per batch: a power of two (aligned batches decode fast), small enough to stay in cache."""
    return 1 << (14 if n >= 6 else 16)


def _scan(n, flag, diagonal, a, b, size, deadline, on_batch, stop_before):
    """Check ``[a, b)`` batch by batch; returns (checked, first flagged index or None, timed out).

    ``checked`` is the :class:`Coverage` of the masks actually decoded and flagged
    (up to and including the first flagged one), not the nominal range.
    """
    cover = Coverage(a, b)
    pos = a
    while pos < b:
        if deadline is not None and time.time() >= deadline:
            return cover.count, None, True
        if pos >= stop_before():
            return cover.count, None, False
        end = min(b, (pos // size + 1) * size)
        rows = _rows(n, diagonal, pos, end, size)
        index, ok = encode(n, rows, diagonal)  # before the predicate sees (and could change) the rows
        flags = np.asarray(flag(rows), dtype=bool)
        hits = np.flatnonzero(flags)
        before = cover.count
        if hits.size:
            hit = int(hits[0])
            cover.add(index[:hit + 1], ok[:hit + 1])
            first = int(index[hit]) if ok[hit] else pos + hit
            on_batch(cover.count - before, first)
            return cover.count, first, False
        cover.add(index, ok)
        on_batch(cover.count - before, None)
        pos = end
    return cover.count, None, False


def _worker(n, flag, diagonal, a, b, size, deadline, counter, best, queue, parent):
    from hasse.theory.worker_exit import die_with_parent

    # killing the parent (even with SIGKILL) leaves no worker running; ``parent`` is its pid from
    # before the fork, so a parent that died before this line is noticed too
    die_with_parent(parent=parent)

    def on_batch(done, found):
        with counter.get_lock():
            counter.value += done
        if found is not None:
            with best.get_lock():
                best.value = min(best.value, found)

    try:
        queue.put(("ok", _scan(n, flag, diagonal, a, b, size, deadline, on_batch, lambda: best.value)))
    except BaseException as exc:  # report, never hang the parent
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def search(n: int, flag: Flag, ctx, *, diagonal: bool = False, batch_size: int | None = None) -> Search:
    """Run ``flag`` over every mask of size ``n`` (or ``ctx.shard`` of them) and return the first flagged.

    ``ctx`` is a :class:`proofs.theorem.Context` (``timeout``/``remaining``,
    ``progress``, ``workers``, ``shard``). With several workers the processes are
    forked, so ``flag`` may be any callable.
    """
    total = space_size(n, diagonal)
    start, stop = (0, total) if ctx.shard is None else part(0, total, *ctx.shard)
    span = getattr(ctx, "span", None)
    if span is not None:
        start, stop = int(span[0]), int(span[1])
        if not 0 <= start <= stop <= total:
            raise InputError(f"index range [{start}, {stop}) is not inside the {total:,} masks of size {n}")
    size = batch_size or default_batch(n)
    left = ctx.remaining()
    deadline = None if left is None else time.time() + left
    workers = max(1, min(ctx.workers, (stop - start + size - 1) // size or 1))
    progress = ctx.progress or (lambda done, tot: None)

    if workers == 1:
        done = [0]

        def on_batch(k, _found):
            done[0] += k
            progress(done[0], stop - start)

        checked, found, timed_out = _scan(n, flag, diagonal, start, stop, size, deadline, on_batch, lambda: stop)
        return Search(total, start, stop, checked, found, timed_out, 1)

    context = mp.get_context("fork")
    counter = context.Value("q", 0)
    best = context.Value("q", min(stop, (1 << 63) - 1))
    queue = context.Queue()
    procs = []
    pieces = [part(start, stop, w, workers) for w in range(workers)]
    if pieces[0][0] != start or pieces[-1][1] != stop or any(p[1] != q[0] for p, q in zip(pieces, pieces[1:])):
        raise RuntimeError(f"the workers' ranges {pieces} do not tile [{start}, {stop})")
    for a, b in pieces:
        procs.append(context.Process(target=_worker, args=(n, flag, diagonal, a, b, size, deadline, counter, best,
                                                           queue, os.getpid()), daemon=True))
    for p in procs:
        p.start()
    replies = []
    try:
        while len(replies) < workers:
            try:
                replies.append(queue.get(timeout=0.25))
            except Exception:  # queue.Empty: report progress and keep waiting
                if not any(p.is_alive() for p in procs) and queue.empty():
                    raise RuntimeError("an exhaustive worker died without reporting") from None
            progress(counter.value, stop - start)
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
    errors = [r[1] for r in replies if r[0] == "error"]
    if errors:
        raise RuntimeError(f"exhaustive worker failed: {errors[0]}")
    results = [r[1] for r in replies]
    founds = [f for _, f, _ in results if f is not None]
    return Search(total, start, stop, sum(c for c, _, _ in results), min(founds) if founds else None,
                  any(t for _, _, t in results), workers)

"""BD3-LM with several block sizes in one pass: the derived layout of the ``block_mixture`` family.

On ``n`` tokens and block sizes ``blocks = (L_1, …, L_m)`` (distinct, each dividing ``n``):

- ``context="block"``: for each size ``L`` in turn a segment of ``2n - L`` positions, a clean
  stream of ``n - L`` tokens (``x_u`` at ``u``, block-causal in blocks of ``L``) then a query
  stream of ``n`` ``[MASK]`` positions (query ``t`` reads the clean blocks before its own and
  the queries of its own block). Segments never attend each other. ``size = Σ (2n - L)``.
- ``context="causal"``: ONE clean causal stream of ``n - min(L)`` tokens, then one query stream
  of ``n`` positions per size (query ``t`` of size ``L`` reads the clean tokens
  ``0 … (t // L)·L - 1`` and the queries of its own block). ``size = n - min(L) + m·n``.

This module is the rule only (no catalogue *mask* entry): the task is
``block_mixture_merged:n,blocks,context`` in theory.tasks.derived_tokens.
"""

from __future__ import annotations

from hasse.theory.errors import InputError
from hasse.theory.mask import grid, name_rule  # grid: used by the examples
from hasse.theory.params import require_block, require_int_list

CONTEXTS = ("block", "causal")


def require_blocks(n, blocks) -> tuple[int, tuple[int, ...]]:
    """Check ``n >= 1`` and that the sizes are distinct positive divisors of ``n``; return both.

    >>> require_blocks(4, (2, 3))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: block = 3 does not divide n = 4
    """
    blocks = require_int_list("blocks", blocks)
    for size in blocks:
        n, _ = require_block(n, size)
    if len(set(blocks)) != len(blocks):
        raise InputError(f"block size {next(b for b in blocks if blocks.count(b) > 1)} is given twice")
    return n, blocks


def require_context(context) -> str:
    """Return ``context`` if it is ``block`` or ``causal``, else raise :class:`InputError`."""
    if context not in CONTEXTS:
        raise InputError(f"context must be one of {', '.join(CONTEXTS)}, got {context!r}")
    return context


def segments(n: int, blocks, context: str = "block") -> list[tuple[str, int, int, int]]:
    """``(kind, size L, start, length)`` of each stream in layout order (kind ``clean`` or ``query``).

    >>> segments(4, (1, 2))
    [('clean', 1, 0, 3), ('query', 1, 3, 4), ('clean', 2, 7, 2), ('query', 2, 9, 4)]
    >>> segments(4, (2, 1), "causal")
    [('clean', 1, 0, 3), ('query', 2, 3, 4), ('query', 1, 7, 4)]
    """
    n, blocks = require_blocks(n, blocks)
    context = require_context(context)
    out, start = [], 0
    if context == "causal":
        smallest = min(blocks)
        out.append(("clean", smallest, 0, n - smallest))
        start = n - smallest
    for size in blocks:
        if context == "block":
            out.append(("clean", size, start, n - size))
            start += n - size
        out.append(("query", size, start, n))
        start += n
    return out


def size(n: int, blocks, context: str = "block") -> int:
    """The layout's positions: ``Σ (2n - L)`` (block) or ``n - min(L) + m·n`` (causal).

    >>> size(4, (1, 2)), size(4, (1, 2), "causal")
    (13, 11)
    """
    kind, _, start, length = segments(n, blocks, context)[-1]
    return start + length


def make_block_mixture(n: int, blocks, context: str = "block"):
    """Return the layout's rule on ``size(n, blocks, context)`` positions.

    Query ``t`` of size ``L`` reads the clean tokens ``v < (t // L)·L`` of its clean stream and the
    queries ``t'`` of its own stream with ``t' // L == t // L``; clean ``u`` reads clean ``v`` of its
    stream with ``v // L <= u // L`` (block) or ``v <= u`` (causal).

    >>> grid(make_block_mixture(2, (1,)), 3).astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [1, 0, 1]]
    """
    parts = segments(n, blocks, context)
    clean_of = {}  # size -> (start, length) of the clean stream its queries read
    for kind, size_, start, length in parts:
        if kind == "clean":
            clean_of[size_] = (start, length)
    if context == "causal":
        clean_of = {size_: parts[0][2:] for size_ in blocks}

    def rule(q, key):
        allowed = q < 0
        for kind, size_, start, length in parts:
            q_in = (q >= start) & (q < start + length)
            u = q - start
            if kind == "clean":
                v = key - start
                k_in = (key >= start) & (key < start + length)
                reads = (v <= u) if context == "causal" else (v // size_ <= u // size_)
                allowed = allowed | (q_in & k_in & reads)
            else:
                c_start, c_length = clean_of[size_]
                v = key - c_start
                k_clean = (key >= c_start) & (key < c_start + c_length)
                k_query = (key >= start) & (key < start + length)
                block_q = u // size_
                context_part = k_clean & (v < block_q * size_)
                own_block = k_query & ((key - start) // size_ == block_q)
                allowed = allowed | (q_in & (context_part | own_block))
        return allowed

    name = "_".join(str(b) for b in blocks)
    return name_rule(rule, f"block_mixture_n{n}_b{name}_{context}")

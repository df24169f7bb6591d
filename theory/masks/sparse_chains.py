"""Sparse masks in closed form that realise block-causal, chunked and prefix-LM within L layers.

Like :mod:`theory.masks.sparse_spanners`: each mask ``M`` lies inside its target ``T`` and
``(M ∨ I)^L == T``; every mask is a closed formula in ``q``, ``k`` and the parameters (no
Python branch on a position), built on :func:`~theory.masks.sparse_spanners.chain_rule`, so
``hasse prove-mask`` proves it for every ``n`` (the modular proof: the chain as a lemma).
The diagonal is always allowed. ``layers = 1``: the target itself.

- ``sparse_block_causal:n,block,layers[,units]`` (target ``block_causal:n,block``, ``block | n``):
  ``tile = 0``, the *half stars*: ``r_A = A * block`` is the first position of block ``A``;
  inside a block every position attends ``r`` and ``r`` attends its block; across blocks,
  for a chain edge ``(A, C)`` of ``chain_rule(A, C, L)`` on block indices, ``r_A`` attends
  every position of block ``C`` and (for ``L = 2``) every position of block ``A`` attends
  ``r_C``. ``L = 2``: the walk ``k -> r_W -> q`` is the chain walk from ``C`` to ``A`` at depth 2,
  no extra hop (the last chain hop lands on ``q``); ``L >= 3``: the chain at depth ``L - 1`` on
  the ``r`` only, then ``r_A -> q`` (fewer pairs: at n = 4096, block 16, 32,416 against 44,756
  for the depth-``L`` half stars). ``units = U``, the *full lift*: the chain on units of
  ``U`` blocks, full block pairs; for FlexAttention tiles of ``T`` positions ``U = max(T, block) // block``
  (``T`` a multiple or a divisor of ``block``: FlexAttention skips the empty tiles).
- ``sparse_chunked:n,chunk,layers[,tile]`` (target ``chunked:n,chunk``): the chain formula on
  the offsets ``q % chunk``, ``k % chunk`` inside one chunk.
- ``sparse_prefix_lm:n,prefix,layers`` (target ``prefix_lm:n,prefix``): chain index
  ``a(q) = max(q - prefix + 1, 0)``: class 0 is the prefix, a half star through position 0
  (0 attends the prefix, the prefix attends 0), later positions are singleton classes: ``q``
  attends the whole prefix for a chain edge ``(a, 0)``, else ``k`` for a chain edge ``(a, c)``
  (prefix 0 is read as prefix 1, the same target, so that ``a <= q`` stays in the lemma's range).

Proved for every ``n`` (``hasse prove-mask SPEC --claim realises``, the modular proof) with the
parameter symbolic too: block (``units = 0``, L = 2, 3), chunk (``tile = 0`` and 128, L = 2, 3),
prefix (L = 2, 3), each in under 30 s; ``units >= 1`` at fixed blocks (e.g. 4, 16, 128).
"""

from __future__ import annotations

from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.masks.sparse_spanners import LAYERS, TILE, chain_rule, pick
from hasse.theory.params import BLOCK, N, require_block, require_non_negative, require_positive
from hasse.theory.spec import Entry, Param


def sparse_block_causal_rule(q, k, block, layers, units):
    """The sparse mask of ``block_causal:n,block``: half stars (``units = 0``) or the full lift, the chain on
    units of ``units`` blocks (:func:`chain_rule`'s tiles on block indices). From 3 layers on the
    stars: ``r_A`` attends block ``C`` for a chain edge at depth ``L - 1``, ``q`` only ``r`` of its own block."""
    a, c = q // block, k // block
    if layers == 1:
        return c <= a
    same = a == c  # written out, though chain_rule has it: the modular proof knows chain_rule by its lemma only
    if units:
        return same | chain_rule(a, c, layers, units)
    first_q, first_k = q % block == 0, k % block == 0
    if layers == 2:
        return (q == k) | ((first_q | first_k) & (same | chain_rule(a, c, 2, 0)))
    return (q == k) | (same & (first_q | first_k)) | (first_q & chain_rule(a, c, layers - 1, 0))


def sparse_chunked_rule(q, k, chunk, layers, tile):
    """The sparse mask of ``chunked:n,chunk``: :func:`chain_rule` on the offsets inside one chunk."""
    return (q // chunk == k // chunk) & chain_rule(q % chunk, k % chunk, layers, tile)


def sparse_prefix_lm_rule(q, k, prefix, layers):
    """The sparse mask of ``prefix_lm:n,prefix``: the chain on ``a(q) = max(q - prefix + 1, 0)``, class 0 a
    half star through position 0."""
    if layers == 1:
        return (k < prefix) | (k <= q)
    first = pick(prefix > 0, prefix, 1)  # prefix 0 is prefix 1 (key 0 is below every q); a <= q
    a = pick(q >= first, q - first + 1, 0)
    c = pick(k >= first, k - first + 1, 0)
    star = (a == 0) & (c == 0) & ((q == 0) | (k == 0))
    return (q == k) | star | ((a > 0) & chain_rule(a, c, layers, 0))


def _depth(layers, tile):
    return require_positive("layers", layers), require_non_negative("tile", tile)


def make_sparse_block_causal(block: int, layers: int, units: int = 0):
    """The rule of :func:`sparse_block_causal_rule`.

    >>> grid(make_sparse_block_causal(2, 2), 6).astype(int).tolist()[4]
    [1, 1, 1, 1, 1, 1]
    """
    block = require_positive("block", block)
    layers = require_positive("layers", layers)
    units = require_non_negative("units", units)

    def rule(q, k):
        return sparse_block_causal_rule(q, k, block, layers, units)

    return name_rule(rule, f"sparse_block_causal_l{block}_L{layers}_u{units}")


def make_sparse_chunked(chunk: int, layers: int, tile: int = 0):
    """The rule of :func:`sparse_chunked_rule`.

    >>> grid(make_sparse_chunked(3, 2), 6).astype(int).tolist()[5]
    [0, 0, 0, 1, 1, 1]
    """
    chunk = require_positive("chunk", chunk)
    layers, tile = _depth(layers, tile)

    def rule(q, k):
        return sparse_chunked_rule(q, k, chunk, layers, tile)

    return name_rule(rule, f"sparse_chunked_c{chunk}_L{layers}_t{tile}")


def make_sparse_prefix_lm(prefix: int, layers: int):
    """The rule of :func:`sparse_prefix_lm_rule`.

    >>> grid(make_sparse_prefix_lm(2, 2), 4).astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    """
    prefix = require_non_negative("prefix", prefix)
    layers = require_positive("layers", layers)

    def rule(q, k):
        return sparse_prefix_lm_rule(q, k, prefix, layers)

    return name_rule(rule, f"sparse_prefix_lm_p{prefix}_L{layers}")


def build_sparse_block_causal(n: int, block: int, layers: int, units: int = 0) -> NamedMask:
    """The sparse block-causal mask on ``n`` positions (realises ``block_causal:n,block`` within ``layers``).

    >>> int(build_sparse_block_causal(16, 4, 2).matrix.sum()), int(build_sparse_block_causal(16, 4, 1).matrix.sum())
    (68, 160)
    """
    n, block = require_block(n, block)
    rule = make_sparse_block_causal(block, layers, units)
    return named_mask(rule, n, f"sparse_block_causal:n={n},block={block},layers={int(layers)},units={int(units)}")


def build_sparse_chunked(n: int, chunk: int, layers: int, tile: int = 0) -> NamedMask:
    """The sparse chunked mask on ``n`` positions (realises ``chunked:n,chunk`` within ``layers``)."""
    n = require_positive("n", n)
    rule = make_sparse_chunked(chunk, layers, tile)
    return named_mask(rule, n, f"sparse_chunked:n={n},chunk={int(chunk)},layers={int(layers)},tile={int(tile)}")


def build_sparse_prefix_lm(n: int, prefix: int, layers: int) -> NamedMask:
    """The sparse prefix-LM mask on ``n`` positions (realises ``prefix_lm:n,prefix`` within ``layers``)."""
    n = require_positive("n", n)
    rule = make_sparse_prefix_lm(prefix, layers)
    if prefix > n:
        raise InputError(f"prefix must be between 0 and n = {n}, got {prefix}", "prefix")
    return named_mask(rule, n, f"sparse_prefix_lm:n={n},prefix={int(prefix)},layers={int(layers)}")


CHUNK = Param("chunk", "int", help="positions per chunk (chunk >= 1)")
PREFIX = Param("prefix", "int", help="length of the bidirectional prefix (0 <= prefix <= n)")
UNITS = Param("units", "int", 0, "0: half stars (fewest pairs); U: the full lift, the chain on units of U blocks "
              "(U * block = the tile: fewest tiles)")

ENTRIES = (
    Entry("sparse_block_causal", "sparse mask realising block_causal:n,block within L layers (chain on blocks)",
          (N, BLOCK, LAYERS, UNITS), build_sparse_block_causal),
    Entry("sparse_chunked", "sparse mask realising chunked:n,chunk within L layers (chain on the offsets)",
          (N, CHUNK, LAYERS, TILE), build_sparse_chunked),
    Entry("sparse_prefix_lm", "sparse mask realising prefix_lm:n,prefix within L layers (prefix star, chain)",
          (N, PREFIX, LAYERS), build_sparse_prefix_lm),
)


def main() -> None:
    print(to_text(build_sparse_block_causal(8, 2, 2)))
    print()
    print(to_text(build_sparse_prefix_lm(8, 3, 2)))


if __name__ == "__main__":
    main()

"""Sparse masks in closed form that realise causal, Butterfly and Block Two-Stream within L layers.

Each mask ``M`` here lies inside its target ``T`` (a transitive mask of the catalogue) and
``(M ∨ I)^L == T``: a Transformer of ``L`` attention layers with ``M`` moves information
along exactly the pairs of ``T`` (:func:`theory.synthesis.realises`). Every mask is a
closed formula in ``q``, ``k`` and the parameters — integer and bit operations, comparisons,
``//`` and ``%`` — with no Python branch on a position, so ``hasse prove-mask`` traces it
for every ``n``; the same functions run on numpy arrays, torch tensors and Python ints.
The diagonal is always allowed (no row is ever empty).

The chain formulas (:func:`chain_edges`, target ``c <= a`` on chain indices ``0, 1, …``,
with no ``n`` in them):

- ``layers = 1``: the target itself;
- ``layers = 2``: dyadic centre points, about ``n log2 n`` pairs. With
  ``lowbit(x) = x & -x``: ``a`` attends ``c < a`` when ``c`` is a binary prefix of ``a``
  (``c > 0`` and ``c == a & ~(lowbit(c) - 1)``) or ``a - lowbit(a) <= c``;
- ``layers = 3``: about ``n log2 log2 n`` pairs (the Alon–Schieber scheme): for each scale
  ``b`` in ``2, 4, 16, 256, 65536`` (``b = 2^(2^i)``, enough for positions below ``2^32``)
  the last position of a ``b``-block attends its block, the first position of a
  ``b``-block attends the last position of every earlier ``b``-block of its ``b²``-block,
  and every position attends the first of its ``b``-block — each only where it serves a
  walk between two ``b``-blocks of one ``b²``-block (``c + 1`` attends an even ``c``
  through scale 2).

:func:`chain_rule` lifts a chain formula to ``tile x tile`` tiles: ``(a, c)`` with
``c <= a`` is allowed when ``(a // tile, c // tile)`` is an edge of the formula on tile
indices or ``a`` and ``c`` share a tile (FlexAttention skips the tiles left empty).
The families use it stream by stream: Butterfly's forward stream on ``i``, its backward
stream mirrored, the prediction ``P_k`` the chain row of ``k`` (both ways); Block
Two-Stream's content stream on ``i``, a query the chain row of the first position of its
block, and its block's queries the chain formula on the offsets in the block. The walks
that prove each mask (the witnesses) are in :mod:`theory.spanner_formulas`.
"""

from __future__ import annotations

from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.masks import block_two_stream as _bts, butterfly as _butterfly
from hasse.theory.params import BLOCK, N, require_block, require_non_negative, require_positive
from hasse.theory.spec import Entry, Param

LAYERS = Param("layers", "int", help="depth L >= 1: realises its target within L layers (from 3 on: the 3-layer mask)")
TILE = Param("tile", "int", 0, "0: fewest pairs; B: the tile construction for B x B tiles (fewest tiles)")
SCALES = (2, 4, 16, 256, 65536)  # b = 2^(2^i): every scale layers = 3 needs below 2^32


def pick(cond, x, y):
    """``x`` where ``cond``, else ``y`` (arithmetic: works on ints, numpy arrays and torch tensors).

    >>> pick(True, 3, 5), pick(False, 3, 5)
    (3, 5)
    """
    return y + (x - y) * cond


def smear(x):
    """Every bit of ``x >= 0`` at or below its top bit set (``x < 2^64``).

    >>> smear(0b10010), smear(0)
    (31, 0)
    """
    x = x | (x >> 1)
    x = x | (x >> 2)
    x = x | (x >> 4)
    x = x | (x >> 8)
    x = x | (x >> 16)
    return x | (x >> 32)


def chain_edges(a, c, layers):
    """The chain formula of depth ``layers`` (1, 2, else 3): chain index ``a`` attends ``c`` (``c <= a``).

    >>> grid(lambda q, k: chain_edges(q, k, 2), 5).astype(int).tolist()
    [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 0, 1, 1, 0], [1, 1, 1, 1, 1]]
    """
    if layers == 1:
        return c <= a
    if layers == 2:
        prefix = (c != 0) & (c < a) & ((a & ~((c & -c) - 1)) == c)  # c is a binary prefix of a
        centre = (a - (a & -a) <= c) & (c < a)  # c in a's dyadic interval below a
        return (a == c) | prefix | centre
    out = a == c
    for b in (2, 4, 16, 256, 65536):  # SCALES, written out: the file of FormulaDesign.source() has no globals
        bb = b * b  # the hops below serve walks between two b-blocks of one b²-block:
        last = ((c | (b - 1)) == a) & (a != c) & (a % bb != bb - 1)  # a: the last of c's b-block
        across = (a % b == 0) & (c % b == b - 1) & (c < a) & (a // bb == c // bb)
        first = ((a & ~(b - 1)) == c) & (a != c) & (c % bb != 0)  # c: the first of a's b-block
        out = out | last | across | first
    return out


def chain_rule(a, c, layers, tile):
    """:func:`chain_edges`, or with ``tile >= 1`` its lift to tiles: ``c <= a`` and the tiles of ``a``, ``c``
    an edge of the formula on tile indices or the same tile.

    >>> grid(lambda q, k: chain_rule(q, k, 2, 2), 6).astype(int).tolist()[5]
    [1, 1, 1, 1, 1, 1]
    """
    if tile:
        at, ct = a // tile, c // tile
        return (c <= a) & (chain_edges(at, ct, layers) | (at == ct))
    return chain_edges(a, c, layers)


def sparse_causal_rule(q, k, layers, tile):
    """The sparse mask of ``causal``: :func:`chain_rule` on the positions (no ``n``)."""
    return chain_rule(q, k, layers, tile)


def sparse_butterfly_rule(q, k, n, layers, tile):
    """The sparse mask of ``butterfly:n`` (``F_i`` at ``i``, ``B_i`` at ``n-2+i``, ``P_k`` at ``2n-2+k``).

    ``F`` is the chain on its positions, ``B`` the chain on ``~p = -1 - p`` for its positions
    ``p`` (anti-causal, no ``n``, its tiles FlexAttention's); ``P_k`` attends ``F_c`` for the
    chain row of ``k`` and ``B`` for the chain row of ``~(n - 2 + k)`` (``B_k``'s, or just
    before ``B_1``). One :func:`chain_rule` on the pair's chain indices, chosen by the streams.
    """
    bs, ps = n - 1, 2 * n - 2
    qf, kf = q < bs, k < bs
    qb, kb = (q >= bs) & (q < ps), (k >= bs) & (k < ps)
    qp = q >= ps
    p = q - ps  # P's index
    a = pick(qf, q, pick(qb, ~q, pick(kf, p, n - 1 - q)))  # n - 1 - q = ~(position of B_p)
    c = pick(kf, k, ~k)
    kinds = (qf & kf) | (qb & kb) | (qp & kf & (k < p)) | (qp & kb & (~k < n - 1 - q))
    return (kinds & chain_rule(a, c, layers, tile)) | (q == k)


def sparse_block_two_stream_rule(q, k, n, block, layers, tile):
    """The sparse mask of ``block_two_stream:n,block`` (chain variant; ``C_i`` at ``i``, ``Q_t`` at ``n-l+t``).

    ``C`` is the chain on ``i``; ``Q_t`` attends ``C_c`` for the chain row of ``s = (t // l) * l``
    (``c < s``) and its block's queries by the chain on the offsets ``t % l``; one
    :func:`chain_rule` on the pair's chain indices, chosen by the streams.
    """
    content = n - block
    qc, kc = q < content, k < content
    s = q - q % block - content  # (t // l) * l for t = q - content (l divides content)
    a = pick(qc, q, pick(kc, s, q % block))  # t % l = q % l
    c = pick(kc, k, k % block)
    kinds = (qc & kc) | ((q >= content) & (k < s)) | ((q >= content) & (k >= content) & (q // block == k // block))
    return (kinds & chain_rule(a, c, layers, tile)) | (q == k)


def _depth(layers, tile):
    """``layers >= 1`` (from 3 on, the 3-layer formula: it realises within any more) and ``tile >= 0``."""
    return require_positive("layers", layers), require_non_negative("tile", tile)


def make_sparse_causal(layers: int, tile: int = 0):
    """The rule of :func:`sparse_causal_rule` (named ``sparse_causal_L<layers>_t<tile>``).

    >>> int(grid(make_sparse_causal(3), 8).sum())
    20
    """
    layers, tile = _depth(layers, tile)

    def rule(q, k):
        return sparse_causal_rule(q, k, layers, tile)

    return name_rule(rule, f"sparse_causal_L{layers}_t{tile}")


def make_sparse_butterfly(n: int, layers: int, tile: int = 0):
    """The rule of :func:`sparse_butterfly_rule` on ``3n - 2`` positions."""
    n = require_positive("n", n)
    layers, tile = _depth(layers, tile)

    def rule(q, k):
        return sparse_butterfly_rule(q, k, n, layers, tile)

    return name_rule(rule, f"sparse_butterfly_n{n}_L{layers}_t{tile}")


def make_sparse_block_two_stream(n: int, block: int, layers: int, tile: int = 0):
    """The rule of :func:`sparse_block_two_stream_rule` on ``2n - block`` positions."""
    n, block = require_block(n, block)
    layers, tile = _depth(layers, tile)

    def rule(q, k):
        return sparse_block_two_stream_rule(q, k, n, block, layers, tile)

    return name_rule(rule, f"sparse_block_two_stream_n{n}_l{block}_L{layers}_t{tile}")


def build_sparse_causal(n: int, layers: int, tile: int = 0) -> NamedMask:
    """The sparse causal mask on ``n`` positions (realises ``causal:n`` within ``layers``).

    >>> build_sparse_causal(4, 2).matrix.astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1]]
    """
    n = require_positive("n", n)
    rule = make_sparse_causal(layers, tile)
    return named_mask(rule, n, f"sparse_causal:n={n},layers={int(layers)},tile={int(tile)}")


def build_sparse_butterfly(n: int, layers: int, tile: int = 0) -> NamedMask:
    """The sparse Butterfly mask: ``3n - 2`` positions named as ``butterfly:n`` (realises it within ``layers``).

    >>> build_sparse_butterfly(3, 2).names
    ('F0', 'F1', 'B1', 'B2', 'P0', 'P1', 'P2')
    """
    rule = make_sparse_butterfly(n, layers, tile)
    n = int(n)
    return named_mask(rule, 3 * n - 2, f"sparse_butterfly:n={n},layers={int(layers)},tile={int(tile)}",
                      lambda: (f"{s}{i}" for s, i in _butterfly.layout(n)))


def build_sparse_block_two_stream(n: int, block: int, layers: int, tile: int = 0) -> NamedMask:
    """The sparse Block Two-Stream mask (chain variant): ``2n - block`` positions named as its target.

    >>> build_sparse_block_two_stream(4, 2, 2).names
    ('C0', 'C1', 'Q0', 'Q1', 'Q2', 'Q3')
    """
    rule = make_sparse_block_two_stream(n, block, layers, tile)
    n, block = int(n), int(block)
    spec = f"sparse_block_two_stream:n={n},block={block},layers={int(layers)},tile={int(tile)}"
    return named_mask(rule, 2 * n - block, spec, lambda: (f"{s}{i}" for s, i in _bts.layout(n, block)))


ENTRIES = (
    Entry("sparse_causal", "sparse mask realising causal within L layers (L=2: ~n log n pairs, L=3: ~n loglog n)",
          (N, LAYERS, TILE), build_sparse_causal),
    Entry("sparse_butterfly", "sparse mask realising butterfly:n within L layers (stream by stream chain formulas)",
          (N, LAYERS, TILE), build_sparse_butterfly),
    Entry("sparse_block_two_stream", "sparse mask realising block_two_stream:n,block (chain) within L layers",
          (N, BLOCK, LAYERS, TILE), build_sparse_block_two_stream),
)


def main() -> None:
    print(to_text(build_sparse_causal(8, 2)))
    print()
    print(to_text(build_sparse_butterfly(4, 2)))


if __name__ == "__main__":
    main()

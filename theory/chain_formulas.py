"""The walks, targets and recognition of the chain-lifted formulas of :mod:`theory.masks.sparse_chains`.

:func:`chain_walk` and :func:`chain_path`, the chain's walks, are described in
:mod:`theory.spanner_formulas` (which re-exports them; they live here so that both modules
use them with no import loop). Each witness maps the chain walk (:func:`chain_path` on chain
indices) to positions, as closed formulas (a prover checks them for every ``n``):
block-causal's half stars use ``r_W = W * block`` for every vertex ``W`` of the block walk
(the last hop ``r_W -> q`` is a mask edge; from 3 layers on ``r_A -> q``); its full lift a vertex in the
unit of ``q`` (``k``) is ``q`` (``k``), else the unit's first block; chunked adds the
chunk's start to the offsets' walk; prefix-LM maps chain index 0 to position 0 and
``w > 0`` to ``w + prefix - 1``. :mod:`theory.spanner_formulas` registers these entries
(``TARGETS``, ``WITNESSES``, ``formula_designs``, ``design_source``).
"""

from __future__ import annotations

import numpy as np

from hasse.theory.masks import sparse_chains as _sc
from hasse.theory.masks.sparse_spanners import pick, smear

ENTRIES = ("sparse_block_causal", "sparse_chunked", "sparse_prefix_lm")


def chain_walk(a, c, layers):
    """The walk of :func:`~theory.masks.sparse_spanners.chain_edges`: ``layers - 1`` chain indices from ``c`` to ``a``.

    >>> chain_walk(13, 2, 2), chain_walk(13, 2, 3), chain_walk(5, 4, 3), chain_walk(7, 3, 1), chain_walk(9, 2, 4)
    ((8,), (3, 12), (4, 4), (), (2, 3, 8))
    """
    if layers == 1:
        return ()
    if layers == 2:
        return (a & ~(smear(a ^ c) >> 1),)
    pad = (c,) * (layers - 3)  # from 4 layers on: the 3-layer walk after identity hops
    x = a ^ c
    b = 2 + 2 * (x >= 4) + 12 * (x >= 16) + 240 * (x >= 256) + 65280 * (x >= 65536)  # b <= x < b*b
    far = x >= 2  # else a == c, or a == c + 1 with c even: an edge (scale 2's first or last)
    return pad + (pick(far, c | (b - 1), c), pick(far, a & ~(b - 1), c))


def chain_path(a, c, layers, tile):
    """The walk of :func:`~theory.masks.sparse_spanners.chain_rule` (tiles: the tile walk, each tile index
    the end ``a`` or ``c`` in its own tile, else the tile's first position).

    >>> chain_path(13, 2, 2, 4), chain_path(13, 12, 2, 4)
    ((8,), (13,))
    """
    if not tile:
        return chain_walk(a, c, layers)
    at, ct = a // tile, c // tile
    return tuple(pick(w == at, a, pick(w == ct, c, w * tile)) for w in chain_walk(at, ct, layers))


def sparse_block_causal_witness(q, k, block, layers, units=0):
    """The walk for ``sparse_block_causal``: the block walk from ``k // block`` to ``q // block``, each vertex
    its block's first position (half stars; from 3 layers on the walk at
    depth ``L - 1``, then ``r_A``) or ``q``, ``k`` in their own unit (full lift).

    >>> sparse_block_causal_witness(13, 2, 2, 2, 0), sparse_block_causal_witness(13, 2, 2, 3, 0)
    ((8,), (8, 12))
    """
    a, c = q // block, k // block
    same = a == c  # one block: k -> r_A -> q (the chain walk is only used, and proved, for c < a)
    if units:
        walk = chain_path(a, c, layers, units)
        return tuple(pick(same, k, pick(w == a, q, pick(w == c, k, w * block))) for w in walk)
    first = q - q % block
    if layers <= 2:
        return tuple(pick(same, first, w * block) for w in chain_path(a, c, layers, 0))
    return tuple(pick(same, first, w * block) for w in chain_path(a, c, layers - 1, 0)) + (first,)


def sparse_chunked_witness(q, k, chunk, layers, tile=0):
    """The walk for ``sparse_chunked``: the offsets' chain walk, in the chunk of ``q``.

    >>> sparse_chunked_witness(13, 10, 8, 2, 0)
    (12,)
    """
    start = q - q % chunk
    return tuple(start + w for w in chain_path(q % chunk, k % chunk, layers, tile))


def sparse_prefix_lm_witness(q, k, prefix, layers):
    """The walk for ``sparse_prefix_lm``: the chain walk of ``a(q)``, ``a(k)``; index 0 is position 0.

    >>> sparse_prefix_lm_witness(9, 2, 4, 2), sparse_prefix_lm_witness(3, 1, 4, 2)
    ((7,), (0,))
    """
    first = pick(prefix > 0, prefix, 1)  # as the rule: prefix 0 is prefix 1
    a = pick(q >= first, q - first + 1, 0)
    c = pick(k >= first, k - first + 1, 0)
    return tuple(pick((w == 0) | (a == c), 0, w + first - 1) for w in chain_path(a, c, layers, 0))  # a == c: 0


def _factory(entry: str):
    make = {"sparse_block_causal": _sc.make_sparse_block_causal, "sparse_chunked": _sc.make_sparse_chunked,
            "sparse_prefix_lm": _sc.make_sparse_prefix_lm}[entry]
    fn = globals()[f"{entry}_witness"]

    def factory(n, **given):
        make(**given)  # the checks; the witness takes the rule's parameters but n
        args = dict(given)

        def witness(q_idx, kv_idx):
            return fn(q_idx, kv_idx, **args)

        witness.__name__ = f"{entry}_witness"
        return witness

    factory.__name__ = f"{entry}_witness_factory"
    return factory


WITNESSES = {e: _factory(e) for e in ENTRIES}
TARGETS = {
    "sparse_block_causal": lambda n, block, **_: f"block_causal:n={int(n)},block={int(block)}",
    "sparse_chunked": lambda n, chunk, **_: f"chunked:n={int(n)},chunk={int(chunk)}",
    "sparse_prefix_lm": lambda n, prefix, **_: f"prefix_lm:n={int(n)},prefix={int(prefix)}",
}
BUILD = {"sparse_block_causal": _sc.build_sparse_block_causal, "sparse_chunked": _sc.build_sparse_chunked,
         "sparse_prefix_lm": _sc.build_sparse_prefix_lm}
# entry -> (the rule's arguments after q, k in the written file, the file's extra constants)
SOURCE = {"sparse_block_causal": ("BLOCK, L, UNITS", ("block", "units")), "sparse_chunked": ("CHUNK, L, B", ("chunk",)),
          "sparse_prefix_lm": ("PREFIX, L", ("prefix",))}


def tiles_of(entry: str, params: dict, block: int, size: int) -> list[dict]:
    """The tile parameters :func:`~theory.spanner_formulas.formula_designs` tries for ``block x block`` tiles:
    the pairs construction, and the tile one where ``block`` is below the size (block-causal: its units of
    ``max(block, l) // l`` blocks, where ``block`` is a multiple or a divisor of ``l``)."""
    if entry == "sparse_prefix_lm":
        return [{}]
    if entry != "sparse_block_causal":
        return [{"tile": 0}] + ([{"tile": block}] if block < size else [])
    l_block = params["block"]
    aligned = block < size and (block % l_block == 0 or l_block % block == 0)
    return [{"units": 0}] + ([{"units": max(block, l_block) // l_block}] if aligned else [])


def candidates(target: np.ndarray) -> list[tuple[str, dict, str]]:
    """``(entry, params, target spec)`` for the chain targets whose pair counts match ``target`` (the caller
    compares the arrays). Block-causal and chunked: the size of the class of position 0 (the first row's count,
    resp. the first column's) fixes the block; prefix-LM: the first row's count fixes the prefix."""
    size, total = target.shape[0], int(np.count_nonzero(target))
    out = []
    first = int(np.count_nonzero(target[0]))
    if first >= 2 and size % first == 0 and total == size * (size + first) // 2:
        out.append(("sparse_block_causal", {"n": size, "block": first}, f"block_causal:n={size},block={first}"))
    run = int(np.count_nonzero(target[:, 0]))  # positions of chunk 0: every one attends 0
    if first == 1 and run >= 2:  # chunk 1 is the identity: nothing to lift
        full, rest = divmod(size, run)
        if total == full * run * (run + 1) // 2 + rest * (rest + 1) // 2:
            out.append(("sparse_chunked", {"n": size, "chunk": run}, f"chunked:n={size},chunk={run}"))
    prefix = first  # prefix 0 or 1 is causal: sparse_causal's
    if prefix > 1 and total == size * (size + 1) // 2 + prefix * (prefix - 1) // 2:
        out.append(("sparse_prefix_lm", {"n": size, "prefix": prefix}, f"prefix_lm:n={size},prefix={prefix}"))
    return out


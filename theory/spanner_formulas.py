"""Closed-form sparse masks as designs: their witnesses, their recognition in a target, their counts at scale.

The masks are those of :mod:`theory.masks.sparse_spanners` (catalogue entries
``sparse_causal``, ``sparse_butterfly``, ``sparse_block_two_stream``) and, registered by
:mod:`theory.chain_formulas` (their walks), of :mod:`theory.masks.sparse_chains`
(``sparse_block_causal``, ``sparse_chunked``, ``sparse_prefix_lm``). Here:

- :data:`WITNESSES`: for each entry a factory (the entry's parameters) of
  ``witness(q, k) -> (w_1, …, w_{L-1})``, the walk ``k -> w_1 -> … -> w_{L-1} -> q`` of
  ``A = M ∨ I`` for every pair of the target — closed formulas like the masks, so a
  prover can check them for every ``n``. :func:`chain_walk` is the chain's: for ``L = 2``
  the binary prefix ``c = a & ~(smear(a ^ c) >> 1)`` of ``a`` at the top bit where ``a``
  and ``c`` differ; for ``L = 3`` the scale ``b`` with ``b <= a ^ c < b²`` and the walk
  through the last position of ``c``'s ``b``-block and the first of ``a``'s.
  :func:`chain_path` lifts it to tiles (the tile walk, each tile index replaced by ``a``
  or ``c`` where it is their tile, else by the tile's first position); a family maps
  chain positions to its streams (a chain position equal to the row's end is the
  querying position itself);
- :data:`TARGETS`: each entry's target spec; :func:`formula_designs`: every formula
  whose target equals a given matrix, at its cheapest depth, as :class:`FormulaDesign`
  (with :meth:`FormulaDesign.source`, a standalone FlexAttention mask_mod file);
- :func:`formula_counts` (:mod:`theory.spanner_counts`): pairs and tiles without a grid;
- :func:`chain_lower_bound`: the proved 2-hop lower bound for the chain.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np

from hasse.theory import chain_formulas as _cf
from hasse.theory.catalog import build_mask
from hasse.theory.chain_formulas import chain_path, chain_walk
from hasse.theory.masks import sparse_spanners as _ss
from hasse.theory.masks.sparse_spanners import pick
from hasse.theory.spanner_counts import formula_counts
from hasse.theory.synthesis import BLOCK, check_target, pair_cost, tile_cost

ENTRIES = ("sparse_causal", "sparse_butterfly", "sparse_block_two_stream")


def sparse_causal_witness(q, k, layers, tile):
    """The walk for ``sparse_causal``: :func:`chain_path` on the positions."""
    return chain_path(q, k, layers, tile)


def sparse_butterfly_witness(q, k, n, layers, tile):
    """The walk for ``sparse_butterfly:n``: the chain walk of the stream pair, mapped to positions.

    ``P_k`` reading ``F_j``: the chain walk from ``j`` to ``k``; its indices below ``k`` are
    ``F`` positions, one equal to ``k`` is ``P_k`` itself (``B`` the same on ``~position``).
    """
    bs, ps = n - 1, 2 * n - 2
    qf, kf = q < bs, k < bs
    qb = (q >= bs) & (q < ps)
    top = pick(qf, q, pick(qb, ~q, pick(kf, q - ps, n - 1 - q)))  # the chain indices of the mask's rule
    walk = chain_path(top, pick(kf, k, ~k), layers, tile)
    ahead = k < ps  # P's key is F or B (else P_k itself: every hop stays)
    return tuple(pick(qf, w, pick(qb, ~w, pick((w < top) & ahead, pick(kf, w, ~w), q))) for w in walk)


def sparse_block_two_stream_witness(q, k, n, block, layers, tile):
    """The walk for ``sparse_block_two_stream:n,block``: ``C`` the chain's; ``Q_t`` reading ``C_j`` the chain
    walk from ``j`` to ``s = (t // l) * l`` (``s`` itself is ``Q_t``); inside a block, the walk of the offsets."""
    content = n - block
    qc, kc = q < content, k < content
    s = q - q % block - content
    top = pick(qc, q, pick(kc, s, q % block))
    walk = chain_path(top, pick(kc, k, k % block), layers, tile)
    return tuple(pick(qc, w, pick(kc, pick(w < s, w, q), q - q % block + w)) for w in walk)


def _witness_factory(entry: str) -> Callable:
    fn = {"sparse_causal": sparse_causal_witness, "sparse_butterfly": sparse_butterfly_witness,
          "sparse_block_two_stream": sparse_block_two_stream_witness}[entry]
    make = {"sparse_causal": _ss.make_sparse_causal, "sparse_butterfly": _ss.make_sparse_butterfly,
            "sparse_block_two_stream": _ss.make_sparse_block_two_stream}[entry]

    def factory(n: int, layers: int, tile: int = 0, **block):
        make(layers=layers, tile=tile, **({} if entry == "sparse_causal" else {"n": n}), **block)  # the checks
        args = {} if entry == "sparse_causal" else {"n": n, **block}  # as given: ints, or symbolic when traced

        def witness(q_idx, kv_idx):
            return fn(q_idx, kv_idx, layers=layers, tile=tile, **args)

        witness.__name__ = f"{entry}_witness"
        return witness

    factory.__name__ = f"{entry}_witness_factory"
    return factory


WITNESSES: dict[str, Callable] = {**{e: _witness_factory(e) for e in ENTRIES}, **_cf.WITNESSES}

TARGETS: dict[str, Callable[..., str]] = {
    "sparse_causal": lambda n, **_: f"causal:n={int(n)}",
    "sparse_butterfly": lambda n, **_: f"butterfly:n={int(n)}",
    "sparse_block_two_stream": lambda n, block, **_: f"block_two_stream:n={int(n)},block={int(block)},variant=chain",
    **_cf.TARGETS,
}


def chain_lower_bound(n: int) -> int:
    """A proved lower bound on the pairs of any mask realising ``causal:n`` within 2 layers.

    ``g(1) = 0``, ``g(n) = g(floor(n/2)) + g(ceil(n/2)) + floor(n/2)``. Proof: split the chain
    into its first half ``P`` (``floor(n/2)`` positions) and the rest ``R``. Every ``k`` in
    ``P`` reaches every ``q`` in ``R`` by an edge ``(q, k)`` or a walk ``k -> c -> q``; the
    crossing edges (query in ``R``, key in ``P``) are disjoint from the edges inside each
    half, which realise the half's own chain within 2 layers (a walk between two positions
    of a half stays inside the half, the target being causal). Suppose some ``k0`` in ``P``
    has no crossing edge out of it (no ``q`` in ``R`` attends ``k0``) and some ``q0`` in ``R``
    has none into it. Then ``k0`` reaches ``q0`` by ``k0 -> c -> q0`` with ``c`` in ``P``
    (``q0`` attends ``c``: a crossing edge into ``q0``) or ``c`` in ``R`` (``c`` attends ``k0``:
    a crossing edge out of ``k0``) — a contradiction. So every ``k`` in ``P`` has a
    crossing edge, or every ``q`` in ``R`` has one: at least ``min(|P|, |R|) = floor(n/2)``.

    >>> [chain_lower_bound(n) for n in (1, 2, 3, 4, 8)], chain_lower_bound(4096)
    ([0, 1, 2, 4, 12], 24576)
    """
    return _g(int(n))


def chain_cover_bound(target) -> tuple[int, list[int]]:
    """A proved lower bound on the pairs of any mask realising ``target`` within 2 layers, from its chains.

    A *down-closed chain* is a set ``S = D(p)`` (the positions ``p`` depends on in ``T``) that is totally
    ordered with no two positions equivalent. A walk between two positions of ``S`` stays inside
    ``S`` (each intermediate ``c`` has ``T[b, c]`` for the upper end ``b``, so ``c`` is in ``D(b)``,
    inside ``S``), so the edges of ``M`` inside ``S`` realise the chain ``S`` within 2 layers: at
    least ``chain_lower_bound(|S|)`` of them. Edges inside disjoint sets are disjoint, so the bound
    is the sum over disjoint down-closed chains, taken greedily, longest first. ``D(p)`` is such a
    chain iff no position of it has an equivalent and the sum over ``a`` in ``D(p)`` of ``|D(a)|`` is
    ``m(m + 1) / 2``, ``m = |D(p)|`` (in a partial order on ``m`` elements the comparable ordered
    pairs number ``m(m + 1) / 2`` exactly when all are comparable). Returns the bound and the chains' sizes.

    >>> chain_cover_bound(np.tril(np.ones((8, 8), dtype=bool)))
    (12, [8])
    >>> chain_cover_bound(np.kron(np.eye(2, dtype=bool), np.tril(np.ones((4, 4), dtype=bool))))
    (8, [4, 4])
    """
    t = np.asarray(target, dtype=bool)
    down = t.sum(axis=1).astype(np.float64)  # |D(a)|
    twin = ((t & t.T).sum(axis=1) > 1).astype(np.float64)  # a has an equivalent position
    tf = t.astype(np.float64)  # float64 products of 0/1 and counts: exact below 2^53
    chain = ((tf @ down) == down * (down + 1) / 2) & ((tf @ twin) == 0)
    used = np.zeros(t.shape[0], dtype=bool)
    sizes = []
    for p in sorted(np.flatnonzero(chain), key=lambda p: -down[p]):
        members = t[p]
        if not (members & used).any():
            used |= members
            sizes.append(int(down[p]))
    return sum(_g(s) for s in sizes), sizes


@lru_cache(maxsize=None)
def _g(n: int) -> int:
    return 0 if n <= 1 else _g(n // 2) + _g(n - n // 2) + n // 2


_BUILD = {"sparse_causal": _ss.build_sparse_causal, "sparse_butterfly": _ss.build_sparse_butterfly,
          "sparse_block_two_stream": _ss.build_sparse_block_two_stream}


@dataclass(frozen=True)
class FormulaDesign:
    """One closed-form mask for a target: ``mask`` (with the diagonal) realises ``target_spec`` within ``layers``."""

    spec: str  # "sparse_butterfly:n=1024,layers=2,tile=128"
    target_spec: str  # "butterfly:n=1024"
    layers: int  # the formula's own depth
    mask: np.ndarray = field(repr=False, compare=False)  # (size, size) bool, the diagonal included
    pairs: int  # off-diagonal allowed entries
    tiles: tuple[int, int]  # (full, partial) tiles of ``mask`` (diagonal included) for ``block``
    block: int = BLOCK
    entry: str = ""
    params: tuple = ()  # (name, value) pairs of the entry's parameters

    def source(self) -> str:
        """A standalone FlexAttention mask_mod file for this mask: ``mask_mod(b, h, q_idx, kv_idx)`` and
        ``witness(q_idx, kv_idx)``, plain Python (ints, numpy arrays or torch tensors), no imports."""
        return design_source(self.entry, dict(self.params), self.spec, self.target_spec)


def design_source(entry: str, params: dict, spec: str, target_spec: str) -> str:
    """The text of :meth:`FormulaDesign.source` for ``entry`` at ``params`` (n, layers, tile, block)."""
    from hasse.theory import spanner_formulas as here

    cf = _cf
    chain = entry in cf.ENTRIES
    rules, walks = (cf._sc, cf) if chain else (_ss, here)
    helpers = [_ss.pick, _ss.smear, _ss.chain_edges, _ss.chain_rule, getattr(rules, f"{entry}_rule"),
               chain_walk, chain_path, getattr(walks, f"{entry}_witness")]
    args, extra = cf.SOURCE[entry] if chain else ({"sparse_causal": "L, B", "sparse_butterfly": "N, L, B",
                                                   "sparse_block_two_stream": "N, BLOCK, L, B"}[entry], ())
    lines = [f'"""FlexAttention mask_mod {spec}: realises {target_spec} within {params["layers"]} layers.',
             "",
             "Generated by hasse (theory/spanner_formulas.py). mask_mod allows the diagonal; witness(q, k) gives the",
             "positions of the walk k -> w_1 -> ... -> q through the mask for every pair (q, k) of the target.",
             '"""', "",
             f"N = {int(params['n'])}  # tokens",
             f"L = {int(params['layers'])}  # layers"]
    if "tile" in params or not chain:
        lines.append(f"B = {int(params.get('tile', 0))}  # tile of the construction (0: the pairs construction)")
    if entry == "sparse_block_two_stream":
        lines.append(f"BLOCK = {int(params['block'])}  # the block l")
    lines += [f"{name.upper()} = {int(params[name])}  # the target's {name}" for name in extra]
    for fn in helpers:
        lines += ["", "", inspect.getsource(fn).rstrip()]
    lines += ["", "", "def mask_mod(b, h, q_idx, kv_idx):", f"    return {entry}_rule(q_idx, kv_idx, {args})",
              "", "", "def witness(q_idx, kv_idx):", f"    return {entry}_witness(q_idx, kv_idx, {args})", ""]
    return "\n".join(lines)


def _design(entry: str, params: dict, target_spec: str, block: int) -> FormulaDesign:
    built = {**_BUILD, **_cf.BUILD}[entry](**params)
    mask = built.matrix
    off_diagonal = pair_cost(mask) - mask.shape[0]  # every mask here has its diagonal
    return FormulaDesign(built.spec, target_spec, int(params["layers"]), mask, off_diagonal,
                         tile_cost(mask, block), block, entry, tuple(params.items()))


def _candidates(target: np.ndarray) -> list[tuple[str, dict, str]]:
    """``(entry, params, target spec)`` of every formula whose target equals ``target``; cheap tests first."""
    size, total = target.shape[0], int(np.count_nonzero(target))
    out = []
    if total == size * (size + 1) // 2:
        out.append(("sparse_causal", {"n": size}, f"causal:n={size}"))
    if (size + 2) % 3 == 0:
        n = (size + 2) // 3
        if total == 2 * n * n - n:
            out.append(("sparse_butterfly", {"n": n}, f"butterfly:n={n}"))
    for block in range(1, size + 1):
        if (size + block) % 2:
            continue
        n = (size + block) // 2
        if n % block:
            continue
        content, blocks = n - block, n // block
        count = content * (content + 1) // 2 + block * block * blocks * (blocks - 1) // 2 \
            + blocks * block * (block + 1) // 2
        if total == count:
            out.append(("sparse_block_two_stream", {"n": n, "block": block},
                        f"block_two_stream:n={n},block={block},variant=chain"))
    out += _cf.candidates(target)
    return [c for c in out if np.array_equal(build_mask(c[2]).matrix, target)]


def formula_designs(target, layers: int, cost: str = "pairs", block: int = BLOCK) -> list[FormulaDesign]:
    """Every closed-form mask whose target equals ``target``, each construction at its cheapest depth <= ``layers``.

    For each matching entry: the pairs construction (``tile=0``) and, where ``block`` is below
    the size, the tile construction for ``block x block`` tiles, each at the depth ``1 … min(layers, 3)``
    cheapest for ``cost`` (``"pairs"``; ``"tiles"``: full + partial tiles of the mask as written,
    then pairs; ties: the smaller depth). Masks equal to one listed before are left out
    (``block_two_stream:n,block=n`` is ``causal:n``). Sorted by ``cost``.

    >>> [(d.spec, d.pairs, d.tiles) for d in formula_designs(np.tril(np.ones((64, 64), dtype=bool)), 3, "pairs", 8)]
    [('sparse_causal:n=64,layers=3,tile=0', 206, (0, 18)), ('sparse_causal:n=64,layers=3,tile=8', 992, (12, 8))]
    """
    target = check_target(target)
    from hasse.theory.synthesis import _check_layers

    layers = min(_check_layers(layers), 3)
    if cost not in ("pairs", "tiles"):
        from hasse.theory.errors import InputError

        raise InputError(f"cost must be pairs or tiles, got {cost!r}")

    def key(d: FormulaDesign):
        return (d.pairs,) if cost == "pairs" else (sum(d.tiles), d.pairs)

    out: list[FormulaDesign] = []
    for entry, params, target_spec in _candidates(target):
        for tiling in _cf.tiles_of(entry, params, block, target.shape[0]):
            best = None
            for depth in range(1, layers + 1):
                d = _design(entry, {**params, "layers": depth, **tiling}, target_spec, block)
                if best is None or key(d) < key(best):
                    best = d
            if not any(np.array_equal(best.mask, o.mask) for o in out):
                out.append(best)
    return sorted(out, key=key)


__all__ = ["ENTRIES", "FormulaDesign", "TARGETS", "WITNESSES", "chain_lower_bound", "chain_path", "chain_walk",
           "design_source", "formula_counts", "formula_designs"]


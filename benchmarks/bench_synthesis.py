"""Synthesized masks against the dense mask and the hand-made sparse patterns: pairs, tiles and FlexAttention time, in one run.

For the causal chain at n = 1,024 … 131,072 positions and L = 2, 3, 4, 8 layers:

* *formula*: ``theory.spanner_formulas.formula_counts("sparse_causal", …)``, the closed-form
  masks of the catalogue (``tile=0``: the pairs construction; ``tile=128``: the tile
  construction; from L = 3 on the 3-layer mask);
* *chain*: ``theory.spanners.chain`` (the recursive construction; its pairs by
  ``chain_pairs``, its tiles from its edge list ``_chain_edges``);
* *dense*: the causal mask (the one realisation within 1 layer);
* the hand-made patterns of ``theory.handmade`` at the same depth, each at the cheapest
  parameter that realises the chain (``chain_handmade``, formulas: no n x n grid).

Pairs are off-diagonal; tiles are the non-empty 128 x 128 tiles (full + partial, as
``create_block_mask`` counts them) of each mask as written for a kernel, diagonal
included. Ratios are "that many times the synthesized mask's". Butterfly and Block
Two-Stream rows: the formula against their dense masks (``formula_counts`` at L = 1).

FlexAttention: the forward time of ``flex_attention`` at n = 4,096 (1 batch, 1 head, head
dim 64, float32), the BlockMask built by ``create_block_mask`` from each mask's mask_mod
(a lookup in the mask's bool tensor, the same function for every mask), eager and
``torch.compile``-d, median of ``--repeats`` runs after one warm-up; each output is checked
against SDPA with the same boolean mask.

    python -m benchmarks.bench_synthesis                 # everything (several minutes on 2 cores)
    python -m benchmarks.bench_synthesis --quick         # n = 1,024 and 4,096, L = 2, 3; flex at n = 1,024
    python -m benchmarks.bench_synthesis --device cuda   # the FlexAttention part on CUDA (skipped without one)
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from benchmarks._timing import bench_parser, print_header, write_rows
from hasse.theory.catalog import build_mask
from hasse.theory.handmade import PATTERNS, chain_handmade, dilated_offsets, log_offsets, offsets_mask, \
    window_global_mask
from hasse.theory.spanners import _chain_edges, chain, chain_pairs
from hasse.theory.synthesis import pair_cost, tile_cost

SIZES = (1024, 4096, 16384, 65536, 131072)
DEPTHS = (2, 3, 4, 8)
BLOCK = 128
SHORT = {"window+global": "w+g", "dilated": "dilated", "log-sparse": "log"}


def _formula_counts():
    """``formula_counts`` of the FORMULAS module, or None where it is not there."""
    try:
        from hasse.theory.spanner_formulas import formula_counts
    except ImportError:  # pragma: no cover - the module of another part of issue 24
        return None
    return formula_counts


def dense_causal(n: int, block: int) -> tuple[int, int, int]:
    """``(pairs, full, partial)`` of the causal mask with its diagonal (``block`` divides ``n``)."""
    assert n % block == 0, (n, block)
    t = n // block
    return n * (n - 1) // 2, t * (t - 1) // 2 + (t if block == 1 else 0), 0 if block == 1 else t


def chain_tiles(n: int, layers: int, block: int) -> tuple[int, int]:
    """``(full, partial)`` tiles of ``spanners.chain(n, layers)`` with its diagonal, from its edge list."""
    q, k = _chain_edges(layers, n)
    t = -(-n // block)
    idx = np.concatenate([q // block * t + k // block, np.arange(n) // block * (t + 1)])  # edges + diagonal
    counts = np.bincount(idx, minlength=t * t)
    whole = np.ones(t, dtype=bool) if n % block == 0 else np.arange(t) < t - 1
    size = block * block
    full = (counts == size) & (whole[:, None] & whole[None, :]).ravel()
    return int(full.sum()), int(((counts > 0) & ~full).sum())


def check_counts(n: int, depths, block: int) -> None:
    """The counts at scale against the grid at ``n``: chain tiles, the formulas, the hand-made patterns."""
    counts = _formula_counts()
    eye = np.eye(n, dtype=bool)
    for layers in depths:
        c = chain(n, layers).mask
        assert (pair_cost(c), tile_cost(c | eye, block)) == (chain_pairs(n, layers), chain_tiles(n, layers, block))
        for tile in (0, block) if counts is not None else ():
            m = build_mask(f"sparse_causal:n={n},layers={layers}" + (f",tile={tile}" if tile else "")).matrix
            assert counts("sparse_causal", n, layers, block, tile=tile) == (pair_cost(m) - n, *tile_cost(m, block))
        for h in flex_masks(n, (layers,))[1:]:
            assert h[2].diagonal().all()
    assert dense_causal(n, block) == (n * (n - 1) // 2, *tile_cost(np.tril(np.ones((n, n), dtype=bool)), block))


def _cell(value, base) -> str:
    if value is None:
        return "-"
    return f"{value / base:.2f}x" if base else "inf"


def causal_rows(sizes, depths, block: int):
    """The causal chain: one row per (n, L) with every mask's pairs and tiles."""
    counts = _formula_counts()
    rows = []
    for n in sizes:
        dense = dense_causal(n, block)
        for layers in depths:
            print(f"  causal n={n} L={layers} ...", file=sys.stderr, flush=True)
            row = {"n": n, "layers": layers, "dense": {"pairs": dense[0], "tiles": list(dense[1:])}}
            if counts is not None:
                for tile in (0, block):
                    p, f, part = counts("sparse_causal", n, layers, block, tile=tile)
                    row[f"formula_tile{tile}"] = {"pairs": p, "tiles": [f, part]}
            row["chain"] = {"pairs": chain_pairs(n, layers), "tiles": list(chain_tiles(n, layers, block))}
            for h in chain_handmade(n, layers, block):
                row[h.name] = {"parameter": h.parameter, "pairs": h.pairs, "tiles": list(h.tiles),
                               "realises": h.realises, "depth": h.depth}
            rows.append(row)
    return rows


def _tiles(entry) -> int:
    return sum(entry["tiles"])


def print_causal(rows) -> None:
    has_formula = "formula_tile0" in rows[0]
    base = "formula_tile0" if has_formula else "chain"
    print(f"\nCausal chain, pairs (off-diagonal); ratios: that many times the {base} mask's pairs")
    header = (f"{'n':>7} {'L':>2} {'formula':>10} {'chain':>10} {'dense':>9} {'w+g':>8} {'dilated':>8} "
              f"{'log':>9}  cheapest hand-made parameters")
    print_header(header)
    for r in rows:
        b = r[base]["pairs"]
        f = r["formula_tile0"]["pairs"] if has_formula else None
        hand = [_cell(r[name]["pairs"], b) if r[name]["realises"] else f"(L={r[name]['depth']})" for name in PATTERNS]
        params = ", ".join(f"{SHORT[name]} {r[name]['parameter']}" for name in PATTERNS[:2])
        print(f"{r['n']:>7} {r['layers']:>2} {f if f is not None else '-':>10} {r['chain']['pairs']:>10} "
              f"{_cell(r['dense']['pairs'], b):>9} {hand[0]:>8} {hand[1]:>8} {hand[2]:>9}  {params}")
    base = "formula_tile128" if has_formula else "chain"
    print(f"\nCausal chain, non-empty {BLOCK} x {BLOCK} tiles (full + partial, diagonal included); "
          f"ratios: that many times the {base} mask's tiles")
    header = (f"{'n':>7} {'L':>2} {'formula tile':>12} {'(full)':>7} {'formula':>8} {'chain':>8} {'dense':>9} "
              f"{'w+g':>8} {'dilated':>8} {'log':>9}")
    print_header(header)
    for r in rows:
        b = _tiles(r[base])
        ft = r.get("formula_tile128")
        hand = [_cell(_tiles(r[name]), b) if r[name]["realises"] else f"(L={r[name]['depth']})" for name in PATTERNS]
        print(f"{r['n']:>7} {r['layers']:>2} {_tiles(ft) if ft else '-':>12} {ft['tiles'][0] if ft else '-':>7} "
              f"{_cell(_tiles(r['formula_tile0']), b) if ft else '-':>8} {_cell(_tiles(r['chain']), b):>8} "
              f"{_cell(_tiles(r['dense']), b):>9} {hand[0]:>8} {hand[1]:>8} {hand[2]:>9}")


def family_rows(sizes, depths, block: int):
    """Butterfly and Block Two-Stream: the formula (pairs and tile constructions) against the dense mask."""
    counts = _formula_counts()
    if counts is None:
        return []
    rows = []
    for n in sizes:
        for entry, tokens, params, positions in (("sparse_butterfly", n // 3 + 1, {}, 3 * (n // 3 + 1) - 2),
                                                 ("sparse_block_two_stream", n // 2, {"l": 64}, n - 64)):
            print(f"  {entry} tokens={tokens} ...", file=sys.stderr, flush=True)
            dense = counts(entry, tokens, 1, block, **params)
            for layers in depths:
                pairs = counts(entry, tokens, layers, block, **params)
                tiles = counts(entry, tokens, layers, block, tile=block, **params)
                rows.append({"entry": entry, "tokens": tokens, **params, "positions": positions, "layers": layers,
                             "dense": list(dense), "formula_tile0": list(pairs), f"formula_tile{block}": list(tiles)})
    return rows


def print_families(rows, block: int) -> None:
    if not rows:
        print("\nButterfly / Block Two-Stream: skipped (theory.spanner_formulas not importable)")
        return
    print("\nButterfly and Block Two-Stream: formula vs the dense mask "
          f"(pairs: tile=0 construction; tiles: tile={block} construction)")
    header = (f"{'mask':<26} {'positions':>9} {'L':>2} {'pairs':>10} {'dense/':>8} {'tiles':>7} {'dense/':>8} "
              f"{'tile=0 tiles':>12}")
    print_header(header)
    for r in rows:
        spec = f"{r['entry'][7:]}:n={r['tokens']}" + (f",l={r['l']}" if "l" in r else "")
        d, p, t = r["dense"], r["formula_tile0"], r[f"formula_tile{block}"]
        print(f"{spec:<26} {r['positions']:>9} {r['layers']:>2} {p[0]:>10} {d[0] / p[0]:>7.1f}x {t[1] + t[2]:>7} "
              f"{(d[1] + d[2]) / (t[1] + t[2]):>7.1f}x {p[1] + p[2]:>12}")


# ---- FlexAttention ------------------------------------------------------------------------------


def flex_masks(n: int, depths=(2, 3)):
    """``(name, layers, mask with its diagonal)`` of every mask timed at ``n``."""
    eye = np.eye(n, dtype=bool)
    out = [("dense causal", 1, np.tril(np.ones((n, n), dtype=bool)))]
    for layers in depths:
        if _formula_counts() is not None:
            out.append((f"formula L={layers}", layers, build_mask(f"sparse_causal:n={n},layers={layers}").matrix))
            out.append((f"formula tile={BLOCK} L={layers}", layers,
                        build_mask(f"sparse_causal:n={n},layers={layers},tile={BLOCK}").matrix))
        out.append((f"chain L={layers}", layers, chain(n, layers).mask | eye))
        for h in chain_handmade(n, layers, BLOCK)[:2]:
            p = dict(x.split("=") for x in h.parameter.split(","))
            m = window_global_mask(n, int(p["w"]), 0 if p["g"] == "none" else int(p["g"])) \
                if h.name == "window+global" else offsets_mask(n, dilated_offsets(n, int(p["b"]), layers))
            out.append((f"{h.name} {h.parameter} L={layers}", layers, m | eye))
    depth = chain_handmade(n, 1, BLOCK)[2].depth
    out.append((f"log-sparse L={depth}", depth, offsets_mask(n, log_offsets(n)) | eye))
    return out


def _median(fn, repeats: int, sync) -> float:
    fn()  # warm-up
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def flex_rows(n: int, device: str, repeats: int, compiled: bool, threads: int):
    """Forward times of every mask of :func:`flex_masks`, eager and compiled, with the SDPA check."""
    import warnings

    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    warnings.filterwarnings("ignore", message=".*flex_attention called without torch.compile.*")
    torch.set_num_threads(threads)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, n, 64, generator=gen).to(device) for _ in range(3))
    holder = torch.zeros(n, n, dtype=torch.bool, device=device)

    def mask_mod(b, h, q_idx, kv_idx):  # one function for every mask: its tensor is refilled in place
        return holder[q_idx, kv_idx]

    fast = torch.compile(flex_attention) if compiled else None
    create_block_mask(mask_mod, 1, 1, n, n, device=device, BLOCK_SIZE=BLOCK)  # warm-up: the first call's set-up
    rows = []
    for name, layers, mask in flex_masks(n):
        print(f"  flex {name} ...", file=sys.stderr, flush=True)
        holder.copy_(torch.from_numpy(mask).to(device))
        start = time.perf_counter()
        bm = create_block_mask(mask_mod, 1, 1, n, n, device=device, BLOCK_SIZE=BLOCK)
        build_s = time.perf_counter() - start
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=holder)
        out = flex_attention(q, k, v, block_mask=bm)
        row = {"mask": name, "layers": layers, "pairs": pair_cost(mask) - n, "tiles": list(tile_cost(mask, BLOCK)),
               "block_mask_s": build_s, "eager_s": _median(lambda: flex_attention(q, k, v, block_mask=bm), repeats, sync),
               "eager_error": float((out - ref).abs().max())}
        if fast is not None:
            row["compiled_s"] = _median(lambda: fast(q, k, v, block_mask=bm), repeats, sync)
            row["compiled_error"] = float((fast(q, k, v, block_mask=bm) - ref).abs().max())
        rows.append(row)
    return rows


def print_flex(rows, n: int, device: str) -> None:
    print(f"\nFlexAttention forward at n = {n} on {device} (1 head, head dim 64, float32, B = {BLOCK}); "
          "ratios: that many times the dense causal mask's time")
    header = (f"{'mask':<34} {'L':>3} {'pairs':>9} {'tiles':>6} {'build s':>8} {'eager s':>8} {'ratio':>6} "
              f"{'compiled s':>10} {'ratio':>6} {'max err':>8}")
    print_header(header)
    dense = rows[0]
    for r in rows:
        comp = r.get("compiled_s")
        comp_s, comp_ratio = ("-", "-") if comp is None else (f"{comp:.4f}", f"{comp / dense['compiled_s']:.2f}")
        print(f"{r['mask']:<34} {r['layers']:>3} {r['pairs']:>9} {sum(r['tiles']):>6} {r['block_mask_s']:>8.3f} "
              f"{r['eager_s']:>8.3f} {r['eager_s'] / dense['eager_s']:>6.2f} {comp_s:>10} {comp_ratio:>6} "
              f"{max(r['eager_error'], r.get('compiled_error', 0.0)):>8.1e}")


def main(argv=None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="n = 1,024 and 4,096, L = 2, 3; flex at n = 1,024")
    parser.add_argument("--sizes", type=int, nargs="+")
    parser.add_argument("--depths", type=int, nargs="+")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--flex-n", type=int)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-flex", action="store_true")
    parser.add_argument("--no-compile", action="store_true", help="time flex_attention eager only")
    args = parser.parse_args(argv)
    sizes = args.sizes or ((1024, 4096) if args.quick else SIZES)
    depths = args.depths or ((2, 3) if args.quick else DEPTHS)
    flex_n = args.flex_n or (1024 if args.quick else 4096)
    start = time.perf_counter()
    check_counts(min(sizes), depths, BLOCK)
    print(f"counts at scale checked against the grid at n = {min(sizes)}", flush=True)
    result = {"block": BLOCK, "causal": causal_rows(sizes, depths, BLOCK)}
    print_causal(result["causal"])
    result["families"] = family_rows(sizes, depths, BLOCK)
    print_families(result["families"], BLOCK)
    counted = time.perf_counter() - start
    if not args.no_flex:
        import torch

        if args.device == "cuda" and not torch.cuda.is_available():
            print("\nFlexAttention on cuda: skipped (no CUDA device here)")
        else:
            result["flex"] = flex_rows(flex_n, args.device, args.repeats, not args.no_compile, args.threads)
            result["flex_device"], result["torch"] = args.device, torch.__version__
            print_flex(result["flex"], flex_n, args.device)
    result["seconds"] = {"counts": counted, "total": time.perf_counter() - start}
    print(f"\ncounts {counted:.1f} s, total {result['seconds']['total']:.1f} s")
    write_rows(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

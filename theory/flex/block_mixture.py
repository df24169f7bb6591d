"""FlexAttention mask_mod for BD3-LM with several block sizes in one pass (hasse derive block_mixture).

Layout on n tokens, block sizes blocks = (L_1, …, L_m) (distinct, each dividing n):

- context='block': per size L in turn, n - L clean tokens (x_u at position id u, block-causal in
  blocks of L) then n [MASK] queries (query t predicts x_t); query t reads the clean tokens of
  the blocks before its own and the queries of its own block; sizes never see each other;
- context='causal': one clean causal stream of n - min(L) tokens, then n queries per size;
  query t of size L reads clean 0 … (t // L)*L - 1 and the queries of its own block.

Standalone: no import of hasse, torch only inside the factory.
"""


def positions(n, blocks, context="block"):
    """Q_LEN = KV_LEN for create_block_mask."""
    if context == "causal":
        return n - min(blocks) + len(blocks) * n
    return sum(2 * n - size for size in blocks)


def make_mask_mod(n, blocks, context="block"):
    """mask_mod(b, h, q_idx, kv_idx) of the layout above; blocks a tuple of ints."""
    if context not in ("block", "causal"):
        raise ValueError(f"context must be 'block' or 'causal', got {context!r}")
    streams = []  # (size, clean start, clean length, query start)
    at = 0
    if context == "causal":
        at = n - min(blocks)
    for size in blocks:
        if context == "block":
            streams.append((size, at, n - size, at + n - size))
            at = at + 2 * n - size
        else:
            streams.append((size, 0, n - min(blocks), at))
            at = at + n

    def clean_part(q_idx, kv_idx, size, clean, length):
        q_clean = (q_idx >= clean) & (q_idx < clean + length)
        kv_clean = (kv_idx >= clean) & (kv_idx < clean + length)
        if context == "block":  # block-causal: kv's block starts no later than q's block ends
            reads = kv_idx - clean < ((q_idx - clean) // size + 1) * size
        else:
            reads = kv_idx <= q_idx
        return q_clean & kv_clean & reads

    def mask_mod(b, h, q_idx, kv_idx):
        if context == "causal":  # one clean stream, read by every size
            allowed = clean_part(q_idx, kv_idx, 1, 0, n - min(blocks))
        else:
            allowed = q_idx < 0
        for size, clean, length, query in streams:
            if context == "block":
                allowed = allowed | clean_part(q_idx, kv_idx, size, clean, length)
            kv_clean = (kv_idx >= clean) & (kv_idx < clean + length)
            t = q_idx - query
            q_query = (t >= 0) & (t < n)
            first = (t // size) * size  # the first token of the query's block
            before = kv_clean & (kv_idx - clean < first)
            kv_t = kv_idx - query
            same_block = (kv_t >= first) & (kv_t < first + size)
            allowed = allowed | (q_query & (before | same_block))
        return allowed

    return mask_mod

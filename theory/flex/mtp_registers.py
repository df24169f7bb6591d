"""FlexAttention mask_mod for multi-token prediction with registers in one pass (hasse derive mtp).

Layout on n tokens with offsets 1 … k (1 <= k <= n - 1):

- content x_0 … x_{n-2} at positions 0 … n-2, causal; x_j predicts x_{j+1};
- for each offset d = 2 … k, n - d registers r_{i,d} (i = 0 … n-1-d) from position
  S_d = (d-1)*n - (d-1)*d/2 on: input [MASK] at position id i + d - 1, label x_{i+d};
  r_{i,d} attends the content 0 … i and itself, no other register.

positions(n, k) = k*(2n-k-1)/2. Standalone: no import of hasse, torch only inside the factory.
"""


def positions(n, k):
    """Q_LEN = KV_LEN for create_block_mask."""
    return k * (2 * n - k - 1) // 2


def make_mask_mod(n, k):
    """mask_mod(b, h, q_idx, kv_idx) of the layout above, for n tokens and offsets 1 … k."""
    content = n - 1
    streams = []
    for d in range(2, k + 1):
        start = (d - 1) * n - (d - 1) * d // 2
        streams.append((start, start + n - d))

    def mask_mod(b, h, q_idx, kv_idx):
        allowed = (q_idx < content) & (kv_idx <= q_idx)  # the causal content stream
        allowed = allowed | (q_idx == kv_idx)
        for start, end in streams:
            register = (q_idx >= start) & (q_idx < end)
            allowed = allowed | (register & (kv_idx < content) & (kv_idx + start <= q_idx))
        return allowed

    return mask_mod

"""Any-order autoregression, derived two-stream attention (hasse derive any_order): a FlexAttention mask_mod.

``2n - 1`` positions for a factorisation order (``rank[i]`` = the place of token ``i`` in it):

- content ``c_p`` at ``p < n - 1`` holds the token of rank ``p`` (embedding of ``x_{order[p]}``
  at position id ``order[p]``) and attends ``c_0 … c_p``;
- query ``g_i`` at ``n - 1 + i`` holds ``[MASK]`` at position id ``i``, is trained to predict
  ``x_i``, and attends ``c_p`` for ``p < rank[i]`` and itself.

The content of the last token of the order is not there: no query reads it.

Usage::

    from torch.nn.attention.flex_attention import create_block_mask
    rank = ranks(order)                      # order: a permutation of 0 … n-1
    L = positions(n, rank)
    block_mask = create_block_mask(make_mask_mod(n, rank), None, None, L, L)
"""


def ranks(order):
    """``rank[i]``, the place of token ``i`` in ``order`` (a plain list): ``ranks([2, 0, 1]) == [1, 2, 0]``."""
    order = [int(v) for v in order]
    if sorted(order) != list(range(len(order))):
        raise ValueError(f"order must be a permutation of 0 … {len(order) - 1}, got {order}")
    rank = [0] * len(order)
    for place, token in enumerate(order):
        rank[token] = place
    return rank


def positions(n, rank=None):
    """Q_LEN = KV_LEN: ``2n - 1`` (``n - 1`` content positions, ``n`` queries)."""
    return 2 * n - 1


def make_mask_mod(n, rank):
    """The mask_mod of the derived two-stream layout for ``n`` tokens; ``rank``: a 1-D tensor or a sequence."""
    if isinstance(rank, (list, tuple)):
        import torch

        rank = torch.tensor(rank, dtype=torch.int64)
    content = n - 1

    def mask_mod(b, h, q_idx, kv_idx):
        q_query = q_idx >= content
        k_content = kv_idx < content
        token = q_idx - q_query * content  # the query's token i = q_idx - (n - 1); a content row reads rank[q_idx]
        causal = ~q_query & k_content & (kv_idx <= q_idx)
        reads = q_query & k_content & (kv_idx < rank[token])
        return causal | reads | (q_query & (q_idx == kv_idx))

    return mask_mod

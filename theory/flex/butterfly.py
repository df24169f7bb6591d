"""Butterfly (design.md §4) as a FlexAttention mask_mod factory: 3n − 2 positions for a sample of n tokens.

Streams, in this order along the sequence (``positions(n) = 3n - 2``):

- forward ``F_0 … F_{n-2}`` at ``0 … n-2`` (``F_i`` holds ``x_i``): ``F_i`` attends ``F_j`` for ``j <= i``;
- backward ``B_1 … B_{n-1}`` at ``n-1 … 2n-3`` (``B_i`` holds ``x_i``, at ``n - 2 + i``): ``B_i`` attends
  ``B_j`` for ``j >= i``;
- prediction ``P_0 … P_{n-1}`` at ``2n-2 … 3n-3`` (``P_k`` predicts ``x_k``): ``P_k`` attends ``F_j`` for
  ``j < k``, ``B_j`` for ``j > k``, and itself.

Standalone (no hasse import, torch only where FlexAttention calls it)::

    from torch.nn.attention.flex_attention import create_block_mask
    size = positions(n)
    block_mask = create_block_mask(make_mask_mod(n), None, None, size, size)
"""


def positions(n):
    """Q_LEN = KV_LEN for a sample of ``n`` tokens: ``3n - 2``."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return 3 * n - 2


def make_mask_mod(n):
    """The Butterfly mask_mod(b, h, q_idx, kv_idx) for a sample of ``n`` tokens."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    backward_start = n - 1  # the first backward position (B_1)
    predict_start = 2 * n - 2  # the first prediction position (P_0)

    def mask_mod(b, h, q_idx, kv_idx):
        q_forward = q_idx < backward_start
        q_backward = (q_idx >= backward_start) & (q_idx < predict_start)
        q_predict = q_idx >= predict_start
        k_forward = kv_idx < backward_start
        k_backward = (kv_idx >= backward_start) & (kv_idx < predict_start)
        target = q_idx - predict_start  # the token P_target predicts
        k_token_backward = kv_idx - backward_start + 1  # the token B holds
        forward = q_forward & k_forward & (kv_idx <= q_idx)
        backward = q_backward & k_backward & (kv_idx >= q_idx)
        left = q_predict & k_forward & (kv_idx < target)
        right = q_predict & k_backward & (k_token_backward > target)
        own = q_predict & (kv_idx == q_idx)
        return forward | backward | left | right | own

    return mask_mod

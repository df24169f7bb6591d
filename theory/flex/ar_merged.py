"""FlexAttention mask_mod of the ``ar`` family's merge: causal attention on ``n - 1`` positions.

Position ``p`` (``0 <= p <= n - 2``) holds ``x_p`` at position id ``p`` and predicts ``x_{p+1}``;
it attends the positions ``0 … p``. Written by `hasse derive ar --export flex`.
"""


def positions(n):
    """Q_LEN = KV_LEN for create_block_mask: ``n - 1`` (``n >= 2`` tokens)."""
    if n < 2:
        raise ValueError(f"the ar family needs n >= 2 tokens, got n = {n}")
    return n - 1


def make_mask_mod(n):
    """mask_mod(b, h, q_idx, kv_idx): ``kv_idx <= q_idx``."""
    positions(n)

    def mask_mod(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx

    return mask_mod

"""Fill-in-the-middle, derived layout (hasse derive fim): a FlexAttention mask_mod.

The sample ``x_0 … x_{n-1}`` split into prefix ``0 … start-1``, middle ``start … end-1`` and
suffix ``end … n-1`` is rearranged as prefix, suffix, middle (``mode='psm'``) or suffix,
prefix, middle (``'spm'``) and read causally on ``n - 1`` positions (the last token of the
rearranged order is never context): position ``r`` holds the ``r``-th token of that order at
its own token index as position id (no sentinel tokens) and is trained to predict the next
token of the order where that one is in the middle.

Usage::

    from torch.nn.attention.flex_attention import create_block_mask
    L = positions(n, start, end, mode)
    block_mask = create_block_mask(make_mask_mod(n, start, end, mode), None, None, L, L)
"""


def _check(n, start, end, mode):
    if mode not in ("psm", "spm"):
        raise ValueError(f"mode must be 'psm' or 'spm', got {mode!r}")
    if isinstance(n, int) and isinstance(start, int) and isinstance(end, int):
        if not (0 <= start < end <= n and start + n - end >= 1):
            raise ValueError(f"need 0 <= start < end <= n with a prefix or suffix token, got n={n}, "
                             f"start={start}, end={end}")


def positions(n, start, end, mode="psm"):
    """Q_LEN = KV_LEN: ``n - 1``."""
    _check(n, start, end, mode)
    return n - 1


def make_mask_mod(n, start, end, mode="psm"):
    """Causal attention over the rearranged order (the split and mode place the tokens, not the mask)."""
    _check(n, start, end, mode)
    if mode == "psm":
        def mask_mod(b, h, q_idx, kv_idx):
            return kv_idx <= q_idx
    else:
        def mask_mod(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx

    return mask_mod

"""Masked context: the FlexAttention mask of the MAE and masked-diffusion families (derived, issue 25).

A training sample of ``n`` tokens in their own order, some replaced by [MASK] (the masked set,
given per sample as ``masked``: a length-n 0/1 or bool tensor, nonzero = masked). Each query
attends the visible (unmasked) keys, and a masked query also attends itself; no query ever
attends another masked token. Put the loss on the masked positions only.

    from torch.nn.attention.flex_attention import create_block_mask
    mask_mod = make_mask_mod(n, masked=masked)          # masked: 0/1 per token, on the device
    block_mask = create_block_mask(mask_mod, None, None, positions(n, masked), positions(n, masked))

Standalone: torch is imported inside the factory only.
"""


def positions(n, masked=None):
    """Q_LEN = KV_LEN: the ``n`` tokens of the sample."""
    return n


def make_mask_mod(n, masked):
    """``mask_mod(b, h, q_idx, kv_idx)``: ``kv_idx`` unmasked, or ``q_idx == kv_idx``.

    ``masked``: a 1-D tensor of ``n`` flags (0/1 or bool; nonzero = masked) or a list/tuple of them.
    """
    if isinstance(masked, (list, tuple)):
        import torch

        masked = torch.tensor([int(v) for v in masked])

    def mask_mod(b, h, q_idx, kv_idx):
        key_visible = masked[kv_idx] == 0
        return key_visible | (q_idx == kv_idx)

    return mask_mod

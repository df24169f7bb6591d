"""Block Two-Stream (design.md §4) as a FlexAttention mask_mod factory: 2n − l positions, block size l | n.

Streams, in this order along the sequence (``positions(n, block) = 2n - block``):

- content ``C_0 … C_{n-l-1}`` at ``0 … n-l-1`` (``C_i`` holds ``x_i``): ``C_i`` attends ``C_j`` for ``j <= i``;
- query ``Q_0 … Q_{n-1}`` at ``n-l … 2n-l-1`` (``Q_t`` predicts ``x_t``): ``Q_t`` attends ``C_j`` when
  ``j // l < t // l`` (every earlier block's content) and ``Q_u`` of its own block (``u // l == t // l``)
  with ``u <= t`` (``variant='chain'``) or any ``u`` (``variant='clique'``). Content never attends queries.

Standalone (no hasse import, torch only where FlexAttention calls it)::

    size = positions(n, block)
    block_mask = create_block_mask(make_mask_mod(n, block, "clique"), None, None, size, size)
"""

VARIANTS = ("chain", "clique")


def _check(n, block, variant):
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    if n % block != 0:
        raise ValueError(f"block ({block}) must divide n ({n})")


def positions(n, block, variant="chain"):
    """Q_LEN = KV_LEN for ``n`` tokens in blocks of ``block``: ``2n - block``."""
    _check(n, block, variant)
    return 2 * n - block


def make_mask_mod(n, block, variant="chain"):
    """The Block Two-Stream mask_mod(b, h, q_idx, kv_idx) for ``n`` tokens, blocks of ``block``."""
    _check(n, block, variant)
    query_start = n - block  # Q_0's position: the content stream holds every block but the last

    def within_block_chain(t, u):
        return u <= t

    def within_block_clique(t, u):
        return u == u  # every query of the block

    within = within_block_clique if variant == "clique" else within_block_chain

    def mask_mod(b, h, q_idx, kv_idx):
        q_content = q_idx < query_start
        k_content = kv_idx < query_start
        t = q_idx - query_start  # the token a query predicts
        u = kv_idx - query_start
        content = q_content & k_content & (kv_idx <= q_idx)
        history = ~q_content & k_content & (kv_idx // block < t // block)
        queries = ~q_content & ~k_content & (u // block == t // block) & within(t, u)
        return content | history | queries

    return mask_mod

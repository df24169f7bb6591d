"""torch's own mask helpers: and_masks, or_masks, noop_mask (they call b.new_ones / b.new_zeros)."""

from torch.nn.attention.flex_attention import and_masks, noop_mask, or_masks


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def within(w):
    def mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < w
    return mask


def before(p):
    def mask(b, h, q_idx, kv_idx):
        return kv_idx < p
    return mask


def same_block(size):
    def mask(b, h, q_idx, kv_idx):
        return q_idx // size == kv_idx // size
    return mask


causal_window4 = and_masks(causal, within(4))
prefix_lm3 = or_masks(causal, before(3))
everything = noop_mask
all_of_nothing = and_masks()
any_of_nothing = or_masks()
chunked_causal = and_masks(causal, same_block(8))
nested = and_masks(or_masks(causal, before(2)), within(5))
block_or_causal = or_masks(same_block(4), causal)
triple_and = and_masks(causal, within(6), or_masks(within(2), before(1)))


def sliding_window_factory(w):
    return and_masks(causal, within(w))


def noop_and_causal(b, h, q_idx, kv_idx):
    return noop_mask(b, h, q_idx, kv_idx) & (kv_idx <= q_idx)


CASES = {
    "causal_window4": "equiv=correct.py:window4 dense leak",
    "prefix_lm3": "equiv=correct.py:prefix3 leak",
    "everything": "equiv=correct.py:full leak",
    "all_of_nothing": "equiv=correct.py:full",
    "any_of_nothing": "equiv=correct.py:empty",
    "chunked_causal": "equiv=correct.py:chunked8 dense leak",
    "nested": "equiv=correct.py:window4 leak",
    "block_or_causal": "equiv=correct.py:bidirectional_blocks_causal dense",
    "triple_and": "equiv=correct.py:window2 dense",
    "sliding_window_factory(3)": "equiv=correct.py:window3",
    "noop_and_causal": "equiv=correct.py:causal",
}

"""Ordinary, correct FlexAttention mask_mods (and the reference programs the other files compare with).

CASES maps a program of this file (or ``factory(args)``) to what tests/test_adversarial.py checks
(see its docstring): ``dense``, ``leak`` (causal_lm at every depth), ``equiv=REF``; options
``N=`` (the oracle's largest n), ``B=``/``H=`` (--batch/--heads), ``maybe`` (a refusal or unknown
is acceptable when the claim holds).
"""

import torch


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def causal_kv_first(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


def strict(b, h, q_idx, kv_idx):
    return kv_idx < q_idx


def anticausal(b, h, q_idx, kv_idx):
    return q_idx <= kv_idx


def diag(b, h, q_idx, kv_idx):
    return q_idx == kv_idx


def offdiag(b, h, q_idx, kv_idx):
    return q_idx != kv_idx


def full(b, h, q_idx, kv_idx):
    return q_idx >= 0


def empty(b, h, q_idx, kv_idx):
    return q_idx < 0


def window2(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 2)


def window3(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 3)


def window4(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 4)


def window4_alt(b, h, q_idx, kv_idx):
    diff = q_idx - kv_idx
    return (diff >= 0) & (diff <= 3)


def band3(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx <= 3) & (kv_idx - q_idx <= 3)


def sliding_window(w):
    def mask(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (q_idx - kv_idx < w)
    return mask


def prefix_lm(prefix):
    def mask(b, h, q_idx, kv_idx):
        return (kv_idx < prefix) | (kv_idx <= q_idx)
    return mask


def prefix3(b, h, q_idx, kv_idx):
    return (kv_idx < 3) | (kv_idx <= q_idx)


def blocks2(b, h, q_idx, kv_idx):
    return q_idx // 2 == kv_idx // 2


def blocks4(b, h, q_idx, kv_idx):
    return q_idx // 4 == kv_idx // 4


def block_causal4(b, h, q_idx, kv_idx):
    return q_idx // 4 >= kv_idx // 4


def halves_causal(b, h, q_idx, kv_idx):
    return (q_idx + 1) // 2 >= (kv_idx + 1) // 2


def chunked8(b, h, q_idx, kv_idx):
    return (q_idx // 8 == kv_idx // 8) & (kv_idx <= q_idx)


def dilated2(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((q_idx - kv_idx) % 2 == 0)


def dilated4(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx) % 4 == 0


def mod4_is_1(b, h, q_idx, kv_idx):
    return (kv_idx - q_idx) % 4 == 3


def fmod_ref(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx >= 1) & ((q_idx - kv_idx) % 4 == 1)


def sink_window(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((kv_idx == 0) | (q_idx - kv_idx < 3))


def global_first2_window(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((kv_idx < 2) | (q_idx - kv_idx < 4))


def causal_mod_blocks(b, h, q_idx, kv_idx):
    return (q_idx % 4 >= kv_idx % 4) & (q_idx // 4 == kv_idx // 4)


def mod4_order(b, h, q_idx, kv_idx):
    return (q_idx % 4) >= (kv_idx % 4)


def late_key_dropped(b, h, q_idx, kv_idx):
    # causal, except that from n = 37 on the last query loses key 0 (a length-dependent bug)
    return (kv_idx <= q_idx) & ((q_idx < 36) | (kv_idx > 0))


def bidirectional_blocks_causal(b, h, q_idx, kv_idx):
    return (q_idx // 4 == kv_idx // 4) | (kv_idx <= q_idx)


CASES = {
    "causal": "dense leak equiv=causal_kv_first",
    "causal_kv_first": "equiv=causal",
    "strict": "dense leak equiv=causal",
    "anticausal": "leak dense",
    "diag": "dense leak",
    "full": "leak dense",
    "empty": "dense leak",
    "window3": "dense leak equiv=window4",
    "window4": "equiv=window4_alt leak",
    "window4_alt": "leak",
    "band3": "leak equiv=window3",
    "sliding_window(5)": "equiv=window4 leak",
    "sliding_window(4)": "equiv=window4",
    "prefix_lm(3)": "equiv=prefix3 leak",
    "prefix3": "dense leak",
    "blocks2": "dense leak",
    "blocks4": "dense equiv=block_causal4",
    "block_causal4": "dense leak",
    "halves_causal": "dense leak",
    "chunked8": "dense leak equiv=causal",
    "dilated2": "dense leak",
    "dilated4": "dense",
    "mod4_is_1": "dense",
    "sink_window": "leak dense",
    "global_first2_window": "leak dense",
    "causal_mod_blocks": "dense equiv=chunked8",
    "late_key_dropped": "equiv=causal dense leak N=48",
    "bidirectional_blocks_causal": "dense leak",
}

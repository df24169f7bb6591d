"""Masks that read b or h: a claim must hold for every batch row given by --batch B (each on its own) and for the
union over --heads H; without --batch a mask that reads b is refused (or the statement names the b traced)."""

import torch


def full_for_b1(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (b == 1)


def short_rows_for_b1(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((q_idx < 8) | (b == 0))


def window_per_b(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 2 + b)


def b_cancels(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (b != b)


def heads_union_causal(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((h == 0) | (q_idx - kv_idx < 2))


def head_1_full(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (h == 1)


def head_windows(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 2 * (h + 1))


def b_and_h(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((q_idx - kv_idx < 3) | (b + h == 2))


CASES = {
    "full_for_b1": "leak equiv=correct.py:causal dense B=2 nobatch",
    "short_rows_for_b1": "equiv=correct.py:causal dense B=2 nobatch",
    "window_per_b": "equiv=correct.py:window2 leak dense B=2 nobatch",
    "b_cancels": "equiv=correct.py:causal leak nobatch",
    "heads_union_causal": "equiv=correct.py:causal leak H=2",
    "head_1_full": "leak equiv=correct.py:full H=2",
    "head_windows": "equiv=correct.py:window4 dense H=2",
    "b_and_h": "equiv=correct.py:causal leak B=2 H=2",
}

"""Arithmetic on bool tensors as torch does it: B + B is a logical or, B * B an and, B == 2 compares 0/1 with 2."""

import torch


def sum_eq_2(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) + (kv_idx >= q_idx)) == 2


def sum_ge_1(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) + (kv_idx >= q_idx)) >= 1


def sum_ge_2(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) + (kv_idx >= q_idx)) >= 2


def sum_of_three_eq_3(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) + (q_idx - kv_idx < 3) + (kv_idx <= q_idx)) == 3


def sum_of_longs_eq_2(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx).long() + (q_idx - kv_idx < 3).long()) == 2


def sum_of_ints_eq_2(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx).int() + (kv_idx >= q_idx).int()) == 2


def times_2(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) * 2


def times_2_eq_2(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) * 2) == 2


def times_2_eq_1(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) * 2) == 1


def bool_times_bool(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) * (q_idx - kv_idx < 3)


def bool_plus_1_eq_2(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) + 1) == 2


def bool_plus_true(b, h, q_idx, kv_idx):
    return ((q_idx > kv_idx) + True) == (q_idx >= 0)


def bool_eq_bool(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) == (kv_idx >= q_idx)


def bool_lt_bool(b, h, q_idx, kv_idx):
    return (kv_idx > q_idx) < (kv_idx >= q_idx)


def bool_xor_bool(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) ^ (kv_idx >= q_idx)


def bool_and_1(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) & 1) == 1


def bool_or_2(b, h, q_idx, kv_idx):
    return ((q_idx > kv_idx) | 2) == 3


def invert_bool(b, h, q_idx, kv_idx):
    return ~(kv_idx > q_idx)


def negated_long(b, h, q_idx, kv_idx):
    return -(q_idx >= kv_idx).long() == -1


def where_plus_bool(b, h, q_idx, kv_idx):
    return torch.where(q_idx > kv_idx, True, False) + (q_idx == kv_idx)


def sum_times_sum(b, h, q_idx, kv_idx):
    s = (q_idx >= kv_idx) + (q_idx - kv_idx < 2)
    return (s * s) == 1


def bool_sum_minus_int(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) + (q_idx - kv_idx < 2)) - 1 == 0


def count_windows(b, h, q_idx, kv_idx):
    votes = (q_idx - kv_idx < 2).long() + (q_idx - kv_idx < 4).long() + (kv_idx <= q_idx).long()
    return votes >= 3


CASES = {
    "sum_eq_2": "equiv=correct.py:diag dense leak",
    "sum_ge_1": "equiv=correct.py:full leak",
    "sum_ge_2": "equiv=correct.py:diag",
    "sum_of_three_eq_3": "equiv=correct.py:window3",
    "sum_of_longs_eq_2": "equiv=correct.py:window3 dense",
    "sum_of_ints_eq_2": "equiv=correct.py:diag",
    "times_2": "equiv=correct.py:causal maybe",
    "times_2_eq_2": "equiv=correct.py:causal leak",
    "times_2_eq_1": "equiv=correct.py:empty",
    "bool_times_bool": "equiv=correct.py:window3 dense",
    "bool_plus_1_eq_2": "equiv=correct.py:causal",
    "bool_plus_true": "equiv=correct.py:full",
    "bool_eq_bool": "equiv=correct.py:diag",
    "bool_lt_bool": "equiv=correct.py:diag",
    "bool_xor_bool": "equiv=correct.py:offdiag",
    "bool_and_1": "equiv=correct.py:causal",
    "bool_or_2": "equiv=correct.py:strict",
    "invert_bool": "equiv=correct.py:causal leak",
    "negated_long": "equiv=correct.py:causal",
    "where_plus_bool": "equiv=correct.py:causal",
    "sum_times_sum": "equiv=correct.py:causal",
    "bool_sum_minus_int": "equiv=correct.py:empty",
    "count_windows": "equiv=correct.py:window2 dense",
}

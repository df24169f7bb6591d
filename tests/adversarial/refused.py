"""Programs torch (or FlexAttention's vmap) refuses to run: they cannot run at any n, so never proved."""

import numpy as np
import torch


def bool_minus_bool(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) - (kv_idx > q_idx)) == 1


def negated_bool(b, h, q_idx, kv_idx):
    return -(q_idx > kv_idx)


def minimum_with_scalar(b, h, q_idx, kv_idx):
    return torch.minimum(q_idx, 10) >= kv_idx


def maximum_with_scalar(b, h, q_idx, kv_idx):
    return torch.maximum(kv_idx, 3) <= q_idx


def np_logical_and_three(b, h, q_idx, kv_idx):
    return np.logical_and(q_idx >= kv_idx, q_idx - kv_idx < 4, q_idx >= 0)


def np_logical_and_two(b, h, q_idx, kv_idx):
    return np.logical_and(q_idx >= kv_idx, q_idx - kv_idx < 4)


def np_minimum_scalar(b, h, q_idx, kv_idx):
    return np.minimum(q_idx, 10) >= kv_idx


def abs_of_bool(b, h, q_idx, kv_idx):
    return abs(q_idx >= kv_idx)


def floordiv_of_bools(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) // (kv_idx >= 0)


def if_on_tensor(b, h, q_idx, kv_idx):
    if q_idx > kv_idx:
        return q_idx >= 0
    return q_idx == kv_idx


def chained_comparison(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx < 1000


def builtin_min(b, h, q_idx, kv_idx):
    return min(q_idx, kv_idx) == kv_idx


def builtin_max(b, h, q_idx, kv_idx):
    return max(q_idx - kv_idx, 0) == q_idx - kv_idx


def and_keyword(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) and (q_idx - kv_idx < 4)


def or_keyword(b, h, q_idx, kv_idx):
    return (q_idx == kv_idx) or (kv_idx == 0)


def not_keyword(b, h, q_idx, kv_idx):
    return not (kv_idx > q_idx)


def item_call(b, h, q_idx, kv_idx):
    return q_idx.item() >= kv_idx


def bool_of_tensor(b, h, q_idx, kv_idx):
    return torch.tensor(bool(q_idx >= kv_idx))


def negative_power(b, h, q_idx, kv_idx):
    return q_idx ** -1 >= kv_idx


def python_bool_result(b, h, q_idx, kv_idx):
    return True


def true_division(b, h, q_idx, kv_idx):
    return (q_idx / 2) >= (kv_idx / 2)


def shift_by_negative(b, h, q_idx, kv_idx):
    return (q_idx >> -1) >= kv_idx


def tolist_call(b, h, q_idx, kv_idx):
    return torch.tensor(q_idx.tolist() >= 0) & (kv_idx <= q_idx)


CASES = {
    "bool_minus_bool": "equiv=correct.py:strict dense",
    "negated_bool": "equiv=correct.py:strict",
    "minimum_with_scalar": "equiv=correct.py:causal",
    "maximum_with_scalar": "equiv=correct.py:causal",
    "np_logical_and_three": "equiv=correct.py:window4 dense",
    "np_logical_and_two": "equiv=correct.py:window4 maybe",
    "np_minimum_scalar": "equiv=correct.py:causal maybe",
    "abs_of_bool": "equiv=correct.py:causal",
    "floordiv_of_bools": "equiv=correct.py:causal",
    "if_on_tensor": "equiv=correct.py:causal dense",
    "chained_comparison": "equiv=correct.py:causal",
    "builtin_min": "equiv=correct.py:causal",
    "builtin_max": "equiv=correct.py:causal",
    "and_keyword": "equiv=correct.py:window4",
    "or_keyword": "equiv=correct.py:diag",
    "not_keyword": "equiv=correct.py:causal",
    "item_call": "equiv=correct.py:causal",
    "bool_of_tensor": "equiv=correct.py:causal",
    "negative_power": "equiv=correct.py:causal",
    "python_bool_result": "equiv=correct.py:full",
    "true_division": "equiv=correct.py:causal maybe",
    "shift_by_negative": "equiv=correct.py:causal maybe",
    "tolist_call": "equiv=correct.py:causal",
}

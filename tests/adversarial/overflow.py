"""int64 tensors wrap modulo 2^64; a Python int outside int64 meeting a tensor raises OverflowError."""

import torch


def mul_2_62(b, h, q_idx, kv_idx):
    return q_idx * 2**62 >= kv_idx * 2**62


def shl_62(b, h, q_idx, kv_idx):
    return (q_idx << 62) >= (kv_idx << 62)


def shl_32(b, h, q_idx, kv_idx):
    return (q_idx << 32) >= (kv_idx << 32)


def add_2_62_twice(b, h, q_idx, kv_idx):
    return q_idx + 2**62 + 2**62 >= kv_idx


def add_2_63_both(b, h, q_idx, kv_idx):
    return q_idx + 2**63 >= kv_idx + 2**63


def add_2_64(b, h, q_idx, kv_idx):
    return q_idx + 2**64 >= kv_idx


def compare_2_70(b, h, q_idx, kv_idx):
    return (q_idx < 2**70) & (kv_idx <= q_idx)


def mul_safe(b, h, q_idx, kv_idx):
    return q_idx * 1000003 >= kv_idx * 1000003


def square(b, h, q_idx, kv_idx):
    return q_idx * q_idx >= kv_idx * kv_idx


def pow_32(b, h, q_idx, kv_idx):
    return q_idx ** 32 >= kv_idx ** 32


def pow_2(b, h, q_idx, kv_idx):
    return q_idx ** 2 >= kv_idx ** 2


def abs_near_min(b, h, q_idx, kv_idx):
    return abs(q_idx - 2**63) >= abs(kv_idx - 2**63)


def neg_mul_2_62(b, h, q_idx, kv_idx):
    return q_idx * -2**62 <= kv_idx * -2**62


def big_offset_diff(b, h, q_idx, kv_idx):
    big = 2**63 - 1
    return (big - kv_idx) >= (big - q_idx)


def wrap_then_compare(b, h, q_idx, kv_idx):
    big = 2**63 - 1
    return (q_idx + big) >= (kv_idx + big)


def int32_wrap(b, h, q_idx, kv_idx):
    return (q_idx.int() + (2**31 - 2)) >= kv_idx.int()


def int32_safe(b, h, q_idx, kv_idx):
    return q_idx.int() >= kv_idx.int()


def mul_then_floor(b, h, q_idx, kv_idx):
    return (q_idx * 2**61) // 2**61 >= (kv_idx * 2**61) // 2**61


def mul_2_40(b, h, q_idx, kv_idx):
    # wraps only from q = 2^23 on: a counterexample far beyond any n brute force reaches (checked on its pair)
    return q_idx * 2**40 >= kv_idx * 2**40


def shl_33(b, h, q_idx, kv_idx):
    return (q_idx << 33) >= (kv_idx << 33)


CASES = {
    "mul_2_62": "equiv=correct.py:causal dense",
    "shl_62": "equiv=correct.py:causal",
    "shl_32": "equiv=correct.py:causal",
    "add_2_62_twice": "equiv=correct.py:causal",
    "add_2_63_both": "equiv=correct.py:causal",
    "add_2_64": "equiv=correct.py:causal",
    "compare_2_70": "equiv=correct.py:causal",
    "mul_safe": "equiv=correct.py:causal",
    "square": "equiv=correct.py:causal maybe",
    "pow_32": "equiv=correct.py:causal",
    "pow_2": "equiv=correct.py:causal maybe",
    "abs_near_min": "equiv=correct.py:anticausal",
    "neg_mul_2_62": "equiv=correct.py:causal",
    "big_offset_diff": "equiv=correct.py:causal",
    "wrap_then_compare": "equiv=correct.py:causal",
    "int32_wrap": "equiv=correct.py:full",
    "int32_safe": "equiv=correct.py:causal",
    "mul_then_floor": "equiv=correct.py:causal",
    "mul_2_40": "equiv=correct.py:causal",
    "shl_33": "equiv=correct.py:causal",
}

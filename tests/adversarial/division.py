"""Integer division and remainder as torch does them: // floors, % takes the divisor's sign, fmod the dividend's;
a divisor 0 raises (at the n where it is reached), also inside a branch of torch.where (both branches run)."""

import torch


def floordiv_kv_plus_1(b, h, q_idx, kv_idx):
    return q_idx // (kv_idx + 1) >= 1


def q_div_kv(b, h, q_idx, kv_idx):
    return (q_idx // kv_idx) >= 1


def kv_mod_q_minus_3(b, h, q_idx, kv_idx):
    return kv_idx % (q_idx - 3) == 0


def where_branch_div_zero(b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, True, 1 // (q_idx - q_idx) == 0)


def where_guard_clamped(b, h, q_idx, kv_idx):
    return torch.where(kv_idx > 0, (q_idx // kv_idx.clamp(min=1)) >= 1, q_idx >= 0)


def where_guard_unclamped(b, h, q_idx, kv_idx):
    return torch.where(kv_idx > 0, (q_idx // kv_idx) >= 1, q_idx >= 0)


def floor_of_negatives(b, h, q_idx, kv_idx):
    return ((q_idx - 5) // 2) >= ((kv_idx - 5) // 2)


def trunc_of_negatives(b, h, q_idx, kv_idx):
    return torch.div(q_idx - 5, 2, rounding_mode="trunc") >= torch.div(kv_idx - 5, 2, rounding_mode="trunc")


def floor_mode_of_negatives(b, h, q_idx, kv_idx):
    return torch.div(q_idx - 5, 2, rounding_mode="floor") >= torch.div(kv_idx - 5, 2, rounding_mode="floor")


def mod_negative_divisor(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx) % -4 == 0


def mod_of_negative(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx) % 4 == 1


def fmod_of_negative(b, h, q_idx, kv_idx):
    return torch.fmod(q_idx - kv_idx, 4) == 1


def fmod_method(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).fmod(4) == 1


def remainder_fn(b, h, q_idx, kv_idx):
    return torch.remainder(q_idx - kv_idx, 4) == 0


def remainder_method_negative_divisor(b, h, q_idx, kv_idx):
    return (kv_idx - q_idx).remainder(-4) == 0


def floor_divide_fn(b, h, q_idx, kv_idx):
    return torch.floor_divide(q_idx, 4) == torch.floor_divide(kv_idx, 4)


def div_floor_window(b, h, q_idx, kv_idx):
    return torch.div(q_idx - kv_idx, 4, rounding_mode="floor") == 0


def div_trunc_window(b, h, q_idx, kv_idx):
    return torch.div(q_idx - kv_idx, 4, rounding_mode="trunc") == 0


def mod_by_q_plus_1(b, h, q_idx, kv_idx):
    return kv_idx % (q_idx + 1) == kv_idx


def where_self_division(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    return torch.where(d != 0, d // d == 1, True)


def div_by_python_zero(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx // (1 - 1)


def dense_until_divisor_7(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | ((kv_idx % (q_idx - 7)) == 100)


def leak_free_until_divisor_21(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((q_idx - 21) // (q_idx - 21) >= 0)


def fmod_zero_divisor_late(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (torch.fmod(q_idx, 12 - q_idx) >= -100)


def blocks_by_division(b, h, q_idx, kv_idx):
    return (q_idx // 8) == (kv_idx // 8)


def mod_by_negative_q(b, h, q_idx, kv_idx):
    return kv_idx % (-1 - q_idx) == kv_idx - (q_idx + 1) * ((kv_idx + q_idx + 1) // (q_idx + 1))


CASES = {
    "floordiv_kv_plus_1": "equiv=correct.py:strict dense",
    "q_div_kv": "equiv=correct.py:causal dense",
    "kv_mod_q_minus_3": "dense equiv=correct.py:diag leak",
    "where_branch_div_zero": "equiv=correct.py:full leak",
    "where_guard_clamped": "equiv=correct.py:causal",
    "where_guard_unclamped": "equiv=correct.py:causal dense",
    "floor_of_negatives": "equiv=correct.py:halves_causal",
    "trunc_of_negatives": "equiv=correct.py:halves_causal",
    "floor_mode_of_negatives": "equiv=correct.py:halves_causal",
    "mod_negative_divisor": "equiv=correct.py:dilated4",
    "mod_of_negative": "equiv=correct.py:mod4_is_1",
    "fmod_of_negative": "equiv=correct.py:fmod_ref",
    "fmod_method": "equiv=correct.py:fmod_ref",
    "remainder_fn": "equiv=correct.py:dilated4",
    "remainder_method_negative_divisor": "equiv=correct.py:dilated4",
    "floor_divide_fn": "equiv=correct.py:blocks4",
    "div_floor_window": "equiv=correct.py:window4",
    "div_trunc_window": "equiv=correct.py:band3",
    "mod_by_q_plus_1": "equiv=correct.py:causal",
    "where_self_division": "equiv=correct.py:full",
    "div_by_python_zero": "equiv=correct.py:causal",
    "dense_until_divisor_7": "dense",
    "leak_free_until_divisor_21": "leak",
    "fmod_zero_divisor_late": "leak equiv=correct.py:causal",
    "blocks_by_division": "dense leak",
    "mod_by_negative_q": "equiv=correct.py:full maybe",
}

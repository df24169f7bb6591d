"""Tensor methods and integer bit operations real library code uses (natten's clamp, morton codes, >>, &, |, ^)."""

import torch


def clamp_centre(b, h, q_idx, kv_idx):
    centre = q_idx.clamp(min=2, max=13)
    return (centre - kv_idx).abs() <= 2


def clamp_centre_ref(b, h, q_idx, kv_idx):
    centre = torch.where(q_idx < 2, 2, torch.where(q_idx > 13, 13, q_idx))
    return (centre - kv_idx <= 2) & (kv_idx - centre <= 2)


def torch_clamp_fn(b, h, q_idx, kv_idx):
    return torch.clamp(q_idx - kv_idx, min=0, max=5) == q_idx - kv_idx


def abs_band(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 3


def torch_abs_band(b, h, q_idx, kv_idx):
    return torch.abs(kv_idx - q_idx) <= 3


def shift_blocks(b, h, q_idx, kv_idx):
    return (q_idx >> 2) == (kv_idx >> 2)


def shift_left_causal(b, h, q_idx, kv_idx):
    return (q_idx << 3) >= (kv_idx << 3)


def and_low_bits(b, h, q_idx, kv_idx):
    return (q_idx & 3) >= (kv_idx & 3)


def xor_blocks(b, h, q_idx, kv_idx):
    return ((q_idx ^ kv_idx) >> 2) == 0


def or_pairs(b, h, q_idx, kv_idx):
    return (q_idx | 1) == (kv_idx | 1)


def bitwise_and_fn(b, h, q_idx, kv_idx):
    return torch.bitwise_and(q_idx, 7) == torch.bitwise_and(kv_idx, 7)


def invert_ints(b, h, q_idx, kv_idx):
    return (~q_idx) <= (~kv_idx)


def morton_2d(b, h, q_idx, kv_idx):
    # a 4x4 tile as a Morton (z-order) code: x from the even bits, y from the odd bits
    def deinterleave(z):
        x = (z & 1) | ((z >> 1) & 2)
        y = ((z >> 1) & 1) | ((z >> 2) & 2)
        return x, y
    qx, qy = deinterleave(q_idx & 15)
    kx, ky = deinterleave(kv_idx & 15)
    return ((qx - kx).abs() <= 1) & ((qy - ky).abs() <= 1) & (q_idx >> 4 == kv_idx >> 4)


def new_ones_causal(b, h, q_idx, kv_idx):
    return b.new_ones((), dtype=torch.bool) & (kv_idx <= q_idx)


def new_zeros_or(b, h, q_idx, kv_idx):
    return q_idx.new_zeros((), dtype=torch.bool) | (kv_idx <= q_idx)


def to_int64(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx).to(torch.int64) == 1


def long_product(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx).long() * (q_idx - kv_idx < 4).long()) == 1


def clamp_min_causal(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).clamp_min(0) == (q_idx - kv_idx)


def clamp_max_window(b, h, q_idx, kv_idx):
    return ((q_idx - kv_idx).clamp_max(4) < 4) & (kv_idx <= q_idx)


def where_scalar_branch(b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, q_idx - kv_idx, 100) < 4


def where_tensor_branches(b, h, q_idx, kv_idx):
    return torch.where(q_idx < 4, kv_idx <= q_idx, q_idx - kv_idx < 2) & (kv_idx <= q_idx)


def logical_fns(b, h, q_idx, kv_idx):
    return torch.logical_and(q_idx >= kv_idx, torch.logical_not(q_idx - kv_idx >= 4))


def logical_or_xor(b, h, q_idx, kv_idx):
    return torch.logical_xor(torch.logical_or(q_idx > kv_idx, q_idx == kv_idx), q_idx < 0)


def compare_methods(b, h, q_idx, kv_idx):
    return q_idx.ge(kv_idx) & q_idx.sub(kv_idx).lt(4)


def int_to_bool(b, h, q_idx, kv_idx):
    return ~(q_idx - kv_idx).bool()


def full_like_window(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx < torch.full_like(q_idx, 4)) & (kv_idx <= q_idx)


def tensor_constant(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx < torch.tensor(4)) & (kv_idx <= q_idx)


def dtype_int32(b, h, q_idx, kv_idx):
    return q_idx.to(torch.int32) >= kv_idx.int()


def type_long(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx).type(torch.long) > 0


def remainder_method(b, h, q_idx, kv_idx):
    return q_idx.remainder(4) >= kv_idx.remainder(4)


def floor_divide_method(b, h, q_idx, kv_idx):
    return q_idx.floor_divide(4) == kv_idx.floor_divide(4)


CASES = {
    "clamp_centre": "equiv=clamp_centre_ref leak N=24",
    "torch_clamp_fn": "equiv=correct.py:sliding_window(6)",
    "abs_band": "equiv=correct.py:band3 leak",
    "torch_abs_band": "equiv=correct.py:band3",
    "shift_blocks": "equiv=correct.py:blocks4 dense",
    "shift_left_causal": "equiv=correct.py:causal",
    "and_low_bits": "equiv=correct.py:mod4_order",
    "xor_blocks": "equiv=correct.py:blocks4",
    "or_pairs": "equiv=correct.py:blocks2 dense",
    "bitwise_and_fn": "equiv=correct.py:dilated4",
    "invert_ints": "equiv=correct.py:causal",
    "morton_2d": "dense leak N=40",
    "new_ones_causal": "equiv=correct.py:causal",
    "new_zeros_or": "equiv=correct.py:causal",
    "to_int64": "equiv=correct.py:causal",
    "long_product": "equiv=correct.py:window4",
    "clamp_min_causal": "equiv=correct.py:causal",
    "clamp_max_window": "equiv=correct.py:window4",
    "where_scalar_branch": "equiv=correct.py:window4",
    "where_tensor_branches": "equiv=correct.py:window4",
    "logical_fns": "equiv=correct.py:window4",
    "logical_or_xor": "equiv=correct.py:causal",
    "compare_methods": "equiv=correct.py:window4",
    "int_to_bool": "equiv=correct.py:diag",
    "full_like_window": "equiv=correct.py:window4",
    "tensor_constant": "equiv=correct.py:window4",
    "dtype_int32": "equiv=correct.py:causal",
    "type_long": "equiv=correct.py:causal",
    "remainder_method": "equiv=correct.py:mod4_order",
    "floor_divide_method": "equiv=correct.py:blocks4",
}

"""Leaks only along long walks: the smallest n of a refutation must be the smallest over every walk length;
and invariants (--invariant) that are wrong or cannot run, which must prove nothing."""

import torch


def jump_6(b, h, q_idx, kv_idx):
    # 0 attends 6, then 6 -> 5 -> ... -> 1 one step back each: 0 reaches 1 in 6 hops at n = 7
    return ((kv_idx <= q_idx) & (q_idx - kv_idx < 2)) | (kv_idx == q_idx + 6)


def jump_20_from_0(b, h, q_idx, kv_idx):
    return ((kv_idx <= q_idx) & (q_idx - kv_idx < 2)) | ((kv_idx == q_idx + 20) & (q_idx == 0))


def late_jump(b, h, q_idx, kv_idx):
    return ((kv_idx <= q_idx) & (q_idx - kv_idx < 2)) | ((kv_idx == q_idx + 3) & (q_idx >= 30))


def two_step_back(b, h, q_idx, kv_idx):
    # steps of -2 and +3: 0 -> 3 -> 1 reaches 1 in two hops at n = 4
    return (q_idx - kv_idx == 2) | (kv_idx - q_idx == 3) | (q_idx == kv_idx)


def window_and_far_future(b, h, q_idx, kv_idx):
    return ((kv_idx <= q_idx) & (q_idx - kv_idx < 3)) | (kv_idx == q_idx + 9)


def window3(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx - kv_idx < 3)


def causal_invariant(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


def dividing_invariant(b, h, q_idx, kv_idx):
    # cannot run: 1 // 0 at every pair (an invariant that fails proves nothing)
    return (kv_idx <= q_idx) | (1 // (q_idx - q_idx) == 0)


def late_dividing_invariant(b, h, q_idx, kv_idx):
    # runs until q = 40, then divides by zero: it must not make the invariant's conditions hold vacuously
    return torch.where(q_idx != 40, kv_idx <= q_idx, (kv_idx // (q_idx - 40)) >= 0)


def everything_invariant(b, h, q_idx, kv_idx):
    return q_idx >= 0


CASES = {
    "jump_6": "leak dense inv=causal_invariant inv=dividing_invariant? inv=everything_invariant",
    "jump_20_from_0": "leak",
    "late_jump": "leak",
    "two_step_back": "leak",
    "window_and_far_future": "leak inv=late_dividing_invariant",
    "window3": "leak inv=causal_invariant inv=dividing_invariant? inv=late_dividing_invariant?",
}

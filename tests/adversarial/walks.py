"""Leaks only along long walks: the smallest n of a refutation must be the smallest over every walk length."""


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


CASES = {
    "jump_6": "leak dense",
    "jump_20_from_0": "leak",
    "late_jump": "leak",
    "two_step_back": "leak",
    "window_and_far_future": "leak",
}

"""Loops: over Python ints (ordinary, unrolled) and over tensor values (cannot run: bool of a tensor)."""

import functools
import operator

import torch


def for_range_window(b, h, q_idx, kv_idx):
    allowed = q_idx == kv_idx
    for i in range(1, 4):
        allowed = allowed | (q_idx - kv_idx == i)
    return allowed


def sum_of_generator(b, h, q_idx, kv_idx):
    return sum((q_idx - kv_idx == i) for i in range(4)) > 0


def reduce_or(b, h, q_idx, kv_idx):
    return functools.reduce(operator.or_, [q_idx - kv_idx == i for i in range(4)])


def while_on_tensor(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    while d >= 4:
        d -= 4
    return d == 0


def any_builtin(b, h, q_idx, kv_idx):
    return any(q_idx - kv_idx == i for i in range(4))


def while_python_int(b, h, q_idx, kv_idx):
    i, allowed = 0, q_idx < 0
    while i < 3:
        allowed = allowed | (q_idx - kv_idx == i)
        i += 1
    return allowed


def stack_any(b, h, q_idx, kv_idx):
    return torch.stack([q_idx - kv_idx == i for i in range(4)]).any(0)


def loop_factory(k):
    def mask(b, h, q_idx, kv_idx):
        allowed = kv_idx == q_idx
        for i in range(k):
            allowed = allowed | (kv_idx == q_idx - i - 1)
        return allowed
    return mask


def nested_loops(b, h, q_idx, kv_idx):
    allowed = q_idx < 0
    for i in range(2):
        for j in range(2):
            allowed = allowed | ((q_idx // 2 == i + 2 * j) & (kv_idx // 2 == i + 2 * j))
    return allowed | (q_idx // 2 == kv_idx // 2)


def loop_with_break(b, h, q_idx, kv_idx):
    allowed = q_idx == kv_idx
    for i in range(1, 100):
        if i == 4:
            break
        allowed = allowed | (q_idx - kv_idx == i)
    return allowed


def for_over_tensor(b, h, q_idx, kv_idx):
    total = 0
    for _ in range(q_idx):
        total += 1
    return total >= kv_idx


CASES = {
    "for_range_window": "equiv=correct.py:window4 dense",
    "sum_of_generator": "equiv=correct.py:window4",
    "reduce_or": "equiv=correct.py:window4",
    "while_on_tensor": "equiv=correct.py:dilated4",
    "any_builtin": "equiv=correct.py:window4",
    "while_python_int": "equiv=correct.py:window3",
    "stack_any": "equiv=correct.py:window4 maybe",
    "loop_factory(3)": "equiv=correct.py:window4 leak",
    "nested_loops": "equiv=correct.py:blocks2",
    "loop_with_break": "equiv=correct.py:window4",
    "for_over_tensor": "equiv=correct.py:causal",
}

"""What the user's own code raises: one line, exit 2 (or refuted where it first fails), never a traceback."""

import torch


def asserts_false(b, h, q_idx, kv_idx):
    assert False, "this mask is not ready"
    return q_idx >= kv_idx


def raises_runtime(b, h, q_idx, kv_idx):
    raise RuntimeError("unsupported layout")


def raises_key_error(b, h, q_idx, kv_idx):
    table = {"causal": 1}
    return (q_idx >= kv_idx) & (table["window"] > 0)


def python_zero_division(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (1 // 0 == 0)


def asserts_on_tensor(b, h, q_idx, kv_idx):
    assert (q_idx >= 0).all()
    return q_idx >= kv_idx


def missing_method(b, h, q_idx, kv_idx):
    return q_idx.no_such_method() >= kv_idx


def undefined_name(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx + undefined_offset  # noqa: F821


def endless_recursion(b, h, q_idx, kv_idx):
    return endless_recursion(b, h, q_idx, kv_idx)


def checked_window(w):
    if w <= 0:
        raise ValueError(f"window must be positive, got {w}")

    def mask(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (q_idx - kv_idx < w)
    return mask


def raises_on_large(w):
    def mask(b, h, q_idx, kv_idx):
        if w > 3:
            raise NotImplementedError("windows above 3")
        return (kv_idx <= q_idx) & (q_idx - kv_idx < w)
    return mask


def type_error_call(b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx)  # one argument: a tuple, not a mask


def index_error_list(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & ([True][1])


CASES = {
    "asserts_false": "equiv=correct.py:causal dense",
    "raises_runtime": "equiv=correct.py:causal",
    "raises_key_error": "equiv=correct.py:causal leak",
    "python_zero_division": "equiv=correct.py:causal",
    "asserts_on_tensor": "equiv=correct.py:causal",
    "missing_method": "equiv=correct.py:causal",
    "undefined_name": "equiv=correct.py:causal",
    "endless_recursion": "equiv=correct.py:causal",
    "checked_window(-1)": "equiv=correct.py:causal",
    "checked_window(3)": "equiv=correct.py:window3 dense",
    "raises_on_large(5)": "equiv=correct.py:causal",
    "raises_on_large(2)": "equiv=correct.py:window2",
    "type_error_call": "equiv=correct.py:causal",
    "index_error_list": "equiv=correct.py:causal",
}

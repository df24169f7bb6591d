"""The user's own try/except: the handler runs only where torch itself raises."""

import torch

LIMITS = torch.tensor([3, 3, 3, 3])


def swallows_float(b, h, q_idx, kv_idx):
    # torch runs the float comparison (causal); a tracer that refuses floats must not trace the handler instead
    try:
        return (q_idx * 1.0) >= (kv_idx * 1.0)
    except Exception:
        return kv_idx > q_idx


def swallows_bool_minus(b, h, q_idx, kv_idx):
    # torch raises on bool - bool, so the handler (causal) is what runs
    try:
        return ((q_idx >= kv_idx) - (kv_idx > q_idx)) == 1
    except RuntimeError:
        return q_idx >= kv_idx


def swallows_minimum(b, h, q_idx, kv_idx):
    try:
        return torch.minimum(q_idx, 10) >= kv_idx
    except TypeError:
        return torch.minimum(q_idx, torch.full_like(q_idx, 10)) >= kv_idx


def swallows_everything(b, h, q_idx, kv_idx):
    try:
        if q_idx >= kv_idx:
            return q_idx >= 0
        return q_idx < 0
    except BaseException:
        return q_idx == kv_idx


def swallows_assert(b, h, q_idx, kv_idx):
    try:
        assert False, "never"
    except AssertionError:
        pass
    return kv_idx <= q_idx


def swallows_index(b, h, q_idx, kv_idx):
    try:
        return LIMITS[q_idx] >= q_idx - kv_idx
    except IndexError:
        return q_idx == kv_idx


def finally_only(b, h, q_idx, kv_idx):
    out = q_idx == kv_idx
    try:
        out = out | (kv_idx < q_idx)
    finally:
        out = out & (q_idx - kv_idx < 3)
    return out


def swallows_division(b, h, q_idx, kv_idx):
    try:
        return (q_idx // kv_idx) >= 1
    except RuntimeError:
        return q_idx >= kv_idx


def swallows_shift(b, h, q_idx, kv_idx):
    try:
        return (q_idx >> 1) >= (kv_idx >> 1)
    except Exception:
        return q_idx >= kv_idx


OPTIONS = "pern N=24"  # every n evaluated on its own: a handler that runs changes the whole grid

CASES = {
    "swallows_float": "equiv=correct.py:causal maybe",
    "swallows_bool_minus": "equiv=correct.py:causal maybe",
    "swallows_minimum": "equiv=correct.py:causal maybe",
    "swallows_everything": "equiv=correct.py:diag maybe",
    "swallows_assert": "equiv=correct.py:causal maybe",
    "swallows_index": "equiv=correct.py:window4 maybe",
    "finally_only": "equiv=correct.py:window3 dense",
    "swallows_division": "equiv=correct.py:causal maybe",
    "swallows_shift": "equiv=correct.py:causal maybe",
}

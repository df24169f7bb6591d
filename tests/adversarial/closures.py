"""Closure tensors (document ids, global flags, a permutation) and Python constants captured by a mask_mod.

With the tensor's actual values a claim ranges over n <= its length (the statement says so); past it torch
raises an IndexError."""

import torch

DOCUMENT = torch.tensor([0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 3])
IS_GLOBAL = torch.tensor([True, False, False, False, True, False, False, False, False, False, False, False])
ORDER = torch.tensor([3, 1, 0, 2, 5, 4, 7, 6])
STARTS = torch.tensor([0, 0, 0, 3, 3, 3, 3, 7, 7, 9, 9, 9, 9, 9, 9, 9])
PREFIX = 4


def document_causal(b, h, q_idx, kv_idx):
    return (DOCUMENT[q_idx] == DOCUMENT[kv_idx]) & (kv_idx <= q_idx)


def document_bidirectional(b, h, q_idx, kv_idx):
    return DOCUMENT[q_idx] == DOCUMENT[kv_idx]


def document_by_starts(b, h, q_idx, kv_idx):
    return (kv_idx >= STARTS[q_idx]) & (kv_idx <= q_idx)


def global_tokens_window(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (IS_GLOBAL[kv_idx] | (q_idx - kv_idx < 3))


def global_tokens_both_ways(b, h, q_idx, kv_idx):
    return IS_GLOBAL[kv_idx] | IS_GLOBAL[q_idx] | (q_idx == kv_idx)


def permuted_order(b, h, q_idx, kv_idx):
    return ORDER[kv_idx] <= ORDER[q_idx]


def shared_prefix(b, h, q_idx, kv_idx):
    return (kv_idx < PREFIX) | (kv_idx <= q_idx)


def document_window(b, h, q_idx, kv_idx):
    same = DOCUMENT[q_idx] == DOCUMENT[kv_idx]
    return same & (kv_idx <= q_idx) & (q_idx - kv_idx < 2)


def doc_mask_factory(ids):
    def mask(b, h, q_idx, kv_idx):
        return (ids[q_idx] == ids[kv_idx]) & (kv_idx <= q_idx)
    return mask


DOC_CAUSAL_12 = doc_mask_factory(torch.tensor([0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]))


CASES = {
    "document_causal": "dense leak equiv=document_by_starts",
    "document_bidirectional": "leak dense",
    "document_by_starts": "dense leak",
    "global_tokens_window": "dense leak",
    "global_tokens_both_ways": "dense leak",
    "permuted_order": "dense leak",
    "shared_prefix": "leak equiv=correct.py:prefix_lm(4) dense",
    "document_window": "dense leak",
    "DOC_CAUSAL_12": "dense leak equiv=correct.py:causal",
}

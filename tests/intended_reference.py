"""The intended flow of an audit by explicit loops (tests only; numpy, no kit code): one layer's mask, and R(L).

``reference_layer`` writes each layer kind of ``gpu_check.audit.scenarios.intended_layer_mask``
pair by pair — full, sliding, chunked, recurrent, conv, none — inside the documents, never
a pad key, a pad row attending only itself; ``reference_reach`` multiplies layers by loops.
"""

from __future__ import annotations

import numpy as np

PAD = -1  # the document of a padding position (gpu_check.audit.scenarios.PAD, not imported: independent)


def reference_layer(docs, positions, kind, size, encoder=False):
    """The intended mask of one layer, pair by pair (pads: only themselves)."""
    n = len(docs)
    m = np.zeros((n, n), dtype=bool)
    for q in range(n):
        for k in range(n):
            if docs[q] == PAD:
                m[q, k] = q == k
                continue
            same = docs[k] == docs[q] and docs[k] != PAD
            if kind == "recurrent":
                ok = same and k <= q
            elif kind == "conv":
                ok = same and q - size < k <= q
            elif kind == "none":
                ok = same and k == q
            else:
                ok = same and (encoder or k <= q)
                if kind == "sliding":
                    ok = ok and q - size < k and (not encoder or k < q + size)
                if kind == "chunked":
                    ok = ok and positions[q] // size == positions[k] // size
            m[q, k] = ok
    return m


def reference_reach(masks):
    """R(L)[q, k]: a path k -> … -> q that takes one hop (or stays) per layer, by explicit loops."""
    n = masks[0].shape[0]
    dep = np.eye(n, dtype=bool)
    for m in masks:
        step = m | np.eye(n, dtype=bool)
        new = np.zeros_like(dep)
        for q in range(n):
            for j in range(n):
                if step[q, j]:
                    new[q] |= dep[j]
        dep = new
    return dep

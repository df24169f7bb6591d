"""Shared small cases, written out in full: masks with their expected structure.

Read by the theory, CLI (and later solver and gpu) tests. Matrices use the kit's
convention: row q, column k, 1 iff q attends k.
"""

import itertools

import numpy as np


def m(rows: str) -> np.ndarray:
    return np.array([[c == "1" for c in r] for r in rows.split()], dtype=bool)


MASK_CASES = {
    # name: (mask, classes in canonical order, hasse edges, depth, dense)
    "causal4": (m("1000 1100 1110 1111"), ((0,), (1,), (2,), (3,)), ((0, 1), (1, 2), (2, 3)), 1, True),
    "bidirectional3": (m("111 111 111"), ((0, 1, 2),), (), 1, True),
    "identity3": (m("100 010 001"), ((0,), (1,), (2,)), (), 0, True),
    "empty3": (m("000 000 000"), ((0,), (1,), (2,)), (), 0, True),
    # a chain 0 -> 1 -> 2 -> 3 one hop per layer: depth 3, not dense
    "chain4": (m("1000 1100 0110 0011"), ((0,), (1,), (2,), (3,)), ((0, 1), (1, 2), (2, 3)), 3, False),
    # sliding window w = 2 on 5 positions
    "window5": (m("10000 11000 01100 00110 00011"), ((0,), (1,), (2,), (3,), (4,)),
                ((0, 1), (1, 2), (2, 3), (3, 4)), 4, False),
    # 2 attends 0 and 1 is isolated: canonical order takes the smallest member first
    "vee3": (m("100 010 101"), ((0,), (1,), (2,)), ((0, 2),), 1, True),
    # canonical order: classes {2} and {0,1}; {2} must come after {0,1}? no edge -> smallest member first
    "two_classes": (m("010 100 000"), ((0, 1), (2,)), (), 1, True),
    # {1} above {0, 2}: class with smallest member 0 first
    "cycle_below": (m("001 101 100"), ((0, 2), (1,)), ((0, 1),), 1, True),
    # 3-cycle 0 -> 1 -> 2 -> 0 (1 attends 0, 2 attends 1, 0 attends 2): one class, depth 2
    "ring3": (m("001 100 010"), ((0, 1, 2),), (), 2, False),
}

SWAP2 = m("01 10")  # without the residual: period 2, no limit


def compositions(n: int):
    """Every composition of ``n`` (ordered positive parts summing to ``n``: the document lengths of a packing of
    ``n`` positions), as a list of parts: 2^(n-1) of them, a cut or none between each pair of neighbours."""
    for cuts in itertools.product((False, True), repeat=n - 1):
        lengths, run = [], 1
        for cut in cuts:
            if cut:
                lengths.append(run)
                run = 1
            else:
                run += 1
        yield lengths + [run]

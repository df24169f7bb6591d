"""The stack tests' independent reference for first arrivals: a breadth-first search over (position, layer)
states, one layer at a time, that never touches theory/stack.py."""

from __future__ import annotations


def arrivals(masks, source, limit):
    """``first[q]``: the fewest layers after which position ``q`` holds ``source``'s content (-1: never within
    ``limit``), by a breadth-first search over (position, layer) states; layer ``l`` (1-based) uses
    ``masks[(l - 1) % len(masks)]`` and a position keeps what it holds (the residual)."""
    n = masks[0].shape[0]
    first = [-1] * n
    first[source] = 0
    holding = {source}
    for layer in range(1, limit + 1):
        m = masks[(layer - 1) % len(masks)]
        reached = set(holding)
        for v in holding:
            for q in range(n):
                if m[q][v]:
                    reached.add(q)
        for q in reached - holding:
            first[q] = layer
        holding = reached
    return first

"""XLNet two-stream as a widely used library builds it, as a counterexample design.

Factorisation order 0, 1, ..., n-1, every token predicted, no memory: content
``c_i`` attends ``c_j`` for ``j <= i``; query ``g_i`` attends ``c_j`` for ``j < i`` and
nothing else (its own previous state comes through the residual). The query row of
the first token, ``g_0``, attends no key at all.
"""


def make_task(n):
    rows = [[0] * (2 * n) for _ in range(2 * n)]
    for i in range(n):
        for j in range(n):
            rows[i][j] = int(j <= i)
            rows[n + i][j] = int(j < i)
    return {"name": f"xlnet_library:n={n}", "tokens": n,
            "inputs": [[f"x{i}", i] for i in range(n)] + [["[MASK]", i] for i in range(n)],
            "labels": [None] * n + list(range(n)), "mask": rows}

"""The catalogue's inductive invariants for the symbolic tasks ("leak-free at every depth").

:func:`catalogue_invariant` gives, for a task of :mod:`solvers.symbolic.tasks`, the relation ``I``
(``q`` may hold what ``k`` holds), written as its own formula from the layouts of design §4,
never derived from the mask: the claim (:mod:`solvers.symbolic.claims`) checks ``M ∨ Id ⊆ I``,
``I`` transitive and no target inside ``I``, so a wrong invariant is refuted, not trusted.
"""

from __future__ import annotations

import z3

from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.solvers.symbolic.tasks.values import statement_of
from hasse.solvers.symbolic.trace import TraceError


def catalogue_invariant(task: SymbolicTask) -> SymbolicMask | None:
    """The catalogue's relation ``I(q, k)`` ("``q`` may hold what ``k`` holds") for leak-free at every depth.

    A :class:`SymbolicMask` over the task's symbols (``.allowed(q, k)``; its ``facts`` carry the
    index axioms), written as its own formula from the layouts of design §4:

    - Butterfly (and its bad designs): ``F`` causal, ``B`` anti-causal, ``P_k`` reading
      ``F_{<k}`` and ``B_{>k}``, and the diagonal (the mask is its own closure);
    - Block Two-Stream (each variant; ``bad_block_query_history`` with its earlier blocks'
      queries): content causal, ``Q_t`` reading content of earlier blocks and the queries of
      its own block (earlier ones for chain); ``bad_block_own_content``: the block-causal version;
    - BD3-LM: same-half same-block, ``x_t`` reading earlier clean blocks, clean block-causal;
    - XLNet: ``rank(k) <= rank(q)`` into content (strictly from a query), each query itself;
    - causal_lm (through any causal mask, a sliding window included): ``k <= q``;
      packed (and bad_packed_window): ``doc(k) = doc(q)`` and ``k <= q``; mlm: every pair.

    None for a task with no catalogue invariant (:func:`solvers.symbolic.claims.known_invariant` then
    tries the task's mask). The claim checks the three conditions.

    >>> from hasse.solvers.symbolic.tasks import symbolic_task
    >>> t = symbolic_task("causal_lm")
    >>> catalogue_invariant(t).allowed(3, 2)
    2 <= 3
    """
    from hasse.theory.spec import parse_spec

    name, _ = parse_spec(task.name.split(" through ")[0])
    mask = task.mask
    n, q, k = mask.n, mask.q, mask.k
    indexes = []
    if name in ("butterfly", "bad_butterfly_self", "bad_butterfly_crossed"):
        formula = _butterfly_closure(n, q, k)
    elif name in ("block_two_stream", "bad_block_query_history"):
        _, values = parse_spec(task.name.split(" through ")[0])
        chain = name == "bad_block_query_history" or values.get("variant", "chain") == "chain"
        block = _block_term(task)
        formula = _block_closure(n, block, q, k, chain, name == "bad_block_query_history")
    elif name == "bad_block_own_content":
        formula = _own_content_closure(n, _block_term(task), q, k)
    elif name == "bd3lm":
        formula = _bd3lm_closure(n, _block_term(task), q, k)
    elif name == "xlnet":
        rank = next(i for i in mask.indexes if i.name == "rank")
        indexes = [rank]
        formula = _xlnet_closure(n, rank.function, q, k)
    elif name == "causal_lm":
        formula = k <= q
    elif name in ("packed", "bad_packed_window"):
        doc = next(i for i in mask.indexes if i.name == "doc")
        indexes = [doc]
        formula = z3.And(doc.function(k) == doc.function(q), k <= q)
    elif name in ("mlm", "bad_mlm_unmasked"):
        formula = z3.BoolVal(True)
    else:
        return None
    conditions = list(mask.conditions) + list(task.conditions)
    return SymbolicMask(f"{name} (known invariant)", n, mask.size, dict(mask.params), formula, q, k, conditions,
                        [], indexes, mask.streams, statement_of(n, mask.params, conditions))


def _block_term(task: SymbolicTask):
    if "block" in task.mask.params:
        return task.mask.params["block"]
    from hasse.theory.spec import parse_spec

    _, values = parse_spec(task.name.split(" through ")[0])
    if "block" not in values:
        raise TraceError(f"{task.name}: the block size is neither symbolic nor given")
    return z3.IntVal(int(values["block"]))


def _butterfly_closure(n, q, k):
    b, p = n - 1, 2 * n - 2

    def stream(x):
        return z3.If(x < b, 0, z3.If(x < p, 1, 2))

    def index(x):
        return z3.If(x < b, x, z3.If(x < p, x - b + 1, x - p))

    sq, sk, i, j = stream(q), stream(k), index(q), index(k)
    return z3.Or(q == k,
                 z3.And(sq == 0, sk == 0, j <= i),
                 z3.And(sq == 1, sk == 1, j >= i),
                 z3.And(sq == 2, sk == 0, j < i),
                 z3.And(sq == 2, sk == 1, j > i))


def _block_closure(n, block, q, k, chain: bool, history: bool):
    c = n - block
    t, u = q - c, k - c
    qq = z3.And(q >= c, k >= c, u / block == t / block)
    if chain:
        qq = z3.And(qq, u <= t)
    parts = [q == k,
             z3.And(q < c, k < c, k <= q),
             z3.And(q >= c, k < c, k / block < t / block),
             qq]
    if history:
        parts.append(z3.And(q >= c, k >= c, u / block < t / block))
    return z3.Or(parts)


def _own_content_closure(n, block, q, k):
    t, u = q - n, k - n
    return z3.Or(q == k,
                 z3.And(q < n, k < n, k <= q),
                 z3.And(q >= n, k < n, k / block <= t / block),
                 z3.And(q >= n, k >= n, u / block == t / block, u <= t))


def _bd3lm_closure(n, block, q, k):
    qc, kc = q >= n, k >= n
    bq = z3.If(qc, q - n, q) / block
    bk = z3.If(kc, k - n, k) / block
    return z3.Or(q == k,
                 z3.And(qc == kc, bq == bk),
                 z3.And(z3.Not(qc), kc, bk < bq),
                 z3.And(qc, kc, bk <= bq))


def _xlnet_closure(n, rank, q, k):
    rq = rank(z3.If(q >= n, q - n, q))
    rk = rank(z3.If(k >= n, k - n, k))
    return z3.Or(q == k,
                 z3.And(q < n, k < n, rk <= rq),
                 z3.And(q >= n, k < n, rk < rq))

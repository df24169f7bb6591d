"""The masks of the symbolic tasks that are not catalogue masks as they stand, as rule factories to trace.

:func:`solvers.symbolic.tasks.symbolic_task` traces each with
:func:`~solvers.symbolic.mask.from_rule`: XLNet's rule over an index tensor ``rank`` (a
*bijection*), packed documents over ``doc`` (*non-decreasing*) inside an optional window,
causal and bidirectional attention, and the bad designs (each the case study's rule with
its one flaw, as theory/tasks/bad.py builds it). Also :data:`MASKED`, mlm's masked set as a
free predicate. The tracer rebinds the factory it is given (numpy and the parameter checks
replaced), not the other functions of this module: a factory over an index tensor is
therefore made by a closure.
"""

from __future__ import annotations

import numpy as np
import z3

from hasse.solvers.symbolic.terms import SymIndex
from hasse.theory.masks.block_two_stream import make_block_two_stream
from hasse.theory.masks.butterfly import make_butterfly
from hasse.theory.params import require_block, require_non_negative, require_positive

MASKED = z3.Function("masked", z3.IntSort(), z3.BoolSort())  # mlm's masked positions (any subset)


def causal_rule(n):
    """Causal attention (theory.masks.causal), as a factory for :func:`from_rule`."""
    require_positive("n", n)

    def rule(q, k):
        return k <= q

    return rule


def full_rule(n):
    """Bidirectional attention (theory.masks.bidirectional)."""
    require_positive("n", n)

    def rule(q, k):
        return True

    return rule


def xlnet_factory(rank: SymIndex):
    def make_xlnet(n):
        """theory.masks.xlnet's rule with ``rank`` an index tensor; ``q % n`` written as ``q − n`` past ``n``."""
        require_positive("n", n)

        def rule(q, k):
            q_query, k_query = q >= n, k >= n
            rq = rank[np.where(q_query, q - n, q)]
            rk = rank[np.where(k_query, k - n, k)]
            content = ~q_query & ~k_query & (rk <= rq)
            query = q_query & ~k_query & (rk < rq)
            itself = q_query & (q == k)
            return content | query | itself

        return rule

    return make_xlnet


def packed_factory(doc: SymIndex):
    def make_packed(n, window):
        """theory.tasks.prior_art.packed's mask: causal within a document, inside ``window`` keys when > 0."""
        require_positive("n", n)
        window = require_non_negative("window", window)

        def rule(q, k):
            return (doc[q] == doc[k]) & (k <= q) & ((window == 0) | (q - window < k))

        return rule

    return make_packed


def sliding_rule(n, window):
    """theory.masks.sliding_window's rule ``q − window < k <= q`` (bad_packed_window's mask)."""
    require_positive("n", n)
    window = require_positive("window", window)

    def rule(q, k):
        return (q - window < k) & (k <= q)

    return rule


def crossed_rule(n):
    """bad_butterfly_crossed: Butterfly's rule, plus every F position attending every B position."""
    base = make_butterfly(n)

    def rule(q, k):
        return base(q, k) | ((q < n - 1) & (k >= n - 1) & (k < 2 * n - 2))

    return rule


def own_content_rule(n, block):
    """bad_block_own_content on 2n positions: C causal; Q_t → C_j iff j//l <= t//l; Q_t → Q_u same block, u <= t."""
    n, block = require_block(n, block)

    def rule(q, k):
        q_query, k_query = q >= n, k >= n
        t, u = q - n, k - n
        cc = ~q_query & ~k_query & (k <= q)
        qc = q_query & ~k_query & (k // block <= t // block)
        qq = q_query & k_query & (u // block == t // block) & (u <= t)
        return cc | qc | qq

    return rule


def query_history_rule(n, block):
    """bad_block_query_history: Block Two-Stream (chain) plus Q_t → Q_u when u//l < t//l."""
    base = make_block_two_stream(n, block, "chain")
    n, block = require_block(n, block)

    def rule(q, k):
        content = n - block
        t, u = q - content, k - content
        extra = (q >= content) & (k >= content) & (u // block < t // block)
        return base(q, k) | extra

    return rule

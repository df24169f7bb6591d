"""Claims about a symbolic mask or task for every sample length ``n``, each proved or refuted in Z3.

Every claim first checks that each program it reads (the mask, the second mask of an
equivalence, the invariant) can run on the whole domain (:func:`check_obligations`): a
divisor that can be 0, a lookup out of range, … at some ``(n, params, q, k)`` is a failure
of the program there — the claim about the mask is **refuted** at the smallest such ``n``
("the program fails: …"), an invariant that fails proves nothing (**unknown**) — never a
hypothesis that drops those pairs. Then the claim is checked by negation: the hypotheses
(the side conditions of the mask and task, the positions inside ``0 … size − 1``, the
axioms of the index tensors at every place the mask is read) and the *negated* claim go
to one solver (:func:`.solve._solve`, chosen by the query's form). ``unsat`` → **proved**
for every ``n`` (and every value of the symbolic parameters) satisfying the side
conditions; ``sat`` → **refuted**; ``unknown`` / timeout → **unknown**, never "proved".

The claims (each returns a :class:`SymbolicVerdict`), one module each:

- :func:`prove_dense` (:mod:`.dense`) — ``M or I`` is transitive: there are no ``a, b, c``
  with ``A(c, b)``, ``A(b, a)`` and not ``A(c, a)`` (``A = M or I``,
  :meth:`SymbolicMask.attends`). The limit of the residual stack is then ``M or I`` itself
  (design.md §3).
- :func:`prove_leak_free`, :func:`prove_isolation` (:mod:`.leaks`) — no walk of at most
  ``L`` hops from a position holding ``t`` to a position predicting ``t`` (between two
  groups); with ``invariant=R`` (every depth): three conditions, each checked, never
  assumed — (1) ``A ⊆ R'``, (2) ``R'`` is transitive, (3) no leak (crossing) inside ``R'``,
  where ``R' = R or I``. An invariant that fails one gives **unknown** (it refutes
  nothing), with the failing condition and its witness in ``reason``.
- :func:`check_equivalence` (:mod:`.equivalence`) — two masks have the same size and the
  same pairs ``M[q, k]`` for every ``n``; else the smallest ``n`` with a differing pair.
- :func:`prove_consistent` (:mod:`.consistency`) — training–inference consistency.
- :func:`known_invariant` (:mod:`.invariant`) — the invariant that needs no user.
- :func:`prove_realises` (:mod:`.realises`) — ``(M or I)^L = T`` for a target preorder ``T``:
  ``M ⊆ T``, ``T`` transitive, and every pair of ``T`` reached through a traced witness's
  walk (queries with bit operations decided as bit-vectors, :mod:`.as_bits`).
- :data:`CLAIMS` (:mod:`.table`) — the claims of ``hasse prove-mask`` by name.

When a claim is refuted, :func:`smallest_model` finds the smallest ``n`` (then the smallest
value of each symbolic parameter, in name order) with a counterexample, by bisection on
``n <= mid`` until unsat; over every walk length, :func:`smallest_refutation` and
:func:`search_every_depth` (:mod:`.depth`). The counterexample is **re-checked** with the
concrete engine at those values (:mod:`.concrete`): ``recheck`` is ``"confirmed"`` or a
loud ``"DISAGREES: …"`` (:class:`theory.verdicts.Recheck`, its ``outcome`` a field); never
dropped. The concrete leak engine is run with ``empty_rows="attend-none"``: the symbolic
claims read the mask as given (a query with no key attends nothing but itself). A proved
verdict is re-checked too, at the small instances of the side conditions
(``n <= recheck_upto``): the programs and the concrete engine must find nothing there.
"""

from hasse.solvers.symbolic.claims.consistency import block_two_stream_consistency, prove_consistent, task_consistency
from hasse.solvers.symbolic.claims.dense import prove_dense
from hasse.solvers.symbolic.claims.depth import SEARCH_UPTO, search_every_depth, smallest_refutation, walk_search
from hasse.solvers.symbolic.claims.equivalence import check_equivalence
from hasse.solvers.symbolic.claims.invariant import causal_order, known_invariant
from hasse.solvers.symbolic.claims.leaks import prove_isolation, prove_leak_free
from hasse.solvers.symbolic.claims.obligations import Failure, check_obligations
from hasse.solvers.symbolic.claims.realises import prove_realises
from hasse.solvers.symbolic.claims.search import CONCRETE_SEARCH_ENTRIES
from hasse.solvers.symbolic.claims.solve import smallest_model
from hasse.solvers.symbolic.claims.statement import EMPTY_ROWS_NOTE, INDEX_WORDS
from hasse.solvers.symbolic.claims.table import CLAIMS, Claim
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, RECHECK_UPTO, SymbolicVerdict
from hasse.theory.verdicts import EXIT_CODES, PROVED, REFUTED, UNKNOWN

__all__ = [
    "CLAIMS", "CONCRETE_SEARCH_ENTRIES", "Claim", "DEFAULT_TIMEOUT", "EMPTY_ROWS_NOTE", "EXIT_CODES", "Failure",
    "INDEX_WORDS", "PROVED", "RECHECK_UPTO", "REFUTED", "SEARCH_UPTO", "SymbolicVerdict", "UNKNOWN",
    "block_two_stream_consistency", "causal_order", "check_equivalence", "check_obligations", "known_invariant",
    "prove_consistent", "prove_dense", "prove_isolation", "prove_leak_free", "prove_realises", "search_every_depth",
    "smallest_model", "smallest_refutation", "task_consistency", "walk_search",
]

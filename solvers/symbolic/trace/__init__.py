"""Tracing a mask program into a Z3 formula, by running it on symbolic arguments.

:func:`trace` calls a rule ``rule(q, k)`` or a FlexAttention ``mask_mod(b, h, q_idx,
kv_idx)`` with :class:`~solvers.symbolic.terms.SymInt` arguments. The function runs as
Python, unchanged, except that the ``numpy`` and ``torch`` modules it names are replaced
by shims whose ``where``, ``minimum``, ``maximum`` and ``logical_*`` build Z3 terms, and
the kit's parameter checks (``require_positive``, ``require_block``, …) record their
condition as a *side condition* of the statement instead of testing a number. Every
function of the same module that the program calls is run the same way.

Control flow on symbolic values (``if q < k:``, ``min(q, w)``, ``a and b``) is handled by
running the program once per feasible combination of branch decisions (each decision's
other side is tried when Z3 says it can happen) and joining the results: the formula is
``OR over paths (path condition AND result on that path)``. At most ``max_paths`` paths.

What cannot be traced raises :class:`TraceError` with one line: the operation and the
line of the user's file where it happened (``masks.py:12: bitwise arithmetic …``).

The rooms: :mod:`.paths` (the runs, one per feasible combination of branch decisions,
and the errors they raise), :mod:`.rebind` (what the program sees: the shims, its
functions rebound, :mod:`.checks` for the kit's parameter checks, :mod:`.tables` for
its closure tensors), :mod:`.guards` (its own ``try``/``except``), :mod:`.lines` (the
user's line an error names), :mod:`.result` (:class:`Traced` and the errors).
"""

from hasse.solvers.symbolic.trace.paths import MAX_PATHS, _bound, symbols, trace
from hasse.solvers.symbolic.trace.rebind import rebind
from hasse.solvers.symbolic.trace.result import Traced, TraceError, TraceTimeout, TraceUnknown

__all__ = ["MAX_PATHS", "Traced", "TraceError", "TraceTimeout", "TraceUnknown", "_bound", "rebind", "symbols",
           "trace"]

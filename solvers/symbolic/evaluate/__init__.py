"""A Z3 formula evaluated on numpy arrays: the traced formula at many points at once, exactly.

The re-check (:mod:`solvers.symbolic.recheck`) compares the user's program with the
formula the tracer made of it at thousands of points; Z3's ``simplify`` entry by entry
took minutes. :func:`evaluate` walks the formula once (shared subterms once) with numpy
arrays for its free constants — ``q0`` as ``rows[:, None]``, ``k0`` as ``cols[None, :]``,
``n`` and the parameters as scalars or arrays over a batch axis — and broadcasts.

Semantics are Z3's, not numpy's:

- integers are exact: a subterm is computed in int64 only when an interval bound of its
  value fits (the bounds come from the operands' bounds, refined by their actual values
  when needed), else on object arrays of Python ints;
- ``div``/``mod`` are Euclidean (``a = b·(a div b) + a mod b`` with ``0 <= a mod b < |b|``),
  ``rem`` follows ``mod`` with the divisor's sign; an integer divisor 0 makes that lane
  *undefined* (Z3 leaves ``x div 0`` unspecified): :func:`evaluate_partial` returns the
  undefined lanes, :func:`evaluate` raises :class:`Unevaluable` when the result has any.
  ``And``/``Or`` are defined wherever one defined operand decides them (a branch that
  would divide by zero does not spoil ``If(d != 0, x / d, 0)``);
- bit-vectors of width ``w`` are held as their signed value (int64 for ``w <= 64``,
  Python ints above), wrapping as Z3 does; ``bvudiv``/``bvsdiv``/… by 0 take Z3's values;
  ``int2bv``, ``bv2int``, extract, concat, extensions, shifts, the ``*_no_overflow`` tests;
- an uninterpreted function (an index tensor: ``doc``, ``rank``, ``anc``) reads a table
  given in ``env`` by its name (a numpy array, one axis per argument); an argument outside
  the table is an undefined lane; arrays (``Select``) likewise.

Anything else (reals, quantifiers, strings) raises :class:`Unevaluable`.

The rooms: :mod:`.walk` (compile a formula once, run it on the arrays), :mod:`.lanes` (a
subterm's values, exact integers and undefined lanes), :mod:`.operations` (which function
evaluates each Z3 operation), :mod:`.arithmetic` (Booleans and integers),
:mod:`.bitvectors`.
"""

from hasse.solvers.symbolic.evaluate.lanes import UNDEFINED, Unevaluable
from hasse.solvers.symbolic.evaluate.walk import evaluate, evaluate_partial, free_names

__all__ = ["UNDEFINED", "Unevaluable", "evaluate", "evaluate_partial", "free_names"]

"""Symbolic values that a mask program computes with, recorded as Z3 terms, with torch's semantics.

A mask_mod is integer arithmetic and comparisons. Called on :class:`SymInt` arguments
instead of index tensors, every operation it performs builds a Z3 term, so its result
is a Z3 formula of the symbolic positions, sizes and parameters: the *symbolic mask*.

Every value carries a ``dtype``: ``None`` for a Python scalar (a :class:`SymInt` is then
an unbounded, exact Python int, a :class:`SymBool` a Python bool), ``"int64"``,
``"int32"`` or ``"bool"`` for a tensor of that dtype (FlexAttention's ``b, h, q_idx,
kv_idx`` are int64 tensors). The semantics is the one torch runs (design.md §12); each
part has its module:

- :mod:`.dtypes`: the dtypes and their ranges; :mod:`.sym`: the value type
  (:class:`Sym`, :class:`SymInt`, :class:`SymBool`) and its operators; :mod:`.methods`:
  the tensor methods (``.clamp``, ``.to``, ``.new_ones`` …);
- :mod:`.promote`: promotion bool < int32 < int64, a Python int meeting a tensor, int64
  and int32 wrapping (two's complement) decided by an interval kept on every value and,
  when that does not settle it, by the tracer's solver;
- :mod:`.arithmetic`: ``+ - * // % fmod``, ``div``, ``-``, ``abs``, ``**`` (floor
  division, a divisor that may be 0 as the *obligation* ``b != 0``);
- :mod:`.bits`: comparisons, ``& | ^ ~`` (logical on Booleans, two's complement on
  integers), ``<< >>`` by a constant;
- :mod:`.functions`: ``cast``, ``where``, ``minimum``/``maximum``, ``clamp``,
  ``logical_*``, :func:`mask_value` (what a mask_mod must return);
- :mod:`.index`: :class:`SymIndex`, an index tensor with a declared property;
- :mod:`.tracer`: :class:`Tracer`, one run's branch decisions and obligations (a tensor
  used as a Python truth value cannot run; a Python-level symbolic value asks the tracer
  which branch to take, and :mod:`solvers.symbolic.trace` runs the program once per
  feasible combination of branches);
- :mod:`.errors`: anything not modelled raises :class:`Untraceable`, what torch itself
  would refuse :class:`CannotRun`, a bound of the tracer :class:`TraceLimit`; the tracer
  turns them into one line naming the operation and the line of the user's file.

The torch and numpy functions the shims offer (:mod:`solvers.symbolic.shims`) are built
on :func:`arith`, :func:`compare`, :func:`bitwise`, :func:`where`, :func:`minimum`,
:func:`maximum`, :func:`clamp`, :func:`cast` and :func:`logical` here. This package fills
:data:`~solvers.symbolic.terms.methods.OPS`, the table through which the operators and
tensor methods of :class:`Sym` call them.
"""

from hasse.solvers.symbolic.terms.arithmetic import MAX_POWER, absolute, arith, divide, negate, power
from hasse.solvers.symbolic.terms.bits import bitwise, compare, invert, shift
from hasse.solvers.symbolic.terms.dtypes import BITS, BOOL, INT32, INT64, RANGES, DType, dtype_of
from hasse.solvers.symbolic.terms.errors import RUNNING, CannotRun, NotModelled, TraceLimit, Untraceable
from hasse.solvers.symbolic.terms.functions import (_scalar_shape, cast, clamp, logical, mask_value, maximum,
                                                    minimum, where)
from hasse.solvers.symbolic.terms.index import SymIndex
from hasse.solvers.symbolic.terms.methods import OPS
from hasse.solvers.symbolic.terms.sym import TRUTH, Sym, SymBool, SymInt, as_bool, as_int, lift
from hasse.solvers.symbolic.terms.tracer import MAX_DECISIONS, RANGE_MS, Tracer, free_constants

vars(OPS).update(arith=arith, power=power, negate=negate, absolute=absolute, invert=invert, bitwise=bitwise,
                 shift=shift, compare=compare, cast=cast, clamp=clamp, divide=divide, logical=logical,
                 minimum=minimum, maximum=maximum, where=where, _scalar_shape=_scalar_shape)

__all__ = ["BITS", "BOOL", "INT32", "INT64", "MAX_DECISIONS", "MAX_POWER", "OPS", "RANGES", "RANGE_MS", "RUNNING",
           "TRUTH", "CannotRun", "DType", "NotModelled", "Sym", "SymBool", "SymIndex", "SymInt", "TraceLimit",
           "Tracer", "Untraceable", "absolute", "arith", "as_bool", "as_int", "bitwise", "cast", "clamp", "compare",
           "divide", "dtype_of", "free_constants", "invert", "lift", "logical", "mask_value", "maximum", "minimum",
           "negate", "power", "shift", "where"]

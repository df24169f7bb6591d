"""The numpy and torch a traced program sees: the modelled functions, and a clear refusal for the rest.

:func:`~solvers.symbolic.trace.rebind` replaces the ``numpy`` and ``torch`` modules a mask
program names by :data:`NUMPY_SHIM` and :data:`TORCH_SHIM`. Their functions follow the
library they stand for (contract: torch 2.13, numpy 2.4), built on the value semantics of
:mod:`solvers.symbolic.terms` (torch's in :mod:`.torch_shim`, numpy's in :mod:`.numpy_shim`,
what both share in :mod:`.common`):

- torch: ``where`` (a bool tensor condition; both branches evaluated), ``minimum`` /
  ``maximum`` (two tensors: a number raises TypeError), ``clamp``/``clip``, ``abs``,
  ``remainder``, ``fmod``, ``floor_divide``, ``div(rounding_mode=…)``, ``logical_*``
  (exactly two tensors, one for ``not``), ``bitwise_*``, ``eq``/``ne``/``lt``/``le``/``gt``/``ge``,
  ``ones_like``/``zeros_like``/``full_like``, ``ones``/``zeros``/``full`` of one value,
  ``tensor``/``as_tensor`` of a number; dtypes ``bool``, ``int64``/``long``, ``int32``/``int``;
- numpy: the same names as numpy has them (numbers allowed; ``np.logical_and(a, b, c)``
  takes ``c`` as ``out=``: refused), ``clip``, ``mod``, ``asarray``/``array`` (identity);
  arithmetic on bool arrays, which numpy computes and torch refuses, is refused (a named
  difference).

Anything else is :class:`~solvers.symbolic.terms.Untraceable`, naming the function.
"""

from hasse.solvers.symbolic.shims.numpy_shim import NUMPY_SHIM
from hasse.solvers.symbolic.shims.torch_shim import TORCH_SHIM

__all__ = ["NUMPY_SHIM", "TORCH_SHIM"]

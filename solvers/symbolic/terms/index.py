"""Index tensors with declared properties (a document id per position, a permutation, a parent array)."""

from __future__ import annotations

import z3

from hasse.solvers.symbolic.terms.dtypes import INT64, RANGES
from hasse.solvers.symbolic.terms.errors import Untraceable
from hasse.solvers.symbolic.terms.sym import SymInt, _tracer_of, as_int
from hasse.solvers.symbolic.terms.tracer import Tracer


class SymIndex:
    """A 1-D integer index tensor (a document id per position, a permutation, a parent array)
    modelled as an uninterpreted function ``f``: ``t[i]`` is ``f(i)``, an int64 tensor value.

    What is known about ``f`` is a declared *property*, instantiated on every pair of
    lookups the program makes (:meth:`axioms`); a model of the lookups extends to a real
    tensor of that kind, so the instantiation is sound for refutations and complete for
    proofs. Properties: ``"nondecreasing"`` (document ids of packed sequences),
    ``"bijection"`` (a permutation of ``0 … size-1``), ``"backward"`` (a parent array
    of a forest: ``-1 <= f(i) < i``, ``-1`` for a root, so ``f(0) = -1``), ``"any"``.
    Every value looked up lies in int64's range (an axiom too).
    """

    PROPERTIES = ("nondecreasing", "bijection", "backward", "any")

    def __init__(self, name: str, prop: str, size, tracer: Tracer | None = None, low=0):
        if prop not in self.PROPERTIES:
            raise ValueError(f"unknown index property {prop!r}")
        self.name, self.prop, self.tracer = name, prop, tracer
        self.size = as_int(size, "an index tensor's size")
        self.low = low
        self.function = z3.Function(name, z3.IntSort(), z3.IntSort())
        self.lookups: list = []  # the argument terms looked up, in order (deduplicated by identity of terms)

    def __getitem__(self, i):
        if isinstance(i, tuple) or isinstance(i, slice):
            raise Untraceable(f"{self.name}[…] with a slice or several indices (a 1-D lookup is modelled)")
        arg = as_int(i, f"an index into {self.name}")
        if not any(arg.eq(x) for x in self.lookups):
            self.lookups.append(arg)
        tracer = self.tracer or _tracer_of(i)
        if tracer is not None:
            tracer.oblige(z3.And(arg >= 0, arg < self.size), f"{self.name}[i] is looked up outside 0 … size-1")
        bounds = {"bijection": (0, 2 ** 31), "backward": (-1, 2 ** 31)}.get(self.prop)  # n <= 2^31 (limits)
        return SymInt(self.function(arg), tracer, INT64, bounds)

    def __len__(self):
        raise Untraceable(f"len({self.name}) (use the symbolic size)")

    def axioms(self, extra_lookups=()) -> list:
        """The declared property on every lookup (and pair of lookups) made so far."""
        f, n = self.function, self.size
        terms = list(self.lookups) + [t for t in extra_lookups if not any(t.eq(x) for x in self.lookups)]
        out = []
        low, high = RANGES["int64"]
        for i in terms:
            inside = z3.And(i >= 0, i < n)
            out.append(z3.Implies(inside, z3.And(f(i) >= low, f(i) <= high)))  # an int64 tensor's values
            if self.prop == "bijection":
                out.append(z3.Implies(inside, z3.And(f(i) >= 0, f(i) < n)))
            elif self.prop == "backward":
                out.append(z3.Implies(inside, z3.And(f(i) >= -1, f(i) < i)))  # -1: a root (f(0) = -1 follows)
            elif self.prop == "nondecreasing":
                out.append(z3.Implies(inside, f(i) >= self.low))
        for a_i, a in enumerate(terms):
            for b in terms[a_i + 1:]:
                both = z3.And(a >= 0, a < n, b >= 0, b < n)
                if self.prop == "bijection":
                    out.append(z3.Implies(z3.And(both, a != b), f(a) != f(b)))
                elif self.prop == "nondecreasing":
                    out.append(z3.Implies(z3.And(both, a <= b), f(a) <= f(b)))
                    out.append(z3.Implies(z3.And(both, b <= a), f(b) <= f(a)))
        return out

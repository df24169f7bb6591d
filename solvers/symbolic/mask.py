"""A symbolic mask: ``M[q, k]`` as a Z3 formula of symbolic positions, length and parameters.

:class:`SymbolicMask` is what every all-n claim works on (:mod:`solvers.symbolic.claims`):

- ``n`` — the symbolic sample length (a Z3 ``Int``), ``params`` — the symbolic parameters
  a spec left out (``w``, ``block``, …; those a spec gives are constants);
- ``size`` — the number of positions as a term of ``n`` and the parameters (``3n − 2`` for
  Butterfly, ``2n − l`` for Block Two-Stream, ``n`` for most);
- ``conditions`` — side conditions of every statement about it (``n ≥ 1``, ``l | n``), the
  ones the program's own parameter checks demand plus those a caller adds;
- :meth:`allowed` — ``M[q, k]`` for any two position terms, by substituting them into the
  traced formula; :meth:`facts` — what must accompany a query: the axioms of its index
  tensors, instantiated on the lookups the query made; ``obligations`` — what the program
  needs to run (a divisor never 0, a lookup in range): checked by every claim first, a
  failure refutes it, never a hypothesis.

It is built by :func:`from_rule` (a rule ``rule(q, k)``, e.g. a catalogue factory's
output called with symbolic parameters) or :func:`from_mask_mod` (``mask_mod(b, h, q_idx,
kv_idx)``). :meth:`concrete` evaluates the formula on the ``size × size`` grid at given
values, for the equality tests against the concrete catalogue and for re-checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import z3

from hasse.solvers.symbolic.conditions import describe_conditions  # noqa: F401  (importable from here)
from hasse.solvers.symbolic.terms import free_constants as _free_constants
from hasse.solvers.symbolic.terms import SymIndex, SymInt
from hasse.solvers.symbolic.trace import Traced, TraceError, trace
from hasse.theory.limits import MAX_SYMBOLIC_HEADS, MAX_SYMBOLIC_VALUE, require_count

N = "n"  # the name of the sample length everywhere


@dataclass
class SymbolicMask:
    """``M[q, k]`` for all sizes (module docstring)."""

    name: str  # the spec or file:function it came from, as the user wrote it
    n: z3.ArithRef  # the sample length
    size: z3.ArithRef  # the number of positions, a term of n and params
    params: dict[str, z3.ArithRef]  # symbolic parameters by name (constants are not listed)
    formula: z3.BoolRef  # M[q, k] over the placeholder positions q0, k0 below
    q: z3.ArithRef = field(default_factory=lambda: z3.Int("q0"))
    k: z3.ArithRef = field(default_factory=lambda: z3.Int("k0"))
    conditions: list = field(default_factory=list)  # side conditions of every statement (Z3 BoolRefs)
    obligations: list = field(default_factory=list)  # (formula over q0, k0, why): must hold on the grid
    indexes: list = field(default_factory=list)  # SymIndex objects (uninterpreted index tensors)
    streams: tuple[tuple[str, z3.ArithRef], ...] = ()  # (name, first position) of each stream, in order
    statement: str = ""  # the side conditions in words: "for all n >= 2 and all l >= 1 with l | n"
    constants: set = field(default_factory=set)  # every concrete Python int that met a symbolic value (q < 1000: 1000)
    tensors: dict = field(default_factory=dict)  # closure tensors read: name -> "doc as given (length 9)" / "every …"
    program: object = None  # the USER'S program, run concretely by the re-check (solvers.symbolic.recheck.Program)

    def allowed(self, q, k) -> z3.BoolRef:
        """``M[q, k]`` for position terms ``q`` and ``k`` (integers or Z3 terms)."""
        return z3.substitute(self.formula, (self.q, _term(q)), (self.k, _term(k)))

    def attends(self, q, k) -> z3.BoolRef:
        """``A[q, k] = M[q, k] or q == k`` (one layer with the residual)."""
        q, k = _term(q), _term(k)
        return z3.Or(q == k, self.allowed(q, k))

    def inside(self, *positions) -> z3.BoolRef:
        """Every position term lies in ``0 … size − 1``."""
        return z3.And([z3.And(_term(p) >= 0, _term(p) < self.size) for p in positions])

    def facts(self, pairs: Sequence[tuple]) -> list:
        """The index axioms for a query that reads ``M`` at ``pairs`` of position terms.

        Never the obligations: a divisor that may be 0 or a lookup out of range is a failure
        of the program (the claims check them first: :func:`solvers.symbolic.claims.check_obligations`),
        not a hypothesis that drops the pairs where it fails. The axioms are properties of
        the declared index tensors, true of every tensor a statement ranges over.
        """
        out = []
        lookups = []
        for index in self.indexes:
            for q, k in pairs:
                for term in index.lookups:
                    lookups.append(z3.substitute(term, (self.q, _term(q)), (self.k, _term(k))))
            out.extend(index.axioms(lookups))
            lookups = []
        return out

    def values(self, n: int, **params: int) -> list:
        """Z3 equalities fixing ``n`` and the parameters (for substitution)."""
        subs = [(self.n, z3.IntVal(n))]
        for name, value in params.items():
            if name in self.params:
                subs.append((self.params[name], z3.IntVal(value)))
        return subs

    def size_at(self, n: int, **params: int) -> int:
        value = z3.simplify(z3.substitute(self.size, *self.values(n, **params)))
        if not z3.is_int_value(value):
            raise TraceError(f"{self.name}: the size does not reduce to a number at n = {n}, {params}")
        return value.as_long()

    def concrete(self, n: int, **params: int) -> np.ndarray:
        """The ``size × size`` boolean matrix of the FORMULA at these values (the re-check runs the
        program instead: :mod:`solvers.symbolic.recheck`).

        Evaluated on numpy arrays (:func:`solvers.symbolic.evaluate.evaluate`, Z3's semantics);
        where that cannot (an undefined entry, a free constant) entry by entry through Z3's
        simplifier, which names the entry that does not reduce. Index tensors must not occur
        (their values are not given here).
        """
        if self.indexes:
            raise TraceError(f"{self.name}: a mask over index tensors has no single concrete form")
        size = self.size_at(n, **params)
        from hasse.solvers.symbolic.evaluate import UNDEFINED, Unevaluable, evaluate, free_names

        env = {str(term): value for term, value in ((self.n, n), *((self.params[k], v) for k, v in params.items()
                                                                    if k in self.params))
               if not z3.is_int_value(term)}
        env[str(self.q)], env[str(self.k)] = np.arange(size)[:, None], np.arange(size)[None, :]
        try:
            for name in free_names(self.formula) - set(env):  # fix_index's "outside the values": unknown
                env[name] = UNDEFINED
            return np.array(evaluate(self.formula, env, shape=(size, size)), dtype=bool)
        except Unevaluable:
            pass
        fixed = z3.simplify(z3.substitute(self.formula, *self.values(n, **params)))
        out = np.zeros((size, size), dtype=bool)
        for q in range(size):
            row = z3.simplify(z3.substitute(fixed, (self.q, z3.IntVal(q))))
            for k in range(size):
                v = z3.simplify(z3.substitute(row, (self.k, z3.IntVal(k))))
                if not (z3.is_true(v) or z3.is_false(v)):
                    raise TraceError(f"{self.name}: M[{q}, {k}] does not reduce to true/false at n = {n}")
                out[q, k] = z3.is_true(v)
        return out


def _term(x):
    return x if isinstance(x, z3.ExprRef) else z3.IntVal(int(x))


def _input(expr, bounds: tuple, dtype: str | None = None) -> SymInt:
    """A symbolic input: an int64 tensor (``dtype``) or a Python int, with its interval."""
    return SymInt(expr, None, dtype=dtype, bounds=bounds)


def _domain(n, params: dict) -> list:
    """The domain bound of every statement (theory.limits.MAX_SYMBOLIC_VALUE): ``1 <= n <= 2^31``, each symbolic
    parameter within ``-2^31 … 2^31`` (so that int64 arithmetic is decided under them)."""
    top = MAX_SYMBOLIC_VALUE
    out = [n >= 1, n <= top] if not z3.is_int_value(n) else []
    for term in params.values():
        out += [term >= -top, term <= top]
    return out


def _largest(term, facts: list) -> int | None:
    """An upper bound of ``term`` under ``facts`` (Z3's optimum; None when it has none or takes too long)."""
    term = z3.simplify(term)
    if z3.is_int_value(term):
        return term.as_long()
    opt = z3.Optimize()
    opt.set("timeout", 2000)
    opt.add(*facts)
    handle = opt.maximize(term)
    if opt.check() != z3.sat:
        return None
    value = opt.upper(handle)
    return value.as_long() if z3.is_int_value(value) else None


def from_rule(name: str, make_rule: Callable[..., Callable], *, params: dict[str, int | None],
              size: Callable[..., object] | None = None, conditions: Sequence = (),
              streams: Callable[..., tuple] | None = None, indexes: Sequence[SymIndex] = ()) -> SymbolicMask:
    """Trace ``make_rule(**params)(q, k)`` with symbolic values for the parameters given as None.

    ``params`` maps each parameter of the factory to a value (a constant) or None (symbolic,
    named after the parameter). ``size(n, **params)`` gives the number of positions
    (default ``n``); it and ``streams`` receive Z3 terms. ``n`` is always symbolic unless
    ``params`` fixes it. The positions are int64 tensors inside ``0 … size - 1``, ``n`` and the
    parameters Python ints within the domain bound (:data:`theory.limits.MAX_SYMBOLIC_VALUE`),
    which is in the tracer's assumptions and the side conditions.
    """
    n = z3.Int(N)
    top = MAX_SYMBOLIC_VALUE
    symbolic = {p: z3.Int(p) for p, v in params.items() if v is None and p != N}
    values = {p: (_input(symbolic[p], (-top, top)) if p in symbolic
                  else (_input(n, (1, top)) if p == N and v is None else v))
              for p, v in params.items()}
    q, k = z3.Int("q0"), z3.Int("k0")
    n_term = n if params.get(N, None) is None else z3.IntVal(params[N])
    terms = {p: (symbolic[p] if p in symbolic else z3.IntVal(v) if isinstance(v, int) else v)
             for p, v in params.items() if p != N}
    size_term = _term(size(n_term, **terms) if size is not None else n_term)
    domain = _domain(n_term, symbolic)
    inside = [q >= 0, k >= 0, q < size_term, k < size_term]
    high = _largest(size_term, domain + list(conditions))
    bounds = (0, high - 1 if high is not None else None)

    def setup(tracer, _program):
        from hasse.solvers.symbolic.trace import _bound, rebind

        factory = rebind(make_rule, tracer)
        bound = {p: (_bound(v, tracer) if isinstance(v, SymInt) else v) for p, v in values.items()}
        return rebind(factory(**bound), tracer)

    positions = [_input(q, bounds, "int64"), _input(k, bounds, "int64")]
    traced: Traced = trace(make_rule, positions, setup=setup, source=name, n=n_term,
                           assumptions=domain + inside)
    conds = list(traced.conditions) + list(conditions)
    if params.get(N, None) is None and not any(str(c) == f"{N} >= 1" for c in conds):
        conds.append(n >= 1)
    conds += [c for c in domain if not any(c.eq(x) for x in conds)]
    return SymbolicMask(name, n if params.get(N, None) is None else n_term, size_term, symbolic,
                        traced.formula, q, k, conds, traced.obligations, list(indexes) + traced.indexes,
                        tuple(streams(n_term, **terms)) if streams else (),
                        describe_conditions(n, symbolic, conds) + tensors_phrase(traced.tensors),
                        constants=set(traced.constants),
                        tensors=dict(traced.tensors))


def from_mask_mod(name: str, mask_mod: Callable, *, heads: int | None = None, batch: int | None = None,
                  indexes: Sequence[SymIndex] = (), extra_args: Sequence = (),
                  assume: dict[str, str] | None = None, strict_assume: bool = True, setup: Callable | None = None,
                  size=None, params: dict | None = None, n_value: int | None = None,
                  raises: list | None = None) -> SymbolicMask:
    """A FlexAttention ``mask_mod(b, h, q_idx, kv_idx)`` for all ``n`` (``Q_LEN = KV_LEN = n``).

    The four inputs are int64 tensors: ``q_idx, kv_idx`` in ``0 … n - 1``, ``b`` and ``h`` in
    ``0 … 2^31 - 1`` (the domain bound, :data:`theory.limits.MAX_SYMBOLIC_VALUE`, with
    ``n <= 2^31``; in the tracer's assumptions and the side conditions).

    ``b``: with ``batch`` it is the symbolic parameter ``b`` of the statement, ``0 <= b <
    batch``; without, a mask whose formula or obligations depend on ``b`` (decided by Z3:
    some ``b`` gives another value than ``b = 0``) is refused ("give --batch B"), and the
    mask is the one at ``b = 0``. ``h`` the same way with ``heads``, except that the layer's
    mask is the union over ``h < heads`` (an ``Or`` of the formula at each head; its
    obligations at every head). At most :data:`theory.limits.MAX_SYMBOLIC_HEADS` heads.

    ``assume`` maps a closure/global tensor of the program to a property
    (``nondecreasing``, ``permutation``, ``parents``): it is then an index tensor of length
    ``n`` with that property (:class:`SymIndex`), not its values.

    A factory of ``n`` (:mod:`solvers.symbolic.catalog.factory`) passes ``setup`` (the factory
    called on each path, :func:`~solvers.symbolic.trace.trace`), ``size`` (the term of its
    ``positions``: ``Q_LEN = KV_LEN = size``), ``params`` (its symbolic parameters: key -> Z3
    term, each within the domain bound), ``n_value`` (``n`` given literally) and ``raises``
    (collects the paths on which the factory raises).
    """
    from hasse.theory.errors import InputError

    if heads is not None:
        require_count("heads", heads, MAX_SYMBOLIC_HEADS, "the union over heads holds one copy of the traced "
                      "formula per head", name)
    if batch is not None:
        require_count("batch", batch, MAX_SYMBOLIC_VALUE, "b is a symbolic parameter of the statement", name)
    top = MAX_SYMBOLIC_VALUE
    n = z3.Int(N) if n_value is None else z3.IntVal(n_value)
    size = n if size is None else size
    own = dict(params or {})
    q, k, b, h = z3.Int("q0"), z3.Int("k0"), z3.Int("b0"), z3.Int("h0")
    b_top = min(batch, top) if batch is not None else top
    h_top = min(heads, top) if heads is not None else top
    bounds = ([n >= 1, n <= top] if n_value is None else []) + [c for t in own.values() for c in (t >= -top, t <= top)]
    domain = bounds + [q >= 0, k >= 0, q < size, k < size, b >= 0, b < b_top, h >= 0, h < h_top]
    indexed = {}
    for tensor, prop in (assume or {}).items():
        if prop not in ASSUMABLE:
            raise InputError(f"--assume {tensor}={prop}: the property must be one of {', '.join(ASSUMABLE)}")
        indexed[tensor] = SymIndex(tensor, ASSUMABLE[prop], _input(n, (1, top)))
    args = [_input(b, (0, b_top - 1), "int64"), _input(h, (0, h_top - 1), "int64"),
            _input(q, (0, top - 1), "int64"), _input(k, (0, top - 1), "int64"), *extra_args]
    traced = trace(mask_mod, args, source=name, assumptions=domain, n=n, assume=indexed, flex=True,
                   strict_assume=strict_assume, setup=setup, raises=raises)
    conds = list(traced.conditions) + [c for c in bounds if not any(c.eq(x) for x in traced.conditions)]
    formula, obligations = traced.formula, list(traced.obligations)
    params: dict = own
    if batch is not None:
        b_param = z3.Int("b")
        params["b"] = b_param
        formula = z3.substitute(formula, (b, b_param))
        obligations = [(z3.substitute(ob, (b, b_param)), why) for ob, why in obligations]
        conds = [z3.substitute(c, (b, b_param)) for c in conds] + [b_param >= 0, b_param <= batch - 1]
    else:
        _refuse_if_reads(name, "b", b, formula, obligations, domain + conds, "--batch B")
        formula = z3.substitute(formula, (b, z3.IntVal(0)))
        obligations = [(z3.substitute(ob, (b, z3.IntVal(0))), why) for ob, why in obligations]
        conds = [z3.substitute(c, (b, z3.IntVal(0))) for c in conds]
    domain_h = [z3.substitute(c, (b, z3.IntVal(0))) for c in domain]
    if heads is None or not _reads(h, formula, obligations, domain_h + conds):
        if heads is None:
            _refuse_if_reads(name, "h", h, formula, obligations, domain_h + conds, "the number of heads (--heads H)")
        formula = z3.substitute(formula, (h, z3.IntVal(0)))
        obligations = [(z3.substitute(ob, (h, z3.IntVal(0))), why) for ob, why in obligations]
    else:
        formula = z3.Or([z3.substitute(formula, (h, z3.IntVal(i))) for i in range(heads)])
        obligations = [(z3.Implies(z3.And(h >= 0, h < heads), ob), why) for ob, why in obligations]  # every head
    conds = [c for c in conds if not z3.is_true(z3.simplify(c))]
    return SymbolicMask(name, n, size, params, z3.simplify(formula), q, k, conds, obligations,
                        list(indexes) + traced.indexes, (),
                        describe_conditions(n, params, conds) + tensors_phrase(traced.tensors),
                        constants=set(traced.constants), tensors=dict(traced.tensors))


def tensors_phrase(tensors: dict) -> str:
    """What the statement says of the closure tensors the program reads: ``", with doc as given (length 9)"``."""
    given = [t for t in tensors.values() if not t.startswith("every ")]  # an assumed one is an index: its words
    return f", with {' and '.join(given)}" if given else ""  # come with the indexes (describe_conditions)


# --assume NAME=PROPERTY: the property of a closure tensor, as SymIndex names it
ASSUMABLE = {"nondecreasing": "nondecreasing", "permutation": "bijection", "parents": "backward", "any": "any"}


def _reads(var, formula, obligations: list, facts: list, timeout_ms: int = 10_000) -> bool:
    """Whether some value of ``var`` gives ``formula`` or an obligation another value than ``var = 0`` (Z3; unknown: yes)."""
    if not any(var.eq(c) for e in [formula, *[ob for ob, _ in obligations]] for c in _free_constants(e)):
        return False
    other = z3.Int(f"{var}_other")
    changed = [z3.substitute(e, (var, other)) for e in [formula, *[ob for ob, _ in obligations]]]
    at_zero = [z3.substitute(e, (var, z3.IntVal(0))) for e in [formula, *[ob for ob, _ in obligations]]]
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*[z3.substitute(f, (var, other)) for f in facts], other >= 0, other < MAX_SYMBOLIC_VALUE)
    solver.add(z3.Or([a != c for a, c in zip(changed, at_zero)]))
    return solver.check() != z3.unsat


def _refuse_if_reads(name: str, label: str, var, formula, obligations, facts, give: str) -> None:
    if _reads(var, formula, obligations, facts):
        raise TraceError(f"{name}: the mask_mod reads {label} (its mask differs from the one at {label} = 0 for some "
                         f"{label}); give {give}")



"""A mask_mod *factory of n* traced for every n: ``FILE.py:make_mask_mod`` whose first parameter is ``n``.

A derived layout's size and streams depend on ``n`` (Butterfly has ``3n − 2`` positions), so
the file exports a factory ``make_mask_mod(n, **params)`` beside ``positions(n, **params)``
(``Q_LEN = KV_LEN``; theory/flex/__init__.py). :func:`trace_factory` reads it for every ``n``:

- ``n`` and every parameter the command line does not give literally are symbolic Python
  ints (:class:`~solvers.symbolic.terms.SymInt`): a parameter is named by the catalogue's
  symbol (:data:`~solvers.symbolic.catalog.traced.SYMBOL`: ``block`` -> ``l``, ``window`` ->
  ``w``, others their own name), so ``hasse equiv FILE.py:make_mask_mod block_two_stream``
  compares the same ``l`` and ``n``; the parameter's key stays its Python name;
- a literal call fixes what it gives (``make_mask_mod(variant='clique')``: ``n`` and ``block``
  stay symbolic; ``make_mask_mod(8)`` fixes ``n``);
- a parameter left out with a default: symbolic when the default is an ``int`` (not a
  bool), else its default; without a default: symbolic, except one annotated ``str`` or
  ``bool``, which must be given literally (one-line exit 2);
- ``--assume NAME=PROPERTY`` for a parameter: the argument is an index tensor of length
  ``n`` with that property (:class:`~solvers.symbolic.terms.SymIndex`, the Z3 function
  ``NAME``: the same as a task's index of that name); for any other name, a closure or
  global tensor of the returned mask_mod, as for a plain mask_mod;
- ``positions(...)`` is traced to the size term, then the returned mask_mod as a plain one
  (:func:`~solvers.symbolic.mask.from_mask_mod`) on ``q_idx, kv_idx`` in ``0 … size − 1``.

**Raises.** What the factory (or ``positions``) raises on a feasible path — its own checks,
``raise ValueError("block must divide n")`` — is never a hypothesis: each raising path
becomes an *obligation* "the program does not raise here" (its path condition negated),
and ``positions`` returning fewer than one position is one too. Every claim checks the
obligations first on the whole domain of its statement (:mod:`solvers.symbolic.claims.
obligations`): where the domain reaches a raise, the claim is refuted at the smallest such
``n`` ("the program fails: …"), re-checked by running the file there. The domain is the
statement's side conditions: the factory's own (``1 <= n <= 2^31``, each parameter within
``±2^31``) and, for ``hasse equiv FILE SPEC``, the other side's (``l >= 1, l | n``) — so
the factory must run on all of the spec's domain, and a factory that refuses a value the
spec allows is a failure, not a proof. A factory traced alone (``prove-mask FILE.py:fn``)
must run on every value of its parameters (narrow them with ``--param-range``).
"""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np
import z3

from hasse.solvers.symbolic.mask import ASSUMABLE, N, SymbolicMask, _input, from_mask_mod
from hasse.solvers.symbolic.programs import MaskModProgram, Point, ProgramFailure, _one_line
from hasse.solvers.symbolic.terms import BOOL, Sym, SymBool, SymIndex, SymInt, Untraceable, as_int
from hasse.solvers.symbolic.trace import _bound, rebind, trace
from hasse.theory.errors import InputError
from hasse.theory.limits import MAX_SYMBOLIC_VALUE

_RESERVED = {"q0", "k0", "b0", "h0", "b", N}  # Z3 names the statement uses itself


def is_factory_of_n(fn) -> bool:
    """Whether ``fn`` is a factory of ``n``: its first parameter is ``n`` (a mask_mod's is ``b``).

    >>> is_factory_of_n(lambda n, block=1: None), is_factory_of_n(lambda b, h, q_idx, kv_idx: q_idx >= kv_idx)
    (True, False)
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0].name == N and params[0].kind in (params[0].POSITIONAL_OR_KEYWORD,
                                                                       params[0].KEYWORD_ONLY)


def _annotation(param: inspect.Parameter) -> str:
    note = param.annotation
    if note is param.empty:
        return ""
    return str(getattr(note, "__name__", note))


class Plan:
    """What each parameter of the factory is: literal, symbolic int, index tensor, or its default."""

    def __init__(self, factory, name: str, args: tuple, kwargs: dict, assume: dict, path: str, source: str):
        self.name, self.path, self.source = name, path, source
        try:
            signature = inspect.signature(factory)
        except (TypeError, ValueError):
            raise InputError(f"{name}: its signature cannot be read", source) from None
        try:
            given = dict(signature.bind_partial(*args, **kwargs).arguments)
        except TypeError as exc:
            raise InputError(f"{name}(…): {exc}", source) from None
        self.literal: dict = {}  # key -> value given on the command line (or the default kept)
        self.symbolic: dict = {}  # key -> Z3 name
        self.indexes: dict = {}  # key -> property (SymIndex's)
        self.order: list = []
        for p in signature.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.kind == p.POSITIONAL_ONLY:
                raise InputError(f"{name}: the parameter {p.name} is positional-only (a factory of n takes keywords: "
                                 f"{name}(n, …))", source)
            self.order.append(p.name)
            if p.name in given:
                if p.name in assume:
                    raise InputError(f"--assume {p.name}: {name}({p.name}=…) gives it literally too", source)
                value = given[p.name]
                if p.name == N and (not isinstance(value, int) or isinstance(value, bool)
                                    or not 1 <= value <= MAX_SYMBOLIC_VALUE):
                    raise InputError(f"{name}(n=…): n must be an integer 1 … 2^31, got {value!r}", source)
                self.literal[p.name] = value
            elif p.name in assume:
                if p.name == N:
                    raise InputError("--assume n: n is the length, not a tensor", source)
                self.indexes[p.name] = ASSUMABLE[assume[p.name]]
            elif p.name == N:
                self.symbolic[N] = N
            elif p.default is not p.empty:
                if isinstance(p.default, int) and not isinstance(p.default, bool):
                    self.symbolic[p.name] = _symbol(p.name, name, source)
                else:
                    self.literal[p.name] = p.default
            elif _annotation(p) in ("str", "bool"):
                kind = _annotation(p)
                example = "'…'" if kind == "str" else "True"
                raise InputError(f"{name}: the {kind} parameter {p.name} must be given literally "
                                 f"({path}:{name}({p.name}={example}))", source)
            else:
                self.symbolic[p.name] = _symbol(p.name, name, source)
        self.closures = {k: v for k, v in assume.items() if k not in self.indexes and k not in given}

    @property
    def fixed_n(self) -> int | None:
        return self.literal.get(N)


def _symbol(key: str, name: str, source: str) -> str:
    from hasse.solvers.symbolic.catalog.traced import SYMBOL

    symbol = SYMBOL.get(key, key)
    if symbol in _RESERVED:
        raise InputError(f"{name}: the parameter {key} would be the Z3 symbol {symbol}, which the statement uses "
                         f"itself (rename it, or give it literally)", source)
    return symbol


def _positions_of(factory, plan: Plan):
    """The module's ``positions`` and the keys of the factory's parameters it takes."""
    positions = getattr(factory, "__globals__", {}).get("positions")
    if not callable(positions):
        raise InputError(f"{plan.name}(n, …) is a factory of n, but {plan.path} defines no positions(n, …) (the "
                         f"number of positions it lays out, Q_LEN = KV_LEN); define it beside {plan.name}",
                         plan.source)
    try:
        params = list(inspect.signature(positions).parameters.values())
    except (TypeError, ValueError):
        raise InputError(f"{plan.path}: the signature of positions cannot be read", plan.source) from None
    if not params or params[0].name != N:
        raise InputError(f"{plan.path}: positions must take n first, as {plan.name} does (positions(n, …))",
                         plan.source)
    keys = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in plan.order:
            keys.append(p.name)
        elif p.default is p.empty:
            raise InputError(f"{plan.path}: positions takes {p.name}, which {plan.name} does not (positions(n, …) "
                             f"takes the factory's parameters)", plan.source)
    return positions, keys


def _size_value(result):
    """The term of what ``positions`` returns: a Python int (a tensor or a bool is refused)."""
    if isinstance(result, SymBool) or isinstance(result, bool):
        raise Untraceable("positions(…) returns a bool, not the number of positions")
    if isinstance(result, Sym) and result.dtype is not None:
        raise Untraceable("positions(…) returns a tensor, not a Python int (Q_LEN = KV_LEN is an int)")
    return as_int(result, "what positions(…) returns")


def trace_factory(source: str, factory, name: str, args: tuple, kwargs: dict, *, path: str,
                  assume: dict | None = None, heads: int | None = None, batch: int | None = None,
                  strict_assume: bool = True) -> SymbolicMask:
    """The SymbolicMask of the factory ``factory`` (called ``name`` in ``path``) for every n (module docstring).

    ``args``/``kwargs``: the literal call; ``assume``: ``--assume`` (factory parameters become
    index tensors, other names closure tensors). Run it inside a bounded run (user code).
    The mask's ``program`` is left to the caller (:class:`~solvers.symbolic.programs.FactoryProgram`).
    """
    from hasse.solvers.symbolic.catalog.traced import _statement

    assume = dict(assume or {})
    for key, prop in assume.items():
        if prop not in ASSUMABLE:
            raise InputError(f"--assume {key}={prop}: the property must be one of {', '.join(ASSUMABLE)}", source)
    plan = Plan(factory, name, args, kwargs, assume, path, source)
    positions, pos_keys = _positions_of(factory, plan)
    top = MAX_SYMBOLIC_VALUE
    fixed = plan.fixed_n
    n = z3.Int(N) if fixed is None else z3.IntVal(fixed)
    terms = {key: z3.Int(sym) for key, sym in plan.symbolic.items() if key != N}
    bounds = ([n >= 1, n <= top] if fixed is None else []) + [c for t in terms.values() for c in (t >= -top, t <= top)]
    n_input = _input(n, (1, top)) if fixed is None else fixed
    indexes = {key: SymIndex(key, prop, SymInt(n, None)) for key, prop in plan.indexes.items()}
    values = {**plan.literal, **{key: _input(t, (-top, top)) for key, t in terms.items()}, **indexes, N: n_input}

    def call_values(tracer, keys):
        return {k: _bound(values[k], tracer) for k in keys}

    # 1. positions(n, …): the size term (an If chain over its paths); its raises are collected
    pos_raises: list = []

    def pos_setup(tracer, _program):
        fn = rebind(positions, tracer)
        bound = call_values(tracer, pos_keys)
        return lambda: fn(**bound)

    pos_source = f"{path}:positions"
    sized = trace(positions, [], setup=pos_setup, value=_size_value, raises=pos_raises, assumptions=bounds,
                  source=pos_source, n=n)
    if not sized.values:
        raise InputError(f"{pos_source}: raises for every value ({pos_raises[0][1] if pos_raises else '?'})", source)
    raw = sized.formula
    refused = z3.Or([pc for pc, _ in pos_raises]) if pos_raises else z3.BoolVal(False)
    size = raw  # where positions raises, the obligations below fail (checked without a grid: claims.obligations)
    obligations = [(z3.Not(pc), f"{why} (in positions)") for pc, why in pos_raises]
    if not _never(z3.And(z3.Not(refused), raw < 1), bounds + list(sized.conditions)):
        obligations.append((z3.Or(refused, raw >= 1), f"{pos_source} gives fewer than 1 position"))
    obligations += list(sized.obligations)

    # 2. the factory called on each path, then its mask_mod on q_idx, kv_idx in 0 … size - 1
    mask_raises: list = []

    def setup(tracer, _program):
        from hasse.theory.inputs.calls import factory_problem
        from hasse.theory.inputs.user_files import callable_name

        fn = rebind(factory, tracer)
        out = fn(**call_values(tracer, plan.order))
        problem = None
        if not callable(out):
            kind = "an int" if isinstance(out, SymInt) and out.dtype is None else type(out).__name__
            problem = Untraceable(f"{name}(…) returns {kind}, not a mask_mod(b, h, q_idx, kv_idx)")
        elif factory_problem(out, callable_name(out), path):
            problem = Untraceable(f"{name}(…) returns '{callable_name(out)}', which cannot take the four arguments "
                                  "(b, h, q_idx, kv_idx) of a mask_mod")
        if problem is not None:
            problem.where = source  # the user's factory, not this line of the kit
            raise problem
        return rebind(out, tracer)

    try:
        mask = from_mask_mod(source, factory, heads=heads, batch=batch, assume=plan.closures or None,
                             strict_assume=strict_assume, setup=setup, size=size, params=dict(terms),
                             n_value=fixed, raises=mask_raises)
    except Exception as exc:
        hint = _hint(plan)
        if hint and type(exc).__name__ == "TraceError":
            raise type(exc)(f"{exc} {hint}") from None
        raise
    obligations += [(z3.Not(pc), why) for pc, why in mask_raises]
    used = [ix for ix in indexes.values() if ix.lookups and all(ix is not j for j in mask.indexes)]
    tensors = dict(mask.tensors)
    for key, ix in indexes.items():
        words = {"bijection": "permutation", "backward": "parent array", "any": "int64 tensor"}.get(ix.prop, ix.prop)
        tensors[key] = f"every {words} {key} of length n"
    conditions = list(mask.conditions) + [c for c in sized.conditions if not any(c.eq(x) for x in mask.conditions)]
    params = dict(mask.params)
    statement = _statement(n, {k: v for k, v in params.items()}, conditions, fixed is not None)
    given = [t for t in tensors.values() if not t.startswith("every ")]
    statement += (f", with {' and '.join(given)}" if given else "")
    every = [tensors[k] for k in indexes]
    statement += (f", for {' and '.join(every)}" if every else "")
    return replace(mask, obligations=list(mask.obligations) + obligations, indexes=list(mask.indexes) + used,
                   conditions=conditions, tensors=tensors, statement=statement,
                   constants=set(mask.constants) | set(sized.constants))


def _hint(plan: Plan) -> str:
    """For a trace error: the parameters taken as symbolic integers (a string one must be given literally)."""
    free = [k for k in plan.symbolic if k != N]
    if not free:
        return ""
    return (f"(taken as symbolic integers: {', '.join(free)}; give a string, bool or list literally, "
            f"{plan.path}:{plan.name}({free[0]}=…), or a tensor by --assume {free[0]}=any)")


def _never(cond, facts: list) -> bool:
    """Whether ``cond`` is impossible under ``facts`` (Z3, 2 s; unknown: possible)."""
    cond = z3.simplify(cond)
    if z3.is_false(cond):
        return True
    solver = z3.Solver()
    solver.set("timeout", 2000)
    solver.add(*facts, cond)
    return solver.check() == z3.unsat


def concrete_values(plan_literal: dict, symbolic: dict, index_keys, n: int, params: dict, lists: dict) -> dict:
    """The factory's keyword arguments at a point of the re-check: literals, the parameters' values, the tensors."""
    out = dict(plan_literal)
    out[N] = n
    for key in symbolic:
        if key != N:
            out[key] = int(params[key])
    for key in index_keys:
        out[key] = np.asarray(lists[key], dtype=np.int64)
    return out


class FactoryProgram(MaskModProgram):
    """A ``FILE.py:make_mask_mod`` factory of ``n``, run as the user runs it: ``mm = make_mask_mod(n, **params)``
    with the point's values (literals as the call gives them, index tensors as int64 arrays), evaluated on
    the ``positions(n, …)`` x ``positions(n, …)`` grid (:mod:`solvers.symbolic.catalog.factory`)."""

    def __init__(self, path: str, function: str, source: str, code, heads: int | None = None, fallback=None,
                 assume: dict | None = None):
        super().__init__(path, function, source, code, heads, fallback)
        self.assume = dict(assume or {})

    def _resolve(self):
        from hasse.theory.inputs.calls import parse_call
        from hasse.theory.inputs.user_files import import_function

        if "(" in self.function:
            name, args, kwargs = parse_call(self.function, self.source)
        else:
            name, args, kwargs = self.function, (), {}
        factory = import_function(self.path, name, self.source, self.code)
        plan = Plan(factory, name, args, kwargs, self.assume, self.path, self.source)
        positions, keys = _positions_of(factory, plan)
        return factory, plan, positions, keys

    def _built(self, resolved, p: Point):
        """``(mask_mod, size, closure lists)`` at the point ``p``: the factory called as the user calls it."""
        from hasse.theory.user_code import raised as user_raised

        factory, plan, positions, keys = resolved
        lists = p.list_dict
        for key in plan.indexes:
            lists.setdefault(key, [0] * p.n)  # a tensor the mask never reads: any values
        values = concrete_values(plan.literal, plan.symbolic, plan.indexes, p.n, p.param_dict, lists)
        try:
            size = positions(**{k: values[k] for k in keys})
            fn = factory(**{k: values[k] for k in plan.order})
        except Exception as exc:  # noqa: BLE001 - the factory's own refusal at this point
            raise ProgramFailure(_one_line(InputError(user_raised(self.function, exc, self.path)))) from None
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ProgramFailure(f"{self.path}:positions gives {size!r} at {p.where()}, not a number of positions >= 1")
        return fn, int(size), {k: v for k, v in lists.items() if k not in plan.indexes}

    def raises(self, n: int, params: dict | None = None, lists: dict | None = None) -> str | None:
        """What the factory or its mask_mod raises at ``n`` (None: it runs), on the whole grid."""
        try:
            self.grid(n, params, lists)
        except ProgramFailure as exc:
            return str(exc)
        return None

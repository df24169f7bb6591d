"""A walk witness traced for every n: ``witness(q_idx, kv_idx) -> (w1, …, w_{L-1})`` as a Z3 relation.

The claim ``realises`` (:mod:`solvers.symbolic.claims.realises`) needs, for each pair
``(q, k)`` of the target, the intermediate positions of a walk ``k -> w1 -> … -> q``. The
witness is a program like a mask_mod (the same tracer, the same shims: bit operations,
``// %`` by constants, ``where``), run on two int64 position tensors; it returns a tuple
(or list) of ``L - 1`` position values (one value alone when ``L = 2``). It is traced as
the relation ``W(q, k, z1, …, z_{L-1}) = (w1 == z1) & … & (w_{L-1} == z_{L-1})`` over fresh
int64 values ``z_i``: on each path of the program the ``z_i`` are determined, so the
relation is a function of ``(q, k)``, and a query that asserts it reads the witness's
values exactly. A witness returning another number of positions is bad input (exit 2).

:func:`witness_of_file` traces ``FILE.py:fn`` (the user's code: one bounded run, as a
mask_mod); :func:`witness_of_factory` a catalogue factory ``factory(**params)`` called
with the mask's symbolic parameters (``n`` a symbolic int).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import z3

from hasse.solvers.symbolic.mask import N, _domain, _input, _largest
from hasse.solvers.symbolic.terms import SymInt, Untraceable
from hasse.solvers.symbolic.trace import TraceError, rebind, trace
from hasse.theory.errors import InputError

INT64 = (-2 ** 63, 2 ** 63 - 1)


@dataclass
class Witness:
    """A traced witness: ``relation`` over ``q, k`` and the values ``zs`` (one per intermediate position)."""

    name: str
    q: z3.ArithRef
    k: z3.ArithRef
    zs: list
    relation: z3.BoolRef
    conditions: list = field(default_factory=list)  # side conditions its own checks demand
    obligations: list = field(default_factory=list)  # (formula over q, k, why): what it needs to run
    n: z3.ArithRef = field(default_factory=lambda: z3.Int(N))

    def at(self, q, k, ws) -> z3.BoolRef:
        """``W(q, k) == ws`` for position terms."""
        pairs = [(self.q, q), (self.k, k)] + list(zip(self.zs, ws))
        return z3.substitute(self.relation, *pairs)

    def obligations_at(self, q, k) -> list:
        return [(z3.substitute(ob, (self.q, q), (self.k, k)), why) for ob, why in self.obligations]


def _equalities(name: str, hops: int) -> Callable:
    """The relation's program around the witness's result ``out``."""

    def relation(out, zs):
        values = list(out) if isinstance(out, (tuple, list)) else [out]
        if isinstance(out, (tuple, list)) or hops != 1:
            if len(values) != hops:
                raise InputError(f"{name}: the witness returns {len(values)} position(s); within {hops + 1} layers "
                                 f"a walk has {hops} intermediate position(s): return a tuple of {hops}")
        result = None
        for v, z in zip(values, zs):
            if isinstance(v, bool) or v is None or isinstance(v, (float, str)):
                raise InputError(f"{name}: the witness returns {type(v).__name__} values; it must return positions "
                                 "(integer tensors or ints)")
            eq = z == v
            result = eq if result is None else result & eq
        return result

    return relation


def _trace(name: str, program: Callable, setup: Callable, size, n, conditions: list, hops: int) -> Witness:
    q, k = z3.Int("q_w"), z3.Int("k_w")
    zs = [z3.Int(f"z{i + 1}") for i in range(hops)]
    domain = _domain(n, {})
    high = _largest(size, domain + list(conditions))
    bounds = (0, high - 1 if high is not None else None)
    inside = [q >= 0, k >= 0, q < size, k < size]
    args = [_input(q, bounds, "int64"), _input(k, bounds, "int64")] + [_input(z, INT64, "int64") for z in zs]
    relation = _equalities(name, hops)

    def run_setup(tracer, _program):
        fn = setup(tracer)

        def wrapped(qi, ki, *zi):
            return relation(fn(qi, ki), zi)

        return wrapped

    traced = trace(program, args, setup=run_setup, source=name, n=n,
                   assumptions=domain + list(conditions) + inside)
    if traced.indexes:
        raise InputError(f"{name}: a witness that reads index tensors is not supported")
    own = [c for c in traced.conditions if not any(c.eq(x) for x in conditions)]
    return Witness(name, q, k, zs, traced.formula, own, list(traced.obligations), n)


def witness_of_file(path: str, fn: str, *, size, n, conditions: list, hops: int, code=None) -> Witness:
    """The witness ``fn`` of the file ``path`` (a function of ``(q_idx, kv_idx)``), traced for every n."""
    from hasse.theory.inputs.user_files import import_function
    from hasse.theory.user_code import require_permission, run_here

    source = f"{path}:{fn}"
    require_permission(code, source)
    if "(" in fn:
        raise InputError(f"--witness {source}: name a function witness(q_idx, kv_idx), not a call")

    def job():
        program = import_function(path, fn, source, code)
        if not callable(program):
            raise InputError(f"--witness {source}: {fn} is not a function")
        return _trace(source, program, lambda tracer: rebind(program, tracer), size, n, conditions, hops)

    return run_here(job, source=source, what="witness", path=path, keep=(TraceError, Untraceable))


def witness_of_factory(name: str, factory: Callable, params: dict, *, size, n, conditions: list,
                       hops: int) -> Witness:
    """``factory(**params)`` (a catalogue witness factory), its symbolic values (z3 terms) bound as in
    :func:`solvers.symbolic.mask.from_rule`, traced for every n."""
    from hasse.solvers.symbolic.trace import _bound
    from hasse.theory.limits import MAX_SYMBOLIC_VALUE

    top = MAX_SYMBOLIC_VALUE
    values = {p: (_input(v, (1, top) if str(v) == N else (-top, top)) if isinstance(v, z3.ExprRef)
                  and not z3.is_int_value(v) else (v.as_long() if isinstance(v, z3.ExprRef) else v))
              for p, v in params.items()}

    def setup(tracer):
        made = rebind(factory, tracer)
        bound = {p: (_bound(v, tracer) if isinstance(v, SymInt) else v) for p, v in values.items()}
        return rebind(made(**bound), tracer)

    return _trace(name, factory, setup, size, n, conditions, hops)


_MARK = 1_000_003  # a value no spec gives: the target spec of an entry whose n (or another parameter) is left out


def known_design(source: str) -> dict | None:
    """What the catalogue knows of MASK ``source`` for ``--claim realises`` (a sparse formula of
    :mod:`theory.spanner_formulas`): ``{"entry", "given", "target", "layers", "factory"}``, or None.

    ``target`` is its target's spec (parameters left out of MASK left out of it too), ``layers``
    the spec's ``layers`` (None when left out), ``factory`` the witness factory, ``spec`` MASK with
    each left-out parameter that has a default (``tile=0``) given it: the witness is a program of
    fixed parameters but ``n`` (and a left-out parameter without a default, e.g. ``block``).
    """
    from hasse.theory.catalog import canonical_keys, get_entry, parse_spec, parse_value
    from hasse.theory.inputs.forms import form_of

    if not source or form_of(source) != "spec":
        return None
    try:
        from hasse.theory import spanner_formulas
    except ImportError:  # the sparse formulas are not there: nothing known
        return None
    name, raw = parse_spec(source)
    if name not in getattr(spanner_formulas, "TARGETS", {}):
        return None
    entry = get_entry(name, "mask", source)
    raw = canonical_keys(entry, raw, source)
    given = {}
    for key, text in raw.items():
        param = entry.param(key)
        if param is not None and not (param.kind == "int" and text.strip().isidentifier()):
            given[key] = parse_value(param, text, source)
    marks = {p.name: _MARK + i for i, p in enumerate(entry.params) if p.name not in given and p.kind == "int"}
    text = spanner_formulas.TARGETS[name](**{**marks, **given})
    tname, traw = parse_spec(text)
    kept = [f"{key}={value}" for key, value in traw.items() if str(value).strip() not in {str(v) for v in marks.values()}]
    target = tname + (":" + ",".join(kept) if kept else "")
    factory = getattr(spanner_formulas, "WITNESSES", {}).get(name)
    filled = {p.name: p.default for p in entry.params
              if p.kind == "int" and p.name != "n" and p.name not in raw and p.default is not None}
    spec = source.strip() + (("," if ":" in source else ":") + ",".join(f"{k}={v}" for k, v in filled.items())
                             if filled else "")
    return {"entry": entry, "given": {**given, **filled}, "target": target, "layers": given.get("layers"),
            "factory": factory, "spec": spec}


def witness_for(source: str, witness: str | None, known: dict | None, mask, conditions: list, layers: int,
                timeout: float | None = None) -> Witness | None:
    """The witness of ``--witness FILE.py:fn``, else the catalogue's own for MASK (``known``), else None.

    Errors: one InputError line (exit 2); a trace stopped at a bound or the time limit: unknown (exit 3).
    """
    from hasse.solvers.symbolic.resolve import TraceUnknownInput, is_function, one_line, trace_errors
    from hasse.solvers.symbolic.trace import TraceUnknown
    from hasse.theory.deadline import deadline

    if layers <= 1:
        return None
    try:
        with deadline(timeout):
            if witness:
                if not is_function(witness):
                    raise InputError(f"--witness must be FILE.py:fn (a function witness(q_idx, kv_idx)), got {witness}")
                from hasse.theory.inputs.calls import split_function
                from hasse.theory.user_code import ARGUMENT

                path, fn = split_function(witness)
                return witness_of_file(path, fn, size=mask.size, n=mask.n, conditions=conditions, hops=layers - 1,
                                       code=ARGUMENT)
            if known is None or known.get("factory") is None:
                return None
            if known["layers"] is not None and known["layers"] != layers:
                return None  # the catalogue's witness is for its own depth (a deeper claim: give --witness)
            values = {}
            for p in known["entry"].params:
                if p.name in known["given"]:
                    values[p.name] = known["given"][p.name]
                elif p.name == "n":
                    values[p.name] = mask.n
                elif p.name in mask.params:
                    values[p.name] = mask.params[p.name]
                elif p.default is not None:
                    values[p.name] = p.default
            return witness_of_factory(f"{known['entry'].name}'s witness", known["factory"], values, size=mask.size,
                                      n=mask.n, conditions=conditions, hops=layers - 1)
    except TraceUnknown as exc:
        raise TraceUnknownInput(one_line(exc)) from None
    except trace_errors() as exc:
        raise InputError(one_line(exc)) from None
    except TimeoutError as exc:
        raise TraceUnknownInput(f"{witness or source}: tracing the witness stopped at the time limit ({exc})") from None

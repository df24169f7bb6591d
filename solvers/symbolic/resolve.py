"""The inputs of a claim for every n, from what the command line names: MASK and the task as symbolic forms,
``--assume`` and ``--param-range``.

- :func:`symbolic_mask`: a ``FILE.py:fn`` mask_mod (traced, :func:`catalog.symbolic_mask_mod`) or a
  catalogue spec (:func:`catalog.symbolic_mask`) as a :class:`~solvers.symbolic.mask.SymbolicMask`;
- :func:`symbolic_task`, :func:`own_task`: the task named, or MASK's own, read through MASK;
- :func:`parse_assume`, :func:`parse_range`, :func:`narrow`: the tensors assumed and the parameter ranges
  added to the side conditions;
- :func:`call_claim`: one claim of :mod:`solvers.symbolic.claims`, a program the tracer cannot follow as
  one :class:`~theory.errors.InputError` line.

A trace that reaches a bound of the tracer or the time limit raises :class:`TraceUnknownInput`: the verdict
is unknown (exit 3), not bad input.
"""

from __future__ import annotations

import dataclasses
import re

from hasse.theory.errors import InputError, clip


class TraceUnknownInput(InputError):
    """Tracing reached a bound of the tracer or the time limit: the verdict is unknown (exit 3), not bad input."""


def trace_errors() -> tuple:
    """What the tracer raises for a program it cannot follow (one line each)."""
    from hasse.solvers.symbolic.terms import Untraceable
    from hasse.solvers.symbolic.trace import TraceError

    return (TraceError, Untraceable)


def one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def parse_assume(items) -> dict[str, str]:
    """``--assume NAME=PROPERTY`` (repeatable) as ``{NAME: PROPERTY}``; one-line InputError otherwise.

    >>> parse_assume(["doc=nondecreasing", "perm = permutation"])
    {'doc': 'nondecreasing', 'perm': 'permutation'}
    >>> parse_assume(["doc=sorted"])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --assume doc=sorted: PROPERTY must be one of nondecreasing, permutation, parents, any
    """
    from hasse.solvers.symbolic.mask import ASSUMABLE

    out: dict[str, str] = {}
    for text in items or ():
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*(\w+)\s*", text)
        if not m:
            raise InputError(f"--assume {clip(text, 60)}: expected NAME=PROPERTY (e.g. doc=nondecreasing)")
        name, prop = m.groups()
        if prop not in ASSUMABLE:
            raise InputError(f"--assume {clip(text, 60)}: PROPERTY must be one of {', '.join(ASSUMABLE)}")
        if name in out and out[name] != prop:
            raise InputError(f"--assume {name}: given twice ({out[name]}, {prop})")
        out[name] = prop
    return out


def is_function(source: str | None) -> bool:
    """Whether ``source`` names a ``FILE.py:fn`` mask_mod (else a catalogue spec, or something refused)."""
    from hasse.theory.inputs.forms import form_of

    return bool(source) and form_of(source) == "function"


def symbolic_mask(source: str, heads: int | None = None, what: str = "MASK", *, batch: int | None = None,
                  assume: dict | None = None, timeout: float | None = None, strict_assume: bool = True):
    """The SymbolicMask of a MASK argument: ``FILE.py:fn`` (a mask_mod) or a catalogue spec; one-line exit 2 else.

    ``batch`` and ``assume`` apply to a mask_mod (``--batch``, ``--assume``); its re-check runs it as
    ``hasse analyze`` does (the torch evaluation where numpy cannot: :func:`theory.inputs.hooks.fallback`).
    A given ``timeout`` bounds the tracing of a catalogue spec too. A trace that reaches a bound of the tracer or the time limit raises :class:`TraceUnknownInput`.
    """
    from hasse.solvers.symbolic import catalog
    from hasse.solvers.symbolic.trace import TraceUnknown
    from hasse.theory.deadline import deadline
    from hasse.theory.inputs.calls import split_function
    from hasse.theory.inputs.forms import form_of

    try:
        kind = form_of(source)
        if kind == "function":
            from hasse.theory.inputs.hooks import fallback
            from hasse.theory.user_code import ARGUMENT

            path, fn = split_function(source)
            with deadline(timeout):
                return catalog.symbolic_mask_mod(path, fn, heads=heads, code=ARGUMENT, batch=batch,  # typed on the command line
                                                 assume=assume or None, fallback=fallback(),
                                                 strict_assume=strict_assume)
        if kind != "spec":
            raise InputError(f"{what} must be a catalogue spec or FILE.py:function for a proof for every n "
                             f"(a matrix file holds one size)", source)
        if assume:
            raise InputError(f"--assume names a tensor a FILE.py:fn mask_mod reads; {source} is a catalogue spec")
        with deadline(timeout):  # a catalogue mask does not read b: --batch changes nothing
            return catalog.symbolic_mask(source)
    except TraceUnknown as exc:
        raise TraceUnknownInput(one_line(exc)) from None
    except trace_errors() as exc:
        raise InputError(one_line(exc)) from None
    except TimeoutError as exc:  # theory.deadline, outside a trace (the catalogue's own work)
        raise TraceUnknownInput(f"{source}: tracing stopped at the time limit ({exc}): unknown") from None


def symbolic_task(source: str, mask=None):
    """The SymbolicTask named ``source``; with ``mask``, the same task read through that mask instead of its own."""
    from hasse.solvers.symbolic.tasks import check_same_size, symbolic_task as make

    try:
        task = make(source)
    except trace_errors() as exc:
        raise InputError(one_line(exc)) from None
    if mask is None:
        return task
    check_same_size(task, mask)  # a mask of another size would make the claim hold vacuously: exit 2
    own = task.concrete

    def concrete(n, **params):  # the concrete task at n, its mask replaced by MASK's PROGRAM at n (the re-check)
        from hasse.solvers.symbolic.recheck import mask_grid

        t = own(n, **params) if own is not None else None
        if t is None:
            return None
        return dataclasses.replace(t, mask=mask_grid(mask, n, {k: v for k, v in params.items() if k in mask.params}))

    # the task's own side conditions (l >= 1, l | n) stay the domain: the task is defined there only, and a
    # factory of n read through it must run on all of it (its raises are obligations, checked there)
    domain = [c for c in task.mask.conditions if not any(c.eq(x) for x in mask.conditions)]
    extra = [i for i in task.mask.indexes if all(i is not j for j in mask.indexes)]  # the task's own index
    if extra:  # tensors (packed's doc) stay declared: their axioms come with the mask's facts
        mask = dataclasses.replace(mask, indexes=list(mask.indexes) + extra)
    return dataclasses.replace(task, mask=mask, concrete=concrete if own is not None else None,
                               name=f"{task.name} through {mask.name}",
                               conditions=list(task.conditions) + [c for c in domain
                                                                   if not any(c.eq(x) for x in task.conditions)])


def own_task(source: str, claim: str):
    """MASK's own task (a catalogue design that is a task: butterfly, packed, …); exit 2 when MASK is none."""
    from hasse.theory.inputs.forms import form_of

    if form_of(source) != "spec":
        raise InputError(f"{source}: --claim {claim} needs a task; give --task TASK (e.g. causal_lm)")
    try:
        return dataclasses.replace(symbolic_task(source))  # a copy: its mask is narrowed in place
    except InputError as exc:
        raise InputError(f"--claim {claim} needs a task and MASK is none ({exc}); give --task TASK (e.g. causal_lm)") \
            from None


def parse_range(text: str) -> tuple[str, int, int]:
    """``NAME=LO..HI`` as ``(name, lo, hi)``; one-line InputError otherwise.

    >>> parse_range("n=2..100"), parse_range("block=1..1")
    (('n', 2, 100), ('block', 1, 1))
    >>> parse_range("n=5..2")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --param-range n=5..2: LO must be <= HI
    """
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*", text)
    if not m:
        raise InputError(f"--param-range {clip(text, 60)}: expected NAME=LO..HI (e.g. n=2..64)")
    from hasse.theory.limits import parse_int

    name = m.group(1)
    lo, hi = (parse_int(m.group(i), f"--param-range {name}") for i in (2, 3))  # within 64 bits, as every integer
    if lo > hi:
        raise InputError(f"--param-range {text}: LO must be <= HI")
    return name, lo, hi


def symbols(mask) -> set[str]:
    """The names a parameter range may give for ``mask``: n, each parameter's key and its symbol (window and w)."""
    return {"n"} | set(mask.params) | {str(t) for t in mask.params.values()}


def narrow(mask, ranges: list[str]) -> list[tuple[str, int, int]]:
    """Add each ``--param-range`` to ``mask``'s side conditions (and its statement); returns the ranges parsed."""
    import z3

    from hasse.solvers.symbolic.mask import describe_conditions

    parsed = [parse_range(r) for r in ranges]
    for name, lo, hi in parsed:
        if name == "n":
            term = mask.n
        elif name in mask.params or name in {str(t): k for k, t in mask.params.items()}:
            term = mask.params.get(name) if name in mask.params else \
                next(t for t in mask.params.values() if str(t) == name)
        else:
            known = ", ".join(["n", *mask.params]) if not z3.is_int_value(mask.n) else ", ".join(mask.params) or "none"
            raise InputError(f"--param-range {name}: not a symbolic parameter of {mask.name} (symbolic: {known})")
        if z3.is_int_value(term):
            raise InputError(f"--param-range {name}: {mask.name} fixes {name}")
        mask.conditions.extend([term >= lo, term <= hi])
    if parsed:
        mask.statement = describe_conditions(mask.n, mask.params, mask.conditions)
    return parsed


def copy_mask(mask):
    """A copy of ``mask`` with its own list of side conditions (a range extends it; a cached form stays)."""
    return dataclasses.replace(mask, conditions=list(mask.conditions))


def call_claim(fn, *args, timeout: float | None = None, **kwargs):
    """Call a claim of :mod:`solvers.symbolic.claims` (``timeout`` and the other keywords only when given);
    a program the tracer cannot follow is one InputError line."""
    if timeout is not None:
        kwargs["timeout"] = timeout
    try:
        return fn(*args, **{k: v for k, v in kwargs.items() if v is not None})
    except trace_errors() as exc:
        raise InputError(one_line(exc)) from None


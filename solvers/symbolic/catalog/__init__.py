"""Symbolic forms of every catalogue mask and layout: a spec whose left-out parameters are symbolic.

:func:`symbolic_mask` reads a catalogue spec and returns a
:class:`~solvers.symbolic.mask.SymbolicMask` in which every *integer* parameter the
spec leaves out, ``n`` included, is a Z3 variable: ``sliding_window`` is the window
for all ``n`` and all ``w >= 1``, ``sliding_window:w=8`` the window of 8 keys for all
``n``, ``block_two_stream`` Block Two-Stream for all ``n`` and all ``l >= 1`` with
``l | n``. A parameter that is a *choice* (``variant``) or a *Boolean* (``causal``)
takes its catalogue default when left out: it selects a program, not a number, and
a caller wanting both does the case split (two masks).

Where the catalogue's factory takes numbers, its real rule is traced
(:func:`~solvers.symbolic.mask.from_rule`; the factory's ``require_*`` checks become
the side conditions). Where it takes a list, the list becomes an index tensor
(:class:`~solvers.symbolic.terms.SymIndex`):

- ``document`` — ``doc``, the document id of each position, *nondecreasing*; the real
  rule of :func:`theory.masks.document.make_document` is traced with ``doc`` put in
  its closure (any nondecreasing sequence is the id sequence of some lengths, up to
  renaming the ids, which the rule only compares for equality);
- ``xlnet`` — ``rank``, the place of each token in the factorisation order, a
  *bijection* of ``0 … n-1``; the real rule of :func:`theory.masks.xlnet.make_xlnet`
  is traced with ``rank`` and ``n`` put in its closure;
- ``tree`` — ``parent``, *backward* (``-1`` for a root, else an earlier node), and the
  ancestor-or-self relation ``anc`` (:class:`Ancestry`), written by hand, since the
  catalogue's rule reads a precomputed table.

A given list (``document:lengths=2+3``) fixes the index tensor to those values
(:func:`fix_index`), which is also how the tests compare a symbolic form with the
concrete catalogue mask. ``n`` is the number of tokens (``lengths`` summed for
``document``, of tree nodes for ``tree``); the layout's streams are listed in
``SymbolicMask.streams`` by their first position.

:func:`symbolic_mask_mod` is the same for a user's ``file.py:function``.
Every problem with a spec raises :class:`~theory.errors.InputError` with one line.
"""

from __future__ import annotations

from dataclasses import replace

import z3

from hasse.solvers.symbolic.catalog.indexed import Ancestry, _ancestors, _indexed, fix_index, index_instances
from hasse.solvers.symbolic.catalog.traced import SYMBOL, _TRACED, _statement, _traced, where_zero  # noqa: F401
from hasse.solvers.symbolic.mask import N, SymbolicMask, _free_constants, from_mask_mod
from hasse.solvers.symbolic.catalog.factory import FactoryProgram, is_factory_of_n, trace_factory
from hasse.solvers.symbolic.programs import CatalogProgram, MaskModProgram
from hasse.solvers.symbolic.terms import Untraceable
from hasse.solvers.symbolic.trace import TraceError
from hasse.theory.catalog import canonical_keys, get_entry, parse_spec, parse_value
from hasse.theory.errors import InputError
from hasse.theory.inputs.calls import parse_call
from hasse.theory.inputs.user_files import import_function, resolve_function
from hasse.theory.user_code import require_permission, run_here


INDEXED = ("document", "xlnet", "tree")


def names() -> tuple[str, ...]:
    """The catalogue masks that have a symbolic form.

    >>> names()[:3]
    ('causal', 'bidirectional', 'sliding_window')
    """
    return tuple(_TRACED) + INDEXED


def symbolic_mask(spec: str) -> SymbolicMask:
    """The symbolic form of the catalogue mask ``spec``; integer parameters left out are symbolic.

    >>> m = symbolic_mask("block_two_stream")
    >>> m.statement
    'for all 1 <= n <= 2^31 and all l >= 1 with l | n'
    >>> m.size
    2*n - l
    >>> symbolic_mask("sliding_window:w=2").concrete(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    >>> symbolic_mask("causal:m=3")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: causal:m=3: unknown parameter 'm' for causal; its parameters: n
    """
    source = spec.strip()
    name, raw = parse_spec(spec)
    if name not in names() and _task_only(name):
        return task_mask(source)
    entry = get_entry(name, "mask", source)
    if name not in names():
        raise InputError(f"{name} has no symbolic form yet; symbolic masks: {', '.join(names())}", source)
    raw = canonical_keys(entry, raw, source)
    given: dict = {}
    shared: dict[str, str] = {}  # parameter -> the symbol the user named (sliding_window:w=W)
    for key, text in raw.items():
        param = entry.param(key)
        if param is None:
            known = ", ".join(p.name for p in entry.params) or "none"
            raise InputError(f"unknown parameter {key!r} for {entry.name}; its parameters: {known}", source)
        if param.kind == "int" and text.strip().isidentifier():
            if not text.strip()[0].isupper():  # w=abc is a typo, not a symbol: symbols are capitalised (W)
                raise InputError(f"{param.name} must be an integer or a symbol with a capital initial (W: one "
                                 f"symbol shared by the specs naming it), got {text.strip()!r}", source)
            shared[key] = text.strip()  # symbolic, under that name: two specs naming W share it
            continue
        given[key] = parse_value(param, text, source)
    defaults = {p.name: p.default for p in entry.params if p.kind in ("choice", "bool")}
    try:
        mask = _indexed(name, source, given, defaults) if name in INDEXED else _traced(name, source, given, defaults)
    except InputError as exc:
        if exc.source is not None:
            raise
        raise InputError(str(exc), source) from None
    mask = _named_symbols(mask, shared, fixed_n=N in given) if shared else mask
    rule = _TRACED[name][:2] if name in _TRACED else None  # the re-check runs the catalogue's builder and rule
    mask.program = CatalogProgram(source, rule)
    return mask


def _task_only(name: str) -> bool:
    """Whether ``name`` is a catalogue task with a symbolic form and no catalogue mask of that name."""
    from hasse.solvers.symbolic.tasks import TASKS
    from hasse.theory.spec import _REGISTRY

    return name in TASKS and ("mask", name) not in _REGISTRY and ("task", name) in _REGISTRY


def task_mask(spec: str) -> SymbolicMask:
    """The mask of the catalogue task ``spec`` (one with a symbolic form, :func:`solvers.symbolic.tasks.symbolic_task`)
    as MASK: ``hasse equiv FILE.py:make_mask_mod masked_context --assume masked=any`` compares a file with a
    derived layout that is a task only. Its side conditions are the task's (mask's and its own); its index
    tensors (``masked``, ``rank``) are the task's Z3 functions, so a factory's argument of the same name is the
    same tensor. The re-check runs what the task's builder gave its mask (its rule, or the concrete task).

    >>> m = task_mask("butterfly")
    >>> m.size, m.statement
    (3*n - 2, 'for all 1 <= n <= 2^31')
    """
    from hasse.solvers.symbolic.tasks import symbolic_task

    task = symbolic_task(spec)
    mask = task.mask
    extra = [c for c in task.conditions if not any(c.eq(x) for x in mask.conditions)]
    return replace(mask, conditions=list(mask.conditions) + extra, name=spec.strip(),
                   statement=task.statement or mask.statement)


def _named_symbols(mask: SymbolicMask, shared: dict[str, str], fixed_n: bool) -> SymbolicMask:
    """``mask`` with the parameters of ``shared`` renamed to the symbols the user wrote.

    ``hasse equiv sliding_window:w=W sliding_window_distance:d=W`` compares the two windows
    at the same value ``W`` for every ``W``, where ``w`` and ``d`` left out would range
    independently.

    >>> m = symbolic_mask("sliding_window:w=W")
    >>> m.statement, sorted(str(v) for v in m.params.values())
    ('for all 1 <= n <= 2^31 and all 1 <= W <= 2^31', ['W'])
    """
    if N in shared:
        raise InputError("n cannot be named: it is the length every statement ranges over", mask.name)
    pairs = [(mask.params[key], z3.Int(symbol)) for key, symbol in shared.items() if key in mask.params]

    def sub(e):
        return z3.substitute(e, *pairs) if pairs and isinstance(e, z3.ExprRef) else e

    params = {key: sub(term) for key, term in mask.params.items()}
    conditions = [sub(c) for c in mask.conditions]
    return replace(mask, params=params, formula=sub(mask.formula), size=sub(mask.size), conditions=conditions,
                   obligations=[(sub(o), why) for o, why in mask.obligations],
                   streams=tuple((s, sub(p)) for s, p in mask.streams),
                   statement=_statement(mask.n, params, conditions, fixed_n))


def symbolic_mask_mod(path: str, fn: str, heads: int | None = None, *, code=None, fallback=None,
                      batch: int | None = None, assume: dict | None = None,
                      strict_assume: bool = True) -> SymbolicMask:
    """The mask_mod ``fn`` of the file ``path`` (a name, or a factory call with literal arguments) for all ``n``.

    The file is loaded as ``hasse`` loads any mask_mod (:func:`theory.inputs.user_files.resolve_function`,
    with the permission ``code``: :data:`theory.user_code.ARGUMENT` when the command line
    names it; None: refused); the tracer runs the function on symbolic positions. The
    import, the factory call and the tracing are user code: one bounded run
    (:func:`theory.user_code.run_here`: rehearsed in a child, then here). What the tracer
    cannot model raises :class:`~solvers.symbolic.trace.TraceError` naming the file and line.
    ``mask.program`` runs the file itself for the re-check (:class:`~solvers.symbolic.recheck.MaskModProgram`,
    with ``fallback``: the torch evaluator the command line passes, as ``hasse analyze``).
    ``heads``, ``batch`` and ``assume`` (closure tensors as index tensors) as in
    :func:`~solvers.symbolic.mask.from_mask_mod`.
    """
    source = f"{path}:{fn}"
    require_permission(code, source)
    factory: list = []  # set by the job when fn names a factory of n (solvers.symbolic.catalog.factory)

    def job():
        factory.clear()
        name, args, kwargs = parse_call(fn, source) if "(" in fn else (fn, (), {})
        obj = import_function(path, name, source, code)
        if is_factory_of_n(obj):
            factory.append(True)
            return trace_factory(source, obj, name, args, kwargs, path=path, assume=assume, heads=heads,
                                 batch=batch, strict_assume=strict_assume)
        return from_mask_mod(source, resolve_function(path, fn, source, code, imported=obj), heads=heads,
                             batch=batch, assume=assume, strict_assume=strict_assume)

    mask = run_here(job, source=source, what="mask_mod", path=path, keep=(TraceError, Untraceable))
    # the re-check runs this program as `hasse analyze FILE.py:fn --n N` does (fallback: torch, from the CLI)
    if factory:  # a factory of n: run as make_mask_mod(n, …) on the positions(n, …) grid
        mask.program = FactoryProgram(path, fn, source, code, heads, fallback, assume)
    else:
        mask.program = MaskModProgram(path, fn, source, code, heads, fallback)
    return mask


def symbolic_factory(path: str, fn_or_call: str, *, assume: dict | None = None, code=None,
                     fallback=None) -> SymbolicMask:
    """The mask_mod factory of ``n`` ``fn_or_call`` of the file ``path`` for every ``n`` (and parameter).

    ``fn_or_call``: ``"make_mask_mod"`` or a call with literal arguments (``"make_mask_mod(variant='clique')"``);
    ``n`` and the parameters it does not give are symbolic (:mod:`solvers.symbolic.catalog.factory`: names,
    defaults, and what a raise of the factory becomes). ``assume``: ``{NAME: PROPERTY}`` as ``--assume``
    (PROPERTY a key of :data:`~solvers.symbolic.mask.ASSUMABLE`: ``any``, ``permutation``, …), for a
    parameter or a closure tensor. ``code``: the permission to run the file (:data:`theory.user_code.ARGUMENT`
    for a path the caller names; None: refused). ``fallback``: the torch evaluation of the re-check (None: the
    registered one, :func:`theory.inputs.hooks.fallback`). A function that is not a factory of ``n`` is
    refused in one line (:class:`~theory.errors.InputError`; use :func:`symbolic_mask_mod`). A trace error is
    :class:`~solvers.symbolic.trace.TraceError` / :class:`~solvers.symbolic.terms.Untraceable`, as there.
    """
    from hasse.theory.inputs.hooks import fallback as registered

    source = f"{path}:{fn_or_call}"
    require_permission(code, source)
    name = parse_call(fn_or_call, source)[0] if "(" in fn_or_call else fn_or_call
    obj = run_here(lambda: is_factory_of_n(import_function(path, name, source, code)), source=source,
                   what="mask_mod", path=path)
    if not obj:
        raise InputError(f"{name} is not a factory of n (its first parameter must be n, beside positions(n, …))",
                         source)
    return symbolic_mask_mod(path, fn_or_call, code=code, fallback=fallback if fallback is not None else registered(),
                             assume=assume)


def free_names(mask: SymbolicMask) -> set[str]:
    """The names of the Z3 constants in ``mask``'s formula (positions, sizes, parameters).

    >>> sorted(free_names(symbolic_mask("sliding_window")))
    ['k0', 'q0', 'w']
    """
    return {str(c) for c in _free_constants(mask.formula)}


__all__ = ["Ancestry", "fix_index", "free_names", "index_instances", "names", "symbolic_factory", "symbolic_mask",
           "symbolic_mask_mod", "Untraceable"]

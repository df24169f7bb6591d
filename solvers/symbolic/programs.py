"""The user's program, evaluated concretely for the re-check: never its formula.

:class:`Program` is what ``SymbolicMask.program`` holds (:mod:`solvers.symbolic.recheck`
uses it): ``grid(n, params)`` — the ``(size, size)`` bool mask the program gives at ``n`` —
and ``sample(n, params, rows, cols)`` — the program on those index vectors, for large ``n``;
results are cached per :class:`Point`, and ``prefetch`` evaluates many points in one batch.

- :class:`MaskModProgram`: a ``FILE.py:fn`` mask_mod through the path of ``hasse analyze
  FILE.py:fn --n N`` (:func:`theory.mask_mod.evaluate_mask_mod`: numpy first, the torch
  fallback the command line passes in), every point of a batch in one bounded child run
  (:func:`theory.user_code.run`: the file imported once); an integer division by zero is the
  program failing there (torch raises; numpy's silent 0 is not taken);
- :class:`CatalogProgram`: a catalogue spec through its builder (:func:`theory.catalog.build_mask`),
  and for a sample its rule (the code the tracer read) on the index vectors;
- :class:`TaskProgram`: a catalogue task's own mask, its concrete task (whole grids only).

What a program raises at a point is a :class:`ProgramFailure` (one line) for that point.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from hasse.theory.errors import InputError


class ProgramFailure(InputError):
    """The program raised at an instance (the message: what and where, one line)."""


# ---------------------------------------------------------------- points


@dataclass(frozen=True)
class Point:
    """One place to evaluate: ``n``, the parameters, the index tensors' values, and the rows/cols of a sample."""

    n: int
    params: tuple = ()  # ((name, value), …) sorted
    lists: tuple = ()  # ((index name, (values…)), …)
    rows: tuple | None = None  # None: the whole grid
    cols: tuple | None = None

    @property
    def param_dict(self) -> dict:
        return dict(self.params)

    @property
    def list_dict(self) -> dict:
        return {k: list(v) for k, v in self.lists}

    def where(self) -> str:
        text = f"n = {self.n}" + "".join(f", {k} = {v}" for k, v in self.params)
        for name, values in self.lists:
            shown = list(values) if len(values) <= 12 else f"{list(values[:12])[:-1]}…"
            text += f" with {name} = {shown}"
        return text


def point(n: int, params: dict | None = None, lists: dict | None = None, rows=None, cols=None) -> Point:
    return Point(int(n), tuple(sorted((k, int(v)) for k, v in (params or {}).items())),
                 tuple(sorted((k, tuple(int(x) for x in v)) for k, v in (lists or {}).items())),
                 None if rows is None else tuple(int(x) for x in rows),
                 None if cols is None else tuple(int(x) for x in cols))


# ---------------------------------------------------------------- programs


class Program:
    """The user's program, evaluated concretely (never the formula); results cached per :class:`Point`."""

    name = "program"
    can_sample = True  # whether sub-grids at large n can be evaluated (False: whole grids only)

    def __init__(self):
        self._cache: dict[Point, object] = {}

    def _evaluate(self, points: list[Point]) -> list:
        """One result per point: a bool ndarray, or a :class:`ProgramFailure` (raised there). Subclasses."""
        raise NotImplementedError

    def prefetch(self, points: Sequence[Point]) -> None:
        """Evaluate every point not cached yet, in one batch (one child run for a mask_mod)."""
        todo = [p for p in dict.fromkeys(points) if p not in self._cache]
        if todo:
            for p, r in zip(todo, self._evaluate(todo)):
                self._cache[p] = r

    def result(self, p: Point) -> np.ndarray:
        self.prefetch([p])
        r = self._cache[p]
        if isinstance(r, BaseException):
            raise r
        return r

    def grid(self, n: int, params: dict | None = None, lists: dict | None = None) -> np.ndarray:
        """The ``(size, size)`` bool mask the program gives at ``n`` (and the parameters, index tensors)."""
        return self.result(point(n, params, lists))

    def sample(self, n: int, params: dict | None, rows, cols, lists: dict | None = None) -> np.ndarray:
        """``M[rows[i], cols[j]]`` at ``n`` (``len(rows) x len(cols)``), evaluated on those index vectors."""
        return self.result(point(n, params, lists, rows, cols))

    def raises(self, n: int, params: dict | None = None, lists: dict | None = None) -> str | None:
        """What the program raises at ``n`` as torch runs it (None: it runs). Subclasses."""
        try:
            self.grid(n, params, lists)
        except ProgramFailure as exc:
            return str(exc)
        return None


def _take(values: np.ndarray, idx):
    """``values[idx]`` for a numpy index array, or a torch index tensor (the torch fallback; no torch import here)."""
    if isinstance(idx, (np.ndarray, np.generic, int)):
        return values[idx]
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(idx, torch.Tensor):
        return torch.as_tensor(values, dtype=torch.int64)[idx]
    return values[np.asarray(idx)]


def _with_values(fn: Callable, lists: dict) -> Callable:
    """``fn`` reading other values for the tensors it captures by these names (closure cells or globals).

    The values keep the captured object's kind (a torch tensor stays one, of its dtype).
    """
    import types

    if not lists:
        return fn
    code = getattr(fn, "__code__", None)
    if code is None:
        raise ProgramFailure(f"{getattr(fn, '__name__', 'the mask_mod')}: cannot give its index tensors other values")

    def like(old, values):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(old, torch.Tensor):
            return torch.as_tensor(values, dtype=old.dtype)
        return np.asarray(values, dtype=getattr(old, "dtype", np.int64))

    cells = list(fn.__closure__ or ())
    glob = fn.__globals__
    new_glob = None
    for name, values in lists.items():
        if name in code.co_freevars:
            i = code.co_freevars.index(name)
            cells[i] = types.CellType(like(cells[i].cell_contents, values))
        elif name in glob:
            new_glob = dict(glob) if new_glob is None else new_glob
            new_glob[name] = like(glob[name], values)
        else:
            raise ProgramFailure(f"{fn.__name__} reads no tensor named {name}")
    return types.FunctionType(code, new_glob if new_glob is not None else glob, fn.__name__, fn.__defaults__,
                              tuple(cells) if cells else None)


class MaskModProgram(Program):
    """A ``FILE.py:fn`` mask_mod, evaluated as ``hasse analyze FILE.py:fn --n N`` does (module docstring)."""

    def __init__(self, path: str, function: str, source: str, code, heads: int | None = None, fallback=None):
        super().__init__()
        self.path, self.function, self.source, self.code = path, function, source, code
        self.heads, self.fallback = heads, fallback
        self.name = source

    def _resolve(self):
        from hasse.theory.inputs.user_files import resolve_function

        return resolve_function(self.path, self.function, self.source, self.code)

    def _built(self, resolved, p: Point):
        """``(mask_mod, size, closure lists)`` at ``p``: the resolved mask_mod on the n x n grid, the point's lists
        (a factory of n builds its mask_mod and size per point: :class:`~solvers.symbolic.catalog.factory.FactoryProgram`)."""
        return resolved, None, None

    def _evaluate(self, points: list[Point]) -> list:
        from hasse.theory.user_code import run

        def job():
            resolved = self._resolve()
            out = []
            for p in points:
                try:
                    fn, size, lists = self._built(resolved, p)
                    out.append(self._one(fn, p, size, lists))
                except InputError as exc:
                    out.append(ProgramFailure(_one_line(exc)))
            return out

        return run(job, source=self.source, what="mask_mod", path=self.path)

    def _one(self, fn, p: Point, size: int | None = None, lists: dict | None = None) -> np.ndarray:
        from hasse.theory.inputs.mask_mod import evaluate_mask_mod

        size = p.n if size is None else size
        fn = _with_values(fn, p.list_dict if lists is None else lists)
        params = p.param_dict
        b = params.get("b", 0)
        heads = range(self.heads) if self.heads else (0,)
        out = None
        for h in heads:
            _strict(fn, p, b, h, size)
            if p.rows is None:
                m = evaluate_mask_mod(fn, size, source=self.source, fallback=self.fallback, b=b, h=h)
            else:
                rows, cols = np.asarray(p.rows, dtype=np.int64), np.asarray(p.cols, dtype=np.int64)

                def at(b_idx, h_idx, q_idx, kv_idx, fn=fn, rows=rows, cols=cols):
                    return fn(b_idx, h_idx, _take(rows, q_idx), _take(cols, kv_idx))

                at.__name__ = getattr(fn, "__name__", "mask_mod")
                m = evaluate_mask_mod(at, len(rows), source=self.source, fallback=self.fallback, b=b, h=h,
                                      kv_len=len(cols))
            out = m if out is None else (out | m)
        return out

    def raises(self, n: int, params: dict | None = None, lists: dict | None = None) -> str | None:
        """What the mask_mod raises at ``n`` as torch runs it (the torch fallback when given, else numpy
        with its floating-point errors raised): None when it runs."""
        from hasse.theory.user_code import run

        params = params or {}

        def job():
            fn = _with_values(self._resolve(), lists or {})
            b = params.get("b", 0)
            for h in (range(self.heads) if self.heads else (0,)):
                try:
                    if self.fallback is not None:
                        from hasse.theory.inputs.mask_mod import _at

                        self.fallback(_at(fn, b, h) if (b or h) else fn, n)
                    else:
                        zero = np.zeros((), dtype=np.int64)
                        with np.errstate(all="raise"):
                            fn(zero + b, zero + h, np.arange(n, dtype=np.int64)[:, None],
                               np.arange(n, dtype=np.int64)[None, :])
                except Exception as exc:  # noqa: BLE001 - what the program raises is the answer
                    return _one_line(exc)
            return None

        return run(job, source=self.source, what="mask_mod", path=self.path)


def _strict(fn, p: Point, b: int, h: int, size: int | None = None) -> None:
    """Raise :class:`ProgramFailure` where the program divides an integer by zero.

    torch raises there (``ZeroDivisionError``); numpy gives 0 with a warning, which the
    path of ``hasse analyze`` silences. The numpy call is repeated with that warning raised;
    anything else it raises is left to the ordinary path (and its torch fallback).
    """
    size = p.n if size is None else size
    rows = np.arange(size, dtype=np.int64) if p.rows is None else np.asarray(p.rows, dtype=np.int64)
    cols = np.arange(size, dtype=np.int64) if p.cols is None else np.asarray(p.cols, dtype=np.int64)
    zero = np.zeros((), dtype=np.int64)
    try:
        with np.errstate(divide="raise"):
            fn(zero + b, zero + h, rows[:, None], cols[None, :])
    except FloatingPointError as exc:
        raise ProgramFailure(f"the mask_mod divides by zero at {p.where()} (numpy: {exc}; torch raises "
                             "ZeroDivisionError)") from None
    except Exception:  # noqa: BLE001 - the ordinary evaluation reports it (or its torch fallback runs)
        pass


class CatalogProgram(Program):
    """A catalogue spec: its builder at ``(n, params)`` for a grid, its rule on index vectors for a sample."""

    def __init__(self, source: str, rule: tuple | None = None):
        super().__init__()
        from hasse.theory.catalog import canonical_keys, get_entry, parse_spec

        self.rule = rule  # (factory, integer parameters) of the catalogue's traced rule, for samples

        self.source = self.name = source.strip()
        name, raw = parse_spec(source)
        self.entry = get_entry(name, "mask", self.source)
        raw = canonical_keys(self.entry, raw, self.source)
        self.raw = {k: v for k, v in raw.items() if not v.strip().isidentifier() or v.strip() in ("true", "false")
                    or self.entry.param(k) is None or self.entry.param(k).kind != "int"}
        self.kind = name

    @property
    def can_sample(self) -> bool:
        return self.rule is not None

    def _text(self, p: Point) -> str:
        from hasse.theory.spec import format_value

        values = dict(self.raw)
        if self.entry.param("n") is not None and self.kind not in ("document", "tree"):
            values["n"] = str(p.n)
        for k, v in p.params:
            values[k] = str(v)
        lists = p.list_dict
        if "doc" in lists:
            ids = lists["doc"]
            lengths = [sum(1 for x in ids if x == d) for d in dict.fromkeys(ids)]
            values["lengths"] = format_value(self.entry.param("lengths"), tuple(lengths))
        if "rank" in lists:
            order = [int(i) for i in np.argsort(np.asarray(lists["rank"]))]
            values["order"] = format_value(self.entry.param("order"), tuple(order))
        if "parent" in lists:
            values["parents"] = format_value(self.entry.param("parents"), tuple(lists["parent"]))
        items = [f"{prm.name}={values[prm.name]}" for prm in self.entry.params if prm.name in values]
        return f"{self.kind}:{','.join(items)}" if items else self.kind

    def _evaluate(self, points: list[Point]) -> list:
        out = []
        for p in points:
            try:
                out.append(self._sample(p) if p.rows is not None else self._build(p))
            except InputError as exc:
                out.append(ProgramFailure(_one_line(exc)))
        return out

    def _build(self, p: Point) -> np.ndarray:
        from hasse.theory.catalog import build_mask

        return np.asarray(build_mask(self._text(p)).matrix, dtype=bool)

    def _sample(self, p: Point) -> np.ndarray:
        from hasse.theory.catalog import resolve_spec

        if self.rule is None or p.lists:
            raise ProgramFailure(f"{self.source}: no rule to sample at n = {p.n}")
        factory, ints = self.rule
        spec = resolve_spec(self._text(p), "mask")
        values = spec.kwargs()
        args = {"n": p.n, **{k: values[k] for k in ints}}
        for prm in self.entry.params:
            if prm.kind in ("choice", "bool") and prm.name in values:
                args[prm.name] = values[prm.name]
        try:
            rule = factory(**args)
        except TypeError:
            rule = factory(**{k: v for k, v in args.items() if k == "n" or k in ints})
        rows, cols = np.asarray(p.rows, dtype=np.int64)[:, None], np.asarray(p.cols, dtype=np.int64)[None, :]
        return np.array(np.broadcast_to(np.asarray(rule(rows, cols), dtype=bool), (rows.shape[0], cols.shape[1])))


class TaskProgram(Program):
    """A catalogue task's own mask: the concrete task the catalogue builds at ``n`` (whole grids only)."""

    can_sample = False

    def __init__(self, name: str, concrete: Callable):
        super().__init__()
        self.name, self.concrete = name, concrete

    def _evaluate(self, points: list[Point]) -> list:
        out = []
        for p in points:
            try:
                if p.rows is not None or p.lists:
                    raise ProgramFailure(f"{self.name}: no sub-grid or index values for the concrete task")
                out.append(np.asarray(self.concrete(p.n, **p.param_dict).mask, dtype=bool))
            except InputError as exc:
                out.append(ProgramFailure(_one_line(exc)))
        return out


class RuleTaskProgram(TaskProgram):
    """A catalogue task's mask at ``n`` (whole grids), and its closed-form rule on index vectors (the sub-grids a
    re-check samples at a large ``n``): ``factory(n=…, **fixed, **params)`` returns ``rule(q, k)``, the code the
    catalogue task is built from (theory.masks), run concretely, never the traced formula. Used by the derived
    layouts of issue 25 (fim_causal, mtp_registers, block_mixture_merged)."""

    can_sample = True

    def __init__(self, name: str, concrete: Callable, factory: Callable, fixed: dict | None = None):
        super().__init__(name, concrete)
        self.factory, self.fixed = factory, dict(fixed or {})

    def _evaluate(self, points: list[Point]) -> list:
        out = []
        for p in points:
            if p.rows is None or p.lists:
                out += super()._evaluate([p])
                continue
            try:
                rule = self.factory(n=p.n, **{**self.fixed, **p.param_dict})
            except InputError as exc:
                out.append(ProgramFailure(_one_line(exc)))
                continue
            rows, cols = np.asarray(p.rows, dtype=np.int64)[:, None], np.asarray(p.cols, dtype=np.int64)[None, :]
            out.append(np.array(np.broadcast_to(np.asarray(rule(rows, cols), dtype=bool),
                                                (rows.shape[0], cols.shape[1]))))
        return out


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__

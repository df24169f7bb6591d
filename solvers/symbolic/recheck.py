"""The re-check of a symbolic verdict by running the user's own program (issue 21, item 3).

A proof is about the formula the tracer made of the program; a mis-trace makes it a proof
about another mask. So every verdict is re-checked on the **program**: a
:class:`Program` (``SymbolicMask.program``) evaluates it concretely —

- :class:`MaskModProgram`: a ``FILE.py:fn`` mask_mod through the path of ``hasse analyze
  FILE.py:fn --n N`` (:func:`theory.mask_mod.evaluate_mask_mod`: numpy first, the torch
  fallback the command line passes in), every instance of one re-check in **one** bounded
  child run (:func:`theory.user_code.run`: the file imported once); large ``n`` on sampled
  index vectors (``rows[:, None]``, ``cols[None, :]``);
- :class:`CatalogProgram`: a catalogue spec through its builder (:func:`theory.catalog.build_mask`),
  and at large ``n`` its rule (the code the tracer read) on sampled index vectors.

:func:`plan` says where: every ``n <= 64``; ``n`` within ±2 of every constant of the program
(``SymbolicMask.constants`` and the integer literals of the formula, size and side
conditions); ``2^k - 1, 2^k, 2^k + 1`` for ``k <= 20`` (on a sampled sub-grid of at most
256 x 256 positions: 0, 1, 2, the last ones, the stream starts and constants ± 2, and
seeded random positions with their neighbours); the parameters at every value in
``-2 … 8``, within ±2 of the constants and of ``n`` (a bounded, seeded choice per ``n``),
each instance satisfying the side conditions. :func:`check_program` compares program and
formula (:mod:`solvers.symbolic.evaluate`) at every point: a difference is the loud
``DISAGREES: the traced formula and the program differ …`` (a bug of the kit). The claim
itself is then checked on the program's own grids at small ``n`` by the callers
(:mod:`solvers.symbolic.claims`).

A program that cannot be run at all gives ``"not re-checked: …"``; for a proof, the command
line turns that into the verdict unknown (exit 3): a proof whose program never ran is not
confirmed.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import z3

from hasse.solvers.symbolic.evaluate import Unevaluable, evaluate, evaluate_partial
from hasse.theory.errors import InputError

SMALL_N = 64  # every n up to this, full grids
CLAIM_N = 12  # the claim itself on the program at instances up to this n
LARGE_K = 20  # 2^k ± 1 up to this k
FULL_UPTO = 256  # a grid of at most this many positions is evaluated whole; larger ones sampled
SAMPLE = 256  # rows (and columns) of a sampled sub-grid
MAX_SMALL = 600  # instances with n <= SMALL_N
MAX_CLAIM = 48  # instances the claim is re-checked at
PER_LARGE_N = 2  # parameter choices per large n
MAX_N = 2 ** 31  # the domain bound of every statement (theory.limits.MAX_SYMBOLIC_VALUE)
CHUNK = 1 << 21  # lanes of one batched evaluation of a formula


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
        from hasse.theory.mask_mod import resolve_function

        return resolve_function(self.path, self.function, self.source, self.code)

    def _evaluate(self, points: list[Point]) -> list:
        from hasse.theory.user_code import run

        def job():
            fn = self._resolve()
            out = []
            for p in points:
                try:
                    out.append(self._one(fn, p))
                except InputError as exc:
                    out.append(ProgramFailure(_one_line(exc)))
            return out

        return run(job, source=self.source, what="mask_mod", path=self.path)

    def _one(self, fn, p: Point) -> np.ndarray:
        from hasse.theory.mask_mod import evaluate_mask_mod

        fn = _with_values(fn, p.list_dict)
        params = p.param_dict
        b = params.get("b", 0)
        heads = range(self.heads) if self.heads else (0,)
        out = None
        for h in heads:
            _strict(fn, p, b, h)
            if p.rows is None:
                m = evaluate_mask_mod(fn, p.n, source=self.source, fallback=self.fallback, b=b, h=h)
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
                        from hasse.theory.mask_mod import _at

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


def _strict(fn, p: Point, b: int, h: int) -> None:
    """Raise :class:`ProgramFailure` where the program divides an integer by zero.

    torch raises there (``ZeroDivisionError``); numpy gives 0 with a warning, which the
    path of ``hasse analyze`` silences. The numpy call is repeated with that warning raised;
    anything else it raises is left to the ordinary path (and its torch fallback).
    """
    rows = np.arange(p.n, dtype=np.int64) if p.rows is None else np.asarray(p.rows, dtype=np.int64)
    cols = np.arange(p.n, dtype=np.int64) if p.cols is None else np.asarray(p.cols, dtype=np.int64)
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

    def __init__(self, source: str):
        super().__init__()
        from hasse.theory.catalog import canonical_keys, get_entry, parse_spec

        self.source = self.name = source.strip()
        name, raw = parse_spec(source)
        self.entry = get_entry(name, "mask", self.source)
        raw = canonical_keys(self.entry, raw, self.source)
        self.raw = {k: v for k, v in raw.items() if not v.strip().isidentifier() or v.strip() in ("true", "false")
                    or self.entry.param(k) is None or self.entry.param(k).kind != "int"}
        self.kind = name

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
        from hasse.solvers.symbolic.catalog import _TRACED
        from hasse.theory.catalog import resolve_spec

        if self.kind not in _TRACED or p.lists:
            raise ProgramFailure(f"{self.source}: no rule to sample at n = {p.n}")
        factory, ints, *_ = _TRACED[self.kind]
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


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# ---------------------------------------------------------------- the formula at a point


_NAMES: dict = {}  # id(term) -> (term kept alive, its name)


def _nm(term) -> str:
    """The name of a Z3 constant (its declaration's, cached: str() runs Z3's printer, and even decl() is slow)."""
    hit = _NAMES.get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    if len(_NAMES) > 4096:
        _NAMES.clear()
    name = term.name() if isinstance(term, z3.FuncDeclRef) else term.decl().name()
    _NAMES[id(term)] = (term, name)
    return name


def _env(mask, p: Point) -> dict:
    env = {}
    if not z3.is_int_value(mask.n):
        env[_nm(mask.n)] = p.n
    for key, value in p.params:
        term = mask.params.get(key)
        if term is not None and not z3.is_int_value(term):
            env[_nm(term)] = value
    for index in mask.indexes:
        values = dict(p.lists).get(index.name)
        if values is None:
            continue
        env[_nm(index.function)] = np.asarray(values, dtype=np.int64)
        relation = getattr(index, "relation", None)
        if relation is not None:  # an ancestry: anc(i, j), j is i or an ancestor of i
            from hasse.solvers.symbolic.catalog import _ancestors

            table = np.zeros((len(values), len(values)), dtype=bool)
            for i, anc in enumerate(_ancestors(values)):
                table[i, sorted(anc)] = True
            env[_nm(relation)] = table
    return env


_SIZES: dict = {}  # (id(size term), n, params, lists) -> (term kept alive, size)


def size_at(mask, p: Point) -> int:
    key = (id(mask.size), p.n, p.params, p.lists)
    hit = _SIZES.get(key)
    if hit is not None and hit[0] is mask.size:
        return hit[1]
    if len(_SIZES) > 65536:
        _SIZES.clear()
    size = int(evaluate(mask.size, _env(mask, p)))
    _SIZES[key] = (mask.size, size)
    return size


def formula_at(mask, p: Point, rows=None, cols=None):
    """``(values, undefined)`` of the traced formula at ``p`` on the rows x cols of positions (default: all)."""
    size = size_at(mask, p)
    rows = np.arange(size) if rows is None else np.asarray(rows, dtype=np.int64)
    cols = np.arange(size) if cols is None else np.asarray(cols, dtype=np.int64)
    env = _env(mask, p)
    env[_nm(mask.q)] = rows[:, None]
    env[_nm(mask.k)] = cols[None, :]
    return evaluate_partial(mask.formula, env, shape=(len(rows), len(cols)))


def formula_grid(mask, n: int, params: dict | None = None, lists: dict | None = None) -> np.ndarray:
    """The formula's ``(size, size)`` grid (fast :mod:`evaluate`, not Z3); Unevaluable where it is undefined."""
    values, undef = formula_at(mask, point(n, params, lists))
    if undef is not None:
        q, k = (int(x) for x in np.argwhere(undef)[0])
        raise Unevaluable(f"the formula of {mask.name} is undefined at n = {n}, pair ({q}, {k}) (a divisor 0?)")
    return np.array(values, dtype=bool)


def mask_grid(mask, n: int, params: dict | None = None, lists: dict | None = None) -> np.ndarray:
    """The mask at ``n``: the program's grid when the mask has one, else the formula's."""
    program = getattr(mask, "program", None)
    own = {k: v for k, v in (params or {}).items() if k in mask.params}
    if program is not None:
        return program.grid(n, own, lists)
    return formula_grid(mask, n, own, lists)


# ---------------------------------------------------------------- the plan


def constants_of(mask, extra: Sequence = ()) -> list[int]:
    """The integer constants of the program: ``mask.constants`` and the literals of its formula, size, conditions."""
    out = set(int(c) for c in getattr(mask, "constants", set()) or () if isinstance(c, int))
    todo = [mask.formula, mask.size, *mask.conditions, *extra]
    todo = [t for t in todo if isinstance(t, z3.ExprRef)]
    seen = set()
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_int_value(e):
            out.add(e.as_long())
        elif not z3.is_quantifier(e):
            todo.extend(e.children())
    return sorted(c for c in out if abs(c) <= MAX_N)


def _holds(conds: list, envs: list[dict]) -> list[bool]:
    """Which of the assignments ``envs`` satisfy every condition (vectorised; Z3 where it does not evaluate)."""
    if not conds:
        return [True] * len(envs)
    cond = z3.And(conds)
    names = sorted({k for e in envs for k in e})
    try:
        env = {k: np.array([e.get(k, 0) for e in envs], dtype=object) for k in names}
        values, undef = evaluate_partial(cond, env, shape=(len(envs),))
        ok = np.asarray(values, dtype=bool)
        if undef is not None:
            ok = ok & ~undef
        return [bool(x) for x in ok]
    except Unevaluable:
        out = []
        for e in envs:
            s = z3.simplify(z3.substitute(cond, *[(z3.Int(k), z3.IntVal(v)) for k, v in e.items()]))
            out.append(z3.is_true(s))
        return out


@dataclass
class Plan:
    """Where a re-check evaluates: full grids (small ``n``), sampled sub-grids (large ``n``), and words for it."""

    grids: list  # Points without rows
    samples: list  # Points with rows/cols
    claim: list  # Points (n <= CLAIM_N) the claim itself is re-checked at
    words: str  # what was covered, for the re-check's text


def _rng_choice(rng, items: list, k: int) -> list:
    if len(items) <= k:
        return list(items)
    head = items[: max(1, k // 2)]
    rest = [x for x in items if x not in head]
    return head + rng.sample(rest, k - len(head))


def plan(masks: list, conds: list, params: dict, *, seed: int = 0, small_n: int = SMALL_N,
         large_k: int = LARGE_K, lists_per_n: int = 3) -> Plan:
    """The instances of a re-check of ``masks`` (module docstring); ``params``: name -> Z3 term of every parameter."""
    rng = random.Random(seed)
    mask = masks[0]
    fixed_n = z3.is_int_value(mask.n)
    consts = sorted(set(c for m in masks for c in constants_of(m, conds)))
    names = sorted(params)
    n_term = None if z3.is_int_value(mask.n) else _nm(mask.n)
    if fixed_n:
        small = [mask.n.as_long()] if mask.n.as_long() <= FULL_UPTO else []
        large = [] if small else [mask.n.as_long()]
    else:
        near = {c + d for c in consts for d in range(-2, 3)}
        powers = {(1 << k) + d for k in range(1, large_k + 1) for d in (-1, 0, 1)}
        small = list(range(1, small_n + 1))
        large = sorted(x for x in near | powers if small_n < x <= MAX_N)
    base_values = set(range(-2, 9)) | {c + d for c in consts for d in range(-2, 3)}

    def candidates(n: int) -> list[dict]:
        if not names:
            return [{}]
        per = []
        for _name in names:
            vals = sorted(v for v in base_values | {n + d for d in range(-2, 3)} | {n // 2} if abs(v) <= MAX_N)
            per.append(vals)
        combos: list[dict] = []
        total = 1
        for vals in per:
            total *= len(vals)
        if total <= 4000:
            import itertools

            combos = [dict(zip(names, c)) for c in itertools.product(*per)]
        else:
            combos = [dict(zip(names, [rng.choice(v) for v in per])) for _ in range(4000)]
            combos.insert(0, dict(zip(names, [min((x for x in v if x >= 0), default=v[0]) for v in per])))
        return combos

    def valid(n: int, combos: list[dict]) -> list[dict]:
        envs = []
        for c in combos:
            env = {} if fixed_n else {n_term: n}
            env.update({_nm(params[k]): v for k, v in c.items()})
            envs.append(env)
        return [c for c, ok in zip(combos, _holds(conds, envs)) if ok]

    grids: list[Point] = []
    claim: list[Point] = []
    per_small = max(1, MAX_SMALL // max(1, len(small)))
    indexed = [ix for m in masks for ix in m.indexes]
    for n in small:
        found = valid(n, candidates(n))
        found.sort(key=lambda c: [abs(c[k]) for k in names])
        chosen = _rng_choice(rng, found, per_small)
        for c in chosen:
            for lists in _lists(masks, n, lists_per_n if n <= 16 else 1, indexed):
                grids.append(point(n, c, lists))
                if n <= CLAIM_N:
                    claim.append(point(n, c, lists))
    if len(claim) > MAX_CLAIM:
        claim = _rng_choice(rng, claim, MAX_CLAIM)
    samples: list[Point] = []
    large_done: list[int] = []
    if not indexed:
        for n in large:
            found = valid(n, candidates(n))
            found.sort(key=lambda c: [abs(c[k]) for k in names])
            for c in _rng_choice(rng, found, PER_LARGE_N):
                sizes = [size_at(m, point(n, c)) for m in masks]
                size = sizes[0]
                if size <= FULL_UPTO:
                    grids.append(point(n, c))
                else:
                    idx = _sample_positions(rng, size, consts, c, masks, n)
                    samples.append(point(n, c, None, idx, idx))
                if n not in large_done:
                    large_done.append(n)
    words = _words(grids, samples, small, large_done, consts, bool(indexed))
    return Plan(grids, samples, sorted(set(claim), key=lambda p: (p.n, p.params, p.lists)), words)


def _lists(masks: list, n: int, count: int, indexed: list) -> list[dict]:
    if not indexed:
        return [{}]
    from hasse.solvers.symbolic.catalog import index_instances

    carrier = max(masks, key=lambda m: len(m.indexes))
    return index_instances(carrier, n, limit=count)


def _sample_positions(rng, size: int, consts: list, params: dict, masks: list, n: int) -> list[int]:
    """At most SAMPLE positions: the ends, stream starts and constants ± 2, then seeded random ones with neighbours."""
    special = {0, 1, 2, size - 1, size - 2, size - 3, n - 1, n, n + 1}
    for c in list(consts) + list(params.values()):
        special |= {c + d for d in range(-2, 3)}
    for m in masks:
        for _name, start in m.streams:
            try:
                s = int(evaluate(start, _env(m, point(n, params)))) if isinstance(start, z3.ExprRef) else int(start)
            except Unevaluable:
                continue
            special |= {s + d for d in range(-2, 3)}
    chosen = sorted(x for x in special if 0 <= x < size)
    chosen = chosen[:3] + chosen[3:][-(SAMPLE // 2 - 3):] if len(chosen) > SAMPLE // 2 else chosen
    out = set(chosen)
    while len(out) < min(SAMPLE, size) - 2:
        c = rng.randrange(size)
        out |= {x for x in (c - 1, c, c + 1) if 0 <= x < size}
    return sorted(out)


def _span(values: list[int]) -> str:
    """``1…64`` or ``998…1002, 2047…2049``: runs of consecutive integers."""
    values = sorted(set(values))
    runs, start, prev = [], None, None
    for v in values:
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            runs.append((start, prev))
            start = prev = v
    if start is not None:
        runs.append((start, prev))
    parts = [f"{a}…{b}" if b > a else f"{a}" for a, b in runs]
    return ", ".join(parts[:6]) + (f", … ({len(parts) - 6} more runs)" if len(parts) > 6 else "")


def _words(grids, samples, small, large, consts, indexed) -> str:
    ns = sorted({p.n for p in grids if p.n <= SMALL_N})
    parts = [f"n = {_span(ns)}"] if ns else []
    near = sorted({p.n for p in grids + samples if p.n > SMALL_N and any(abs(p.n - c) <= 2 for c in consts)})
    if near:
        parts.append(f"constants and bounds ± 2 (n = {_span(near)})")
    powers = sorted({p.n for p in grids + samples if p.n > SMALL_N and p.n not in near})
    if powers:
        parts.append(f"2^k ± 1 up to n = {max(powers)}")
    text = ", ".join(parts)
    if samples:
        text += f"; {len(samples)} of them sampled on at most {SAMPLE} x {SAMPLE} positions"
    if indexed:
        text += "; index tensors: a few instances at each n"
    return f"{len(grids) + len(samples)} instances ({text})"


# ---------------------------------------------------------------- program = formula


def _describe(v) -> str:
    return "allowed" if bool(v) else "blocked"


def check_program(masks: list, the_plan: Plan) -> str | None:
    """The program of each mask against its formula at every point of the plan: None (they agree), or
    ``"DISAGREES: …"``, or ``"not re-checked: …"`` when a program cannot be run at all."""
    points = the_plan.grids + the_plan.samples
    for mask in masks:
        program = getattr(mask, "program", None)
        if program is None:
            continue
        own = [Point(p.n, tuple((k, v) for k, v in p.params if k in mask.params),
                     tuple((k, v) for k, v in p.lists if k in {ix.name for ix in mask.indexes}), p.rows, p.cols)
               for p in points if p.rows is None or program.can_sample]
        try:
            program.prefetch(own)
        except InputError as exc:  # the whole run failed: the file, a timeout
            return f"not re-checked: the program {program.name} could not be run ({_one_line(exc)})"
        for p in own:
            problem = _compare(mask, program, p)
            if problem:
                return problem
    return None


def _compare(mask, program, p: Point) -> str | None:
    try:
        got = program.result(p)
    except ProgramFailure as exc:
        return f"DISAGREES: the program raises at {p.where()} ({exc}) where the claim holds (a bug of the kit)"
    try:
        size = size_at(mask, p)
        if p.rows is None and got.shape != (size, size):
            return f"DISAGREES: the program gives {got.shape[0]} positions at {p.where()}, the formula's size is " \
                   f"{size} (a bug of the kit)"
        want, undef = formula_at(mask, p, p.rows, p.cols)
        problem = _obligations(mask, p, p.rows, p.cols, got)
        if problem:
            return problem
    except Unevaluable as exc:
        return f"not re-checked: the formula of {mask.name} at {p.where()}: {exc}"
    rows = np.arange(size) if p.rows is None else np.asarray(p.rows)
    cols = np.arange(size) if p.cols is None else np.asarray(p.cols)
    if undef is not None:
        i, j = (int(x) for x in np.argwhere(undef)[0])
        return f"DISAGREES: the traced formula is undefined (a divisor 0) at {p.where()}, pair ({rows[i]}, " \
               f"{cols[j]}), where the program says {_describe(got[i, j])} (a bug of the kit)"
    diff = np.asarray(want, dtype=bool) != got
    if diff.any():
        i, j = (int(x) for x in np.argwhere(diff)[0])
        return f"DISAGREES: the traced formula and the program differ at {p.where()}, pair ({rows[i]}, {cols[j]}): " \
               f"the program says {_describe(got[i, j])}, the formula says {_describe(want[i, j])} (a bug of the kit)"
    return None


def _obligations(mask, p: Point, rows, cols, got) -> str | None:
    """An obligation (a divisor not 0, a lookup inside a tensor) false on the grid: the program fails there."""
    if not mask.obligations:
        return None
    size = size_at(mask, p)
    rows = np.arange(size) if rows is None else np.asarray(rows, dtype=np.int64)
    cols = np.arange(size) if cols is None else np.asarray(cols, dtype=np.int64)
    env = _env(mask, p)
    env[_nm(mask.q)] = rows[:, None]
    env[_nm(mask.k)] = cols[None, :]
    for ob, why in mask.obligations:
        try:
            values, undef = evaluate_partial(ob, env, shape=(len(rows), len(cols)))
        except Unevaluable:
            continue
        bad = ~np.asarray(values, dtype=bool)
        if undef is not None:
            bad = bad & ~undef
        if bad.any():
            i, j = (int(x) for x in np.argwhere(bad)[0])
            return f"DISAGREES: the program fails ({why}) at {p.where()}, pair ({rows[i]}, {cols[j]}), " \
                   f"inside the claim's domain (a bug of the kit)"
    return None


def equal_programs(a, b, the_plan: Plan) -> str | None:
    """The two masks' programs (or formulas) give the same grids and samples at every point: None, or DISAGREES."""
    for p in the_plan.grids + the_plan.samples:
        try:
            if p.rows is None:
                ga, gb = mask_grid(a, p.n, p.param_dict, p.list_dict), mask_grid(b, p.n, p.param_dict, p.list_dict)
            else:
                ga, gb = _sample_of(a, p), _sample_of(b, p)
        except ProgramFailure as exc:
            return f"DISAGREES: a program raises at {p.where()} ({exc}) where the claim holds (a bug of the kit)"
        except (InputError, Unevaluable) as exc:
            return f"not re-checked: at {p.where()}: {_one_line(exc)}"
        if ga.shape != gb.shape:
            return f"DISAGREES: proved equivalent, but the programs have {ga.shape[0]} and {gb.shape[0]} positions " \
                   f"at {p.where()}"
        diff = ga != gb
        if diff.any():
            i, j = (int(x) for x in np.argwhere(diff)[0])
            rows = np.arange(ga.shape[0]) if p.rows is None else np.asarray(p.rows)
            cols = np.arange(ga.shape[1]) if p.cols is None else np.asarray(p.cols)
            return f"DISAGREES: proved equivalent, but the programs differ at {p.where()}, pair ({rows[i]}, " \
                   f"{cols[j]}): {a.name} says {_describe(ga[i, j])}, {b.name} says {_describe(gb[i, j])} " \
                   f"(a bug of the kit)"
    return None


def _sample_of(mask, p: Point) -> np.ndarray:
    program = getattr(mask, "program", None)
    own = {k: v for k, v in p.params if k in mask.params}
    if program is not None:
        return program.sample(p.n, own, p.rows, p.cols)
    values, undef = formula_at(mask, point(p.n, own), p.rows, p.cols)
    if undef is not None:
        raise Unevaluable(f"the formula of {mask.name} is undefined at {p.where()}")
    return np.asarray(values, dtype=bool)

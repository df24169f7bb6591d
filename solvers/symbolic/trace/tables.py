"""A closure or module-global tensor of the traced program, read with its actual values (:class:`Table`),
or the index tensor ``--assume NAME=…`` declares for it."""

from __future__ import annotations

import sys

import numpy as np
import z3

from hasse.solvers.symbolic.terms import CannotRun, Sym, SymBool, SymInt, Tracer, Untraceable, as_int


MAX_TABLE_RUNS = 4096  # runs of equal values of a closure tensor looked up by a symbolic index (one If each)
MAX_TABLE_ENTRIES = 4096  # entries of a closure tensor looked up by several symbolic indices (a nested If)


def _is_array(value) -> bool:
    """A numpy array or a torch tensor (torch is not imported here: only a tensor of a loaded torch)."""
    if isinstance(value, np.ndarray):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _tensor_value(name: str, value, tracer: Tracer):
    """What the traced program sees for the closure/global tensor ``name``: a :class:`Table` of its
    values, or the index tensor declared for it by ``--assume NAME=…`` (``tracer.assume``)."""
    if getattr(value, "ndim", 0) == 0:  # a 0-d tensor is a number: torch's own arithmetic with it is modelled
        return value
    seen = getattr(tracer, "tensor_names", None)
    if seen is not None:
        seen.add(name)
    assumed = getattr(tracer, "assume", None) or {}
    if name in assumed:
        index = assumed[name]
        index.tracer = tracer
        return index
    return Table(name, value, tracer)


def _values_of(value) -> tuple[np.ndarray, str]:
    """``value`` (array or tensor) as a numpy array of Python-exact integers, and its dtype in the tracer's words."""
    if isinstance(value, np.ndarray):
        kind = value.dtype
        arr = value
    else:
        arr = value.detach().cpu().numpy()
        kind = arr.dtype
    if kind == np.bool_:
        return arr.astype(bool), "bool"
    if not np.issubdtype(kind, np.integer):
        raise Untraceable(f"a closure tensor of dtype {kind} (only integer and bool tensors are modelled)")
    return arr.astype(np.int64), ("int32" if kind == np.int32 else "int64")


class Table:
    """A closure or module-global tensor of the traced program, read with its actual values.

    Concrete indices read the element (``t[0]``, a row of a 2-D tensor); a symbolic index
    ``i`` (a position, ``b``, a value computed from them) reads ``If``-chains over the runs of
    equal values, with the obligation ``-L <= i < L`` (torch raises outside; negative indices
    count from the end) and, when ``i`` depends on a position, the side condition
    ``n <= L`` of the statement (the claim is about the tensor as given). Several symbolic
    indices read a nested ``If`` over at most :data:`MAX_TABLE_ENTRIES` entries. The
    result's interval is the values' range.
    """

    def __init__(self, name: str, value, tracer: Tracer, pending: tuple = ()):
        self._name, self._value, self._tracer, self._pending = name, value, tracer, pending

    def __repr__(self) -> str:
        return f"Table({self._name})"

    # concrete reads go to the real tensor
    def __len__(self):
        return len(self._value) if not self._pending else self._shape()[len(self._pending)]

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        if self._pending:
            raise Untraceable(f"{self._name}[…].{attr} with a symbolic index is not modelled")
        return getattr(self._value, attr)

    def _shape(self):
        return tuple(self._value.shape)

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if k is None or k is Ellipsis or isinstance(k, slice):
                if self._pending or any(isinstance(x, Sym) for x in keys):
                    raise Untraceable(f"{self._name}[…] with a slice, None or ... beside a symbolic index")
            elif isinstance(k, SymBool) or isinstance(k, bool):
                raise Untraceable(f"{self._name}[…] indexed by a Boolean (a mask index) is not modelled")
            elif isinstance(k, (Table, list, tuple)) or _is_array(k) and getattr(k, "ndim", 0) > 0:
                raise Untraceable(f"{self._name}[…] indexed by a tensor of several values is not modelled")
        if not self._pending and not any(isinstance(k, Sym) for k in keys):
            return self._concrete(self._value[key])
        pending = self._pending + tuple(keys)
        ndim = len(self._shape())
        if len(pending) > ndim:
            raise CannotRun(f"cannot run: {self._name} has {ndim} dimension(s); indexed by {len(pending)}")
        if len(pending) < ndim:
            return Table(self._name, self._value, self._tracer, pending)
        return self._lookup(pending)

    def _concrete(self, element):
        """A concrete read: a row stays a table; an element is torch's (numpy's) own 0-d value, as the program
        would get it (its arithmetic with a traced value defers to the traced value; ``.item()`` works)."""
        if _is_array(element) and getattr(element, "ndim", 0) > 0:
            return Table(self._name, element, self._tracer)
        return element

    def _lookup(self, keys: tuple):
        from hasse.theory.deadline import tick

        tracer = self._tracer
        arr, dtype = _values_of(self._value)
        concrete = [None if isinstance(k, Sym) else int(k) for k in keys]
        for axis, c in enumerate(concrete):  # concrete indices first (torch's IndexError at every n)
            if c is not None and not -arr.shape[axis] <= c < arr.shape[axis]:
                raise CannotRun(f"cannot run: index {c} is out of bounds for {self._name} "
                                             f"(dimension {axis} of size {arr.shape[axis]}): torch raises IndexError")
        sub = arr[tuple(slice(None) if c is None else c for c in concrete)]
        syms = [k for k in keys if isinstance(k, Sym)]
        terms = []
        for axis, k in zip([a for a, c in enumerate(concrete) if c is None], syms):
            length = arr.shape[axis]
            i = as_int(k, f"an index into {self._name}")
            if tracer is not None:
                tracer.oblige(z3.And(i >= -length, i < length),
                              f"{self._name}[i] is looked up outside -{length} … {length - 1} (torch raises)")
                self._position_condition(i, length)
            terms.append(z3.If(i < 0, i + length, i))
        if sub.size == 0:
            raise CannotRun(f"cannot run: {self._name} is empty: every lookup raises IndexError")
        low, high = (bool(sub.min()), bool(sub.max())) if dtype == "bool" else (int(sub.min()), int(sub.max()))
        if len(terms) == 1:
            expr = _runs(sub.reshape(-1), terms[0], dtype, self._name)
        else:
            if sub.size > MAX_TABLE_ENTRIES:
                raise Untraceable(f"{self._name} looked up by {len(terms)} symbolic indices over {sub.size} entries "
                                  f"(at most {MAX_TABLE_ENTRIES}): use --assume or index it by one value")
            expr = _nested(sub, terms, dtype)
        tick()
        seen = getattr(tracer, "tables", None)
        if seen is not None:
            seen[self._name] = int(arr.shape[0])
        return _make_value(expr, dtype, (low, high), tracer)

    def _position_condition(self, i, length: int) -> None:
        """``n <= length`` as a side condition when the index ``i`` is a position (``q``, ``q - 1``: the tensor
        as given holds one value a position); any other index (``q + 1``, ``doc[q]``) only has its obligation."""
        tracer = self._tracer
        n, positions = getattr(tracer, "n", None), getattr(tracer, "positions", ())
        if n is None or not positions:
            return
        offsets = [z3.simplify(i - z3.Int(p)) for p in positions]  # the position itself, or minus a constant
        if any(z3.is_int_value(d) and d.as_long() <= 0 for d in offsets):  # (q + 1 past the end: the obligation)
            cond = n <= length
            if not any(cond.eq(c) for c in tracer.assumptions):
                tracer.assumptions.append(cond)
                tracer._solver.add(cond)

    def _refuse(self, *_a, **_k):
        raise Untraceable(f"arithmetic on the closure tensor {self._name} as a whole is not modelled (index it)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = __mod__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __xor__ = __invert__ = _refuse
    __hash__ = object.__hash__

    def __bool__(self):
        return bool(self._value)


def _runs(values: np.ndarray, i, dtype: str, name: str):
    """``values[i]`` for ``0 <= i < len(values)`` as an If-chain over the runs of equal values."""
    cuts = np.flatnonzero(values[1:] != values[:-1]) + 1
    if len(cuts) + 1 > MAX_TABLE_RUNS:
        raise Untraceable(f"the closure tensor {name} has {len(cuts) + 1} runs of equal values (at most "
                          f"{MAX_TABLE_RUNS} are modelled): use --assume {name}=nondecreasing|permutation|parents")
    starts = [0, *cuts.tolist()]
    const = (lambda v: z3.BoolVal(bool(v))) if dtype == "bool" else (lambda v: z3.IntVal(int(v)))
    out = const(values[starts[-1]])
    for start, end in reversed(list(zip(starts[:-1], starts[1:]))):
        out = z3.If(i < end, const(values[start]), out)
    return out


def _nested(values: np.ndarray, terms: list, dtype: str):
    const = (lambda v: z3.BoolVal(bool(v))) if dtype == "bool" else (lambda v: z3.IntVal(int(v)))
    if not terms:
        return const(values.item())
    i, rest = terms[0], terms[1:]
    out = _nested(values[-1], rest, dtype)
    for j in reversed(range(values.shape[0] - 1)):
        out = z3.If(i == j, _nested(values[j], rest, dtype), out)
    return out


def _make_value(expr, dtype: str, bounds: tuple, tracer: Tracer):
    """A tensor value of the traced program: SymBool for bool, else SymInt, with its dtype and bounds."""
    if isinstance(expr, bool):
        expr = z3.BoolVal(expr)
    elif isinstance(expr, int):
        expr = z3.IntVal(expr)
    cls = SymBool if dtype == "bool" else SymInt
    return cls(expr, tracer, dtype=dtype, bounds=bounds)

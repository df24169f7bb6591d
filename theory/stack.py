"""Stacks of different masks per layer: reachability, convergence, receptive field, layered witnesses.

Definitions (design.md §2, "Different masks per layer are allowed"). A *stack* is a list
of layers, first layer first; layer ``i`` has a mask ``M_i`` (the union over its heads)
and, with the residual, the dependency ``A_i = I or M_i``. After ``L`` layers

    ``R(L) = A_L · … · A_1``  (Boolean),  ``R(0) = I``,

so ``R(L)[q, k]`` iff there is a walk ``k = v_0, …, v_L = q`` that stays put or takes
one attention edge of layer ``i`` at step ``i``. ``R`` only grows with ``L`` (each ``A_i``
contains ``I``). *Repeating* a stack cycles its layers (layer ``i`` of the repeated
stack is layer ``i mod depth``); every layer then recurs forever, so the flow converges
to the reflexive–transitive closure of the union of the layers' masks, and the
*convergence depth* is the first ``L`` with ``R(L)`` equal to that limit.

Everything here comes from one array, the *first-arrival* matrix ``F``:
``F[q, k]`` is the smallest ``L`` with ``R(L)[q, k]`` (``-1`` when no depth reaches it),
so ``R(L) = (0 <= F) & (F <= L)``; the *receptive field* of ``q`` (how many layers until
it sees all it will ever see) is the largest ``F[q, k]`` of its row.

A recurrent, linear-attention or state-space layer is not attention, but its output at
``q`` depends on exactly the inputs its recurrence reads: the causal prefix (``k <= q``),
or the prefix of ``q``'s segment when the state is reset at chunk or document boundaries.
It enters a stack as that dependency pattern (``kind = "recurrent"``), which keeps the
theory exact. A short causal convolution of width ``K`` (LFM2's conv layers) likewise
enters as its window ``q - K < k <= q`` within the document (``kind = "convolution"``,
:mod:`theory.masks.convolution`): a kind of its own, since it is neither attention nor
causal within segments (it forgets what lies ``K`` positions back).

Two engines compute ``F``, and tests check them against each other and against a plain
numpy product: a Boolean matrix product per layer (any mask), and an interval engine
for stacks whose every layer is *monotone-interval* (each row of ``I or M`` is one run
``lo[q] … hi[q]`` with ``lo`` and ``hi`` non-decreasing: causal, sliding windows,
chunks, documents, recurrences, convolutions reset at documents). There, each ``R(L)`` row is a run too, and one layer
costs ``O(n)``: ``lo' = lo_R[lo_A]``, ``hi' = hi_R[hi_A]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.limits import check_positions

LAYER_KINDS = ("attention", "recurrent", "convolution")


@dataclass(frozen=True)
class StackLayer:
    """One layer: its mask (the union over its heads), where it came from, and its kind."""

    mask: np.ndarray = field(repr=False)  # (n, n) bool, M[q, k]
    spec: str  # e.g. "sliding_window:n=16,window=4"
    kind: str = "attention"  # "attention" | "recurrent" | "convolution" (dependency patterns, module docstring)


@dataclass(frozen=True)
class LayerStack:
    """The layers of a model, first layer first (a pattern written ``x5`` is expanded)."""

    layers: tuple[StackLayer, ...]
    spec: str  # how the user wrote it, canonical where possible
    note: str = ""  # where the stack comes from (a preset's public configuration)

    def __post_init__(self):
        if not self.layers:
            raise InputError("a stack needs at least one layer", self.spec)
        n = self.layers[0].mask.shape[0]
        for i, layer in enumerate(self.layers):
            if layer.mask.shape != (n, n):
                raise InputError(f"layer {i + 1} ({layer.spec}) has {layer.mask.shape[0]} positions, "
                                 f"layer 1 has {n}: every layer must have the same size", self.spec)
            if layer.kind not in LAYER_KINDS:
                raise InputError(f"layer {i + 1}: kind must be one of {LAYER_KINDS}, got {layer.kind!r}", self.spec)

    @property
    def n(self) -> int:
        return self.layers[0].mask.shape[0]

    @property
    def depth(self) -> int:
        """The number of layers of the model (before any repetition)."""
        return len(self.layers)

    def layer(self, i: int) -> StackLayer:
        """Layer ``i`` (0-based) of the stack repeated forever: ``layers[i mod depth]``."""
        return self.layers[i % self.depth]

    def runs(self) -> list[tuple[int, int, StackLayer]]:
        """Consecutive layers with the same spec and kind, as ``(first, last, layer)``, 1-based.

        >>> causal = np.tril(np.ones((2, 2), dtype=bool))
        >>> s = LayerStack((StackLayer(causal, "a"), StackLayer(causal, "a"), StackLayer(causal, "b")), "a x2, b")
        >>> [(a, b, layer.spec) for a, b, layer in s.runs()]
        [(1, 2, 'a'), (3, 3, 'b')]
        """
        out: list[tuple[int, int, StackLayer]] = []
        for i, layer in enumerate(self.layers, start=1):
            if out and (out[-1][2].spec, out[-1][2].kind) == (layer.spec, layer.kind):
                out[-1] = (out[-1][0], i, out[-1][2])
            else:
                out.append((i, i, layer))
        return out

    def union(self) -> np.ndarray:
        """``M_1 or … or M_depth``: its reflexive–transitive closure is the limit of the repeated stack."""
        out = np.zeros((self.n, self.n), dtype=bool)
        for m in self.distinct_masks():
            out |= m
        return out

    def distinct_masks(self) -> list[np.ndarray]:
        """Each distinct mask object once (a pattern repeated 20 times holds 2 or 3)."""
        seen: dict[int, np.ndarray] = {}
        for layer in self.layers:
            seen.setdefault(id(layer.mask), layer.mask)
        return list(seen.values())


# --------------------------------------------------------------------------- propagation


@dataclass(frozen=True)
class StackFlow:
    """The first-arrival matrix of a stack and what follows from it (module docstring)."""

    stack: LayerStack
    first: np.ndarray = field(repr=False)  # (n, n) int32: smallest L with R(L)[q, k]; -1 never (within `computed`)
    computed: int  # layers propagated (model depth, or more when propagated to convergence)
    converged: int | None  # convergence depth of the repeated stack; None when not propagated that far
    engine: str  # "interval" | "product"

    @property
    def n(self) -> int:
        return self.stack.n

    def reach(self, layers: int) -> np.ndarray:
        """``R(layers)``; any ``layers`` up to ``computed``, or any at all once converged."""
        if layers < 0:
            raise InputError(f"layers must be >= 0, got {layers}")
        if layers > self.computed and self.converged is None:
            raise InputError(f"R({layers}) needs {layers} layers; only {self.computed} were propagated")
        return (self.first >= 0) & (self.first <= layers)

    @property
    def limit(self) -> np.ndarray:
        """What each position ever sees (within ``computed`` layers; the limit once converged)."""
        return self.first >= 0

    def receptive_field(self) -> np.ndarray:
        """Per position ``q``: the layers until ``q`` sees all it will ever see (``max_k F[q, k]``)."""
        return self.first.max(axis=1).astype(np.int64)

    def first_sight(self, q: int, k: int) -> int | None:
        """The number of layers after which output ``q`` first depends on input ``k`` (None: never)."""
        f = int(self.first[q, k])
        return None if f < 0 else f

    def witness(self, k: int, q: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """A path ``k -> … -> q`` that arrives as early as possible, and the layer (1-based) of each hop.

        Walking back from ``q``, which first sees ``k`` after ``L = F[q, k]`` layers: layer
        ``L`` has an edge ``v -> q`` from some ``v`` that saw ``k`` after fewer layers (the
        earliest such ``v``, smallest position on ties). Hops have increasing layers.
        """
        f = self.first_sight(q, k)
        if f is None:
            raise InputError(f"position {q} never depends on position {k}")
        path, hops = [q], []
        cur, bound = q, f
        while cur != k:
            arrival = int(self.first[cur, k])
            mask = self.stack.layer(arrival - 1).mask
            row = self.first[:, k]
            candidates = np.flatnonzero(mask[cur])
            seen = row[candidates]
            ok = (candidates != cur) & (seen >= 0) & (seen <= arrival - 1)
            candidates, seen = candidates[ok], seen[ok]
            v = int(candidates[np.lexsort((candidates, seen))[0]])  # fewest layers, then smallest position
            hops.append(arrival)
            path.append(v)
            cur, bound = v, int(row[v])
        return tuple(reversed(path)), tuple(reversed(hops))


def stack_ref(stack: LayerStack, flow: StackFlow) -> dict:
    """The JSON of a stack a command ran (docs/schema.json ``stack_ref``): ``{spec, depth, converged_depth, note}``.

    >>> from hasse.theory.inputs.stacks import build_stack
    >>> stack = build_stack("causal x2", 3)
    >>> stack_ref(stack, propagate(stack))
    {'spec': 'causal:n=3 x2', 'depth': 2, 'converged_depth': 1, 'note': None}
    """
    return {"spec": stack.spec, "depth": stack.depth, "converged_depth": flow.converged, "note": stack.note or None}


def propagate(stack: LayerStack, layers: int | None = None, *, until_converged: bool = True,
              engine: str = "auto") -> StackFlow:
    """Propagate ``stack`` for ``layers`` layers (default: its depth), cycling its layers.

    With ``until_converged`` (default) propagation goes on past ``layers`` until a whole
    pass over the layers adds nothing, which gives the convergence depth of the repeated
    stack (at most ``depth · n`` layers). ``engine``: ``"auto"`` (interval when
    every layer is monotone-interval), ``"interval"`` or ``"product"``.

    >>> causal = np.tril(np.ones((4, 4), dtype=bool))
    >>> window = causal & ~np.tril(np.ones((4, 4), dtype=bool), -2)   # 2 keys
    >>> flow = propagate(LayerStack((StackLayer(window, "w2"),) * 2 + (StackLayer(causal, "causal"),), "s"))
    >>> flow.first[3].tolist(), flow.converged, flow.receptive_field().tolist()
    ([3, 2, 1, 0], 3, [0, 1, 2, 3])
    """
    layers = stack.depth if layers is None else layers
    if layers < 0:
        raise InputError(f"layers must be >= 0, got {layers}")
    intervals = [_interval_form(m) for m in stack.distinct_masks()]
    if engine == "auto":
        engine = "interval" if all(x is not None for x in intervals) else "product"
    if engine == "interval" and any(x is None for x in intervals):
        raise InputError("the interval engine needs every layer to be monotone-interval")
    if engine not in ("interval", "product"):
        raise InputError(f"engine must be auto, interval or product, got {engine!r}")
    # the one size limit, with this engine's matrices: F (int32) and its temporaries, and per distinct mask
    # the mask (plus its float32 copy for the products)
    check_positions(stack.n, stack.spec, what="a stack's first arrivals and layers",
                    masks=5 + len(intervals) if engine == "interval" else 7 + 5 * len(intervals))
    run = _propagate_intervals if engine == "interval" else _propagate_products
    first, computed, converged = run(stack, layers, until_converged)
    return StackFlow(stack, first, computed, converged, engine)


def _propagate_products(stack: LayerStack, layers: int, until_converged: bool):
    n = stack.n
    first = np.full((n, n), -1, dtype=np.int32)
    np.fill_diagonal(first, 0)
    reach = np.eye(n, dtype=np.float32)
    floats: dict[int, np.ndarray] = {}
    step, quiet, converged = 0, 0, None
    last_change = 0
    limit = layers + (stack.depth * (n + 1) if until_converged else 0)
    while step < limit:
        layer = stack.layer(step)
        a = floats.get(id(layer.mask))
        if a is None:
            a = layer.mask.astype(np.float32)
            np.fill_diagonal(a, 1.0)
            floats[id(layer.mask)] = a
        step += 1
        new = _bool_product(a, reach)
        fresh = new & (first < 0)
        if fresh.any():
            first[fresh] = step
            last_change, quiet = step, 0
        else:
            quiet += 1
        reach = new.astype(np.float32)
        if quiet >= stack.depth:  # a whole pass added nothing: a fixed point of every layer
            converged = last_change
            break
        if step >= layers and not until_converged:
            break
    return first, step, converged


def _bool_product(a: np.ndarray, r: np.ndarray, rows: int = 2048) -> np.ndarray:
    """``(a @ r) > 0`` for 0/1 float32 matrices, in row chunks (sums of 0/1 are exact far past n)."""
    out = np.empty(a.shape, dtype=bool)
    for i in range(0, a.shape[0], rows):
        np.greater(a[i:i + rows] @ r, 0.5, out=out[i:i + rows])
    return out


def _interval_form(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(lo, hi)`` when every row of ``I or mask`` is the run ``lo[q] … hi[q]`` with monotone ends; else None."""
    a = mask.copy()
    np.fill_diagonal(a, True)
    n = a.shape[0]
    lo = a.argmax(axis=1)
    hi = n - 1 - a[:, ::-1].argmax(axis=1)
    if np.any(np.diff(lo) < 0) or np.any(np.diff(hi) < 0):
        return None
    if not np.array_equal(a.sum(axis=1), hi - lo + 1):  # a gap inside some run
        return None
    return lo.astype(np.int64), hi.astype(np.int64)


def _propagate_intervals(stack: LayerStack, layers: int, until_converged: bool):
    n = stack.n
    forms = {id(m): _interval_form(m) for m in stack.distinct_masks()}
    lo = np.arange(n)
    hi = np.arange(n)
    first = np.full((n, n), -1, dtype=np.int32)
    np.fill_diagonal(first, 0)
    cols = np.arange(n)
    step, quiet, converged, last_change = 0, 0, None, 0
    limit = layers + (stack.depth * (n + 1) if until_converged else 0)
    while step < limit:
        a_lo, a_hi = forms[id(stack.layer(step).mask)]
        new_lo, new_hi = lo[a_lo], hi[a_hi]
        step += 1
        if np.array_equal(new_lo, lo) and np.array_equal(new_hi, hi):
            quiet += 1
        else:
            # the run only grows: the newly covered keys are new_lo … lo-1 and hi+1 … new_hi
            grown = ((cols >= new_lo[:, None]) & (cols < lo[:, None])) | \
                    ((cols > hi[:, None]) & (cols <= new_hi[:, None]))
            first[grown] = step
            lo, hi = new_lo, new_hi
            last_change, quiet = step, 0
        if quiet >= stack.depth:
            converged = last_change
            break
        if step >= layers and not until_converged:
            break
    return first, step, converged


def reach_reference(masks: Sequence[np.ndarray], layers: int) -> np.ndarray:
    """``R(layers)`` of the stack ``masks`` repeated, by plain numpy products (tests' reference)."""
    n = masks[0].shape[0]
    r = np.eye(n, dtype=bool)
    for i in range(layers):
        a = np.asarray(masks[i % len(masks)], dtype=bool) | np.eye(n, dtype=bool)
        r = (a.astype(np.int64) @ r.astype(np.int64)) > 0
    return r

"""An audit's findings: the intended flow per layer, the measured flow classified per layer, and who introduced it.

Definitions (design.md §9). The *predicted* flow after ``l`` layers is ``R(l)`` of the
intended layer masks (:func:`hasse.theory.reach.reach`). With ``measured[l]`` the pairs
``(q, k)`` whose hidden state after block ``l`` depends on input ``k`` in some seed, a pair
is

- *unexpected* when ``measured[l] & ~R(l)`` at SOME layer ``l``: the first such ``l`` is its
  layer (a window one key too wide in layer 1 is a finding even when a full layer after it
  reaches every pair anyway);
- *missing* when ``R(l) & ~measured[l]`` at some layer, in every seed.

Only rows of real tokens are compared. An unexpected pair first at layer ``l`` is
*carried* when layer ``l``'s intended flow explains it from what layer ``l - 1`` measured
(``(I ∨ M_l) · measured[l-1]``: an earlier finding moved along inside its document);
otherwise it is *introduced* at ``l``, and attributed to the first operator of block
``l`` (in the order the operators finish) whose output already depends on input ``k``
at ``q`` (``layers.0.linear_attn.conv1d (Conv1d)``); when none does, to the block
itself, outside its operators. Each operator
also has its *own* pattern (its output against its own input): it keeps documents
isolated when no own pair joins two different documents or reads a pad key into a real row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hasse.gpu_check.audit.models import first_sentence  # noqa: F401  (the engine's one-line library errors)
from hasse.gpu_check.audit.scenarios import PAD, Scenario, intended_masks
from hasse.gpu_check.dependency import dependent
from hasse.theory.errors import InputError
from hasse.theory.reach import reach

Pair = tuple[int, int]


def embedding_width(built, blocks) -> int:
    """The width C of the input embeddings the leaf stands for."""
    if built.embedding is not None:
        return int(built.embedding.shape[-1])
    from hasse.gpu_check.audit.trace import input_embedding

    try:
        return int(input_embedding(built.model).weight.shape[1])
    except (InputError, AttributeError):
        config = getattr(built.model, "config", None)
        width = getattr(config, "hidden_size", None) or getattr(config, "d_model", None)
        if width is None:
            raise InputError(f"cannot tell the embedding width of {type(built.model).__name__}") from None
        return int(width)


@dataclass(frozen=True)
class Group:
    """Findings of one kind between two documents, first seen at one layer, introduced by one operator."""

    kind: str  # contamination, future, pad_key, window, nan, missing
    source_doc: int  # document of the input k (PAD = -1: padding)
    dest_doc: int  # document of the output q
    layer: int  # unexpected: the first layer count at which it is measured; missing: at which R(l) predicts it
    pairs: tuple[Pair, ...]
    operator: str | None = None  # the operator that introduced it (None: missing, or carried)
    carried: bool = False  # the layer's intended flow moved an earlier finding along (introduced before)

    def to_json(self) -> dict:
        return {"kind": self.kind, "source_doc": self.source_doc, "dest_doc": self.dest_doc, "layer": self.layer,
                "operator": self.operator, "carried": self.carried, "count": len(self.pairs),
                "pairs": [list(p) for p in self.pairs]}


@dataclass(frozen=True)
class OperatorFlow:
    """One operator's measured flow: its own pattern, whether it keeps documents apart, what it introduced."""

    op: object  # gpu_check.audit.operators.Operator
    own: np.ndarray | None  # (n, n) bool: out_q depends on in_k in some seed (None: not measured)
    isolated: bool | None  # no own pair across documents or from a pad key (None: not measured)
    crossing: int  # own pairs across documents / from pad keys
    introduced: int  # unexpected pairs this operator introduced (attribution)
    called: bool = True  # False: never called as a module (the model uses its weights through a function)

    def to_json(self) -> dict:
        return {"path": self.op.path, "layer": self.op.layer, "kind": self.op.kind, "class": self.op.class_name,
                "width": self.op.width, "called": self.called, "isolated": self.isolated, "crossing_pairs": self.crossing,
                "introduced": self.introduced,
                "own_pairs": None if self.own is None else int(self.own.sum())}


def intended_pattern(config, operators, layers: int) -> list[tuple]:
    """The intended ``(kind, size)`` per layer: the configuration's pattern, else read from the operators found."""
    if config is not None and (getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None)):
        from hasse.gpu_check.audit.models import layer_pattern

        pattern = list(layer_pattern(config))
        if len(pattern) == layers:
            return pattern
    out = []
    for layer in range(layers):
        kinds = {op.kind: op for op in operators if op.layer == layer}
        if "attention" in kinds or "other" in kinds:
            out.append(("full", None))
        elif "linear_attention" in kinds or "scan" in kinds:
            out.append(("recurrent", None))
        elif "convolution" in kinds or "token_shift" in kinds:
            out.append(("conv", max(op.width or 1 for op in operators if op.layer == layer
                                    and op.kind in ("convolution", "token_shift"))))
        else:
            out.append(("none", None))
    return out


def within_layout(mask: np.ndarray, layout: Scenario, bidirectional: bool) -> np.ndarray:
    """``mask`` restricted to the layout: same document, no pad key; a pad row attends only itself."""
    docs, real = layout.docs, layout.real
    out = np.asarray(mask, bool) & (docs[:, None] == docs[None, :]) & real[None, :]
    out[~real] = False
    out[~real, ~real] = True
    return out


def intended_stack(layout: Scenario, pattern, intended, encoder: bool, layers: int) -> list[np.ndarray]:
    """One intended (n, n) mask per layer: the pattern's (None) or the given masks restricted to the layout."""
    if intended is None:
        return intended_masks(layout, pattern, bidirectional=encoder)
    masks = [np.asarray(m, bool) for m in intended]
    if len(masks) != layers:
        raise InputError(f"the intended stack has {len(masks)} layer(s), the model {layers}", "--intended")
    for m in masks:
        if m.shape != (layout.n, layout.n):
            raise InputError(f"the intended stack has {m.shape[0]} positions, the input {layout.n}", "--intended")
    return [within_layout(m, layout, encoder) for m in masks]


def predicted_flow(masks) -> np.ndarray:
    """(L, n, n): ``R(l)`` for l = 1 … L."""
    return np.stack([reach(masks[:l], l) for l in range(1, len(masks) + 1)])


def first_layers(stack: np.ndarray) -> np.ndarray:
    """(n, n) int: the first l (1-based) with ``stack[l - 1]`` true, 0 where never.

    >>> first_layers(np.array([[[0, 1]], [[1, 1]]], bool)).tolist()
    [[2, 1]]
    """
    hit = np.asarray(stack, bool)
    return np.where(hit.any(axis=0), hit.argmax(axis=0) + 1, 0)


def unexpected_kind(layout: Scenario, encoder: bool, nan: np.ndarray):
    """``kind_of(q, k)`` for an unexpected pair: nan, pad_key, contamination, future or window."""
    docs = layout.docs

    def kind_of(q: int, k: int) -> str:
        if nan[q, k]:
            return "nan"
        if docs[k] == PAD:
            return "pad_key"
        if docs[k] != docs[q]:
            return "contamination"
        if k > q and not encoder:
            return "future"
        return "window"  # same document, allowed direction, outside the intended layer pattern

    return kind_of


@dataclass(frozen=True)
class Classified:
    norms: np.ndarray  # (S, L, n, n), padding rows 0
    unexpected: tuple[Pair, ...]
    missing: tuple[Pair, ...]
    cancelled: int
    groups: tuple[Group, ...]
    operators: tuple[OperatorFlow, ...]


def _group(pairs, first, kind_of, operator_of) -> list[Group]:
    groups: dict[tuple, list[Pair]] = {}
    for q, k in pairs:
        op = operator_of(q, k)  # None: missing; "": carried
        key = (kind_of(q, k), int(first[q, k]), op)
        groups.setdefault(key, []).append((int(q), int(k)))
    return [Group(kind, -1, -1, layer, tuple(v), op or None, op == "") for (kind, layer, op), v in groups.items()]


def classify_layers(layout: Scenario, predicted, layers, ops, own, own_ok, operators, encoder: bool,
                    thresholds=None, order=None, masks=None) -> Classified:
    """Per-layer classification and attribution (module docstring).

    ``layers`` (S, L, n, n) and ``ops`` (S, P, n, n) the composed flow, ``own`` (S, P, n, n)
    each operator against its own input (None: not measured), ``thresholds`` (S, L + P, n)
    the noise rule's (None: any nonzero counts), ``order`` the operator indices in the
    order their calls finished (None: module order), ``masks`` the intended (n, n) mask
    of each layer (None: no pair is read as carried).
    """
    real = layout.real
    L = layers.shape[1]
    norms = layers.copy()
    norms[:, :, ~real] = 0
    t_layers = None if thresholds is None else thresholds[:, :L]
    t_ops = None if thresholds is None else thresholds[:, L:]
    dep = dependent(norms, t_layers)  # (S, L, n, n)
    any_seed, every_seed = dep.any(axis=0), dep.all(axis=0)
    rows = real[None, :, None]
    extra = any_seed & ~predicted & rows
    lacking = predicted & ~any_seed & rows
    nan = np.isnan(norms).any(axis=(0, 1))
    first_extra, first_lacking = first_layers(extra), first_layers(lacking)
    unexpected = tuple(map(tuple, np.argwhere(first_extra > 0).tolist()))
    missing = tuple(map(tuple, np.argwhere(first_lacking > 0).tolist()))
    cancelled = int((predicted[-1] & any_seed[-1] & ~every_seed[-1] & real[:, None]).sum())
    op_dep = dependent(ops, t_ops).any(axis=0) if ops.shape[1] else np.zeros((0,) + norms.shape[2:], bool)
    introduced = np.zeros(len(operators), int)
    sequence = list(order) if order is not None else []
    sequence += [j for j in range(len(operators)) if j not in sequence]

    carried = np.zeros_like(any_seed)
    if masks is not None:
        eye = np.eye(norms.shape[-1], dtype=bool)
        before = eye
        for l, m in enumerate(masks):  # (I or M_l) . measured[l - 1], Boolean
            carried[l] = ((m | eye).astype(np.float32) @ before.astype(np.float32)) > 0  # exact: sums <= n < 2^24
            before = any_seed[l] | eye

    def operator_of(q: int, k: int) -> str:
        layer = int(first_extra[q, k]) - 1
        if carried[layer, q, k]:
            return ""
        for j in sequence:  # the order the calls finished: a nested operator comes before its parent
            if operators[j].layer == layer and op_dep[j, q, k]:
                op = operators[j]
                introduced[j] += 1
                return op.label
        return f"block {layer} (outside its operators)"

    groups = _group(unexpected, first_extra, unexpected_kind(layout, encoder, nan), operator_of)
    groups += _group(missing, first_lacking, lambda q, k: "missing", lambda q, k: None)
    docs = layout.docs
    fixed = []
    for g in groups:  # split by (source document, destination document)
        by_docs: dict[tuple[int, int], list] = {}
        for q, k in g.pairs:
            by_docs.setdefault((int(docs[k]), int(docs[q])), []).append((q, k))
        fixed += [Group(g.kind, src, dst, g.layer, tuple(p), g.operator, g.carried) for (src, dst), p in by_docs.items()]
    fixed.sort(key=lambda g: (g.layer, g.kind == "missing", g.carried, g.kind, g.source_doc, g.dest_doc,
                              g.operator or ""))
    flows = []
    cross = (docs[:, None] != docs[None, :]) & real[:, None]
    for j, op in enumerate(operators):
        if own is None or own_ok[j] != 2:
            flows.append(OperatorFlow(op, None, None, 0, int(introduced[j]), bool(own_ok[j])))
            continue
        mine = (own[:, j] > 0).any(axis=0) | np.isnan(own[:, j]).any(axis=0)
        mine[~real] = False
        crossing = int((mine & cross).sum())
        flows.append(OperatorFlow(op, mine, crossing == 0, crossing, int(introduced[j])))
    return Classified(norms, unexpected, missing, cancelled, tuple(fixed), tuple(flows))


def unexercised(pattern, layout: Scenario) -> list[str]:
    """Notes for each window / chunk / convolution of the pattern the input is too short to show."""
    docs = layout.docs[layout.real]
    longest = max((int((docs == d).sum()) for d in set(docs.tolist())), default=0)
    top = int(layout.positions[layout.real].max(initial=0))
    notes, seen = [], set()
    for i, (kind, size) in enumerate(pattern):
        if (kind, size) in seen:
            continue
        if kind in ("sliding", "conv") and size is not None and size >= longest:
            seen.add((kind, size))
            what = "sliding window" if kind == "sliding" else "convolution"
            notes.append(f"layer {i + 1}'s {what} of {size} keys is not smaller than the longest document "
                         f"({longest} positions): the input cannot show it")
        if kind == "chunked" and size is not None and size > top:
            seen.add((kind, size))
            notes.append(f"layer {i + 1}'s chunks of {size} positions hold every position_id (0 … {top}): "
                         "the input cannot show them")
    return notes

"""``hasse analyze --stack SPEC`` (or a preset as MASK): the stack's report and JSON (design.md §7, "Stacks").

What a stack analysis says, from :func:`theory.stack.propagate` (one first-arrival
matrix ``F``, propagated until the repeated stack converges):

- the layers as runs of equal layers, a periodic pattern said once (Gemma 3: 5 windows
  then 1 global, repeated), recurrent layers said to enter as their dependency pattern,
  and a preset's note (the public configuration it follows);
- ``R(L) = A_L · … · A_1`` and the depth at which the flow of the *repeated* stack stops
  changing (``StackFlow.converged``), and whether that is within the model's own depth;
- how many layers until the last position first sees the first (or never);
- the receptive field per position (layers until it sees all it will ever see), as a
  table of position ranges with the same value and as a step plot (``--png``).

Everything here is O(n) per line printed: no n × n loop in Python, nothing n² printed.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from hasse.theory.stack import stack_ref

RECURRENT_NOTE = ("recurrent layers are not attention: each enters as its dependency pattern (its output at q "
                  "depends on exactly the inputs its recurrence reads) — linear attention and state-space layers "
                  "(the paper's future work) are exact this way")
CONVOLUTION_NOTE = ("convolution layers are not attention: each enters as its dependency pattern (its output at q "
                    "depends on exactly the K inputs its kernel reads, within the document where it is reset)")
RF_TABLE_LIMIT = 24  # rows of the receptive-field table before "… and K more"


def value_runs(values: Sequence[int]) -> list[tuple[int, int, int]]:
    """Maximal ranges of positions with the same value: ``(first, last, value)``, 0-based, inclusive.

    >>> value_runs([0, 1, 1, 1, 2, 2])
    [(0, 0, 0), (1, 3, 1), (4, 5, 2)]
    >>> value_runs([])
    []
    """
    v = np.asarray(values)
    if v.size == 0:
        return []
    starts = np.concatenate(([0], np.flatnonzero(np.diff(v)) + 1))
    ends = np.concatenate((starts[1:] - 1, [v.size - 1]))
    return [(int(a), int(b), int(v[a])) for a, b in zip(starts, ends)]


def period(stack) -> int:
    """The smallest ``p`` with layer ``i`` equal to layer ``i mod p`` (same spec and kind) for every layer.

    >>> from hasse.theory.inputs.stacks import build_stack
    >>> period(build_stack("gemma3:n=8,scale=512")), period(build_stack("causal x3", n=4))
    (6, 1)
    """
    keys = [(layer.spec, layer.kind) for layer in stack.layers]
    for p in range(1, len(keys) + 1):
        if all(keys[i] == keys[i % p] for i in range(p, len(keys))):
            return p
    return len(keys)


def kind_text(layer) -> str:
    """``attention``, or the recurrent or convolution layer's note (its dependency pattern, in words)."""
    if layer.kind not in ("recurrent", "convolution"):
        return layer.kind
    found = re.search(r"documents=([\d+]+)", layer.spec)
    reset = f", reset at each of {found[1].count('+') + 1} documents ({found[1]})" if found else ""
    if layer.kind == "convolution":
        found = re.search(r"width=(\d+)", layer.spec)
        width = found[1] if found else "K"
        return f"convolution: enters as its dependency pattern, the {width} positions q - {width} < k <= q{reset}"
    found = re.search(r"chunk=(\d+)", layer.spec)
    chunk = int(found[1]) if found else 0
    pattern = "causal" if chunk == 0 else f"causal within chunks of {chunk} (state reset at each chunk)"
    return f"recurrent: enters as its dependency pattern, {pattern}{reset}"


def _span(first: int, last: int) -> str:
    return f"layer {first}" if first == last else f"layers {first}-{last}"


def layer_lines(stack, indent: str = "  ") -> list[str]:
    """The layers as runs; a stack that repeats a shorter pattern shows the pattern once and says how often."""
    from hasse.views.tables import align

    p = period(stack)
    shown = stack.layers[:p]
    runs = []
    for first, last, layer in _runs(shown):
        runs.append((_span(first, last) + ":", f"{layer.spec} ({kind_text(layer)})"))
    lines = align(runs, indent=indent)
    if p < stack.depth:
        whole, rest = divmod(stack.depth, p)
        tail = f", then layers 1-{rest} of it" if rest > 1 else (", then layer 1 of it" if rest == 1 else "")
        lines.append(f"{indent}({_span(1, p)} repeated: {whole} times{tail}; {stack.depth} layers)")
    if any(layer.kind == "recurrent" for layer in shown):
        lines.append(f"{indent}{RECURRENT_NOTE}")
    if any(layer.kind == "convolution" for layer in shown):
        lines.append(f"{indent}{CONVOLUTION_NOTE}")
    return lines


def _runs(layers) -> list[tuple[int, int, object]]:
    out: list[tuple[int, int, object]] = []
    for i, layer in enumerate(layers, start=1):
        if out and (out[-1][2].spec, out[-1][2].kind) == (layer.spec, layer.kind):
            out[-1] = (out[-1][0], i, out[-1][2])
        else:
            out.append((i, i, layer))
    return out


def last_sees_first(flow) -> int | None:
    """Layers until the last position first depends on the first (0 for one position; None: never)."""
    return flow.first_sight(flow.n - 1, 0)


def stack_json(stack, flow, *, analysis: bool = False) -> dict:
    """The ``stack`` object of a command's JSON (docs/schema.json).

    Every command that runs a stack writes ``{spec, depth, converged_depth, note}``
    (``$defs/stack_ref``: what the stack is and after how many layers its repeated flow
    stops changing); ``hasse analyze`` (``analysis``) writes the analysis itself: the
    layers as runs, ``converged_depth`` and whether the model's own depth reaches it, when
    the last position first sees the first, and the receptive field per position.
    """
    converged = flow.converged
    if not analysis:
        return stack_ref(stack, flow)
    return {
        "spec": stack.spec,
        "note": stack.note,
        "depth": stack.depth,
        "layers": [{"first": a, "last": b, "spec": layer.spec, "kind": layer.kind} for a, b, layer in stack.runs()],
        "converged_depth": converged,
        "converged_by_model_depth": converged is not None and converged <= stack.depth,
        "last_sees_first": last_sees_first(flow),
        "receptive_field": flow.receptive_field().tolist(),
    }


def _layers(count: int | None) -> str:
    return "never" if count is None else f"after {count} layer{'' if count == 1 else 's'}"


def rf_table(rf: np.ndarray, *, ascii: bool = False, limit: int = RF_TABLE_LIMIT, indent: str = "  ") -> list[str]:
    """The receptive field as ranges of positions with the same value (capped at ``limit`` rows).

    >>> print("\\n".join(rf_table(np.array([0, 1, 1, 1, 2]))))
      positions  layers
              0       0
            1-3       1
              4       2
    """
    from hasse.views.tables import capped_table

    runs = value_runs(rf)
    return capped_table(runs, lambda r: (str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}", r[2]), limit,
                        header=("positions", "layers"), right=(0, 1), indent=indent, ascii=ascii,
                        more="ranges (use --json for every position)")


def _plural(count: int, word: str = "layer") -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def stack_lines(stack, flow=None, *, analysis: bool = False, blocks: int | None = None, ascii: bool = False,
                limit: int = 20) -> list[str]:
    """The report's lines on a stack, each starting with the stack, its depth and its note.

    By default (leak, flow, counterexample) one line: ``stack: SPEC (D layers; the repeated
    stack converges after K layers)``. ``analysis`` (hasse analyze): the layers as runs,
    R(L), the convergence against the model's depth, last-sees-first and the receptive
    field. ``blocks`` (gpu-check, no ``flow``): the layer each of the L blocks run, as runs
    of blocks (at most ``limit`` rows).
    """
    if blocks is not None:
        return _block_lines(stack, blocks, limit)
    if analysis:
        return _analysis_lines(stack, flow, ascii)
    converged = (f"the repeated stack converges after {_plural(flow.converged)}" if flow.converged is not None
                 else "not propagated to convergence")
    return [f"stack: {stack.spec} ({_plural(stack.depth)}; {converged})"] + ([f"  {stack.note}"] if stack.note else [])


def _analysis_lines(stack, flow, ascii: bool) -> list[str]:
    n, depth = stack.n, stack.depth
    lines = [f"stack {stack.spec}: n = {n} positions, {_plural(depth)} (first layer first)"]
    if stack.note:
        lines.append(f"  {stack.note}")
    lines += layer_lines(stack)
    dot = "." if ascii else "·"
    lines.append(f"R(L) = A_L {dot} ... {dot} A_1, A_i = I or M_i: output q depends on input k after L layers "
                 "iff R(L)[q, k]")
    converged = flow.converged
    if converged is None:
        lines.append(f"the flow had not stopped changing after {flow.computed} layers")
    else:
        verdict = (f"converged by the model's depth ({depth} layers)" if converged <= depth
                   else f"NOT converged by the model's depth ({depth} layers): {converged - depth} more needed")
        lines.append(f"convergence: with the stack repeated, the flow stops changing after {_plural(converged)}; "
                     f"{verdict}")
    seen = last_sees_first(flow)
    within = "" if seen is None or seen == 0 else (" (within the model's depth)" if seen <= depth
                                                   else f" (beyond the model's {depth} layers)")
    lines.append(f"the last position ({n - 1}) first sees the first (0) {_layers(seen)}{within}")
    rf = flow.receptive_field()
    lines.append(f"receptive field (layers until a position sees all it will ever see in the repeated stack; "
                 f"largest {int(rf.max())}):")
    lines += rf_table(rf, ascii=ascii)
    return lines


BLOCK_RUNS = {"attention": "attention: the backend on this mask",
              "recurrent": "recurrent: a gated linear recurrence by a scan, reset where its pattern says",
              "convolution": "convolution: the backend on its window mask (the same dependency)"}


def _block_lines(stack, layers: int, limit: int) -> list[str]:
    """Its depth, its note, and the layer each of the ``layers`` blocks runs (the stack cycled), as runs."""
    from hasse.views.tables import capped_rows

    head = f"stack of {stack.depth} layer(s)"
    if layers < stack.depth:
        head += f"; L = {layers} blocks run its first {layers}"
    elif layers > stack.depth:
        head += f"; L = {layers} blocks run it cycled"
    runs: list[list] = []
    for i in range(layers):
        layer = stack.layer(i)
        if runs and runs[-1][2] is layer:
            runs[-1][1] = i + 1
        else:
            runs.append([i + 1, i + 1, layer])

    def row(run) -> str:
        a, b, layer = run
        where = f"block {a}" if a == b else f"blocks {a}-{b}"
        return f"  {where:<14} {layer.spec}  ({BLOCK_RUNS[layer.kind]})"

    return [head + (f" ({stack.note})" if stack.note else "")] + capped_rows(runs, row, limit)

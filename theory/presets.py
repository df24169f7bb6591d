"""Model presets: the per-layer attention patterns of public model configurations, as stacks.

Each preset builds a :class:`~theory.stack.LayerStack` of the layer pattern a public
configuration declares, at ``n`` positions, with window and chunk sizes divided by
``scale`` (rounded down, at least 1) so that a small ``n`` keeps the model's shape, and
``layers`` layers (default: the cited model's depth). The sizes follow the
configuration classes of transformers 5.x (their defaults mirror the published
``config.json`` of the model named) and the model cards:

================  ==============================================================
``gemma2``        Gemma 2 (2B): 26 layers alternating sliding window / global, the
                  first sliding; ``sliding_window`` 4096 (``Gemma2Config``).
``gemma3``        Gemma 3 (4B): 34 layers, 5 sliding-window layers then 1 global
                  (layer ``i`` global iff ``(i + 1) % 6 == 0``); ``sliding_window``
                  1024 (Gemma 3 technical report; ``Gemma3TextConfig.layer_types``).
``llama4``        Llama 4 Scout: 48 layers, 3 chunked-attention layers then 1 global
                  (``no_rope_layers``); ``attention_chunk_size`` 8192 (``Llama4TextConfig``).
``gpt_oss``       gpt-oss-120b: 36 layers alternating banded window / full, the first
                  banded; ``sliding_window`` 128 (``GptOssConfig``). Its attention sinks
                  are a learned logit per head, not a position: no dependency.
``mistral``       Mistral 7B v0.1: 32 layers, all sliding window 4096 (``MistralConfig``).
``hybrid``        Jamba v0.1: 32 layers, attention every ``period`` = 8 layers at
                  ``offset`` = 4, Mamba (recurrent: causal) otherwise (``JambaConfig``).
``qwen3_next``    Qwen3-Next-80B-A3B: 48 layers, 3 Gated DeltaNet layers then 1 full
                  attention layer (``Qwen3NextConfig``: ``num_hidden_layers`` 48,
                  ``layer_types`` "linear_attention" unless ``(i + 1) %
                  full_attention_interval == 0``, interval 4;
                  ``linear_conv_kernel_dim`` 4).
``kimi_linear``   Kimi Linear 48B-A3B: 27 layers, KDA (Kimi Delta Attention) layers
                  with a full (MLA) attention layer at every ``i > 0`` with ``i % 4 == 0``
                  (``KimiLinearConfig``: ``num_hidden_layers`` 27, default
                  ``layer_types``; a checkpoint's ``linear_attn_config``
                  ``full_attn_layers`` (1-based) overrides it: ``full=A+B+…``;
                  ``linear_conv_kernel_dim`` 4).
================  ==============================================================

A Gated DeltaNet or KDA layer is a short causal convolution (kernel 4) then a delta-rule
recurrence: the convolution's window lies inside the causal prefix the recurrence reads,
so the layer enters as the recurrent pattern (causal, kind ``recurrent``); its full
attention layers are causal. With ``documents=A+B+…`` (packed documents, lengths adding
up to ``n``) every layer is restricted to the document, as a correct packed run is: the
attention layers by ``document:causal=true``, the linear ones by ``recurrent:documents``.

A sliding window of ``w`` means ``w`` keys, the query included (transformers'
``sliding_window_overlay``: ``kv_idx > q_idx - w``), the kit's ``sliding_window``.
"""

from __future__ import annotations

import re

from hasse.theory.errors import InputError
from hasse.theory.inputs.forms import form_of
from hasse.theory.masks import causal, chunked, document, sliding_window
from hasse.theory.limits import check_stack_layers
from hasse.theory.params import N, require_at_least, require_positive
from hasse.theory.spec import Entry, Param, get_entry, parse_spec, plus_joined, register
from hasse.theory.stack import LayerStack, StackLayer

SCALE = Param("scale", "int", default=1, help="divide window and chunk sizes by this (>= 1)")


def _layers_param(default: int) -> Param:
    return Param("layers", "int", default=default, help=f"number of layers (the model has {default})")


def _scaled(size: int, scale: int) -> int:
    return max(1, size // require_positive("scale", scale))


def _pattern(n: int, layers: int, local, is_global, spec: str, note: str) -> LayerStack:
    n = require_positive("n", n)
    layers = check_stack_layers(require_positive("layers", layers))  # before the layers are laid out
    full = StackLayer(causal.build(n).matrix, f"causal:n={n}")
    out = tuple(full if is_global(i) else local for i in range(layers))
    return LayerStack(out, spec, note)


def _window(n: int, w: int) -> StackLayer:
    named = sliding_window.build(n, w)
    return StackLayer(named.matrix, named.spec)


def gemma2(n: int, scale: int = 1, layers: int = 26) -> LayerStack:
    w = _scaled(4096, scale)
    return _pattern(n, layers, _window(n, w), lambda i: i % 2 == 1,
                    f"gemma2:n={n},scale={scale},layers={layers}",
                    f"Gemma 2 2B (Gemma2Config): sliding window {w} (4096/{scale}) and global layers alternating")


def gemma3(n: int, scale: int = 1, layers: int = 34) -> LayerStack:
    w = _scaled(1024, scale)
    return _pattern(n, layers, _window(n, w), lambda i: (i + 1) % 6 == 0,
                    f"gemma3:n={n},scale={scale},layers={layers}",
                    f"Gemma 3 4B: 5 sliding-window layers ({w} = 1024/{scale} keys) then 1 global")


def llama4(n: int, scale: int = 1, layers: int = 48) -> LayerStack:
    c = _scaled(8192, scale)
    named = chunked.build(n, c)
    return _pattern(n, layers, StackLayer(named.matrix, named.spec), lambda i: (i + 1) % 4 == 0,
                    f"llama4:n={n},scale={scale},layers={layers}",
                    f"Llama 4 Scout (Llama4TextConfig): 3 chunked layers (chunk {c} = 8192/{scale}) then 1 global")


def gpt_oss(n: int, scale: int = 1, layers: int = 36) -> LayerStack:
    w = _scaled(128, scale)
    return _pattern(n, layers, _window(n, w), lambda i: i % 2 == 1,
                    f"gpt_oss:n={n},scale={scale},layers={layers}",
                    f"gpt-oss-120b (GptOssConfig): banded window {w} (128/{scale}) and full layers alternating")


def mistral(n: int, scale: int = 1, layers: int = 32) -> LayerStack:
    w = _scaled(4096, scale)
    return _pattern(n, layers, _window(n, w), lambda i: False,
                    f"mistral:n={n},scale={scale},layers={layers}",
                    f"Mistral 7B v0.1 (MistralConfig): sliding window {w} (4096/{scale}) at every layer")


def hybrid(n: int, layers: int = 32, period: int = 8, offset: int = 4) -> LayerStack:
    period = require_positive("period", period)
    offset = require_at_least("offset", offset, 0, "the first attention layer's index")
    if offset >= period:
        from hasse.theory.errors import InputError

        raise InputError(f"offset = {offset} must be smaller than period = {period}")
    named = chunked.build_recurrent(require_positive("n", n))
    recurrent = StackLayer(named.matrix, named.spec, "recurrent")
    return _pattern(n, layers, recurrent, lambda i: i % period == offset,
                    f"hybrid:n={n},layers={layers},period={period},offset={offset}",
                    f"Jamba v0.1 (JambaConfig): attention every {period} layers at offset {offset}, "
                    "Mamba (recurrent, causal dependency) otherwise")


def _linear_hybrid(n: int, layers: int, documents, is_full, spec: str, note: str) -> LayerStack:
    """Linear-attention layers (recurrent: causal, reset at ``documents``) and full causal ones where ``is_full``."""
    n = require_positive("n", n)
    layers = check_stack_layers(require_positive("layers", layers))
    linear = chunked.build_recurrent(n, 0, documents)
    full = document.build(documents, causal=True) if documents else causal.build(n)
    rec, att = StackLayer(linear.matrix, linear.spec, "recurrent"), StackLayer(full.matrix, full.spec)
    if documents:
        spec += f",documents={plus_joined(documents)}"
        note += f"; every layer restricted to the documents {plus_joined(documents)}"
    return LayerStack(tuple(att if is_full(i) else rec for i in range(layers)), spec, note)


def qwen3_next(n: int, layers: int = 48, interval: int = 4, documents=()) -> LayerStack:
    interval = require_positive("interval", interval)
    return _linear_hybrid(n, layers, documents, lambda i: (i + 1) % interval == 0,
                          f"qwen3_next:n={n},layers={layers},interval={interval}",
                          f"Qwen3-Next (Qwen3NextConfig): {interval - 1} Gated DeltaNet layers (recurrent, causal) "
                          f"then 1 full attention layer (full_attention_interval {interval})")


def kimi_linear(n: int, layers: int = 27, full=(), documents=()) -> LayerStack:
    if not full:
        return _linear_hybrid(n, layers, documents, lambda i: i > 0 and i % 4 == 0,
                              f"kimi_linear:n={n},layers={layers}",
                              "Kimi Linear (KimiLinearConfig): KDA layers (recurrent, causal), full attention (MLA) "
                              "at every layer i > 0 with i % 4 == 0")
    layers = require_positive("layers", layers)
    for number in full:
        if not 1 <= number <= layers:
            raise InputError(f"full lists layer numbers 1 … {layers} (1-based, as full_attn_layers), got {number}")
    numbers = set(full)
    return _linear_hybrid(n, layers, documents, lambda i: i + 1 in numbers,
                          f"kimi_linear:n={n},layers={layers},full={plus_joined(full)}",
                          f"Kimi Linear (linear_attn_config): full attention (MLA) at layers {plus_joined(full)} "
                          "(1-based), KDA layers (recurrent, causal) otherwise")


_DOCUMENTS = Param("documents", "int_list", default=(),
                   help="packed documents, lengths adding up to n: every layer stays inside its document")

ENTRIES = (
    Entry("gemma2", "Gemma 2: sliding window 4096 and global layers alternating, 26 layers",
          (N, SCALE, _layers_param(26)), gemma2, kind="stack"),
    Entry("gemma3", "Gemma 3: 5 sliding-window (1024) layers then 1 global, 34 layers",
          (N, SCALE, _layers_param(34)), gemma3, kind="stack"),
    Entry("llama4", "Llama 4: 3 chunked (8192) layers then 1 global, 48 layers",
          (N, SCALE, _layers_param(48)), llama4, kind="stack"),
    Entry("gpt_oss", "gpt-oss: banded window 128 and full layers alternating, 36 layers",
          (N, SCALE, _layers_param(36)), gpt_oss, kind="stack"),
    Entry("mistral", "Mistral 7B: sliding window 4096 at every layer, 32 layers",
          (N, SCALE, _layers_param(32)), mistral, kind="stack"),
    Entry("hybrid", "Jamba-style hybrid: attention every 8th layer, recurrent (causal) otherwise, 32 layers",
          (N, _layers_param(32), Param("period", "int", default=8, help="one attention layer per period"),
           Param("offset", "int", default=4, help="index of the attention layer within each period")),
          hybrid, kind="stack"),
    Entry("qwen3_next", "Qwen3-Next: 3 Gated DeltaNet (recurrent, causal) layers then 1 full attention, 48 layers",
          (N, _layers_param(48), Param("interval", "int", default=4, help="full_attention_interval: one full "
                                       "attention layer per interval, the last of it"), _DOCUMENTS),
          qwen3_next, kind="stack"),
    Entry("kimi_linear", "Kimi Linear: KDA (recurrent, causal) layers, full attention at layers 4, 8, …, 24 "
          "(0-based), 27 layers", (N, _layers_param(27),
          Param("full", "int_list", default=(), help="full attention layers, 1-based, as a checkpoint's "
                "linear_attn_config full_attn_layers (default: KimiLinearConfig's)"), _DOCUMENTS),
          kimi_linear, kind="stack"),
)

for _entry in ENTRIES:  # registered here, once; theory.catalog imports this module after the tasks
    register(_entry)
del _entry


REPEATED_LAYER = re.compile(r"\s[x×]\s*\d+\s*(,|$)")  # "causal x2": a layer repeated, in a list of layers


def names_a_preset(text) -> bool:
    """Whether ``text`` names a model preset (``gemma3:n=4096``): a whole stack, not one mask or a list of layers.

    The one predicate (:func:`theory.inputs.read.kind_of` asks it).

    >>> names_a_preset("gemma3:n=64"), names_a_preset("causal:n=4"), names_a_preset("mask.npy")
    (True, False, False)
    >>> names_a_preset("gemma3:n=64; causal"), names_a_preset(None)
    (False, False)
    """
    if not isinstance(text, str) or not text.strip() or ";" in text or REPEATED_LAYER.search(text):
        return False
    if form_of(text) != "spec":
        return False
    try:
        get_entry(parse_spec(text)[0].strip(), "stack")
    except InputError:
        return False
    return True

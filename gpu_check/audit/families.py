"""The hybrid families of ``hasse audit`` (linear attention, scans, convolutions) and each layer's intended kind.

Pure Python on configuration objects: nothing here imports transformers or torch
(:mod:`gpu_check.audit.models` builds the models). Each family of :data:`HYBRIDS`
is ``(configuration class, small fields, layer fields)``: the small fields fit the
kit's sizes (hidden 64, heads of 16, state 16, scan chunks of :data:`SCAN_CHUNK`
so that the state passes between chunks at a dozen positions); the layer fields
give ``layers`` layers that cycle through the family's kinds, so that a 2-layer
model has both (Qwen3-Next ``linear_attention, full_attention``; LFM2 ``conv,
full_attention``; Jamba attention in layer 1; ...).

:func:`pattern_of` reads a configuration's per-layer kinds, the contract's
``(kind, size)``: ``full``, ``sliding`` (w), ``chunked`` (c), ``recurrent`` (linear
attention, a state-space scan, RG-LRU, RWKV time mix), ``conv`` (K: only a short
causal convolution mixes tokens, LFM2) and ``none`` (an MLP or MoE only layer).
A layer with attention and a scan side by side (Falcon-H1, Zamba 2 ``hybrid``) is
its attention's kind.
"""

from __future__ import annotations

SCAN_CHUNK = 4  # the SSD chunk of the Mamba-2 families: smaller than the audited documents
WINDOW = 4  # sliding window of the windowed families (the same as models.WINDOW)
MAMBA2 = {"mamba_n_heads": 8, "mamba_d_head": 16, "mamba_d_state": 16, "mamba_n_groups": 1, "mamba_d_conv": 4,
          "mamba_expand": 2, "mamba_chunk_size": SCAN_CHUNK}

HYBRIDS = {  # short name -> (configuration class, small fields, (layer field, cycle of kinds) or None)
    "qwen3_next": ("Qwen3NextConfig", {
        "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16,
        "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4, "num_experts": 2, "moe_intermediate_size": 64,
        "shared_expert_intermediate_size": 64}, ("layer_types", ("linear_attention", "full_attention"))),
    "kimi_linear": ("KimiLinearConfig", {
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "num_key_value_heads": 4, "kv_lora_rank": 16,
        "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16, "linear_head_dim": 16, "linear_num_heads": 4,
        "linear_conv_kernel_dim": 4, "moe_intermediate_size": 64, "num_experts": 2},
        ("layer_types", ("linear_attention", "full_attention"))),
    "lfm2": ("Lfm2Config", {"conv_L_cache": 3, "block_multiple_of": 16}, ("layer_types", ("conv", "full_attention"))),
    "mamba2": ("Mamba2Config", {"num_heads": 8, "head_dim": 16, "expand": 2, "n_groups": 1, "state_size": 16,
                                "conv_kernel": 4, "chunk_size": SCAN_CHUNK, "pad_token_id": 0, "bos_token_id": 1,
                                "eos_token_id": 2}, None),
    "jamba": ("JambaConfig", {"attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2,
                              "expert_layer_offset": 1, "num_experts": 2, "mamba_d_state": 16, "mamba_d_conv": 4,
                              "mamba_expand": 2, "use_mamba_kernels": False}, None),
    "bamba": ("BambaConfig", dict(MAMBA2), ("attn_layer_indices", (False, True))),
    "falcon_h1": ("FalconH1Config", {**MAMBA2, "mamba_d_ssm": 128}, None),
    "granitemoehybrid": ("GraniteMoeHybridConfig", {**MAMBA2, "shared_intermediate_size": 64},
                         ("layer_types", ("linear_attention", "full_attention"))),
    "nemotron_h": ("NemotronHConfig", {
        "mamba_num_heads": 8, "mamba_head_dim": 16, "n_groups": 1, "ssm_state_size": 16, "conv_kernel": 4,
        "chunk_size": SCAN_CHUNK, "n_routed_experts": 2, "moe_intermediate_size": 64,
        "moe_shared_expert_intermediate_size": 64, "use_mamba_kernels": False},
        ("layers_block_type", ("linear_attention", "full_attention", "mlp"))),
    "zamba2": ("Zamba2Config", {"n_mamba_heads": 8, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
                                "mamba_ngroups": 1, "chunk_size": SCAN_CHUNK, "adapter_rank": 8,
                                "use_mamba_kernels": False}, ("layers_block_type", ("linear_attention", "hybrid"))),
    "recurrent_gemma": ("RecurrentGemmaConfig", {"lru_width": 64, "sliding_window": WINDOW, "conv1d_width": 4},
                        ("block_types", ("recurrent", "attention"))),
    "rwkv": ("RwkvConfig", {"attention_hidden_size": 64, "context_length": 128}, None),
}

RECURRENT_MODELS = ("rwkv", "xlstm", "mamba", "mamba2")  # every layer a scan, whatever the configuration says
KINDS = {  # a configuration's layer type -> the contract's kind (sizes read by pattern_of)
    "full_attention": "full", "attention": "full", "global": "full", "hybrid": "full",
    "sliding_attention": "sliding", "hybrid_sliding": "sliding", "local": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "recurrent", "mamba": "recurrent", "mamba2": "recurrent", "recurrent": "recurrent",
    "conv": "conv",
    "moe": "none", "mlp": "none",
}
NEMOTRON_SYMBOLS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
LAYER_FIELDS = ("layer_types", "layers_block_type", "block_types")


def layer_fields(name: str, layers: int) -> dict:
    """The configuration fields that give family ``name`` ``layers`` layers cycling through its kinds.

    >>> layer_fields("lfm2", 3)
    {'layer_types': ['conv', 'full_attention', 'conv']}
    >>> layer_fields("bamba", 4)
    {'attn_layer_indices': [1, 3]}
    >>> layer_fields("rwkv", 2)
    {}
    """
    field = HYBRIDS[name][2] if name in HYBRIDS else None
    if field is None:
        return {}
    key, cycle = field
    kinds = [cycle[i % len(cycle)] for i in range(layers)]
    if key == "attn_layer_indices":
        return {key: [i for i, on in enumerate(kinds) if on]}
    return {key: kinds}


def truncate_layers(base: dict, layers: int) -> dict:
    """A config.json's per-layer fields cut to the first ``layers`` layers (the model is built with that many).

    >>> truncate_layers({"hybrid_override_pattern": "M*M-E", "attn_layer_indices": [1, 4]}, 3)
    {'hybrid_override_pattern': 'M*M', 'attn_layer_indices': [1]}
    >>> truncate_layers({"linear_attn_config": {"kda_layers": [1, 3], "full_attn_layers": [2, 4]}}, 2)
    {'linear_attn_config': {'kda_layers': [1], 'full_attn_layers': [2]}}
    """
    out = dict(base)
    for key in LAYER_FIELDS + ("hybrid_override_pattern", "mlp_layer_types"):
        if isinstance(out.get(key), (list, str)) and key != "block_types":  # block_types repeat by design
            out[key] = out[key][:layers]
    if isinstance(out.get("attn_layer_indices"), list):
        out["attn_layer_indices"] = [i for i in out["attn_layer_indices"] if isinstance(i, int) and i < layers]
    linear = out.get("linear_attn_config")
    if isinstance(linear, dict):  # Kimi Linear: 1-based layer numbers
        out["linear_attn_config"] = {k: [i for i in v if isinstance(i, int) and i <= layers]
                                     if k in ("kda_layers", "full_attn_layers") and isinstance(v, list) else v
                                     for k, v in linear.items()}
    return out


def _types(config, layers: int) -> list | None:
    """The configuration's per-layer type names (first of layer_types, layers_block_type, block_types)."""
    for key in LAYER_FIELDS:
        try:
            value = getattr(config, key, None)
        except (AttributeError, TypeError, ValueError):  # a property that cannot answer
            value = None
        if value:
            names = list(value)
            if key == "block_types":  # RecurrentGemma: the block types repeat
                names = (names * (layers // len(names) + 1))[:layers]
            return names[:layers]
    pattern = getattr(config, "hybrid_override_pattern", None)
    if isinstance(pattern, str) and pattern:
        return [NEMOTRON_SYMBOLS.get(s, s) for s in pattern[:layers]]
    return None


def conv_width(config) -> int | None:
    """The short convolution's kernel size (keys, self included) the configuration gives, if any.

    >>> class C: conv_L_cache = 3
    >>> conv_width(C())
    3
    """
    for key in ("conv_L_cache", "linear_conv_kernel_dim", "conv_kernel", "mamba_d_conv", "conv1d_width", "d_conv"):
        value = getattr(config, key, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def pattern_of(config, layers: int, window, chunk) -> list[tuple[str, int | None]] | None:
    """``(kind, size)`` per layer from the configuration's layer types, or None when it has none.

    ``window`` / ``chunk``: the configuration's sliding window and attention chunk.
    A name this table does not know is ``full`` (attention), as before.

    >>> class Lfm2: model_type, layer_types, conv_L_cache = "lfm2", ["conv", "full_attention"], 3
    >>> pattern_of(Lfm2(), 2, None, None)
    [('conv', 3), ('full', None)]
    >>> class Nemo: model_type, hybrid_override_pattern = "nemotron_h", "M*-"
    >>> pattern_of(Nemo(), 3, None, None)
    [('recurrent', None), ('full', None), ('none', None)]
    """
    if getattr(config, "model_type", "") in RECURRENT_MODELS:
        return [("recurrent", None)] * layers
    names = _types(config, layers)
    if not names:
        return None
    if getattr(config, "model_type", "") == "bamba":  # its layer_types may not follow attn_layer_indices
        indices = getattr(config, "attn_layer_indices", None) or ()
        names = ["full_attention" if i in indices else "linear_attention" for i in range(layers)]
    out = []
    for name in names:
        kind = KINDS.get(str(name), "full")
        size = {"sliding": window, "chunked": chunk, "conv": conv_width(config)}.get(kind)
        out.append((kind, size))
    return out

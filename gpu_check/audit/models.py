"""Small transformers models with seeded random weights, built locally from a configuration.

transformers is imported here (and in :mod:`gpu_check.audit`) only, inside the
functions that need it; nothing is ever downloaded (``HF_HUB_OFFLINE=1`` is set
before the import, and only ``from_config`` is called, never ``from_pretrained``).

A model is named by a family (``llama``, ``mistral``, ``gemma2``, ``gemma3``,
``qwen2``, ``qwen3``, ``gpt_oss``, ``llama4``, ``bert``, ``xlnet``; the hybrids of
:mod:`gpu_check.audit.families`: ``qwen3_next``, ``kimi_linear``, ``lfm2``, ``mamba2``,
``jamba``, ``bamba``, ``falcon_h1``, ``granitemoehybrid``, ``nemotron_h``, ``zamba2``,
``recurrent_gemma``, ``rwkv``, each with both of its layer kinds in 2 layers), by a
configuration class (``transformers:MistralConfig``) or by a local ``config.json``.
Each gets the same small sizes (:data:`SMALL`: hidden size 64, 4 heads of 16, 2 KV
heads, MLP 128, vocabulary 32) wherever the configuration has the field, ``layers``
layers, and a window / chunk small enough to matter at a dozen positions
(:data:`WINDOW`, :data:`CHUNK`).

The layer pattern (:func:`layer_pattern`) is read from the configuration the model
was built from: ``layer_types`` / ``layers_block_type`` / ``block_types`` /
``hybrid_override_pattern`` / ``attn_layer_indices`` (attention, sliding, chunked,
scans and linear attention, convolutions, MLP-only layers:
:func:`gpu_check.audit.families.pattern_of`) where it has them, else a sliding window on
every layer when ``sliding_window`` is set (Mistral), else full attention. Which
families do not build or run here, with the library's reason: :func:`unavailable_families`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from hasse.gpu_check.audit.families import HYBRIDS, layer_fields, pattern_of, truncate_layers
from hasse.theory.errors import InputError
from hasse.theory.inputs.json_file import json_kind, parse_json, read_json

INSTALL = "pip install 'hasse-attention[hf]'"
WINDOW = 4  # default sliding window (keys, self included) of the windowed families
CHUNK = 4  # default Llama 4 attention chunk
SMALL = {  # field -> value, set wherever a configuration has the field
    "hidden_size": 64, "intermediate_size": 128, "intermediate_size_mlp": 128, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 32, "num_local_experts": 2,
    "num_experts_per_tok": 1, "d_model": 64, "d_inner": 128, "n_head": 4,
}
FAMILIES = {  # short name -> (configuration class, family-specific fields)
    "llama": ("LlamaConfig", {}),
    "mistral": ("MistralConfig", {"sliding_window": WINDOW}),
    "gemma2": ("Gemma2Config", {"sliding_window": WINDOW}),
    "gemma3": ("Gemma3TextConfig", {"sliding_window": WINDOW}),
    "qwen2": ("Qwen2Config", {}),
    "qwen3": ("Qwen3Config", {}),
    "gpt_oss": ("GptOssConfig", {"sliding_window": WINDOW}),
    "llama4": ("Llama4TextConfig", {"attention_chunk_size": CHUNK}),
    "bert": ("BertConfig", {}),
    "xlnet": ("XLNetConfig", {}),
    **{name: (cls, small) for name, (cls, small, _) in HYBRIDS.items()},  # linear attention, scans, convolutions
}
ENCODERS = ("bert", "roberta", "xlnet", "distilbert", "electra", "albert", "deberta", "deberta-v2")
BACKENDS = ("eager", "sdpa", "flex_attention")


def has_transformers() -> bool:
    """True when ``import transformers`` can find the package (it is not imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def needs_transformers(what: str = "audit") -> str:
    """The one-line message when the ``hf`` extra is missing.

    >>> needs_transformers()
    "audit needs transformers; install the extra: pip install 'hasse-attention[hf]'"
    """
    return f"{what} needs transformers; install the extra: {INSTALL}"


def import_transformers():
    """``transformers``, imported offline; InputError naming the extra when it is missing."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    try:
        import transformers
    except ImportError:
        raise InputError(needs_transformers()) from None
    transformers.logging.set_verbosity_error()
    return transformers


@dataclass(frozen=True)
class ModelSpec:
    """What to build: a configuration class or file, and the sizes."""

    name: str  # family short name, "transformers:Class", or a config.json path
    layers: int = 2
    window: int | None = None  # sliding window (None: the family default)
    chunk: int | None = None  # Llama 4 attention chunk (None: the family default)
    max_positions: int = 128
    overrides: tuple = ()  # (field, value) pairs set last (--set), e.g. ("use_sliding_window", True)


def small_config(spec: ModelSpec):
    """The transformers configuration of ``spec``, scaled down (:data:`SMALL`) with ``spec.layers`` layers."""
    transformers = import_transformers()
    if spec.layers < 1:
        raise InputError(f"--layers must be >= 1, got {spec.layers}", "--layers")
    fields = dict(SMALL)
    if spec.name in FAMILIES:
        class_name, extra = FAMILIES[spec.name]
        fields.update(extra)
        cls = getattr(transformers, class_name)
        base = {}
    elif spec.name.startswith("transformers:"):
        class_name = spec.name.split(":", 1)[1]
        cls = getattr(transformers, class_name, None)
        if cls is None or not class_name.endswith("Config"):
            raise InputError(f"transformers {transformers.__version__} has no configuration class {class_name!r}",
                             spec.name)
        base = {}
    elif spec.name.endswith(".json") or os.path.isdir(spec.name):
        path = os.path.join(spec.name, "config.json") if os.path.isdir(spec.name) else spec.name
        base = read_json(path)  # a regular file only (a FIFO never blocks), nesting and integers bounded
        if not isinstance(base, dict) or "model_type" not in base:
            raise InputError("a config.json needs a \"model_type\" field", path)
        if not isinstance(base["model_type"], str):
            raise InputError(f'"model_type" must be a string, got {json_kind(base["model_type"])}', path)
        try:
            cls = transformers.AutoConfig.for_model(base["model_type"]).__class__
        except ValueError as exc:
            raise InputError(str(exc).splitlines()[0], path) from None
        base = {k: v for k, v in base.items() if k not in ("model_type", "transformers_version", "architectures")}
    else:
        raise InputError(f"unknown model {spec.name!r}: a family ({', '.join(FAMILIES)}), "
                         "transformers:SomeConfig or a config.json", "--model")
    probe = cls()
    for key, value in base.items():
        check_field(probe, key, value, spec.name, known=False)
    for key, value in spec.overrides:
        check_field(probe, key, value, "--set")
    fields.update({"num_hidden_layers": spec.layers, "n_layer": spec.layers,
                   "max_position_embeddings": max(spec.max_positions, 128)})
    if spec.window is not None:
        fields["sliding_window"] = spec.window
    if spec.chunk is not None:
        fields["attention_chunk_size"] = spec.chunk
    base = truncate_layers(base, spec.layers)  # layer_types, layers_block_type, hybrid_override_pattern, ...
    if spec.name in HYBRIDS:
        fields.update(layer_fields(spec.name, spec.layers))  # both kinds of the family in 2 layers
    merged = {**base, **{k: v for k, v in fields.items() if hasattr(probe, k)}, **dict(spec.overrides)}
    if merged.get("head_dim") and merged.get("hidden_size"):
        merged["head_dim"] = merged["hidden_size"] // merged.get("num_attention_heads", 4)
    if getattr(cls, "model_type", "") == "xlnet":  # no sequence length limit: the field refuses any value
        merged.pop("max_position_embeddings", None)
    try:
        return cls(**merged)
    except (TypeError, ValueError, NotImplementedError) as exc:
        raise InputError(f"cannot build {cls.__name__} ({str(exc).splitlines()[0]})", spec.name) from None


MAX_SIZE = 4096  # a size field (hidden size, heads, MLP, vocabulary) set by --set or a config.json
OWN_OPTIONS = {"num_hidden_layers": "--layers", "n_layer": "--layers", "sliding_window": "--window",
               "attention_chunk_size": "--chunk"}


def check_field(probe, key: str, value, source: str, known: bool = True) -> None:
    """:class:`InputError` unless ``value`` can stand for configuration field ``key`` (``probe``: a default config).

    A field whose default is a number takes a number (or null), a boolean field a
    boolean (or null). ``--set`` (``known``) names fields the configuration has, never
    one that has its own option (``--layers``, ``--window``, ``--chunk``), and sets a
    size of :data:`SMALL` to an integer in 1 … :data:`MAX_SIZE` (the model is built for
    real); a config.json's own sizes are replaced by :data:`SMALL` anyway.

    >>> class Probe: hidden_size, use_cache, hidden_act = 4096, True, "silu"
    >>> check_field(Probe(), "hidden_act", "gelu", "--set")
    >>> check_field(Probe(), "use_cache", "abc", "--set")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --set: use_cache must be true or false (its default is True), got 'abc'
    >>> check_field(Probe(), "hidden_size", 10 ** 9, "--set")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --set: hidden_size must be an integer in 1 … 4096 (the model is built for real), got 1000000000
    """
    if known and key in OWN_OPTIONS:
        raise InputError(f"{key} is set by {OWN_OPTIONS[key]}, not --set", source)
    if known and not hasattr(probe, key):
        raise InputError(f"{type(probe).__name__} has no field {key!r}", source)
    default = getattr(probe, key, None)
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:60] + " …"
    if known and key in SMALL and (type(value) is not int or not 1 <= value <= MAX_SIZE):
        raise InputError(f"{key} must be an integer in 1 … {MAX_SIZE} (the model is built for real), got {shown}",
                         source)
    if value is None:
        return
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise InputError(f"{key} must be true or false (its default is {default}), got {shown}", source)
    elif isinstance(default, (int, float)) and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise InputError(f"{key} must be a number (its default is {default!r}), got {shown}", source)


def first_sentence(text: str) -> str:
    """The first line of ``text``, up to its first full stop (library messages run on).

    >>> first_sentence("X does not support sdpa yet. Please request it.\\nmore")
    'X does not support sdpa yet'
    """
    return text.strip().splitlines()[0].split(". ")[0] if text.strip() else text


def parse_override(text: str) -> tuple[str, object]:
    """``"key=value"`` -> ``(key, value)``, the value read as JSON when it is JSON (numbers, true, lists), else text.

    >>> parse_override("use_sliding_window=true"), parse_override("max_window_layers=1")
    (('use_sliding_window', True), ('max_window_layers', 1))
    >>> parse_override("hidden_act=silu")
    ('hidden_act', 'silu')
    """
    key, sep, value = str(text).partition("=")
    if not sep or not key.isidentifier():
        shown = repr(text) if len(str(text)) <= 60 else repr(str(text)[:60]) + " …"
        raise InputError(f"expected FIELD=VALUE (a configuration field), got {shown}", "--set")
    try:
        json.loads(value)
    except json.JSONDecodeError:
        return key, value  # not JSON: text
    except (RecursionError, ValueError):
        pass  # JSON too deep, or an integer beyond Python's digit limit: refused in one line below
    return key, parse_json(value, f"--set {key}")


def is_encoder(config) -> bool:
    """True for bidirectional encoders (BERT-like, XLNet): every non-pad token sees every other."""
    return getattr(config, "model_type", "") in ENCODERS


def layer_pattern(config) -> list[tuple[str, int | None]]:
    """``(kind, size)`` per layer: ``("sliding", w)``, ``("chunked", c)``, ``("full", None)``, and for the
    hybrids (:mod:`gpu_check.audit.families`) ``("recurrent", None)``, ``("conv", K)``, ``("none", None)``."""
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer")
    window = getattr(config, "sliding_window", None)
    pattern = pattern_of(config, layers, window, getattr(config, "attention_chunk_size", None))
    if pattern:
        return pattern
    if window is not None and not is_encoder(config):
        return [("sliding", window)] * layers
    return [("full", None)] * layers


def pattern_text(pattern) -> str:
    """``sliding(w=4) x1, full x1`` (runs of equal layers; a convolution's width is K).

    >>> pattern_text([("sliding", 4), ("sliding", 4), ("full", None)])
    'sliding(w=4) x2, full x1'
    >>> pattern_text([("conv", 3), ("recurrent", None), ("none", None)])
    'conv(K=3) x1, recurrent x1, none x1'
    """
    runs: list[list] = []
    for kind, size in pattern:
        label = kind if size is None else f"{kind}({ {'sliding': 'w', 'conv': 'K'}.get(kind, 'c')}={size})"
        if runs and runs[-1][0] == label:
            runs[-1][1] += 1
        else:
            runs.append([label, 1])
    return ", ".join(f"{label} x{count}" for label, count in runs)


def build_model(config, backend: str, seed: int, dtype: str = "auto"):
    """``(model, dtype name)``: ``AutoModel.from_config`` with seeded weights, in eval mode (no dropout).

    ``dtype`` ``"auto"`` is float64 where one forward pass runs in it, else float32. The
    mixtures of experts are built with ``experts_implementation="eager"``, whose loop runs
    in float64 (the grouped-matmul kernel refuses it). Raises InputError when the
    configuration has no such attention implementation.
    """
    import copy

    import torch

    transformers = import_transformers()
    torch.manual_seed(seed)
    try:
        # experts_implementation="eager": the mixtures of experts' plain loop, which runs in float64 (the grouped
        # matmul kernel refuses it); a model without experts ignores it
        model = transformers.AutoModel.from_config(copy.deepcopy(config), attn_implementation=backend,
                                                   experts_implementation="eager")
    except (ValueError, ImportError) as exc:
        raise InputError(f"{type(config).__name__} has no {backend} attention here ({first_sentence(str(exc))})",
                         "--backend") from None
    model.eval()
    for name in (("float64", "float32") if dtype == "auto" else (dtype,)):
        model = model.to(getattr(torch, name))
        if dtype != "auto" or runs_in(model, getattr(torch, name)):
            return model, name
    return model, "float32"


def runs_in(model, dtype) -> bool:
    """True when one forward pass of 3 positions runs in ``dtype`` (forward only)."""
    import torch

    width = model.get_input_embeddings().weight.shape[1]
    try:
        with torch.no_grad():
            model(inputs_embeds=torch.zeros(1, 3, width, dtype=dtype))
    except RuntimeError:
        return False
    return True


def unavailable_families(names=None) -> dict[str, str]:
    """``{family: reason}`` for the families (default: every one of :data:`FAMILIES`) that do not build or run here.

    Each is built small (eager, seed 0) and run forward once on 3 positions, now (never a
    list written by hand); the reason is the library's, its first sentence.
    """
    import torch

    out = {}
    for name in FAMILIES if names is None else names:
        try:
            model, dtype = build_model(small_config(ModelSpec(name)), "eager", 0)
            width = model.get_input_embeddings().weight.shape[1]
            with torch.no_grad():
                model(inputs_embeds=torch.zeros(1, 3, width, dtype=getattr(torch, dtype)))
        except Exception as exc:  # noqa: BLE001 - whatever the library raises is the family's reason
            out[name] = f"{type(exc).__name__}: {first_sentence(str(exc))}"
    return out

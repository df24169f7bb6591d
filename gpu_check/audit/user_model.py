"""The user's own model for ``hasse audit``: a ``file.py:build`` module, a local checkpoint, as an engine Subject.

- :func:`load_model_source` -- ``file.py:build`` or ``file.py:build(k=v)`` (literal
  arguments, :mod:`theory.inputs.calls`): ``build`` returns an ``nn.Module``, or
  ``(module, batch)`` with ``batch`` a dict of the model's keyword arguments. The file
  is the user's code: it runs only with ``trust_code`` (``--trust-code``), first in a
  bounded child and then here (:func:`theory.user_code.run_here`: the module cannot
  leave the child); anything it raises is one line naming the user's line;
- :func:`is_checkpoint` / :func:`load_checkpoint` -- a local directory holding
  ``config.json`` and weights (``*.safetensors``, ``pytorch_model*.bin``), loaded with
  ``from_pretrained(dir, local_files_only=True)`` offline, in eval mode: the user's
  weights (a directory with a ``config.json`` only is a configuration: models.py builds it small);
- :func:`subject_for_module` / :func:`subject_for_checkpoint` -- the
  :class:`~gpu_check.audit.engine.Subject` the engine audits: one fixed module, the
  measured leaf replacing the input embedding module's output (``input_ids`` in the
  batch, ``inputs="hook"``) or passed as ``inputs_embeds``; the layout from the batch
  (:func:`gpu_check.audit.batch.layout_of_batch`).
"""

from __future__ import annotations

import copy
import glob
import os

import torch

from hasse.gpu_check.audit.batch import layout_of_batch, normalize_batch
from hasse.theory.errors import InputError, clip

TRUST = ("running a model file needs --trust-code (trust_code=True in the API): the file is Python code and runs "
         "with your permissions; nothing was run")
WEIGHTS = ("*.safetensors", "pytorch_model*.bin", "model*.bin")


def load_model_source(text: str, trust_code: bool, source: str = "--model"):
    """``(module, batch or None)`` that ``file.py:build`` (or ``file.py:build(k=v)``) returns (module docstring)."""
    from hasse.theory.inputs.calls import parse_call, split_function
    from hasse.theory.inputs.user_files import import_function
    from hasse.theory.user_code import TRUSTED, raised, run_here

    found = split_function(str(text))
    if found is None:
        raise InputError(f"expected file.py:build or file.py:build(k=v), got {clip(str(text), 60)!r}", source)
    path, call = found
    if not trust_code:
        raise InputError(TRUST, text)
    if not os.path.isfile(path):
        raise InputError("no such file", path)
    name, args, kwargs = parse_call(call, text) if "(" in call else (call, (), {})  # before the file runs

    def build():
        fn = import_function(path, name, text, TRUSTED)
        try:
            made = fn(*args, **kwargs)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code: one line at the user's line
            raise InputError(raised(call, exc, path), text) from None
        return _checked(made, call, text)

    module, batch = run_here(build, source=text, what=call, path=path)
    return module, batch


def _checked(made, call: str, source: str):
    """``(module, batch or None)`` of what build returned, or one line saying what it returned instead."""
    batch = None
    if isinstance(made, (tuple, list)) and len(made) == 2 and isinstance(made[0], torch.nn.Module):
        made, batch = made
        if not isinstance(batch, dict) and not (hasattr(batch, "keys") and hasattr(batch, "__getitem__")):
            raise InputError(f"{call} returned (module, {type(batch).__name__}); the batch must be a dict of the "
                             "model's keyword arguments (input_ids, position_ids, attention_mask, …)", source)
        batch = dict(batch)
    if not isinstance(made, torch.nn.Module):
        shown = clip(repr(made), 40)
        raise InputError(f"{call} returned {type(made).__name__} ({shown}), not an nn.Module or (module, batch)",
                         source)
    return made, batch


def is_checkpoint(path) -> bool:
    """True for a local directory with a ``config.json`` and weights (a config-only directory is a configuration)."""
    path = str(path)
    return (os.path.isdir(path) and os.path.isfile(os.path.join(path, "config.json"))
            and any(glob.glob(os.path.join(path, pattern)) for pattern in WEIGHTS))


def load_checkpoint(path: str, backend: str | None = None, dtype: str = "auto"):
    """The model of checkpoint directory ``path`` with its own weights, offline, in eval mode (``dtype`` as build_model)."""
    from hasse.gpu_check.audit.models import first_sentence, import_transformers, runs_in

    transformers = import_transformers()  # sets HF_HUB_OFFLINE
    if not is_checkpoint(path):
        raise InputError("not a checkpoint directory (config.json and *.safetensors or pytorch_model.bin)", path)
    extra = {} if backend is None else {"attn_implementation": backend}
    try:
        model = transformers.AutoModel.from_pretrained(path, local_files_only=True, **extra)
    except (OSError, ValueError, ImportError, KeyError, RuntimeError, TypeError) as exc:
        raise InputError(f"cannot load the checkpoint ({type(exc).__name__}: {first_sentence(str(exc))[:200]})",
                         path) from None
    model.eval()
    for name in (("float64", "float32") if dtype == "auto" else (dtype,)):
        model = model.to(getattr(torch, name))
        if dtype != "auto" or runs_in(model, getattr(torch, name)):
            return model
    return model.to(torch.float32)


def vocabulary(model: torch.nn.Module) -> int | None:
    """The number of token ids the model's input embedding takes (None: no embedding module)."""
    from hasse.gpu_check.audit.trace import input_embedding

    try:
        found = input_embedding(model)
    except InputError:
        return None
    size = getattr(found, "num_embeddings", None)
    if size is None and isinstance(getattr(found, "weight", None), torch.Tensor):
        size = found.weight.shape[0]
    return int(size) if size is not None else None


def _dtype_of(model: torch.nn.Module) -> str:
    first = next((p for p in model.parameters() if p.is_floating_point()), None)
    return "float64" if first is not None and first.dtype == torch.float64 else "float32"


def built_for_module(model: torch.nn.Module, batch: dict, source: str = "--batch"):
    """The engine's :class:`Built` of ``model`` and one normalized row ``batch`` (see :func:`subject_for_module`)."""
    from hasse.gpu_check.audit.engine import Built

    if not isinstance(model, torch.nn.Module):
        raise InputError(f"the model must be an nn.Module, got {type(model).__name__}", "--model")
    model.eval()  # dropout off: the measured flow is the forward pass's
    first = next((p for p in model.parameters() if p.is_floating_point()), None)
    if first is not None and first.dtype not in (torch.float32, torch.float64):
        model = copy.deepcopy(model).to(torch.float32)  # half precision: measured in float32 (the user's module stays)
    dtype = _dtype_of(model)
    batch = dict(batch)
    if "input_ids" in batch:
        from hasse.gpu_check.audit.trace import input_embedding

        embed = input_embedding(model)  # the module the engine's hook replaces (InputError: none)
        vocab = vocabulary(model)
        ids = batch["input_ids"]
        if vocab is not None and int(ids.max()) >= vocab:
            raise InputError(f"input_ids go up to {int(ids.max())}, but the model's embedding has {vocab} tokens",
                             source)
        with torch.no_grad():
            embedding = embed(ids)
        if not isinstance(embedding, torch.Tensor) or embedding.dim() != 3 or embedding.shape[:2] != ids.shape:
            raise InputError(f"the input embedding {type(embed).__name__} does not give (batch, positions, width)",
                             source)
        return Built(model, dtype, batch, "hook", embedding.detach().to(getattr(torch, dtype)))
    if "inputs_embeds" in batch:
        embedding = batch.pop("inputs_embeds").to(getattr(torch, dtype))
        return Built(model, dtype, batch, "inputs_embeds", embedding)
    raise InputError("the batch needs input_ids or inputs_embeds", source)


def subject_for_module(model: torch.nn.Module, batch: dict, name: str | None = None, *, row: int = 0,
                       source: str = "--batch"):
    """The engine's :class:`Subject` for the user's ``model`` on one row of ``batch`` (contract, issue 23).

    ``batch`` holds the model's keyword arguments (``input_ids`` or ``inputs_embeds``,
    ``position_ids``, ``attention_mask``, ``cu_seq_lens_q/k``, ``seq_idx``, …); several
    rows: row ``row`` (:func:`gpu_check.audit.batch.normalize_batch`). The subject has
    one backend, ``"model"`` (the module as it is), fixed weights (seeds vary the inputs
    and probes only), the layout of the row, and ``model.config`` when there is one.
    The module is put in eval mode (dropout off).
    """
    from hasse.gpu_check.audit.engine import Subject

    row_batch, note = normalize_batch(batch, row, source)
    layout = layout_of_batch(row_batch, source=source)
    built = built_for_module(model, row_batch, source)
    return Subject(name or type(model).__name__, lambda backend, seed: built, ("model",), layout,
                   getattr(model, "config", None), True,
                   _encoder(getattr(model, "config", None)), notes=(note,) if note else ())


def subject_for_checkpoint(path: str, batch: dict, *, row: int = 0, backends=None, dtype: str = "auto",
                           source: str = "--batch"):
    """The engine's :class:`Subject` for checkpoint directory ``path``: its own weights under each attention backend.

    ``backends``: the attention implementations to load it with (default eager, sdpa,
    flex_attention); the weights are the checkpoint's, so seeds vary the inputs and probes only.
    """
    from hasse.gpu_check.audit.engine import Subject
    from hasse.gpu_check.audit.models import BACKENDS

    row_batch, note = normalize_batch(batch, row, source)
    layout = layout_of_batch(row_batch, source=source)
    first = load_checkpoint(path, None, dtype)
    loaded = {}

    def build(backend: str, seed: int):
        if backend not in loaded:
            loaded[backend] = built_for_module(load_checkpoint(path, backend, dtype), row_batch, source)
        return loaded[backend]

    return Subject(os.path.basename(os.path.normpath(path)), build, tuple(backends or BACKENDS), layout,
                   getattr(first, "config", None), True,
                   _encoder(getattr(first, "config", None)), notes=(note,) if note else ())


def _encoder(config) -> bool:
    from hasse.gpu_check.audit.models import is_encoder

    return config is not None and is_encoder(config)


def subject_of(model, batch=None, *, n: int | None = None, documents=None, row: int = 0, trust_code: bool = False,
               layers: int = 2, dtype: str = "auto"):
    """The :class:`Subject` ``hasse.audit`` audits (:func:`hasse.api.audit` says what each argument may be)."""
    from hasse.gpu_check.audit.batch import batch_for_layout, read_batch
    from hasse.gpu_check.audit.models import ModelSpec
    from hasse.gpu_check.audit.scenarios import make_scenario, parse_lengths
    from hasse.theory.inputs.calls import split_function

    if isinstance(batch, (str, os.PathLike)):
        batch = read_batch(os.fspath(batch))
    if batch is not None and documents is not None:
        raise InputError("give a batch or documents, not both (the batch's own position_ids, cu_seq_lens_q/k or "
                         "seq_idx say where its documents start)", "--documents")
    lengths = parse_lengths(documents) if isinstance(documents, str) else (
        tuple(int(d) for d in documents) if documents is not None else None)
    if lengths is not None and min(lengths, default=0) < 1:
        raise InputError(f"each document length must be a positive integer, got {lengths}", "--documents")
    layout = None if batch is not None else make_scenario("packed" if lengths else "plain",
                                                          n if n is not None or lengths else 12, lengths=lengths)
    name = None
    if isinstance(model, (str, os.PathLike)):
        text = os.fspath(model)
        if split_function(text) is not None:
            model, built_batch = load_model_source(text, trust_code)
            name = text
            if batch is None and built_batch is not None:
                batch, layout = built_batch, None
        elif is_checkpoint(text):
            if batch is None:
                batch = batch_for_layout(layout, layout.n, load_checkpoint(text).config.vocab_size)
            return subject_for_checkpoint(text, batch, row=row, dtype=dtype)
        else:
            if batch is not None:
                raise InputError("a batch goes with your own module or a checkpoint; a family or configuration is "
                                 "built with random weights and audited on --scenario / --documents", "--batch")
            from hasse.gpu_check.audit.engine import family_subject

            return family_subject(ModelSpec(text, layers, max_positions=2 * layout.n), layout, dtype=dtype)
    if not isinstance(model, torch.nn.Module):
        raise InputError(f"the model must be an nn.Module, file.py:build, a checkpoint directory, a family or a "
                         f"configuration, got {type(model).__name__}", "--model")
    if batch is None:
        vocab = vocabulary(model)
        if vocab is None:
            raise InputError(f"{type(model).__name__} has no input embedding module: give a batch with inputs_embeds",
                             "--batch")
        batch = batch_for_layout(layout, layout.n, vocab)
    subject = subject_for_module(model, batch, name, row=row)
    if n is not None and subject.layout.n != n:
        raise InputError(f"--n {n} differs from the batch's {subject.layout.n} positions", "--n")
    return subject


def intended_masks_of(intended, n: int):
    """None, or one (n, n) bool mask per layer: from a stack spec, a LayerStack, or a list of masks."""
    import numpy as np

    from hasse.theory.stack import LayerStack

    if intended is None:
        return None
    if isinstance(intended, str):
        from hasse.theory.inputs.read import Reading, read

        intended = read(intended, Reading(n=n), accept=("preset", "stack")).stack
    if isinstance(intended, LayerStack):
        if intended.n != n:
            raise InputError(f"the intended stack has {intended.n} positions, the batch {n}", "--intended")
        return [np.asarray(layer.mask, dtype=bool) for layer in intended.layers]
    masks = [np.asarray(m, dtype=bool) for m in intended]
    for i, m in enumerate(masks):
        if m.shape != (n, n):
            raise InputError(f"intended mask {i} has shape {m.shape}, not ({n}, {n})", "--intended")
    if not masks:
        raise InputError("the intended stack needs at least one layer", "--intended")
    return masks

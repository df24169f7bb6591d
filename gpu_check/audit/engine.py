"""One audit engine for every model: a built configuration, the user's own module, a checkpoint.

A :class:`Subject` is what is audited: a ``build(backend, seed) -> Built`` function (a
configuration built with seeded weights per backend, or the user's module whatever the
seed), the backends to run, the layout of the row (documents, positions, padding:
:class:`~gpu_check.audit.scenarios.Scenario`) and the configuration when there is one.
:func:`audit_subject` finds the blocks and operators (:mod:`gpu_check.audit.operators`),
measures every block and operator per seed (:mod:`gpu_check.audit.trace`), and classifies
per layer against the intended flow (:mod:`gpu_check.audit.findings`).

Seeds: with built weights, seed ``s`` draws the weights (every backend gets the first
one's ``state_dict``), the input embeddings and the probes; with the user's weights
(``fixed_weights``) the seeds draw the inputs and probes only, and seed 0 measures at the
model's own embedding of the user's batch when there is one (``Built.embedding``).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from hasse.gpu_check.audit import findings as F
from hasse.gpu_check.audit.measure import random_embeddings
from hasse.gpu_check.audit.operators import blocks_of, find_operators, model_prefix
from hasse.gpu_check.audit.scenarios import Scenario
from hasse.gpu_check.audit.trace import batchable, measure_perturbation, measure_vjp, outputs_of, runner
from hasse.gpu_check.dependency import noise_thresholds
from hasse.theory.errors import InputError


@dataclass
class Built:
    """One model ready to measure (contract: docs/design.md §9)."""

    model: torch.nn.Module
    dtype: str  # "float64" | "float32"
    batch: dict  # model(**batch) keyword arguments for ONE row
    inputs: str = "inputs_embeds"  # or "hook": x replaces the output of the input embedding module
    embedding: torch.Tensor | None = None  # (1, n, C): the model's own embedding of the batch (seed 0)


@dataclass
class Subject:
    """What is audited (module docstring)."""

    name: str
    build: Callable[[str, int], Built]
    backends: tuple[str, ...]
    layout: Scenario
    config: object | None = None
    fixed_weights: bool = False
    encoder: bool = False
    pattern: tuple | None = None  # (kind, size) per layer; None: from the configuration or the operators
    notes: tuple[str, ...] = ()  # what the kit changed to make the check meaningful (a window shrunk)


def has_backward(backend: str) -> bool:
    """FlexAttention has no backward on the CPU: it is measured by perturbation there."""
    return backend != "flex_attention"


def _measure_one(built: Built, blocks, operators, layout: Scenario, seed: int, chunk: int, backend: str):
    """One backend, one seed: ``(layers, ops, own or None, own_ok, noise or None, operator order, method)``.

    By VJP where the backend has a backward (vmapped, else replicated), else, or when the
    backward fails (a state written in place: RWKV's cache), by forward perturbations.
    """
    n = layout.n
    width = F.embedding_width(built, blocks)
    x = built.embedding if seed == 0 and built.embedding is not None else random_embeddings(
        n, width, seed, getattr(torch, built.dtype))
    device = next((p.device for p in built.model.parameters()), torch.device("cpu"))
    x = x.to(device=device, dtype=getattr(torch, built.dtype))
    rows = np.flatnonzero(layout.real)
    run, recorder = runner(built, blocks, operators, n)
    try:
        if has_backward(backend):
            try:
                try:
                    layers, ops, own, ok = measure_vjp(run, x, rows, seed=seed, chunk=chunk)
                except RuntimeError:  # no batching rule for a kernel's backward: the probes ride in the batch
                    if not batchable(built.batch):
                        raise
                    layers, ops, own, ok = measure_vjp(run, x, rows, seed=seed, chunk=chunk, batched="replicate")
                return layers, ops, own, ok, None, list(recorder.completed), "vjp"
            except RuntimeError:  # no backward at all (a state written in place): forward perturbations
                pass
        last_ops: list = []
        tensors = outputs_of(run, last_ops)
        norms, noise, scale = measure_perturbation(tensors, x, rows, seed=seed, chunk=4 * chunk,
                                                   batched=batchable(built.batch))
        L = len(blocks)
        called = np.array([o is not None for o in last_ops], dtype=np.int8)  # perturbation: never 2 (no own pattern)
        return norms[:L], norms[L:], None, called, (noise, scale), list(recorder.completed), "perturbation"
    finally:
        recorder.close()


def _flags(norms: np.ndarray) -> np.ndarray:
    """1 where a norm is nonzero or NaN, else 0, as float32 (a quarter of the memory at 4,096 positions)."""
    return ((norms != 0) | np.isnan(norms)).astype(np.float32)


def audit_subject(subject: Subject, intended=None, *, seeds: int = 3, chunk: int = 8, backends=None,
                  progress=None, intended_text: str | None = None):
    """Audit ``subject`` (module docstring); ``intended``: None or one (n, n) mask per layer (a stack).

    ``backends``: the names to run (default: every one of ``subject.backends`` that builds
    and runs here; the others are skipped with the library's reason). ``progress(text)``
    is told each backend and seed.
    """
    from hasse.gpu_check.audit.result import Audit, BackendAudit
    from hasse.theory.version import AUDIT_VERSIONS, versions

    if seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {seeds}", "--seeds")
    layout = subject.layout
    explicit = backends is not None
    names = list(backends) if explicit else list(subject.backends)
    skipped: list[tuple[str, str]] = []
    measured: dict[str, list] = {}
    dtypes: dict[str, str] = {}
    times: dict[str, float] = {}
    structure = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(seeds):
            for name in list(names):
                if progress is not None:
                    progress(f"{subject.name}: {name}, seed {s + 1} of {seeds}")
                try:
                    built = subject.build(name, s)
                    blocks = blocks_of(built.model)
                    operators = find_operators(blocks, model_prefix(built.model))
                    start = time.perf_counter()
                    result = _measure_one(built, blocks, operators, layout, s, chunk, name)
                    times[name] = times.get(name, 0.0) + time.perf_counter() - start
                except InputError as exc:
                    if explicit or subject.backends == ("model",):  # the user's module as it is: no other
                        raise
                    skipped.append((name, F.first_sentence(str(exc))))
                    names.remove(name)
                    measured.pop(name, None)
                    continue
                except (RuntimeError, NotImplementedError, ValueError, TypeError, AssertionError) as exc:
                    if explicit or subject.backends == ("model",):
                        raise InputError(f"{name} failed to run: {F.first_sentence(str(exc))}",
                                         "--backend") from None
                    skipped.append((name, f"{type(exc).__name__}: {F.first_sentence(str(exc))}"))
                    names.remove(name)
                    measured.pop(name, None)
                    continue
                structure = structure or (blocks, operators, built)
                if result[4] is None:  # exact (VJP): the operators' norms matter only as zero / nonzero
                    result = (result[0], _flags(result[1]), None if result[2] is None else _flags(result[2]),
                              *result[3:])
                measured.setdefault(name, []).append(result)
                dtypes[name] = built.dtype
    if not measured:
        raise InputError("no attention implementation ran: " + "; ".join(f"{b}: {w}" for b, w in skipped))
    blocks, operators, built = structure
    pattern = subject.pattern or F.intended_pattern(subject.config, operators, len(blocks))
    masks = F.intended_stack(layout, pattern, intended, subject.encoder, len(blocks))
    predicted = F.predicted_flow(masks)
    results = []
    for name in names:
        per_seed = measured[name]
        layers = np.stack([r[0] for r in per_seed])  # (S, L, n, n)
        ops = np.stack([r[1] for r in per_seed])  # (S, P, n, n)
        own = None if per_seed[0][2] is None else np.stack([r[2] for r in per_seed])
        thresholds = relative = None
        if per_seed[0][4] is not None:
            noise = np.stack([r[4][0] for r in per_seed])
            scale = np.stack([r[4][1] for r in per_seed])
            L = len(blocks)  # ρ per family of tensors: an operator's own relative noise never lifts a layer's floor
            thresholds, relative = noise_thresholds(noise[:, :L], scale[:, :L])
            if noise.shape[1] > L:
                thresholds = np.concatenate([thresholds, noise_thresholds(noise[:, L:], scale[:, L:])[0]], axis=1)
        cls = F.classify_layers(layout, predicted, layers, ops, own, per_seed[0][3], operators, subject.encoder,
                                thresholds, order=per_seed[0][5], masks=masks)
        results.append(BackendAudit(
            name, dtypes[name], per_seed[0][6], predicted, cls.norms,
            cls.unexpected, cls.missing, cls.cancelled, cls.groups, times[name],
            None if thresholds is None else thresholds[:, :len(blocks)], relative or 0.0, cls.operators))
    config = subject.config
    return Audit(subject.name, type(config).__name__ if config is not None else type(built.model).__name__,
                 len(blocks), tuple(pattern), subject.encoder, layout, seeds,
                 built.batch.get("use_cache"), versions(AUDIT_VERSIONS), tuple(results), tuple(skipped),
                 operators=tuple(operators), notes=subject.notes,
                 vacuous=tuple(F.unexercised(pattern, layout)) if intended is None else (),
                 fixed_weights=subject.fixed_weights,
                 intended=intended_text or (None if intended is None else "the given masks"))


def family_subject(spec, layout: Scenario, *, dtype: str = "auto", use_cache: bool | None = None, hook=None,
                   backends=None, device: str = "cpu") -> Subject:
    """The :class:`Subject` of a configuration built small with seeded weights (:mod:`gpu_check.audit.models`).

    Seed ``s`` builds the weights; every backend after the first of a seed gets the first
    one's ``state_dict`` (the same weights), FlexAttention runs in float32 on the CPU, and
    ``hook(model, backend)`` plants a deliberate change (tests, ``--drop-mask-layer``).
    A sliding window or chunk the input is too short to show is shrunk when the user
    did not choose it (:func:`exercised_spec`), and the Subject's notes say so.
    """
    from hasse.gpu_check.audit.measure import model_inputs
    from hasse.gpu_check.audit.models import BACKENDS, build_model, is_encoder

    spec, notes, config = exercised_spec(spec, layout)
    if layout.perm_mask is not None and getattr(config, "model_type", "") != "xlnet":
        raise InputError("scenario perm needs an XLNet model (perm_mask)", "--scenario")
    first: dict[int, torch.nn.Module] = {}

    def build(backend: str, seed: int) -> Built:
        model, name = build_model(config, backend, seed, dtype)
        reference = first.get(seed)
        if reference is not None:  # the same weights as the first backend's model of this seed
            model.load_state_dict(reference.state_dict())
            model = model.to(next(reference.parameters()).dtype)
            name = str(next(reference.parameters()).dtype).removeprefix("torch.")
        else:
            first.clear()
            first[seed] = model
        if backend == "flex_attention" and name == "float64":  # FlexAttention on the CPU: float32 at most
            model, name = model.to(torch.float32), "float32"
        if hook is not None:
            hook(model, backend)
        model = model.to(device)
        batch = model_inputs(layout, 1, device, use_cache, getattr(torch, name))
        return Built(model, name, batch)

    return Subject(spec.name, build, tuple(backends or BACKENDS), layout, config, encoder=is_encoder(config),
                   notes=tuple(notes))


def exercised_spec(spec, layout: Scenario):
    """``(spec, notes, config)``: ``spec`` with a window / chunk the input can show, where the user did not set one.

    A sliding window of ``w >=`` the longest document is never exercised (every key of a
    document is inside it): it becomes half the longest document; a Llama 4 chunk larger
    than every ``position_id`` becomes half the largest one plus one. A value the user
    chose (``--window``, ``--chunk``, ``--set``) is kept, and the audit says it is not
    exercised (:func:`gpu_check.audit.findings.unexercised`).
    """
    import dataclasses

    from hasse.gpu_check.audit.models import layer_pattern, small_config

    chosen = {key for key, _ in spec.overrides}
    config = small_config(spec)
    real = layout.docs[layout.real]
    longest = max((int((real == d).sum()) for d in set(real.tolist())), default=0)
    top = int(layout.positions[layout.real].max(initial=0))
    notes, changes = [], {}
    window = getattr(config, "sliding_window", None)
    uses_window = any(kind == "sliding" for kind, _ in layer_pattern(config))
    if (isinstance(window, int) and uses_window and spec.window is None and "sliding_window" not in chosen
            and window >= longest > 1):
        changes["window"] = max(1, longest // 2)
        notes.append(f"sliding window shrunk from {window} to {changes['window']} keys so that documents of "
                     f"{longest} positions show it (--window W to choose)")
    chunk = getattr(config, "attention_chunk_size", None)
    uses_chunk = any(kind == "chunked" for kind, _ in layer_pattern(config))
    if (isinstance(chunk, int) and uses_chunk and spec.chunk is None and "attention_chunk_size" not in chosen
            and chunk > top >= 1):
        changes["chunk"] = max(1, (top + 1) // 2)
        notes.append(f"attention chunk shrunk from {chunk} to {changes['chunk']} positions so that position_ids "
                     f"0 … {top} show it (--chunk C to choose)")
    if not changes:
        return spec, notes, config
    spec = dataclasses.replace(spec, **changes)
    return spec, notes, small_config(spec)

"""``hasse audit``: which inputs a transformers model's outputs actually depend on, against the intended mask.

Definitions (design.md §"Audits"). For a model with ``L`` layers, a scenario
(:mod:`gpu_check.audit_scenarios`) and seed ``s``, the *measured dependency* of the
hidden state of position ``q`` after layer ``l`` on input embedding ``k`` is

- ``vjp``: ``‖u_qᵀ ∂h^l_q/∂x_k‖`` for a random probe ``u_q``, read from batched
  vector–Jacobian products: one backward, vmapped over ``chunk`` cotangents (each
  ``u_q`` at its own output position), gives ``chunk`` rows, every ``k`` at once;
  where a kernel's backward has no batching rule the input is replicated along the
  batch instead, copy ``i`` carrying the probe of output ``q_i``;
- ``perturbation`` (FlexAttention on the CPU has no backward; both in :mod:`gpu_check.audit_measure`):
  ``‖h^l_q(x + δ e_k) − h^l_q(x)‖``, the unperturbed input in the same batch.

A VJP is exactly zero when no path exists (masked probabilities are exact zeros); a
perturbation is decided against the backend's noise measured in the same run (the
noise rule of :mod:`gpu_check.dependency`: above ``NOISE_MARGIN · max(noise_q, ρ ‖h_q‖)``).
The *predicted* dependency is ``R(l)`` of the intended layer masks
(:func:`hasse.theory.reach.reach` with the list of the first ``l``). Only rows of
real tokens are compared (padding query rows are excluded and the report says so).
A pair is *unexpected* if it is a dependency (nonzero, above the noise, or NaN) in
some seed at layer ``L`` and ``R(L)`` is false; *missing* if ``R(L)`` holds and it is
no dependency in any seed (:func:`gpu_check.dependency.classify`).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

from hasse.gpu_check.audit.models import (BACKENDS, ModelSpec, build_model, first_sentence, is_encoder,
                                          layer_pattern, pattern_text, small_config)
from hasse.gpu_check.audit.measure import (has_backward, layer_outputs, measure_perturbation, measure_vjp,
                                           random_embeddings)
from hasse.gpu_check.audit.scenarios import PAD, Scenario, intended_masks
from hasse.gpu_check.dependency import classify, dependent, noise_thresholds
from hasse.theory.version import AUDIT_VERSIONS, versions
from hasse.theory.errors import InputError
from hasse.theory.reach import reach

Pair = tuple[int, int]  # (q, k): output q, input k


@dataclass(frozen=True)
class Group:
    """Findings of one kind between two documents, first seen at one layer count."""

    kind: str  # contamination, future, pad_key, window, nan, missing
    source_doc: int  # document of the input k (PAD = -1: padding)
    dest_doc: int  # document of the output q
    layer: int  # unexpected: the first layer count at which it is measured; missing: at which R(l) predicts it
    pairs: tuple[Pair, ...]

    def to_json(self) -> dict:
        return {"kind": self.kind, "source_doc": self.source_doc, "dest_doc": self.dest_doc, "layer": self.layer,
                "count": len(self.pairs), "pairs": [list(p) for p in self.pairs]}


@dataclass(frozen=True)
class BackendAudit:
    """One attention implementation on one scenario."""

    backend: str
    dtype: str
    method: str  # vjp or perturbation
    predicted: np.ndarray  # (L, n, n) bool: R(l) for l = 1..L
    norms: np.ndarray  # (S, L, n, n): measured per seed and layer (padding rows 0); layers before L are
    # measured only when some backend has a finding or two backends differ (else 0 there)
    unexpected: tuple[Pair, ...]
    missing: tuple[Pair, ...]
    cancelled: int
    groups: tuple[Group, ...]
    seconds: float
    thresholds: np.ndarray | None = None  # (S, L, n): a norm counts above this (None: vjp, above 0)
    relative_noise: float = 0.0  # ρ of the noise rule (perturbation)

    @property
    def measured(self) -> np.ndarray:
        """(L, n, n) bool: a dependency (nonzero or above the noise, or NaN) in some seed."""
        return dependent(self.norms, self.thresholds).any(axis=0)

    @property
    def detection_limit(self) -> float:
        """The largest noise threshold (0: any nonzero counts)."""
        return 0.0 if self.thresholds is None else float(self.thresholds.max(initial=0.0))

    @property
    def clean(self) -> bool:
        return not self.unexpected and not self.missing


@dataclass(frozen=True)
class Audit:
    """An audit: the model, the scenario, and one result per backend."""

    model: str
    config_class: str
    layers: int
    pattern: tuple  # (kind, size) per layer
    encoder: bool
    scenario: Scenario
    seeds: int
    use_cache: bool | None
    versions: dict
    backends: tuple[BackendAudit, ...]
    skipped: tuple[tuple[str, str], ...] = field(default=())  # (backend, why) not available here

    @property
    def unexpected(self) -> bool:
        return any(b.unexpected for b in self.backends)


def group_findings(scenario: Scenario, pairs, first_layer: np.ndarray, kind_of) -> tuple[Group, ...]:
    """Group ``pairs`` by (kind, source doc, dest doc, first layer); ``kind_of(q, k)`` names the kind."""
    groups: dict[tuple, list[Pair]] = {}
    for q, k in pairs:
        key = (kind_of(q, k), int(scenario.docs[k]), int(scenario.docs[q]), int(first_layer[q, k]))
        groups.setdefault(key, []).append((int(q), int(k)))
    return tuple(Group(*key, tuple(v)) for key, v in sorted(groups.items(), key=lambda kv: (kv[0][3], kv[0])))


def unexpected_kind(scenario: Scenario, encoder: bool, nan: np.ndarray):
    """``kind_of(q, k)`` for an unexpected pair: nan, pad_key, contamination, future or window."""
    docs = scenario.docs

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


def first_layers(stack: np.ndarray) -> np.ndarray:
    """(n, n) int: the first l (1-based) with ``stack[l - 1]`` true, 0 where never.

    >>> first_layers(np.array([[[0, 1]], [[1, 1]]], bool)).tolist()
    [[2, 1]]
    """
    hit = np.asarray(stack, bool)
    return np.where(hit.any(axis=0), hit.argmax(axis=0) + 1, 0)


def classify_audit(scenario: Scenario, predicted: np.ndarray, norms: np.ndarray, encoder: bool,
                   thresholds: np.ndarray | None = None):
    """``(unexpected, missing, cancelled, groups)`` of per-seed, per-layer ``norms`` (S, L, n, n) vs R(l) (L, n, n).

    ``thresholds`` (S, L, n): the noise rule's, per output row (None: any nonzero counts).
    """
    real = scenario.real
    final = norms[:, -1].copy()  # (S, n, n)
    theory = predicted[-1].copy()
    final[:, ~real] = 0  # padding query rows are not compared
    theory[~real] = False
    unexpected, missing, cancelled = classify(theory, final, None if thresholds is None else thresholds[:, -1])
    measured = dependent(norms, thresholds).any(axis=0)  # (L, n, n)
    nan = np.isnan(norms[:, -1]).any(axis=0)
    groups = group_findings(scenario, unexpected, first_layers(measured & ~predicted),
                            unexpected_kind(scenario, encoder, nan))
    groups += group_findings(scenario, missing, first_layers(predicted), lambda q, k: "missing")
    return unexpected, missing, cancelled, groups


@dataclass
class Setup:
    """What every backend of one audit shares."""

    spec: ModelSpec
    scenario: Scenario
    seeds: int = 3
    dtype: str = "auto"
    use_cache: bool | None = None
    chunk: int = 8  # output rows per batched backward (perturbation: perturbed inputs per forward)
    hook: object = None  # hook(model, backend): a deliberate change (tests, --drop-mask-layer)


def _models(config, setup: Setup, backend: str, seed: int, reference=None):
    model, dtype = build_model(config, backend, seed, setup.dtype)
    if reference is not None:  # the same weights as the first backend's model
        model.load_state_dict(reference.state_dict())
        model = model.to(next(reference.parameters()).dtype)
        dtype = str(next(reference.parameters()).dtype).removeprefix("torch.")
    if backend == "flex_attention" and dtype == "float64":  # FlexAttention on the CPU: float32 at most
        model, dtype = model.to(torch.float32), "float32"
    if setup.hook is not None:
        setup.hook(model, backend)
    return model, dtype


def _measure(config, setup: Setup, names: list, explicit: bool, skipped: list, *, final_only: bool):
    """Per backend: the list over seeds of (L, n, n) norms, the dtype, the seconds spent measuring and the noise.

    The noise is, per backend measured by perturbation, the list over seeds of
    ``(noise, scale)`` (L, n) each (:func:`gpu_check.audit_measure.measure_perturbation`).

    ``final_only`` measures the last layer only by VJP (the earlier ones stay 0); a
    backend that does not build or run is removed from ``names`` and added to
    ``skipped`` (or, when the user named it, raised as InputError).
    """
    scenario = setup.scenario
    rows = np.flatnonzero(scenario.real)
    per_backend: dict[str, list] = {}
    noise: dict[str, list] = {}
    dtypes: dict[str, str] = {}
    times: dict[str, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(setup.seeds):
            reference = None
            for name in list(names):
                try:
                    model, dtype = _models(config, setup, name, s, reference)
                    reference = model if reference is None else reference
                    x = random_embeddings(scenario.n, model.get_input_embeddings().weight.shape[1], s,
                                          next(model.parameters()).dtype)
                    run = layer_outputs(model, scenario, setup.use_cache)
                    start = time.perf_counter()
                    if has_backward(name):
                        try:
                            norms = measure_vjp(run, x, rows, seed=s, chunk=setup.chunk, final_only=final_only)
                        except RuntimeError:  # no batching rule for this kernel's backward: probes in the batch
                            norms = measure_vjp(run, x, rows, seed=s, chunk=setup.chunk, final_only=final_only,
                                                batched="replicate")
                    else:
                        norms, seed_noise, seed_scale = measure_perturbation(run, x, rows, seed=s,
                                                                             chunk=4 * setup.chunk)
                        noise.setdefault(name, []).append((seed_noise, seed_scale))
                    times[name] = times.get(name, 0.0) + time.perf_counter() - start
                except InputError as exc:
                    if explicit:
                        raise
                    skipped.append((name, first_sentence(str(exc))))
                    names.remove(name)
                    continue
                except (RuntimeError, NotImplementedError, ValueError, TypeError) as exc:
                    if explicit:
                        raise InputError(f"{name} failed to run: {str(exc).splitlines()[0]}", "--backend") from None
                    skipped.append((name, f"{type(exc).__name__}: {first_sentence(str(exc))}"))
                    names.remove(name)
                    per_backend.pop(name, None)
                    noise.pop(name, None)
                    continue
                per_backend.setdefault(name, []).append(norms)
                dtypes[name] = dtype
    return per_backend, dtypes, times, noise


def _thresholds(noise: dict, name: str):
    """``(thresholds (S, L, n), ρ)`` of a backend measured by perturbation; ``(None, 0.0)`` for a VJP."""
    if name not in noise:
        return None, 0.0
    return noise_thresholds(np.stack([a for a, _ in noise[name]]), np.stack([b for _, b in noise[name]]))


def audit(setup: Setup, backends=None) -> Audit:
    """Audit ``setup`` on ``backends`` (default: every one that builds and runs here; others are ``skipped``).

    Seed ``s`` draws the weights (shared by every backend: each backend's model gets
    the first one's ``state_dict``), the input embeddings and the probes.
    """
    config = small_config(setup.spec)
    scenario = setup.scenario
    encoder = is_encoder(config)
    pattern = layer_pattern(config)
    if setup.seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {setup.seeds}", "--seeds")
    if scenario.perm_mask is not None and getattr(config, "model_type", "") != "xlnet":
        raise InputError("scenario perm needs an XLNet model (perm_mask)", "--scenario")
    masks = intended_masks(scenario, pattern, bidirectional=encoder)
    predicted = np.stack([reach(masks[:l], l) for l in range(1, len(masks) + 1)])  # (L, n, n)
    explicit = backends is not None
    names = list(backends) if explicit else list(BACKENDS)
    skipped: list[tuple[str, str]] = []
    per_backend, dtypes, times, noise = _measure(config, setup, names, explicit, skipped, final_only=True)
    final = {}  # per backend, (n, n): measured at layer L in some seed
    for name, v in per_backend.items():
        thresholds = _thresholds(noise, name)[0]
        last = None if thresholds is None else thresholds[:, -1]
        final[name] = dependent(np.stack(v)[:, -1], last).any(axis=0) & scenario.real[:, None]
    findings = any((m & ~predicted[-1]).any() or (predicted[-1] & scenario.real[:, None] & ~m).any()
                   for m in final.values())
    differ = len({m.tobytes() for m in final.values()}) > 1
    if (findings or differ) and len(pattern) > 1:  # the layer at which each finding first appears
        per_backend, dtypes, more, noise = _measure(config, setup, names, explicit, skipped, final_only=False)
        times = {name: times[name] + more[name] for name in names}
    results = []
    for name in names:
        norms = np.stack(per_backend[name])  # (S, L, n, n)
        norms[:, :, ~scenario.real] = 0
        thresholds, relative = _thresholds(noise, name)
        unexpected, missing, cancelled, groups = classify_audit(scenario, predicted, norms, encoder, thresholds)
        results.append(BackendAudit(name, dtypes[name], "vjp" if has_backward(name) else "perturbation",
                                    predicted, norms, unexpected, missing, cancelled, groups, times[name],
                                    thresholds, relative))
    if not results:
        raise InputError("no attention implementation ran: " + "; ".join(f"{b}: {w}" for b, w in skipped))
    return Audit(setup.spec.name, type(config).__name__, len(pattern), tuple(pattern), encoder, scenario,
                 setup.seeds, setup.use_cache, versions(AUDIT_VERSIONS), tuple(results), tuple(skipped))


@dataclass(frozen=True)
class Difference:
    """Where two backends' measured dependencies differ (rows of real tokens, any seed)."""

    first: str
    second: str
    only_first: tuple[Pair, ...]  # measured in ``first`` at layer L, not in ``second``
    only_second: tuple[Pair, ...]
    layers: dict  # pair -> first layer count at which the two differ

    @property
    def same(self) -> bool:
        return not self.only_first and not self.only_second


def compare_backends(result: Audit) -> tuple[Difference, ...]:
    """Every pair of backends of ``result`` (same configuration, weights, inputs): where they differ."""
    out = []
    real = result.scenario.real
    for i, a in enumerate(result.backends):
        for b in result.backends[i + 1:]:
            ma, mb = a.measured.copy(), b.measured.copy()
            ma[:, ~real] = False
            mb[:, ~real] = False
            first = first_layers(ma != mb)
            only_a = tuple(map(tuple, np.argwhere(ma[-1] & ~mb[-1]).tolist()))
            only_b = tuple(map(tuple, np.argwhere(mb[-1] & ~ma[-1]).tolist()))
            layers = {p: int(first[p]) for p in only_a + only_b}
            out.append(Difference(a.backend, b.backend, only_a, only_b, layers))
    return tuple(out)


def drop_mask_hook(layer: int):
    """``hook(model, backend)`` that drops the attention mask handed to decoder layer ``layer`` (a planted bug).

    A forward pre-hook replaces the layer's ``attention_mask`` keyword by None: the
    eager path then attends every key, SDPA falls back to plain causal attention.
    """

    def hook(model, backend: str) -> None:
        blocks = decoder_layers(model)
        if not 0 <= layer < len(blocks):
            raise InputError(f"--drop-mask-layer must be between 0 and {len(blocks) - 1}, got {layer}")
        blocks[layer].register_forward_pre_hook(
            lambda module, args, kwargs: (args, {**kwargs, "attention_mask": None}), with_kwargs=True)

    return hook


def decoder_layers(model) -> list:
    """The model's list of Transformer blocks (``layers``, ``layer`` or ``encoder.layer``)."""
    for path in ("layers", "layer", "encoder.layer", "h"):
        obj = model
        for part in path.split("."):
            obj = getattr(obj, part, None)
        if isinstance(obj, torch.nn.ModuleList):
            return list(obj)
    raise InputError(f"cannot find the layers of {type(model).__name__}")


def describe_pattern(result: Audit) -> str:
    """The layer pattern in words, for the report."""
    return ("bidirectional " if result.encoder else "") + pattern_text(result.pattern)

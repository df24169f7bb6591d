"""``hasse audit``: which inputs a transformers model's outputs actually depend on, against the intended mask.

Definitions (design.md §"Audits"). For a model with ``L`` layers, a scenario
(:mod:`gpu_check.audit.scenarios`) and seed ``s``, the *measured dependency* of the
hidden state of position ``q`` after layer ``l`` on input embedding ``k`` is

- ``vjp``: ``‖u_qᵀ ∂h^l_q/∂x_k‖`` for a random probe ``u_q``, read from batched
  vector–Jacobian products: one backward, vmapped over ``chunk`` cotangents (each
  ``u_q`` at its own output position), gives ``chunk`` rows, every ``k`` at once;
  where a kernel's backward has no batching rule the input is replicated along the
  batch instead, copy ``i`` carrying the probe of output ``q_i``;
- ``perturbation`` (FlexAttention on the CPU has no backward; both in :mod:`gpu_check.audit.trace`):
  ``‖h^l_q(x + δ e_k) − h^l_q(x)‖``, the unperturbed input in the same batch.

A VJP is exactly zero when no path exists (masked probabilities are exact zeros); a
perturbation is decided against the backend's noise measured in the same run (the
noise rule of :mod:`gpu_check.dependency`: above ``NOISE_MARGIN · max(noise_q, ρ ‖h_q‖)``).
The *predicted* dependency is ``R(l)`` of the intended layer masks
(:func:`hasse.theory.reach.reach` with the list of the first ``l``). Only rows of
real tokens are compared (padding query rows are excluded and the report says so).
A pair is *unexpected* if it is a dependency (nonzero, above the noise, or NaN) in
some seed after some layer ``l`` where ``R(l)`` is false; *missing* if ``R(l)`` holds
and it is no dependency in any seed (:mod:`gpu_check.audit.findings`, which also
attributes each finding to the operator that introduced it). The engine that measures
any model is :mod:`gpu_check.audit.engine`; this module holds the result types, the
built-configuration entry (:func:`audit`), backend comparison and the planted bug.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from hasse.gpu_check.audit.findings import Group, OperatorFlow, first_layers
from hasse.gpu_check.audit.models import ModelSpec, pattern_text
from hasse.gpu_check.audit.result import Audit, BackendAudit, Difference, compare_backends, verdict_of
from hasse.gpu_check.audit.scenarios import Scenario
from hasse.theory.errors import InputError

__all__ = ["Audit", "BackendAudit", "Difference", "Group", "OperatorFlow", "Setup", "audit", "compare_backends",
           "drop_mask_hook", "describe_pattern", "first_layers", "verdict_of"]


@dataclass
class Setup:
    """A built configuration's audit: the model, the row and the options every backend shares."""

    spec: ModelSpec
    scenario: Scenario
    seeds: int = 3
    dtype: str = "auto"
    use_cache: bool | None = None
    chunk: int = 8  # output rows per batched backward (perturbation: perturbed inputs per forward)
    hook: object = None  # hook(model, backend): a deliberate change (tests, --drop-mask-layer)
    device: str = "cpu"


def audit(setup: Setup, backends=None, intended=None, progress=None, intended_text=None) -> Audit:
    """Audit a built configuration on ``backends`` (default: every one that builds and runs here).

    Seed ``s`` draws the weights (shared by every backend), the input embeddings and the
    probes (:func:`gpu_check.audit.engine.family_subject`).
    """
    from hasse.gpu_check.audit.engine import audit_subject, family_subject

    if setup.seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {setup.seeds}", "--seeds")
    subject = family_subject(setup.spec, setup.scenario, dtype=setup.dtype, use_cache=setup.use_cache,
                             hook=setup.hook, device=setup.device)
    return audit_subject(subject, intended, seeds=setup.seeds, chunk=setup.chunk, backends=backends,
                         progress=progress, intended_text=intended_text)


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
    """The model's list of Transformer blocks (:func:`gpu_check.audit.operators.blocks_of`)."""
    from hasse.gpu_check.audit.operators import blocks_of

    return [block for _, block in blocks_of(model)]


def describe_pattern(result: Audit) -> str:
    """The layer pattern in words, for the report."""
    return ("bidirectional " if result.encoder else "") + pattern_text(result.pattern)

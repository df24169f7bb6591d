"""Serving schedules against one full forward: decode, chunked prefill and prefix caching through the model's cache.

A *schedule* runs the same inputs ``x`` (1, n, C) (``inputs_embeds``) through the
model's own cache (the HF calling convention: ``model(inputs_embeds=…, cache=…,
use_cache=True, position_ids=…)``) in *steps*:

- ``decode``: the prefix ``[0, P)`` in one call (step 0), then one position per step;
- ``chunked_prefill``: chunks of ``S`` positions, chunk ``j`` at step ``j``;
- ``prefix_cache``: the prefix in one call (step 0) into a cache that is stored
  (deep-copied, as a serving engine keeps it); the rest ``[P, n)`` is resumed from a
  fresh copy of the stored cache twice (steps 1 and 2), so a resume that mutates what
  was stored (state kept outside the cache object, copies that share tensors) shows.

The reference is one full forward (``use_cache=False``) of the same ``x``. Per output
position ``q`` and per state (each layer's hidden state where ``output_hidden_states``
works, and the last hidden state), two comparisons:

1. *dependency*: the inputs ``k`` output ``q`` depends on, under the schedule and under
   the full forward, each measured by :func:`gpu_check.audit.measure.measure_perturbation`
   (forward perturbations ``x + δ e_k`` batched, the noise of the same run) and decided
   by :func:`gpu_check.dependency.noise_thresholds` — the same way for both;
2. *values*: ``‖h_sched(q) − h_full(q)‖`` against a measured tolerance: the backend's
   own noise of a shape change without any cache (output ``q`` of the full forward
   against output ``q`` of a full forward of ``x[:, :q+1]``, and the full forward run
   twice), by the same noise rule (``NOISE_MARGIN · max(noise_q, ρ ‖h_q‖)``).

A mismatch is reported per seed and position with the first schedule step that
disagrees (and the first state, layer 1 first, at which it shows).
:func:`~gpu_check.audit.cache_bugs.drop_cache_position` plants a cache that loses one position's keys and values.
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, field

import numpy as np
import torch

from hasse.gpu_check.audit.cache_bugs import drop_cache_position
from hasse.gpu_check.audit.measure import measure_perturbation, random_embeddings
from hasse.gpu_check.dependency import dependent, noise_thresholds
from hasse.theory.errors import InputError

__all__ = ["SCHEDULES", "plan", "schedule_audit", "schedule_for_spec", "drop_cache_position"]
SCHEDULES = ("decode", "chunked_prefill", "prefix_cache")
CACHE_FIELDS = ("cache", "past_key_values", "cache_params", "state")  # how models name the cache, in and out


@dataclass(frozen=True)
class Plan:
    """The steps of a schedule: ``(start, end)`` positions per step, the passes that read them."""

    schedule: str
    n: int
    steps: tuple[tuple[int, int], ...]  # step i computes the outputs of positions [start, end)
    passes: tuple[tuple[int, ...], ...]  # each pass: its steps in order, together covering 0 … n-1 once

    def step_of(self) -> np.ndarray:
        """(passes, n) int: the step that produced each position's output in each pass.

        >>> plan("prefix_cache", 5, prefix=2).step_of().tolist()
        [[0, 0, 1, 1, 1], [0, 0, 2, 2, 2]]
        """
        out = np.zeros((len(self.passes), self.n), dtype=np.int64)
        for i, steps in enumerate(self.passes):
            for s in steps:
                out[i, self.steps[s][0]:self.steps[s][1]] = s
        return out


def plan(schedule: str, n: int, *, prefix: int | None = None, step: int | None = None) -> Plan:
    """The :class:`Plan` of ``schedule`` at ``n`` positions (defaults: ``P = n // 2``, ``S = max(1, n // 4)``).

    >>> plan("decode", 5, prefix=2).steps
    ((0, 2), (2, 3), (3, 4), (4, 5))
    >>> plan("chunked_prefill", 5, step=2).steps
    ((0, 2), (2, 4), (4, 5))
    >>> plan("decode", 5, prefix=5)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --prefix: the prefix must be between 1 and n - 1 = 4 positions, got 5
    """
    if schedule not in SCHEDULES:
        raise InputError(f"unknown schedule {schedule!r} (one of {', '.join(SCHEDULES)})", "--scenario")
    if type(n) is not int or n < 2:
        raise InputError(f"a schedule needs n >= 2 positions, got {n}", "--n")
    if schedule == "chunked_prefill":
        s = max(1, n // 4) if step is None else step
        if type(s) is not int or not 1 <= s < n:
            raise InputError(f"the chunk must be between 1 and n - 1 = {n - 1} positions, got {s}", "--step")
        steps = tuple((a, min(a + s, n)) for a in range(0, n, s))
        return Plan(schedule, n, steps, (tuple(range(len(steps))),))
    p = n // 2 if prefix is None else prefix
    if type(p) is not int or not 1 <= p < n:
        raise InputError(f"the prefix must be between 1 and n - 1 = {n - 1} positions, got {p}", "--prefix")
    if schedule == "decode":
        steps = ((0, p),) + tuple((q, q + 1) for q in range(p, n))
        return Plan(schedule, n, steps, (tuple(range(len(steps))),))
    return Plan(schedule, n, ((0, p), (p, n), (p, n)), ((0, 1), (0, 2)))


@dataclass(frozen=True)
class Calling:
    """How one model is called: the name of its cache argument and which optional arguments it takes."""

    cache: str  # one of CACHE_FIELDS
    positions: bool  # takes position_ids
    cache_position: bool  # takes cache_position
    hidden: bool  # output_hidden_states gives one (B, m, C) state per layer
    own_cache: bool = False  # a stateful model that takes a cache but returns none: the kit hands it one


def calling(model, x: torch.Tensor) -> Calling:
    """How to call ``model``; InputError for an encoder or a model whose forward takes or returns no cache."""
    config = getattr(model, "config", None)
    from hasse.gpu_check.audit.models import is_encoder

    if config is not None and is_encoder(config):
        raise InputError(f"{type(model).__name__} is an encoder: it has no cache to decode with", "--scenario")
    params = inspect.signature(model.forward).parameters
    name = next((f for f in CACHE_FIELDS if f in params), None)
    if name is None:
        raise InputError(f"{type(model).__name__}.forward takes no cache ({' / '.join(CACHE_FIELDS)})",
                         "--scenario")
    with torch.no_grad():
        try:
            out = model(inputs_embeds=x[:, :2], use_cache=True, output_hidden_states=True)
        except TypeError as exc:
            raise InputError(f"{type(model).__name__} cannot be called with inputs_embeds and use_cache "
                             f"({str(exc).splitlines()[0]})", "--scenario") from None
    own = _cache_of(out) is None
    if own and not (getattr(model, "_is_stateful", False) and name in ("cache", "past_key_values")):
        raise InputError(f"{type(model).__name__} returns no cache with use_cache=True: nothing to schedule",
                         "--scenario")
    states = getattr(out, "hidden_states", None)
    hidden = bool(states) and len(states) > 1 and all(
        getattr(h, "shape", None) == (1, 2, x.shape[-1]) for h in states[1:])
    return Calling(name, "position_ids" in params, "cache_position" in params, hidden, own)


class BatchShapeError(RuntimeError):
    """A step returned states of another shape than its inputs (B, m, ·)."""


def _cache_of(out):
    return next((v for v in (getattr(out, f, None) for f in CACHE_FIELDS) if v is not None), None)


def _states(out, how: Calling, shape) -> list[torch.Tensor]:
    states = (list(out.hidden_states[1:]) if how.hidden else []) + [out.last_hidden_state]
    if any(tuple(h.shape[:2]) != tuple(shape[:2]) for h in states):
        raise BatchShapeError(f"inputs {tuple(shape)} gave states {tuple(states[-1].shape)}")
    return states


def _call(model, how: Calling, x: torch.Tensor, start: int, cache, use_cache: bool = True):
    b, m, _ = x.shape
    kwargs = {"inputs_embeds": x, "use_cache": use_cache, "output_hidden_states": how.hidden}
    if how.positions:
        kwargs["position_ids"] = torch.arange(start, start + m, device=x.device).expand(b, -1)
    if how.cache_position and use_cache:
        kwargs["cache_position"] = torch.arange(start, start + m, device=x.device)
    if cache is not None:
        kwargs[how.cache] = cache
    return model(**kwargs)


def full_forward(model, how: Calling):
    """``run(x) -> [states…]``: one full forward without a cache, each state (B, n, C)."""
    return lambda x: _states(_call(model, how, x, 0, None, use_cache=False), how, x.shape)


def schedule_forward(model, how: Calling, the_plan: Plan):
    """``run(x) -> [states of pass 0…, states of pass 1…]``: the plan's steps through the model's cache."""

    def run(x: torch.Tensor) -> list[torch.Tensor]:
        parts: dict[int, list[torch.Tensor]] = {}
        stored = None
        cache = None
        for i, (a, b) in enumerate(the_plan.steps):
            if i == 0 and how.own_cache:  # a stateful model: its own state reset, a cache object from the kit
                if hasattr(model, "_setup_cache"):
                    model._setup_cache(model.config, x.shape[0], x.device, x.dtype)
                from hasse.gpu_check.audit.models import import_transformers

                cache = import_transformers().DynamicCache(config=model.config)
            if the_plan.schedule == "prefix_cache" and i > 0:
                cache = _deep_copy(stored)  # every resume from its own copy of what was stored
            out = _call(model, how, x[:, a:b], a, cache)
            cache = cache if how.own_cache else _cache_of(out)
            if cache is None:
                raise InputError(f"{type(model).__name__} returned no cache at step {i}", "--scenario")
            parts[i] = _states(out, how, x[:, a:b].shape)
            if the_plan.schedule == "prefix_cache" and i == 0:
                stored = _deep_copy(cache)
        result = []
        for steps in the_plan.passes:
            result += [torch.cat([parts[s][j] for s in steps], dim=1) for j in range(len(parts[0]))]
        return result

    return run


def _deep_copy(cache):
    try:
        return copy.deepcopy(cache)
    except Exception as exc:  # noqa: BLE001 - any library's refusal, in one line
        raise InputError(f"the cache {type(cache).__name__} cannot be stored (deepcopy: {exc})",
                         "--scenario") from None


@dataclass(frozen=True)
class Mismatch:
    """One output position whose schedule result differs from the full forward's, in one seed."""

    seed: int
    position: int  # q
    step: int  # the first schedule step that disagrees at q
    steps: tuple[int, ...]  # every step that disagrees at q (prefix_cache: 1, 2 or both)
    state: str  # the first state at which it shows: "layer 1", …, "output"
    value: bool  # ‖h_sched(q) − h_full(q)‖ above the tolerance in some state
    difference: float  # the largest ‖h_sched(q) − h_full(q)‖ over states and passes
    tolerance: float  # the tolerance of that state and position
    extra: tuple[int, ...]  # inputs k that output q depends on under the schedule only (some state)
    lost: tuple[int, ...]  # inputs k that output q depends on under the full forward only


@dataclass(frozen=True)
class ScheduleAudit:
    """A schedule against one full forward, per seed."""

    name: str
    schedule: str
    n: int
    prefix: int | None
    step: int | None
    seeds: int
    dtype: str
    steps: tuple[tuple[int, int], ...]
    step_of: np.ndarray  # (passes, n): the step that produced each output
    states: tuple[str, ...]  # "layer 1", …, "output"
    mismatches: tuple[Mismatch, ...]
    difference: np.ndarray  # (seeds, passes, states, n): ‖h_sched(q) − h_full(q)‖
    tolerance: np.ndarray  # (seeds, states, n): the value tolerance (the measured rule)
    shape_noise: float  # the largest change of a state between identical inputs of two shapes, no cache
    relative_noise: float  # ρ of the value rule
    dependency_full: np.ndarray  # (seeds, states, n, n) bool: output q depends on input k, full forward
    dependency_schedule: np.ndarray  # (seeds, passes, states, n, n) bool: the same under the schedule
    detection_limit: float  # the largest dependency threshold of the run (0: exact)
    planted: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def clean(self) -> bool:
        return not self.mismatches

    @property
    def max_difference(self) -> float:
        return float(np.nan_to_num(self.difference, nan=np.inf).max(initial=0.0))

    @property
    def first_step(self) -> int | None:
        return min((m.step for m in self.mismatches), default=None)

    @property
    def positions(self) -> tuple[int, ...]:
        """The output positions that mismatch in some seed."""
        return tuple(sorted({m.position for m in self.mismatches}))


def _perturbation_dependency(run, x, n, seed, notes):
    """(states, n, n) bool: the measured dependency of each output on each input (the noise rule).

    The perturbed copies ride in the batch; a model whose steps mishandle a batch
    (states of another shape) is measured one copy at a time instead, and ``notes`` says so.
    """
    try:
        pert = measure_perturbation(run, x, range(n), seed=seed, chunk=n)
    except BatchShapeError as exc:
        notes.add(f"a batch of copies through the schedule gave wrong shapes ({exc}): perturbations one at a time")

        def one_by_one(batch):
            rows = [run(batch[i:i + 1]) for i in range(batch.shape[0])]
            return [torch.cat([r[j] for r in rows]) for j in range(len(rows[0]))]

        pert = measure_perturbation(one_by_one, x, range(n), seed=seed, chunk=n)
    thresholds, _ = noise_thresholds(pert.noise, pert.scale)
    return dependent(pert.norms, thresholds), float(thresholds.max(initial=0.0))


def _shape_noise(run, x, n, full_states) -> np.ndarray:
    """(states, n): the largest change of output q between identical inputs without a cache (repeat, truncation)."""
    again = run(x)
    noise = torch.stack([(a[0] - b[0]).norm(dim=-1) for a, b in zip(again, full_states)]).double()
    for q in range(n - 1):
        short = run(x[:, :q + 1])
        change = torch.stack([(a[0, q] - b[0, q]).norm() for a, b in zip(short, full_states)]).double()
        noise[:, q] = torch.maximum(noise[:, q], change)
    return noise.numpy()


def schedule_audit(build, width: int, name: str, n: int, *, prefix: int | None = None, step: int | None = None,
                   seeds: int = 2, dtype: str = "auto", hook=None, label: str | None = None) -> ScheduleAudit:
    """Schedule ``name`` (:data:`SCHEDULES`) of ``build(seed)``'s model (eval, seeded weights) against its full forward.

    ``n`` positions; ``width`` is the input embedding width C; ``label`` names the model in the report; ``dtype`` ``"auto"`` keeps the model's
    own, else the model is cast; ``hook(model)`` (a planted bug such as
    :func:`drop_cache_position`, or a user's patch) is applied to each built model.
    """
    schedule = name
    the_plan = plan(schedule, n, prefix=prefix, step=step)
    if type(seeds) is not int or seeds < 1:
        raise InputError(f"seeds must be >= 1, got {seeds}", "--seeds")
    diffs, noises, scales, dep_full, dep_sched, limits, names, used = [], [], [], [], [], [], None, None
    notes: set[str] = set()
    for seed in range(seeds):
        model = build(seed)
        if dtype != "auto":
            model = model.to(getattr(torch, dtype))
        used = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
        if hook is not None:
            hook(model)
        x = random_embeddings(n, width, seed, used)
        how = calling(model, x)
        full, sched = full_forward(model, how), schedule_forward(model, how, the_plan)
        with torch.no_grad():
            ref = full(x)
            got = sched(x)
            k = len(ref)
            names = tuple(f"layer {i + 1}" for i in range(k - 1)) + ("output",)
            diffs.append(np.stack([np.stack([(got[p * k + j][0] - ref[j][0]).norm(dim=-1).double().numpy()
                                             for j in range(k)]) for p in range(len(the_plan.passes))]))
            noises.append(_shape_noise(full, x, n, ref))
            scales.append(torch.stack([h[0].norm(dim=-1) for h in ref]).double().numpy())
        dep, limit_full = _perturbation_dependency(full, x, n, seed, notes)
        dep_full.append(dep)
        dep, limit_sched = _perturbation_dependency(sched, x, n, seed, notes)
        dep_sched.append(dep.reshape(len(the_plan.passes), k, n, n))
        limits.append(max(limit_full, limit_sched))
    difference = np.stack(diffs)  # (S, passes, states, n)
    noise = np.stack(noises)  # (S, states, n)
    tolerance, rho = noise_thresholds(noise, np.stack(scales))
    full_dep, sched_dep = np.stack(dep_full), np.stack(dep_sched)
    mismatches = _mismatches(the_plan, names, difference, tolerance, full_dep, sched_dep)
    planted = getattr(hook, "describe", None)
    return ScheduleAudit(label or type(model).__name__, schedule, n, None if schedule == "chunked_prefill" else the_plan.steps[0][1],
                         the_plan.steps[0][1] if schedule == "chunked_prefill" else None, seeds,
                         str(used).removeprefix("torch."), the_plan.steps, the_plan.step_of(), names,
                         tuple(mismatches), difference, tolerance, float(noise.max(initial=0.0)), rho,
                         full_dep, sched_dep, max(limits), planted() if callable(planted) else None,
                         _notes(hook) + tuple(sorted(notes)))


def _notes(hook) -> tuple[str, ...]:
    never = getattr(hook, "fired", None) == []
    return ("the planted bug never fired: the model has no key/value cache layer to drop a position from",) * never


def _mismatches(the_plan, names, difference, tolerance, full_dep, sched_dep) -> list[Mismatch]:
    steps_of = the_plan.step_of()  # (passes, n)
    out = []
    seeds, passes, states, n = difference.shape
    for s in range(seeds):
        for q in range(n):
            bad_steps, first_state, value, extra, lost = set(), None, False, set(), set()
            for p in range(passes):
                for j in range(states):
                    d = difference[s, p, j, q]
                    over = bool(np.isnan(d) or d > tolerance[s, j, q])
                    more = np.flatnonzero(sched_dep[s, p, j, q] & ~full_dep[s, j, q])
                    less = np.flatnonzero(full_dep[s, j, q] & ~sched_dep[s, p, j, q])
                    if over or len(more) or len(less):
                        bad_steps.add(int(steps_of[p, q]))
                        first_state = j if first_state is None else min(first_state, j)
                        value |= over
                        extra.update(more.tolist())
                        lost.update(less.tolist())
            if bad_steps:
                worst = int(np.nanargmax(np.nan_to_num(difference[s, :, :, q], nan=np.inf).max(axis=0)))
                out.append(Mismatch(s, q, min(bad_steps), tuple(sorted(bad_steps)), names[first_state], value,
                                    float(np.nan_to_num(difference[s, :, :, q], nan=np.inf).max()),
                                    float(tolerance[s, worst, q]), tuple(sorted(extra)), tuple(sorted(lost))))
    return out


def schedule_for_spec(spec, name: str, n: int, *, backend: str = "eager",
                      prefix: int | None = None, step: int | None = None, seeds: int = 2, dtype: str = "auto",
                      hook=None) -> ScheduleAudit:
    """:func:`schedule_audit` of a small model built from a :class:`~gpu_check.audit.models.ModelSpec`."""
    from hasse.gpu_check.audit.models import build_model, is_encoder, small_config

    config = small_config(spec)
    if is_encoder(config):
        raise InputError(f"{type(config).__name__} is an encoder: it has no cache to decode with", "--scenario")
    width = getattr(config, "hidden_size", None) or getattr(config, "d_model")
    return schedule_audit(lambda seed: build_model(config, backend, seed, dtype)[0], width, name, n,
                          prefix=prefix, step=step, seeds=seeds, dtype=dtype, hook=hook, label=spec.name)

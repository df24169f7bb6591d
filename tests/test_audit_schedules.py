"""Schedules against one full forward (gpu_check/audit/schedules.py): every family with a cache, planted cache bugs.

The reference is written here, independently: the schedule run by hand (a plain loop
of model calls through the cache), values compared with a tolerance derived from the
noise measured here (a shape change without a cache, by the house rule), and
dependencies read from direct autograd through the hand-run schedule and through the
full forward (a VJP that is exactly zero is no path). The audit's verdict, per seed
and position, must equal the reference's; planted bugs (a cache that loses one
position, a stored cache shared with its resumes) must be caught at the right
positions and steps.
"""

from __future__ import annotations

import copy
import inspect
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from hasse.gpu_check.audit.models import ENCODERS, FAMILIES, ModelSpec, build_model, small_config  # noqa: E402
from hasse.gpu_check.audit.schedules import (  # noqa: E402
    drop_cache_position, plan, schedule_audit, schedule_for_spec)
from hasse.theory.errors import InputError  # noqa: E402
from hasse.views.schedule_report import schedule_json, schedule_lines  # noqa: E402

N = 8
MARGIN = 16.0  # the house rule's margin over the measured noise


# ---------------------------------------------------------------- the reference, by hand


def steps_by_hand(schedule, n, prefix=None, step=None):
    """[(start, end, resume)] in order; resume: None (go on), or the copy a prefix_cache resume starts from."""
    if schedule == "decode":
        p = n // 2 if prefix is None else prefix
        return [(0, p, None)] + [(q, q + 1, None) for q in range(p, n)]
    if schedule == "chunked_prefill":
        s = max(1, n // 4) if step is None else step
        return [(a, min(a + s, n), None) for a in range(0, n, s)]
    p = n // 2 if prefix is None else prefix
    return [(0, p, None), (p, n, "copy"), (p, n, "copy")]


def cache_argument(model):
    params = inspect.signature(model.forward).parameters
    return next(f for f in ("cache", "past_key_values", "cache_params", "state") if f in params), params


def returned_cache(out):
    for name in ("cache", "past_key_values", "cache_params", "state"):
        if getattr(out, name, None) is not None:
            return getattr(out, name)
    return None


def outputs(out, hidden):
    return (list(out.hidden_states[1:]) if hidden else []) + [out.last_hidden_state]


def hand_schedule(model, x, schedule, hidden, prefix=None, step=None):
    """[per pass: [states (1, n, C)]]: the schedule run call by call."""
    name, params = cache_argument(model)
    n = x.shape[1]
    with torch.no_grad():  # a stateful model that returns no cache keeps its state inside: hand it a cache
        own = returned_cache(model(inputs_embeds=x[:, :2].detach(), use_cache=True)) is None
    passes, pieces, stored, cache = [], [], None, None
    for i, (a, b, resume) in enumerate(steps_by_hand(schedule, n, prefix, step)):
        kwargs = {"inputs_embeds": x[:, a:b], "use_cache": True, "output_hidden_states": hidden}
        if "position_ids" in params:
            kwargs["position_ids"] = torch.arange(a, b)[None]
        if i == 0 and own:
            import transformers

            model._setup_cache(model.config, 1, x.device, x.dtype)
            cache = transformers.DynamicCache(config=model.config)
        if resume:
            cache = copy.deepcopy(stored)
        if cache is not None:
            kwargs[name] = cache
        out = model(**kwargs)
        cache = cache if own else returned_cache(out)
        if schedule == "prefix_cache" and i == 0:
            stored = copy.deepcopy(cache)
            head = outputs(out, hidden)
            continue
        pieces.append(outputs(out, hidden))
        if schedule == "prefix_cache":
            passes.append([torch.cat([h, t], dim=1) for h, t in zip(head, pieces.pop())])
    if schedule != "prefix_cache":
        passes.append([torch.cat([p[j] for p in pieces], dim=1) for j in range(len(pieces[0]))])
    return passes


def full_by_hand(model, x, hidden):
    _, params = cache_argument(model)
    kwargs = {"position_ids": torch.arange(x.shape[1])[None]} if "position_ids" in params else {}
    return outputs(model(inputs_embeds=x, use_cache=False, output_hidden_states=hidden, **kwargs), hidden)


def autograd_pattern(run, x, seed):
    """(states, n, n) bool: row q nonzero where ∂(u·state_q)/∂x_k is not exactly zero."""
    leaf = x.detach().clone().requires_grad_(True)
    states = run(leaf)
    n = x.shape[1]
    gen = torch.Generator().manual_seed(seed + 99)
    pattern = np.zeros((len(states), n, n), dtype=bool)
    for j, h in enumerate(states):
        for q in range(n):
            u = torch.randn(h.shape[-1], generator=gen, dtype=torch.float64).to(h.dtype)
            (g,) = torch.autograd.grad(h[0, q] @ u, leaf, retain_graph=True, allow_unused=True)
            if g is not None:
                pattern[j, q] = (g[0] != 0).any(dim=-1).numpy()
    return pattern


def model_and_input(build, hook, seed: int, width: int):
    """Seed ``seed``'s model (the hook applied) and its input embeddings, as the audit draws them."""
    model = build(seed)
    if hook is not None:
        hook(model)
    dtype = next(p.dtype for p in model.parameters() if p.is_floating_point())
    x = torch.randn(1, N, width, generator=torch.Generator().manual_seed(seed + 7919), dtype=torch.float64).to(dtype)
    return model, x


def reference(build, width, schedule, seeds, hook=None, prefix=None, step=None):
    """Per seed, the mismatched positions {q: steps} by hand, and whether autograd flowed through the schedule."""
    found, flowed = [], True
    for seed in range(seeds):
        model, x = model_and_input(build, hook, seed, width)
        with torch.no_grad():
            probe = model(inputs_embeds=x[:, :2], use_cache=False, output_hidden_states=True)
            hidden = probe.hidden_states is not None and len(probe.hidden_states) > 1
            full = full_by_hand(model, x, hidden)
            passes = hand_schedule(model, x, schedule, hidden, prefix, step)
            noise = torch.stack([(a[0] - b[0]).norm(dim=-1) for a, b in zip(full_by_hand(model, x, hidden), full)])
            for q in range(N - 1):
                short = full_by_hand(model, x[:, :q + 1], hidden)
                noise[:, q] = torch.maximum(noise[:, q], torch.stack([(a[0, q] - b[0, q]).norm()
                                                                      for a, b in zip(short, full)]))
        found.append((full, passes, noise.double().numpy(),
                      torch.stack([h[0].norm(dim=-1) for h in full]).double().numpy()))
    noise = np.stack([f[2] for f in found])
    scale = np.stack([f[3] for f in found])
    rho = max((noise[scale > 0] / scale[scale > 0]).max(initial=0.0), 0.0)
    tolerance = MARGIN * np.maximum(noise, rho * scale)  # (seeds, states, n)
    step_of = plan(schedule, N, prefix=prefix, step=step).step_of()
    bad = []
    for seed, (full, passes, _, _) in enumerate(found):
        model, x = model_and_input(build, hook, seed, width)
        hidden = len(full) > 1
        per_q: dict[int, set] = {}
        try:
            dep_full = autograd_pattern(lambda v: full_by_hand(model, v, hidden), x, seed)
            dep_sched = [autograd_pattern(lambda v, i=i: hand_schedule(model, v, schedule, hidden, prefix, step)[i],
                                          x, seed) for i in range(len(passes))]
        except RuntimeError:  # no backward through this kernel (or a deepcopy of graph tensors): values only
            flowed, dep_full, dep_sched = False, None, None
        for i, states in enumerate(passes):
            for q in range(N):
                value = any(float((s[0, q] - f[0, q]).norm()) > tolerance[seed, j, q]
                            for j, (s, f) in enumerate(zip(states, full)))
                dependency = dep_full is not None and not np.array_equal(dep_sched[i][:, q], dep_full[:, q])
                if value or dependency:
                    per_q.setdefault(q, set()).add(int(step_of[i, q]))
        bad.append(per_q)
    return bad, flowed


def audited(result):
    """Per seed {q: steps} from the audit."""
    out = [dict() for _ in range(result.seeds)]
    for m in result.mismatches:
        out[m.seed][m.position] = set(m.steps)
    return out


# ---------------------------------------------------------------- every family with a cache


def decoder_families():
    return [name for name in FAMILIES if name not in ENCODERS]


def built(name):
    try:
        config = small_config(ModelSpec(name))
        build_model(config, "eager", 0)
    except InputError as exc:
        pytest.skip(f"{name} does not build here: {exc}")
    return config, (lambda seed: build_model(config, "eager", seed)[0])


FINDINGS: dict = {}  # (family, schedule) -> what the model does, for the report


@pytest.mark.parametrize("schedule", ["decode", "chunked_prefill"])
@pytest.mark.parametrize("family", decoder_families())
def test_every_family_schedule_equals_the_reference_by_hand(family, schedule):
    config, build = built(family)
    width = getattr(config, "hidden_size", None) or config.d_model
    try:
        result = schedule_audit(build, width, schedule, N, seeds=1, label=family)
    except InputError as exc:
        assert "no cache" in str(exc) or "encoder" in str(exc), exc
        pytest.skip(f"{family}: {exc}")
    want, flowed = reference(build, width, schedule, 1)
    assert audited(result) == want, (family, schedule, [m for m in result.mismatches])
    FINDINGS[family, schedule] = "match" if result.clean else f"mismatch at {result.positions}"
    lines = schedule_lines(result)
    assert lines[0].startswith(f"{family}: {schedule} ") and ("MATCHES" in lines[0]) == result.clean
    json.dumps(schedule_json(result))


# ---------------------------------------------------------------- planted: a cache that loses a position


def llama():
    config = small_config(ModelSpec("llama"))
    return config, (lambda seed: build_model(config, "eager", seed)[0])


@pytest.mark.parametrize("schedule, p, kwargs", [
    ("decode", 2, {}), ("decode", 5, {}), ("chunked_prefill", 3, {"step": 2}), ("prefix_cache", 1, {}),
    ("decode", 7, {}),
])
def test_a_dropped_cache_position_is_caught_from_the_first_step_that_reads_it(schedule, p, kwargs):
    config, build = llama()
    hook = drop_cache_position(p)
    result = schedule_audit(build, config.hidden_size, schedule, N, seeds=2, hook=hook, **kwargs)
    want, flowed = reference(build, config.hidden_size, schedule, 2, hook=drop_cache_position(p), **kwargs)
    assert (flowed or schedule == "prefix_cache") and audited(result) == want  # deepcopy refuses graph tensors
    the_plan = plan(schedule, N, **kwargs)
    written = int(the_plan.step_of()[0, p])
    later = [i for i in range(len(the_plan.steps)) if i > written and the_plan.steps[i][1] > p]
    if not later:  # the last position: nothing reads it after it is written
        assert result.clean and hook.fired
        return
    assert not result.clean and result.first_step == min(later)
    assert all(m.step > written for m in result.mismatches)
    reading = {q for q in range(N) if the_plan.step_of()[0, q] > written}  # full attention reads every earlier key
    assert set(result.positions) == reading
    assert all(p in m.lost and m.state == "layer 1" for m in result.mismatches)  # layer 1 reads x_p's key directly
    assert "drop_cache_position" in schedule_lines(result)[3]


def test_a_stored_cache_shared_with_its_resumes_is_caught_at_the_second_resume():
    config, build = llama()

    def shallow_store(model):  # planted: the "stored" copy shares its layers with the cache it was copied from
        def pre(module, args, kwargs):
            cache = kwargs.get("cache")
            if cache is not None and "__deepcopy__" not in vars(cache):
                cache.__deepcopy__ = lambda memo, c=cache: _shallow(c)
        for module in model.modules():
            module.register_forward_pre_hook(pre, with_kwargs=True)

    def _shallow(cache):
        twin = copy.copy(cache)
        twin.__deepcopy__ = lambda memo: _shallow(twin)
        return twin

    result = schedule_audit(build, config.hidden_size, "prefix_cache", N, seeds=1, hook=shallow_store)
    assert not result.clean and result.first_step == 2
    assert set(result.positions) == set(range(N // 2, N)) and all(m.steps == (2,) for m in result.mismatches)
    clean = schedule_audit(build, config.hidden_size, "prefix_cache", N, seeds=1)
    assert clean.clean and clean.max_difference <= float(clean.tolerance.max())


# ---------------------------------------------------------------- refusals, plans, the report


def test_plans_and_their_steps():
    assert plan("decode", 6).steps == ((0, 3), (3, 4), (4, 5), (5, 6))
    assert plan("chunked_prefill", 8).steps == ((0, 2), (2, 4), (4, 6), (6, 8))
    assert plan("prefix_cache", 6, prefix=2).passes == ((0, 1), (0, 2))
    for schedule, kwargs in [("decode", {"prefix": 0}), ("decode", {"prefix": 6}), ("chunked_prefill", {"step": 0}),
                             ("chunked_prefill", {"step": 6}), ("prefix_cache", {"prefix": -1})]:
        with pytest.raises(InputError) as err:
            plan(schedule, 6, **kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="n >= 2"):
        plan("decode", 1)
    with pytest.raises(InputError, match="unknown schedule"):
        plan("beam", 6)


def test_refusals_are_one_line():
    with pytest.raises(InputError, match="encoder"):
        schedule_for_spec(ModelSpec("bert"), "decode", N)

    class NoCache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, inputs_embeds=None, use_cache=None, output_hidden_states=None, past_key_values=None):
            from types import SimpleNamespace

            return SimpleNamespace(last_hidden_state=self.lin(inputs_embeds.cumsum(1)), hidden_states=None)

    with pytest.raises(InputError, match="returns no cache"):
        schedule_audit(lambda seed: NoCache().double(), 4, "decode", N)

    class NoArgument(NoCache):
        def forward(self, inputs_embeds=None):
            return super().forward(inputs_embeds)

    with pytest.raises(InputError, match="takes no cache"):
        schedule_audit(lambda seed: NoArgument().double(), 4, "decode", N)


def test_the_report_caps_its_rows_and_the_json_is_complete():
    config, build = llama()
    result = schedule_audit(build, config.hidden_size, "decode", 16, prefix=2, seeds=1,
                            hook=drop_cache_position(0), label="llama")
    lines = schedule_lines(result)
    assert lines[0].startswith("llama: decode DIFFERS") and "first at step 1" in lines[0]
    rows = [line for line in lines if line.startswith("    seed ")]
    assert len(rows) == 12 and lines[-1].strip().startswith("… and 2 more")
    data = json.loads(json.dumps(schedule_json(result)))
    assert data["mismatched_positions"] == list(range(2, 16)) and data["first_step"] == 1
    assert data["values"]["tolerance"] is not None and len(data["mismatches"]) == 14

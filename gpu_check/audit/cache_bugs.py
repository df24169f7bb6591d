"""Planted cache bugs for the schedule audit's tests and self-test: a key/value cache that loses one position.

:func:`drop_cache_position` ``(p)(model)`` patches the cache object the model's
modules are called with, so that the keys and values *stored* for position ``p`` are
zeros while the step that writes ``p`` still sees them: every later step that reads
the cache reads a lost position (:mod:`gpu_check.audit.schedules` must report
mismatches from exactly that step).
"""

from __future__ import annotations

import copy

import torch

from hasse.theory.errors import InputError


class drop_cache_position:  # noqa: N801 - used as a function: drop_cache_position(p)(model)
    """A planted bug: ``drop_cache_position(p)(model)`` makes the model's key/value cache lose position ``p``.

    The cache's ``update`` is patched (on the cache object, the first time a module of
    ``model`` is called with it) so that the keys and values *stored* for position
    ``p`` are zeros, while the step that writes ``p`` still sees them: every step that
    reads the cache after ``p`` was written reads a lost position. ``fired`` records
    ``(layer, step start)`` for each drop (empty: the model has no key/value layer).
    """

    def __init__(self, p: int):
        if type(p) is not int or p < 0:
            raise InputError(f"the dropped cache position must be an integer >= 0, got {p!r}")
        self.p = p
        self.fired: list[tuple[int, int]] = []

    def describe(self) -> str:
        return f"drop_cache_position({self.p})"

    def __call__(self, model) -> None:
        for module in model.modules():
            module.register_forward_pre_hook(self._pre_hook, with_kwargs=True)

    def _pre_hook(self, module, args, kwargs):
        for name in ("cache", "past_key_values"):
            cache = kwargs.get(name)
            if cache is not None and hasattr(cache, "update") and "update" not in vars(cache):
                cache.update = _DroppingUpdate(cache, self)  # copied with the cache (deepcopy keeps it bound)
        return None


class _DroppingUpdate:
    """The patched ``cache.update``: the stored key and value of position ``p`` are zeros."""

    def __init__(self, cache, plant: drop_cache_position):
        self.cache, self.plant = cache, plant

    def __deepcopy__(self, memo):
        return _DroppingUpdate(copy.deepcopy(self.cache, memo), self.plant)

    def __call__(self, key_states, value_states, layer_idx, *args, **kwargs):
        cache, p = self.cache, self.plant.p
        layers = getattr(cache, "layers", [])
        layer = layers[layer_idx] if layer_idx < len(layers) else None
        start = layer.get_seq_length() if layer is not None and getattr(layer, "is_initialized", False) else 0
        m = key_states.shape[-2]
        original = type(cache).update
        if not start <= p < start + m:
            return original(cache, key_states, value_states, layer_idx, *args, **kwargs)
        lost_k, lost_v = key_states.clone(), value_states.clone()
        lost_k[..., p - start, :] = 0
        lost_v[..., p - start, :] = 0
        keys, values = original(cache, lost_k, lost_v, layer_idx, *args, **kwargs)
        if not (torch.equal(keys[..., -m:, :], lost_k) and torch.equal(values[..., -m:, :], lost_v)):
            raise InputError(f"cannot plant a dropped position in a {type(layers[layer_idx]).__name__} cache "
                             "(its update does not return the new keys last)")
        keys, values = keys.clone(), values.clone()  # the stored tensors keep the zeros; this step sees the truth
        keys[..., -m:, :], values[..., -m:, :] = key_states, value_states
        self.plant.fired.append((layer_idx, start))
        return keys, values

"""Stack specs: ``"sliding_window:w=4 x5, causal x1"``, presets, and building a :class:`LayerStack`.

The syntax (design.md §7, "Stacks"): layers separated by ``;`` or by commas, first layer
first; a comma piece that reads ``key=value`` continues the previous layer's spec; ``xK``
after a layer (a space before it) repeats it ``K`` times. Each layer is a catalogue spec
(``n`` filled in from the stack's size); :func:`read_stack` (what
:func:`theory.inputs.read.read` calls for a stack) also takes files and ``file.py:mask_mod``
(with their heads). A whole stack may instead be one preset (:mod:`theory.presets`,
``gemma3:n=4096``). ``repeat`` repeats the whole list.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.limits import check_stack_layers, parse_int
from hasse.theory.stack import LayerStack, StackLayer

_COUNT = re.compile(r"^(?P<spec>.*\S)\s+[x×]\s*(?P<count>\d+)\s*$")
_PARAM_PIECE = re.compile(r"^\s*[A-Za-z_]\w*\s*=")


def split_stack(text: str) -> list[tuple[str, int]]:
    """The items of a stack: ``(layer text, count)`` in order.

    Items are separated by ``;`` or by commas; a comma piece that reads ``key=value``
    continues the previous item's spec (``sliding_window:n=16,w=4 x5`` is one item).
    ``xK`` after an item (with a space before it) repeats it ``K`` times.

    >>> split_stack("sliding_window:w=4 x5, causal x1")
    [('sliding_window:w=4', 5), ('causal', 1)]
    >>> split_stack("sliding_window:n=16,w=4 x2; recurrent")
    [('sliding_window:n=16,w=4', 2), ('recurrent', 1)]
    >>> split_stack("causal x0")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: causal x0: a layer count must be a positive integer, got 0 in 'causal x0'
    """
    source = text.strip() if isinstance(text, str) else text
    if not isinstance(source, str) or not source:
        raise InputError("empty stack; expected e.g. 'sliding_window:w=4 x5, causal x1'")
    pieces: list[str] = []
    for part in source.split(";"):
        for piece in part.split(","):
            if pieces and _PARAM_PIECE.match(piece) and not pieces[-1].endswith(";"):
                pieces[-1] += "," + piece.strip()
            else:
                pieces.append(piece.strip())
        if pieces:
            pieces[-1] += ";"
    items = []
    for piece in pieces:
        piece = piece.rstrip(";").strip()
        if not piece:
            raise InputError("empty layer between separators", source)
        found = _COUNT.match(piece)
        spec, count = (found["spec"], parse_int(found["count"], "a layer count", source)) if found else (piece, 1)
        if count < 1:
            raise InputError(f"a layer count must be a positive integer, got {count} in {piece!r}", source)
        items.append((spec.strip(), count))
    return items


MaskLoader = Callable[[str, "int | None", object], "tuple[np.ndarray, str, str]"]
"""``load(layer text, n, permission) -> (mask, spec, kind)``: one layer's (n, n) mask, its canonical spec, its
kind; ``permission`` (a :class:`theory.user_code.CodePermission` or None) says whether a ``file.py:mask_mod``
layer may run."""


def build_stack(text: str, n: int | None = None, *, repeat: int = 1, load: MaskLoader | None = None,
                code=None) -> LayerStack:
    """The stack that ``text`` describes (see :func:`split_stack`), repeated ``repeat`` times.

    ``text`` may also name a preset (``gemma3:n=64``, :mod:`theory.presets`). A layer
    spec without ``n`` gets ``n``. ``load`` reads one layer (default: catalogue specs
    only, :func:`load_catalogue_layer`; the command line passes one that also reads
    files and ``file.py:mask_mod``). ``code`` is the permission of the layers ``text``
    names itself (the command line's ``--stack``: :data:`theory.user_code.ARGUMENT`);
    the layers of a stack file get None (a data file: only ``--trust-code`` runs them).

    >>> s = build_stack("sliding_window:w=2 x2, causal", n=4)
    >>> s.depth, [layer.spec for layer in s.layers]
    (3, ['sliding_window:n=4,window=2', 'sliding_window:n=4,window=2', 'causal:n=4'])
    """
    if not isinstance(repeat, int) or repeat < 1:
        raise InputError(f"{{repeat}} must be a positive integer, got {repeat}", param="repeat")
    preset = _preset(text, n)
    if preset is not None:
        check_stack_layers(preset.depth * repeat, text)  # before the layers are repeated
        return preset if repeat == 1 else LayerStack(preset.layers * repeat, f"{preset.spec} (repeat {repeat})",
                                                      preset.note)
    load = load or load_catalogue_layer
    permission = code
    if isinstance(text, str) and text.strip().endswith(".json") and ":" not in text:
        permission = None  # its layers were read from a file
        items, file_repeat, file_n = read_stack_file(text.strip())
        repeat *= file_repeat
        if file_n is not None:
            if n is not None and n != file_n:
                raise InputError(f"the stack file says n = {file_n}, the command n = {n}", text)
            n = file_n
    else:
        items = split_stack(text)
    check_stack_layers(sum(count for _, count in items) * repeat, text)  # the one limit, before any layer is built
    layers: list[StackLayer] = []
    cache: dict[str, StackLayer] = {}
    for spec, count in items:
        if spec not in cache:
            mask, canonical, kind = load(spec, n, permission)
            mask = np.ascontiguousarray(mask, dtype=bool)
            if n is None:
                n = mask.shape[0]
            cache[spec] = StackLayer(mask, canonical, kind)
        layers.extend([cache[spec]] * count)
    canonical = ", ".join(f"{cache[s].spec} x{c}" if c > 1 else cache[s].spec for s, c in items)
    if repeat > 1:
        layers = layers * repeat
        canonical = f"[{canonical}] x{repeat}"
    return LayerStack(tuple(layers), canonical)


def read_stack_file(path: str) -> tuple[list[tuple[str, int]], int, int | None]:
    """``(items, repeat, n)`` of a JSON stack file.

    The file holds ``{"layers": [...], "repeat": R, "n": N}`` (``repeat`` and ``n``
    optional). Each layer is a string in the ``--stack`` syntax (``"sliding_window:w=4
    x5"``) or ``{"mask": SPEC_OR_FILE, "count": K}``; a mask file named by a relative
    path is read relative to the JSON file's folder. A file is useful where a layer's
    name holds commas or semicolons, or where a stack is long.
    """
    import os

    from hasse.theory.inputs.json_file import read_json

    if not os.path.isfile(path):
        raise InputError("no such stack file", path)
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("layers"), list) or not data["layers"]:
        raise InputError('a stack file holds {"layers": [...], "repeat": R, "n": N} with at least one layer', path)
    unknown = set(data) - {"layers", "repeat", "n", "name", "note"}
    if unknown:
        raise InputError(f"unknown field(s) {sorted(unknown)}; a stack file has layers, repeat, n", path)
    folder = os.path.dirname(path)
    items: list[tuple[str, int]] = []
    for i, layer in enumerate(data["layers"]):
        if isinstance(layer, str):
            items.extend(split_stack(layer))
            continue
        if not isinstance(layer, dict) or not isinstance(layer.get("mask"), str) or set(layer) - {"mask", "count"}:
            raise InputError(f'layer {i + 1} must be a string or {{"mask": "...", "count": K}}', path)
        count = layer.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise InputError(f"layer {i + 1}: count must be a positive integer, got {count!r}", path)
        mask = layer["mask"]
        local = os.path.join(folder, mask.split(":")[0])
        if folder and not os.path.isabs(mask) and os.path.exists(local):
            mask = os.path.join(folder, mask)
        items.append((mask, count))
    repeat = data.get("repeat", 1)
    n = data.get("n")
    for name, value in (("repeat", repeat), ("n", n if n is not None else 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(f"{name} must be a positive integer, got {value!r}", path)
    return items, repeat, n


def _preset(text: str, n: int | None) -> LayerStack | None:
    """The preset ``text`` names (one spec of kind ``stack``), or None."""
    from hasse.theory.catalog import build_spec, parse_spec  # importing the catalogue registers the presets
    from hasse.theory.presets import names_a_preset

    if not names_a_preset(text):
        return None
    raw = parse_spec(text)[1]
    spec = text if n is None or "n" in raw else _with_n(text, n)
    _, built = build_spec(spec, "stack")
    if n is not None and built.n != n:
        raise InputError(f"the preset has {built.n} positions, not n = {n}", text)
    return built


def _with_n(spec: str, n: int) -> str:
    return f"{spec},n={n}" if ":" in spec else f"{spec}:n={n}"


def load_catalogue_layer(text: str, n: int | None, permission=None) -> tuple[np.ndarray, str, str]:
    """One layer from a catalogue spec, ``n`` filled in when the spec has no size of its own (runs no code)."""
    from hasse.theory.catalog import build_spec, get_entry, parse_spec

    name, raw = parse_spec(text)
    entry = get_entry(name.strip(), "mask", text)
    spec = text
    if entry.param("n") is not None and "n" not in raw:
        if n is None:
            raise InputError("this layer has no size: give n (--n N) or write n=N in the spec", text)
        spec = _with_n(text, n)
    parsed, built = build_spec(spec, "mask")
    if n is not None and built.n != n:
        raise InputError(f"this layer has {built.n} positions, the stack has {n}", text)
    return built.matrix, parsed.canonical, layer_kind(parsed.entry.name)


LAYER_KIND_OF = {"recurrent": "recurrent", "conv": "convolution"}  # catalogue entry -> layer kind; else attention


def layer_kind(entry_name: str) -> str:
    """``recurrent`` / ``convolution`` for the catalogue's dependency patterns of those mixers, else ``attention``.

    >>> layer_kind("recurrent"), layer_kind("conv"), layer_kind("sliding_window")
    ('recurrent', 'convolution', 'attention')
    """
    return LAYER_KIND_OF.get(entry_name, "attention")


def read_stack(text: str, reading) -> LayerStack:
    """The stack ``text`` names (a ``--stack`` text, a stack file or a preset), read as ``reading`` says.

    ``reading`` is a :class:`theory.inputs.reading.Reading`: ``n`` sizes the layers, ``repeat``
    repeats the list, ``heads`` gives a ``file.py:mask_mod`` layer's heads (its layer mask
    is their union, each head's empty rows kept as given: the policy reads them per layer
    later), ``convention`` reads a layer's array, ``code`` is the permission of the mask_mods
    ``text`` names (the layers of a stack file run only with ``trust_code``). A layer with
    several batch rows is refused: a stack describes one sequence.
    """
    from dataclasses import replace

    from hasse.theory.inputs.forms import form_of
    from hasse.theory.inputs.masks import read_grid
    from hasse.theory.user_code import TRUSTED

    def loader(item: str, size: int | None, permission):
        if form_of(item) == "spec":
            return load_catalogue_layer(item, size)
        layer = replace(reading, n=size, batch=None, queries=None, kv_len=None,
                        code=TRUSTED if reading.trust_code else permission)
        named, grid = read_grid(item, layer)
        if grid.batch_rows > 1:
            raise InputError(f"has {grid.batch_rows} batch rows; a stack layer is one sequence's mask "
                             "(check each batch row on its own)", item)
        if named.key_only:
            raise InputError("a stack layer must be square (no KV-cache or memory positions)", item)
        return named.matrix, named.spec, "attention"

    return build_stack(text, reading.n, repeat=reading.repeat, load=loader, code=reading.code)

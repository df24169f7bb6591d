"""Helpers for users' own test suites. Importable without z3 or torch.

>>> import numpy as np
>>> causal = np.tril(np.ones((4, 4), dtype=bool))
>>> assert_no_leak(causal, labels=[1, 2, 3, None])          # next-token prediction: clean
>>> assert_no_leak(causal, labels=[None, 0, None, None])    # predicts a token it has seen
Traceback (most recent call last):
...
AssertionError: 1 leak in the limit (first at depth 1):
  position 1 (target 0) depends on position 0, which holds token 0, at depth 1: 0 -> 1
reproduce: numpy.save("mask.npy", mask), then: hasse flow mask.npy --from 0 --to 1

A mask_mod that reads ``h`` needs the number of heads (a layer mixes them all):

>>> def m(b, h, q, kv):
...     return (q >= kv) | (h == 1)
>>> assert_no_leak(m, labels=[1, 2, 3, None], n=4, heads=2)
Traceback (most recent call last):
...
AssertionError: 3 leaks in the limit (first at depth 1):
  position 0 (target 1) depends on position 1, which holds token 1, at depth 1: 1 -> 0
  position 1 (target 2) depends on position 2, which holds token 2, at depth 1: 2 -> 1
  position 2 (target 3) depends on position 3, which holds token 3, at depth 1: 3 -> 2
reproduce: put m in a file, then: hasse flow FILE.py:m --n 4 --heads 2 --from 1 --to 0

The message names the positions as the mask does (a built-in spec names its streams)
and ends with the command line that shows the first witness:

>>> held = [0, 1, 1, 2, 1, [0, 2], 1]                       # F0 F1 B1 B2 P0 P1 P2: x_i, aggregates
>>> assert_no_leak("bad_butterfly_crossed:n=3", labels=[None] * 5 + [1, None], sources=held)
Traceback (most recent call last):
...
AssertionError: 1 leak in the limit (first at depth 2):
  position P1 (5) (target 1) depends on position B1 (2), which holds token 1, at depth 2: B1(2) -> F0(0) -> P1(5)
reproduce: hasse flow bad_butterfly_crossed:n=3 --from 1,2,4,6 --to 5

In pytest the helper's own frames are hidden (``__tracebackhide__``): a failing test
shows the test's line and this message, not the helper's source.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from hasse.gpu_check.torch_masks import register_input_hooks
from hasse.theory.empty_rows import LEAK_DEFAULT
from hasse.theory.errors import InputError
from hasse.theory.heads import HeadMasks, layer_mask
from hasse.theory.inputs.read import Reading, read
from hasse.theory.leak import nearest_sources

register_input_hooks()  # the torch readers of the input wing (theory.inputs.hooks); imports no torch


def _index_sets(values, n: int, what: str) -> list[frozenset[int]]:
    __tracebackhide__ = True  # pytest: a failing test shows the message, not this frame
    if len(values) != n:
        raise ValueError(f"{what}: {len(values)} entries for a mask of size {n}")
    out = []
    for v in values:
        if v is None:
            out.append(frozenset())
        elif isinstance(v, (int, np.integer)):
            out.append(frozenset([int(v)]))
        else:
            out.append(frozenset(int(x) for x in v))
    return out


def _as_grid(mask, n: int | None, heads: int | None, batch: int | None, trust_code: bool = False,
             convention: str = "auto") -> tuple[HeadMasks, list[str] | None]:
    """The masks per batch row and head of whatever ``assert_no_leak`` was given, and the names of a string's
    positions (None: plain indices; a spec names its streams)."""
    __tracebackhide__ = True
    reading = Reading(n=n, heads=heads, batch=batch, trust_code=trust_code, convention=convention)
    subject = read(mask, reading, accept=("mask",))  # as the command line reads a MASK; a mask_mod, bounded
    return subject.grid, list(subject.mask.names) if isinstance(mask, str) else None


def assert_no_leak(
    mask: np.ndarray | Callable,
    labels: Sequence[int | Iterable[int] | None],
    sources: Sequence[int | Iterable[int] | None] | None = None,
    layers: int | None = None,
    n: int | None = None,
    *,
    heads: int | None = None,
    batch: int | None = None,
    empty_rows: str = LEAK_DEFAULT,
    trust_code: bool = False,
    convention: str = "auto",
) -> None:
    """Fail (AssertionError) if any supervised position depends on a position holding its target.

    Parameters
    ----------
    mask : an ``(n, n)`` 0/1 matrix with ``mask[q, k]`` = q attends k, a
        FlexAttention-style ``mask_mod(b, h, q_idx, kv_idx)`` together with ``n``,
        or a string as the command line takes it (``"causal:n=4"``, a file). Arrays
        and torch tensors of rank 2–4 (``(H, Q, K)``, ``(B, H, Q, K)``: every batch
        row is checked, a layer is the union over heads) in any ``convention``, and
        FlexAttention ``BlockMask`` objects, are read as :func:`hasse.load_mask` reads them.
    labels : per position, the token(s) predicted there (None when unsupervised).
    sources : per position, the token(s) whose content it holds (None for a
        ``[MASK]``); default: position ``i`` holds token ``i``.
    layers : check an ``L``-layer model; default every depth (the limit).
    n : number of positions, for a mask_mod.
    heads : for a mask_mod that reads ``h``: the heads ``0 … heads-1``; a layer's
        mask is their union. Required when the mask_mod depends on ``h``.
    batch : for a mask_mod that reads ``b``: the batch rows ``0 … batch-1``, each
        checked on its own (the message names the rows that leak).
    empty_rows : how a query that attends no key is read: ``"attend-all"``
        (default, as additive-mask kernels do: every key), ``"attend-none"``
        (FlexAttention, flash kernels: zeros) or ``"error"`` (ValueError).
    trust_code : a ``.json`` mask whose ``mask`` names ``file.py:function`` runs it
        (at ``n``); default False: refused, reading JSON never runs code.
    convention : how an array's values read: ``"auto"`` (default), ``"allowed"``,
        ``"blocked"`` (true = may NOT attend, ``nn.MultiheadAttention``) or
        ``"additive"`` (0 attends, -inf / dtype minimum / <= -1e4 blocks).

    The message lists every leak with its shortest witness path (source first), the
    depth at which the first one appears, and the ``hasse flow`` command line that shows
    the first witness. In pytest this helper's frames are hidden (``__tracebackhide__``).
    """
    __tracebackhide__ = True  # pytest: a failing test shows the message, not this helper's source
    if layers is not None and (isinstance(layers, bool) or not isinstance(layers, (int, np.integer)) or layers < 0):
        raise ValueError(f"layers must be an integer >= 0 or None, got {layers!r}")
    try:
        grid, names = _as_grid(mask, n, heads, batch, trust_code, convention)
        size = grid.n
        targets = _index_sets(labels, size, "labels")
        held = _index_sets(sources, size, "sources") if sources is not None else [frozenset([i]) for i in range(size)]
        _check_range(targets, size if sources is None else None, "labels")
        queries = [(p, t) for p in range(size) for t in sorted(targets[p])]
        lines, first = [], None
        for b in range(grid.batch_rows):
            layer, found = layer_mask(grid.masks[b], empty_rows, key_only=grid.key_only)  # a cache row stays empty
            row_lines, row_first = _leak_lines(layer, held, queries, layers, found,
                                               b if grid.batch is not None else None, names)
            lines += row_lines
            first = first or row_first
    except InputError as exc:
        raise ValueError(str(exc)) from None
    if lines:
        p, t, _ = first
        options = {"--n": None if hasattr(mask, "shape") else n, "--heads": heads, "--batch": batch,
                   "--layers": layers, "--empty-rows": None if empty_rows == LEAK_DEFAULT else empty_rows,
                   "--convention": None if convention == "auto" else convention,
                   "--trust-code": "" if trust_code else None}
        sources_of_t = [i for i in range(size) if t in held[i]]
        lines.append("reproduce: " + reproduce_command(mask, options, sources_of_t, p))
        raise AssertionError("\n".join(lines))


def reproduce_command(mask, options: dict, sources: list[int], position: int) -> str:
    """The ``hasse flow`` command line that shows a leak: from the positions holding its target to its position.

    A string mask is given as it was; an array or tensor is saved first; a mask_mod is
    named as ``FILE.py:function`` (the file that holds it). ``options``: flag -> value
    (None: left out; ``""``: a flag without a value).

    >>> reproduce_command("causal:n=4", {"--layers": 2, "--heads": None}, [0, 1, 2, 5], 3)
    'hasse flow causal:n=4 --layers 2 --from 0-2,5 --to 3'
    """
    __tracebackhide__ = True
    flags = "".join(f" {flag}" + (f" {value}" if value != "" else "")
                    for flag, value in options.items() if value is not None)
    where = f"{flags} --from {_set_text(sources)} --to {position}"
    if isinstance(mask, str):
        return f"hasse flow {mask}{where}"
    if type(mask).__module__.startswith("torch") and not callable(mask):
        return f'torch.save(mask, "mask.pt"), then: hasse flow mask.pt{where}'
    if callable(mask) and not hasattr(mask, "shape"):
        name = getattr(mask, "__name__", "mask_mod")
        return f"put {name} in a file, then: hasse flow FILE.py:{name}{where}"
    return f'numpy.save("mask.npy", mask), then: hasse flow mask.npy{where}'


def _set_text(values: list[int]) -> str:
    """``0,3,5-9``: a SET of ``hasse flow`` (runs of three or more consecutive positions as ranges).

    >>> _set_text([0, 3, 5, 6, 7, 8, 9]), _set_text([4, 5])
    ('0,3,5-9', '4,5')
    """
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ",".join(f"{a}-{b}" if b - a >= 2 else ",".join(map(str, range(a, b + 1))) for a, b in runs)


def _check_range(targets, size: int | None, what: str) -> None:
    """Every target is a token index >= 0, and < ``size`` when position i holds token i (else vacuous)."""
    __tracebackhide__ = True
    bad = sorted(t for ts in targets for t in ts if t < 0 or (size is not None and t >= size))
    if bad:
        span = "a token index >= 0" if size is None else f"a token 0…{size - 1} (position i holds token i)"
        raise ValueError(f"{what}: {bad[0]} is not {span}")


MESSAGE_LEAKS = 20  # leaks listed in the message; the rest are counted


def _leak_lines(layer, held, queries, layers, found, b, names=None) -> tuple[list[str], tuple | None]:
    """The failure message's lines for one batch row (empty when it does not leak), and its first leak."""
    __tracebackhide__ = True
    from hasse.views.render_text import depth_phrase

    paths = nearest_sources(layer, held, queries)
    leaks = [(p, t, path) for (p, t) in queries if (path := paths.get((p, t))) and
             (layers is None or len(path) - 1 <= layers)]
    if not leaks:
        return [], None
    first = min(leaks, key=lambda x: len(x[2]))  # a shallowest leak: the one the command line shows
    lines = [("" if b is None else f"batch row {b}: ")
             + f"{len(leaks)} leak{'s' if len(leaks) > 1 else ''} {depth_phrase(layers, len(first[2]) - 1)}:"]

    def pos(v: int, sep: str = " ") -> str:
        return str(v) if names is None or names[v] == str(v) else f"{names[v]}{sep}({v})"

    for p, t, path in leaks[:MESSAGE_LEAKS]:
        lines.append(f"  position {pos(p)} (target {t}) depends on position {pos(path[0])}, which holds token {t}, "
                     f"at depth {len(path) - 1}: " + " -> ".join(pos(v, "") for v in path))
    if len(leaks) > MESSAGE_LEAKS:
        lines.append(f"  ... and {len(leaks) - MESSAGE_LEAKS} more leaks")
    if found.rows:
        lines.append("  " + found.describe())
    return lines, first

"""The inputs of a training scenario and the mask its user intends, per layer (numpy only).

A *scenario* is one row of model inputs of ``n`` positions: which document each
position belongs to (``-1`` for padding), the ``position_ids`` the model gets, and
the optional 2-D ``attention_mask``, 4-D mask or XLNet ``perm_mask``. Scenarios:

- ``plain``     one sequence, no mask (alias ``causal``);
- ``packed``    documents of ``lengths`` back to back, ``position_ids`` restarting at 0
                in each, NO ``attention_mask``;
- ``packed_mask`` the same with a 2-D ``attention_mask`` of ones;
- ``left_pad``  ``pad`` padding positions, then ``n - pad`` tokens (2-D mask 0…0 1…1,
                ``position_ids`` counting from the first real token);
- ``right_pad`` ``n - pad`` tokens, then ``pad`` padding positions;
- ``mask4d``    one sequence with a custom (n, n) mask passed as a 4-D ``attention_mask``;
- ``perm``      XLNet's ``perm_mask`` of the causal order (query i may not see j > i).

The *intended* mask of a layer (:func:`intended_layer_mask`): ``M[q, k]`` iff q and k
are in the same document, k is not padding, ``k <= q`` (decoders; encoders attend
both ways), and the layer's pattern allows it: a sliding window of ``w`` keys
(``q - w < k <= q``, the kit's convention and transformers'), chunks of ``c``
positions by ``position_ids`` (Llama 4), a scan (``recurrent``: causal), a short
causal convolution of width ``K`` (``conv``: ``q - K < k <= q``) or no mixing
(``none``: ``k = q``). ``mask4d`` intends the given mask, ``perm``
intends ``~perm_mask`` (each position sees itself). Padding query rows attend only
themselves there: they are excluded from every comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hasse.theory.errors import InputError

SCENARIOS = ("plain", "packed", "packed_mask", "left_pad", "right_pad", "mask4d", "perm")
ALIASES = {"causal": "plain"}
PAD = -1  # the document index of a padding position


@dataclass(frozen=True)
class Scenario:
    """One row of inputs and what its positions are."""

    name: str  # one of SCENARIOS
    docs: np.ndarray  # (n,) int: document of each position, PAD for padding
    position_ids: np.ndarray | None  # (n,) int, or None (the model's default arange)
    attention_mask: np.ndarray | None  # (n,) 0/1 2-D mask row, or None
    mask4d: np.ndarray | None = None  # (n, n) bool: True = attend, passed as (1, 1, n, n)
    perm_mask: np.ndarray | None = None  # (n, n) float, XLNet: 1 = may NOT attend

    @property
    def n(self) -> int:
        return len(self.docs)

    @property
    def real(self) -> np.ndarray:
        """(n,) bool: the positions that are not padding (the rows compared)."""
        return self.docs != PAD

    @property
    def positions(self) -> np.ndarray:
        """(n,) the position of each token inside its document (its RoPE position)."""
        return np.arange(self.n) if self.position_ids is None else self.position_ids


def parse_lengths(text: str, limit: int | None = None) -> tuple[int, ...]:
    """``"3+5+4"`` -> ``(3, 5, 4)``; each length a positive integer (64-bit text), at most ``limit`` in all.

    >>> parse_lengths("3+5+4")
    (3, 5, 4)
    >>> parse_lengths("3+0")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --documents: each document length must be a positive integer, got '3+0'
    """
    from hasse.theory.errors import clip
    from hasse.theory.limits import parse_int

    try:
        lengths = tuple(parse_int(part, "a document length") for part in str(text).split("+"))
    except InputError as exc:
        if "beyond" in str(exc):  # beyond 64 bits: say so
            raise InputError(str(exc), "--documents") from None
        lengths = ()  # not an integer: the message below
    if not lengths or min(lengths) < 1:
        raise InputError(f"each document length must be a positive integer, got {clip(text, 60)!r}", "--documents")
    if limit is not None and sum(lengths) > limit:  # before any position is laid out
        raise InputError(f"the documents have {sum(lengths):,} positions in all, more than {limit:,}", "--documents")
    return lengths


def make_scenario(name: str, n: int | None = None, *, lengths=None, pad: int | None = None,
                  mask: np.ndarray | None = None) -> Scenario:
    """The inputs of scenario ``name`` (see the module docstring) at ``n`` positions.

    ``lengths`` (packed) gives ``n`` as their sum; ``pad`` defaults to ``n // 4``
    (at least 1); ``mask`` (mask4d) gives ``n`` as its size.

    >>> s = make_scenario("packed", lengths=(2, 3))
    >>> s.docs.tolist(), s.position_ids.tolist(), s.attention_mask
    ([0, 0, 1, 1, 1], [0, 1, 0, 1, 2], None)
    >>> s = make_scenario("left_pad", 5, pad=2)
    >>> s.docs.tolist(), s.position_ids.tolist(), s.attention_mask.tolist()
    ([-1, -1, 0, 0, 0], [0, 0, 0, 1, 2], [0, 0, 1, 1, 1])
    """
    name = ALIASES.get(name, name)
    if name not in SCENARIOS:
        raise InputError(f"unknown scenario {name!r} (one of {', '.join(SCENARIOS)})", "--scenario")
    if name in ("packed", "packed_mask"):
        lengths = tuple(lengths) if lengths else ((n // 2, n - n // 2) if n and n >= 2 else None)
        if not lengths:
            raise InputError("a packed scenario needs --documents (e.g. 3+5+4) or --n >= 2", "--scenario")
        if n is not None and n != sum(lengths):
            raise InputError(f"--n {n} differs from the sum of --documents ({sum(lengths)})", "--documents")
        docs = np.repeat(np.arange(len(lengths)), lengths)
        positions = np.concatenate([np.arange(m) for m in lengths])
        ones = np.ones(len(docs), dtype=np.int64) if name == "packed_mask" else None
        return Scenario(name, docs, positions, ones)
    if name == "mask4d":
        if mask is None:
            raise InputError("scenario mask4d needs --mask MASK (a spec or a mask file)", "--scenario")
        mask = np.asarray(mask, dtype=bool)
        if n is not None and n != mask.shape[0]:
            raise InputError(f"--n {n} differs from the mask's size {mask.shape[0]}", "--mask")
        empty = [q for q in range(mask.shape[0]) if not mask[q].any()]
        if empty:
            raise InputError(f"the mask has {len(empty)} empty row(s) (first: query {empty[0]}); "
                             "a 4-D mask row that attends nothing is undefined", "--mask")
        return Scenario(name, np.zeros(mask.shape[0], dtype=np.int64), None, None, mask4d=mask)
    if n is None or n < 1:
        raise InputError(f"--n must be a positive integer, got {n}", "--n")
    if name in ("left_pad", "right_pad"):
        pad = max(1, n // 4) if pad is None else pad
        if not 1 <= pad < n:
            raise InputError(f"--pad must be between 1 and n - 1 = {n - 1}, got {pad}", "--pad")
        real = np.arange(n) >= pad if name == "left_pad" else np.arange(n) < n - pad
        docs = np.where(real, 0, PAD)
        keep = real.astype(np.int64)
        positions = np.clip(np.cumsum(keep) - 1, 0, None) if name == "left_pad" else None
        return Scenario(name, docs, positions, keep)
    docs = np.zeros(n, dtype=np.int64)
    if name == "perm":
        perm = np.triu(np.ones((n, n)), 1)  # XLNet: perm_mask[i, j] = 1: i may not attend j
        return Scenario(name, docs, None, None, perm_mask=perm)
    return Scenario(name, docs, None, None)


def intended_layer_mask(scenario: Scenario, kind: str = "full", size: int | None = None, *,
                        bidirectional: bool = False) -> np.ndarray:
    """(n, n) bool: the mask the user intends for one layer of pattern ``kind`` in ``scenario``.

    ``kind`` is ``"full"``, ``"sliding"`` (a window of ``size`` keys, self included),
    ``"chunked"`` (chunks of ``size`` positions by ``position_ids``), ``"recurrent"`` (a
    scan or linear attention: causal within the document), ``"conv"`` (a causal
    convolution of width ``size``: ``q - K < k <= q`` within the document) or ``"none"``
    (no token mixing: the position itself); ``bidirectional`` for encoders. Always
    within the document, never a pad key; padding rows attend only themselves.

    >>> s = make_scenario("packed", lengths=(2, 3))
    >>> intended_layer_mask(s, "sliding", 2).astype(int).tolist()
    [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]
    >>> bool((intended_layer_mask(s, "conv", 2) == intended_layer_mask(s, "sliding", 2)).all())
    True
    >>> intended_layer_mask(s, "none").astype(int).diagonal().tolist()
    [1, 1, 1, 1, 1]
    """
    n = scenario.n
    q, k = np.arange(n)[:, None], np.arange(n)[None, :]
    docs, real = scenario.docs, scenario.real
    if scenario.mask4d is not None:
        allowed = scenario.mask4d.copy()
    elif scenario.perm_mask is not None:
        allowed = (scenario.perm_mask == 0) | (q == k)
    else:
        allowed = (docs[:, None] == docs[None, :]) & real[None, :]
        if not bidirectional:
            allowed &= k <= q
    if kind == "sliding":
        allowed &= (k > q - size) & (k < q + size) if bidirectional else (k > q - size)
    elif kind == "chunked":
        pos = scenario.positions
        allowed &= (pos[:, None] // size) == (pos[None, :] // size)
    elif kind == "recurrent":  # a scan: causal within the document, whatever the direction of the model
        allowed &= k <= q
    elif kind == "conv":  # a short causal convolution of width K, reset at the document's start
        allowed &= (k > q - size) & (k <= q)
    elif kind == "none":  # no token mixing: each position only itself
        allowed &= k == q
    elif kind != "full":
        raise InputError(f"unknown layer kind {kind!r}")
    allowed[~real] = False
    allowed[~real, ~real] = True  # a padding row attends only itself (it is never compared)
    return allowed


def intended_masks(scenario: Scenario, pattern, *, bidirectional: bool = False) -> list[np.ndarray]:
    """One intended mask per layer, first layer first; ``pattern`` is a list of ``(kind, size)``."""
    return [intended_layer_mask(scenario, kind, size, bidirectional=bidirectional) for kind, size in pattern]

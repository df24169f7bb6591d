"""The user's batch for ``hasse audit``: read from a file, cut to one row, and its layout (documents, padding).

- :func:`read_batch` -- a ``.pt`` (``torch.load(weights_only=True)``), ``.npz`` or ``.json``
  file of named arrays -> a dict of tensors;
- :func:`normalize_batch` -- one row of it (``row`` when there are several, said in the
  note), ``input_ids`` int64, masks 0/1 (2-D) or boolean (4-D), ``labels`` set aside
  (the audit measures hidden states, not the loss);
- :func:`layout_of_batch` -- the :class:`~gpu_check.audit.scenarios.Scenario` (name ``"batch"``)
  the row describes: documents from ``cu_seq_lens_q`` / ``cu_seq_lens_k``, ``seq_idx`` or
  ``position_ids`` restarting at 0 (the first present, in that order; all present must
  agree on the real tokens), padding from a 2-D ``attention_mask`` (0 = pad), a 4-D
  ``attention_mask`` kept as the row's own mask;
- :func:`batch_for_layout` -- the other way: a row of ``input_ids`` and the scenario's
  ``position_ids`` / ``attention_mask`` for a built-in scenario.

Every inconsistent input is one :class:`InputError` line naming the field.
"""

from __future__ import annotations

import os

import numpy as np
import torch

from hasse.gpu_check.audit.scenarios import PAD, Scenario
from hasse.theory.errors import InputError

SOURCE = "--batch"
ROW_KEYS = ("input_ids", "inputs_embeds", "position_ids", "attention_mask", "seq_idx", "labels",
            "token_type_ids")  # per-row fields: (B, n, ...) tensors
META_KEYS = ("cu_seq_lens_q", "cu_seq_lens_k", "max_length_q", "max_length_k")  # 1-D or scalar metadata
SET_ASIDE = ("labels",)  # read, checked for length, not passed to the model


def read_batch(path: str) -> dict:
    """The named arrays of a ``.pt``, ``.npz`` or ``.json`` file, as tensors (one-line InputError otherwise)."""
    path = str(path)
    if not os.path.isfile(path):
        raise InputError("no such file (a batch is a .pt, .npz or .json file of named arrays)", path)
    ext = os.path.splitext(path)[1].lower()
    if ext in (".pt", ".pth"):
        try:
            data = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - a damaged file, or one holding more than tensors
            raise InputError(f"cannot read it with torch.load(weights_only=True) ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:120] if str(exc) else ''})", path) from None
    elif ext == ".npz":
        try:
            with np.load(path, allow_pickle=False) as npz:
                data = {k: npz[k] for k in npz.files}
        except Exception as exc:  # noqa: BLE001 - not an npz, or object arrays
            raise InputError(f"cannot read it as .npz ({type(exc).__name__})", path) from None
    elif ext == ".json":
        from hasse.theory.inputs.json_file import read_json

        data = read_json(path)
    else:
        raise InputError(f"a batch is a .pt, .npz or .json file, got {ext or 'no extension'}", path)
    if hasattr(data, "keys") and not isinstance(data, dict):  # a BatchEncoding or another mapping
        data = dict(data)
    if not isinstance(data, dict) or not data:
        raise InputError(f"a batch file holds a dict of named arrays, got {type(data).__name__}", path)
    return {key: _tensor(key, value, path) for key, value in data.items()}


def _tensor(key, value, source: str):
    if not isinstance(key, str):
        raise InputError(f"batch keys must be strings, got {key!r}", source)
    if isinstance(value, torch.Tensor):
        return value
    if (value is None or isinstance(value, (bool, int, float, str))) and key not in ROW_KEYS:
        return value  # a keyword option (use_cache=False, return_dict) or scalar metadata: passed as it is
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        raise InputError(f"{key} is not a rectangular array of numbers", source) from None
    if array.dtype == object or array.dtype.kind not in "biuf":
        raise InputError(f"{key} is not a rectangular array of numbers", source)
    if array.dtype.kind == "f" and array.dtype != np.float64:
        array = array.astype(np.float64)
    return torch.from_numpy(np.ascontiguousarray(array))


def normalize_batch(batch: dict, row: int = 0, source: str = SOURCE) -> tuple[dict, str | None]:
    """``(one row of batch, note)``: tensors of batch dimension 1; the note says which row of several was taken.

    Per-row fields (:data:`ROW_KEYS`) must share the batch size ``B`` and the length ``n``;
    ``row`` picks one when ``B > 1``. ``input_ids``, ``position_ids``, ``labels`` become
    int64, ``seq_idx`` int32, a 2-D ``attention_mask`` int64 0/1, a 4-D one boolean
    (True = attend; a float mask is additive: 0 attends). ``labels`` are dropped (the
    note says so). Other keys pass through (a tensor whose first dimension is ``B`` is cut to the row).
    """
    if not isinstance(batch, dict) or not batch:
        raise InputError("a batch is a non-empty dict of the model's keyword arguments", source)
    batch = {key: _tensor(key, value, source) for key, value in batch.items()}
    if "input_ids" in batch and "inputs_embeds" in batch:
        raise InputError("the batch has both input_ids and inputs_embeds; give one", source)
    ranks = {"input_ids": 2, "inputs_embeds": 3, "position_ids": 2, "seq_idx": 2, "labels": 2, "token_type_ids": 2}
    sizes = {}
    for key, rank in ranks.items():
        if key in batch:
            t = batch[key]
            if t.dim() == rank - 1 and key != "inputs_embeds":
                t = batch[key] = t[None]
            if t.dim() != rank:
                raise InputError(f"{key} must have {rank} dimensions (batch, positions{', width' if rank == 3 else ''}),"
                                 f" got shape {tuple(t.shape)}", source)
            sizes[key] = tuple(t.shape[:2])
    if "attention_mask" in batch:
        t = batch["attention_mask"]
        if t.dim() == 1:
            t = batch["attention_mask"] = t[None]
        if t.dim() == 2:
            sizes["attention_mask"] = tuple(t.shape)
        elif t.dim() == 4:
            if t.shape[-1] != t.shape[-2]:
                raise InputError(f"a 4-D attention_mask must be (batch, heads, n, n), got shape {tuple(t.shape)}",
                                 source)
            sizes["attention_mask"] = (t.shape[0], t.shape[-1])
        else:
            raise InputError(f"attention_mask must be 2-D (batch, positions) or 4-D (batch, heads, n, n), got shape "
                             f"{tuple(t.shape)}", source)
    if not sizes:
        raise InputError("the batch names no positions: give input_ids or inputs_embeds (and position_ids, "
                         "attention_mask, cu_seq_lens_q/k, seq_idx as the model takes them)", source)
    first = next(iter(sizes))
    b, n = sizes[first]
    for key, (bk, nk) in sizes.items():
        if nk != n:
            raise InputError(f"{key} has {nk} positions, {first} has {n}", source)
        if bk != b and bk != 1:
            raise InputError(f"{key} has {bk} rows, {first} has {b}", source)
    b = max(bk for bk, _ in sizes.values())
    if n < 1:
        raise InputError("the batch has no positions", source)
    if not 0 <= row < b:
        raise InputError(f"--row must be between 0 and {b - 1} (the batch has {b} row{'s' if b > 1 else ''}), got {row}",
                         "--row")
    out, notes = {}, []
    for key, t in batch.items():
        if isinstance(t, torch.Tensor) and key in ROW_KEYS or (key == "attention_mask"):
            t = t[row:row + 1] if t.shape[0] == b else t[:1]
        elif isinstance(t, torch.Tensor) and key not in META_KEYS and t.dim() >= 1 and t.shape[0] == b and b > 1:
            t = t[row:row + 1]
        out[key] = t
    for key in ("input_ids", "position_ids", "labels", "seq_idx", "token_type_ids"):
        if key in out:
            t = out[key]
            if t.is_floating_point() and not torch.equal(t, t.round()):
                raise InputError(f"{key} must be integers, got {t.dtype}", source)
            out[key] = t.to(torch.int32 if key == "seq_idx" else torch.int64)
    if "input_ids" in out and (out["input_ids"] < 0).any():
        raise InputError(f"input_ids must be >= 0, got {int(out['input_ids'].min())}", source)
    if "inputs_embeds" in out and not out["inputs_embeds"].is_floating_point():
        raise InputError(f"inputs_embeds must be floating point, got {out['inputs_embeds'].dtype}", source)
    if "attention_mask" in out:
        out["attention_mask"] = _mask(out["attention_mask"], source)
    for key in ("cu_seq_lens_q", "cu_seq_lens_k"):
        if key in out:
            t = out[key]
            if not isinstance(t, torch.Tensor) or t.is_floating_point() or t.dim() != 1:
                raise InputError(f"{key} must be a 1-D integer tensor (document starts, then the total)", source)
            out[key] = t.to(torch.int32)
    if b > 1:
        notes.append(f"the batch has {b} rows; auditing row {row} (--row R picks another)")
    for key in SET_ASIDE:
        if out.pop(key, None) is not None:
            notes.append(f"{key} set aside (the audit measures the hidden states, not the loss)")
    return out, ("; ".join(notes) or None)


def _mask(t: torch.Tensor, source: str) -> torch.Tensor:
    if t.dim() == 2:
        values = set(torch.unique(t.to(torch.float64)).tolist())
        if not values <= {0.0, 1.0}:
            shown = sorted(values - {0.0, 1.0})[:3]
            raise InputError(f"a 2-D attention_mask holds 0 (pad) and 1 (token) only, got {shown}", source)
        return t.to(torch.int64)
    if t.dtype == torch.bool:
        return t
    if t.is_floating_point() and (t < 0).any():  # additive: 0 attends, a negative bias blocks
        return t == 0
    values = set(torch.unique(t.to(torch.float64)).tolist())
    if not values <= {0.0, 1.0}:
        raise InputError("a 4-D attention_mask is boolean, 0/1, or additive (0 attends, negative blocks)", source)
    return t != 0


def _starts_from_cu(cu: torch.Tensor, n: int, key: str, source: str) -> np.ndarray:
    c = cu.to(torch.int64).numpy()
    if len(c) < 2 or c[0] != 0:
        raise InputError(f"{key} must start at 0 and end at the number of positions, got {c.tolist()[:8]}", source)
    if (np.diff(c) <= 0).any():
        at = int(np.flatnonzero(np.diff(c) <= 0)[0])
        raise InputError(f"{key} must increase strictly, got {int(c[at])} then {int(c[at + 1])}", source)
    if c[-1] != n:
        raise InputError(f"{key} ends at {int(c[-1])}, but the row has {n} positions", source)
    return np.repeat(np.arange(len(c) - 1), np.diff(c))


def _same_partition(a: np.ndarray, b: np.ndarray, real: np.ndarray) -> bool:
    a, b = a[real], b[real]
    return np.array_equal(a[:, None] == a[None, :], b[:, None] == b[None, :])


def layout_of_batch(batch: dict, n: int | None = None, source: str = SOURCE) -> Scenario:
    """The :class:`Scenario` (name ``"batch"``) one row of the model's arguments describes (module docstring)."""
    if not isinstance(batch, dict):
        raise InputError("a batch is a dict of the model's keyword arguments", source)
    length = None
    for key in ("input_ids", "inputs_embeds", "position_ids", "seq_idx", "attention_mask"):
        t = batch.get(key)
        if isinstance(t, torch.Tensor):
            if t.dim() == 0 or t.shape[0] != 1:
                rows = t.shape[0] if t.dim() else 0
                raise InputError(f"{key} has {rows} rows; the layout is of one row (normalize_batch picks one)", source)
            m = t.shape[-1] if key == "attention_mask" and t.dim() == 4 else t.shape[1]
            if length is not None and m != length:
                raise InputError(f"{key} has {m} positions, not {length}", source)
            length = m
    if n is not None and length is not None and n != length:
        raise InputError(f"--n {n} differs from the batch's {length} positions", "--n")
    n = length if length is not None else n
    if not n:
        raise InputError("the batch names no positions (input_ids, inputs_embeds or position_ids)", source)
    mask = batch.get("attention_mask")
    mask4d = None
    attention = None
    real = np.ones(n, dtype=bool)
    if isinstance(mask, torch.Tensor) and mask.dim() == 2:
        attention = mask[0].to(torch.int64).numpy()
        if not set(np.unique(attention).tolist()) <= {0, 1}:
            raise InputError("a 2-D attention_mask holds 0 (pad) and 1 (token) only", source)
        real = attention == 1
    elif isinstance(mask, torch.Tensor) and mask.dim() == 4:
        mask4d = _mask(mask, source)[0].any(dim=0).numpy()  # (n, n): the union over heads
        if not mask4d.any(axis=1).all():
            q = int(np.flatnonzero(~mask4d.any(axis=1))[0])
            raise InputError(f"the 4-D attention_mask's row {q} attends nothing (undefined)", source)
    if not real.any():
        raise InputError("the attention_mask marks every position as padding", source)
    found: list[tuple[str, np.ndarray]] = []
    for key in ("cu_seq_lens_q", "cu_seq_lens_k"):
        if key in batch and batch[key] is not None:
            found.append((key, _starts_from_cu(torch.as_tensor(batch[key]), n, key, source)))
    if "seq_idx" in batch and batch["seq_idx"] is not None:
        s = torch.as_tensor(batch["seq_idx"])[0].to(torch.int64).numpy()
        if (np.diff(s) < 0).any():
            at = int(np.flatnonzero(np.diff(s) < 0)[0])
            raise InputError(f"seq_idx must not decrease, got {int(s[at])} then {int(s[at + 1])} at position {at + 1}",
                             source)
        found.append(("seq_idx", np.concatenate([[0], np.cumsum(np.diff(s) != 0)])))
    positions = None
    if "position_ids" in batch and batch["position_ids"] is not None:
        positions = torch.as_tensor(batch["position_ids"])[0].to(torch.int64).numpy()
        if (positions < 0).any():
            raise InputError(f"position_ids must be >= 0, got {int(positions.min())}", source)
        docs = np.cumsum(positions == 0) - (1 if positions[0] == 0 else 0)
        idx = np.flatnonzero(real)
        for a, b in zip(idx[:-1], idx[1:]):
            if docs[a] == docs[b] and positions[b] != positions[a] + 1:
                raise InputError(f"position_ids go from {int(positions[a])} to {int(positions[b])} at position {b} "
                                 "(a document counts up by 1, a new one restarts at 0)", source)
        found.append(("position_ids", docs))
    for key, docs in found[1:]:
        if not _same_partition(found[0][1], docs, real):
            raise InputError(f"{found[0][0]} and {key} give different documents", source)
    segments = found[0][1] if found else np.zeros(n, dtype=np.int64)
    docs = np.full(n, PAD, dtype=np.int64)
    _, renumbered = np.unique(segments[real], return_inverse=True)
    docs[real] = renumbered
    return Scenario("batch", docs, positions, attention, mask4d=mask4d)


def batch_for_layout(layout: Scenario, n: int, vocab: int, seed: int = 0) -> dict:
    """One row of model arguments for a built-in scenario: seeded ``input_ids`` < ``vocab`` and its masks."""
    if n != layout.n:
        raise InputError(f"--n {n} differs from the layout's {layout.n} positions", "--n")
    if vocab < 1:
        raise InputError(f"the vocabulary must have at least one token, got {vocab}")
    gen = torch.Generator().manual_seed(seed + 104_729)
    batch = {"input_ids": torch.randint(0, vocab, (1, n), generator=gen, dtype=torch.int64)}
    if layout.position_ids is not None:
        batch["position_ids"] = torch.as_tensor(np.asarray(layout.position_ids), dtype=torch.int64)[None]
    if layout.attention_mask is not None:
        batch["attention_mask"] = torch.as_tensor(np.asarray(layout.attention_mask), dtype=torch.int64)[None]
    if layout.mask4d is not None:
        batch["attention_mask"] = torch.as_tensor(np.asarray(layout.mask4d, dtype=bool))[None, None]
    if layout.perm_mask is not None:
        raise InputError("scenario perm (XLNet's perm_mask) has no batch for a user's model", "--scenario")
    return batch

"""mask_arrays_read_as_defined — every way the ecosystem writes a mask as an array is read back as that mask.

Statement. For every mask ``M`` of size ``n`` (zero diagonal: ``2^(n(n-1))`` masks), and
``M`` with its diagonal set, the array readers behind every command that loads a mask
(:func:`theory.inputs.arrays.to_grid`: :func:`~theory.inputs.arrays.per_head`,
:func:`~theory.inputs.arrays.allowed`, :func:`~theory.inputs.arrays.grid_of`; the layer of
one batch row, :meth:`theory.heads.HeadMasks.layer`) read each form below as design.md §7
defines it:

- conventions: ``bool`` allowed (``auto`` and ``allowed``), ``~M`` as ``blocked``;
  ``int64`` and ``uint8`` 0/1 (``auto``, ``allowed``; ``~M`` ``blocked``); ``float32`` 0/1
  (``allowed``; ``auto`` unless all zero, which is refused as ambiguous; ``~M`` ``blocked``);
  additive biases in ``float16``, ``float32`` and ``float64``: ``0 / -inf``, ``0 / the
  dtype's minimum``, ``0 / -1e30``, blocked at exactly ``BLOCKED_AT = -1e4`` with soft biases
  on the allowed entries (``-9999``, ``2.5``, an ALiBi-like ``-|q - k| / 8``), under
  ``additive`` and ``auto`` (``auto``: additive when some value is negative; an all-zero
  float array is refused); ``bool`` as ``additive`` is refused;
- ``auto`` on a ``bool`` or integer square array with no query attending itself anywhere
  warns (true may mean blocked), and nothing else warns;
- heads and batch rows: ``(H, n, n)`` (heads of one layer), ``(B * H, n, n)`` with ``heads=H``
  (``nn.MultiheadAttention``'s index ``b * H + h``), ``(B, H, n, n)`` additive, and the
  broadcast forms ``(B, 1, n, n)``, ``(1, H, n, n)``, ``(1, 1, n, n)``: the masks per
  batch row and head as written, ``heads`` / ``batch`` declared exactly for a dimension of
  size > 1, and (for ``M`` as given) the layer of each batch row the union over heads of
  each head read by the empty-row policy (``attend-none``: as given; ``attend-all``: a
  head's empty rows all true, before the union), with the rows empty in some head listed.
  The heads split ``M`` by the pattern ``(q + 2k) mod 3 = 0``, so heads have empty rows;
- bad values: NaN anywhere, ``+inf`` in an additive mask, a value other than 0/1 in a 0/1
  array (a negative one under ``allowed``) are refused with an ``InputError``.

How the forms are laid out (the readers run a few times per mask, not forty): every
``(B, ...)`` form holds all the masks of a batch of the scan at once, each mask ``M`` as
two batch rows, ``M`` then ``Mᵀ`` (a mask again); each mask's layer is checked under
``attend-none`` in its own row and under ``attend-all`` in the row where it is the
transpose of another. Each ``auto`` form holds only masks that ``auto`` reads that
way alone; the masks it must refuse alone (all zero as float 0/1, all allowed as additive)
are read alone. Every mask is also read alone in one 2-D or batch-1 form, or one bad value,
chosen by its bits, so the 2-D and 3-D paths see every form over the class.

What a verdict covers. The numpy path of :mod:`theory.inputs.arrays` and the union over
heads of :mod:`theory.heads`, as they are in this checkout, on every mask of size
``n <= 4``; for ``n >= 5`` a seeded uniform sample of 4,096 masks (the verdict line says
"sample … not a full proof"). Torch tensors and FlexAttention ``BlockMask`` (read by
``gpu_check/torch_masks.py``, which proofs may not import) are out of scope; so are files
(:mod:`theory.inputs.formats`).

The definitions are written here from the rules above with numpy comparisons on the
values this module put into each array; nothing is shared with the readers.

Counterexample: the mask, the form (shape, dtype, convention, keyword arguments), what the
reader returned (or raised) and what the definition says.

Exhaustive method only (:mod:`proofs.engine_checks`): the readers are Python. n = 4 takes
about two seconds on one core.

References: design.md §2 (heads, empty rows), §7 (MASK forms, conventions); docs/architecture.md.
"""

from __future__ import annotations

import warnings

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import engine_theorem, safely
from hasse.theory import batch

NAME = "mask_arrays_read_as_defined"
STATEMENT = ("for every mask, the array readers read bool, integer, float 0/1 and additive (-inf, dtype minimum, "
             "-1e30, the blocking threshold, soft biases) arrays in every convention, per-head, (B*H, n, n) and "
             "batched arrays with broadcast dimensions as the definition: masks per batch row and head, the union "
             "over heads under both empty-row policies, the refusals and the warning")
THRESHOLD = -1e4  # design.md §7: additive values at or below this block (written here, not read from the module)


def head_split(m: np.ndarray) -> list[np.ndarray]:
    """Two heads whose union is ``m``: entries with ``(q + 2k) mod 3 = 0``, and the rest."""
    n = len(m)
    q, k = np.indices((n, n))
    pattern = (q + 2 * k) % 3 == 0
    return [m & pattern, m & ~pattern]


def filled(m: np.ndarray) -> np.ndarray:
    out = m.copy()
    out[~m.any(axis=1)] = True
    return out


def additive(m: np.ndarray, dtype, blocked, allowed_values=None) -> np.ndarray:
    """``m`` as an additive bias: ``blocked`` where false, 0 (or ``allowed_values``) where true."""
    out = np.full(m.shape, blocked, dtype=dtype)
    out[m] = 0 if allowed_values is None else np.asarray(allowed_values, dtype=dtype)[m]
    return out


def soft_biases(m: np.ndarray) -> np.ndarray:
    """Finite biases above the threshold on every entry: they let information through."""
    n = m.shape[-1]
    q, k = np.indices((n, n))
    choices = np.array([0.0, -9999.0, 2.5, -1.0])
    return np.where((q + k) % 4 == 3, -np.abs(q - k) / 8.0, choices[(q * 3 + k) % 4])


def _auto_soft(m: np.ndarray):
    biased = additive(m, np.float32, -np.inf, soft_biases(m))
    return biased, (m if (biased < 0).any() else "refused"), False  # auto: additive iff some value is negative


TWO_D = (  # (form, kwargs, m -> (array, expected mask or "refused", warns)) for one (n, n) mask
    ("bool, auto", {}, lambda m: (m.copy(), m, not np.diagonal(m).any())),
    ("bool, allowed", {"convention": "allowed"}, lambda m: (m.copy(), m, False)),
    ("bool ~M, blocked", {"convention": "blocked"}, lambda m: (~m, m, False)),
    ("bool, additive", {"convention": "additive"}, lambda m: (m.copy(), "refused", False)),
    ("int64, auto", {}, lambda m: (m.astype(np.int64), m, not np.diagonal(m).any())),
    ("int64 ~M, blocked", {"convention": "blocked"}, lambda m: ((~m).astype(np.int64), m, False)),
    ("uint8, allowed", {"convention": "allowed"}, lambda m: (m.astype(np.uint8), m, False)),
    ("float32 0/1, allowed", {"convention": "allowed"}, lambda m: (m.astype(np.float32), m, False)),
    ("float32 0/1, auto", {}, lambda m: (m.astype(np.float32), m if m.any() else "refused", False)),
    ("float64 ~M 0/1, blocked", {"convention": "blocked"}, lambda m: ((~m).astype(np.float64), m, False)),
    ("float32 0/-inf, auto", {}, lambda m: (additive(m, np.float32, -np.inf), "refused" if m.all() else m, False)),
    ("float64 0/-1e30, additive", {"convention": "additive"}, lambda m: (additive(m, np.float64, -1e30), m, False)),
    ("float32 0/-1e30, auto", {}, lambda m: (additive(m, np.float32, -1e30), "refused" if m.all() else m, False)),
    (f"float64 soft biases / {THRESHOLD:g}, additive", {"convention": "additive"},
     lambda m: (additive(m, np.float64, THRESHOLD, soft_biases(m)), m, False)),
    ("float32 soft biases / -inf, auto", {}, _auto_soft),
    ("float32 1/-1, allowed", {"convention": "allowed"},
     lambda m: (np.where(m & ~m.all(), 1.0, -1.0).astype(np.float32), "refused", False)),
    *((f"{np.dtype(t).name} 0/minimum, additive", {"convention": "additive"},
       lambda m, t=t: (additive(m, t, np.finfo(t).min), m, False)) for t in (np.float16, np.float32, np.float64)),
    *((f"{np.dtype(t).name} 0/-inf, additive", {"convention": "additive"},
       lambda m, t=t: (additive(m, t, -np.inf), m, False)) for t in (np.float16, np.float32, np.float64)),
)


def two_d_form(m: np.ndarray, i: int) -> tuple[str, np.ndarray, dict, object, bool]:
    """Form ``i`` of :data:`TWO_D` for ``m``: ``(form, array, kwargs, expected, warns)``."""
    name, kwargs, make = TWO_D[i]
    return (name, *make(m)[:1], kwargs, *make(m)[1:])


def auto_refusals(m: np.ndarray) -> list[int]:
    """The ``auto`` forms that must refuse ``m`` itself (all zero as float 0/1, all allowed as additive)."""
    if m.any() and not m.all():
        return []  # (the soft biases below the threshold make every other mask additive)
    return [i for i, (name, kwargs, make) in enumerate(TWO_D) if not kwargs and isinstance(make(m)[1], str)]


def pairs(ms: np.ndarray) -> np.ndarray:
    """``(2B, n, n)``: each mask followed by its transpose (every mask its own two batch rows)."""
    return np.stack([ms, ms.transpose(0, 2, 1)], axis=1).reshape(-1, *ms.shape[1:])


def batched_forms(ms: np.ndarray) -> list[tuple[str, np.ndarray, dict, np.ndarray, np.ndarray, int | None, int | None]]:
    """``(form, array, kwargs, masks as written (R, H, n, n), mask of each row, heads, batch)``, many masks at once.

    Batch row ``2i`` holds mask ``i``, row ``2i + 1`` its transpose; the head forms split each row by
    :func:`head_split`. An ``auto`` form holds only the masks whose own array ``auto`` reads that way.
    """
    b, n = ms.shape[0], ms.shape[-1]
    rows = pairs(ms)  # (2B, n, n)
    of = np.repeat(np.arange(b), 2)
    heads = np.array([head_split(r) for r in rows])  # (2B, 2, n, n)
    some = np.flatnonzero(ms.reshape(b, -1).any(axis=1))  # float 0/1 auto: allowed unless all zero
    blocked = np.flatnonzero(~ms.reshape(b, -1).all(axis=1))  # float additive auto: some -inf
    minimum = np.finfo(np.float32).min
    out = [
        ("(B, 1, n, n) bool, auto", rows[:, None].copy(), {}),
        ("(B, 1, n, n) bool ~M, blocked", ~rows[:, None], {"convention": "blocked"}),
        ("(B, 1, n, n) int64, auto", rows[:, None].astype(np.int64), {}),
        ("(B, 1, n, n) uint8 ~M, blocked", (~rows[:, None]).astype(np.uint8), {"convention": "blocked"}),
        ("(B, 1, n, n) float64 0/1, allowed", rows[:, None].astype(np.float64), {"convention": "allowed"}),
        ("(B, 1, n, n) float32 0/-1e30, additive", additive(rows[:, None], np.float32, -1e30),
         {"convention": "additive"}),
        (f"(B, 1, n, n) float64 soft biases / {THRESHOLD:g}, additive",
         additive(rows[:, None], np.float64, THRESHOLD, np.broadcast_to(soft_biases(rows), rows.shape)[:, None]),
         {"convention": "additive"}),
    ]
    for dtype in (np.float16, np.float32, np.float64):
        name = np.dtype(dtype).name
        out.append((f"(B, 1, n, n) {name} 0/minimum, additive", additive(rows[:, None], dtype, np.finfo(dtype).min),
                    {"convention": "additive"}))
        out.append((f"(B, 1, n, n) {name} 0/-inf, additive", additive(rows[:, None], dtype, -np.inf),
                    {"convention": "additive"}))
    forms = [(name, array, kwargs, rows[:, None], of, None, 2 * b) for name, array, kwargs in out]
    for name, keep, array in (("(B, 1, n, n) float32 0/1, auto", some, None),
                              ("(B, 1, n, n) float32 0/-inf, auto", blocked, "additive")):
        if keep.size:
            r = pairs(ms[keep])
            arr = additive(r[:, None], np.float32, -np.inf) if array else r[:, None].astype(np.float32)
            forms.append((name, arr, {}, r[:, None], np.repeat(keep, 2), None, 2 * keep.size))
    forms += [
        ("(B * H, n, n) bool, heads=2", heads.reshape(-1, n, n).copy(), {"heads": 2}, heads, of, 2, 2 * b),
        ("(B, H, n, n) float32 0/minimum, additive", additive(heads, np.float32, minimum),
         {"convention": "additive"}, heads, of, 2, 2 * b),
    ]
    return [(name, array, kwargs, want, of_, h, (bb if bb > 1 else None)) for name, array, kwargs, want, of_, h, bb
            in forms]


def single_forms(m: np.ndarray) -> list[tuple[str, np.ndarray, dict, np.ndarray, int]]:
    """``(form, array, kwargs, masks as written (1, H, n, n), heads)``: the forms with a batch dimension of 1."""
    h = np.array(head_split(m))[None]  # (1, 2, n, n)
    return [("(H, n, n) bool", h[0].copy(), {}, h, 2),
            ("(1, H, n, n) bool, allowed", h.copy(), {"convention": "allowed"}, h, 2),
            ("(1, 1, n, n) float64 0/-inf, additive", additive(m[None, None], np.float64, -np.inf),
             {"convention": "additive"}, m[None, None], 1)]


def bad_forms(m: np.ndarray) -> list[tuple[str, np.ndarray, dict, object, bool]]:
    """Values that must be refused, as 2-D forms (``expected = "refused"``)."""
    nan = additive(m, np.float32, -np.inf)
    nan[0, 0] = np.nan
    pos = additive(m, np.float64, -np.inf)
    pos[-1, 0] = np.inf
    two = m.astype(np.int64)
    two[0, -1] = 2
    return [("NaN, additive", nan, {"convention": "additive"}, "refused", False),
            ("+inf, additive", pos, {"convention": "additive"}, "refused", False),
            ("2 in a 0/1 array, auto", two, {}, "refused", False)]


def _j(x):
    return np.asarray(x).astype(int).tolist() if isinstance(x, np.ndarray) else x


def read(array, kwargs):
    """The reader on one array: ``(grid, warnings about self-attention, error)``."""
    from hasse.theory.inputs.arrays import to_grid

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid, error = safely(lambda: to_grid(array, source="array", **kwargs))
    return grid, [w for w in caught if "attends itself" in str(w.message)], error


def _where(name, array, kwargs) -> dict:
    return {"form": name, "shape": list(array.shape), "dtype": array.dtype.name, "kwargs": kwargs}


def two_d_problem(m: np.ndarray, form) -> dict | None:
    """One array of ``m`` read alone: a 2-D form ``(…, expected, warns)``, batch-1 form ``(…, masks, heads)``."""
    name, array, kwargs, want, last = form
    grid, caught, error = read(array, kwargs)
    where = _where(name, array, kwargs)
    if isinstance(want, str):
        if error is None or not error.startswith("InputError"):
            return where | {"engine": error or _j(grid.masks[0, 0]), "definition": "refused (InputError)"}
        return None
    want4 = want if want.ndim == 4 else want[None, None]
    if error:
        return where | {"engine": error, "definition": _j(want)}
    if grid.masks.shape != want4.shape or not np.array_equal(grid.masks, want4):
        return where | {"engine": _j(grid.masks), "definition": _j(want4)}
    heads = last if want.ndim == 4 and last > 1 else None
    if (grid.heads, grid.batch) != (heads, None):
        return where | {"engine": f"heads {grid.heads}, batch {grid.batch}", "definition": f"heads {heads}, batch None"}
    if want.ndim == 2 and bool(caught) != last:
        return where | {"engine": f"{len(caught)} warning(s)", "definition": "a warning" if last else "none"}
    return None


def layer_problem(grid, b: int, want: np.ndarray, policy: str) -> dict | None:
    """Batch row ``b``'s layer under ``policy`` against the union over the heads ``want`` (H, n, n)."""
    n = want.shape[-1]
    empty = tuple(sorted({q for h in want for q in range(n) if not h[q].any()}))
    union = np.zeros((n, n), dtype=bool)
    for h in want:
        union |= filled(h) if policy == "attend-all" else h
    layer, error = safely(lambda: grid.layer(b, policy))
    if error or not np.array_equal(layer[0], union) or tuple(layer[1].rows) != empty:
        return {"batch_row": b, "policy": policy,
                "engine": error or {"mask": _j(layer[0]), "empty_rows": list(layer[1].rows)},
                "definition": {"mask": _j(union), "empty_rows": list(empty)}}
    return None


def problems(ms: np.ndarray, layers: bool = True) -> list[dict | None]:
    """The first form each mask of ``ms`` (B, n, n) is read back wrong in, or None (``layers``: check the unions)."""
    found: list[dict | None] = [None] * len(ms)

    def note(i: int, problem: dict) -> None:
        if found[i] is None:
            found[i] = problem

    for name, array, kwargs, want, of, heads, rows in batched_forms(ms):
        grid, caught, error = read(array, kwargs)
        where = _where(name, array, kwargs)
        if error or grid.masks.shape != want.shape:
            for i in np.unique(of):
                note(int(i), where | {"engine": error or f"shape {list(grid.masks.shape)}",
                                      "definition": f"shape {list(want.shape)}"})
            continue
        wrong = ~(grid.masks == want).reshape(len(want), -1).all(axis=1)
        for r in np.flatnonzero(wrong):
            note(int(of[r]), where | {"batch_row": int(r), "engine": _j(grid.masks[r]), "definition": _j(want[r])})
        if (grid.heads, grid.batch) != (heads, rows):
            for i in np.unique(of):
                note(int(i), where | {"engine": f"heads {grid.heads}, batch {grid.batch}",
                                      "definition": f"heads {heads}, batch {rows}"})
        if layers and heads and kwargs.get("convention") == "additive":  # the union over heads, row by row
            for r in range(len(want)):  # a mask under attend-none, its transpose (again a mask) under attend-all
                problem = layer_problem(grid, r, want[r], ("attend-none", "attend-all")[r % 2])
                if problem:
                    note(int(of[r]), where | problem)
    refusals = bad_forms(ms[0])  # values refused whatever the mask (checked once per batch, on its first mask)
    singles = len(single_forms(ms[0]))
    for i, m in enumerate(ms):
        code = int(np.dot(m.reshape(-1).astype(np.int64), 1 << (np.arange(m.size, dtype=np.int64) % 61)))
        # one form in turn (by the mask's bits), and the refusals auto owes this mask
        pick = code % (len(TWO_D) + singles + len(refusals))
        turn = [two_d_form(m, j) for j in auto_refusals(m)]
        if pick < len(TWO_D):
            turn.append(two_d_form(m, pick))
        elif pick < len(TWO_D) + singles:
            turn.append(single_forms(m)[pick - len(TWO_D)])
        else:
            turn.append(bad_forms(m)[pick - len(TWO_D) - singles])
        if i == 0:
            turn += refusals
        for form in turn:
            if found[i] is not None:
                break
            problem = two_d_problem(m, form)
            if problem:
                note(i, problem)
    return found


def difference(masks: np.ndarray) -> list[dict | None]:
    """Per mask: the problem with the mask as given or with its diagonal set (``with_diagonal``), or None."""
    masks = np.asarray(masks, dtype=bool)
    plain = problems(masks)
    diag = problems(masks | np.eye(masks.shape[-1], dtype=bool), layers=False)
    return [p if p is not None else ({"with_diagonal": True} | d if d is not None else None)
            for p, d in zip(plain, diag)]


def flag(rows: np.ndarray) -> np.ndarray:
    return np.array([d is not None for d in difference(batch.unpack(rows, rows.shape[0]))], dtype=bool)


def explain(mask: np.ndarray) -> dict:
    return difference(np.asarray(mask, dtype=bool)[None])[0] or {}


THEOREM = engine_theorem(NAME, STATEMENT, flag, explain)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

"""The mask programs of :mod:`proofs.symbolic_forms_match_programs` and the evaluation of a traced formula.

Not a theorem: the shared material of one. :data:`PROGRAMS` are mask_mods written to use
what the tracer models (``//`` and ``%`` of negative numbers, ``abs``, ``**``, branches,
``& | ^ ~``, ``np.where`` …), each with its heads and whether it runs on index arrays;
:func:`make_paths` a rule factory that branches on its parameter; :func:`on_arrays`
runs a program as FlexAttention calls it. A formula is evaluated by substituting
numbers and simplifying with Z3 (:func:`value`, :func:`grid`, :func:`obligation_problem`),
never with ``SymbolicMask.concrete``.
"""

from __future__ import annotations

import numpy as np


def window_abs(b, h, q_idx, kv_idx):
    return abs(q_idx - kv_idx) // 2 == 0


def negative_floor(b, h, q_idx, kv_idx):
    return ((q_idx - kv_idx) // 3 == -1) | ((kv_idx - q_idx) % 3 == 1)


def branches(b, h, q_idx, kv_idx):
    if q_idx >= kv_idx:
        return q_idx - kv_idx < 2
    return kv_idx - q_idx == 1


def short_circuit(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx and q_idx - kv_idx <= 1) or kv_idx == 0


def chained(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx < kv_idx + 3


def where_logic(b, h, q_idx, kv_idx):
    return np.where(q_idx % 2 == 0, kv_idx <= q_idx, np.logical_and(kv_idx >= q_idx - 1, ~(kv_idx > q_idx)))


def clamped(b, h, q_idx, kv_idx):
    return (kv_idx >= np.maximum(q_idx - 2, 0)) & (kv_idx <= np.clip(q_idx, 0, 2)) | \
        np.logical_not(kv_idx != np.minimum(q_idx, 1))


def mixed_bools(b, h, q_idx, kv_idx):
    return ((q_idx // 2) == (kv_idx // 2)) ^ (q_idx == kv_idx) | (kv_idx == 0)


def arithmetic(b, h, q_idx, kv_idx):
    return ((q_idx * 2 - kv_idx * 3) % 5 < 2) & (-(q_idx - kv_idx) <= 0) | ((q_idx - kv_idx) ** 2 == 1)


def two_heads(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & ((h == 0) & (kv_idx % 2 == 0) | (h == 1) & (q_idx - kv_idx < 2))


def bool_arithmetic(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) + (kv_idx == 0) * 2 - (q_idx == 1) >= 1


# (name, program, heads, runs on index arrays)
PROGRAMS = (
    ("window_abs", window_abs, None, True),
    ("negative_floor", negative_floor, None, True),
    ("branches", branches, None, False),
    ("short_circuit", short_circuit, None, False),
    ("chained", chained, None, False),
    ("where_logic", where_logic, None, True),
    ("clamped", clamped, None, True),
    ("mixed_bools", mixed_bools, None, True),
    ("arithmetic", arithmetic, None, True),
    ("two_heads", two_heads, 2, True),
    ("bool_arithmetic", bool_arithmetic, None, True),
)


def make_paths(n, w):
    """A rule factory that branches on its parameter: paths on a Python-level symbolic value (every branch run)."""
    if w >= 3:
        def rule(q, k):
            return (k <= q) & (q - k < w)
    elif w == 2 or w > n:
        def rule(q, k):
            return (k <= q) & ((q - k) % 2 == 0)
    else:
        def rule(q, k):
            return k == q
    return rule


def on_arrays(fn, heads, m: int) -> np.ndarray:
    """The program on index arrays, as FlexAttention calls it (``& | ~`` logical on bool tensors), union over heads."""
    q, k = np.arange(m)[:, None], np.arange(m)[None, :]
    zero = np.zeros((), dtype=np.int64)
    return np.any([np.broadcast_to(np.asarray(fn(zero, np.int64(h), q, k), dtype=bool), (m, m))
                   for h in range(heads or 1)], axis=0)


def z3_module():
    import z3

    return z3


def value(term, subs) -> int | bool | None:
    """``term`` with ``subs`` substituted, simplified to a number or a truth value (None: it does not reduce)."""
    z3 = z3_module()
    v = z3.simplify(z3.substitute(term, *subs)) if subs else z3.simplify(term)
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    if z3.is_int_value(v):
        return v.as_long()
    return None


def grid(sm, subs, size: int) -> np.ndarray | str:
    """The formula of ``sm`` on the ``size × size`` grid (or why an entry does not reduce)."""
    z3 = z3_module()
    fixed = z3.simplify(z3.substitute(sm.formula, *subs)) if subs else sm.formula
    out = np.zeros((size, size), dtype=bool)
    for q in range(size):
        row = z3.substitute(fixed, (sm.q, z3.IntVal(q)))
        for k in range(size):
            v = value(row, [(sm.k, z3.IntVal(k))])
            if not isinstance(v, bool):
                return f"M[{q}, {k}] does not reduce to true or false"
            out[q, k] = v
    return out


def obligation_problem(sm, subs, size: int) -> str | None:
    """The first obligation that fails at a grid entry (all of them evaluated as one conjunction first)."""
    z3 = z3_module()
    if not sm.obligations:
        return None
    every = z3.simplify(z3.substitute(z3.And([ob for ob, _ in sm.obligations]), *subs) if subs else
                        z3.And([ob for ob, _ in sm.obligations]))
    for q in range(size):
        row = z3.substitute(every, (sm.q, z3.IntVal(q)))
        for k in range(size):
            if value(row, [(sm.k, z3.IntVal(k))]) is not True:
                for ob, why in sm.obligations:
                    if value(ob, subs + [(sm.q, z3.IntVal(q)), (sm.k, z3.IntVal(k))]) is not True:
                        return f"obligation '{why}' fails at ({q}, {k})"
                return f"the obligations fail at ({q}, {k})"
    return None


def formula_problem(sm, subs, want: np.ndarray, *, sized: bool = True) -> dict | None:
    """Where the formula of ``sm`` (``subs`` substituted) is not the mask ``want``, or None.

    ``sized``: first its size term against ``want``'s positions; then the formula on the
    grid (an entry that does not reduce, or the first entry that differs); then the
    obligations at every grid entry.
    """
    size = value(sm.size, subs) if sized else len(want)
    if size != len(want):
        return {"problem": f"size {size}, the built mask has {len(want)} positions"}
    got = grid(sm, subs, size)
    if isinstance(got, str):
        return {"problem": got}
    if not np.array_equal(got, want):
        return first_difference(got, want)
    problem = obligation_problem(sm, subs, size)
    return {"problem": problem} if problem else None


def first_difference(got, want) -> dict:
    where = np.argwhere(got != want)
    q, k = (int(x) for x in where[0])
    return {"entry": [q, k], "formula": bool(got[q, k]), "program": bool(want[q, k])}

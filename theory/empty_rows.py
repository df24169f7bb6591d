"""Empty rows and the policy that decides what they depend on.

Definition (design.md §2). An *empty row* is a query ``q`` whose row of the mask is
all false, diagonal included: it attends no key at all. What such a query depends on
is decided by the attention kernel, not by the mask:

- an additive mask with a finite large negative value (``torch.finfo(dtype).min``,
  ``-1e30``, ``-1e4``: eager attention as in Hugging Face transformers, SDPA with such a
  float mask) turns the row into attention over *every* key (uniform when the value
  absorbs the scores): policy ``attend-all``;
- FlexAttention, flash-style kernels, and ``F.scaled_dot_product_attention`` with a
  boolean (or ``-inf`` float) mask in torch >= 2.5 (its "safe softmax") return zeros:
  the query keeps only its residual, policy ``attend-none``;
- a plain ``where(M, scores, -inf)`` softmax, SDPA with a boolean mask before torch
  2.5, and ``nn.MultiheadAttention`` on its weight-returning path give NaN.

A policy names the reading used by an analysis:

- ``attend-all`` -- the row is replaced by all-true before the analysis (the
  conservative reading: a query that may see everything leaks whatever there is);
- ``attend-none`` -- the mask as given: the query depends on itself only;
- ``error`` -- an empty row is refused (``InputError`` naming the rows).

>>> m = np.array([[0, 0], [1, 1]], dtype=bool)
>>> fixed, found = apply_empty_row_policy(m, "attend-all")
>>> fixed.astype(int).tolist(), found.rows, found.policy
([[1, 1], [1, 1]], (0,), 'attend-all')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hasse.theory.errors import InputError

POLICIES = ("attend-all", "attend-none", "error")
LEAK_DEFAULT = "attend-all"  # leak, flow, counterexample, assert_no_leak: the conservative reading
ANALYZE_DEFAULT = "attend-none"  # analyze describes the mask as given

# What each family of kernels does with an empty row (the behaviour names of gpu_check).
KERNELS = {
    "attend-all": (
        "eager attention with an additive float mask of finfo(dtype).min / -1e30 (e.g. Hugging Face eager)",
        "F.scaled_dot_product_attention with such a finite additive float mask",
    ),
    "attend-none": (
        "FlexAttention (returns zeros)",
        "flash-style kernels (FlashAttention, memory-efficient attention: zeros)",
        "F.scaled_dot_product_attention with a boolean or -inf mask, torch >= 2.5 (safe softmax: zeros)",
    ),
    "nan": (
        "softmax(where(M, scores, -inf)) written out by hand",
        "F.scaled_dot_product_attention with a boolean mask, torch < 2.5",
        "nn.MultiheadAttention with need_weights=True",
    ),
}


@dataclass(frozen=True)
class EmptyRows:
    """The empty rows found in a mask and the policy an analysis applied to them."""

    rows: tuple[int, ...]  # queries attending no key at all (0-based), ascending
    policy: str  # attend-all | attend-none | error

    @property
    def kernels(self) -> tuple[str, ...]:
        """The kernels that behave the way ``policy`` reads an empty row (none for ``error``)."""
        return KERNELS.get(self.policy, ())

    def to_json(self) -> dict:
        """``{"rows": […], "policy": …, "kernels": […]}``.

        >>> EmptyRows((3,), "attend-none").to_json()["kernels"][0]
        'FlexAttention (returns zeros)'
        """
        return {"rows": list(self.rows), "policy": self.policy, "kernels": list(self.kernels)}

    def describe(self, limit: int = 10, names=None) -> str:
        """One line for a report: the rows, the policy and what it means (``names`` label the rows).

        >>> EmptyRows((0, 4), "attend-all").describe()[:60]
        'empty rows (queries attending no key): 0, 4; read as attendi'
        >>> EmptyRows((1,), "error").describe(names=("c0", "g0"))
        'empty rows (queries attending no key): g0 (1); refused (--empty-rows error)'
        """
        label = (lambda q: str(q) if names is None or names[q] == str(q) else f"{names[q]} ({q})")
        shown = ", ".join(map(label, self.rows[:limit])) + (" …" if len(self.rows) > limit else "")
        meaning = {
            "attend-all": "read as attending every key (--empty-rows attend-all), as additive-mask kernels do: "
                          + "; ".join(KERNELS["attend-all"]),
            "attend-none": "read as attending nothing (--empty-rows attend-none), as zero-returning kernels do: "
                           + "; ".join(KERNELS["attend-none"]),
            "error": "refused (--empty-rows error)",
        }[self.policy]
        return f"empty rows (queries attending no key): {shown}; {meaning}"


def require_policy(policy: str) -> str:
    """Return ``policy`` if it is one of :data:`POLICIES`, else raise InputError."""
    if policy not in POLICIES:
        raise InputError(f"empty_rows must be one of {', '.join(POLICIES)}, got {policy!r}")
    return policy


def empty_rows(mask: np.ndarray, key_only=()) -> tuple[int, ...]:
    """Queries whose row is all false, diagonal included: they attend no key at all.

    Key-only positions (a KV cache or a cross-attended memory, :func:`theory.mask.square_up`)
    are not queries: their rows are all false by definition and are never empty rows.

    >>> empty_rows(np.array([[0, 0], [1, 1]], dtype=bool))
    (0,)
    >>> empty_rows(np.array([[0, 0], [1, 1]], dtype=bool), key_only=(0,))
    ()
    """
    skip = set(key_only)
    return tuple(int(q) for q in np.flatnonzero(~np.asarray(mask, dtype=bool).any(axis=1)) if int(q) not in skip)


def refuse(rows: tuple[int, ...], source: str | None = None) -> InputError:
    """The error of policy ``error``: one line naming the rows."""
    shown = ", ".join(map(str, rows[:10])) + (" …" if len(rows) > 10 else "")
    return InputError(f"{len(rows)} empty row(s) (queries attending no key, not even themselves): {shown}; "
                      "kernels disagree there (every key, zeros or NaN): choose {empty_rows} attend-all or "
                      "attend-none", source, param="empty_rows")


def apply_empty_row_policy(mask: np.ndarray, policy: str, source: str | None = None,
                           key_only=()) -> tuple[np.ndarray, EmptyRows]:
    """The mask an analysis uses under ``policy``, and the empty rows found.

    ``attend-all`` returns a copy whose empty rows are all true; ``attend-none``
    returns ``mask`` itself; ``error`` raises InputError naming the rows (if any).
    Rows of ``key_only`` positions are left alone under every policy: a cache entry
    attends nothing in this layer, whatever a kernel does with empty query rows.

    >>> cache = np.array([[0, 0], [1, 1]], dtype=bool)  # position 0: a KV cache entry
    >>> apply_empty_row_policy(cache, "attend-all", key_only=(0,))[0].astype(int).tolist()
    [[0, 0], [1, 1]]

    >>> m = np.array([[0, 0, 0], [1, 1, 0], [0, 0, 0]], dtype=bool)
    >>> apply_empty_row_policy(m, "attend-none")[1].rows
    (0, 2)
    >>> apply_empty_row_policy(m, "error")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: 2 empty row(s) (queries attending no key, not even themselves): 0, 2; kernels disagree there (every key, zeros or NaN): choose empty_rows attend-all or attend-none
    """
    require_policy(policy)
    mask = np.asarray(mask, dtype=bool)
    rows = empty_rows(mask, key_only)
    if rows and policy == "error":
        raise refuse(rows, source)
    if rows and policy == "attend-all":
        mask = mask.copy()
        mask[list(rows)] = True
    return mask, EmptyRows(rows, policy)


def read_task(task, policy: str):
    """``task`` with its mask read by ``policy`` (the same task object when nothing changes).

    For searches that look at raw mask rows (the Z3 counterexample search): under
    ``attend-all`` they see the filled rows, under ``error`` the task is refused.
    """
    from dataclasses import replace

    mask, found = apply_empty_row_policy(task.mask, policy, task.name or None, getattr(task, "key_only", ()))
    return replace(task, mask=mask) if found.rows and policy == "attend-all" else task

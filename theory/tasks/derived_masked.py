"""Families of `hasse derive` (issue 25): MAE 1-D and 2-D, masked diffusion / MaskGIT.

Each family is built from its rules (which token each position holds, which it predicts,
what it attends), never from the merged layout; the derived layout is a catalogue task
beside it; :data:`RECIPES` tells `hasse derive` how the two relate (theory.derivations).

**A member** (one masked set ``S ⊆ {0 … n-1}``, visible set ``V`` its complement): ``n``
positions in token order; visible position ``i`` holds ``(x_i, i)``; masked position ``j``
holds ``([MASK], j)`` and predicts ``x_j``. Attention is what "reconstruct each masked token
from the visible ones" needs and nothing else: the visible positions attend every visible
position (the bidirectional encoder); masked position ``j`` attends every visible position
and itself; no position attends another ``[MASK]``.

**The families** (kind ``family``): ``mae:n=N[,masked=A+B…][,count=M]`` — the one task of that
masked set; every masked set of ``M`` tokens (``count``, a fixed mask ratio); or every masked
set with ``1 <= |S| <= n-1`` (MAE keeps a visible patch). ``mae2d:rows=H,cols=W[,…]``: the same on an
``h x w`` patch grid (token ``r·w + c``, position names ``P<r>_<c>``). ``masked_diffusion:n=N[,…]``
(MDLM, LLaDA, MaskGIT): the same rule, ``S`` may be every token (``1 <= |S| <= n``: generation
from nothing). Members come by size ``|S|``, then lexicographically. A family of more than
:data:`MAX_TASKS` tasks is refused.

**The derived layout** ``masked_context:n=N,masked=S``: ``M[q, k] = visible(k) or q == k``
(:mod:`theory.masks.masked_context`). The merge of one masked set is its task; over several
it is their disjoint union (nodes of tasks with different visible sets are never equivalent),
``n`` positions per masked set — hence a recipe layout only for a one-set family.

**Published** (kind ``task``): ``mae_published:n,masked`` — MAE's encoder + decoder,
``M[q, k] = visible(k) or masked(q)``; masked diffusion's bidirectional encoder is the existing
``mlm:n,masked``.
"""

from __future__ import annotations

import itertools
from math import comb
from typing import Sequence

import numpy as np

from hasse.theory.recipe import Published, Recipe
from hasse.theory.errors import InputError
from hasse.theory.mask import grid
from hasse.theory.masks.masked_context import make_mae_published, make_masked_context, masked_flags
from hasse.theory.params import require_at_least, require_non_negative, require_positive
from hasse.theory.spec import Entry, Param, plus_joined
from hasse.theory.task import Task, make_task

MAX_TASKS = 4096  # the largest family built (every masked set of n = 12 tokens is 4,094)


# --------------------------------------------------------------------------- members


def _member(n: int, masked: Sequence[int], *, keep_visible: bool, name: str, names=None) -> Task:
    """One member, from the definition: encoder block ``V x V``, each masked row ``V`` and itself."""
    flag = masked_flags(n, masked, keep_visible=keep_visible)
    visible = [i for i in range(n) if not flag[i]]
    mask = np.zeros((n, n), dtype=bool)
    mask[np.ix_(visible, visible)] = True  # the encoder: every visible patch attends every visible one
    for j in np.flatnonzero(flag):  # the reconstruction of x_j: from the visible patches and its own query
        mask[j, visible] = True
        mask[j, j] = True
    inputs = [("[MASK]", i) if flag[i] else (f"x{i}", i) for i in range(n)]
    labels = [i if flag[i] else None for i in range(n)]
    return make_task(n, inputs, labels, mask, name=name, names=names)


def mae_task(n: int, masked: Sequence[int]) -> Task:
    """MAE family member: ``[MASK]`` at ``masked`` predicting its token from the visible tokens.

    Raises
    ------
    InputError
        ``n < 2``, or ``masked`` empty, out of range, repeated, or every token.

    Examples
    --------
    >>> t = mae_task(3, (1,))
    >>> t.inputs, t.labels
    ((('x0', 0), ('[MASK]', 1), ('x2', 2)), ((), (1,), ()))
    >>> t.mask.astype(int).tolist()
    [[1, 0, 1], [1, 1, 1], [1, 0, 1]]
    """
    n = require_at_least("n", n, 2, "MAE masks a non-empty set and keeps a visible token")
    return _member(n, masked, keep_visible=True, name=f"mae:n={n},masked={plus_joined(masked)}")


def grid_names(h: int, w: int) -> tuple[str, ...]:
    """``P<r>_<c>`` in row-major order (token ``r·w + c``).

    >>> grid_names(2, 2)
    ('P0_0', 'P0_1', 'P1_0', 'P1_1')
    """
    return tuple(f"P{r}_{c}" for r in range(h) for c in range(w))


def _grid(h, w) -> tuple[int, int, int]:
    h, w = require_positive("rows", h), require_positive("cols", w)
    n = h * w
    if n < 2:
        raise InputError(f"an h x w grid of MAE needs at least 2 patches, got {h} x {w}")
    return h, w, n


def mae2d_task(rows: int, cols: int, masked: Sequence[int]) -> Task:
    """2-D MAE member on an ``h x w`` patch grid: ``masked`` are flat indices ``r·w + c``.

    >>> t = mae2d_task(1, 2, (1,))
    >>> t.names, t.inputs, t.labels
    (('P0_0', 'P0_1'), (('x0', 0), ('[MASK]', 1)), ((), (1,)))
    """
    h, w, n = _grid(rows, cols)
    return _member(n, masked, keep_visible=True, name=f"mae2d:rows={h},cols={w},masked={plus_joined(masked)}",
                   names=grid_names(h, w))


def masked_diffusion_task(n: int, masked: Sequence[int]) -> Task:
    """Masked diffusion (MDLM, LLaDA, MaskGIT) member: as MAE's, and every token may be masked.

    >>> masked_diffusion_task(2, (0, 1)).mask.astype(int).tolist()
    [[1, 0], [0, 1]]
    """
    n = require_positive("n", n)
    return _member(n, masked, keep_visible=False, name=f"masked_diffusion:n={n},masked={plus_joined(masked)}")


# --------------------------------------------------------------------------- families


def family_size(n: int, count: int, *, every: bool) -> int:
    """How many masked sets a family has: ``C(n, count)``, or every size ``1 … n-1`` (``1 … n`` when ``every``).

    >>> family_size(4, 2, every=False), family_size(4, 0, every=False), family_size(4, 0, every=True)
    (6, 14, 15)
    """
    if count:
        return comb(n, count)
    return 2 ** n - (1 if every else 2)


def masked_sets(n: int, masked=(), count: int = 0, *, every: bool = False,
                what: str = "family") -> tuple[tuple[int, ...], ...]:
    """The masked sets of a family: ``(masked,)`` if given, else every set of ``count`` tokens, else every set
    of ``1 … n-1`` tokens (``1 … n`` when ``every``); by size, then lexicographically.

    ``what`` names the family in messages. At most :data:`MAX_TASKS` sets.

    >>> masked_sets(3)
    ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2))
    >>> masked_sets(3, count=2, every=True)
    ((0, 1), (0, 2), (1, 2))
    >>> masked_sets(13, what="mae:n=13")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: mae:n=13 has 8,190 tasks (every masked set of 1 … 12 tokens), more than 4,096: ...
    """
    high = n if every else n - 1
    masked = tuple(masked or ())
    count = require_non_negative("count", count)
    if masked and count:
        raise InputError("give masked=A+B… (one masked set) or count=M (every set of M tokens), not both")
    if masked:
        masked_flags(n, masked, keep_visible=not every)  # the checks only
        return (masked,)
    if count > high:
        raise InputError(f"count = {count} is out of range: {what} masks 1 … {high} tokens")
    size = family_size(n, count, every=every)
    if size > MAX_TASKS:
        sizes = f"every set of {count} tokens" if count else f"every masked set of 1 … {high} tokens"
        hint = "a count nearer 0 or n, or masked=A+B…" if count else "count=M (one mask ratio) or masked=A+B…"
        raise InputError(f"{what} has {size:,} tasks ({sizes}), more than {MAX_TASKS:,}: give {hint}")
    sizes = (count,) if count else range(1, high + 1)
    return tuple(s for c in sizes for s in itertools.combinations(range(n), c))


def mae_family(n: int, masked=(), count: int = 0) -> tuple[Task, ...]:
    """The MAE family on ``n`` tokens (module docstring).

    >>> [t.name for t in mae_family(3, count=2)]
    ['mae:n=3,masked=0+1', 'mae:n=3,masked=0+2', 'mae:n=3,masked=1+2']
    >>> len(mae_family(4))
    14
    """
    n = require_at_least("n", n, 2, "MAE masks a non-empty set and keeps a visible token")
    return tuple(mae_task(n, s) for s in masked_sets(n, masked, count, what=f"mae:n={n}"))


def mae2d_family(rows: int, cols: int, masked=(), count: int = 0) -> tuple[Task, ...]:
    """The 2-D MAE family on an ``h x w`` patch grid.

    >>> [t.name for t in mae2d_family(1, 2)]
    ['mae2d:rows=1,cols=2,masked=0', 'mae2d:rows=1,cols=2,masked=1']
    """
    h, w, n = _grid(rows, cols)
    return tuple(mae2d_task(h, w, s) for s in masked_sets(n, masked, count, what=f"mae2d:rows={h},cols={w}"))


def masked_diffusion_family(n: int, masked=(), count: int = 0) -> tuple[Task, ...]:
    """The masked-diffusion family on ``n`` tokens: every masked set, the whole sample included.

    >>> [t.name for t in masked_diffusion_family(2)]
    ['masked_diffusion:n=2,masked=0', 'masked_diffusion:n=2,masked=1', 'masked_diffusion:n=2,masked=0+1']
    """
    n = require_positive("n", n)
    return tuple(masked_diffusion_task(n, s)
                 for s in masked_sets(n, masked, count, every=True, what=f"masked_diffusion:n={n}"))


# --------------------------------------------------------------------------- the derived and published tasks


def _flagged_task(n: int, flag: np.ndarray, rule, name: str) -> Task:
    inputs = [("[MASK]", i) if flag[i] else (f"x{i}", i) for i in range(n)]
    labels = [i if flag[i] else None for i in range(n)]
    return make_task(n, inputs, labels, grid(rule, n), name=name)


def masked_context_task(n: int, masked: Sequence[int]) -> Task:
    """The derived layout: ``M[q, k] = visible(k) or q == k``, ``[MASK]`` at ``masked`` predicting its token.

    >>> t = masked_context_task(3, (0, 2))
    >>> t.labels, int(t.mask.sum())
    (((0,), (), (2,)), 5)
    """
    n = require_positive("n", n)
    flag = masked_flags(n, masked)
    return _flagged_task(n, flag, make_masked_context(n, masked), f"masked_context:n={n},masked={plus_joined(masked)}")


def mae_published_task(n: int, masked: Sequence[int]) -> Task:
    """MAE as published: encoder over the visible tokens, decoder mask tokens over all (``visible(k) or masked(q)``).

    >>> t = mae_published_task(3, (0, 2))
    >>> int(t.mask.sum())
    7
    """
    n = require_at_least("n", n, 2, "MAE masks a non-empty set and keeps a visible token")
    flag = masked_flags(n, masked, keep_visible=True)
    return _flagged_task(n, flag, make_mae_published(n, masked), f"mae_published:n={n},masked={plus_joined(masked)}")


# --------------------------------------------------------------------------- catalogue entries

_N = Param("n", "int", help="number of tokens (n >= 2 for MAE, n >= 1 for masked diffusion)")
_H = Param("rows", "int", help="patch grid rows h")
_W = Param("cols", "int", help="patch grid columns w; token r·w + c is patch (r, c)")
_MASKED = Param("masked", "int_list", help="masked positions, distinct, e.g. 1+3")
_MASKED_OPTIONAL = Param("masked", "int_list", (), help="one masked set, e.g. 1+3 (default: every set)")
_COUNT = Param("count", "int", 0, help="every masked set of this many tokens (0 = every size)")

ENTRIES: tuple = (  # catalogue entries (theory.spec.Entry), kind "task" or "family"
    Entry("mae", "MAE member: [MASK] at the masked set predicts its token from the visible tokens only",
          (_N, _MASKED), mae_task, "task"),
    Entry("mae2d", "2-D MAE member on an h x w patch grid (token r·w + c): masked patches from visible ones",
          (_H, _W, _MASKED), mae2d_task, "task"),
    Entry("masked_diffusion", "masked diffusion member (MDLM, LLaDA, MaskGIT): as MAE, every token may be masked",
          (_N, _MASKED), masked_diffusion_task, "task"),
    Entry("masked_context", "derived MAE / masked-diffusion layout: M[q,k] = visible(k) or q == k",
          (_N, _MASKED), masked_context_task, "task"),
    Entry("mae_published", "MAE as published (He et al. 2022): M[q,k] = visible(k) or masked(q)",
          (_N, _MASKED), mae_published_task, "task"),
    Entry("mae", "MAE family: one task per masked set (given, of count tokens, or every 1..n-1); merge: disjoint",
          (_N, _MASKED_OPTIONAL, _COUNT), mae_family, "family"),
    Entry("mae2d", "2-D MAE family on an h x w patch grid: one task per masked set of patches",
          (_H, _W, _MASKED_OPTIONAL, _COUNT), mae2d_family, "family"),
    Entry("masked_diffusion", "masked diffusion family (MDLM, LLaDA, MaskGIT): one task per masked set, 1..n tokens",
          (_N, _MASKED_OPTIONAL, _COUNT), masked_diffusion_family, "family"),
)


# --------------------------------------------------------------------------- recipes


def _n_of(values: dict) -> int:
    return int(values["n"]) if "n" in values else int(values["rows"]) * int(values["cols"])


def single_set(values: dict, *, every: bool) -> tuple[int, ...] | None:
    """The family's masked set when it has exactly one (``masked=`` given, or the only set of its size), else None.

    >>> single_set({"n": 3, "masked": (2, 0), "count": 0}, every=False)
    (2, 0)
    >>> single_set({"n": 3, "count": 3}, every=True), single_set({"n": 1}, every=True), single_set({"n": 3}, every=True)
    ((0, 1, 2), (0,), None)
    """
    masked = tuple(values.get("masked") or ())
    if masked:
        return masked
    n, count = _n_of(values), int(values.get("count") or 0)
    if family_size(n, count, every=every) == 1:
        return masked_sets(n, (), count, every=every)[0]
    return None


def _spec(name: str, every: bool):
    def spec(values: dict) -> str | None:
        s = single_set(values, every=every)
        return None if s is None else f"{name}:n={_n_of(values)},masked={plus_joined(s)}"

    return spec


def _flex_args(every: bool):
    def args(values: dict) -> str:
        s = single_set(values, every=every)
        if s is None:  # no single set (no layout: `--export flex` refuses it); each sample passes its own flags
            return ""
        flags = [0] * _n_of(values)
        for i in s:
            flags[i] = 1
        return f"masked={flags}"

    return args


_MAE_SOURCE = ("He et al., Masked Autoencoders Are Scalable Vision Learners, CVPR 2022; facebookresearch/mae "
               "models_mae.py: forward_encoder keeps the visible patches only (random_masking), forward_decoder "
               "appends mask_token at the masked positions (ids_restore) under full self-attention; forward_loss "
               "on the removed patches; the [CLS] token is left out")
_DIFFUSION_SOURCE = ("Sahoo et al., MDLM, NeurIPS 2024 (kuleshov-group/mdlm models/dit.py: DDiTBlock calls "
                     "flash_attn_varlen_qkvpacked_func(..., causal=False), no mask); "
                     "Nie et al., LLaDA, 2025 (a Transformer without the causal mask); Chang et al., MaskGIT, CVPR "
                     "2022 (bidirectional transformer): full attention over all n tokens, loss on [MASK] tokens")

_FINDING = (
    "The merge of a one-set family is its task: masked context, M[q,k] = visible(k) or q == k, n·|V| + |S| "
    "pairs. The published designs are leak-free too but attend more: MAE's decoder adds the |S|(|S|-1) "
    "mask-to-mask pairs (it is the derived design when |S| = 1), the bidirectional encoder of MDLM / "
    "LLaDA / MaskGIT adds those and the |V|·|S| visible-to-mask pairs; neither is needed to reconstruct a "
    "masked token from the visible ones. Over "
    "several masked sets no node of one task is equivalent to a node of another (their visible sets differ), "
    "so the merge is the disjoint union: n(2^n - 2) positions for every MAE set, which is why MAE and MDLM "
    "draw one masked set per sample.")

RECIPES: tuple = (  # theory.derivations.Recipe
    Recipe("mae", _spec("masked_context", False), lambda values: "masked_context", flex="masked_context",
           flex_args=_flex_args(False), assume=("masked=any",),
           published=(Published("MAE (He et al. 2022), encoder + decoder", _MAE_SOURCE,
                                _spec("mae_published", False)),),
           finding=_FINDING, doc="docs/families/mae.md"),
    Recipe("mae2d", _spec("masked_context", False), lambda values: "masked_context", flex="masked_context",
           flex_args=_flex_args(False), assume=("masked=any",),
           published=(Published("MAE (He et al. 2022), encoder + decoder, h x w patches", _MAE_SOURCE,
                                _spec("mae_published", False)),),
           finding=_FINDING, doc="docs/families/mae2d.md"),
    Recipe("masked_diffusion", _spec("masked_context", True), lambda values: "masked_context",
           flex="masked_context", flex_args=_flex_args(True), assume=("masked=any",),
           published=(Published("MDLM / LLaDA / MaskGIT, bidirectional", _DIFFUSION_SOURCE, _spec("mlm", True)),),
           finding=_FINDING.replace("n(2^n - 2) positions for every MAE set", "n(2^n - 1) positions for every "
                                    "set (n(2^n - 2) for MAE)"),
           doc="docs/families/masked_diffusion.md"),
)

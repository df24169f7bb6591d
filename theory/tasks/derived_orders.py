"""Families of `hasse derive` (issue 25): any-order autoregression, fill-in-the-middle (PSM, SPM).

Each family is built from its rules, never from the merged layout; the derived layout is a
catalogue task beside it; :data:`RECIPES` relates the two (theory.derivations). Position ids
are token indices throughout.

- ``any_order:order=σ,k=K``: content ``x_{σ(0)} … x_{σ(k-1)}`` causal, one ``[MASK]`` query at
  ``σ(k)`` reading them all and predicting ``x_{σ(k)}``; family ``any_order:n=N[,order=σ]`` (one
  order, or every order's distinct tasks); derived ``any_order_two_stream:order=σ`` (2n − 1
  positions); ``sigma_gpt:order=σ``, σ-GPT's stream without its target ids.
- ``fim:n,mode,start,end,k``: the rearranged order (psm, spm) up to the token before ``x_k``,
  causal, the last position predicting ``x_k``; family ``fim:n=N,mode=M[,start=S,end=E]``;
  derived ``fim_causal`` (n − 1 positions, middle targets) and ``fim_published`` (the usual recipe).
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from hasse.theory.recipe import Published, Recipe
from hasse.theory.errors import InputError
from hasse.theory.mask import grid
from hasse.theory.masks.any_order import make_any_order_two_stream, names as two_stream_names
from hasse.theory.masks.causal import causal_mask
from hasse.theory.masks.fim import MODES, make_fim_causal, rearranged, require_mode, require_split
from hasse.theory.masks.xlnet import ranks
from hasse.theory.params import require_index, require_int, require_positive
from hasse.theory.spec import Entry, Param, plus_joined
from hasse.theory.task import Task, make_task

MAX_TASKS = 4096  # a family over every order / every split is refused beyond this many tasks


def _order(order) -> tuple[int, ...]:
    ranks(order)  # a permutation of 0 … n-1, else one-line InputError
    return tuple(int(v) for v in order)


def _chain_task(n: int, context: Sequence[int], target: int, name: str) -> Task:
    """``context`` read causally, token ``context[i]`` at position ``i`` (pos id its index), the last predicting ``target``."""
    size = len(context)
    labels = [None] * (size - 1) + [target]
    return make_task(n, [(f"x{t}", t) for t in context], labels, grid(causal_mask, size), name=name,
                     names=[f"x{t}" for t in context])


# --------------------------------------------------------------------------- any-order


def _any_order_member(n: int, prefix: Sequence[int], target: int, name: str) -> Task:
    k = len(prefix)
    mask = np.zeros((k + 1, k + 1), dtype=bool)
    for i in range(k):
        mask[i, : i + 1] = True  # content i attends content 0 … i (causal in the order)
    mask[k, :] = True  # the query attends every content position and itself
    inputs = [(f"x{t}", t) for t in prefix] + [("[MASK]", target)]
    labels = [None] * k + [target]
    return make_task(n, inputs, labels, mask, name=name, names=[f"c{i}" for i in range(k)] + [f"g{target}"])


def any_order_task(order: Sequence[int], k: int) -> Task:
    """Member ``k`` of the any-order family for the order ``σ``: predict ``x_{σ(k)}`` from ``x_{σ(0)} … x_{σ(k-1)}``.

    Raises InputError: ``order`` not a permutation of ``0 … n-1``, or ``k`` outside ``0 … n-1``.

    >>> t = any_order_task((2, 0, 1), 2)
    >>> t.inputs, t.labels
    ((('x2', 2), ('x0', 0), ('[MASK]', 1)), ((), (), (1,)))
    >>> t.mask.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> any_order_task((1, 0), 0).inputs
    (('[MASK]', 1),)
    """
    order = _order(order)
    n = len(order)
    k = require_index("k", k, 0, n - 1, f"any_order:order={plus_joined(order)} has tasks k = 0 … {n - 1}")
    return _any_order_member(n, order[:k], order[k], f"any_order:order={plus_joined(order)},k={k}")


def any_order_task_count(n: int) -> int:
    """Distinct tasks over every order of ``n`` tokens: a prefix of ``k`` distinct tokens and the next, ``Σ_k n!/(n-k-1)!``.

    >>> [any_order_task_count(n) for n in range(1, 7)]
    [1, 4, 15, 64, 325, 1956]
    """
    return sum(math.perm(n, k + 1) for k in range(n))


def any_order_family(n: int, order: Sequence[int] = ()) -> tuple[Task, ...]:
    """The any-order family: one order's tasks ``k = 0 … n-1``, or (no ``order``) every order's distinct tasks.

    Every order: each prefix ``σ(0) … σ(k-1)`` with its next token ``σ(k)`` once (tasks shared
    by several orders are one task), by length then lexicographically.

    Raises InputError: ``order`` not a permutation of ``0 … n-1``, or more than :data:`MAX_TASKS` tasks.

    >>> [t.size for t in any_order_family(3, (2, 0, 1))]
    [1, 2, 3]
    >>> len(any_order_family(3))
    15
    >>> any_order_family(7)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: any_order:n=7 over every order has 13,699 tasks, more than 4,096; give order=…
    """
    n = require_positive("n", n)
    if order:
        order = _order(order)
        if len(order) != n:
            raise InputError(f"order {plus_joined(order)} has {len(order)} tokens, but n = {n}")
        return tuple(any_order_task(order, k) for k in range(n))
    count = any_order_task_count(n)
    if count > MAX_TASKS:
        raise InputError(f"any_order:n={n} over every order has {count:,} tasks, more than {MAX_TASKS:,}; give order=…")
    tasks = []
    for k in range(n):
        for seq in itertools.permutations(range(n), k + 1):
            prefix, target = seq[:-1], seq[-1]
            name = f"any_order:n={n},prefix={plus_joined(prefix) or '-'},next={target}"
            tasks.append(_any_order_member(n, prefix, target, name))
    return tuple(tasks)


def any_order_two_stream_task(order: Sequence[int]) -> Task:
    """The derived layout of one order: content ``c_p = (x_{σ(p)}, σ(p))``, ``p < n-1``; query ``g_i = ([MASK], i)`` predicting ``x_i``.

    ``2n - 1`` positions, the rule :func:`theory.masks.any_order.make_any_order_two_stream`.

    Examples
    --------
    >>> t = any_order_two_stream_task((1, 0))
    >>> t.names, t.inputs, t.labels
    (('c0', 'g0', 'g1'), (('x1', 1), ('[MASK]', 0), ('[MASK]', 1)), ((), (0,), (1,)))
    """
    order = _order(order)
    n = len(order)
    mask = grid(make_any_order_two_stream(order), 2 * n - 1)
    inputs = [(f"x{t}", t) for t in order[:-1]] + [("[MASK]", i) for i in range(n)]
    labels = [None] * (n - 1) + list(range(n))
    return make_task(n, inputs, labels, mask, name=f"any_order_two_stream:order={plus_joined(order)}",
                     names=two_stream_names(n))


def sigma_gpt_task(order: Sequence[int]) -> Task:
    """σ-GPT without its second position id: ``x_{σ(p)}`` at pos id ``σ(p)``, causal, ``p`` predicting ``x_{σ(p+1)}``.

    σ-GPT also feeds each position the id ``σ(p+1)`` of the token it predicts; one symbol
    holds one id here, so that id is left out (the model cannot know which token it predicts).

    >>> sigma_gpt_task((2, 0, 1)).labels
    ((0,), (1,), ())
    """
    order = _order(order)
    n = len(order)
    labels = [order[p + 1] for p in range(n - 1)] + [None]
    return make_task(n, [(f"x{t}", t) for t in order], labels, grid(causal_mask, n),
                     name=f"sigma_gpt:order={plus_joined(order)}", names=[f"x{t}" for t in order])


def any_order_merge_positions(n: int) -> int:
    """Positions of the merge over every order (a trie of order prefixes), by formula.

    Content: one node per sequence of ``j`` distinct tokens, ``1 <= j <= n-1`` (``Σ n!/(n-j)!``);
    queries: one per such sequence (the empty one included, ``j <= n-1``) and next token
    (``Σ_{k<n} n!/(n-k-1)!``).

    >>> [any_order_merge_positions(n) for n in range(1, 6)]
    [1, 6, 24, 104, 530]
    """
    content = sum(math.perm(n, j) for j in range(1, n))
    return content + any_order_task_count(n)


# --------------------------------------------------------------------------- fill-in-the-middle


def _fim_context(n: int, start: int, end: int, mode: str, k: int) -> tuple[int, ...]:
    order = rearranged(n, start, end, mode)
    return order[: order.index(k)]


def fim_task(n: int, mode: str, start: int, end: int, k: int) -> Task:
    """Member ``k`` of the FIM family: the rearranged order up to ``x_{k-1}``, causal, the last position predicting ``x_k``.

    Raises
    ------
    InputError
        A bad split (:func:`theory.masks.fim.require_split`), mode, or ``k`` outside ``start … end-1``.

    Examples
    --------
    >>> t = fim_task(4, "psm", 1, 3, 2)
    >>> t.inputs, t.labels
    ((('x0', 0), ('x3', 3), ('x1', 1)), ((), (), (2,)))
    >>> fim_task(4, "spm", 1, 3, 1).inputs
    (('x3', 3), ('x0', 0))
    """
    n, start, end = require_split(n, start, end)
    mode = require_mode(mode)
    k = require_index("k", k, start, end - 1, f"the middle is {start} … {end - 1}")
    return _chain_task(n, _fim_context(n, start, end, mode, k), k,
                       f"fim:n={n},mode={mode},start={start},end={end},k={k}")


def fim_splits(n: int) -> tuple[tuple[int, int], ...]:
    """Every split ``(start, end)`` of ``n`` tokens: ``0 <= start < end <= n``, not ``(0, n)``.

    >>> fim_splits(3)
    ((0, 1), (0, 2), (1, 2), (1, 3), (2, 3))
    """
    return tuple((s, e) for s in range(n) for e in range(s + 1, n + 1) if (s, e) != (0, n))


def fim_family(n: int, mode: str = "psm", start: int = -1, end: int = -1) -> tuple[Task, ...]:
    """The FIM family: one split's tasks ``k = start … end-1``, or (``start``, ``end`` left out) every split's distinct tasks.

    Over every split, a task (context, target) shared by several splits (a split without a
    suffix in psm reads the plain left context) is one task; by split, then ``k``.

    Raises
    ------
    InputError
        A bad split or mode, only one of ``start`` and ``end`` given, or more than :data:`MAX_TASKS` tasks.

    Examples
    --------
    >>> [t.size for t in fim_family(4, "psm", 1, 3)]
    [2, 3]
    >>> len(fim_family(4, "psm")), len(fim_family(4, "spm"))
    (13, 9)
    """
    n = require_positive("n", n)
    mode = require_mode(mode)
    start, end = require_int("start", start), require_int("end", end)
    if (start == -1) != (end == -1):
        raise InputError("give both start and end (one split) or neither (every split)")
    if start != -1:
        n, start, end = require_split(n, start, end)
        return tuple(fim_task(n, mode, start, end, k) for k in range(start, end))
    if n < 2:
        raise InputError("n must be at least 2 (a split has a middle and a prefix or suffix)")
    seen, tasks = set(), []
    for s, e in fim_splits(n):
        for k in range(s, e):
            key = (_fim_context(n, s, e, mode, k), k)
            if key not in seen:
                seen.add(key)
                if len(seen) > MAX_TASKS:
                    raise InputError(f"fim:n={n},mode={mode} over every split has more than {MAX_TASKS:,} tasks; "
                                     "give start=…,end=…")
                tasks.append(key)
    return tuple(_chain_task(n, ctx, k, f"fim:n={n},mode={mode},context={plus_joined(ctx)},next={k}")
                 for ctx, k in tasks)


def fim_merge_positions(n: int, mode: str = "psm") -> int:
    """Positions of the merge over every split (a trie of rearranged prefixes), by formula.

    psm: the left prefixes ``0 … m`` (``n - 1``) and, per split with a suffix, the prefix then
    the suffix cut anywhere, then the middle (``Σ_{j<n} j²``); spm: ``n(n - 1)``.

    >>> [fim_merge_positions(n) for n in range(2, 7)], [fim_merge_positions(n, "spm") for n in range(2, 7)]
    ([2, 7, 17, 34, 60], [2, 6, 12, 20, 30])
    """
    return n * (n - 1) if require_mode(mode) == "spm" else (n - 1) + (n - 1) * n * (2 * n - 1) // 6


def fim_causal_task(n: int, mode: str, start: int, end: int) -> Task:
    """The derived FIM layout: causal on ``n - 1`` positions, ``r`` holding the ``r``-th token of the order, labelled with the next where it is a middle token.

    Examples
    --------
    >>> t = fim_causal_task(4, "psm", 1, 3)
    >>> t.inputs, t.labels
    ((('x0', 0), ('x3', 3), ('x1', 1)), ((), (1,), (2,)))
    """
    n, start, end = require_split(n, start, end)
    order = rearranged(n, start, end, mode)
    labels = [order[r + 1] if start <= order[r + 1] < end else None for r in range(n - 1)]
    return make_task(n, [(f"x{t}", t) for t in order[:-1]], labels, grid(make_fim_causal(n, start, end, mode), n - 1),
                     name=f"fim_causal:n={n},mode={mode},start={start},end={end}",
                     names=[f"x{t}" for t in order[:-1]])


def fim_published_task(n: int, mode: str, start: int, end: int) -> Task:
    """The usual FIM recipe: causal over all ``n`` rearranged tokens, position ``r < n-1`` predicting the token ``r + 1`` of the order.

    Examples
    --------
    >>> fim_published_task(4, "psm", 1, 3).labels
    ((3,), (1,), (2,), ())
    """
    n, start, end = require_split(n, start, end)
    order = rearranged(n, start, end, mode)
    labels = [order[r + 1] for r in range(n - 1)] + [None]
    return make_task(n, [(f"x{t}", t) for t in order], labels, grid(causal_mask, n),
                     name=f"fim_published:n={n},mode={mode},start={start},end={end}",
                     names=[f"x{t}" for t in order])


# --------------------------------------------------------------------------- catalogue

_N = Param("n", "int", help="number of tokens in the sample")
_ORDER = Param("order", "int_list", help="factorisation order, a permutation of 0..n-1, e.g. 2+0+1")
_ORDER_OPTIONAL = Param("order", "int_list", (), help="one factorisation order (default: every order)")
_K_ORDER = Param("k", "int", help="the place in the order predicted, 0 <= k <= n-1")
_MODE = Param("mode", "choice", "psm", "prefix-suffix-middle or suffix-prefix-middle", MODES)
_START = Param("start", "int", help="first middle token")
_END = Param("end", "int", help="one past the last middle token (start < end <= n)")
_START_OPTIONAL = Param("start", "int", -1, help="first middle token (default -1: every split)")
_END_OPTIONAL = Param("end", "int", -1, help="one past the last middle token (default -1: every split)")
_K_FIM = Param("k", "int", help="the middle token predicted, start <= k < end")

ENTRIES: tuple = (  # catalogue entries (theory.spec.Entry), kind "task" or "family"
    Entry("any_order", "any-order AR member: content x_{σ(0)}..x_{σ(k-1)} causal, a [MASK] query predicting x_{σ(k)}",
          (_ORDER, _K_ORDER), any_order_task, "task"),
    Entry("any_order", "any-order AR family: one order's tasks k = 0..n-1, or every order's distinct tasks",
          (_N, _ORDER_OPTIONAL), any_order_family, "family"),
    Entry("any_order_two_stream", "derived any-order two-stream: content c_p = x_{σ(p)} (p < n-1), query g_i "
          "predicting x_i (2n-1 positions)", (_ORDER,), any_order_two_stream_task, "task"),
    Entry("sigma_gpt", "σ-GPT's causal stream over the shuffled order, without its second (target) position id",
          (_ORDER,), sigma_gpt_task, "task"),
    Entry("fim", "FIM member: the rearranged order (psm|spm) up to x_{k-1}, causal, predicting middle token x_k",
          (_N, _MODE, _START, _END, _K_FIM), fim_task, "task"),
    Entry("fim", "FIM family: one split's middle tokens, or every split's distinct tasks",
          (_N, _MODE, _START_OPTIONAL, _END_OPTIONAL), fim_family, "family"),
    Entry("fim_causal", "derived FIM: causal over the rearranged order on n-1 positions, middle targets only",
          (_N, _MODE, _START, _END), fim_causal_task, "task"),
    Entry("fim_published", "FIM as trained (Bavarian et al. 2022): causal over n rearranged tokens, next token "
          "everywhere", (_N, _MODE, _START, _END), fim_published_task, "task"),
)


def _order_of(values: dict) -> tuple[int, ...] | None:
    order = values.get("order") or ()
    return tuple(int(v) for v in order) or None


def _split_of(values: dict) -> str | None:
    if values.get("start", -1) == -1:
        return None
    return f"n={values['n']},mode={values.get('mode', 'psm')},start={values['start']},end={values['end']}"


RECIPES: tuple = (  # theory.derivations.Recipe
    Recipe(
        "any_order",
        layout=lambda v: f"any_order_two_stream:order={plus_joined(o)}" if (o := _order_of(v)) else None,
        symbolic=lambda v: "any_order_two_stream",
        flex="any_order",
        flex_args=lambda v: f"rank={ranks(o).tolist()}" if (o := _order_of(v)) else "",
        assume=("rank=permutation",),
        published=(
            Published("XLNet (Yang et al. 2019), two-stream attention",
                      "zihangdai/xlnet data_utils.py _local_perm (perm_mask) and modeling.py two_stream_rel_attn "
                      "(attn_mask_h: content sees rank <=; attn_mask_g: query sees rank <)",
                      lambda v: f"xlnet:order={plus_joined(o)}" if (o := _order_of(v)) else None),
            Published("A3 (Du et al. 2026, arXiv 2601.13228), two-stream attention",
                      "its abstract states a two-stream attention architecture over any token groups and orders; "
                      "the mask is not in the text found, so modelled as XLNet's two streams (groups of one token)",
                      lambda v: f"xlnet:order={plus_joined(o)}" if (o := _order_of(v)) else None),
            Published("σ-GPT (Pannatier et al. 2024, arXiv 2404.09562), one causal stream, shuffled",
                      "each token carries its own and the next token's position id; one id per symbol here, so "
                      "compared without the next id (by structure only)",
                      lambda v: f"sigma_gpt:order={plus_joined(o)}" if (o := _order_of(v)) else None),
        ),
        finding="One order's merge is XLNet's two streams without the content of the last token of the order "
                "(its row and column: n pairs fewer); both are leak-free. Over every order the merge is a trie of "
                "order prefixes, one sequence per prefix: a per-sequence order (XLNet, A3) is the practical form.",
        doc="docs/families/any_order.md",
    ),
    Recipe(
        "fim",
        layout=lambda v: f"fim_causal:{s}" if (s := _split_of(v)) else None,
        symbolic=lambda v: f"fim_causal:mode={v.get('mode', 'psm')}",
        flex="fim",
        flex_args=lambda v: (f"start={v['start']}, end={v['end']}, mode={v.get('mode', 'psm')!r}"
                             if _split_of(v) else f"mode={v.get('mode', 'psm')!r}"),
        published=(
            Published("FIM (Bavarian et al. 2022), causal over the rearranged tokens",
                      "arXiv 2207.14255 §3: PSM/SPM documents (with [PRE]/[SUF]/[MID] sentinels), trained with "
                      "the ordinary next-token loss on every position",
                      lambda v: f"fim_published:{s}" if (s := _split_of(v)) else None),
        ),
        finding="One split's merge is causal attention over the rearranged order on n - 1 positions, supervised "
                "on the middle only; the usual recipe has the same attention on those positions, keeps the last "
                "token and trains the prefix and suffix predictions too (leak-free both).",
        doc="docs/families/fim.md",
    ),
)

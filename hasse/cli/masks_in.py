"""Resolve a MASK argument (spec, file or mask_mod) for the commands, with its reading options.

The options every command that takes a MASK shares: ``--heads H`` and ``--batch B``
(the ranges over which a ``file.py:mask_mod`` that reads ``h`` or ``b`` is evaluated,
:mod:`theory.heads`) and ``--empty-rows`` (how queries attending no key are read,
:mod:`theory.empty_rows`).
"""

from __future__ import annotations

import os

from hasse.cli.parsers import integer
from hasse.theory.empty_rows import POLICIES, EmptyRows
from hasse.theory.errors import InputError, TooLargeError
from hasse.theory.mask import KEY_ONLY_KINDS, QUERY_LAYOUTS, NamedMask
from hasse.theory.inputs.arrays import CONVENTIONS
from hasse.theory.inputs.mask_mod import RangeNeeded
from hasse.theory.user_code import ARGUMENT

OPTIONS = {"h": "--heads H", "b": "--batch B"}


def add_heads_batch_arguments(p, fails: str | None = None) -> None:
    """``--heads H`` and ``--batch B`` of a MASK; ``fails``: what a batch row does to exit 1 ("leaks")."""
    p.add_argument("--heads", type=integer("--heads", 1), metavar="H",
                   help="a MASK's heads: evaluate a file.py:mask_mod for h = 0..H-1 (the layer is their union), or "
                        "split a (B*H, Q, K) array")
    exit_1 = f" (exit 1 if any {fails}); a 4-D array's batch rows are always each checked" if fails else ""
    p.add_argument("--batch", type=integer("--batch", 1), metavar="B",
                   help=f"evaluate a file.py:mask_mod for batch rows b = 0..B-1, each checked on its own{exit_1}")


def add_range_arguments(p) -> None:
    """``--heads H``, ``--batch B``, ``--queries`` and ``--kv-len K`` for a command that takes a MASK."""
    add_heads_batch_arguments(p)
    add_query_arguments(p)
    add_convention_argument(p)
    p.add_argument("--trust-code", action="store_true",
                   help="let a .json mask whose 'mask' names file.py:function run it, at --n (default: refused)")
    add_code_timeout_argument(p)


def add_code_timeout_argument(p, work: str | None = None) -> None:
    """``--timeout S``: how long user code (a mask_mod, a factory) may run (theory.user_code; default 60 s).

    ``work``: the command's own work that the same limit bounds when it is given (e.g. "the merge").
    """
    from hasse.theory.user_code import DEFAULT_SECONDS

    also = f"; given, it also bounds {work}" if work else ""
    p.add_argument("--timeout", type=float, metavar="S",
                   help=f"seconds a file.py:mask_mod (its import, factory call and evaluation) may run before it is "
                        f"stopped: unknown, exit 3 (default {DEFAULT_SECONDS:g}){also}")


def add_convention_argument(p) -> None:
    """``--convention auto|allowed|blocked|additive``: how an array's values say which pairs are allowed."""
    p.add_argument("--convention", choices=CONVENTIONS, default="auto",
                   help="how a .npy/.pt array's values read: allowed (true/1 = may attend), blocked (true/1 = may "
                        "NOT attend: nn.MultiheadAttention's bool masks), additive (0 or any bias > -1e4 = "
                        "attend; -inf, the dtype's minimum or <= -1e4 = blocked); auto (default): bool/int = "
                        "allowed, float with a negative value = additive, float 0/1 = allowed")


def add_query_arguments(p) -> None:
    """``--queries end|separate`` and ``--kv-len K``: how a non-square (Q x K) mask becomes positions."""
    p.add_argument("--queries", choices=QUERY_LAYOUTS,
                   help="a Q x K mask (Q != K): 'end' (default when Q <= K) makes the queries the last Q of the "
                        "K key positions (KV-cache decoding, chunked prefill; the first K-Q are key-only, the "
                        "cache); 'separate' puts the queries after K key-only memory positions (cross-attention; "
                        "required when Q > K)")
    p.add_argument("--kv-len", type=integer("--kv-len", 1), metavar="K",
                   help="evaluate a file.py:mask_mod on the Q x K grid, Q = --n queries and K keys "
                        "(FlexAttention's Q_LEN x KV_LEN; q_idx still runs 0..Q-1)")


def query_options(args) -> dict:
    """``queries``, ``kv_len``, ``convention`` and ``trust_code`` from parsed arguments (absent options: defaults)."""
    return {"queries": getattr(args, "queries", None), "kv_len": getattr(args, "kv_len", None),
            "convention": getattr(args, "convention", None) or "auto",
            "trust_code": bool(getattr(args, "trust_code", False))}


def key_only_line(key_only, kind: str) -> str | None:
    """The report line naming key-only positions (None when there are none).

    >>> key_only_line(range(10), "cache")
    'key-only positions (KV cache, feed the queries, attend nothing): 0-9'
    """
    from hasse.views.render_text import _ranges

    key_only = list(key_only)
    if not key_only:
        return None
    what = KEY_ONLY_KINDS.get(kind, "keys only")
    return f"key-only positions ({what}, feed the queries, attend nothing): {', '.join(_ranges(key_only))}"


def add_empty_rows_argument(p, default: str) -> None:
    """``--empty-rows attend-all|attend-none|error`` with the command's default."""
    p.add_argument("--empty-rows", choices=POLICIES, default=default,
                   help="how to read a query that attends no key: attend-all (additive-mask kernels: every key), "
                        "attend-none (FlexAttention, flash, safe-softmax SDPA: zeros), error (exit 2) "
                        f"(default {default})")


def flagged(exc: InputError) -> InputError:
    """The error in the command line's words (``--heads H``, ``--empty-rows``)."""
    if isinstance(exc, RangeNeeded):
        return exc.with_option(OPTIONS[exc.axis])
    text = str(exc).replace("choose empty_rows attend-all or attend-none", "choose --empty-rows attend-all or "
                            "attend-none")
    text = text.replace("with queries=separate", "with --queries separate").replace("kv_len", "--kv-len")
    text = text.replace("heads and batch apply to", "--heads and --batch apply to").replace(
        "heads = ", "--heads ").replace("batch = ", "--batch ")
    if text == str(exc):
        return exc
    return type(exc)(text) if type(exc) in (InputError, TooLargeError) else InputError(text)


def load(source: str, n: int | None = None, *, queries: str | None = None, kv_len: int | None = None,
         trust_code: bool = False, convention: str = "auto", code=ARGUMENT) -> NamedMask:
    """Load a mask the way every command reads its MASK argument.

    A ``mask_mod`` written with torch ops is evaluated with torch when it is installed
    (:func:`hasse.gpu_check.mask_mod.torch_fallback_or_none`). A mask_mod needs its
    size; the message names the command-line option ``--n``. A mask_mod that reads
    ``h`` or ``b`` is refused here (``--heads``/``--batch`` go through :func:`load_heads`).
    ``queries`` and ``kv_len`` read a non-square mask (:func:`theory.mask_io.load_mask`).
    ``trust_code`` (``--trust-code``) lets a ``.json`` mask name a mask_mod to run.
    ``code``: the leave to run ``source`` itself when it is ``file.py:mask_mod``
    (:data:`theory.user_code.ARGUMENT`: typed on the command line or passed by an API
    caller; a layer read from a stack file passes None).
    ``convention`` (``--convention``) reads an array's values; ``.pt`` files are read
    with torch (:func:`hasse.gpu_check.torch_masks.read_torch`) when it is installed.
    An array with batch rows gives batch row 0 (its spec says so).
    """
    from hasse.gpu_check.mask_mod import torch_fallback_or_none
    from hasse.gpu_check.torch_masks import torch_reader_or_none
    from hasse.theory.inputs.masks import load_mask, source_kind
    from hasse.theory.inputs.calls import split_function

    path, function = split_function(source) or ("", "")
    if n is None and source_kind(source) == "function" and function and os.path.isfile(path):
        raise InputError("a mask_mod needs --n, the number of positions to evaluate it on", source)
    if kv_len is not None and n is None and source_kind(source) == "function":
        raise InputError("--kv-len K needs --n Q, the number of queries", source)
    try:
        return load_mask(source, n=n, fallback=torch_fallback_or_none(), queries=queries, kv_len=kv_len,
                         trust_code=trust_code, convention=convention, torch_reader=torch_reader_or_none(),
                         code=code)
    except InputError as exc:
        raise flagged(exc) from None


def load_heads(source: str, n: int | None = None, heads: int | None = None, batch: int | None = None, *,
               queries: str | None = None, kv_len: int | None = None, trust_code: bool = False,
               convention: str = "auto", code=ARGUMENT):
    """``(NamedMask, HeadMasks)``: the MASK argument and its masks per batch row and head.

    For a ``file.py:mask_mod``, ``heads`` and ``batch`` are the declared ranges
    (:func:`theory.heads.mask_mod_grid`); the NamedMask holds batch row 0's union
    over heads. A ``.npy``/``.pt`` array of rank 3 or 4 gives its heads and batch rows
    (``heads`` splits a ``(B * H, Q, K)`` array; :func:`theory.mask_io.load_mask_grid`).
    A spec or 0/1 rows are one matrix, for which they are refused. ``code``: as :func:`load`.
    """
    from hasse.theory.heads import load_mask_mod_grid, single
    from hasse.theory.inputs.masks import source_kind

    for value, flag in ((heads, "--heads"), (batch, "--batch")):
        if value is not None and value < 1:
            raise InputError(f"{flag} must be a positive integer, got {value}")
    if not isinstance(source, str) or source_kind(source) != "function":  # the API passes arrays and BlockMasks
        return _load_grid(source, n, heads, batch, queries=queries, kv_len=kv_len, trust_code=trust_code,
                          convention=convention)
    if heads is None and batch is None:
        named = load(source, n, queries=queries, kv_len=kv_len, trust_code=trust_code, convention=convention,
                     code=code)
        return named, single(named.matrix, named.key_only, named.key_only_kind)
    from hasse.gpu_check.mask_mod import torch_fallback_or_none
    from hasse.theory.mask import default_names
    from hasse.theory.inputs.calls import split_function
    from hasse.theory.user_code import TRUSTED

    path, function = split_function(source)
    if n is None:
        raise InputError("a mask_mod needs --n, the number of positions to evaluate it on", source)
    named = load_heads_named(source, path, function, n)  # checks the file and the function
    try:  # the file, its factory call (once) and every head in one bounded run
        grid = load_mask_mod_grid(path, function, source, n, heads, batch, fallback=torch_fallback_or_none(),
                                  kv_len=kv_len, queries=queries, permission=TRUSTED if trust_code else code)
    except InputError as exc:
        raise flagged(exc) from None
    return NamedMask(grid.masks[0].any(axis=0), default_names(grid.n), source, grid.key_only,
                     grid.key_only_kind), grid


def _load_grid(source: str, n, heads, batch, **options):
    """``(NamedMask, HeadMasks)`` of a spec or file (:func:`theory.mask_io.load_mask_grid`), errors flagged."""
    from hasse.gpu_check.mask_mod import torch_fallback_or_none
    from hasse.gpu_check.torch_masks import torch_reader_or_none
    from hasse.theory.inputs.masks import load_mask_grid

    try:
        return load_mask_grid(source, n=n, heads=heads, batch=batch, fallback=torch_fallback_or_none(),
                              torch_reader=torch_reader_or_none(), **options)
    except InputError as exc:
        raise flagged(exc) from None


def load_heads_named(source: str, path: str, function: str, n: int) -> int:
    """Check that ``path`` holds ``function`` (errors as :func:`theory.mask_mod.load_mask_mod` gives them); ``n``."""
    from hasse.theory.inputs.mask_mod import check_n

    if not function:
        raise InputError("needs a function name after ':' (file.py:function)", source)
    if not os.path.isfile(path):
        raise InputError("no such file" if not os.path.exists(path) else "is not a file", path)
    from hasse.theory.atomic_file import note_read

    note_read(path)  # a file the command reads: no output may replace it
    return check_n(n, source)


def apply_policy(grid, b: int, policy: str, source: str | None = None) -> tuple:
    """``(layer mask, EmptyRows)`` of batch row ``b`` under ``policy``, errors in the command line's words."""
    try:
        return grid.layer(b, policy, source)
    except InputError as exc:
        raise flagged(exc) from None


def empty_rows_line(found: EmptyRows) -> str | None:
    """The report line naming the empty rows, the policy and the kernels (None when there are none)."""
    return found.describe() if found.rows else None


STACK_HELP = ("a mask per layer, first layer first: 'sliding_window:w=4 x5, causal x1' (`xK` repeats a layer; "
              "layers are specs, files or file.py:mask_mod), or a preset such as gemma3:n=64,scale=64")


def add_stack_arguments(p) -> None:
    """``--stack SPEC`` and ``--repeat R`` (design.md §7, "Stacks")."""
    p.add_argument("--stack", metavar="SPEC", help=STACK_HELP)
    p.add_argument("--repeat", type=integer("--repeat", 1), metavar="R", help="repeat the whole --stack R times (default 1)")


def load_stack(text: str, n: int | None = None, repeat: int | None = None, *, heads: int | None = None,
               trust_code: bool = False, convention: str = "auto", code=ARGUMENT):
    """The :class:`~theory.stack.LayerStack` of ``--stack`` (errors in the command line's words).

    Each layer is a catalogue spec (``n`` filled in), a mask file or a ``file.py:mask_mod``
    (evaluated at ``n``; with ``heads`` its layer mask is the union over heads ``h < heads``,
    each head's empty rows kept as given: the policy reads them per layer later). A mask with
    several batch rows is refused here: a stack describes one sequence. ``code`` is the
    leave to run the mask_mods ``text`` names (:data:`theory.user_code.ARGUMENT`: typed as
    ``--stack``); the layers of a stack file run only with ``trust_code`` (issue 20).
    """
    from hasse.theory.inputs.masks import source_kind
    from hasse.theory.inputs.stacks import build_stack, load_catalogue_layer
    from hasse.theory.user_code import TRUSTED

    if repeat is not None and repeat < 1:
        raise InputError(f"--repeat must be a positive integer, got {repeat}")

    def loader(item: str, size: int | None, permission):
        if source_kind(item) == "spec":
            return load_catalogue_layer(item, size)
        named, grid = load_heads(item, n=size, heads=heads, trust_code=trust_code, convention=convention,
                                 code=TRUSTED if trust_code else permission)
        if grid.batch_rows > 1:
            raise InputError(f"has {grid.batch_rows} batch rows; a stack layer is one sequence's mask "
                             "(check each batch row on its own)", item)
        if named.key_only:
            raise InputError("a stack layer must be square (no KV-cache or memory positions)", item)
        return named.matrix, named.spec, "attention"

    try:
        return build_stack(text, n, repeat=repeat or 1, load=loader, code=code)
    except InputError as exc:
        raise flagged(exc) from None

"""The arguments every command that reads a MASK, TASK or stack shares, and their :class:`Reading`.

A module the commands share (not a command).

``--heads H`` and ``--batch B`` (the ranges over which a ``file.py:mask_mod`` that
reads ``h`` or ``b`` is evaluated, :mod:`theory.heads`), ``--queries``/``--kv-len``,
``--convention``, ``--trust-code``, ``--timeout``, ``--empty-rows`` (how queries
attending no key are read, :mod:`theory.empty_rows`), ``--stack``/``--repeat``;
:func:`reading_of` turns them into the options of :func:`hasse.theory.inputs.read.read`.
"""

from __future__ import annotations

from hasse.cli.parsers import integer
from hasse.theory.empty_rows import POLICIES
from hasse.theory.inputs.arrays import CONVENTIONS
from hasse.theory.inputs.reading import Reading
from hasse.theory.mask import QUERY_LAYOUTS


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


def add_trust_code_argument(p) -> None:
    """``--trust-code`` of a command that reads task files: code a task's ``mask`` names may run."""
    p.add_argument("--trust-code", action="store_true",
                   help="let a .json task whose 'mask' names file.py:function run it (default: refused)")


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


def add_empty_rows_argument(p, default: str) -> None:
    """``--empty-rows attend-all|attend-none|error`` with the command's default."""
    p.add_argument("--empty-rows", choices=POLICIES, default=default,
                   help="how to read a query that attends no key: attend-all (additive-mask kernels: every key), "
                        "attend-none (FlexAttention, flash, safe-softmax SDPA: zeros), error (exit 2) "
                        f"(default {default})")


def reading_of(args, **given) -> Reading:
    """The :class:`~hasse.theory.inputs.read.Reading` of a command's arguments (absent options: defaults).

    ``given`` overrides a field (``n=task.size``, ``code=None``).
    """
    fields = {"n": getattr(args, "n", None), "heads": getattr(args, "heads", None),
              "batch": getattr(args, "batch", None), "queries": getattr(args, "queries", None),
              "kv_len": getattr(args, "kv_len", None), "convention": getattr(args, "convention", None) or "auto",
              "trust_code": bool(getattr(args, "trust_code", False)), "repeat": getattr(args, "repeat", None) or 1}
    return Reading(**{**fields, **given})


STACK_HELP = ("a mask per layer, first layer first: 'sliding_window:w=4 x5, causal x1' (`xK` repeats a layer; "
              "layers are specs, files or file.py:mask_mod), or a preset such as gemma3:n=64,scale=64")


def add_stack_arguments(p) -> None:
    """``--stack SPEC`` and ``--repeat R`` (design.md §7, "Stacks")."""
    p.add_argument("--stack", metavar="SPEC", help=STACK_HELP)
    p.add_argument("--repeat", type=integer("--repeat", 1), metavar="R", help="repeat the whole --stack R times (default 1)")

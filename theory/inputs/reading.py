"""The options of one read (:class:`Reading`), shared by every reader of the input wing.

:func:`theory.inputs.read.read` takes it (and exports it); the readers below it
(masks, tasks, stacks) take it too, so no reader repeats a list of keywords.
"""

from __future__ import annotations

from dataclasses import dataclass

from hasse.theory.user_code import ARGUMENT, CodePermission


@dataclass(frozen=True)
class Reading:
    """How a source is read: the one options object of :func:`read`.

    ``n``: positions (a mask_mod's grid; for every other form, checked). ``heads``, ``batch``:
    a mask_mod's declared ranges, or an array's layout. ``queries`` (``"end"`` | ``"separate"``)
    and ``kv_len``: a non-square mask. ``convention``: how an array's values read.
    ``trust_code``: code named inside a data file may run. ``code``: the permission to run
    the source itself when it is ``file.py:function`` (:data:`theory.user_code.ARGUMENT`;
    None for a layer of a stack file). ``repeat``: a stack's repetitions. ``empty_rows``:
    the policy, where the reader applies it (a stack layer's grid).
    """

    n: int | None = None
    heads: int | None = None
    batch: int | None = None
    queries: str | None = None
    kv_len: int | None = None
    convention: str = "auto"
    trust_code: bool = False
    code: CodePermission | None = ARGUMENT
    repeat: int = 1
    empty_rows: str | None = None

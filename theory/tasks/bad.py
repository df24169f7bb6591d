"""The bad designs the kit ships with (design §4): each a plausible mask with one flaw.

Every builder's docstring states the counterexample the kit must produce for it
(``hasse leak``, ``hasse counterexample``, ``hasse consistent``). Each design is a
small change to a good task built elsewhere in :mod:`theory.tasks` or to a
catalogue mask, so the flaw is the only difference.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.masks import bidirectional, block_causal, block_two_stream, causal, sliding_window
from hasse.theory.params import require_block, require_positive
from hasse.theory.spec import plus_joined
from hasse.theory.task import Task, make_task
from hasse.theory.tasks.case_studies import block_two_stream_task, butterfly_task
from hasse.theory.tasks.parts import task_to_text, tokens_at, where
from hasse.theory.tasks.prior_art import packed_parts


def _changed(task: Task, name: str, *, inputs=None, mask=None) -> Task:
    """``task`` with other inputs or another mask, under a new name (labels, names, isolate kept)."""
    return make_task(task.tokens, task.inputs if inputs is None else inputs, task.labels,
                     task.mask if mask is None else mask, isolate=task.isolate, name=name, names=task.names)


def bad_butterfly_self(n: int) -> Task:
    """Butterfly whose prediction stream holds ``x_k`` instead of ``agg(x_{k-1},x_{k+1})``.

    Counterexample: a leak at depth 0 at every ``P_k`` (``k = 0 … n-1``): ``P_k``
    holds its own target, witness path ``(P_k,)``. Smallest ``n``: 1.

    Examples
    --------
    >>> bad_butterfly_self(2).inputs[2:]
    (('x0', 0), ('x1', 1))
    """
    task = butterfly_task(n)
    inputs = list(task.inputs)
    for p in where(task.names, "P"):
        k = task.inputs[p][1]
        inputs[p] = (f"x{k}", k)
    return _changed(task, f"bad_butterfly_self:n={task.tokens}", inputs=inputs)


def bad_butterfly_crossed(n: int) -> Task:
    """Butterfly whose forward stream also attends every backward-stream position: ``F_i -> B_j`` for all ``i, j``.

    Counterexample: a leak at depth 2 at every ``P_m`` with ``m >= 1``: the path
    ``B_m -> F_j -> P_m`` for any ``j < m`` (``B_m`` holds ``x_m``, ``F_j`` now attends it,
    ``P_m`` attends ``F_j``). There is no shorter one: ``P_m`` attends only ``F_j`` (``j < m``),
    ``B_j`` (``j > m``) and itself, none of which holds ``x_m``. ``P_0`` attends no forward
    position and stays clean. Smallest ``n`` with a leak: 2 (``B_1 -> F_0 -> P_1``);
    ``n = 1`` has no streams to cross.

    Examples
    --------
    >>> bad_butterfly_crossed(2).mask.astype(int).tolist()  # F0, B1, P0, P1
    [[1, 1, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1]]
    """
    task = butterfly_task(n)
    mask = task.mask.copy()
    mask[np.ix_(where(task.names, "F"), where(task.names, "B"))] = True
    return _changed(task, f"bad_butterfly_crossed:n={task.tokens}", mask=mask)


def bad_block_own_content(n: int, block: int) -> Task:
    """A block design whose queries also see their own block's content: ``2n`` positions.

    ``C_0 … C_{n-1}`` (``x_i`` at pos id ``i``, causal) then ``Q_0 … Q_{n-1}`` (``[MASK]``
    at pos id ``t``, predicting ``x_t``). With ``l = block``: ``Q_t -> C_j`` iff
    ``j // l <= t // l`` (block-causal, so its own block too); ``Q_t -> Q_u`` iff
    ``u // l == t // l`` and ``u <= t`` (the chain of Block Two-Stream's query stream);
    content never attends queries.

    Counterexample: a leak at depth 1 at every ``Q_t``: ``Q_t`` attends ``C_t``, which
    holds ``x_t`` (witness ``C_t -> Q_t``). Smallest ``n``: 1 (``block = 1``).

    Examples
    --------
    >>> bad_block_own_content(1, 1).mask.astype(int).tolist()  # C0, Q0
    [[1, 0], [1, 1]]
    """
    n, block = require_block(n, block)
    content, queries = slice(0, n), slice(n, 2 * n)
    mask = np.zeros((2 * n, 2 * n), dtype=bool)
    mask[content, content] = causal.build(n).matrix
    mask[queries, content] = block_causal.build(n, block).matrix  # j // l <= t // l
    mask[queries, queries] = block_two_stream.build(n, block, "chain").matrix[n - block:, n - block:]
    inputs = tokens_at(range(n)) + [("[MASK]", t) for t in range(n)]
    labels = [None] * n + list(range(n))
    names = [f"C{i}" for i in range(n)] + [f"Q{t}" for t in range(n)]
    return make_task(n, inputs, labels, mask, name=f"bad_block_own_content:n={n},block={block}", names=names)


def bad_mlm_unmasked(n: int) -> Task:
    """Bidirectional attention with a label on every (unmasked) token: position ``i`` holds ``x_i`` and predicts it.

    Counterexample: a leak at depth 0 at every position (witness ``(i,)``). Smallest ``n``: 1.

    Examples
    --------
    >>> t = bad_mlm_unmasked(2)
    >>> t.inputs, t.labels
    ((('x0', 0), ('x1', 1)), ((0,), (1,)))
    """
    mask = bidirectional.build(n)
    n = int(n)
    return make_task(n, tokens_at(range(n)), list(range(n)), mask.matrix, name=f"bad_mlm_unmasked:n={n}",
                     names=mask.names)


def bad_packed_window(lengths: Sequence[int], window: int) -> Task:
    """Packed documents under a causal sliding window of ``window`` keys that ignores document boundaries.

    Inputs, labels and ``isolate`` groups are those of
    :func:`theory.tasks.prior_art.packed`; the mask is
    :func:`theory.masks.sliding_window.build` over the whole packed sequence.

    Counterexample: with ``window >= 2`` and at least two documents, an isolation
    violation at depth 1: the first position of each later document attends the last
    position of the document before it. (No leak: every position still attends only
    itself and earlier ones.) ``window = 1`` or a single document violates nothing.

    Examples
    --------
    >>> t = bad_packed_window((1, 1), 2)
    >>> t.isolate, t.mask.astype(int).tolist()
    (((0,), (1,)), [[1, 0], [1, 1]])
    """
    inputs, labels, documents = packed_parts(lengths)
    window = require_positive("window", window)
    mask = sliding_window.build(len(inputs), window)
    name = f"bad_packed_window:lengths={plus_joined(tuple(int(v) for v in lengths))},window={window}"
    return make_task(len(inputs), inputs, labels, mask.matrix, isolate=documents, name=name, names=mask.names)


def bad_block_query_history(n: int, block: int) -> Task:
    """Block Two-Stream (chain) whose queries also attend every query of earlier blocks.

    That is ``Q_t -> Q_u`` also when ``u // l < t // l`` (``l = block``); the rest is
    :func:`theory.tasks.case_studies.block_two_stream_task` unchanged.

    Counterexample: none for leakage — it is leak-free at every depth, because the
    extra keys are ``[MASK]`` queries whose own upstream is content of blocks before
    theirs. But it is inconsistent with inference by the ``block`` tasks
    (``hasse consistent``): at inference the KV cache keeps content only, so in ``B_b``
    a query sees no earlier block's queries, and no query ``Q_t`` of a block ``b >= 1``
    has an equivalent node here. With one block (``block = n``) nothing changes.

    Examples
    --------
    >>> bad_block_query_history(2, 1).mask.astype(int).tolist()  # C0, Q0, Q1
    [[1, 0, 0], [0, 1, 0], [1, 1, 1]]
    """
    task = block_two_stream_task(n, block, "chain")
    n, block = require_block(n, block)
    queries = where(task.names, "Q")
    t = np.arange(n)
    mask = task.mask.copy()
    mask[np.ix_(queries, queries)] |= t[None, :] // block < t[:, None] // block  # (n, n): u // l < t // l
    return _changed(task, f"bad_block_query_history:n={n},block={block}", mask=mask)


def main() -> None:
    for build, args in ((bad_butterfly_self, (3,)), (bad_butterfly_crossed, (3,)), (bad_block_own_content, (4, 2)),
                        (bad_mlm_unmasked, (3,)), (bad_packed_window, ((2, 2), 2)), (bad_block_query_history, (4, 2))):
        print(build.__doc__.split("\n")[0].replace("``", ""))
        print(task_to_text(build(*args)))
        print()


if __name__ == "__main__":
    main()

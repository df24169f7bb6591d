"""The public Python API of the kit, exported by :mod:`hasse` itself.

Every function takes what the command line takes — a numpy 0/1 matrix, a
built-in spec such as ``"butterfly:n=4"``, or a file path — and returns the
same dataclasses the command line formats. Nothing here prints. Heavy imports
(z3 for :func:`prove`, torch for :func:`check_gradients`) happen inside the
function that needs them, so ``import hasse`` stays light.

>>> import hasse
>>> hasse.mask_to_analysis("butterfly:n=4").convergence_depth
1
>>> hasse.find_leaks("bad_butterfly_self:n=3").leak_free
False
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from hasse.gpu_check.torch_masks import register_input_hooks
from hasse.theory.analysis import MaskAnalysis
from hasse.theory.analysis import mask_to_analysis as _mask_to_analysis
from hasse.theory.consistency import ConsistencyReport
from hasse.theory.consistency import check_consistency as _check_consistency
from hasse.theory.inputs.read import Reading, read
from hasse.theory.leak import Flow, LeakReport
from hasse.theory.leak import find_flows as _find_flows
from hasse.theory.leak import find_leaks as _find_leaks
from hasse.theory.mask import NamedMask
from hasse.theory.merge import MergedTask
from hasse.theory.merge import family_to_merged_task as _family_to_merged_task
from hasse.theory.reach import reach as _reach
from hasse.theory.task import Task

register_input_hooks()  # the torch readers of the input wing (theory.inputs.hooks); imports no torch


def load_mask(source, n: int | None = None, *, queries: str | None = None, kv_len: int | None = None,
              convention: str = "auto", heads: int | None = None, batch: int | None = None) -> NamedMask:
    """The mask ``source`` names, read exactly as every command reads its MASK argument.

    ``source`` is a 0/1 matrix (``source[q, k]`` = query ``q`` may attend key ``k``),
    a :class:`~hasse.theory.mask.NamedMask`, a built-in spec (``"causal:n=4"``), a
    file (``.npy``, ``.pt``/``.pth``, ``.txt``/``.csv`` rows, ``.json``) or
    ``"file.py:mask_mod"`` evaluated on an ``n × n`` grid (``n × kv_len`` with ``kv_len``).

    Arrays, torch tensors and FlexAttention ``BlockMask`` objects are taken as they are
    (design §7, MASK forms): rank 2 ``(Q, K)``, 3 ``(H, Q, K)`` (with ``heads``: the
    ``(B * H, Q, K)`` layout of ``nn.MultiheadAttention``) or 4 ``(B, H, Q, K)``; the
    result is batch row 0's union over heads (its ``spec`` says so when there are
    several batch rows). ``convention`` reads the values: ``"auto"`` (default: bool
    and integers are 0/1 allowed, a float with a negative value is additive),
    ``"allowed"``, ``"blocked"`` (true = may NOT attend) or ``"additive"`` (0 or a bias
    above -1e4 attends; -inf, the dtype's minimum, <= -1e4 blocks). A ``BlockMask`` is
    read per token: full blocks, and partial blocks through its ``mask_mod``.

    A non-square ``(Q, K)`` mask (a KV-cache decode, chunked prefill, cross-attention)
    becomes a square mask over positions (:func:`hasse.theory.mask.square_up`):
    ``queries="end"`` (the default when ``Q <= K``) makes the queries the last ``Q``
    key positions and the first ``K - Q`` key-only (kind ``"cache"``);
    ``queries="separate"`` puts ``K`` key-only memory positions before the ``Q``
    queries. ``key_only`` and ``key_only_kind`` of the result name them.

    Returns
    -------
    NamedMask : ``matrix`` an ``(n, n)`` bool array, ``names`` one per position.

    Raises
    ------
    InputError : one line naming the source and what is wrong.

    Cost: O(n²) to build or read the matrix.

    >>> load_mask("causal:n=3").matrix.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    if isinstance(source, NamedMask):
        return source
    reading = Reading(n=n, heads=heads, batch=batch, queries=queries, kv_len=kv_len, convention=convention)
    return read(source, reading, accept=("mask",)).first_row()


def load_task(source, *, trust_code: bool = False) -> Task:
    """The task ``source`` names: a :class:`~hasse.theory.task.Task`, a built-in spec or a task ``.json`` file.

    A task file whose ``mask`` names Python code (``"masks.py:causal"``,
    ``"attn.py:make(3)"``) is refused unless ``trust_code=True`` (the command line's
    ``--trust-code``); then that mask_mod, beside the JSON file, runs on as many
    positions as ``inputs`` lists.

    Returns
    -------
    Task : inputs, labels and mask over ``N`` positions (design §3).

    Cost: O(N²) for the mask.

    >>> load_task("butterfly:n=3").size
    7
    """
    if isinstance(source, Task):
        return source
    return read(str(source), Reading(trust_code=trust_code), accept=("task",)).task


def load_family(source) -> tuple[Task, ...]:
    """The task family ``source`` names: a sequence of tasks, a built-in spec (``"infill:n=4"``) or a family file.

    Cost: O(sum of N²) over the tasks.

    >>> len(load_family("ar:n=4"))
    3
    """
    if not isinstance(source, str):
        return tuple(load_task(t) for t in source)
    return read(source, accept=("family",)).family


def mask_to_analysis(mask, *, layers: int | None = None, residual: bool = True,
                     empty_rows: str = "attend-none", queries: str | None = None) -> MaskAnalysis:
    """Analyse a mask: convergence depth, classes, Hasse diagram, density, empty rows.

    Definitions (design §2): ``A = M ∨ I`` (``A = M`` with ``residual=False``);
    ``L* = min {L : A^L = A^(L+1)}``; the classes are the strongly connected
    components of ``R* = A^(L*)`` in canonical order; the Hasse edges are the
    covering pairs of classes, lower → upper. With ``layers`` the analysis also
    holds ``R(layers)``. ``empty_rows`` reads queries that attend no key
    (``"attend-none"``: the mask as given; ``"attend-all"``: every key; ``"error"``).

    Returns
    -------
    MaskAnalysis : ``convergence_depth`` (None when the powers never settle),
    ``classes``, ``hasse_edges``, ``dense``, ``height``, ``empty_rows``,
    ``reachability`` (with ``layers``), ``preperiod``/``period`` (no residual).

    Cost: O(n · e / w) word operations for ``e`` allowed pairs on ``w``-bit words;
    an ``n = 8192`` mask takes well under a second (docs/benchmarks.md).

    >>> a = mask_to_analysis("sliding_window:n=6,w=2")
    >>> a.convergence_depth, a.dense, len(a.classes)
    (5, False, 6)
    """
    named = load_mask(mask, queries=queries)
    return _mask_to_analysis(named.matrix, residual=residual, layers=layers, names=named.names,
                             empty_rows=empty_rows, key_only=named.key_only, key_only_kind=named.key_only_kind)


def reach(mask, layers: int, *, residual: bool = True) -> np.ndarray:
    """``R(L)``: the boolean ``(n, n)`` matrix with ``R[q, k]`` iff output ``q`` of an ``L``-layer stack depends on input ``k``.

    Definition: ``R(L) = A^L`` in Boolean arithmetic, ``A = M ∨ I`` (``M`` without
    the residual), ``R(0) = I``; equivalently a walk ``k → … → q`` of at most
    ``L`` attention hops.

    Cost: O(L · e · n / w) for ``e`` allowed pairs.

    >>> reach("sliding_window:n=4,w=2", 2).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1]]
    """
    return _reach(load_mask(mask).matrix, layers, residual=residual)


def load_stack(spec, n: int | None = None, *, repeat: int = 1):
    """A :class:`~hasse.theory.stack.LayerStack`: a mask per layer, first layer first.

    ``spec`` is the ``--stack`` text (``"sliding_window:w=4 x5, causal"``, layers may be
    specs, mask files or ``file.py:mask_mod``), a preset (``"gemma3:n=64,scale=64"``), a
    stack file (``.json``) or a LayerStack (returned as is). ``n`` sizes layer specs
    written without one; ``repeat`` repeats the whole list.

    >>> load_stack("sliding_window:w=2 x2, causal", n=4).depth
    3
    """
    return read(spec, Reading(n=n, repeat=repeat), accept=("preset", "stack")).stack


def stack_flow(stack, n: int | None = None, *, repeat: int = 1):
    """The flow through a stack, propagated until the repeated stack converges (:class:`~hasse.theory.stack.StackFlow`).

    ``first[q, k]`` is the number of layers after which output ``q`` first depends on
    input ``k`` (-1: never); ``reach(L)``, ``converged``, ``receptive_field()`` and
    ``witness(k, q)`` (path and the layer of each hop) follow from it.

    >>> flow = stack_flow("gpt_oss:n=16,scale=32")
    >>> flow.converged, flow.receptive_field().tolist()[:5]
    (2, [0, 1, 1, 1, 2])
    """
    from hasse.theory.stack import propagate

    return propagate(load_stack(stack, n, repeat=repeat))


def find_leaks(task, layers: int | None = None, *, empty_rows: str = "attend-all",
               trust_code: bool = False, stack=None) -> LeakReport:
    """Every supervised position that depends on a position holding its own target, with the shortest witness path.

    ``task`` is a :class:`~hasse.theory.task.Task`, a task spec or task file, or anything
    :func:`load_mask` takes (an array, a tensor, a ``BlockMask``, a NamedMask, a mask spec
    or file), checked as next-token prediction as ``hasse leak MASK`` checks it: each
    batch row of a mask on its own, and the report of the first that leaks (else of row
    0; pass ``mask[b]`` for row ``b``'s own), its empty rows named as read per head.

    Definition (design §3): position ``p`` with target ``t`` leaks within ``L``
    layers iff some ``j`` whose content includes token ``t`` has ``R(L)[p, j]``;
    ``layers=None`` means in the limit (every depth). Isolation groups of the
    task are checked the same way. A query that attends no key is read by
    ``empty_rows``: ``"attend-all"`` (default: as additive-mask kernels, every
    key), ``"attend-none"`` (as FlexAttention and flash kernels) or ``"error"``.
    ``trust_code`` lets a task file name a mask_mod to run (:func:`load_task`).

    Returns
    -------
    LeakReport : ``leak_free``, ``leaks`` (each ``position``, ``target``,
    ``source``, ``path``, ``depth``), ``isolation``, coverage figures.

    Cost: O(N · e / w) for the limit; one breadth-first propagation otherwise.

    With ``stack`` (anything :func:`load_stack` takes, sized by the task), the task's
    inputs and labels run through the stack's layers instead of its mask: each leak's
    ``depth`` is the layer count at which it first appears and ``hop_layers`` names the
    layer of each hop of its path.

    >>> report = find_leaks("bad_butterfly_crossed:n=3")
    >>> report.leak_free, min(leak.depth for leak in report.leaks)
    (False, 2)
    >>> leak = find_leaks("causal_lm:n=4", stack="causal x2, bidirectional").leaks[0]
    >>> leak.depth, leak.hop_layers
    (3, (3,))
    >>> find_leaks(np.ones((3, 3), dtype=bool)).leak_free  # a mask: next-token prediction
    False
    """
    if stack is not None:
        from hasse.theory.stack_leak import find_stack_leaks

        loaded = load_task(task, trust_code=trust_code)
        return find_stack_leaks(loaded, load_stack(stack, loaded.size), layers, empty_rows=empty_rows)
    from hasse.theory.inputs.layers import load_leak_subject  # as ``hasse leak TASK|MASK`` reads it
    from hasse.theory.stack_leak import with_empty_rows

    tasks, _, found = load_leak_subject(task, Reading(trust_code=trust_code), empty_rows=empty_rows)
    reports = [with_empty_rows(_find_leaks(t, layers, empty_rows=empty_rows), rows) for t, rows in zip(tasks, found)]
    return next((r for r in reports if not r.leak_free), reports[0])


def find_flows(mask, sources: Iterable[int], sinks: Iterable[int], *,
               empty_rows: str = "attend-all", queries: str | None = None) -> tuple[Flow, ...]:
    """Each position of ``sinks`` that depends (in the limit) on a position of ``sources``, with the shortest path.

    Definition: a flow ``s → d`` exists iff ``R*[d, s]``; the path is a shortest
    hop path, so its length is the depth at which the flow first appears. Empty
    rows are read by ``empty_rows`` as in :func:`find_leaks`. ``mask`` is anything
    :func:`load_mask` takes, read as ``hasse flow MASK`` reads it: each head's empty
    rows by ``empty_rows``, then the union over heads; each batch row on its own, and
    the flows of the first row that has any (else of row 0).

    Cost: O(n · e / w).

    >>> [f.path for f in find_flows("causal:n=4", [0], [3])]
    [(0, 3)]
    """
    if isinstance(mask, NamedMask):
        return _find_flows(mask.matrix, sources, sinks, empty_rows=empty_rows, key_only=mask.key_only)
    sources, sinks = list(sources), list(sinks)
    subject = read(mask, Reading(queries=queries), accept=("mask",))
    named, grid = subject.mask, subject.grid
    found = []
    for b in range(grid.batch_rows):
        layer, _ = grid.layer(b, empty_rows, named.spec)  # per head, as the command line
        found.append(_find_flows(layer, sources, sinks, empty_rows=empty_rows, key_only=named.key_only))
    return next((f for f in found if f), found[0])


def family_to_merged_task(family) -> MergedTask:
    """The minimal merged task of a family: one node per group of equivalent nodes, every task embedded.

    Definition (design §3): nodes are equivalent iff their down-sets are
    isomorphic (edges and input multisets preserved); the merged task keeps one
    representative per group (copies only where a down-set holds equivalent
    duplicates), the representatives' Hasse edges, and every label.

    Returns
    -------
    MergedTask : ``task`` (an ordinary task with its dense mask), ``nodes``,
    ``node_of_position()``, ``hasse_edges()``, ``copies``.

    Cost: near-linear in the total number of nodes for the case studies
    (signature buckets); VF2 isomorphism only inside a bucket.

    >>> merged = family_to_merged_task("ar:n=5")
    >>> merged.nodes, int(merged.task.mask.sum())
    (4, 10)
    """
    return _family_to_merged_task(load_family(family))


def check_consistency(train, inference) -> ConsistencyReport:
    """Whether a training task serves every step of an inference procedure.

    Definition (design §3): consistent iff every supervised node of every
    inference task has an equivalent node in the training task with the same
    label. Mismatches name the node and how its upstream differs.

    Cost: one merge-style equivalence pass over all tasks.

    >>> check_consistency("block_two_stream:n=4,block=2", "block:n=4,block=2").consistent
    True
    """
    return _check_consistency(load_task(train), load_family(inference))


def prove(name: str, n: int, method: str = "both", *, timeout: float | None = None, workers: int = 1) -> list:
    """Run theorem ``name`` (design §5) for size ``n``: one result per method, each proved, refuted or unknown.

    ``method`` is ``"exhaustive"``, ``"z3"`` or ``"both"``. A result is proved
    only when every object of size ``n`` was checked (exhaustive) or the
    negated claim is unsat (Z3); a timeout gives unknown, never proved.

    Returns
    -------
    list of Result : ``theorem``, ``n``, ``method``, ``verdict``, ``checked``,
    ``seconds``, ``counterexample`` or ``witness``.

    Cost: the exhaustive method checks ``2^(n(n−1))`` masks (mask-level theorems).

    >>> [r.verdict for r in prove("limit_is_preorder", 3)]
    ['proved', 'proved']
    """
    from hasse.proofs import registry
    from hasse.proofs.cli import prove as _prove

    return _prove(registry.get(name), n, method, timeout=timeout, workers=workers, show_progress=False)


def check_gradients(subject, layers: int | None = None, backend: str = "manual", device: str = "cpu", *,
                    seeds: int = 3):
    """Observed dependencies of a real PyTorch attention stack under a mask or task, against ``R(L)``.

    Definition (design §9): output ``q`` is observed to depend on input ``k`` iff
    ``‖∂out_q / ∂x_k‖ ≠ 0`` for some seed; the check agrees iff that pattern is
    exactly ``R(L)`` (zeros wherever theory says no path). ``subject`` is a mask
    (any form :func:`load_mask` takes) or a task (a Task, or a spec/file naming
    one), in which case leak gradients are measured too, or a
    :class:`~hasse.theory.stack.LayerStack` (block ``i`` runs layer ``i``; ``layers``
    defaults to its depth; compared with the stack's ``R(L)``). Needs the ``torch`` extra.

    Returns
    -------
    GpuCheck : ``passed``, ``report`` (``agrees``, ``unexpected``, ``missing``), leak gradients for tasks.

    Cost: one batched vector–Jacobian product per seed; seconds at ``n = 256`` on CPU.
    """
    from hasse.gpu_check.check import run_check
    from hasse.theory.stack import LayerStack

    if not isinstance(subject, (LayerStack, Task)):
        subject = load_mask(subject).matrix
    return run_check(subject, layers, backend, device, seeds=seeds)


def synthesize(target, layers: int, *, cost: str = "pairs", block: int = 128, relabel: bool = False,
               timeout: float | None = None, gpu_check: bool = True, device: str = "auto"):
    """The cheapest mask realising ``target`` within ``layers`` layers, as ``hasse synthesize`` designs it.

    ``target``: a preorder array, or a spec, file, task or family (its limit order). Returns a ``Design``: ``mask``
    (M), ``kernel_mask`` (M or I), ``cost``, ``lower_bound``, ``method``, ``verdicts`` (gpu-check: real layers)."""
    from hasse.views.synthesis_report import design_of

    return design_of(target, layers, cost=cost, block=block, relabel=relabel, timeout=timeout,
                     gpu_check=gpu_check, device=device)[0]


def audit(model, batch=None, *, intended=None, n: int | None = None, documents=None, seeds: int = 3,
          trust_code: bool = False, row: int = 0, layers: int = 2, backends=None, chunk: int = 8):
    """The measured flow of ``model`` on one row of ``batch``, per layer and per operator, against the intended flow.

    ``model``: an ``nn.Module`` (your own, as it is), ``"file.py:build"`` /
    ``"file.py:build(k=v)"`` (``build`` returns a module or ``(module, batch)``; runs only
    with ``trust_code=True``), a local checkpoint directory (its weights, offline) or a
    family / configuration name (built small with seeded weights, ``layers`` layers).
    ``batch``: a dict of the model's keyword arguments (``input_ids`` or ``inputs_embeds``,
    ``position_ids``, ``attention_mask``, ``cu_seq_lens_q/k``, ``seq_idx``, ``labels``) or a
    ``.pt`` / ``.npz`` / ``.json`` file; several rows: ``row``. Without one, ``documents``
    (``"3+5"`` or a tuple) or ``n`` lay out a packed or plain row. ``intended``: a stack
    spec (``"sliding_window:w=3, causal"``), a LayerStack or one (n, n) mask per layer;
    None: from the configuration's layer pattern, else from the operators found, inside
    the documents the batch names (``position_ids`` restarts, ``cu_seq_lens``, ``seq_idx``),
    never a padding key. Needs the ``hf`` extra (torch; transformers for configurations).

    Returns
    -------
    Audit : per backend the measured pairs, the findings grouped by documents with the first
    layer and the operator that carries them (``groups``), and each operator's own flow.
    """
    from hasse.gpu_check.audit.engine import audit_subject
    from hasse.gpu_check.audit.user_model import intended_masks_of, subject_of

    subject = subject_of(model, batch, n=n, documents=documents, row=row, trust_code=trust_code, layers=layers)
    return audit_subject(subject, intended_masks_of(intended, subject.layout.n), seeds=seeds, chunk=chunk,
                         backends=backends)

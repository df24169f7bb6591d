"""block_two_stream_is_leak_free_and_consistent — Block Two-Stream is clean, consistent, and the merge of its family.

Statement. For n tokens and every block size l dividing n, for the ``chain``
variant and (l ≥ 2, where it differs) the ``clique`` variant, the catalogue task
``block_two_stream:n,block=l,variant=v`` (``2n - l`` positions: content ``C_i`` =
``(x_i, i)``, queries ``Q_t`` = ``([MASK], t)`` predicting ``x_t``)

1. is leak-free at every depth: no supervised ``Q_t`` depends on a position holding
   ``x_t``, through any number of layers;
2. is consistent with inference by the block tasks ``block:n,block=l,variant=v``
   (decoding block b sees the content of blocks < b — a KV cache of content only —
   and block b's queries): every supervised node of every ``B_b`` has an equivalent
   node in the training task with the same input and label;
3. is isomorphic to the kit's merge of ``block:n,block=l,variant=v``, and has ``2n - l``
   positions.

Notation. ``A = M ∨ I``; a leak of ``p`` with target ``t`` is a walk from a position whose
input holds ``x_t`` to ``p``; nodes, down-sets, ≅ as in design.md §3.

Exhaustive method. ``find_leaks`` in the limit (every leak with its depth: none in
the limit means none at any depth, since ``R(L) ≤ R*``), ``check_consistency`` against the
block family, ``diagrams_isomorphic`` against ``family_to_merged_task``.

Z3 method (independent of ``theory.leak``/``consistency``/``merge`` checks; the tasks'
raw rows, inputs and labels only). (1) ``find_leak_path``: one-hot walk variables
``at[d][v]`` for ``d = 0 … N-1``, ``at[d+1][v] ⇒ ∨_{u : A[v,u]} at[d][u]`` (the residual lets the walk
stay), ends at a supervised ``p``, starts at a holder of one of ``p``'s targets. Any walk
contains a simple path of at most ``N - 1`` hops, so unsat means no leak at any depth;
sat is decoded into the leak path. (2) For every supervised (position, target) of
every ``B_b``: an injective cover-exact map of its down-set into the training task's
diagram (rebuilt by :mod:`solvers.posets`), input multisets kept and the label at the
image of the root — sat is the matching node, unsat a refutation. (3) A bijection of
nodes between the merged task and the catalogue task keeping covers, inputs, labels.

Largest n within 60 s, all block sizes and variants together (measured,
docs/benchmarks.md): exhaustive ≥ 512 (45 s at n = 512, the largest tried), Z3 48
(53 s; n = 56 over 60 s).

References. C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (Block
Two-Stream Attention); design.md §3 (consistency), §4 (``block``, ``block_two_stream``), §5.
"""

from __future__ import annotations

from hasse.proofs.cli import script_main
from hasse.proofs.task_checks import (kit_leak, proved_outcome, refuted_outcome, solver_time, task_json, z3_leak,
                                      z3_unknown)
from hasse.proofs.theorem import Theorem
from hasse.solvers import class_sizes

NAME = "block_two_stream_is_leak_free_and_consistent"


def cases(n: int):
    """``(training spec, inference family spec, block)`` for every block size dividing n and variant."""
    from hasse.solvers.task_sets import block_specs

    out = []
    for family in block_specs(n):
        params = family.split(":", 1)[1]
        block = int(params.split("block=")[1].split(",")[0])
        out.append((f"block_two_stream:{params}", family, block))
    return out


def _build(train: str, family: str):
    import hasse.theory.merge as merge
    from hasse.theory.catalog import build_family, build_task

    tasks = tuple(build_family(family))
    return build_task(train), tasks, merge.family_to_merged_task(tasks)


def exhaustive_check(n: int, ctx):
    import hasse.theory.consistency as consistency
    import hasse.theory.equivalence as eq
    from hasse.theory.labelled import task_to_hasse

    checked = 0
    for train, family, block in cases(n):
        task, tasks, merged = _build(train, family)
        checked += 1
        base = {"design": train, "inference": family}
        if task.size != 2 * n - block:
            return refuted_outcome(checked, {**base, "why": f"{task.size} positions, not 2n - l = {2 * n - block}"})
        found = kit_leak(task)
        if found:
            return refuted_outcome(checked, {**base, **found, "why": "a leak in the limit", "task": task_json(task)})
        report = consistency.check_consistency(task, tasks)
        if not report.consistent:
            m = report.mismatches[0]
            return refuted_outcome(checked, {**base, "why": "inconsistent with inference", "inference_task": m.task,
                                             "position": m.position, "input": list(m.input), "target": m.target,
                                             "extra_upstream": m.extra_upstream, "missing_upstream": m.missing_upstream,
                                             "task": task_json(task)})
        if not eq.diagrams_isomorphic(task_to_hasse(merged.task), task_to_hasse(task)):
            return refuted_outcome(checked, {**base, "why": "not isomorphic to the merge of the block family",
                                             "merged": task_json(merged.task), "task": task_json(task)})
    return proved_outcome(checked, designs=[c[0] for c in cases(n)])


def z3_check(n: int, ctx):
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.prove import SAT, UNKNOWN
    from hasse.solvers.smt.task_maps import find_embedding, find_isomorphism

    calls = 0
    for train, family, block in cases(n):
        task, tasks, merged = _build(train, family)
        base = {"design": train, "inference": family}
        if task.size != 2 * n - block:
            return refuted_outcome(calls, {**base, "why": f"{task.size} positions, not 2n - l = {2 * n - block}"})
        calls += 1
        leak, answer = z3_leak(task, ctx)
        if answer is not None:
            return z3_unknown(answer, calls, f"the leak walk of {train}")
        if leak:
            return refuted_outcome(calls, {**base, **leak, "why": "Z3: a walk from a holder of the target (sat)",
                                           "task": task_json(task)})
        td = task_diagram(task)
        for b, inference in enumerate(tasks):
            d = task_diagram(inference)
            for c in range(d.size):
                for pair in sorted(d.labels[c]):
                    calls += 1
                    emb = find_embedding(d, td, root=c, labels=False, root_labels={pair}, timeout=solver_time(ctx))
                    if emb.status == UNKNOWN:
                        return z3_unknown(emb, calls, f"consistency of B_{b} node {c}")
                    if emb.status != SAT:
                        why = ("inconsistent with inference (Z3: no training node equivalent to the "
                               "inference node with its label, unsat)")
                        return refuted_outcome(calls, {**base, "why": why, "inference_task": b,
                                                       "positions": list(d.members[c]), "input": list(pair[0]),
                                                       "target": pair[1], "task": task_json(task)})
        calls += 1
        iso = find_isomorphism(task_diagram(merged.task), td, labels=True, timeout=solver_time(ctx))
        if iso.status == UNKNOWN:
            return z3_unknown(iso, calls, f"merge ≅ {train}")
        if iso.status != SAT:
            return refuted_outcome(calls, {**base, "why": "Z3: no bijection between the merge and the design (unsat)",
                                           "merged": task_json(merged.task), "task": task_json(task)})
    return proved_outcome(calls, designs=[c[0] for c in cases(n)], solver_calls=calls)


THEOREM = Theorem(
    NAME,
    "for every block size l dividing n (chain, and clique where it differs): Block Two-Stream is leak-free at "
    "every depth, consistent with inference by the block tasks (KV cache of content only), has 2n - l positions "
    "and is isomorphic to merge(block:n,block=l)",
    exhaustive_check,
    z3_check,
    space=class_sizes.block_designs,  # complete or not proved: every block size dividing n, counted independently
    max_n={"exhaustive": 2048, "z3": 192},  # size guard (about 4x the n each method proves in 60 s)
)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

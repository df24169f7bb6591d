"""merged_task_embeds_every_task — the kit's merge serves every node of every task.

Statement. For every family F checked at n and its merged task ``M =
family_to_merged_task(F)``: every node ``c`` of every task ``T ∈ F`` has an equivalent
node ``d`` in ``M`` (an isomorphism ``↓c → ↓d`` keeping edges and input multisets)
that carries its labels (for each supervised position of ``c`` with input ``x`` and
target ``t``, a position of ``d`` with input ``x`` is labelled ``t``).

The families checked at n: the built-in families on n tokens (``ar:n`` for n ≥ 2,
``block:n,block=l`` for every ``l`` dividing n, chain and — for ``l ≥ 2`` — clique,
``infill:n``) and the exhaustive class ``F_n``: every family (an ordered list of any
number of tasks) of labelled Hasse diagrams over a 2-symbol alphabet (``a`` = ``x0``,
``b`` = ``[MASK]`` predicting token 1; each task up to isomorphism) with n nodes in
all — 2, 11, 68, 469, 3640 families for n = 1 … 5 (:mod:`solvers.task_sets`).

Notation. Node = class of a task's limit order with its input multiset; ``↓c`` its
down-set; labels of a node = its ``(input, target)`` pairs.

Exhaustive method. The kit's merge, the merged task's diagram (``task_to_hasse``),
and for each task node the kit's fast test ``equivalent`` against the merged node the
merge says it used, then against every merged node, plus the label check.

Z3 method (independent of ``theory.merge``/``equivalence``/``labelled``). Both the
task and the merged task are rebuilt from raw rows (:mod:`solvers.posets`). One
query per task: a map of all its nodes into M's nodes, one-to-one on every
down-set, input multisets and labels kept, each node's cover set mapped exactly onto
its image's cover set (``encode_map``, ``encode_injective_on_down_sets``,
``encode_cover_exact``). Such a map restricted
to ``↓c`` is an isomorphism onto ``↓f(c)`` (the nodes below ``f(c)`` are exactly the
images of those below ``c``, by induction in topological order), so sat proves the
statement for every node of the task, the model is the witness. Only when it is
unsat (no coherent embedding), one query per node ``c`` for ``↓c`` alone with ``c``'s
labels at the image of ``c``: unsat refutes the statement at that node (the
statement is "every node has a match", so the per-node query is the negation's
witness search), sat proves that node.

Largest n within 60 s (measured, docs/benchmarks.md): exhaustive 5 (3640 + 5
families, 6.8 s), Z3 5 (25 s); n = 6 does not finish (the class has ~10^5 families).

References. C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951
(minimal common supergraph of the tasks' Hasse diagrams); design.md §3 (node
equivalence, minimal merged task, duplicate copies), §4 (the families), §5.
"""

from __future__ import annotations

from hasse.proofs.cli import script_main
from hasse.proofs.task_checks import (deadline, families_at, family_space, proved_outcome, refuted_outcome, report, solver_time,
                                      task_json, z3_unknown)
from hasse.proofs.theorem import Theorem

NAME = "merged_task_embeds_every_task"


def _node_counterexample(desc, tasks, i, members, merged_task, why) -> dict:
    t = tasks[i]
    return {"family": desc, "task": i, "task_name": t.name, "node_positions": list(members),
            "inputs": [list(t.inputs[p]) for p in members], "labels": [list(t.labels[p]) for p in members],
            "why": why, "task_json": task_json(t), "merged": task_json(merged_task)}


def _carries(h, c, hm, d) -> bool:
    task, mt = h.task, hm.task
    for p in h.members[c]:
        for t in task.labels[p]:
            if not any(mt.inputs[q] == task.inputs[p] and t in mt.labels[q] for q in hm.members[d]):
                return False
    return True


def exhaustive_check(n: int, ctx):
    import hasse.theory.equivalence as eq
    import hasse.theory.merge as merge
    from hasse.theory.labelled import task_to_hasse

    dl = deadline(ctx)
    families = families_at(n)
    nodes = 0
    for f, (desc, tasks) in enumerate(families):
        merged = merge.family_to_merged_task(tasks)
        hm = task_to_hasse(merged.task)
        for i, task in enumerate(tasks):
            h = task_to_hasse(task)
            for c in range(h.size):
                nodes += 1
                hint = []
                try:  # the merged node the merge says it used, first
                    hint = [hm.node_of_position[merged.node_members[merged.node_of[i][c]][0]]]
                except (IndexError, AttributeError):
                    pass
                candidates = hint + [d for d in range(hm.size) if d not in hint]
                if not any(eq.equivalent(h, c, hm, d) and _carries(h, c, hm, d) for d in candidates):
                    return refuted_outcome(f + 1, _node_counterexample(desc, tasks, i, h.members[c], merged.task,
                                                                       "no equivalent merged node carries its labels"))
        report(ctx, f + 1, len(families))
        dl()
    return proved_outcome(len(families), families=len(families), task_nodes=nodes)


def z3_check(n: int, ctx):
    import hasse.theory.merge as merge
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.prove import SAT, UNKNOWN
    from hasse.solvers.smt.task_maps import find_embedding

    families = families_at(n)
    calls = per_node = 0
    for f, (desc, tasks) in enumerate(families):
        merged = merge.family_to_merged_task(tasks)
        md = task_diagram(merged.task)
        for i, task in enumerate(tasks):
            d = task_diagram(task)
            answer = find_embedding(d, md, labels=True, timeout=solver_time(ctx))
            calls += 1
            if answer.status == SAT:
                continue
            if answer.status == UNKNOWN:
                return z3_unknown(answer, f, f"the embedding of task {i} of {desc}")
            for c in range(d.size):  # no coherent embedding: decide node by node
                node = find_embedding(d, md, root=c, labels=False, root_labels=d.labels[c],
                                      timeout=solver_time(ctx))
                calls += 1
                per_node += 1
                if node.status == UNKNOWN:
                    return z3_unknown(node, f, f"node {c} of task {i} of {desc}")
                if node.status != SAT:
                    why = ("Z3: no one-to-one cover-exact map of its down-set onto a merged node carrying its "
                           "labels (unsat)")
                    return refuted_outcome(f + 1, _node_counterexample(desc, tasks, i, d.members[c], merged.task, why),
                                           solver_calls=calls)
        report(ctx, f + 1, len(families))
    return proved_outcome(len(families), families=len(families), solver_calls=calls, per_node_calls=per_node)


THEOREM = Theorem(
    NAME,
    "every node of every task has an equivalent node carrying its labels in the kit's merged task (built-in "
    "families on n tokens, and every family of labelled Hasse diagrams with n nodes in all)",
    exhaustive_check,
    z3_check,
    space=family_space,  # complete or not proved: every family, counted independently
    max_n={"exhaustive": 6, "z3": 6},  # size guard (~10^5 families at n = 6)
)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

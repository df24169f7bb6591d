"""merge_is_minimum — the kit's merge has exactly the minimum number of nodes.

Statement. For every family F checked at n, the merged task ``family_to_merged_task(F)``
(what ``hasse merge`` prints) has exactly as many nodes as the smallest merged task of
F. A *merged task* is one into which every task maps so that every node has an
equivalent node (design.md §3): a map of the task's nodes (classes with input
multisets) that keeps input multisets, maps each node's cover set exactly onto its
image's cover set and is one-to-one on every down-set (two nodes with a common upper
bound never share an image; labels are collected onto the images, so they add no
constraint). Such a map restricted to ``↓c`` is an isomorphism onto ``↓f(c)``; it is
what the kit's merge records in ``node_of``. Equal nodes in no common down-set may
share an image: a task of two disjoint chains ``a → b`` needs 2 merged nodes.

Notation. Node = class of a task's limit order with its input multiset; ``d ⋖ c``: c
covers d; ``↓c`` the down-set; ``k`` the kit's number of merged nodes.

Families checked at n. For n ≤ 5 (:data:`FULL_UPTO`): the built-in families on n tokens
(``ar``, ``block`` for every block size dividing n and both variants, ``infill``), the
whole exhaustive class ``F_n`` (every family of labelled Hasse diagrams over 2 symbols
with n nodes in all: 2, 11, 68, 469, 3640 for n = 1 … 5, :mod:`solvers.task_sets`) and
8 seeded random families of two or three tasks over 3 symbols; the verdict covers
all of them (checked = their number, counted independently). For n = 6: a seeded
uniform random sample of :data:`SAMPLE` families of ``F_6`` (32,898 families; drawn
with replacement by :mod:`solvers.family_sample`, seed :data:`SEED`). That verdict
covers the sample only: its line says "proved on a random sample of 1,000 of 32,898
families", its details carry ``scope: "sample"``, ``sample``, ``seed`` and
``class_size``, and ``checked`` must equal the sample size.

Exhaustive method (independent of ``theory``: tasks rebuilt from raw rows by
:mod:`solvers.posets`). A minimum merged task is a quotient of the tasks' disjoint
union (the images of all tasks form a down-closed merged task by themselves), so a
depth-first search over identifications — each task node joins an earlier merged node
with the same inputs and the same image of its covers, not the image of a node of its
down-sets, or opens a new one — pruned at ``k + 1``, finds the minimum if it is at
most ``k`` (:func:`solvers.merge_search.min_merged_nodes`). Proved for F when that
minimum is ``k`` and the merged task's own diagram has ``k`` nodes.

Z3 method (independent of ``theory``). ``merge_within(F, K)``: K merged nodes, each with
an input multiset (an integer index) and cover Booleans ``cov[m, m']`` for ``m' < m``
(a DAG of covers, numbered topologically); per task a one-hot map ``f[c, m]``,
one-to-one on every down-set, with
``f(c) = m ⇒ inputs(m) = inputs(c) ∧ ∀ m': cov[m, m'] = ∨_{d ⋖ c} f[d, m']`` (and no
cover of c maps to ``m' ≥ m``). Symmetry breaking: the largest down-set's nodes are
merged nodes ``0, 1, …`` (its image is down-closed, so numbering it first is again
topological). Proved for F when unsat at ``K = k − 1`` and sat at ``K = k`` (the kit's
count is reached, so the unsat is tight).

Refuted: the family, the kit's node count and merged task, and the smaller merged
task found (inputs, covers and each task's map) — or, when the kit's count is below
the minimum, the minimum and why.

Largest n within 60 s (measured on 2 shared cores, docs/benchmarks.md): exhaustive 5
(3,653 families, ~7 s) and the n = 6 sample (~18 s, most of it counting the class and
drawing the sample); Z3 5 (~55 s) and the n = 6 sample (~37 s). The size guard stops at
6: counting the class at 7 alone takes too long. ``--timeout`` is checked between
families, inside the quotient search and the sampling, and bounds each Z3 call.

Two merges this statement refutes: one that keeps every node of a task apart (n = 5:
``a → a`` then ``{a, a → a}``, 4 nodes where 2 suffice) and one that takes the first free
copy of a duplicated node (n = 6: ``a → a`` then ``[[], [], [1], [0, 2]]`` all ``a``, 5
nodes where 4 suffice); the merge chooses copies exactly (:mod:`theory.merge_copies`).
``merged_task_is_minimum`` is accepted as another name of this theorem.

References. C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (the merge
as a minimal common supergraph); design.md §3 (minimal merged task, duplicate copies), §5.
"""

from __future__ import annotations

from hasse.proofs.cli import script_main
from hasse.proofs.task_checks import (RANDOM_FAMILIES, deadline, family_space, proved_outcome, refuted_outcome,
                                      report, solver_time, task_json, z3_unknown)
from hasse.proofs.theorem import PROVED, Outcome, Theorem

NAME = "merge_is_minimum"
FULL_UPTO = 5  # every family of the class up to this n; a seeded sample beyond
SAMPLE = 1000  # families in the sample beyond FULL_UPTO
SEED = 0


def space(n: int) -> int:
    """The families the check covers at ``n``, counted without the generators (the sample size beyond FULL_UPTO)."""
    return family_space(n, with_random=True) if n <= FULL_UPTO else SAMPLE


def families(n: int, ctx):
    """``(families, scope details)``; families is an iterator of ``(description, tasks)``, ``total`` their number."""
    from hasse.solvers.task_sets import builtin_families, random_families, small_families

    dl = deadline(ctx)
    if n > FULL_UPTO:
        from hasse.solvers.family_sample import class_size, sample_families

        total = class_size(n)
        dl()
        sample = sample_families(n, SAMPLE, SEED, deadline=dl)
        return iter(sample), {"scope": "sample", "sample": SAMPLE, "seed": SEED, "class_size": total,
                              "space": "families of F_n drawn uniformly, with replacement"}, SAMPLE

    def listed():
        yield from builtin_families(n)
        for fam in small_families(n):
            dl()
            yield fam
        yield from random_families(n, RANDOM_FAMILIES)

    return listed(), {"scope": "all"}, space(n)


def _done(checked: int, scope: dict, **details) -> Outcome:
    if scope["scope"] == "sample":
        reason = (f"proved on a random sample of {scope['sample']:,} of {scope['class_size']:,} families "
                  f"(seed {scope['seed']}): not a full proof")
        return Outcome(PROVED, checked, reason=reason, details=scope | details)
    return proved_outcome(checked, **scope, **details)


def _family_json(desc, tasks) -> dict:
    return {"family": desc, "tasks": [task_json(t) for t in tasks]}


def merges(n: int, ctx):
    """``(scope details, rows)``: rows yields ``(index, description, tasks, the kit's merge)`` of every family.

    The progress is reported, and the time limit checked, as the next family is asked for.
    """
    import hasse.theory.merge as merge

    dl = deadline(ctx)
    listed, scope, total = families(n, ctx)

    def rows():
        for f, (desc, tasks) in enumerate(listed):
            yield f, desc, tasks, merge.family_to_merged_task(tasks)
            report(ctx, f + 1, total)
            dl()

    return scope, rows()


def exhaustive_check(n: int, ctx):
    from hasse.solvers.merge_search import min_merged_nodes
    from hasse.solvers.posets import task_diagram

    dl = deadline(ctx)
    scope, rows = merges(n, ctx)
    checked = with_copies = 0
    for f, desc, tasks, merged in rows:
        k = merged.nodes
        diagrams = [(d.inputs, d.lower) for d in map(task_diagram, tasks)]
        least = min_merged_nodes(diagrams, k + 1, deadline=dl)  # the minimum, if it is at most k
        own = task_diagram(merged.task).size
        if least is None or least.nodes != k or own != k:
            found = {} if least is None else {
                "smaller_nodes": least.nodes, "smaller": {"inputs": [list(x) for x in least.inputs],
                                                          "lower": [list(x) for x in least.lower],
                                                          "maps": [list(x) for x in least.maps]}}
            why = ("the kit's merge has more nodes than the minimum" if least is not None and least.nodes < k else
                   f"the kit's merged task has {own} nodes, not the {k} it reports" if own != k else
                   f"no merged task has {k} nodes or fewer: the kit's is not a merged task")
            return refuted_outcome(f + 1, {**_family_json(desc, tasks), "kit_nodes": k, "why": why, **found,
                                           "kit_merged": task_json(merged.task)})
        checked += 1
        with_copies += bool(merged.copies)
    return _done(checked, scope, families=checked, with_copies=with_copies)


def z3_check(n: int, ctx):
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.merge_within import merge_within, merged_value_to_task
    from hasse.solvers.smt.prove import SAT, UNKNOWN

    scope, rows = merges(n, ctx)
    calls = checked = 0
    for f, desc, tasks, merged in rows:
        k = merged.nodes
        diagrams = [task_diagram(t) for t in tasks]
        fewer = merge_within(diagrams, k - 1, timeout=solver_time(ctx))
        calls += 1
        if fewer.status == UNKNOWN:
            return z3_unknown(fewer, checked, f"{k - 1} nodes for {desc}")
        if fewer.status == SAT:
            smaller = merged_value_to_task(fewer.value, diagrams, tasks[0].tokens)
            maps = [[m[c] for c in range(len(m))] for m in fewer.value["maps"]]
            return refuted_outcome(f + 1, {**_family_json(desc, tasks), "kit_nodes": k,
                                           "why": "the kit's merge has more nodes than the minimum",
                                           "smaller_nodes": len({m for row in maps for m in row}),
                                           "smaller": {**fewer.value, "maps": maps}, "smaller_task": task_json(smaller),
                                           "kit_merged": task_json(merged.task)}, solver_calls=calls)
        exact = merge_within(diagrams, k, timeout=solver_time(ctx))
        calls += 1
        if exact.status == UNKNOWN:
            return z3_unknown(exact, checked, f"{k} nodes for {desc}")
        if exact.status != SAT:
            return refuted_outcome(f + 1, {**_family_json(desc, tasks), "kit_nodes": k,
                                           "why": "Z3 finds no merged task with the kit's node count: the kit's "
                                                  "merged task is not one"}, solver_calls=calls)
        checked += 1
    return _done(checked, scope, families=checked, solver_calls=calls)


THEOREM = Theorem(
    NAME,
    "the kit's merge has exactly the minimum number of nodes of any merged task (every node with an equivalent "
    "node: cover-exact, one-to-one on down-sets), for the built-in families on n tokens, every family of labelled "
    "Hasse diagrams with n nodes in all and 8 seeded random families (n <= 5), or a seeded random sample of "
    "1,000 families of that class (n = 6)",
    exhaustive_check,
    z3_check,
    space=space,  # complete or not proved: every family (n <= 5) or every family of the sample (n = 6)
    max_n={"exhaustive": 6, "z3": 6},  # size guard: beyond 6 even the class size takes too long to count
)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

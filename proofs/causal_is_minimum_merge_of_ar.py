"""causal_is_minimum_merge_of_ar — merging the autoregressive family gives causal attention, and nothing smaller.

Statement (n ≥ 2 tokens). The kit's merge of ``ar:n`` (tasks ``T_k``, ``k = 1 … n-1``:
``x_0 … x_{k-1}`` causal, label ``k`` at position ``k-1``) is isomorphic to causal
attention on ``n - 1`` positions with ``x_i`` at position ``i`` predicting token ``i + 1``
(the catalogue mask ``causal:n=n-1``), and no merged task of ``ar:n`` has fewer nodes.

Notation. ≅: a bijection of nodes (classes of the limit order) keeping covers, input
multisets and labels; merged task and minimality as in ``merge_is_minimum``.

Exhaustive method. ``family_to_merged_task``, ``diagrams_isomorphic`` against the
reference, ``n - 1`` positions, one node per equivalence group and no copies, and the
quotient search of :func:`solvers.merge_search.min_merged_nodes` for a merged task with
fewer nodes.

Z3 method (independent of ``theory.merge``/``equivalence``/``labelled``; diagrams rebuilt
from raw rows by :mod:`solvers.posets`): (1) a bijection of the merged task's nodes
onto the reference's keeping covers exactly, inputs and labels (sat, the map is the
witness); (2) every ``T_k`` embeds directly into the reference (injective, cover-exact,
labels carried: causal is a merged task of ``ar:n`` without trusting the merge); (3)
``merge_within(ar:n, n - 2)`` unsat and ``merge_within(ar:n, n - 1)`` sat.

Largest n within 60 s (measured, docs/benchmarks.md): exhaustive ≥ 512 (6.5 s at
n = 512, the largest tried), Z3 32 (41 s; n = 40 over 60 s).

References. C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (causal
attention as the minimal merge of the AR family); design.md §3, §4 (``ar``), §5.
"""

from __future__ import annotations

from hasse.proofs.cli import script_main
from hasse.proofs.task_checks import proved_outcome, refuted_outcome, solver_time, task_json, z3_unknown
from hasse.proofs.theorem import Theorem

NAME = "causal_is_minimum_merge_of_ar"


def causal_reference(n: int):
    """Causal attention on ``n - 1`` positions (the catalogue mask), ``x_i`` at position ``i`` predicting ``i + 1``."""
    from hasse.theory.catalog import build_mask
    from hasse.theory.task import make_task

    size = n - 1
    return make_task(n, [(f"x{i}", i) for i in range(size)], [i + 1 for i in range(size)],
                     build_mask(f"causal:n={size}").matrix, name=f"causal:n={size} with labels i+1")


def _merge(n: int):
    import hasse.theory.merge as merge
    from hasse.theory.catalog import build_family

    tasks = tuple(build_family(f"ar:n={n}"))
    return tasks, merge.family_to_merged_task(tasks)


def exhaustive_check(n: int, ctx):
    import hasse.theory.equivalence as eq
    from hasse.solvers.merge_search import min_merged_nodes
    from hasse.theory.labelled import task_to_hasse

    tasks, merged = _merge(n)
    ref = causal_reference(n)
    base = {"family": f"ar:n={n}", "merged": task_json(merged.task), "reference": task_json(ref)}
    if merged.task.size != n - 1:
        return refuted_outcome(1, {**base, "why": f"the merge has {merged.task.size} positions, not n - 1 = {n - 1}"})
    if not eq.diagrams_isomorphic(task_to_hasse(merged.task), task_to_hasse(ref)):
        return refuted_outcome(1, {**base, "why": "the merge is not isomorphic to causal attention on n - 1 positions"})
    if merged.copies or merged.nodes != merged.groups:
        return refuted_outcome(1, {**base,
                                   "why": f"{merged.nodes} nodes for {merged.groups} groups (copies {merged.copies})"})
    smaller = min_merged_nodes([(h.inputs, h.lower) for h in map(task_to_hasse, tasks)], merged.nodes)
    if smaller is not None:
        return refuted_outcome(1, {**base, "why": f"a merged task with {smaller.nodes} nodes exists",
                                   "smaller": {"inputs": [list(x) for x in smaller.inputs],
                                               "lower": [list(x) for x in smaller.lower]}})
    return proved_outcome(1, nodes=merged.nodes, groups=merged.groups, tasks=len(tasks))


def z3_check(n: int, ctx):
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.merge_within import merge_within
    from hasse.solvers.smt.prove import SAT, UNKNOWN
    from hasse.solvers.smt.task_maps import find_embedding, find_isomorphism

    tasks, merged = _merge(n)
    ref = causal_reference(n)
    rd, md = task_diagram(ref), task_diagram(merged.task)
    base = {"family": f"ar:n={n}", "merged": task_json(merged.task), "reference": task_json(ref)}
    calls = 1
    iso = find_isomorphism(md, rd, labels=True, timeout=solver_time(ctx))
    if iso.status == UNKNOWN:
        return z3_unknown(iso, calls, "the isomorphism merge ≅ causal")
    if iso.status != SAT:
        return refuted_outcome(calls, {**base,
                                       "why": "Z3: no bijection of nodes keeping covers, inputs and labels (unsat)"})
    diagrams = [task_diagram(t) for t in tasks]
    for k, d in enumerate(diagrams, start=1):
        calls += 1
        emb = find_embedding(d, rd, labels=True, timeout=solver_time(ctx))
        if emb.status == UNKNOWN:
            return z3_unknown(emb, calls, f"the embedding of T_{k}")
        if emb.status != SAT:
            return refuted_outcome(calls, {**base, "why": f"Z3: T_{k} does not embed into causal attention (unsat)",
                                           "task": task_json(tasks[k - 1])})
    for budget, want in ((n - 2, "unsat"), (n - 1, "sat")):
        calls += 1
        answer = merge_within(diagrams, budget, timeout=solver_time(ctx))
        if answer.status == UNKNOWN:
            return z3_unknown(answer, calls, f"a merged task with {budget} nodes")
        if answer.status != want:
            why = (f"Z3: a merged task with {budget} nodes exists" if want == "unsat"
                   else f"Z3: no merged task with {budget} nodes")
            return refuted_outcome(calls, {**base, "why": why, "model": answer.value})
    return proved_outcome(calls, isomorphism={str(a): b for a, b in iso.value.items()}, solver_calls=calls)


THEOREM = Theorem(
    NAME,
    "merge(ar:n) is isomorphic to causal attention on n - 1 positions (x_i predicting i + 1), and no merged task "
    "of ar:n has fewer nodes",
    exhaustive_check,
    z3_check,
    min_n=2,
    space=lambda n: 1,  # one family, ar:n
    max_n={"exhaustive": 4096, "z3": 128},  # size guard (about 4x the n each method proves in 60 s)
)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

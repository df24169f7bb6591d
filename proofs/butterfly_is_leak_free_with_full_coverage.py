"""butterfly_is_leak_free_with_full_coverage — Butterfly Attention supervises every token without leakage.

Statement (n ≥ 1 tokens). The catalogue task ``butterfly:n`` (forward ``F_0 … F_{n-2}``
and backward ``B_1 … B_{n-1}`` streams holding ``x_i``, prediction stream ``P_0 …
P_{n-1}`` holding ``agg(x_{k-1},x_{k+1})`` and predicting ``x_k``)

1. is leak-free at every depth: no ``P_k`` depends, through any number of layers, on a
   position whose input holds ``x_k``;
2. has target coverage 100 %: every token ``0 … n-1`` is some position's target;
3. has ``3n - 2`` positions;
4. is isomorphic to the kit's merge of ``infill:n``.

Notation. ``A = M ∨ I``; a leak is a walk from a holder of the target to the supervised
position; ≅ is a bijection of nodes (classes of the limit order) keeping covers, input
multisets and labels (design.md §3).

Exhaustive method. ``find_leaks`` in the limit (no leak in the limit means none at
any depth, since ``R(L) ≤ R*``), its ``target_coverage``, the size, and
``diagrams_isomorphic`` against ``family_to_merged_task(infill:n)``.

Z3 method (independent of ``theory.leak``/``merge``/``equivalence``; raw rows, inputs,
labels). (1) ``find_leak_path``: one-hot walk ``at[d][v]``, ``d = 0 … N-1``, each step an
edge of ``A`` (staying put is the residual), ending at a supervised ``p`` and starting at
a holder of one of its targets — any walk contains a simple path of at most ``N - 1``
hops, so unsat means leak-free at every depth; sat is decoded into the path.
(2) ``find_uncovered_target``: an integer ``0 ≤ T < n`` different from every label —
unsat means full coverage. (3) ``N = 3n - 2`` (ground). (4) A bijection of nodes
between the merged task and the catalogue task, rebuilt from raw rows by
:mod:`solvers.posets`, keeping covers exactly, inputs and labels.

Largest n within 60 s (measured, docs/benchmarks.md): exhaustive ≥ 512 (19 s at
n = 512, the largest tried), Z3 64 (24 s; n = 96 over 60 s).

References. C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (Butterfly
Attention); design.md §3 (leak, coverage), §4 (``infill``, ``butterfly``), §5.
"""

from __future__ import annotations

from hasse.proofs.cli import script_main
from hasse.proofs.task_checks import (kit_leak, proved_outcome, refuted_outcome, solver_time, task_json, z3_leak,
                                      z3_unknown)
from hasse.proofs.theorem import Theorem

NAME = "butterfly_is_leak_free_with_full_coverage"


def _build(n: int):
    import hasse.theory.merge as merge
    from hasse.theory.catalog import build_family, build_task

    return build_task(f"butterfly:n={n}"), merge.family_to_merged_task(tuple(build_family(f"infill:n={n}")))


def exhaustive_check(n: int, ctx):
    import hasse.theory.equivalence as eq
    import hasse.theory.leak as leak
    from hasse.theory.labelled import task_to_hasse

    task, merged = _build(n)
    base = {"design": f"butterfly:n={n}"}
    if task.size != 3 * n - 2:
        return refuted_outcome(1, {**base, "why": f"{task.size} positions, not 3n - 2 = {3 * n - 2}"})
    found = kit_leak(task)
    if found:
        return refuted_outcome(1, {**base, **found, "why": "a leak in the limit", "task": task_json(task)})
    coverage = leak.find_leaks(task).target_coverage
    if coverage != 1.0:
        return refuted_outcome(1, {**base, "why": f"target coverage {coverage:.0%}", "task": task_json(task)})
    if not eq.diagrams_isomorphic(task_to_hasse(merged.task), task_to_hasse(task)):
        return refuted_outcome(1, {**base, "why": "not isomorphic to merge(infill:n)", "merged": task_json(merged.task),
                                   "task": task_json(task)})
    return proved_outcome(1, positions=task.size)


def z3_check(n: int, ctx):
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.coverage import find_uncovered_target
    from hasse.solvers.smt.prove import SAT, UNKNOWN
    from hasse.solvers.smt.task_maps import find_isomorphism

    task, merged = _build(n)
    base = {"design": f"butterfly:n={n}"}
    if task.size != 3 * n - 2:
        return refuted_outcome(0, {**base, "why": f"{task.size} positions, not 3n - 2 = {3 * n - 2}"})
    leak, answer = z3_leak(task, ctx)
    if answer is not None:
        return z3_unknown(answer, 1, "the leak walk")
    if leak:
        return refuted_outcome(1, {**base, **leak, "why": "Z3: a walk from a holder of the target (sat)",
                                   "task": task_json(task)})
    gap = find_uncovered_target(task.labels, task.tokens, timeout=solver_time(ctx))
    if gap.status == UNKNOWN:
        return z3_unknown(gap, 2, "coverage")
    if gap.status == SAT:
        return refuted_outcome(2, {**base, "why": f"Z3: token {gap.value} is nobody's target (sat)",
                                   "task": task_json(task)})
    iso = find_isomorphism(task_diagram(merged.task), task_diagram(task), labels=True, timeout=solver_time(ctx))
    if iso.status == UNKNOWN:
        return z3_unknown(iso, 3, "merge(infill) ≅ butterfly")
    if iso.status != SAT:
        return refuted_outcome(3, {**base, "why": "Z3: no bijection between merge(infill:n) and butterfly (unsat)",
                                   "merged": task_json(merged.task), "task": task_json(task)})
    return proved_outcome(3, positions=task.size, solver_calls=3)


THEOREM = Theorem(
    NAME,
    "butterfly:n is leak-free at every depth, has target coverage 100 % and 3n - 2 positions, and is isomorphic "
    "to merge(infill:n)",
    exhaustive_check,
    z3_check,
    space=lambda n: 1,  # one design, butterfly:n
    max_n={"exhaustive": 2048, "z3": 256},  # size guard (about 4x the n each method proves in 60 s)
)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

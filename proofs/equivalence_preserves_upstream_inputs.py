"""equivalence_preserves_upstream_inputs — node equivalence keeps what a node sees, and the fast test is exact.

Statement (for n = the number of nodes). For every pair of rooted labelled Hasse
diagrams ``D_u``, ``D_v`` with at most ``n`` nodes each, labels from a 2-symbol
alphabet:

1. if ``u`` and ``v`` are equivalent (an isomorphism ``↓u → ↓v`` maps ``u`` to ``v`` and
   keeps edges and input multisets), their upstream input multisets
   ``⊎_{d ∈ ↓u} inputs(d)`` and ``⊎_{d ∈ ↓v} inputs(d)`` are equal;
2. the kit's fast equivalence test (``theory.equivalence.equivalent``: signature
   buckets, then the forced map or VF2) says "equivalent" exactly when the down-sets
   are isomorphic, and the kit's grouping (``group_nodes``, used by the merge) puts
   two roots in one group exactly then.

Notation. A rooted diagram is the down-set of its root: nodes ``0 … k-1`` in a
topological order, ``k-1`` the only maximal node, edges the covering relation.
Symbol ``a`` is the input ``(x0, 0)``, ``b`` is ``([MASK], 1)`` (predicting token 1):
:mod:`solvers.dags`. Every diagram is turned into a real task (one position per
node, mask = covers + diagonal) and read back with ``task_to_hasse``.

Exhaustive method. Every rooted labelled diagram with at most n nodes (2, 6, 22,
134, 1414 of them for n = 1 … 5; isomorphic copies included), each with its
brute-force canonical form (the smallest encoding over all relabellings keeping
the root last) as the reference for isomorphism. The fast test can only say
"equivalent" inside a signature bucket, so: (a) every isomorphism class lies in one
bucket; (b) on every pair inside a bucket, ``equivalent`` and ``equivalent_exact``
(VF2) agree with the canonical forms, and equivalent pairs have equal upstream
multisets; (c) ``group_nodes`` over all diagrams groups the roots by canonical form.

Z3 method (independent of ``theory.equivalence``/``theory.labelled``). (i) For each
k ≤ n one ground query over *all* rooted DAGs on k nodes at once: symbolic edges
``e[u, v]`` (v < u) and labels, rootedness by backward reachability in topological
order, a symbolic bijection ``p[u, x]`` with root ↦ root preserving edges both ways and
labels, and the negated claim "the counts of symbol b differ" (over two symbols the
count fixes the multiset): unsat proves part 1 (for all rooted DAGs, a superset of the
Hasse diagrams). (ii) Isomorphism classes of the same diagrams, each rebuilt from its
raw rows by :mod:`solvers.posets`, by one Z3 query per candidate pair with equal cheap
invariants (size, input multiset, per node (inputs, #covers, #covered-by)) — a
bijection of nodes preserving covers and inputs, root to root; diagrams with other
invariants are not isomorphic. Then the kit's answers are compared with the Z3
classes exactly as in (a)–(c). Refuted: the pair, both verdicts and both upstream
multisets.

Largest n within 60 s (measured, docs/benchmarks.md): exhaustive 5 (1414 diagrams,
2604 pairs in buckets, 2.0 s), Z3 5 (7.1 s); n = 6 does not finish for either (the
enumeration alone: about 10^5 rooted diagrams, each with 5! relabellings).

References. C. Li, H. Guo, *Hasse Diagrams for Attention*, arXiv 2606.09951 (node
equivalence, the merged task); design.md §3 (node equivalence), §5 (this theorem).
"""

from __future__ import annotations

from collections import Counter

from hasse.proofs.cli import script_main
from hasse.proofs.task_checks import deadline, proved_outcome, refuted_outcome, report, solver_time, z3_unknown
from hasse.proofs.theorem import Theorem
from hasse.solvers import class_sizes

NAME = "equivalence_preserves_upstream_inputs"


def _describe(item) -> dict:
    k, lower, labels = item[:3]
    return {"nodes": k, "lower": [list(x) for x in lower], "labels": "".join(labels)}


def _pair(a, b, **verdicts) -> dict:
    return {"first": _describe(a), "second": _describe(b), **verdicts}


def _kit_diagrams(n: int, dl):
    """``(k, lower, labels, h, root)`` for every rooted labelled diagram, read back by ``task_to_hasse``."""
    from hasse.solvers.dags import dag_to_task, rooted_hasse_diagrams
    from hasse.theory.labelled import task_to_hasse

    out = []
    for k, lower, labels in rooted_hasse_diagrams(n):
        h = task_to_hasse(dag_to_task(lower, labels))
        out.append((k, lower, labels, h, h.node_of_position[k - 1]))
        if len(out) % 256 == 0:
            dl()
    return out


def compare_with_classes(items, class_of: list, dl, progress=None) -> tuple[dict | None, int]:
    """Compare the kit's fast test and grouping with reference isomorphism classes.

    ``items[i] = (k, lower, labels, h, root)``; ``class_of[i]``: reference class of item i.
    Returns ``(counterexample or None, pairs compared)``.
    """
    import hasse.theory.equivalence as eq

    table = eq.SignatureTable()
    sig = [table.signatures(it[3])[it[4]] for it in items]
    # (a) an isomorphism class split over two buckets: the fast test says no to isomorphic diagrams
    bucket_of_class: dict = {}
    first_of_class: dict = {}
    for i, c in enumerate(class_of):
        if bucket_of_class.setdefault(c, sig[i]) != sig[i]:
            j = first_of_class[c]
            a, b = items[j], items[i]
            fast = eq.equivalent(a[3], a[4], b[3], b[4])
            return _pair(a, b, fast_equivalent=fast, isomorphic=True,
                         why="isomorphic down-sets with different signatures"), 0
        first_of_class.setdefault(c, i)
    # (b) every pair inside a bucket
    buckets: dict = {}
    for i, s in enumerate(sig):
        buckets.setdefault(s, []).append(i)
    pairs = 0
    total = sum(len(b) * (len(b) - 1) // 2 for b in buckets.values())
    for members in buckets.values():
        for x, i in enumerate(members):
            for j in members[x + 1:]:
                a, b = items[i], items[j]
                iso = class_of[i] == class_of[j]
                fast = eq.equivalent(a[3], a[4], b[3], b[4])
                exact = eq.equivalent_exact(a[3], a[4], b[3], b[4])
                up_a, up_b = list(a[3].upstream_inputs(a[4])), list(b[3].upstream_inputs(b[4]))
                pairs += 1
                if fast != iso or exact != iso:
                    return _pair(a, b, fast_equivalent=fast, exact_equivalent=exact, isomorphic=iso,
                                 upstream=[up_a, up_b], why="the kit's test disagrees with isomorphism"), pairs
                if (fast or iso) and Counter(map(tuple, up_a)) != Counter(map(tuple, up_b)):
                    return _pair(a, b, fast_equivalent=fast, isomorphic=iso, upstream=[up_a, up_b],
                                 why="equivalent nodes with different upstream input multisets"), pairs
            if progress:
                progress(pairs, total)
            dl()
    # (c) the grouping the merge uses
    grouping = eq.group_nodes([it[3] for it in items])
    group_of_class: dict = {}
    class_of_group: dict = {}
    for i, it in enumerate(items):
        g = grouping.group[i][it[4]]
        c = class_of[i]
        if group_of_class.setdefault(c, g) != g or class_of_group.setdefault(g, c) != c:
            j = next(j for j in range(i) if class_of[j] == c or grouping.group[j][items[j][4]] == g)
            return _pair(items[j], it, same_group=grouping.group[j][items[j][4]] == g, isomorphic=class_of[j] == c,
                         why="group_nodes disagrees with isomorphism"), pairs
    return None, pairs


def exhaustive_check(n: int, ctx) -> object:
    from hasse.solvers.dags import canonical_form

    dl = deadline(ctx)
    items = _kit_diagrams(n, dl)
    for it in items:
        if it[3].size != it[0] or it[4] != it[3].size - 1:
            return refuted_outcome(len(items), {"diagram": _describe(it),
                                                "why": "task_to_hasse did not recover the diagram"})
    forms: dict = {}
    class_of = [forms.setdefault(canonical_form(it[1], it[2]), len(forms)) for it in items]
    dl()
    found, pairs = compare_with_classes(items, class_of, dl, lambda d, t: report(ctx, d, t))
    if found:
        return refuted_outcome(len(items), found, pairs=pairs)
    return proved_outcome(len(items), diagrams=len(items), classes=len(forms), pairs_in_buckets=pairs,
                          reference="brute-force canonical forms")


def _invariant(d) -> tuple:
    covered_by = Counter(v for low in d.lower for v in low)
    return (d.size, tuple(sorted(x for xs in d.inputs for x in xs)),
            tuple(sorted((d.inputs[c], len(d.lower[c]), covered_by[c]) for c in range(d.size))))


def z3_check(n: int, ctx) -> object:
    from hasse.solvers.dags import dag_to_task
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.prove import SAT, UNKNOWN
    from hasse.solvers.smt.symbolic_equivalence import equivalent_roots_with_other_upstream
    from hasse.solvers.smt.task_maps import find_isomorphism

    dl = deadline(ctx)
    calls = 0
    for k in range(1, n + 1):  # (i) part 1 for every rooted DAG on k nodes at once
        answer = equivalent_roots_with_other_upstream(k, timeout=solver_time(ctx))
        calls += 1
        if answer.status == UNKNOWN:
            return z3_unknown(answer, calls, f"the symbolic query for k = {k}")
        if answer.status == SAT:
            return refuted_outcome(calls, {**answer.value, "why": "equivalent roots with different upstream multisets"})
    items = _kit_diagrams(n, dl)
    raw = [task_diagram(dag_to_task(it[1], it[2])) for it in items]
    reps: dict = {}  # invariant -> [(item index, class)]
    class_of = []
    for i, d in enumerate(raw):
        key = _invariant(d)
        found = None
        for j, c in reps.get(key, ()):
            answer = find_isomorphism(d, raw[j], labels=False, root=True, timeout=solver_time(ctx))
            calls += 1
            if answer.status == UNKNOWN:
                return z3_unknown(answer, calls, f"isomorphism of {_describe(items[i])} and {_describe(items[j])}")
            if answer.status == SAT:
                found = c
                break
        if found is None:
            found = sum(len(v) for v in reps.values())
            reps.setdefault(key, []).append((i, found))
        class_of.append(found)
        report(ctx, i + 1, len(raw))
    found, pairs = compare_with_classes(items, class_of, dl)
    if found:
        return refuted_outcome(calls, found, pairs=pairs, reference="Z3 isomorphism classes")
    return proved_outcome(calls, diagrams=len(items), classes=len(set(class_of)), solver_calls=calls,
                          pairs_in_buckets=pairs, symbolic_sizes=list(range(1, n + 1)))


THEOREM = Theorem(
    NAME,
    "equivalent nodes have equal upstream input multisets, and the kit's fast equivalence test agrees with exact "
    "isomorphism on every rooted labelled DAG with at most n nodes (2 symbols)",
    exhaustive_check,
    z3_check,
    space=class_sizes.rooted_diagrams,  # complete or not proved: every rooted diagram, counted independently
    max_n={"exhaustive": 6, "z3": 6},  # size guard (n = 6 does not finish in 60 s)
)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))

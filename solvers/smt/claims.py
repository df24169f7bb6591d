"""Z3 encodings of the mask-level theorems of design.md §5, each in a naive and a better form.

``THEOREM_NAME(n, encoding)`` returns the queries (:class:`solvers.smt.queries.Query`)
whose every ``unsat`` proves the theorem at size ``n`` (for the existence statement
``no_residual_can_oscillate``: whose ``sat`` gives a witness). The statement sheet of
each ``proofs/<name>.py`` says what is encoded and why the better form is sound.

- ``naive``: the plain definitions on whole matrices (``R* = A^(n-1)`` by unrolled
  powers, every index tuple of the claim);
- ``better``: the same claim after relabelling the positions a counterexample names
  to ``0, 1, …`` and sorting the others by hop distance from position 0
  (:func:`solvers.smt.masks.sorted_by_distance`), which needs only the columns of the
  powers for those sources (``n²`` terms per power instead of ``n³``) and removes
  the pigeonhole search. Claims on a global maximum are split per source first
  (``L* = max_k L*_k``: column ``k`` of ``A^(L+1)`` is ``A`` times column ``k`` of
  ``A^L``, so the columns settle independently and each stays settled).

The theorems on the Hasse diagram and the sparse realisation are in
:mod:`solvers.smt.hasse`. Nothing here calls the theory code.

Planted false variants (run-time controls, :func:`solvers.smt.queries.run_controls`):
``THEOREM_NAME(n, encoding, planted=True)`` returns the queries of a claim that is
*false* at that ``n`` (``n >= 2``; ``[]`` at ``n = 1``, where the space has one
mask), built on the same hypotheses and symmetry breaking: each must come out
``sat`` (for the existence statement: ``unsat``), or the verdict is unknown. Most
need a path of ``n - 1`` hops (the chain ``0 -> 1 -> … -> n-1``), so symmetry
breaking that cuts deep masks away is caught, not only vacuous premises.
"""

from __future__ import annotations

import z3

from hasse.solvers.smt.masks import (encode_column_powers, encode_dependency, encode_layers, encode_mask, encode_powers,
                                    matrices_equal, sorted_by_distance, vectors_equal)
from hasse.solvers.smt.prove import and_, not_, or_
from hasse.solvers.smt.queries import Query

ENCODINGS = ("naive", "better")


def named_disjuncts(items) -> dict:
    """Named disjuncts, without the ones that are constant False."""
    return {name: term for name, term in items if not z3.is_false(term)}


def constant(value, bits):
    """``value`` as an integer term, or a bit-vector of ``bits`` bits."""
    return z3.IntVal(value) if bits is None else z3.BitVecVal(value, bits)


def first_index(conditions, bits=None):
    """The least ``i`` with ``conditions[i]`` (``len(conditions)`` if none), as an integer term."""
    out = constant(len(conditions), bits)
    for i in range(len(conditions) - 1, -1, -1):
        out = z3.If(conditions[i], constant(i, bits), out)
    return out


def _last_index(conditions) -> z3.ArithRef:
    """The largest ``i`` with ``conditions[i]`` (-1 if none), as an integer term."""
    out = z3.IntVal(-1)
    for i, c in enumerate(conditions):
        out = z3.If(c, z3.IntVal(i), out)
    return out


def require_encoding(encoding: str) -> None:
    """``ValueError`` unless ``encoding`` is one of :data:`ENCODINGS`."""
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")


def mask_and_dependency(n: int, encoding: str):
    """The symbolic mask ``M`` on ``n`` positions and its one-layer dependency ``A = M or I`` (encoding checked)."""
    require_encoding(encoding)
    m = encode_mask(n)
    return m, encode_dependency(m)


def naive_limit(a, n: int):
    """``R* = A^(n-1)`` by explicit Boolean powers (the naive encodings)."""
    return encode_powers(a, max(n - 1, 0))[-1]


def _limit_columns(a, sources, depth):
    """``R*[x][s]`` for the given sources ``s``: column ``s`` of ``A^depth`` (``depth = n - 1``)."""
    return {s: encode_column_powers(a, s, depth) for s in sources}


# ---------------------------------------------------------------- reach_monotone_in_depth


def reach_monotone_in_depth(n: int, encoding: str = "better", planted: bool = False) -> list[Query]:
    """``A^L <= A^(L+1)`` entrywise for ``L = 0 … n``.

    ``planted``: the false claim ``A^(n-1) <= A^(n-2)`` (nothing new at depth ``n - 1``).
    """
    m, a = mask_and_dependency(n, encoding)
    if planted and n < 2:
        return []
    # (L, L + 1): the pairs of depths compared; planted: the reverse inclusion at the deepest step
    steps = [(n - 1, n - 2)] if planted else [(L, L + 1) for L in range(n + 1)]
    name = "A^(n-1) <= A^(n-2) (planted false claim)" if planted else "A^L <= A^(L+1)"
    if encoding == "naive":
        p = encode_powers(a, n + 1)
        target = named_disjuncts((f"A^{L}[{q},{k}] and not A^{M}[{q},{k}]", and_(p[L][q][k], not_(p[M][q][k])))
                                 for L, M in steps for q in range(n) for k in range(n))
        return [Query(name, m, [], target)]
    cols = encode_column_powers(a, 0, n + 1)
    target = named_disjuncts((f"A^{L}[{q},0] and not A^{M}[{q},0]", and_(cols[L][q], not_(cols[M][q])))
                             for L, M in steps for q in range(n))
    return [Query(f"{name}, source 0", m, sorted_by_distance(cols, 1), target)]


# ---------------------------------------------------------------- reach_stable_by_n_minus_1


def encode_convergence_depth(powers: list) -> z3.ArithRef:
    """``L* = min{L : P_L = P_(L+1)}`` over ``powers = [P_0 … P_n]`` (matrices or columns); ``n`` if none."""
    same = matrices_equal if isinstance(powers[0][0], list) else vectors_equal
    return first_index([same(powers[L], powers[L + 1]) for L in range(len(powers) - 1)])


def encode_longest_distance(layers_by_source: list) -> tuple[z3.ArithRef, list]:
    """The largest ``t`` with a non-empty breadth-first layer ``F_t`` (over all the sources given),
    and the non-emptiness of each layer."""
    upto = len(layers_by_source[0])
    nonempty = [or_([x for layers in layers_by_source for x in layers[t]]) for t in range(upto)]
    return _last_index(nonempty), nonempty


def reach_stable_by_n_minus_1(n: int, encoding: str = "better", at: int | None = None,
                              planted: bool = False) -> list[Query]:
    """``A^(n-1) = A^n``; ``L* = min{L : A^L = A^(L+1)}`` equals the largest finite hop distance.

    ``at`` replaces ``n - 1`` in the first claim (``A^at = A^(at+1)``): smaller values
    are false claims, used to test that the encodings refute them. ``planted``: the
    false claims ``A^(n-2) = A^(n-1)`` and "no hop distance is ``n - 1``".
    """
    m, a = mask_and_dependency(n, encoding)
    if planted:
        if n < 2:
            return []
        at = n - 2
    last = max(n - 1, 0) if at is None else at
    if encoding == "naive":
        p = encode_powers(a, max(n, last + 1))
        stable = Query(f"A^{last} = A^{last + 1}", m, [], named_disjuncts(
            (f"A^{last}[{q},{k}] != A^{last + 1}[{q},{k}]", z3.Xor(p[last][q][k], p[last + 1][q][k]))
            for q in range(n) for k in range(n)))
        depth = encode_convergence_depth(p[: n + 1])
        longest, nonempty = encode_longest_distance([encode_layers(m, k, n) for k in range(n)])
        equal = Query("L* = largest finite hop distance", m, [], named_disjuncts(
            [("a hop distance of n or more", nonempty[n]), ("L* != largest hop distance", depth != longest)]))
        if planted:
            equal = Query("no hop distance n - 1 (planted false claim)", m, [],
                          {"a hop distance of n - 1": nonempty[n - 1]})
        return [stable, equal]
    cols = encode_column_powers(a, 0, max(n, last + 1))
    sym = sorted_by_distance(cols, 1)
    stable = Query(f"A^{last} = A^{last + 1}, source 0", m, sym, named_disjuncts(
        (f"A^{last}[{q},0] != A^{last + 1}[{q},0]", z3.Xor(cols[last][q], cols[last + 1][q])) for q in range(n)),
        incremental=True)
    depth = encode_convergence_depth(cols[: n + 1])
    longest, nonempty = encode_longest_distance([encode_layers(m, 0, n)])
    equal = Query("L*_0 = largest finite hop distance from 0", m, sym, named_disjuncts(
        [("a hop distance of n or more", nonempty[n]), ("L*_0 != largest hop distance from 0", depth != longest)]),
        incremental=True)
    if planted:
        equal = Query("no hop distance n - 1 from 0 (planted false claim)", m, sym,
                      {"a hop distance of n - 1 from 0": nonempty[n - 1]})
    return [stable, equal]


# ---------------------------------------------------------------- limit_is_preorder


def canonical_roles(length: int) -> list[tuple[int, ...]]:
    """Restricted growth strings: the ways ``length`` named positions can coincide, labelled
    ``0, 1, …`` in order of first appearance (any failure can be relabelled to one of them).

    >>> canonical_roles(3)
    [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (0, 1, 2)]
    """
    out = [()]
    for _ in range(length):
        out = [t + (x,) for t in out for x in range(max(t, default=-1) + 2)]
    return out


def _preorder_targets(r, tuples):
    """Ways ``R*`` fails to be a preorder; ``r(q, k)`` is ``R*[q][k]``; ``tuples`` are (k, j, q)."""
    yield from ((f"not R*[{q},{q}]", not_(r(q, q))) for q in sorted({t[0] for t in tuples}))
    yield from ((f"R*[{q},{j}], R*[{j},{k}], not R*[{q},{k}]", and_(and_(r(q, j), r(j, k)), not_(r(q, k))))
                for k, j, q in tuples)


def limit_is_preorder(n: int, encoding: str = "better", at: int | None = None,
                      planted: bool = False) -> list[Query]:
    """``R* = A^(n-1)`` is reflexive and transitive (``at`` replaces ``n - 1``: smaller values are false claims).

    ``planted``: the false claim "``A^(n-2)`` is transitive" (``n >= 3``); at ``n = 2``,
    where ``A^0 = I`` is a preorder, "``R*`` is symmetric".
    """
    m, a = mask_and_dependency(n, encoding)
    if planted and n < 2:
        return []
    symmetric = planted and n == 2
    if planted and n >= 3:
        at = n - 2
    depth = max(n - 1, 0) if at is None else at
    name = "R* symmetric (planted false claim)" if symmetric else \
        "A^(n-2) reflexive and transitive (planted false claim)" if planted else "R* reflexive and transitive"

    def targets(r, pairs, triples):
        if symmetric:
            return named_disjuncts((f"R*[{q},{k}] but not R*[{k},{q}]", and_(r(q, k), not_(r(k, q))))
                                   for k, q in pairs if k != q)
        return named_disjuncts(_preorder_targets(r, triples))

    if encoding == "naive":
        r = encode_powers(a, depth)[-1]
        triples = [(k, j, q) for k in range(n) for j in range(n) for q in range(n)]
        pairs = [(k, q) for k in range(n) for q in range(n)]
        return [Query(name, m, [], targets(lambda q, k: r[q][k], pairs, triples))]
    # A failure names k, j, q: label them 0, 1, 2 in that order (k is the source whose column is sorted).
    triples = [t for t in canonical_roles(3) if max(t) < n]
    pairs = [t for t in canonical_roles(2) if max(t) < n]
    cols = _limit_columns(a, range(min(2, n)), depth)
    return [Query(f"{name}, (k, j, q) relabelled", m, sorted_by_distance(cols[0], min(3, n)),
                  targets(lambda q, k: cols[k][-1][q], pairs, triples), incremental=True)]


# ---------------------------------------------------------------- quotient_is_partial_order


def _quotient_targets(r, quads, pairs, triples):
    """``quads`` (k2, k, q, q2), ``pairs`` (k, q), ``triples`` (k, j, q)."""
    e = lambda q, k: and_(r(q, k), r(k, q))  # noqa: E731 -- same class
    yield from ((f"[{k}]<=[{q}] depends on representatives {q2}~{q}, {k2}~{k}",
                 and_(and_(e(q, q2), e(k, k2)), and_(r(q, k), not_(r(q2, k2)))))
                for k2, k, q, q2 in quads)
    yield from ((f"not [{q}]<=[{q}]", not_(r(q, q))) for q in sorted({p[0] for p in pairs}))
    yield from ((f"[{k}]<=[{q}]<=[{k}] but [{k}] != [{q}]", and_(and_(r(q, k), r(k, q)), not_(e(q, k))))
                for k, q in pairs)
    yield from ((f"[{k}]<=[{j}]<=[{q}] but not [{k}]<=[{q}]", and_(and_(r(q, j), r(j, k)), not_(r(q, k))))
                for k, j, q in triples)


def _singleton_targets(r, pairs):
    """Ways a class holds two positions (the planted false claim "every class is one position")."""
    return named_disjuncts((f"{k} ~ {q}, k != q", and_(r(q, k), r(k, q))) for k, q in pairs if k != q)


def quotient_is_partial_order(n: int, encoding: str = "better", planted: bool = False) -> list[Query]:
    """On classes (``E = R* and R*^T``), ``[k] <= [q] iff R*[q][k]`` is well defined and a partial order.

    ``planted``: the false claim "the order on classes is a partial order and every class is one
    position".
    """
    m, a = mask_and_dependency(n, encoding)
    if planted and n < 2:
        return []
    extra = _singleton_targets if planted else (lambda r, pairs: {})
    suffix = " and every class one position (planted false claim)" if planted else ""
    if encoding == "naive":
        r = naive_limit(a, n)
        every = range(n)
        pairs = [(k, q) for k in every for q in every]
        rq = lambda q, k: r[q][k]  # noqa: E731
        return [Query("order on classes" + suffix, m, [], named_disjuncts(_quotient_targets(
            rq, [(a_, b, c, d) for a_ in every for b in every for c in every for d in every],
            pairs, [(k, j, q) for k in every for j in every for q in every])) | extra(rq, pairs))]
    fits = lambda ts: [t for t in ts if max(t) < n]  # noqa: E731
    quads, pairs, triples = fits(canonical_roles(4)), fits(canonical_roles(2)), fits(canonical_roles(3))
    cols = _limit_columns(a, range(min(4, n)), max(n - 1, 0))
    rc = lambda q, k: cols[k][-1][q]  # noqa: E731
    return [Query("order on classes, named positions relabelled" + suffix, m, sorted_by_distance(cols[0], min(4, n)),
                  named_disjuncts(_quotient_targets(rc, quads, pairs, triples)) | extra(rc, pairs),
                  incremental=True)]


# ---------------------------------------------------------------- no_residual_can_oscillate


def index_bound(n: int) -> int:
    """``(n-1)^2 + 1``: no ``n x n`` Boolean matrix has a pre-period (index) above it."""
    return (n - 1) ** 2 + 1


def no_residual_can_oscillate(n: int, encoding: str = "better", planted: bool = False) -> list[Query]:
    """Existence, ``A = M`` (diagonal free): some mask's powers never settle.

    naive: ``A^T != A^(T+1)`` at ``T = (n-1)^2 + 1``, past any pre-period, so the
    powers never settle (``unsat`` would refute the statement at this n);
    better: a lasso of pre-period 0 and period 2, ``A^2 = I != A`` (only two
    products; ``unsat`` would only say that no witness has that shape).
    ``planted``: the same search *with* the residual (``A = I or M``), a false existence
    statement: its control must come out ``unsat`` (no witness).
    """
    require_encoding(encoding)
    m = encode_mask(n, diagonal=True)
    a = encode_dependency(m, residual=planted)
    suffix = ", with the residual (planted false claim)" if planted else ""
    if encoding == "naive":
        t = index_bound(n)
        p = encode_powers(a, t + 1)
        return [Query("some mask with A^T != A^(T+1), T = (n-1)^2+1" + suffix, m, [],
                      {f"A^{t} != A^{t + 1}": not_(matrices_equal(p[t], p[t + 1]))})]
    p = encode_powers(a, 2)
    return [Query("some mask with A^2 = I != A" + suffix, m, [],
                  {"A^2 = I and A != I": and_(matrices_equal(p[2], p[0]), not_(matrices_equal(p[1], p[0])))})]

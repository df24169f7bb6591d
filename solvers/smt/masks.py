"""Ground, quantifier-free Z3 encodings of masks and their reachability.

Nothing here calls the theory code it is used to check: masks, Boolean products,
powers, breadth-first layers and closures are spelled out from the definitions of
design.md §2 as Z3 terms over the mask's Boolean variables. Matrices are nested
lists ``x[q][k]`` (query ``q``, key ``k``) of Z3 Boolean terms; terms are shared,
so a product costs ``n³`` small ``And``/``Or`` nodes.

Two styles, both exact:

- *plain*: whole matrices, ``A^(L+1) = A . A^L`` (``encode_powers``);
- *columns*: one source ``k`` at a time, ``col_(L+1)[q] = OR_j A[q, j] and col_L[j]``
  (``encode_column_powers``), with symmetry breaking: a counterexample's named
  positions can be relabelled ``0, 1, …`` and the remaining positions sorted by hop
  distance from position 0, so every ``col_L`` of source 0 is a prefix of them
  (``sorted_by_distance``). This removes the pigeonhole search that makes the plain
  encoding of ``A^(n-1) = A^n`` blow up.

The proof obligations built from these terms, and their proof by negation, are in
:mod:`solvers.smt.queries` (:class:`~solvers.smt.queries.Query`, :func:`~solvers.smt.queries.prove`);
:func:`decode_mask` reads a model's mask back as a numpy array.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import z3

from hasse.solvers.smt.prove import FALSE, TRUE, and_, not_, or_
from hasse.theory.deadline import tick

Matrix = list  # list[list[z3.BoolRef]]


def encode_mask(n: int, *, diagonal: bool = False, name: str = "m") -> Matrix:
    """``M`` as Boolean variables ``m_q_k``; without ``diagonal`` the diagonal is the constant False.

    Under the residual the diagonal of ``M`` plays no role (``A = I or M``), so the
    plain mask space has ``n(n-1)`` variables.
    """
    return [[z3.Bool(f"{name}_{q}_{k}") if diagonal or q != k else FALSE for k in range(n)] for q in range(n)]


def encode_dependency(m: Matrix, residual: bool = True) -> Matrix:
    """One layer's dependency ``A = I or M`` (``A = M`` without the residual)."""
    n = len(m)
    return [[TRUE if residual and q == k else m[q][k] for k in range(n)] for q in range(n)]


def identity(n: int) -> Matrix:
    return [[TRUE if q == k else FALSE for k in range(n)] for q in range(n)]


def encode_product(a: Matrix, b: Matrix) -> Matrix:
    """Boolean product: ``(a . b)[q][k] = OR_j a[q][j] and b[j][k]``."""
    n = len(a)
    return [[or_([and_(a[q][j], b[j][k]) for j in range(n)]) for k in range(n)] for q in range(n)]


def encode_powers(a: Matrix, upto: int) -> list[Matrix]:
    """``[A^0, …, A^upto]``, unrolled: ``A^(L+1) = A . A^L`` (plain encoding, ``upto · n³`` terms)."""
    out = [identity(len(a))]
    for _ in range(upto):
        out.append(encode_product(a, out[-1]))
    return out


def encode_column_powers(a: Matrix, source: int, upto: int) -> list[list]:
    """Column ``source`` of ``A^0 … A^upto``: ``col_L[q] = A^L[q][source]`` (``upto · n²`` terms)."""
    n = len(a)
    col = [TRUE if q == source else FALSE for q in range(n)]
    out = [col]
    for _ in range(upto):
        col = [or_([and_(a[q][j], col[j]) for j in range(n)]) for q in range(n)]
        out.append(col)
    return out


def encode_layers(m: Matrix, source: int, upto: int) -> list[list]:
    """Breadth-first layers along attention edges from ``source`` (no residual, no powers):
    ``F_0 = {source}``, ``F_(t+1)[q] = not seen_t[q] and OR_(j != q) m[q][j] and F_t[j]``,
    ``seen_(t+1) = seen_t or F_(t+1)``. ``F_t[q]`` iff ``dist(source, q) = t``. Returns ``F_0 … F_upto``."""
    n = len(m)
    layer = [TRUE if q == source else FALSE for q in range(n)]
    seen = list(layer)
    out = [layer]
    for _ in range(upto):
        layer = [and_(not_(seen[q]), or_([and_(m[q][j], layer[j]) for j in range(n) if j != q])) for q in range(n)]
        seen = [or_([s, f]) for s, f in zip(seen, layer)]
        out.append(layer)
    return out


def sorted_by_distance(columns: Sequence[Sequence], first: int) -> list[z3.BoolRef]:
    """Symmetry breaking: positions ``first … n-1`` are sorted by distance from the columns' source.

    Every ``col_L`` restricted to them is a prefix: ``col_L[j+1] -> col_L[j]``.
    Sound for a claim that names at most ``first`` positions, all below ``first``
    and the source among them: relabel them ``0 … first-1``, then sort the others
    by hop distance from the source (unreachable last); the relabelled mask is a
    counterexample iff the original is.
    """
    out = []
    for col in columns:
        n = len(col)
        out += [z3.Implies(col[j + 1], col[j]) for j in range(first, n - 1)]
    return out


def encode_preorder(n: int, name: str = "R") -> tuple[Matrix, list]:
    """A reflexive, transitive relation ``R`` on ``n`` positions as variables and ``n³`` clauses.

    The limits ``R*`` of the masks of size ``n`` are exactly these relations (a limit
    is a preorder, and a preorder ``R`` is the limit of the mask ``R``), so a claim
    about ``R*`` alone can quantify over preorders instead of masks; a model's
    ``R`` read as a mask is then a mask with that limit.
    """
    r = [[TRUE if q == k else z3.Bool(f"{name}_{q}_{k}") for k in range(n)] for q in range(n)]
    out = []
    for q in range(n):
        tick()  # the time limit, while the encoding is built (theory.deadline)
        out += [z3.Implies(z3.And(r[q][j], r[j][k]), r[q][k]) for j in range(n) for k in range(n)
                if len({q, j, k}) == 3]
    return r, out


def encode_closure_relation(g: Matrix, name: str) -> tuple[Matrix, list]:
    """The reflexive-transitive closure of the relation ``g`` as fresh variables and its characterisation.

    ``C`` is reflexive, contains ``g``, is transitive, and every entry off the
    diagonal is *justified*: ``C[q][k] -> OR_j g[q][j] and C[j][k] and rank[j][k] < rank[q][k]``
    (integer ranks). The only solution is the closure: it contains the closure (the
    least reflexive transitive relation containing ``g``), and following
    justifications through strictly decreasing ranks over finitely many pairs ends on
    the diagonal, so every entry is a path of ``g``. ``n³`` transitivity clauses and
    ``n³`` justification terms; no unrolled powers.
    """
    n = len(g)
    c = [[TRUE if q == k else z3.Bool(f"{name}_{q}_{k}") for k in range(n)] for q in range(n)]
    rank = [[z3.Int(f"{name}_rank_{q}_{k}") for k in range(n)] for q in range(n)]
    out = []
    for q in range(n):
        for k in range(n):
            if q == k:
                continue
            if not z3.is_false(g[q][k]):
                out.append(z3.Implies(g[q][k], c[q][k]))
            out.append(z3.Implies(c[q][k], or_([and_(and_(g[q][j], c[j][k]), rank[j][k] < rank[q][k])
                                                 for j in range(n) if j != q])))
            for j in range(n):
                if j != q and j != k:
                    out.append(z3.Implies(z3.And(c[q][j], c[j][k]), c[q][k]))
    return c, out


def encode_distances(g: Matrix, name: str, bits: int | None = None) -> tuple[Matrix, list, list]:
    """Reachability and hop distances along the edges of ``g`` (``g[q][j]``: ``j -> q``), exactly.

    Returns ``(C, D, constraints)``: ``C[q][k]`` iff ``k`` reaches ``q`` (reflexive-
    transitive closure), ``D[q][k]`` (integer) the fewest edges ``j -> q`` with ``j != q``
    on a path, where ``C`` holds. Constraints (``n³`` each):

    - closed: ``C[k][k]``; ``g[q][j] and C[j][k] -> C[q][k]`` — so ``C`` contains the closure;
    - justified: ``C[q][k] -> OR_j g[q][j] and C[j][k] and D[q][k] = D[j][k] + 1`` for
      ``q != k``, ``D[k][k] = 0`` — following justifications lowers ``D`` by one each
      step over finitely many pairs, so it ends on the diagonal: ``C`` is no larger
      than the closure and ``D[q][k]`` is the length of a path;
    - shortest: ``g[q][j] and C[j][k] -> D[q][k] <= D[j][k] + 1``, so no path is shorter.
    """
    n = len(g)
    c = [[TRUE if q == k else z3.Bool(f"{name}_{q}_{k}") for k in range(n)] for q in range(n)]
    if bits is None:
        d = [[z3.IntVal(0) if q == k else z3.Int(f"{name}_dist_{q}_{k}") for k in range(n)] for q in range(n)]
    else:
        d = [[z3.BitVecVal(0, bits) if q == k else z3.BitVec(f"{name}_dist_{q}_{k}", bits) for k in range(n)]
             for q in range(n)]
    out = []
    for q in range(n):
        for k in range(n):
            if q == k:
                continue
            steps = []
            for j in range(n):
                if j == q or z3.is_false(g[q][j]):
                    continue
                via = and_(g[q][j], c[j][k])
                out.append(z3.Implies(via, z3.And(c[q][k], _ule(d[q][k], d[j][k] + 1))))
                steps.append(and_(via, d[q][k] == d[j][k] + 1))
            out.append(z3.Implies(c[q][k], or_(steps)))
    return c, d, out


def _ule(a, b):
    return z3.ULE(a, b) if z3.is_bv(a) else a <= b


def matrices_equal(a: Matrix, b: Matrix) -> z3.BoolRef:
    return z3.And([x == y for ra, rb in zip(a, b) for x, y in zip(ra, rb)])


def vectors_equal(a: Sequence, b: Sequence) -> z3.BoolRef:
    return z3.And([x == y for x, y in zip(a, b)])


def decode_mask(model: z3.ModelRef, m: Matrix) -> np.ndarray:
    """The mask of a model as an ``(n, n)`` bool array (unconstrained variables read False)."""
    n = len(m)
    out = np.zeros((n, n), dtype=bool)
    for q in range(n):
        for k in range(n):
            out[q, k] = z3.is_true(model.eval(m[q][k], model_completion=True))
    return out

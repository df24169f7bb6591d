"""A query in integers with bit operations, decided exactly as bit-vectors (the queries of ``realises``).

A traced mask or witness with ``&``, ``|``, ``^``, ``~`` and shifts is a formula that mixes
integers and bit-vectors (``int2bv``/``bv2int``, :mod:`solvers.symbolic.terms.bits`), a mix
Z3's integer solver times out on (the 2-hop dyadic chain: a timeout after 60 s). Every free
integer of such a query has known bounds (``1 <= n <= 2^31``, a position below the largest
size, a witness's value an int64), so :func:`to_bits` gives each integer subterm an interval
(interval arithmetic, a sound over-approximation) and rewrites the whole query over signed
bit-vectors of one width ``W`` wide enough for every interval: the rewrite is then exact
(no value wraps), and the pure bit-vector query is bit-blasted. Euclidean ``div``/``mod``
(Z3's integer semantics) by ``d != 0`` is ``r = bvsmod(a, |d|)``, ``q = (a - r) / d``.
A query outside that fragment (an uninterpreted function, a quantifier, a width above
:data:`MAX_WIDTH`) gives None and the caller keeps the integer solver. Before bit-blasting,
:func:`relax` tries the integer solver on a sound relaxation (its ``unsat`` is the query's).

>>> x, y = z3.Ints("x y")
>>> q = [x >= 0, x < 16, y == z3.BV2Int(z3.Int2BV(x, 4) & 3), y != x % 4]
>>> solve_bits(q, {"x": (0, 15), "y": (0, 15)}, 10)[0]
'unsat'
>>> status, values, _ = solve_bits([x * 3 == y + 1, y > 4], {"x": (-8, 8), "y": (-8, 8)}, 10)
>>> status, values["x"] * 3 == values["y"] + 1
('sat', True)
"""

from __future__ import annotations

from typing import Sequence

import z3

from hasse.solvers.smt.prove import SAT, UNKNOWN, UNSAT

MAX_WIDTH = 192  # wider than this: the integer solver keeps the query


class _Outside(Exception):
    """The query leaves the fragment :func:`to_bits` rewrites."""


def _hull(*ivs):
    return min(i[0] for i in ivs), max(i[1] for i in ivs)


def _bits_of(iv) -> int:
    lo, hi = iv
    return max((v if v >= 0 else -v - 1).bit_length() + 1 for v in (lo, hi))


class _Intervals:
    def __init__(self, bounds: dict):
        self.bounds, self.memo = bounds, {}

    def of(self, e) -> tuple[int, int]:
        key = e.get_id()
        if key not in self.memo:
            self.memo[key] = self._of(e)
        return self.memo[key]

    def _of(self, e):
        if z3.is_int_value(e):
            return e.as_long(), e.as_long()
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            if str(e) not in self.bounds:
                raise _Outside(f"no bounds for {e}")
            return self.bounds[str(e)]
        if not z3.is_app(e):
            raise _Outside("not an application")
        kind, args = e.decl().kind(), e.children()
        if kind == z3.Z3_OP_ADD:
            ivs = [self.of(a) for a in args]
            return sum(i[0] for i in ivs), sum(i[1] for i in ivs)
        if kind == z3.Z3_OP_SUB:
            ivs = [self.of(a) for a in args]
            return ivs[0][0] - sum(i[1] for i in ivs[1:]), ivs[0][1] - sum(i[0] for i in ivs[1:])
        if kind == z3.Z3_OP_UMINUS:
            lo, hi = self.of(args[0])
            return -hi, -lo
        if kind == z3.Z3_OP_MUL:
            lo, hi = 1, 1
            for a in args:
                al, ah = self.of(a)
                ps = [lo * al, lo * ah, hi * al, hi * ah]
                lo, hi = min(ps), max(ps)
            return lo, hi
        if kind in (z3.Z3_OP_IDIV, z3.Z3_OP_DIV):
            al, ah = self.of(args[0])
            m = max(abs(al), abs(ah)) + 1
            return -m, m
        if kind in (z3.Z3_OP_MOD, z3.Z3_OP_REM):
            al, ah = self.of(args[0])
            dl, dh = self.of(args[1])
            d = max(abs(dl), abs(dh))
            return _hull((-d, d), (al, ah))
        if kind == z3.Z3_OP_ITE:
            return _hull(self.of(args[1]), self.of(args[2]))
        if kind == z3.Z3_OP_BV2INT:
            return 0, 2 ** args[0].size() - 1
        raise _Outside(f"integer operation {e.decl()}")


class _Rewrite:
    def __init__(self, width: int):
        self.w, self.memo, self.vars = width, {}, {}

    def bv(self, e):
        key = e.get_id()
        if key not in self.memo:
            self.memo[key] = self._bv(e)
        return self.memo[key]

    def _bv(self, e):
        w = self.w
        if z3.is_int_value(e):
            return z3.BitVecVal(e.as_long(), w)
        if z3.is_true(e) or z3.is_false(e):
            return e
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            if e.sort() == z3.IntSort():
                return self.vars.setdefault(str(e), z3.BitVec(str(e), w))
            if e.sort() == z3.BoolSort():
                return e
            raise _Outside(f"a constant of sort {e.sort()}")
        if not z3.is_app(e):
            raise _Outside("a quantifier or bound variable")
        kind, args = e.decl().kind(), e.children()
        xs = [self.bv(a) for a in args]
        if kind == z3.Z3_OP_ADD:
            out = xs[0]
            for x in xs[1:]:
                out = out + x
            return out
        if kind == z3.Z3_OP_SUB:
            out = xs[0]
            for x in xs[1:]:
                out = out - x
            return out
        if kind == z3.Z3_OP_UMINUS:
            return -xs[0]
        if kind == z3.Z3_OP_MUL:
            out = xs[0]
            for x in xs[1:]:
                out = out * x
            return out
        if kind in (z3.Z3_OP_IDIV, z3.Z3_OP_DIV, z3.Z3_OP_MOD):
            a, d = xs
            size = z3.If(d < 0, -d, d)
            r = a % size  # bvsmod: the sign of the divisor, here >= 0
            return r if kind == z3.Z3_OP_MOD else (a - r) / d  # a - r is a multiple of d: exact
        if kind in (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT) and args[0].sort() == z3.IntSort():
            return {z3.Z3_OP_LE: lambda a, b: a <= b, z3.Z3_OP_LT: lambda a, b: a < b,
                    z3.Z3_OP_GE: lambda a, b: a >= b, z3.Z3_OP_GT: lambda a, b: a > b}[kind](*xs)
        if kind == z3.Z3_OP_EQ:
            return xs[0] == xs[1]
        if kind == z3.Z3_OP_DISTINCT:
            return z3.Distinct(*xs)
        if kind == z3.Z3_OP_ITE:
            return z3.If(*xs)
        if kind == z3.Z3_OP_AND:
            return z3.And(*xs)
        if kind == z3.Z3_OP_OR:
            return z3.Or(*xs)
        if kind == z3.Z3_OP_NOT:
            return z3.Not(xs[0])
        if kind == z3.Z3_OP_IMPLIES:
            return z3.Implies(*xs)
        if kind in (z3.Z3_OP_XOR, z3.Z3_OP_IFF):
            return z3.Xor(*xs) if kind == z3.Z3_OP_XOR else xs[0] == xs[1]
        if kind == z3.Z3_OP_INT2BV:
            size = e.sort().size()
            return z3.Extract(size - 1, 0, xs[0]) if size <= w else z3.SignExt(size - w, xs[0])
        if kind == z3.Z3_OP_BV2INT:
            return z3.ZeroExt(w - args[0].size(), xs[0])
        if e.sort().kind() == z3.Z3_BV_SORT or (kind != z3.Z3_OP_UNINTERPRETED and all(
                a.sort().kind() == z3.Z3_BV_SORT for a in args)):
            return e.decl()(*xs)  # a bit-vector operation of the traced program: its own width
        raise _Outside(f"operation {e.decl()}")


def relax(constraints: Sequence) -> list:
    """The query with each ``bv2int(b)`` replaced by a fresh integer ``v`` and facts true of it: ``0 <= v < 2^w``,
    and for ``b`` an ``and`` (``or``) of ``int2bv(x)`` leaves (De Morgan applied), ``v <= x`` (``v >= x``) for each
    leaf ``x`` inside ``0 … 2^w − 1``. Every model of the query is one of the relaxation (``v`` its value), so
    the relaxation's ``unsat`` is the query's; its ``sat`` says nothing. Linear reasoning (``k == q & m`` gives
    ``k <= q``) that bit-blasting finds hard at 31-bit ``n`` is then the integer solver's.

    >>> x, y = z3.Ints("x y")
    >>> r = relax([x >= 0, x < 16, y == z3.BV2Int(z3.Int2BV(x, 4) & z3.Int2BV(x + 3, 4)), y > x])
    >>> z3.Solver().check(*r)
    unsat
    """
    memo: dict = {}
    facts: list = []

    def leaves(b):
        negated = False
        while z3.is_app(b) and b.decl().kind() == z3.Z3_OP_BNOT:
            negated, b = not negated, b.arg(0)
        if not (z3.is_app(b) and b.decl().kind() in (z3.Z3_OP_BAND, z3.Z3_OP_BOR)):
            return None, []
        kind = b.decl().kind()
        if negated:  # ~(a | b) = ~a & ~b
            kind = z3.Z3_OP_BOR if kind == z3.Z3_OP_BAND else z3.Z3_OP_BAND
        out = []
        for c in b.children():
            positive = not negated
            while z3.is_app(c) and c.decl().kind() == z3.Z3_OP_BNOT:
                positive, c = not positive, c.arg(0)
            if positive and z3.is_app(c) and c.decl().kind() == z3.Z3_OP_INT2BV:
                out.append(rewrite(c.arg(0)))
        return kind, out

    def rewrite(e):
        key = e.get_id()
        if key in memo:
            return memo[key]
        if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_BV2INT:
            top = 2 ** e.arg(0).sort().size() - 1
            v = z3.Int(f"relaxed_{len(memo)}")
            facts.extend([v >= 0, v <= top])
            kind, xs = leaves(e.arg(0))
            for x in xs:
                fits = z3.And(x >= 0, x <= top)
                facts.append(z3.Implies(fits, v <= x if kind == z3.Z3_OP_BAND else v >= x))
            out = v
        elif z3.is_app(e) and e.num_args() > 0:
            out = e.decl()(*[rewrite(c) for c in e.children()])
        else:
            out = e
        memo[key] = out
        return out

    return [rewrite(c) for c in constraints] + facts


def to_bits(constraints: Sequence, bounds: dict) -> tuple[list, dict] | None:
    """The query over bit-vectors of one width, and the bit-vector of each integer variable; None outside."""
    try:
        iv = _Intervals(bounds)
        widest = 2
        todo, seen = list(constraints), set()
        while todo:
            e = todo.pop()
            if e.get_id() in seen:
                continue
            seen.add(e.get_id())
            if not z3.is_app(e):
                raise _Outside("a quantifier")
            if e.sort() == z3.IntSort():
                widest = max(widest, _bits_of(iv.of(e)))
            if e.sort().kind() == z3.Z3_BV_SORT:
                widest = max(widest, e.sort().size() + 1)
            todo.extend(e.children())
        width = widest + 1
        for lo, hi in bounds.values():
            width = max(width, _bits_of((lo, hi)) + 1)
        if width > MAX_WIDTH:
            return None
        rw = _Rewrite(width)
        out = [rw.bv(c) for c in constraints]
    except (_Outside, z3.Z3Exception):
        return None
    for name, x in rw.vars.items():
        lo, hi = bounds[name]
        out += [x >= z3.BitVecVal(lo, width), x <= z3.BitVecVal(hi, width)]
    return out, rw.vars


def solve_bits(constraints: Sequence, bounds: dict, timeout: float | None):
    """``(status, values, reason)`` of the query decided as bit-vectors; status None when outside the fragment."""
    made = to_bits(constraints, bounds)
    if made is None:
        return None, None, "outside the bit-vector fragment"
    query, variables = made
    solver = z3.Tactic("qfbv").solver()  # bit-vector preprocessing, then bit-blasting
    if timeout is not None:
        solver.set("timeout", max(1, int(timeout * 1000)))
    solver.add(*query)
    answer = solver.check()
    if answer == z3.unsat:
        return UNSAT, None, ""
    if answer != z3.sat:
        return UNKNOWN, None, solver.reason_unknown() or "unknown"
    model = solver.model()
    values = {name: model.eval(x, model_completion=True).as_signed_long() for name, x in variables.items()}
    return SAT, values, ""


def smallest_bits(constraints: Sequence, bounds: dict, order: Sequence[str], timeout: float | None, values: dict):
    """``values`` made the smallest in ``order`` (each variable by bisection, the earlier ones fixed): ``(values, note)``."""
    fixed: list = []
    note = ""
    for name in order:
        if name not in values:
            continue
        var = z3.Int(name)
        lo, hi = bounds[name][0], values[name]
        while lo < hi:
            mid = (lo + hi) // 2
            status, got, reason = solve_bits(list(constraints) + fixed + [var <= mid, var >= lo], bounds, timeout)
            if status == SAT:
                values, hi = got, got[name]
            elif status == UNSAT:
                lo = mid + 1
            else:
                note = f"the smallest {name} is not certain (the solver said {reason or status} below {hi})"
                break
        fixed.append(var == values[name])
        if note:
            break
    return values, note

"""The side conditions of a statement in words: ``for all 1 <= n <= 2^31 and all l >= 1 with l | n``."""

from __future__ import annotations

import z3


def describe_conditions(n: z3.ArithRef, params: dict, conditions: list) -> str:
    """``"for all n ≥ 1 and all l ≥ 1 with l | n"``: the side conditions in words (Z3's text where unusual).

    The bounds of one symbol are merged (the largest lower, the smallest upper bound:
    ``1 <= n <= 2^31``); a power of two from 2^16 on reads ``2^k``.

    >>> n, l, b = z3.Ints("n l b")
    >>> describe_conditions(n, {"l": l}, [n >= 1, l >= 1, n % l == 0])
    'for all n >= 1 and all l >= 1 with l | n'
    >>> describe_conditions(n, {"l": l, "b": b}, [n >= 1, n <= 2**31, l >= 1, l >= -2**31, l <= 2**31,
    ...                                            n % l == 0, b >= 0, b < 2])
    'for all 1 <= n <= 2^31 and all 1 <= l <= 2^31 and all 0 <= b < 2 with l | n'
    """
    lows: dict[str, int] = {}  # the largest lower bound of each symbol (--param-range raises the program's)
    highs: dict[str, tuple[int, bool]] = {}  # the smallest upper bound (inclusive), and whether it was written "<"
    rest = []
    for c in conditions:
        bound = _bound(c)
        if bound is not None:
            name, low, high, strict = bound
            if low is not None:
                lows[name] = max(lows.get(name, low), low)
            if high is not None and (name not in highs or high < highs[name][0]):
                highs[name] = (high, strict)
            continue
        c = z3.simplify(c) if not _is_divides(c) else c
        if z3.is_true(c):  # a condition that holds anyway (8 >= 1 at a fixed n) says nothing
            continue
        text = str(c)
        if _is_divides(c):
            a, b = c.arg(0).arg(0), c.arg(0).arg(1)
            text = f"{b} | {a}"
        if text not in rest:
            rest.append(text)
    names = list(dict.fromkeys([str(n)] + [str(v) for v in params.values() if str(v) != str(n)]))  # Z3 names: key block, symbol l
    for x in list(lows) + list(highs):  # a bound on a symbol the statement does not name is still stated
        if x not in names:
            rest.extend(_range_text(x, lows.get(x), highs.get(x)).split(" and "))
    head = "for all " + " and all ".join(_range_text(x, lows.get(x), highs.get(x)) for x in names)
    return head + (f" with {', '.join(dict.fromkeys(rest))}" if rest else "")


def _bound(c):
    """``(symbol, low, high, strict)`` when ``c`` bounds one symbol by a number (``n >= 1``, ``b < 2``, ``Not(n > 5)``)."""
    negate = False
    while z3.is_not(c):
        negate, c = not negate, c.arg(0)
    if not (z3.is_le(c) or z3.is_lt(c) or z3.is_ge(c) or z3.is_gt(c)):
        return None
    a, b = c.arg(0), c.arg(1)
    op = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">"}[c.decl().kind()]
    if z3.is_int_value(a) and z3.is_const(b) and not z3.is_int_value(b):  # 3 <= x  is  x >= 3
        a, b, op = b, a, {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}[op]
    if not (z3.is_const(a) and not z3.is_int_value(a) and a.sort() == z3.IntSort() and z3.is_int_value(b)):
        return None
    if negate:
        op = {"<=": ">", "<": ">=", ">=": "<", ">": "<="}[op]
    v = b.as_long()
    name = str(a)
    if op == ">=":
        return name, v, None, False
    if op == ">":
        return name, v + 1, None, False
    if op == "<=":
        return name, None, v, False
    return name, None, v - 1, True


def _range_text(x: str, low: int | None, high: tuple[int, bool] | None) -> str:
    if high is None:
        return x if low is None else f"{x} >= {_number(low)}"
    top, strict = high
    upper = f"{x} < {_number(top + 1)}" if strict else f"{x} <= {_number(top)}"
    if low is None:
        return upper
    if low == top:
        return f"{x} = {_number(low)}"
    return f"{_number(low)} <= {upper}"


def _number(v: int) -> str:
    """``2^31`` for a power of two from 2^16 on (``-2^31``), else the digits."""
    a = abs(v)
    if a >= 2 ** 16 and a & (a - 1) == 0:
        return ("-" if v < 0 else "") + f"2^{a.bit_length() - 1}"
    return str(v)


def _is_divides(c) -> bool:
    return z3.is_eq(c) and z3.is_app_of(c.arg(0), z3.Z3_OP_MOD) and z3.is_int_value(c.arg(1)) \
        and c.arg(1).as_long() == 0

"""The size formulas written out: ``positions = 3n - 2``, ``edges_off_diagonal = 2n^2 - 4n + 2 = 2(n - 1)^2``.

:func:`describe` turns a :class:`solvers.formulas.SizeFormulas` into printable lines,
each count expanded and, when it splits, factored; ``python -m hasse.solvers.formula_text``
prints every construction.

>>> _polynomial(2 * n**2 - 2 * n * l + l**2)
'2n^2 - 2nl + l^2'
"""

from __future__ import annotations

import math

import sympy

from hasse.solvers.formulas import FIELDS, SizeFormulas, formulas, l, n, polynomial_terms


def _monomial(a: int, b: int) -> str:
    return "".join(s + (f"^{e}" if e > 1 else "") for s, e in (("n", a), ("l", b)) if e)


def _polynomial(expr: sympy.Expr) -> str:
    """``2n^2 - 2nl + l^2 + 2n - l`` for an integer polynomial in ``n`` and ``l``."""
    text = ""
    for (a, b), c in polynomial_terms(expr):
        sign = "-" if c < 0 else "+"
        c = abs(c)
        body = _monomial(a, b)
        body = str(c) if not body else (body if c == 1 else f"{c}{body}")
        text = (f"{'-' if sign == '-' else ''}{body}" if not text else f"{text} {sign} {body}")
    return text or "0"


def _with_denominator(expr: sympy.Expr, shown) -> str:
    """``expr`` written as ``shown(numerator)`` over its integer denominator, if any."""
    den = math.lcm(*(int(sympy.Rational(c).q) for _, c in polynomial_terms(expr)))
    body = shown(sympy.expand(expr * den))
    if den == 1:
        return body
    return f"({body})/{den}" if _wrapped(body) else f"{body}/{den}"


def _wrapped(body: str) -> bool:
    """Whether ``body`` has a top-level ``+``/``-`` (so needs parentheses before ``/``)."""
    depth = 0
    for j, ch in enumerate(body):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in "+-" and j > 0:
            return True
    return False


def _factored(poly: sympy.Expr) -> str | None:
    """``2(n - 1)^2``, ``n(n - 1)``: ``poly`` as a product, or ``None`` if it does not split."""
    content, factors = sympy.factor_list(poly, n, l)
    if sum(e for _, e in factors) < 2 and content in (1, -1):
        return None
    parts = sorted(((_polynomial(p), e) for p, e in factors), key=lambda t: (_wrapped(t[0]), t[0]))
    text = "".join((f"({p})" if _wrapped(p) else p) + (f"^{e}" if e > 1 else "") for p, e in parts)
    if content == -1:
        return f"-{text}"
    return text if content == 1 else f"{content}{text}"


def _count(expr: sympy.Expr) -> str:
    expanded = _with_denominator(expr, _polynomial)
    factored = _with_denominator(expr, lambda p: _factored(p) or _polynomial(p))
    return expanded if factored == expanded else f"{expanded} = {factored}"


def _ratio(expr: sympy.Expr) -> str:
    num, den = sympy.fraction(expr)
    num, den = _with_denominator(num, _polynomial), _with_denominator(den, _polynomial)
    if den == "1":
        return num
    wrap = lambda s: f"({s})" if _wrapped(s) or "/" in s else s  # noqa: E731
    return f"{wrap(num)}/{wrap(den)}"


def describe(f: SizeFormulas) -> list[str]:
    """Printable lines: a heading, then ``positions = 3n - 2`` and the other sizes, one per line.

    A count that factors is shown both expanded and factored
    (``edges_off_diagonal = 2n^2 - 4n + 2 = 2(n - 1)^2``).

    Examples
    --------
    >>> print("\\n".join(describe(formulas("butterfly"))))
    butterfly (n tokens)
      positions = 3n - 2
      edges = 2n^2 - n = n(2n - 1)
      edges_off_diagonal = 2n^2 - 4n + 2 = 2(n - 1)^2
      supervised = n
      label_density = n/(3n - 2)
    """
    heading = {"causal": "causal on n - 1 positions (n tokens)",
               "block_two_stream": f"block_two_stream, variant={f.variant} (n tokens, blocks of l)",
               "butterfly": "butterfly (n tokens)"}[f.construction]
    lines = [heading]
    for name in FIELDS:
        value = getattr(f, name)
        lines.append(f"  {name} = {_ratio(value) if name == 'label_density' else _count(value)}")
    return lines


def main() -> None:
    for construction, variant in (("causal", "chain"), ("block_two_stream", "chain"),
                                  ("block_two_stream", "clique"), ("butterfly", "chain")):
        print("\n".join(describe(formulas(construction, variant))))


if __name__ == "__main__":
    main()

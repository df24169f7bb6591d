"""Closed-form sizes of the three merged constructions, as sympy expressions in ``n`` and ``l``.

For a sample of ``n`` tokens (and blocks of ``l`` tokens, ``l`` dividing ``n``):

- ``causal`` — causal attention on ``n - 1`` positions with label ``i + 1`` at position
  ``i``: the minimal merge of the ``ar:n`` family, the catalogue mask ``causal:n=<n-1>``;
- ``block_two_stream`` — ``block_two_stream:n=N,block=l`` (variants ``chain`` and
  ``clique``): the minimal merge of the ``block`` family;
- ``butterfly`` — ``butterfly:n=N``: the minimal merge of the ``infill`` family.

Each size is derived from the normative layout (design §4) as a sum, over the query
positions of each stream, of the keys that query attends, and summed by sympy. The
tests compare every formula with the concrete masks and tasks of the catalogue.

``n`` is always the number of tokens of the sample, never the number of positions.
The formulas are written out as text by :mod:`solvers.formula_text`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy

from hasse.theory.catalog import get_entry
from hasse.theory.errors import InputError
from hasse.theory.masks.block_two_stream import VARIANTS
from hasse.theory.params import require_at_least, require_block, require_positive
from hasse.theory.spec import parse_spec, parse_value

_n, _l = sympy.symbols("n l", positive=True, integer=True)
n, l = _n, _l  # the public symbols: tokens of the sample, tokens per block
_i, _k, _b = sympy.symbols("i k b", integer=True, nonnegative=True)  # summation indices

CONSTRUCTIONS = ("causal", "block_two_stream", "butterfly")
FAMILY_CONSTRUCTION = {"ar": "causal", "block": "block_two_stream", "infill": "butterfly"}
FIELDS = ("positions", "edges", "edges_off_diagonal", "supervised", "label_density")


@dataclass(frozen=True)
class SizeFormulas:
    """The sizes of one construction as sympy expressions in the symbols ``n`` (and ``l``).

    ``edges`` counts the allowed ``(query, key)`` pairs of the dense mask, each position
    attending itself included (every position of the three constructions attends
    itself, so this is both ``M.sum()`` and ``(M | I).sum()``); ``edges_off_diagonal``
    leaves those ``positions`` self-pairs out.
    """

    construction: str  # "causal", "block_two_stream" or "butterfly"
    positions: sympy.Expr  # N, the number of positions
    edges: sympy.Expr  # allowed (query, key) pairs, the diagonal included
    edges_off_diagonal: sympy.Expr  # allowed (query, key) pairs with query != key
    supervised: sympy.Expr  # positions that carry a label
    label_density: sympy.Expr  # supervised / positions, a cancelled rational expression
    variant: str | None = None  # "chain" or "clique" for block_two_stream, else None


def _keys(count: sympy.Expr, index: sympy.Symbol, first, last) -> sympy.Expr:
    """``Σ_{index = first … last} count``: the keys attended by the queries of one stream."""
    return sympy.summation(count, (index, first, last))


def _rational(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` cancelled to ``p / q`` with ``q``'s leading term positive."""
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr)))
    if polynomial_terms(den)[0][1] < 0:
        num, den = -num, -den
    return num / den


def _finish(construction: str, positions, edges, supervised, variant=None) -> SizeFormulas:
    """Expand the counts; every position of the three layouts attends itself (``positions`` diagonal pairs)."""
    positions, edges, supervised = (sympy.expand(e) for e in (positions, edges, supervised))
    return SizeFormulas(construction, positions, edges, sympy.expand(edges - positions), supervised,
                        _rational(supervised / positions), variant)


def _causal() -> SizeFormulas:
    # positions 0 … n-2; position i attends 0 … i (i + 1 keys) and predicts x_{i+1}
    edges = _keys(_i + 1, _i, 0, _n - 2)  # = n(n - 1)/2
    return _finish("causal", _n - 1, edges, _n - 1)


def _block_two_stream(variant: str) -> SizeFormulas:
    blocks = _n / _l
    content = _keys(_i + 1, _i, 0, _n - _l - 1)  # C_i -> C_0 … C_i
    # the l queries of block b attend the b·l content positions of the blocks before
    query_content = _keys(_l * (_b * _l), _b, 0, blocks - 1)  # = n(n - l)/2
    if variant == "chain":  # Q_t -> the queries u <= t of its block: l(l + 1)/2 per block
        query_query = blocks * _keys(_i + 1, _i, 0, _l - 1)
    else:  # clique: l² per block
        query_query = blocks * _l**2
    return _finish("block_two_stream", 2 * _n - _l, content + query_content + query_query, _n, variant)


def _butterfly() -> SizeFormulas:
    forward = _keys(_i + 1, _i, 0, _n - 2)  # F_i -> F_0 … F_i
    backward = _keys(_n - _i, _i, 1, _n - 1)  # B_i -> B_i … B_{n-1}
    left = _keys(_k, _k, 0, _n - 1)  # P_k -> F_0 … F_{k-1}
    right = _keys(_n - 1 - _k, _k, 0, _n - 1)  # P_k -> B_{k+1} … B_{n-1}
    itself = _n  # P_k -> P_k
    return _finish("butterfly", 3 * _n - 2, forward + backward + left + right + itself, _n)


@lru_cache(maxsize=None)
def formulas(construction: str, variant: str = "chain") -> SizeFormulas:
    """The size formulas of ``construction`` (``causal``, ``block_two_stream`` or ``butterfly``).

    Definitions, with ``n`` tokens and blocks of ``l``:

    - ``positions``: ``n - 1``, ``2n - l``, ``3n - 2``;
    - ``edges``: the number of pairs ``(q, k)`` with ``M[q, k]``, each position
      attending itself counted; ``edges_off_diagonal``: the same without ``q = k``;
    - ``supervised``: the positions with a label (``n - 1``, ``n``, ``n``);
    - ``label_density``: ``supervised / positions``, cancelled.

    Parameters
    ----------
    construction : one of :data:`CONSTRUCTIONS`.
    variant : ``chain`` (default) or ``clique``; only ``block_two_stream`` has
        variants, the others accept only the default.

    Raises
    ------
    InputError
        An unknown construction or variant.

    Examples
    --------
    >>> f = formulas("butterfly")
    >>> f.positions, f.edges, f.edges_off_diagonal, f.label_density
    (3*n - 2, 2*n**2 - n, 2*n**2 - 4*n + 2, n/(3*n - 2))
    >>> formulas("causal").edges
    n**2/2 - n/2
    """
    if construction not in CONSTRUCTIONS:
        raise InputError(f"unknown construction {construction!r}; known: {', '.join(CONSTRUCTIONS)}")
    if variant not in VARIANTS:
        raise InputError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if construction == "block_two_stream":
        return _block_two_stream(variant)
    if variant != "chain":
        raise InputError(f"{construction} has no variants; variant={variant!r} applies to block_two_stream only")
    return _causal() if construction == "causal" else _butterfly()


def formula_for_family(spec: str) -> SizeFormulas:
    """The size formulas of a task family's minimal merge.

    ``ar`` → ``causal``, ``block`` → ``block_two_stream``, ``infill`` → ``butterfly``.

    ``spec`` is a family name or a family spec (``block:n=6,block=2,variant=clique``);
    only ``variant`` changes the answer, the formulas stay symbolic in ``n`` and ``l``.

    Raises
    ------
    InputError
        Not a family, an unknown parameter, or a malformed value.

    Examples
    --------
    >>> formula_for_family("infill:n=5").positions
    3*n - 2
    >>> formula_for_family("block:variant=clique").variant
    'clique'
    """
    name, raw = parse_spec(spec)
    entry = get_entry(name, "family", spec.strip())
    values = {}
    for key, text in raw.items():
        param = entry.param(key)
        if param is None:
            known = ", ".join(p.name for p in entry.params)
            raise InputError(f"unknown parameter {key!r} for {name}; its parameters: {known}", spec.strip())
        values[key] = parse_value(param, text, spec.strip())
    return formulas(FAMILY_CONSTRUCTION[name], values.get("variant", "chain"))


def _integer(value: sympy.Expr) -> int:
    assert value.is_Integer, value  # the formulas are integer-valued on their domain
    return int(value)


def evaluate(f: SizeFormulas, n: int, l: int | None = None) -> dict[str, int | Fraction]:
    """The sizes for ``n`` tokens (and blocks of ``l``): counts as ``int``, ``label_density`` as ``Fraction``.

    Raises
    ------
    InputError
        ``n`` outside the construction's domain (``causal`` needs ``n >= 2``, the
        others ``n >= 1``); ``l`` missing or not dividing ``n`` for ``block_two_stream``;
        ``l`` given for a construction without blocks.

    Examples
    --------
    >>> evaluate(formulas("butterfly"), 4)
    {'positions': 10, 'edges': 28, 'edges_off_diagonal': 18, 'supervised': 4, 'label_density': Fraction(2, 5)}
    >>> evaluate(formulas("block_two_stream"), 4, 3)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: block = 3 does not divide n = 4
    """
    if f.construction == "block_two_stream":
        if l is None:
            raise InputError("block_two_stream needs the block size l")
        n, l = require_block(n, l)
    else:
        if l is not None:
            raise InputError(f"{f.construction} has no block size; got l = {l!r}")
        if f.construction == "causal":
            n = require_at_least("n", n, 2, "causal on n - 1 positions, the merge of ar:n")
        else:
            n = require_positive("n", n)
    values = {_n: n} if l is None else {_n: n, _l: l}
    out: dict[str, int | Fraction] = {name: _integer(getattr(f, name).subs(values)) for name in FIELDS[:-1]}
    density = sympy.Rational(f.label_density.subs(values))
    out["label_density"] = Fraction(int(density.p), int(density.q))
    return out


def polynomial_terms(poly: sympy.Expr) -> list[tuple[tuple[int, int], sympy.Rational]]:
    """The terms ``((deg n, deg l), coefficient)`` of a polynomial, highest total degree first, then more ``n``."""
    terms = sympy.Poly(poly, _n, _l).terms()
    return sorted(terms, key=lambda t: (-sum(t[0]), -t[0][0]))

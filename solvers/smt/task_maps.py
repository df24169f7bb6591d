"""Maps between labelled Hasse diagrams as Z3 constraints: isomorphisms and embeddings.

Diagrams are :class:`solvers.posets.Diagram` (nodes with input multisets, covers
``lower[c]``), rebuilt from raw task rows — never the ``theory`` code the proofs check.

- :func:`encode_map` — a one-hot Boolean ``f[c, m]`` per allowed pair, every source
  node mapped exactly once;
- :func:`encode_injective` / :func:`encode_onto` — at most / exactly one source per target;
- :func:`encode_injective_on_down_sets` — one-to-one on every down-set;
- :func:`encode_cover_exact` — ``f`` maps the cover set of ``c`` exactly onto the
  cover set of ``f(c)`` (both inclusions).

A cover-exact map that is one-to-one on ``↓c`` is an isomorphism of ``↓c`` onto ``↓f(c)``: by
induction in topological order the nodes below ``f(c)`` are exactly the images of the
nodes below ``c``, and edges are preserved both ways. So :func:`find_embedding` decides
node equivalence (design.md §3) and, over a whole task, a coherent embedding of the
task as a down-closed part of another diagram; :func:`find_isomorphism` finds a
bijection preserving covers, inputs and labels. Both answer with
:class:`solvers.smt.prove.Answer` (sat: ``value`` is the map ``{node: node}``).

>>> from hasse.solvers.posets import Diagram
>>> chain = Diagram(members=((0,), (1,)), inputs=((("x0", 0),), (("x1", 1),)), labels=(frozenset(), frozenset()),
...                 lower=((), (0,)))  # x0 -> x1
>>> find_isomorphism(chain, chain).value
{0: 0, 1: 1}
"""

from __future__ import annotations

from typing import Sequence

import z3

from hasse.solvers.posets import Diagram
from hasse.solvers.smt.prove import UNSAT, Answer, check


def encode_map(solver, name: str, sources: Sequence[int], allowed: dict[int, list[int]]) -> dict:
    """One-hot ``f[(c, m)]`` for ``m`` in ``allowed[c]``; each source node maps to exactly one target."""
    f = {(c, m): z3.Bool(f"{name}_{c}_{m}") for c in sources for m in allowed[c]}
    for c in sources:
        options = [f[c, m] for m in allowed[c]]
        solver.add(z3.PbEq([(x, 1) for x in options], 1) if options else z3.BoolVal(False))
    return f


def _by_target(f: dict) -> dict[int, list]:
    out: dict[int, list] = {}
    for (c, m), x in f.items():
        out.setdefault(m, []).append(x)
    return out


def encode_injective(solver, f: dict) -> None:
    """No two source nodes share a target."""
    for xs in _by_target(f).values():
        if len(xs) > 1:
            solver.add(z3.AtMost(*xs, 1))


def encode_injective_on_down_sets(solver, f: dict, d: Diagram, nodes) -> None:
    """No two source nodes with a common upper bound (both in one down-set) share a target."""
    below = d.below()
    up = {c: {w for w in range(d.size) if c in below[w]} for c in nodes}
    targets = {m for (_, m) in f}
    nodes = sorted(nodes)
    for a_i, a in enumerate(nodes):
        for b in nodes[a_i + 1:]:
            if up[a] & up[b]:
                for m in targets:
                    if (a, m) in f and (b, m) in f:
                        solver.add(z3.Not(z3.And(f[a, m], f[b, m])))


def encode_onto(solver, f: dict, targets: Sequence[int]) -> None:
    """Every target node is hit exactly once (with :func:`encode_map`: a bijection)."""
    hit = _by_target(f)
    for m in targets:
        xs = hit.get(m, [])
        solver.add(z3.PbEq([(x, 1) for x in xs], 1) if xs else z3.BoolVal(False))


def encode_cover_exact(solver, f: dict, src_lower, tgt_lower) -> None:
    """``f(c) = m`` implies ``f`` maps the covers of ``c`` onto the covers of ``m`` (both inclusions)."""
    for (c, m), x in f.items():
        parts = []
        for m2 in tgt_lower[m]:  # every cover of m is the image of a cover of c
            parts.append(z3.Or([f[d, m2] for d in src_lower[c] if (d, m2) in f]))
        for d in src_lower[c]:  # every cover of c lands on a cover of m
            parts.append(z3.Or([f[d, m2] for m2 in tgt_lower[m] if (d, m2) in f]))
        if parts:
            solver.add(z3.Implies(x, z3.And(parts)))


def decode_map(model, f: dict) -> dict[int, int]:
    """The map ``{source node: target node}`` that a model's one-hot ``f`` chooses."""
    return {c: m for (c, m), x in f.items() if z3.is_true(model.eval(x, model_completion=True))}


def find_isomorphism(a: Diagram, b: Diagram, *, labels: bool = True, root: bool = False,
                     timeout: float | None = None) -> Answer:
    """A bijection of nodes preserving covers, input multisets (and labels; the last node with ``root``).

    sat: ``value`` is the map ``{node of a: node of b}``.
    """
    if a.size != b.size:
        return Answer(UNSAT, reason="different numbers of nodes")
    allowed = {c: [m for m in range(b.size) if a.inputs[c] == b.inputs[m]
                   and (not labels or a.labels[c] == b.labels[m])] for c in range(a.size)}
    if root:
        last = b.size - 1
        allowed[a.size - 1] = [m for m in allowed[a.size - 1] if m == last]
    solver = z3.Solver()
    f = encode_map(solver, "iso", range(a.size), allowed)
    encode_onto(solver, f, range(b.size))
    encode_cover_exact(solver, f, a.lower, b.lower)
    return check(solver, timeout, lambda model: decode_map(model, f))


def find_embedding(src: Diagram, tgt: Diagram, *, root: int | None = None, labels: bool = True,
                   root_labels=None, timeout: float | None = None) -> Answer:
    """A cover-exact map of ``src`` (or of ``↓root``) into ``tgt``, one-to-one on every down-set, inputs preserved.

    With ``labels`` every node's ``(input, target)`` pairs must be carried by its image;
    with ``root_labels`` (a set of such pairs) only those, at the image of the root
    (node equivalence with labels, and consistency, ask no more).
    sat: ``value`` is the map ``{node of src: node of tgt}``.
    """
    nodes = sorted(src.below()[root]) if root is not None else list(range(src.size))
    allowed = {c: [m for m in range(tgt.size) if src.inputs[c] == tgt.inputs[m]
                   and (not labels or src.labels[c] <= tgt.labels[m])] for c in nodes}
    if root is not None and root_labels is not None:
        allowed[root] = [m for m in allowed[root] if set(root_labels) <= tgt.labels[m]]
    solver = z3.Solver()
    f = encode_map(solver, "emb", nodes, allowed)
    encode_injective_on_down_sets(solver, f, src, nodes)
    encode_cover_exact(solver, f, src.lower, tgt.lower)
    return check(solver, timeout, lambda model: decode_map(model, f))



"""Symbolic forms of the catalogue masks (solvers/symbolic/catalog/) equal the concrete catalogue.

Reference: :func:`theory.catalog.build_mask`, the concrete engine's own builder, at each
``n`` and parameter value. The symbolic side is evaluated only by substituting numbers
into its formula (``SymbolicMask.concrete``); index tensors are fixed to concrete values
(document ids, ranks, parents) computed here or by the catalogue's helpers. Also checked:
the side conditions accept exactly the values the catalogue accepts, the obligations
hold on the grid, sizes and streams match the layouts' names. The exhaustive sweep over
every ``n <= 24`` is ``slow``; a sample of it runs always.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import z3

from hasse.solvers.symbolic.catalog import Ancestry, fix_index, index_instances, names, symbolic_mask
from hasse.solvers.symbolic.trace import TraceError
from hasse.theory.catalog import build_mask
from hasse.theory.errors import InputError
from tests.cases import compositions

MAX_N = 24
SAMPLE_N = (1, 2, 3, 4, 6, 7, 12, 24)


def values_of(entry: str, n: int) -> list[dict]:
    """Parameter values to try at ``n`` (some the catalogue refuses: the conditions must refuse them too)."""
    if entry in ("causal", "bidirectional", "butterfly"):
        return [{}]
    if entry == "sliding_window":
        return [{"window": w} for w in range(0, n + 2)]
    if entry == "sliding_window_distance":
        return [{"d": d} for d in range(0, n + 1)]
    if entry == "prefix_lm":
        return [{"prefix": p} for p in range(0, n + 2)]
    if entry in ("block_causal", "bd3lm", "block_two_stream", "block_two_stream_clique"):
        return [{"block": b} for b in range(1, n + 1)]
    if entry == "chunked":
        return [{"chunk": c} for c in range(0, n + 2)]
    if entry == "recurrent":
        return [{"chunk": c} for c in range(0, n + 2)]
    if entry == "conv":
        return [{"width": w} for w in range(0, n + 2)]
    if entry in ("sparse_causal", "sparse_butterfly"):
        return [{"layers": L, "tile": t} for L in (0, 1, 2, 3, 4) for t in (-1, 0, 1, 2, 3, n)]
    if entry == "sparse_block_two_stream":
        return [{"block": b, "layers": L, "tile": t} for b in range(1, n + 1) for L in (0, 2, 3) for t in (-1, 0, 2, n)]
    raise AssertionError(entry)


TRACED = ("causal", "bidirectional", "sliding_window", "sliding_window_distance", "prefix_lm", "block_causal",
          "chunked", "recurrent", "conv", "bd3lm", "block_two_stream", "block_two_stream_clique", "butterfly",
          "sparse_causal", "sparse_butterfly", "sparse_block_two_stream")

_CACHE: dict = {}


def sym(entry: str):
    if entry not in _CACHE:
        _CACHE[entry] = symbolic_mask("block_two_stream:variant=clique" if entry == "block_two_stream_clique"
                                      else entry)
    return _CACHE[entry]


def spec_of(entry: str, n: int, params: dict) -> str:
    if entry == "block_two_stream_clique":
        return f"block_two_stream:n={n},block={params['block']},variant=clique"
    return ",".join([f"{entry}:n={n}"] + [f"{k}={v}" for k, v in params.items()])


def holds(formula, subs) -> bool:
    value = z3.simplify(z3.substitute(formula, *subs)) if subs else z3.simplify(formula)
    assert z3.is_true(value) or z3.is_false(value), f"{formula} does not reduce at {subs}"
    return z3.is_true(value)


def check_obligations(m, n: int, params: dict, size: int) -> None:
    """Every obligation (a divisor never 0, a lookup in range) holds at every pair of the grid."""
    subs = m.values(n, **params) if not z3.is_int_value(m.n) else [
        (t, z3.IntVal(params[k])) for k, t in m.params.items() if k in params]
    for ob, why in m.obligations:
        fixed = z3.simplify(z3.substitute(ob, *subs)) if subs else z3.simplify(ob)
        if z3.is_true(fixed):
            continue
        for q in range(size):
            for k in range(size):
                assert holds(fixed, [(m.q, z3.IntVal(q)), (m.k, z3.IntVal(k))]), f"{m.name}: {why} at {q}, {k}"


def compare(entry: str, n: int, params: dict) -> None:
    m = sym(entry)
    spec = spec_of(entry, n, params)
    try:
        expected = build_mask(spec)
    except InputError:
        expected = None
    accepted = all(holds(c, m.values(n, **params)) for c in m.conditions)
    assert accepted == (expected is not None), f"{spec}: conditions say {accepted}, the catalogue disagrees"
    if expected is None:
        return
    size = m.size_at(n, **params)
    got = m.concrete(n, **params)
    assert got.shape == expected.matrix.shape == (size, size), spec
    assert np.array_equal(got, expected.matrix), f"{spec}: symbolic form differs at {np.argwhere(got != expected.matrix)[:3].tolist()}"
    check_streams(m, n, params, expected.names, spec)
    check_obligations(m, n, params, size)


def check_streams(m, n, params, labels, spec) -> None:
    if not m.streams:
        return
    subs = m.values(n, **params) if not z3.is_int_value(m.n) else []
    starts = [z3.simplify(z3.substitute(p, *subs) if subs else p).as_long() for _, p in m.streams]
    ends = starts[1:] + [len(labels)]
    for (stream, _), start, end in zip(m.streams, starts, ends):
        for label in labels[start:end]:
            assert label.startswith(stream) and not label[len(stream):len(stream) + 1].isalpha(), (spec, stream, label)


@pytest.mark.parametrize("entry", TRACED)
def test_sampled_equal_to_catalogue(entry):
    for n in SAMPLE_N:
        vals = values_of(entry, n)
        for params in (vals if len(vals) <= 4 else [vals[0], vals[1], vals[len(vals) // 2], vals[-1]]):
            compare(entry, n, params)


@pytest.mark.slow
@pytest.mark.parametrize("entry", TRACED)
def test_every_n_equal_to_catalogue(entry):
    for n in range(1, MAX_N + 1):
        for params in values_of(entry, n):
            compare(entry, n, params)


def test_every_entry_has_a_form():
    from hasse.theory.catalog import mask_entries

    assert set(names()) == {e.name for e in mask_entries()}


def test_statements_and_sizes():
    assert symbolic_mask("block_two_stream").statement == "for all 1 <= n <= 2^31 and all l >= 1 with l | n"
    assert symbolic_mask("sliding_window").statement == "for all 1 <= n <= 2^31 and all 1 <= w <= 2^31"
    assert symbolic_mask("sliding_window:w=8").statement == "for all 1 <= n <= 2^31"
    n, l = z3.Ints("n l")
    for spec, size in [("butterfly", 3 * n - 2), ("block_two_stream", 2 * n - l), ("bd3lm", 2 * n), ("causal", n),
                       ("xlnet", 2 * n), ("tree", z3.Int("p") + n), ("tree:prefix=2", n + 2)]:
        assert z3.is_true(z3.simplify(symbolic_mask(spec).size == size)), spec
    assert symbolic_mask("recurrent").statement == "for all 1 <= n <= 2^31 and all 0 <= c <= 2^31"
    assert symbolic_mask("prefix_lm").statement == "for all 1 <= n <= 2^31 and all p >= 0 with p <= n"
    assert symbolic_mask("sliding_window:w=8").params == {}
    assert set(symbolic_mask("block_two_stream").params) == {"block"}


@pytest.mark.parametrize("spec, words", [
    ("nonsense", "nonsense"),
    ("causal:m=3", "unknown parameter 'm'"),
    ("sliding_window:w=0", "window must be a positive integer"),
    ("block_causal:n=4,block=3", "does not divide"),
    ("prefix_lm:n=2,prefix=3", "prefix must be between"),
    ("block_two_stream:variant=zigzag", "variant"),
    ("xlnet:order=0+0", "permutation"),
    ("tree:parents=0", "points to the node itself"),
    ("document:lengths=2+0", "positive"),
    ("conv:width=0", "width must be a positive integer"),
    ("conv:n=4,width=2,documents=2+2", "no symbolic form yet"),
    ("recurrent:n=4,documents=2+2", "no symbolic form yet"),
    ("ar", "ar"),
])
def test_bad_specs_one_line(spec, words):
    with pytest.raises(InputError) as info:
        symbolic_mask(spec)
    text = str(info.value)
    assert "\n" not in text and words in text and text.startswith(spec.split(":")[0]), text


# --------------------------------------------------------------------------- index tensors


def document_ids(lengths):
    return [i for i, length in enumerate(lengths) for _ in range(length)]


def random_parents(rng, m):
    return [rng.choice([-1] + list(range(i))) if i else -1 for i in range(m)]


def ranks(order):
    out = [0] * len(order)
    for place, token in enumerate(order):
        out[token] = place
    return out


def compare_document(m, lengths, causal):
    fixed = fix_index(m, doc=document_ids(lengths))
    n = sum(lengths)
    expected = build_mask(f"document:lengths={'+'.join(map(str, lengths))},causal={str(causal).lower()}").matrix
    assert np.array_equal(fixed.concrete(n), expected), lengths
    check_obligations(fixed, n, {}, n)


def compare_xlnet(m, order):
    fixed = fix_index(m, rank=ranks(order))
    n = len(order)
    expected = build_mask(f"xlnet:order={'+'.join(map(str, order))}")
    assert np.array_equal(fixed.concrete(n), expected.matrix), order
    check_obligations(fixed, n, {}, 2 * n)
    check_streams(fixed, n, {}, expected.names, order)


def compare_tree(m, parents, prefix):
    fixed = fix_index(m, parent=parents)
    params = {"prefix": prefix} if "prefix" in m.params else {}
    size = prefix + len(parents)
    spec = f"tree:parents={'+'.join(map(str, parents))},prefix={prefix}"
    expected = build_mask(spec)
    subs = [(t, z3.IntVal(prefix)) for t in fixed.params.values()]
    formula = z3.substitute(fixed.formula, *subs) if subs else fixed.formula
    got = np.array([[holds(formula, [(m.q, z3.IntVal(q)), (m.k, z3.IntVal(k))]) for k in range(size)]
                    for q in range(size)])
    assert np.array_equal(got, expected.matrix), spec
    check_obligations(fixed, len(parents), params, size)


@pytest.mark.parametrize("causal", [False, True])
def test_document_sampled(causal):
    m = symbolic_mask(f"document:causal={str(causal).lower()}")
    rng = random.Random(1)
    for n in (1, 2, 3, 5, 24):
        comps = list(compositions(n)) if n <= 5 else [[1] * n, [n]] + [
            [len(c) for c in np.split(np.arange(n), sorted(rng.sample(range(1, n), 5)))] for _ in range(3)]
        for lengths in comps:
            compare_document(m, lengths, causal)


def test_document_given_lengths_equals_catalogue():
    assert np.array_equal(symbolic_mask("document:lengths=2+3,causal=true").concrete(5),
                          build_mask("document:lengths=2+3,causal=true").matrix)


def test_xlnet_sampled():
    m = symbolic_mask("xlnet")
    rng = random.Random(2)
    for n in (1, 2, 3):
        for order in itertools.permutations(range(n)):
            compare_xlnet(m, list(order))
    for n in (7, 24):
        order = list(range(n))
        rng.shuffle(order)
        compare_xlnet(m, order)
    assert np.array_equal(symbolic_mask("xlnet:order=2+0+1").concrete(3), build_mask("xlnet:order=2+0+1").matrix)


def test_tree_sampled():
    rng = random.Random(3)
    free = symbolic_mask("tree")
    for prefix in (0, 1, 3):
        fixed_prefix = symbolic_mask(f"tree:prefix={prefix}")
        for m_nodes in (1, 2, 4, 9):
            parents = random_parents(rng, m_nodes)
            compare_tree(free, parents, prefix)
            compare_tree(fixed_prefix, parents, prefix)
    assert np.array_equal(symbolic_mask("tree:parents=-1+0+0+1,prefix=2").concrete(4),
                          build_mask("tree:parents=-1+0+0+1,prefix=2").matrix)


@pytest.mark.slow
def test_index_tensors_every_n():
    rng = random.Random(4)
    for causal in (False, True):
        m = symbolic_mask(f"document:causal={str(causal).lower()}")
        for n in range(1, MAX_N + 1):
            comps = compositions(n) if n <= 8 else [_cut([rng.choice([1, 2, 3, 5]) for _ in range(n)], n)
                                                   for _ in range(3)]
            for lengths in comps:
                compare_document(m, lengths, causal)
    m = symbolic_mask("xlnet")
    for n in range(1, MAX_N + 1):
        for order in (itertools.permutations(range(n)) if n <= 4 else [rng.sample(range(n), n) for _ in range(3)]):
            compare_xlnet(m, list(order))
    m = symbolic_mask("tree")
    for n in range(1, MAX_N + 1):
        for prefix in (0, 1, 5):
            for _ in range(2):
                compare_tree(m, random_parents(rng, n), prefix)


def _cut(pieces, n):
    out, total = [], 0
    for p in pieces:
        if total + p >= n:
            out.append(n - total)
            return out
        out.append(p)
        total += p
    out.append(n - total)
    return [x for x in out if x > 0]


def test_fix_index_refuses_unknown_names():
    with pytest.raises(InputError):
        fix_index(symbolic_mask("document"), rank=[0])
    with pytest.raises(TraceError):
        symbolic_mask("document").concrete(3)


# --------------------------------------------------------------------------- the ancestor axioms


def _true_ancestors(parents):
    out = set()
    for i in range(len(parents)):
        j = i
        while j >= 0:
            out.add((i, j))
            j = parents[j]
    return out


def test_ancestry_axioms_hold_on_real_trees():
    """Soundness: the instantiated axioms are true of every real forest (random ones here)."""
    rng = random.Random(5)
    for m_nodes in (1, 2, 3, 6):
        for _ in range(3):
            parents = random_parents(rng, m_nodes)
            index = Ancestry(_sym_size(m_nodes))
            a, b = z3.Ints("a b")
            index.ancestor(a, b)
            axioms = _fixed(z3.And(index.axioms()), index, parents, _true_ancestors(parents))
            for x in range(-1, m_nodes + 1):
                for y in range(-1, m_nodes + 1):
                    assert holds(axioms, [(a, z3.IntVal(x)), (b, z3.IntVal(y))]), (parents, x, y)


def _sym_size(m):
    from hasse.solvers.symbolic.terms import SymInt

    return SymInt(z3.IntVal(m), None)


def _fixed(ax, index, parents, anc):
    x, y = z3.Var(0, z3.IntSort()), z3.Var(1, z3.IntSort())
    f = z3.IntVal(-7)
    for i in reversed(range(len(parents))):
        f = z3.If(x == i, z3.IntVal(parents[i]), f)
    rel = z3.Or([z3.And(x == i, y == j) for i, j in sorted(anc)])
    return z3.substitute_funs(ax, (index.function, f), (index.relation, rel))


def test_tree_mask_proved_backward_with_the_axioms():
    """With the facts, Z3 proves 'the tree mask only looks back' for all n, p and parent arrays; without, it cannot."""
    m = symbolic_mask("tree")
    q, k = z3.Ints("q k")
    claim = z3.Implies(z3.And(m.inside(q, k), m.allowed(q, k)), k <= q)
    solver = z3.Solver()
    solver.add(*m.conditions, m.inside(q, k), z3.Not(claim))
    assert solver.check() == z3.sat  # the uninterpreted relation alone says nothing
    solver.add(*m.facts([(q, k)]))
    assert solver.check() == z3.unsat


def test_index_instances_are_valid_catalogue_inputs():
    """Each instance is a real input of the catalogue (lengths, an order, parents) and its fixed form equals it."""
    for n in (1, 2, 5, 9):
        for values in index_instances(symbolic_mask("document:causal=true"), n):
            doc = values["doc"]
            assert doc[0] == 0 and all(b - a in (0, 1) for a, b in zip(doc, doc[1:])), doc
            compare_document(symbolic_mask("document:causal=true"), [doc.count(i) for i in range(doc[-1] + 1)], True)
        instances = index_instances(symbolic_mask("xlnet"), n)
        assert len(instances) == 1 if n == 1 else len(instances) >= 2  # duplicates dropped, extremes kept
        for values in instances:
            rank = values["rank"]
            order = [rank.index(place) for place in range(n)]
            compare_xlnet(symbolic_mask("xlnet"), order)
        for values in index_instances(symbolic_mask("tree"), n):
            compare_tree(symbolic_mask("tree"), values["parent"], 2)
    assert index_instances(symbolic_mask("causal"), 4) == [{}]


def test_a_named_parameter_is_one_symbol_shared_by_two_specs():
    from hasse.solvers.symbolic.claims import check_equivalence

    keys, distance = symbolic_mask("sliding_window:w=W"), symbolic_mask("sliding_window_distance:d=W")
    assert [str(v) for v in keys.params.values()] == ["W"] == [str(v) for v in distance.params.values()]
    verdict = check_equivalence(keys, distance)
    # brute force: the smallest n at which w keys and distance w differ, over w = 1 … 6
    smallest = min(n for n in range(1, 8) for w in range(1, 7)
                   if not np.array_equal(build_mask(f"sliding_window:n={n},w={w}").matrix,
                                         build_mask(f"sliding_window_distance:n={n},d={w}").matrix))
    assert verdict.verdict == "refuted" and verdict.counterexample["n"] == smallest == 2
    assert verdict.statement.startswith("for all 1 <= n <= 2^31 and all 1 <= W <= 2^31:")
    # one key more is the same mask for every n and every W
    same = check_equivalence(symbolic_mask("sliding_window:w=W"), symbolic_mask("sliding_window_distance:d=V"),
                             assume=[z3.Int("V") == z3.Int("W") - 1])
    assert same.verdict == "proved"
    with pytest.raises(InputError, match="n cannot be named"):
        symbolic_mask("causal:n=N")

"""MAE (1-D, 2-D) and masked diffusion (issue 25): members, families, merges, layouts, proofs, the flex file.

Every expectation comes from an independent reading: the definitions spelled out pair by pair
in plain Python loops, subsets enumerated by bit patterns, pair counts by their formulas, a
disjoint union assembled block by block; the symbolic claims are also run on planted bugs
(a masked position that holds its own token, labels on visible tokens, a flex file without its
diagonal), which they must refute.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest
import z3

from hasse.theory.catalog import build_family, build_task
from hasse.theory.derivations import recipe_of
from hasse.theory.derive import derive, isomorphic
from hasse.theory.errors import InputError
from hasse.theory.leak import find_leaks
from hasse.theory.merge import family_to_merged_task
from hasse.theory.task import make_task

SMALL = range(1, 7)


def subsets(n: int, low: int, high: int):
    """Every subset of 0 … n-1 with low <= size <= high, by bit pattern (independent of itertools order)."""
    out = []
    for bits in range(1 << n):
        s = tuple(i for i in range(n) if bits >> i & 1)
        if low <= len(s) <= high:
            out.append(s)
    return out


def definition(n: int, masked) -> np.ndarray:
    """The member's attention read off the definition, pair by pair."""
    S = set(masked)
    out = np.zeros((n, n), dtype=bool)
    for q in range(n):
        for k in range(n):
            if q not in S:  # the encoder: visible tokens attend the visible tokens
                out[q, k] = k not in S
            else:  # reconstruct x_q from the visible tokens (and its own [MASK] query)
                out[q, k] = k not in S or k == q
    return out


def expected_io(n: int, masked):
    S = set(masked)
    inputs = tuple(("[MASK]", i) if i in S else (f"x{i}", i) for i in range(n))
    labels = tuple((i,) if i in S else () for i in range(n))
    return inputs, labels


def disjoint_union(tasks):
    """The tasks side by side, block-diagonal mask: what the merge must be when no node is shared."""
    inputs, labels, sizes = [], [], []
    for t in tasks:
        inputs += list(t.inputs)
        labels += [list(ls) or None for ls in t.labels]
        sizes.append(t.size)
    total = sum(sizes)
    mask = np.zeros((total, total), dtype=bool)
    start = 0
    for t in tasks:
        mask[start:start + t.size, start:start + t.size] = t.mask
        start += t.size
    return make_task(tasks[0].tokens, inputs, labels, mask, name="union")


# --------------------------------------------------------------------------- members


@pytest.mark.parametrize("n", range(2, 6))
def test_mae_members_follow_the_definition(n):
    for s in subsets(n, 1, n - 1):
        t = build_task(f"mae:n={n},masked={'+'.join(map(str, s))}")
        assert np.array_equal(t.mask, definition(n, s)), s
        assert (t.inputs, t.labels) == expected_io(n, s)
        for q in range(n):  # no position attends another [MASK]
            for k in s:
                assert not t.mask[q, k] or q == k


@pytest.mark.parametrize("n", SMALL)
def test_masked_diffusion_members_follow_the_definition(n):
    for s in subsets(n, 1, n):
        t = build_task(f"masked_diffusion:n={n},masked={'+'.join(map(str, s))}")
        assert np.array_equal(t.mask, definition(n, s)), s
        assert (t.inputs, t.labels) == expected_io(n, s)


@pytest.mark.parametrize("h,w", [(1, 2), (2, 2), (2, 3), (3, 1)])
def test_mae2d_members_are_row_major_patches(h, w):
    n = h * w
    for s in subsets(n, 1, min(2, n - 1)):
        t = build_task(f"mae2d:rows={h},cols={w},masked={'+'.join(map(str, s))}")
        assert np.array_equal(t.mask, definition(n, s))
        assert (t.inputs, t.labels) == expected_io(n, s)
        assert t.names == tuple(f"P{p // w}_{p % w}" for p in range(n))
        one_d = build_task(f"mae:n={n},masked={'+'.join(map(str, s))}")
        assert isomorphic(t, one_d)


@pytest.mark.parametrize("spec,fragment", [
    ("mae:n=3,masked=0+1+2", "at least one must stay visible"),
    ("mae:n=1,masked=0", "n must be at least 2"),
    ("mae:n=3,masked=1+1", "given twice"),
    ("mae:n=3,masked=3", "out of range"),
    ("mae2d:rows=1,cols=1,masked=0", "at least 2 patches"),
    ("masked_diffusion:n=0,masked=0", "positive"),
])
def test_bad_members_are_one_line_input_errors(spec, fragment):
    with pytest.raises(InputError) as err:
        build_task(spec)
    assert fragment in str(err.value) and "\n" not in str(err.value)


# --------------------------------------------------------------------------- families


@pytest.mark.parametrize("n", range(2, 6))
def test_families_enumerate_every_masked_set(n):
    got = [tuple(i for i, (sym, _) in enumerate(t.inputs) if sym == "[MASK]") for t in build_family(f"mae:n={n}")]
    assert sorted(got) == sorted(subsets(n, 1, n - 1)) and len(got) == 2 ** n - 2 == len(set(got))
    got = [tuple(i for i, (sym, _) in enumerate(t.inputs) if sym == "[MASK]")
           for t in build_family(f"masked_diffusion:n={n}")]
    assert sorted(got) == sorted(subsets(n, 1, n)) and len(got) == 2 ** n - 1
    for m in range(1, n):
        got = [t.supervised for t in build_family(f"mae:n={n},count={m}")]
        assert sorted(got) == sorted(subsets(n, m, m)) and len(got) == comb(n, m)
    assert [t.supervised for t in build_family(f"masked_diffusion:n={n},count={n}")] == [tuple(range(n))]
    assert len(build_family(f"mae:n={n},masked=0")) == 1


@pytest.mark.parametrize("spec,fragment", [
    ("mae:n=4,masked=1,count=1", "not both"),
    ("mae:n=4,count=4", "count = 4 is out of range"),
    ("masked_diffusion:n=4,count=5", "count = 5 is out of range"),
    ("mae:n=4,count=-1", "non-negative"),
    ("mae:n=13", "8,190 tasks"),
    ("masked_diffusion:n=13", "8,191 tasks"),
    ("mae:n=16,count=8", "12,870 tasks"),
    ("mae2d:rows=4,cols=4", "65,534 tasks"),
])
def test_bad_families_are_one_line_input_errors(spec, fragment):
    with pytest.raises(InputError) as err:
        build_family(spec)
    text = str(err.value)
    assert fragment in text and "\n" not in text
    if "tasks" in fragment:
        assert "4,096" in text and ("count=" in text or "masked=" in text)


def test_the_largest_family_allowed_is_built():
    assert len(build_family("mae:n=12")) == 4094  # just under the guard
    assert len(build_family("mae:n=14,count=2")) == comb(14, 2)


# --------------------------------------------------------------------------- merges and layouts


@pytest.mark.parametrize("n", SMALL)
def test_one_set_merge_is_the_masked_context_layout(n):
    for s in subsets(n, 1, n):
        text = "+".join(map(str, s))
        family = build_family(f"masked_diffusion:n={n},masked={text}")
        merged = family_to_merged_task(family).task
        layout = build_task(f"masked_context:n={n},masked={text}")
        assert np.array_equal(layout.mask, definition(n, s))
        assert (layout.inputs, layout.labels) == expected_io(n, s)
        assert isomorphic(merged, layout)
        published = build_task(f"mlm:n={n},masked={text}")
        assert isomorphic(published, layout) == (len(s) == n == 1)  # bidirectional differs unless trivial
        if len(s) < n:
            mae = build_task(f"mae_published:n={n},masked={text}")
            assert isomorphic(mae, layout) == (len(s) == 1)  # one mask token: MAE's decoder row is ours


def test_isomorphic_is_not_fooled_by_equal_counts():
    """A layout with the same positions and pairs but a different order is told apart (the check can fail)."""
    a = build_task("masked_context:n=4,masked=1+2")
    flipped = a.mask.copy()
    flipped[1, 2], flipped[1, 0] = True, False  # masked row 1 reads [MASK] 2 instead of x0: same pair count
    b = make_task(4, a.inputs, [list(x) or None for x in a.labels], flipped)
    assert int(b.mask.sum()) == int(a.mask.sum()) and not isomorphic(a, b)


@pytest.mark.parametrize("spec,every", [("mae:n={n}", False), ("masked_diffusion:n={n}", True),
                                        ("mae:n={n},count=1", False), ("masked_diffusion:n={n},count=2", True)])
@pytest.mark.parametrize("n", range(2, 7))
def test_merge_over_several_sets_is_the_disjoint_union(spec, every, n):
    if "count=2" in spec and n < 2:
        pytest.skip("no set of 2 tokens")
    family = build_family(spec.format(n=n))
    merged = family_to_merged_task(family)
    sets = [t.supervised for t in family]
    assert merged.task.size == sum(t.size for t in family) == n * len(sets)
    assert merged.nodes == sum(len(s) + (len(s) < n) for s in sets)  # each set: its [MASK]s and its visible class
    assert merged.copies == ()
    assert isomorphic(merged.task, disjoint_union(family))
    if spec == "mae:n={n}":
        assert merged.task.size == n * (2 ** n - 2)
    assert find_leaks(merged.task).leak_free


def test_mae2d_merge_is_the_1d_merge_on_row_major_patches():
    a = family_to_merged_task(build_family("mae2d:rows=2,cols=2")).task
    b = family_to_merged_task(build_family("mae:n=4")).task
    assert isomorphic(a, b) and a.size == 4 * 14


@pytest.mark.parametrize("n", SMALL)
def test_layouts_are_dense_leak_free_and_count_their_pairs(n):
    for s in subsets(n, 1, n):
        text, m, v = "+".join(map(str, s)), len(s), n - len(s)
        layout = build_task(f"masked_context:n={n},masked={text}").mask
        closure = layout.astype(int)
        assert np.all(np.diag(layout)) and np.array_equal((closure @ closure) > 0, layout)  # transitive
        assert find_leaks(build_task(f"masked_context:n={n},masked={text}")).leak_free
        assert int(layout.sum()) == n * v + m
        bidirectional = build_task(f"mlm:n={n},masked={text}")
        assert find_leaks(bidirectional).leak_free
        assert int(bidirectional.mask.sum()) - int(layout.sum()) == m * (m - 1) + v * m
        if v:
            mae = build_task(f"mae_published:n={n},masked={text}")
            assert find_leaks(mae).leak_free
            assert int(mae.mask.sum()) - int(layout.sum()) == m * (m - 1)
            expected = np.array([[(k not in s) or (q in s) for k in range(n)] for q in range(n)])
            assert np.array_equal(mae.mask, expected)


def test_recipes_relate_family_layout_and_published():
    r = recipe_of("mae")
    assert r.layout({"n": 4, "masked": (1, 3), "count": 0}) == "masked_context:n=4,masked=1+3"
    assert r.layout({"n": 4, "masked": (), "count": 0}) is None
    assert r.layout({"n": 4, "masked": (), "count": 2}) is None
    assert r.symbolic({"n": 4}) == "masked_context" and r.assume == ("masked=any",)
    assert r.flex_args({"n": 4, "masked": (1, 3), "count": 0}) == "masked=[0, 1, 0, 1]"
    assert recipe_of("mae2d").layout({"rows": 2, "cols": 2, "masked": (3,), "count": 0}) == "masked_context:n=4,masked=3"
    md = recipe_of("masked_diffusion")
    assert md.layout({"n": 3, "masked": (), "count": 3}) == "masked_context:n=3,masked=0+1+2"
    assert md.layout({"n": 1, "masked": (), "count": 0}) == "masked_context:n=1,masked=0"
    assert md.published[0].task({"n": 3, "masked": (2,), "count": 0}) == "mlm:n=3,masked=2"


@pytest.mark.parametrize("family,values", [("mae", {"n": 4, "masked": (1, 3), "count": 0}),
                                           ("mae", {"n": 3, "masked": (2,), "count": 0}),
                                           ("masked_diffusion", {"n": 3, "masked": (0, 1, 2), "count": 0})])
def test_derive_at_one_set(family, values):
    spec = f"{family}:n={values['n']},masked={'+'.join(map(str, values['masked']))}"
    d = derive(build_family(spec), spec, recipe_of(family), values)
    n, m = values["n"], len(values["masked"])
    assert d.layout_same and d.leaks.leak_free and d.served.consistent
    assert d.task.size == n and int(d.task.mask.sum()) == n * (n - m) + m
    (c,) = d.comparisons
    assert c.leaks.leak_free and c.positions == n
    extra = m * (m - 1) + (0 if family == "mae" else (n - m) * m)
    assert c.pairs - int(d.task.mask.sum()) == extra
    # a published design with mask-to-mask pairs computes other [MASK] states: it does not serve the family
    assert c.same == (extra == 0) and c.serves.consistent == (extra == 0)


# --------------------------------------------------------------------------- minimality


@pytest.mark.parametrize("spec", ["mae:n=3", "masked_diffusion:n=3", "mae:n=4", "mae:n=4,count=1",
                                  "masked_diffusion:n=4,count=1"])
def test_merge_is_minimum_by_the_quotient_search(spec):
    from hasse.solvers.derive_minimum import check_minimum

    (check,) = check_minimum(build_family(spec), methods=("exhaustive",), timeout=30)
    assert check.verdict == "proved", check.why


@pytest.mark.parametrize("spec", ["mae:n=2", "masked_diffusion:n=2", "mae:n=3,count=1", "mae:n=3,count=2",
                                  "mae:n=4,count=1", "masked_diffusion:n=4,count=1"])
def test_merge_is_minimum_by_z3(spec):
    """Z3 (merge_within unsat at one node fewer) answers up to ~10 nodes here; 15 (mae:n=3) it does not in 60 s."""
    from hasse.solvers.derive_minimum import check_minimum

    (check,) = check_minimum(build_family(spec), methods=("z3",), timeout=30)
    assert check.verdict == "proved", check.why


# --------------------------------------------------------------------------- symbolic: every n


def _flags(n, s):
    return [1 if i in s else 0 for i in range(n)]


def test_symbolic_layouts_proved_leak_free_for_every_n():
    from hasse.solvers.symbolic.claims import PROVED, prove_leak_free
    from hasse.solvers.symbolic.tasks import symbolic_task

    for name in ("masked_context", "mae_published"):
        task = symbolic_task(name)
        assert not z3.is_int_value(task.n) and [ix.name for ix in task.mask.indexes] == ["masked"]
        v = prove_leak_free(task)
        assert v.verdict == PROVED, v.reason
        assert "2^31" in v.statement and "every value of masked" in v.statement
        assert v.recheck.startswith("confirmed"), v.recheck
    v = prove_leak_free(symbolic_task("masked_context:n=4,masked=1+3"))
    assert v.verdict == PROVED and v.recheck.startswith("confirmed"), v.recheck


@pytest.mark.parametrize("name,rule", [("masked_context", lambda q, k, s: k not in s or q == k),
                                       ("mae_published", lambda q, k, s: k not in s or q in s)])
def test_symbolic_formula_equals_the_rule_at_every_small_set(name, rule):
    from hasse.solvers.symbolic.catalog.indexed import fix_index
    from hasse.solvers.symbolic.tasks import symbolic_task

    task = symbolic_task(name)
    for n in range(2, 6):
        for s in subsets(n, 1, n - 1):
            got = fix_index(task.mask, masked=_flags(n, s)).concrete(n)
            assert np.array_equal(got, np.array([[rule(q, k, s) for k in range(n)] for q in range(n)])), (n, s)
            fixed = symbolic_task(f"{name}:n={n},masked={'+'.join(map(str, s))}").mask.concrete(n)
            assert np.array_equal(fixed, got)


def test_symbolic_holds_and_predicts_match_the_catalogue():
    from hasse.solvers.symbolic.tasks import symbolic_task

    task = symbolic_task("masked_context")
    f = z3.Function("masked", z3.IntSort(), z3.IntSort())
    for n in range(1, 5):
        for s in subsets(n, 1, n):
            concrete = build_task(f"masked_context:n={n},masked={'+'.join(map(str, s))}")
            table = z3.IntVal(0)
            for i in reversed(range(n)):
                table = z3.If(z3.Var(0, z3.IntSort()) == i, z3.IntVal(int(i in s)), table)
            for p in range(n):
                for t in range(n):
                    def at(e):
                        e = z3.substitute(e, (task.n, z3.IntVal(n)))
                        return z3.is_true(z3.simplify(z3.substitute_funs(e, (f, table))))
                    assert at(task.holds(z3.IntVal(p), z3.IntVal(t))) == (t in concrete.sources(p))
                    assert at(task.predicts(z3.IntVal(p), z3.IntVal(t))) == (t in concrete.labels[p])


def _bad_task(**kwargs):
    """masked_context with a planted flaw, and a concrete twin with the same flaw (for the re-check)."""
    from hasse.solvers.symbolic.tasks.derived_masked import _masked_task, default_masked, masked_context_factory

    def concrete(n, **params):
        s = set(params["masked"] if params.get("masked") is not None else default_masked(int(n)))  # () = none masked
        n = int(n)  # the layout written here, from its definition: the empty set too (no spec writes it)
        visible = np.array([i not in s for i in range(n)])
        mask = visible[None, :] | np.eye(n, dtype=bool)
        good_inputs = [(f"x{i}", i) if visible[i] else ("[MASK]", i) for i in range(n)]
        inputs = [(f"x{i}", i) for i in range(n)] if kwargs.get("holds_masked") else good_inputs
        labels = list(range(n)) if kwargs.get("label_visible") else [None if visible[i] else i for i in range(n)]
        return make_task(n, inputs, labels, mask, name="bad")

    task = _masked_task("bad_masked_context", "masked_context", {}, masked_context_factory,
                        holds_masked=kwargs.get("holds_masked", False), concrete=concrete)
    if kwargs.get("label_visible"):
        n = task.n
        task.predicts = lambda p, t: z3.And(t >= 0, t < n, t == p)
    return task


@pytest.mark.parametrize("flaw", ["holds_masked", "label_visible"])
def test_planted_leaks_are_refuted(flaw):
    """At every depth the mask's closure, as invariant, fails its condition (3): never proved; the walk search
    (as `prove-mask --search-layers 2`) then finds the real walk, and within one layer it is refuted outright."""
    from hasse.solvers.symbolic.claims import CLAIMS, PROVED, REFUTED, known_invariant, prove_leak_free

    task = _bad_task(**{flaw: True})
    v = prove_leak_free(task)
    assert v.verdict != PROVED and "(3) fails" in v.reason, v.reason
    v = CLAIMS["leak-free"].run(task, invariant=known_invariant(task), search_layers=2)
    assert v.verdict == REFUTED, v.reason
    cx = v.counterexample
    assert (cx["n"], cx["position"], cx["target"]) == (1, 0, 0), cx
    v1 = prove_leak_free(task, layers=1)
    assert v1.verdict == REFUTED, v1.reason
    assert v.recheck.startswith("confirmed") and v1.recheck.startswith("confirmed"), (v.recheck, v1.recheck)


# --------------------------------------------------------------------------- the flex file


def _flex_grid(mask_mod, n):
    torch = pytest.importorskip("torch")
    q = torch.arange(n)[:, None]
    k = torch.arange(n)[None, :]
    return np.asarray(mask_mod(torch.tensor(0), torch.tensor(0), q, k).broadcast_to(n, n).numpy(), dtype=bool)


@pytest.mark.parametrize("n", range(1, 7))
def test_flex_file_equals_the_layout(n):
    torch = pytest.importorskip("torch")
    from hasse.theory.flex import masked_context as flex

    for s in subsets(n, 1, n):
        layout = build_task(f"masked_context:n={n},masked={'+'.join(map(str, s))}").mask
        flags = _flags(n, s)
        assert flex.positions(n, flags) == n
        for given in (flags, tuple(flags), torch.tensor(flags), torch.tensor(flags, dtype=torch.bool)):
            assert np.array_equal(_flex_grid(flex.make_mask_mod(n, masked=given), n), layout), (s, type(given))


def test_flex_file_is_standalone():
    from pathlib import Path

    import ast

    tree = ast.parse((Path(__file__).resolve().parents[1] / "theory" / "flex" / "masked_context.py").read_text())
    assert not [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]  # nothing at import
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module.split(".")[0] for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom) and node.module}
    assert imported == {"torch"}
    assert [node.name for node in tree.body if isinstance(node, ast.FunctionDef)] == ["positions", "make_mask_mod"]


BAD_FLEX = '''
def positions(n, masked=None):
    return n


def make_mask_mod(n, masked):
    def mask_mod(b, h, q_idx, kv_idx):
        return masked[kv_idx] == 0  # forgot the [MASK] query's own key
    return mask_mod
'''


def test_flex_file_proved_equal_to_the_layout_for_every_n(tmp_path):
    from hasse.solvers.symbolic.claim_runs import prove_equivalent
    from hasse.solvers.symbolic.claims import PROVED, REFUTED
    from hasse.solvers.symbolic.resolve import parse_assume

    run = prove_equivalent("theory/flex/masked_context.py:make_mask_mod", "masked_context",
                           assume=parse_assume(["masked=any"]))
    assert run.verdict.verdict == PROVED, run.verdict.reason
    bad = tmp_path / "bad_flex.py"
    bad.write_text(BAD_FLEX)
    run = prove_equivalent(f"{bad}:make_mask_mod", "masked_context", assume=parse_assume(["masked=any"]))
    assert run.verdict.verdict == REFUTED, run.verdict.reason


@pytest.mark.parametrize("spec,fragment", [("masked_context:masked=1", "needs n= too"),
                                           ("mae_published:n=3,masked=0+1+2", "at least one must stay visible"),
                                           ("masked_context:n=3,masked=3", "out of range"),
                                           ("mae_published:n=1", "no value satisfies")])
def test_symbolic_specs_refused_in_one_line(spec, fragment):
    from hasse.solvers.symbolic.tasks import symbolic_task

    with pytest.raises(InputError) as err:
        symbolic_task(spec)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_symbolic_layout_at_one_n_for_every_set():
    from hasse.solvers.symbolic.claims import PROVED, prove_leak_free
    from hasse.solvers.symbolic.tasks import symbolic_task

    v = prove_leak_free(symbolic_task("masked_context:n=4"))
    assert v.verdict == PROVED and "at n = 4" in v.statement and v.recheck.startswith("confirmed"), v

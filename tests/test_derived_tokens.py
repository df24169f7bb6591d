"""Multi-token prediction with registers and BD3-LM with several block sizes (issue 25).

Every comparison is against an independent reading written here (the families' definitions
written position by position, MuToR's finetune.py index arithmetic, counts by formula), never
against the modules' own helpers; each check has a planted variant that must fail it.
"""

from __future__ import annotations

import importlib.util
import itertools
import pathlib

import numpy as np
import pytest
import z3

from hasse.theory.catalog import build_family, build_task
from hasse.theory.errors import InputError
from hasse.theory.leak import find_leaks
from hasse.theory.masks.block_mixture import segments
from hasse.theory.masks.mtp_registers import require_mtp
from hasse.theory.merge import family_to_merged_task
from hasse.theory.task import make_task

ROOT = pathlib.Path(__file__).resolve().parents[1]


def plus(values) -> str:
    return "+".join(str(v) for v in values)


def isomorphic(a, b) -> bool:
    from hasse.theory.derive import isomorphic as iso

    return iso(a, b)


def same_task(task, inputs, labels, mask) -> None:
    assert task.inputs == tuple(inputs), task.name
    assert task.labels == tuple(tuple(ls) for ls in labels), task.name
    assert np.array_equal(task.mask, np.asarray(mask, dtype=bool)), task.name


# --------------------------------------------------------------------------- independent readings


def mtp_reference(n, i, d):
    """Member (i, d) by its definition: positions as (input, label, what it reads)."""
    pos = [((f"x{j}", j), [i + 1] if d == 1 and j == i else [], set(range(j + 1))) for j in range(i + 1)]
    if d >= 2:
        pos.append((("[MASK]", i + d - 1), [i + d], set(range(i + 2))))
    return [p[0] for p in pos], [p[1] for p in pos], [[kv in p[2] for kv in range(len(pos))] for p in pos]


def mtp_layout_reference(n, k):
    """The derived layout by its words: content x_0..x_{n-2}, then for d = 2..k the registers r_{i,d}."""
    rows = [(("content", j), (f"x{j}", j), [j + 1]) for j in range(n - 1)]
    rows += [(("register", i, d), ("[MASK]", i + d - 1), [i + d]) for d in range(2, k + 1) for i in range(n - d)]

    def reads(a, b):
        if a == b:
            return True
        if b[0] != "content":
            return False
        return b[1] <= a[1]  # content j reads content 0..j; a register (i, d) reads content 0..i

    mask = [[reads(a[0], b[0]) for b in rows] for a in rows]
    return [r[1] for r in rows], [r[2] for r in rows], mask


def block_member_reference(n, context, size, b):
    c = b * size
    clean = [(f"x{u}", u) for u in range(c)]
    queries = [("[MASK]", t) for t in range(c, c + size)]

    def reads(p, kv):
        if p >= c:  # a query reads every clean token and every query
            return True
        if kv >= c:
            return False
        return kv // size <= p // size if context == "block" else kv <= p

    total = c + size
    return clean + queries, [[]] * c + [[t] for t in range(c, c + size)], \
        [[reads(p, kv) for kv in range(total)] for p in range(total)]


def block_layout_size(n, blocks, context):
    """Positions of the derived layout, counted both ways (the finding): per size, or one shared stream."""
    if context == "block":
        return sum(2 * n - size for size in blocks)
    return n - min(blocks) + len(blocks) * n


def mutor_from_finetune(n, d):
    """MuToR's training sequence for one offset d, by finetune.py's index arithmetic (process_input_and_labels_mutor).

    A question of one token (x_0) and the answer x_1 … x_{n-1}; the sequence is the question then
    [reg, a_j] for each answer token; register j sits at Q + 2j, its target at reg + 1 + 2·offset,
    its position id Q + j + offset - 1 (offset = d - 1); the mask: causal, then no register reads
    another register (diagonal kept) and no regular token reads a register. Regular tokens get the
    next regular token as label (pretraining NTP; the question's SFT masking is left out). Returns
    the positions' (input, label) and the mask, and the indices of the positions with no label.
    """
    q_len, offset = 1, d - 1
    answer = list(range(1, n))
    seq = [("x", 0)] + [item for a in answer for item in (("reg", None), ("x", a))]
    size = len(seq)
    reg_indices = list(range(q_len, q_len + 2 * len(answer), 2))
    real = [p for p in range(size) if p not in reg_indices]
    labels = [None] * size
    inputs = [None] * size
    for rank, p in enumerate(real):
        token = seq[p][1]
        inputs[p] = (f"x{token}", rank)  # real position ids: arange over the real tokens
        labels[p] = token + 1 if rank + 1 < len(real) else None
    for j, r in enumerate(reg_indices):
        target = r + 1 + 2 * offset
        inputs[r] = ("[MASK]", q_len + j + offset - 1)
        labels[r] = seq[target][1] if target < size else None
    allowed = np.tril(np.ones((size, size), dtype=bool))
    for a in reg_indices:
        for b in reg_indices:
            if a != b:
                allowed[a, b] = False
    for a in real:
        allowed[a, reg_indices] = False
    return inputs, labels, allowed, [p for p in range(size) if labels[p] is None]


# --------------------------------------------------------------------------- members and families


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_mtp_members_match_the_definition(n):
    for k in range(1, n):
        members = build_family(f"mtp:n={n},k={k}")
        assert len(members) == sum(n - d for d in range(1, k + 1))
        seen = set()
        for d in range(1, k + 1):
            for i in range(n - d):
                task = build_task(f"mtp:n={n},k={k},anchor={i},d={d}")
                same_task(task, *mtp_reference(n, i, d))
                seen.add(task.name)
        assert seen == {t.name for t in members}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_block_mixture_members_match_the_definition(n):
    sizes = [s for s in range(1, n + 1) if n % s == 0]
    for blocks in [c for r in (1, 2) for c in itertools.permutations(sizes, r)]:
        for context in ("block", "causal"):
            spec = f"n={n},blocks={plus(blocks)},context={context}"
            members = build_family(f"block_mixture:{spec}")
            assert len(members) == sum(n // s for s in blocks)
            for size in blocks:
                for b in range(n // size):
                    same_task(build_task(f"block_mixture:{spec},block={size},b={b}"),
                              *block_member_reference(n, context, size, b))


@pytest.mark.parametrize("spec,needle", [
    ("mtp:n=4,k=4,anchor=0,d=1", "n must be at least 5"),
    ("mtp:n=4,k=2,anchor=2,d=2", "anchor = 2 is out of range"),
    ("mtp:n=4,k=2,anchor=0,d=3", "d = 3 is out of range"),
    ("mtp:n=4,k=0,anchor=0,d=1", "k must be a positive integer"),
    ("block_mixture:n=4,blocks=3,block=3,b=0", "does not divide n = 4"),
    ("block_mixture:n=4,blocks=2+2,block=2,b=0", "given twice"),
    ("block_mixture:n=4,blocks=2,block=1,b=0", "not one of the block sizes"),
    ("block_mixture:n=4,blocks=2,block=2,b=2", "b = 2 is out of range"),
    ("block_mixture:n=4,blocks=2,context=left,block=2,b=0", "context"),
])
def test_bad_parameters_are_one_line_input_errors(spec, needle):
    with pytest.raises(InputError) as info:
        build_task(spec)
    assert needle in str(info.value) and "\n" not in str(info.value), str(info.value)


# --------------------------------------------------------------------------- the derived layouts


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_mtp_layout_is_its_definition_and_the_merge(n):
    for k in range(1, n):
        layout = build_task(f"mtp_registers:n={n},k={k}")
        same_task(layout, *mtp_layout_reference(n, k))
        assert layout.size == (n - 1) + sum(n - d for d in range(2, k + 1))
        merged = family_to_merged_task(build_family(f"mtp:n={n},k={k}"))
        assert merged.task.size == merged.nodes == layout.size and not merged.copies
        assert isomorphic(merged.task, layout), (n, k)
        assert find_leaks(layout).leak_free


def test_a_layout_with_other_register_position_ids_is_not_the_merge():
    """The isomorphism reads position ids: registers at i + d (the target's id) are another design."""
    layout = build_task("mtp_registers:n=5,k=3")
    moved = [(s, p + 1) if s == "[MASK]" else (s, p) for s, p in layout.inputs]
    planted = make_task(5, moved, [list(ls) for ls in layout.labels], layout.mask)
    merged = family_to_merged_task(build_family("mtp:n=5,k=3")).task
    assert isomorphic(merged, layout) and not isomorphic(merged, planted)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6, 8])
def test_block_mixture_layout_is_the_merge_and_the_counts(n):
    sizes = [s for s in range(1, n + 1) if n % s == 0]
    for blocks in [c for r in (1, 2, 3) for c in itertools.permutations(sizes, r)][:40]:
        for context in ("block", "causal"):
            spec = f"n={n},blocks={plus(blocks)},context={context}"
            layout = build_task(f"block_mixture_merged:{spec}")
            merged = family_to_merged_task(build_family(f"block_mixture:{spec}"))
            assert layout.size == merged.task.size == block_layout_size(n, blocks, context), spec
            assert isomorphic(merged.task, layout), spec
            assert find_leaks(layout).leak_free
            # every query sits on its target's position id and predicts it
            queries = [p for p, (s, _) in enumerate(layout.inputs) if s == "[MASK]"]
            assert len(queries) == len(blocks) * n
            assert all(layout.labels[p] == (layout.inputs[p][1],) for p in queries)


def test_the_causal_context_shares_one_clean_stream():
    """The finding: with a causal clean stream the sizes read the same tokens; block-causal shares nothing."""
    for n, blocks in ((4, (1, 2)), (8, (2, 4)), (6, (1, 2, 3)), (8, (1, 2, 4, 8))):
        causal = family_to_merged_task(build_family(f"block_mixture:n={n},blocks={plus(blocks)},context=causal"))
        block = family_to_merged_task(build_family(f"block_mixture:n={n},blocks={plus(blocks)},context=block"))
        clean = lambda t: sum(1 for s, _ in t.inputs if s != "[MASK]")  # noqa: E731
        assert clean(causal.task) == n - min(blocks)
        assert clean(block.task) == sum(n - s for s in blocks)
        assert block.nodes == sum(n // s - 1 + n // s for s in blocks)  # one node per clean block and per query block
        per_size = [family_to_merged_task(build_family(f"block_mixture:n={n},blocks={s}")).task.size for s in blocks]
        assert block.task.size == sum(per_size)  # nothing shared between sizes


# --------------------------------------------------------------------------- published designs


@pytest.mark.parametrize("n,d", [(3, 2), (4, 2), (5, 2), (5, 3), (6, 4), (7, 3)])
def test_mutor_is_finetune_py_without_its_unsupervised_positions(n, d):
    inputs, labels, allowed, unsupervised = mutor_from_finetune(n, d)
    assert len(unsupervised) == d  # x_{n-1} and the d - 1 registers whose target is past the end
    for p in unsupervised:
        assert not allowed[:, p].any() or (allowed[:, p].sum() == 1 and allowed[p, p])  # read by nobody else
    keep = [p for p in range(len(inputs)) if p not in unsupervised]
    mine = build_task(f"mutor:n={n},k={d},dmin={d}")
    assert mine.inputs == tuple(inputs[p] for p in keep)
    assert mine.labels == tuple((labels[p],) for p in keep)
    assert np.array_equal(mine.mask, allowed[np.ix_(keep, keep)])


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_mutor_reproduces_the_derived_layout_and_its_default_adds_d1_registers(n):
    for k in range(2, n):
        merged = family_to_merged_task(build_family(f"mtp:n={n},k={k}")).task
        assert isomorphic(build_task(f"mutor:n={n},k={k},dmin=2"), merged)
        default = build_task(f"mutor:n={n},k={k}")
        assert not isomorphic(default, merged)
        assert default.size == merged.size + (n - 1) and find_leaks(default).leak_free
        # planted: r_{0,2} also reads the next regular token x_1 (no leak: x_1 holds x_1) or its target x_2 (a leak)
        for extra, leaks in (("x1", False), ("x2", True)):
            if extra not in default.names:
                continue
            planted = default.mask.copy()
            planted[default.names.index("r0_2"), default.names.index(extra)] = True
            bad = make_task(n, default.inputs, [list(ls) for ls in default.labels], planted)
            assert find_leaks(bad).leak_free is not leaks, (n, k, extra)


def test_k_heads_are_leak_free_but_no_merge_of_the_register_family():
    from hasse.theory.consistency import check_consistency

    for n, k in ((4, 2), (5, 3), (6, 2)):
        heads = build_task(f"mtp_heads:n={n},k={k}")
        assert heads.size == n and find_leaks(heads).leak_free
        assert heads.labels[0] == tuple(range(1, k + 1))
        members = build_family(f"mtp:n={n},k={k}")
        report = check_consistency(heads, members)
        assert not report.consistent  # every register member (d >= 2) has no equivalent node
        assert check_consistency(build_task(f"mtp_registers:n={n},k={k}"), members).consistent


def test_bd3lm_batch_is_bd3lm_per_size_and_carries_the_unread_last_block():
    for n, blocks in ((4, (1, 2)), (8, (2, 4)), (6, (3,))):
        batch = build_task(f"bd3lm_batch:n={n},blocks={plus(blocks)}")
        start = 0
        for size in blocks:
            one = build_task(f"bd3lm:n={n},block={size}")
            part = slice(start, start + 2 * n)
            assert batch.inputs[part] == one.inputs and batch.labels[part] == one.labels
            assert np.array_equal(batch.mask[part, part], one.mask)
            assert not batch.mask[part, :start].any() and not batch.mask[part, start + 2 * n:].any()
            start += 2 * n
        assert find_leaks(batch).leak_free
        merged = family_to_merged_task(build_family(f"block_mixture:n={n},blocks={plus(blocks)}")).task
        assert batch.size - merged.size == sum(blocks)  # the last clean block of each size, never read
        assert isomorphic(batch, merged) is False


# --------------------------------------------------------------------------- minimality


@pytest.mark.parametrize("family", ["mtp:n=4,k=2", "mtp:n=5,k=3", "block_mixture:n=4,blocks=1+2,context=block",
                                    "block_mixture:n=4,blocks=1+2,context=causal"])
def test_the_merge_is_minimum_by_quotient_search_and_z3(family):
    from hasse.solvers.derive_minimum import check_minimum

    checks = check_minimum(build_family(family), timeout=60)
    merged = family_to_merged_task(build_family(family))
    assert [(c.method, c.verdict) for c in checks] == [("exhaustive", "proved"), ("z3", "proved")], checks
    assert all(c.nodes == merged.nodes for c in checks)


# --------------------------------------------------------------------------- every n (symbolic)

MTP_SPECS = ["mtp_registers:k=1", "mtp_registers:k=2", "mtp_registers:k=3", "mtp_registers:k=5"]
BLOCK_SPECS = ["block_mixture_merged:blocks=2", "block_mixture_merged:blocks=2+4",
               "block_mixture_merged:blocks=1+2+4,context=causal", "block_mixture_merged:blocks=3+2,context=causal",
               "block_mixture_merged:blocks=6+1+3"]


def _truth(task, expr, n):
    from hasse.solvers.symbolic.tasks import evaluate

    value = evaluate(task, expr, n)
    assert z3.is_true(value) or z3.is_false(value), (task.name, n, value)
    return z3.is_true(value)


def assert_symbolic_is_concrete(task, n):
    """holds, predicts and the mask of the symbolic task at n, against the catalogue's task (every entry)."""
    from hasse.solvers.symbolic.tasks import evaluate

    concrete = task.concrete(n)
    assert task.mask.size_at(n) == concrete.size
    fixed = evaluate(task, task.mask.formula, n)
    for p in range(concrete.size):
        for t in range(-1, n + 1):
            P, T = z3.IntVal(p), z3.IntVal(t)
            assert _truth(task, task.holds(P, T), n) == (t in concrete.sources(p)), (task.name, n, p, t)
            assert _truth(task, task.predicts(P, T), n) == (t in concrete.labels[p]), (task.name, n, p, t)
        row = z3.substitute(fixed, (task.mask.q, z3.IntVal(p)))
        got = [z3.is_true(z3.simplify(z3.substitute(row, (task.mask.k, z3.IntVal(kv))))) for kv in range(concrete.size)]
        assert got == concrete.mask[p].tolist(), (task.name, n, p)


@pytest.mark.parametrize("spec", MTP_SPECS + BLOCK_SPECS)
def test_symbolic_layout_equals_the_catalogue_task(spec):
    from hasse.solvers.symbolic.tasks import symbolic_task

    task = symbolic_task(spec)
    blocks = [int(b) for b in spec.split("blocks=")[1].split(",")[0].split("+")] if "blocks=" in spec else []
    k = int(spec.split("k=")[1]) if "k=" in spec else 0
    step = int(np.lcm.reduce(blocks)) if blocks else 1
    ns = [n for n in range(max(k + 1, step), 13, step)][:3]
    assert ns
    for n in ns:
        assert_symbolic_is_concrete(task, n)


@pytest.mark.parametrize("spec", MTP_SPECS + BLOCK_SPECS)
def test_symbolic_layout_is_leak_free_for_every_n(spec):
    from hasse.solvers.symbolic.claims import known_invariant, prove_leak_free
    from hasse.solvers.symbolic.tasks import symbolic_task

    task = symbolic_task(spec)
    assert z3.is_int(task.n) and not z3.is_int_value(task.n)  # n is left symbolic
    verdict = prove_leak_free(task, invariant=known_invariant(task))
    assert verdict.verdict == "proved", (spec, verdict.reason)
    assert verdict.recheck.startswith("confirmed"), verdict.recheck
    assert verdict.statement.startswith("for all"), verdict.statement


def test_the_cli_proves_a_layout_for_every_n(capsys):
    from cli_run import run

    code, out, err = run(capsys, "prove-mask", "mtp_registers:k=3", "--claim", "leak-free")
    assert code == 0 and "PROVED" in out and "for all 4 <= n <= 2^31" in out, out + err


def _leaky_mtp(n, k):
    """make_mtp_registers with one flaw: a register also reads the content up to its target i + d."""
    n, k = require_mtp(n, k)
    content = n - 1

    def rule(q, key):
        offset = q * 0
        d_of = q * 0 + 1
        for d in range(2, k + 1):
            start = (d - 1) * n - (d - 1) * d // 2
            offset = np.where(q >= start, start, offset)
            d_of = np.where(q >= start, d, d_of)
        top = q - offset
        flaw = (q >= content) & (key < content) & (key <= top + d_of)
        return ((key < content) & (key <= top)) | (key == q) | flaw

    return rule


def _next_token_mtp(n, k):
    """A register also reads x_{i+1} (the token after its anchor): not a leak for d >= 2, only a change."""
    n, k = require_mtp(n, k)
    content = n - 1

    def rule(q, key):
        offset = q * 0
        for d in range(2, k + 1):
            start = (d - 1) * n - (d - 1) * d // 2
            offset = np.where(q >= start, start, offset)
        top = q - offset
        extra = (q >= content) & (key < content) & (key <= top + 1)
        return ((key < content) & (key <= top)) | (key == q) | extra

    return rule


def _leaky_mixture(n, blocks, context="block"):
    """make_block_mixture with one flaw: a query also reads its own block's clean tokens."""
    parts = segments(n, blocks, context)
    clean_of = {s: (st, ln) for kind, s, st, ln in parts if kind == "clean"}
    if context == "causal":
        clean_of = {s: parts[0][2:] for s in blocks}

    def rule(q, key):
        allowed = q < 0
        for kind, size, start, length in parts:
            q_in = (q >= start) & (q < start + length)
            u = q - start
            if kind == "clean":
                v = key - start
                k_in = (key >= start) & (key < start + length)
                reads = (v <= u) if context == "causal" else (v // size <= u // size)
                allowed = allowed | (q_in & k_in & reads)
            else:
                c_start, c_length = clean_of[size]
                k_clean = (key >= c_start) & (key < c_start + c_length)
                k_query = (key >= start) & (key < start + length)
                own = k_clean & (key - c_start < (u // size + 1) * size)  # the flaw: + 1
                same = k_query & ((key - start) // size == u // size)
                allowed = allowed | (q_in & (own | same))
        return allowed

    return rule


def _planted(monkeypatch, layout, factory):
    """Both the symbolic builder and the catalogue task (its re-check) use ``factory``."""
    import hasse.solvers.symbolic.tasks.derived_tokens as symbolic
    import hasse.theory.tasks.block_mixture as blocks_module
    import hasse.theory.tasks.mtp as mtp_module

    name = "make_mtp_registers" if layout == "mtp" else "make_block_mixture"
    monkeypatch.setattr(symbolic, name, factory)
    monkeypatch.setattr(mtp_module if layout == "mtp" else blocks_module, name, factory)


def _smallest_leaking_n(spec, ns):
    """The concrete search: the first n at which the (planted) catalogue task leaks."""
    name, rest = spec.split(":")
    return next(n for n in ns if not find_leaks(build_task(f"{name}:n={n},{rest}")).leak_free)


@pytest.mark.parametrize("spec", ["mtp_registers:k=2", "mtp_registers:k=3", "mtp_registers:k=4"])
def test_a_register_reading_its_target_is_refuted(monkeypatch, spec):
    from hasse.solvers.symbolic.claims import known_invariant, prove_leak_free
    from hasse.solvers.symbolic.tasks import symbolic_task

    _planted(monkeypatch, "mtp", _leaky_mtp)
    k = int(spec.split("k=")[1])
    smallest = _smallest_leaking_n(spec, range(k + 1, 12))
    task = symbolic_task(spec)
    verdict = prove_leak_free(task, layers=1)
    assert verdict.verdict == "refuted", verdict
    assert verdict.counterexample["n"] == smallest, (verdict.counterexample, smallest)
    assert verdict.recheck == "confirmed", verdict.recheck
    assert prove_leak_free(task, invariant=known_invariant(task)).verdict != "proved"


def test_a_register_reading_the_next_token_is_still_leak_free(monkeypatch):
    """The verdict follows the labels, not any change of the mask: x_{i+1} does not hold x_{i+d} for d >= 2."""
    from hasse.solvers.symbolic.claims import known_invariant, prove_leak_free
    from hasse.solvers.symbolic.tasks import symbolic_task

    before = build_task("mtp_registers:n=6,k=3")
    _planted(monkeypatch, "mtp", _next_token_mtp)
    after = build_task("mtp_registers:n=6,k=3")
    assert after.mask.sum() > before.mask.sum() and find_leaks(after).leak_free  # the plant is in, and no leak
    task = symbolic_task("mtp_registers:k=3")
    assert prove_leak_free(task, invariant=known_invariant(task)).verdict == "proved"


@pytest.mark.parametrize("spec,step", [("block_mixture_merged:blocks=2", 2),
                                       ("block_mixture_merged:blocks=1+2,context=causal", 2),
                                       ("block_mixture_merged:blocks=3+1,context=block", 3)])
def test_a_query_reading_its_own_block_is_refuted(monkeypatch, spec, step):
    from hasse.solvers.symbolic.claims import prove_leak_free
    from hasse.solvers.symbolic.tasks import symbolic_task

    _planted(monkeypatch, "blocks", _leaky_mixture)
    smallest = _smallest_leaking_n(spec, range(step, 13, step))
    verdict = prove_leak_free(symbolic_task(spec), layers=1)
    assert verdict.verdict == "refuted", verdict
    assert verdict.counterexample["n"] == smallest, verdict.counterexample
    assert verdict.recheck == "confirmed", verdict.recheck


# --------------------------------------------------------------------------- the FlexAttention files


def _load(name):
    spec = importlib.util.spec_from_file_location(f"flex_{name}", ROOT / "theory" / "flex" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_flex_files_are_standalone():
    for name in ("mtp_registers", "block_mixture"):
        text = (ROOT / "theory" / "flex" / f"{name}.py").read_text()
        assert "hasse" not in text.split('"""', 2)[2] and "import torch" not in text  # no hasse, no torch at import
        module = _load(name)
        assert callable(module.positions) and callable(module.make_mask_mod)


def test_flex_files_equal_the_layouts_on_index_grids():
    torch = pytest.importorskip("torch")
    mtp, mixture = _load("mtp_registers"), _load("block_mixture")

    def grid(mod, size):
        q, kv = torch.arange(size)[:, None], torch.arange(size)[None, :]
        return mod(torch.tensor(0), torch.tensor(0), q, kv).numpy()

    for n in range(2, 8):
        for k in range(1, n):
            layout = build_task(f"mtp_registers:n={n},k={k}")
            assert mtp.positions(n, k) == layout.size
            assert np.array_equal(grid(mtp.make_mask_mod(n, k), layout.size), layout.mask), (n, k)
    for n in (1, 2, 3, 4, 6):
        sizes = [s for s in range(1, n + 1) if n % s == 0]
        for blocks in [c for r in (1, 2, 3) for c in itertools.permutations(sizes, r)]:
            for context in ("block", "causal"):
                layout = build_task(f"block_mixture_merged:n={n},blocks={plus(blocks)},context={context}")
                assert mixture.positions(n, blocks, context) == layout.size
                got = grid(mixture.make_mask_mod(n, blocks, context), layout.size)
                assert np.array_equal(got, layout.mask), (n, blocks, context)


@pytest.mark.parametrize("call,spec", [
    ("make_mask_mod(k=1)", "mtp_registers:k=1"),
    ("make_mask_mod(k=3)", "mtp_registers:k=3"),
    ("make_mask_mod(blocks=(2, 4), context='block')", "block_mixture_merged:blocks=2+4"),
    ("make_mask_mod(blocks=(1, 2, 4), context='causal')", "block_mixture_merged:blocks=1+2+4,context=causal"),
])
def test_hasse_equiv_proves_the_flex_files_for_every_n(capsys, call, spec):
    from cli_run import run

    name = "mtp_registers" if spec.startswith("mtp") else "block_mixture"
    code, out, err = run(capsys, "equiv", f"{ROOT / 'theory' / 'flex' / name}.py:{call}", spec)
    assert code == 0 and "PROVED" in out and "confirmed" in out, out + err


def test_hasse_equiv_refutes_a_planted_flex_file(capsys, tmp_path):
    from cli_run import run

    text = (ROOT / "theory" / "flex" / "mtp_registers.py").read_text()
    planted = text.replace("(kv_idx + start <= q_idx)", "(kv_idx + start <= q_idx + 1)")
    assert planted != text
    path = tmp_path / "planted_mtp.py"
    path.write_text(planted)
    code, out, err = run(capsys, "equiv", f"{path}:make_mask_mod(k=2)", "mtp_registers:k=2")
    assert code == 1 and "REFUTED" in out, out + err


# --------------------------------------------------------------------------- the recipes


@pytest.mark.parametrize("family,values", [
    ("mtp", {"n": 5, "k": 3}),
    ("block_mixture", {"n": 8, "blocks": (2, 4), "context": "block"}),
    ("block_mixture", {"n": 4, "blocks": (1, 2), "context": "causal"}),
])
def test_recipes_name_the_layout_the_proof_the_export_and_the_published_designs(family, values):
    from hasse.theory.derivations import recipe_of
    from hasse.theory.derive import derive

    recipe = recipe_of(family)
    spec = ",".join(f"{k}={plus(v) if isinstance(v, tuple) else v}" for k, v in values.items())
    result = derive(build_family(f"{family}:{spec}"), f"{family}:{spec}", recipe, values)
    assert result.layout_same and result.leaks.leak_free and result.served.consistent
    symbolic = recipe.symbolic(values)
    assert "n=" not in symbolic and symbolic.split(":")[0] == result.layout.split(":")[0]
    assert (ROOT / "theory" / "flex" / f"{recipe.flex}.py").exists()
    module = _load(recipe.flex)
    args = eval(f"dict({recipe.flex_args(values)})")  # the call the export writes
    assert module.positions(values["n"], **args) == result.layout_task.size
    verdicts = {c.spec: (c.same, c.leaks.leak_free, c.serves.consistent) for c in result.comparisons}
    if family == "mtp":
        assert verdicts == {"mutor:n=5,k=3,dmin=2": (True, True, True), "mutor:n=5,k=3,dmin=1": (False, True, True),
                            "mtp_heads:n=5,k=3": (False, True, False)}
    else:
        serves = values["context"] == "block"  # BD3-LM's clean stream is block-causal
        assert list(verdicts.values()) == [(False, True, serves)]

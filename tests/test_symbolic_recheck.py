"""The re-check runs the user's program, not its formula (issue 21, item 3): solvers/symbolic/recheck/, evaluate/.

- evaluate/ against Z3's own simplifier on random terms (integers with Euclidean div/mod,
  bit-vectors), the independent reference;
- the plan: every n <= 64, the constants ± 2, 2^k ± 1;
- planted mis-traces (the traced formula monkeypatched to a wrong one: q and k swapped, a
  formula that differs from the program only from n = 999 on, `//` as truncation) are
  caught as DISAGREES, exit 1 through the CLI; a refutation is re-checked on the program;
- a proof whose program cannot be run is "not re-checked", exit 3.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import z3

from hasse.solvers.symbolic import catalog as symbolic_catalog
from hasse.solvers.symbolic import recheck
from hasse.solvers.symbolic.evaluate import Unevaluable, evaluate, evaluate_partial
from tests.cli_run import run, written

MASKS = '''\
def limited(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx < 1000)


def limited2(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx >= 0) & (999 >= q_idx)


def limited_998(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx < 1000) & (q_idx != 998)


def blocks(b, h, q_idx, kv_idx):
    return (q_idx - 5) // 3 == (kv_idx - 5) // 3
'''


masks = written("masks.py", MASKS)


# ---------------------------------------------------------------- the evaluator against Z3


def _int_term(rng, xs, depth):
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.5:
            return rng.choice(xs)
        return z3.IntVal(rng.choice([0, 1, -1, 2, -3, 7, 2 ** 62, -(2 ** 63), 2 ** 63 - 1, 2 ** 64, 10 ** 20]))
    op = rng.choice("+-*/%ai")
    a = _int_term(rng, xs, depth - 1)
    if op == "a":
        return z3.Abs(a)
    if op == "i":
        return z3.If(_bool_term(rng, xs, depth - 1), a, _int_term(rng, xs, depth - 1))
    b = _int_term(rng, xs, depth - 1)
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b, "%": a % b}[op]


def _bool_term(rng, xs, depth):
    if depth == 0 or rng.random() < 0.2:
        a, b = _int_term(rng, xs, 0), _int_term(rng, xs, 0)
        return rng.choice([a < b, a <= b, a == b])
    op = rng.choice(["and", "or", "not", "cmp", "xor", "imp", "ite", "distinct"])
    if op == "not":
        return z3.Not(_bool_term(rng, xs, depth - 1))
    if op == "cmp":
        a, b = _int_term(rng, xs, depth - 1), _int_term(rng, xs, depth - 1)
        return rng.choice([a < b, a <= b, a == b, a > b, a >= b, a != b])
    if op == "distinct":
        return z3.Distinct(*(_int_term(rng, xs, depth - 1) for _ in range(3)))
    a, b = _bool_term(rng, xs, depth - 1), _bool_term(rng, xs, depth - 1)
    if op == "ite":
        return z3.If(_bool_term(rng, xs, depth - 1), a, b)
    return {"and": z3.And(a, b), "or": z3.Or(a, b), "xor": z3.Xor(a, b), "imp": z3.Implies(a, b)}[op]


def _bv_term(rng, xs, depth, w):
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.5:
            return rng.choice(xs)
        return z3.BitVecVal(rng.choice([0, 1, -1, 3, 2 ** (w - 1), 2 ** w - 1, 5]), w)
    a, b = _bv_term(rng, xs, depth - 1, w), _bv_term(rng, xs, depth - 1, w)
    ops = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "and": lambda: a & b,
           "or": lambda: a | b, "xor": lambda: a ^ b, "not": lambda: ~a, "neg": lambda: -a, "shl": lambda: a << b,
           "lshr": lambda: z3.LShR(a, b), "ashr": lambda: a >> b, "udiv": lambda: z3.UDiv(a, b),
           "urem": lambda: z3.URem(a, b), "sdiv": lambda: a / b, "srem": lambda: z3.SRem(a, b),
           "smod": lambda: a % b, "ite": lambda: z3.If(z3.ULT(a, b), a, b),
           "int": lambda: z3.Int2BV(z3.BV2Int(a) * 3 - z3.BV2Int(b, is_signed=True), w)}
    return ops[rng.choice(sorted(ops))]()


def _reference(expr, subs):
    """Z3's own value of ``expr`` at ``subs`` (None when it does not reduce: a divisor 0)."""
    s = z3.simplify(z3.substitute(expr, *subs))
    if z3.is_true(s) or z3.is_false(s):
        return z3.is_true(s)
    if z3.is_int_value(s) or z3.is_bv_value(s):
        return s.as_long()
    return None


def test_evaluator_matches_z3_on_random_integer_terms():
    rng = random.Random(11)
    x, y = z3.Ints("x y")
    vals = [-5, -2, -1, 0, 1, 3, 8, 2 ** 62, -(2 ** 63)]
    grid = {"x": np.array(vals)[:, None], "y": np.array(vals)[None, :]}
    checked = undefined = 0
    for trial in range(120):
        e = _bool_term(rng, [x, y], 4) if trial % 2 else _int_term(rng, [x, y], 4)
        got, undef = evaluate_partial(e, grid, shape=(len(vals), len(vals)))
        for i, xv in enumerate(vals):
            for j, yv in enumerate(vals):
                want = _reference(e, [(x, z3.IntVal(xv)), (y, z3.IntVal(yv))])
                if undef is not None and undef[i, j]:
                    undefined += 1  # a divisor 0 on every path that decides the value
                    continue
                assert want is not None, (e, xv, yv)
                assert (bool(got[i, j]) if z3.is_bool(e) else int(got[i, j])) == want, (e, xv, yv)
                checked += 1
    assert checked > 5000 and undefined > 0


def test_evaluator_matches_z3_on_random_bitvector_terms():
    rng = random.Random(12)
    for w in (8, 64):
        x, y = z3.BitVecs("x y", w)
        vals = [0, 1, 2, 2 ** (w - 1) - 1, 2 ** (w - 1), 2 ** w - 1, 2 ** w - 3, 7]
        signed = np.array([v - 2 ** w if v >= 2 ** (w - 1) else v for v in vals], dtype=np.int64)
        for trial in range(60):
            e = _bv_term(rng, [x, y], 3, w)
            if trial % 3 == 1:
                e = z3.ULT(e, _bv_term(rng, [x, y], 2, w))
            elif trial % 3 == 2:
                e = z3.Extract(w // 2, 1, e)
            got = evaluate(e, {"x": signed[:, None], "y": signed[None, :]}, shape=(len(vals), len(vals)))
            for i, xv in enumerate(vals):
                for j, yv in enumerate(vals):
                    want = _reference(e, [(x, z3.BitVecVal(xv, w)), (y, z3.BitVecVal(yv, w))])
                    value = bool(got[i, j]) if z3.is_bool(e) else int(got[i, j]) % (1 << e.size())
                    assert value == want, (w, e, xv, yv)


def test_evaluator_keeps_integers_exact_beyond_int64():
    q, k = z3.Ints("q0 k0")
    big = z3.IntVal(2 ** 62)
    pos = np.arange(4)
    got = evaluate(q * big >= k * big, {"q0": pos[:, None], "k0": pos[None, :]})
    assert got.tolist() == (pos[:, None] >= pos[None, :]).tolist()  # Z3 integers never wrap (int64 would)
    with pytest.raises(Unevaluable):
        evaluate(q / (q - q) == 0, {"q0": pos})  # x div 0 is unspecified in Z3: no made-up value


# ---------------------------------------------------------------- the plan


def test_the_plan_covers_small_n_the_constants_and_powers_of_two(tmp_path, masks):
    from hasse.theory.user_code import ARGUMENT

    mask = symbolic_catalog.symbolic_mask_mod(str(masks), "limited", code=ARGUMENT)
    the_plan = recheck.plan([mask], mask.conditions, mask.params)
    ns = {p.n for p in the_plan.grids + the_plan.samples}
    assert set(range(1, 65)) <= ns
    assert set(range(998, 1003)) <= ns  # the constant 1000 ± 2
    assert all({2 ** k - 1, 2 ** k, 2 ** k + 1} <= ns for k in range(7, 21))
    samples = [p for p in the_plan.samples if p.n == 1000]
    assert samples and all(len(p.rows) <= recheck.SAMPLE for p in samples)
    assert {0, 1, 2, 998, 999} <= set(samples[0].rows)  # the ends and the constant's neighbours
    assert "998…1002" in the_plan.words and "2^k ± 1 up to n = 1048577" in the_plan.words


def test_the_plan_keeps_to_the_side_conditions():
    mask = symbolic_catalog.symbolic_mask("block_causal")  # l | n
    the_plan = recheck.plan([mask], mask.conditions, mask.params)
    assert the_plan.grids
    for p in the_plan.grids + the_plan.samples:
        block = dict(p.params)["block"]
        assert block >= 1 and p.n % block == 0, p


# ---------------------------------------------------------------- the program, not the formula


def _plant(monkeypatch, function: str, change):
    """The traced formula of the mask_mod ``function`` replaced by ``change(mask)`` (a planted mis-trace)."""
    real = symbolic_catalog.symbolic_mask_mod

    def planted(path, fn, *args, **kwargs):
        mask = real(path, fn, *args, **kwargs)
        if fn == function:
            mask.formula = change(mask)
        return mask

    monkeypatch.setattr(symbolic_catalog, "symbolic_mask_mod", planted)


def test_a_mistrace_swapping_q_and_k_is_caught_through_the_cli(capsys, monkeypatch, masks):
    code, out, err = run(capsys, "prove-mask", f"{masks}:limited", "--claim", "dense")
    assert code == 0 and "confirmed: the program = the formula" in out, (out, err)
    _plant(monkeypatch, "limited", lambda m: z3.substitute(m.formula, (m.q, m.k), (m.k, m.q)))
    code, out, err = run(capsys, "prove-mask", f"{masks}:limited", "--claim", "dense")
    assert code == 1 and "PROVED" in out, (out, err)  # the (wrong) formula is dense: Z3 proves it
    assert "DISAGREES: the traced formula and the program differ at n = 2, pair (0, 1)" in out, out
    assert "a bug of the kit" in out and "DISAGREE" in err


def test_a_program_that_differs_from_its_formula_only_from_n_999_is_caught(capsys, monkeypatch, masks):
    # the program skips query 998; its formula is made the one of `limited`, which does not
    from hasse.theory.user_code import ARGUMENT

    formula = symbolic_catalog.symbolic_mask_mod(str(masks), "limited", code=ARGUMENT).formula
    _plant(monkeypatch, "limited_998", lambda m: formula)
    code, out, err = run(capsys, "equiv", f"{masks}:limited_998", f"{masks}:limited", "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "proved", data  # Z3 compared two equal formulas
    assert data["recheck"].startswith("DISAGREES: the traced formula and the program differ at n = 999"), data
    assert "pair (998, 0)" in data["recheck"], data
    assert "the program says blocked, the formula says allowed" in data["recheck"], data


def test_floor_division_traced_as_truncation_is_caught(capsys, monkeypatch, masks):
    def truncated(m):  # `(q - 5) // 3` as truncation toward zero: wrong for q < 5
        def trunc(a, b):
            return z3.If(a >= 0, a / b, -((-a) / b))
        return trunc(m.q - 5, z3.IntVal(3)) == trunc(m.k - 5, z3.IntVal(3))

    code, out, err = run(capsys, "prove-mask", f"{masks}:blocks", "--claim", "dense")
    assert code == 0, (out, err)
    _plant(monkeypatch, "blocks", truncated)
    code, out, err = run(capsys, "prove-mask", f"{masks}:blocks", "--claim", "dense")
    assert code == 1 and "DISAGREES: the traced formula and the program differ" in out, (out, err)


def test_a_refutation_is_rechecked_on_the_program(capsys, monkeypatch, masks):
    code, out, err = run(capsys, "equiv", f"{masks}:limited", f"{masks}:limited_998", "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "refuted" and data["counterexample"]["pair"] == [998, 0], data
    assert data["recheck"] == "confirmed", data  # the programs differ there too
    # the formula of limited2 planted to skip query 998 as well: Z3 refutes, the programs agree there
    from hasse.theory.user_code import ARGUMENT

    formula = symbolic_catalog.symbolic_mask_mod(str(masks), "limited_998", code=ARGUMENT).formula
    _plant(monkeypatch, "limited2", lambda m: formula)
    code, out, err = run(capsys, "equiv", f"{masks}:limited", f"{masks}:limited2", "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "refuted", data
    assert data["recheck"].startswith("DISAGREES") and "M[998, 0]" in data["recheck"], data


def test_a_proof_whose_program_cannot_run_is_unknown(capsys, monkeypatch, masks):
    from hasse.theory.errors import InputError

    def cannot(self, points):
        raise InputError("mask_mod raised ImportError: no module named torch", self.source)

    monkeypatch.setattr(recheck.MaskModProgram, "_evaluate", cannot)
    code, out, err = run(capsys, "prove-mask", f"{masks}:limited", "--claim", "dense", "--json")
    data = json.loads(out)
    assert data["verdict"] == "proved" and data["recheck"].startswith("not re-checked: the program"), data
    assert code == 3  # a proof whose program never ran is not confirmed


def test_the_catalogue_program_is_its_builder(monkeypatch):
    from hasse.solvers.symbolic.claims import prove_dense

    mask = symbolic_catalog.symbolic_mask("block_causal")
    v = prove_dense(mask)
    assert v.exit_code == 0 and v.recheck.startswith("confirmed: the program = the formula"), v.recheck
    grid = mask.program.grid(6, {"block": 3})
    from hasse.theory.catalog import build_mask

    assert (grid == build_mask("block_causal:n=6,block=3").matrix).all()
    # a planted mis-trace of a catalogue rule (k <= q dropped) is caught against the builder
    mask.formula = z3.substitute(mask.formula, (mask.k, mask.q))
    v = prove_dense(mask)
    assert v.recheck.startswith("DISAGREES: the traced formula and the program differ"), v.recheck
    assert v.exit_code == 1


def test_the_recheck_of_the_1000_position_equivalence_is_fast_enough_to_run(capsys, masks):
    # issue 21 measured 167 s for `equiv` of `kv <= q < 1000` (Z3 per entry); no time is asserted here,
    # only that the whole plan (2^k ± 1 up to 2^20 included) ran on the programs and confirmed
    code, out, err = run(capsys, "equiv", f"{masks}:limited", f"{masks}:limited2", "--json")
    data = json.loads(out)
    assert code == 0 and data["recheck"].startswith("confirmed: the program = the formula"), data
    assert "1048577" in data["recheck"] and "sampled" in data["recheck"], data


DOC_MASK = '''\
import numpy as np

doc = np.array([0, 0, 1, 1, 1, 2, 3, 3])


def docmask(b, h, q_idx, kv_idx):
    return (doc[q_idx] == doc[kv_idx]) & (kv_idx <= q_idx)
'''


def test_an_assumed_index_tensor_is_rechecked_on_the_program_with_other_values(capsys, monkeypatch, tmp_path):
    path = tmp_path / "docs.py"
    path.write_text(DOC_MASK)
    code, out, err = run(capsys, "prove-mask", f"{path}:docmask", "--claim", "dense", "--assume", "doc=nondecreasing",
                         "--json")
    data = json.loads(out)
    assert code == 0 and data["recheck"].startswith("confirmed: the program = the formula"), data
    assert "n = 1…64" in data["recheck"], data  # the program ran with doc replaced by instances of every length
    _plant(monkeypatch, "docmask", lambda m: z3.substitute(m.formula, (m.k, m.q)))  # kv <= q dropped
    code, out, err = run(capsys, "prove-mask", f"{path}:docmask", "--claim", "dense", "--assume", "doc=nondecreasing",
                         "--json")
    data = json.loads(out)
    assert code == 1 and data["recheck"].startswith("DISAGREES: the traced formula and the program differ"), data
    assert "with doc = " in data["recheck"], data


OFFSETS = '''\
import numpy as np

doc = np.array([0, 0, 1, 1, 2, 2])
offsets = np.array([0, 2, 4])


def fn(b, h, q_idx, kv_idx):
    return (kv_idx >= offsets[doc[q_idx]]) & (kv_idx <= q_idx)
'''


def test_a_failure_over_an_assumed_tensor_is_rechecked_with_the_models_tensor(capsys, tmp_path):
    # for some non-decreasing doc, doc[q] leaves offsets: the program fails there, and the re-check
    # runs it with the model's doc (completed to a non-decreasing tensor), not the one as given
    path = tmp_path / "offsets.py"
    path.write_text(OFFSETS)
    code, out, err = run(capsys, "prove-mask", f"{path}:fn", "--claim", "dense", "--assume", "doc=nondecreasing",
                         "--json")
    data = json.loads(out)
    cx = data["counterexample"]
    assert code == 1 and data["verdict"] == "refuted" and "failure" in cx, data
    doc = cx["lists"]["doc"]
    assert len(doc) == cx["n"] and all(a <= b for a, b in zip(doc, doc[1:])), cx
    assert not 0 <= doc[cx["pair"][0]] < 3 or not 0 <= doc[cx["pair"][1]] < 3, cx  # a lookup outside offsets
    assert data["recheck"].startswith("confirmed: the program raises"), data


def test_a_refutation_over_index_tensors_is_rechecked_on_the_models_tensor():
    # before: "not re-checked: the model's index tensors are not rebuilt for a concrete grid"
    from hasse.solvers.symbolic.claims import check_equivalence

    v = check_equivalence(symbolic_catalog.symbolic_mask("document:causal=true"),
                          symbolic_catalog.symbolic_mask("document"))
    assert v.verdict == "refuted" and v.recheck == "confirmed", v


# --- a refutation beyond any grid is re-checked on the programs at its pair (lead, issue 21) ---------------

WRAPS = '''\
def scaled(b, h, q_idx, kv_idx):
    return q_idx * 2**40 >= kv_idx * 2**40


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
'''


def test_a_refutation_at_a_size_no_grid_holds_is_rechecked_on_the_pair(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "wraps.py"
    path.write_text(WRAPS)
    code, out, err = run(capsys, "equiv", f"{path}:scaled", f"{path}:causal", "--json")
    data = json.loads(out)
    cx = data["counterexample"]
    # the truth by torch itself: below 2^23 the products stay inside int64 (so the masks agree); at the
    # refutation's pair they wrap and differ
    assert code == 1 and cx["n"] == 2 ** 23 + 1, data
    q, k = cx["pair"]
    assert max(q, k) == 2 ** 23
    tq, tk = torch.tensor([q]), torch.tensor([k])
    assert bool(tq * 2**40 >= tk * 2**40) != bool(tq >= tk)
    assert data["recheck"].startswith("confirmed on the programs"), data  # never "not re-checked" for want of a grid

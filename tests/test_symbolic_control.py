"""Control of the traced program (issue 21 items 4 and 6; solvers/symbolic/trace/, mask.py, the CLI flags).

What the program does is established independently: each program is also run with REAL
torch on index tensors (as FlexAttention's create_mask builds them: int64 ``arange``), and
the verdicts are compared with what torch computes or raises. The cases:

- a ``try``/``except`` around traced code (the tracer's signal, or the program's own error)
  is refused, exit 2 (before: the fallback branch alone was traced and PROVED);
- what the program raises (AssertionError, RuntimeError, KeyError, ZeroDivisionError, a
  parameter check on a symbolic branch) is one line naming the line, exit 2;
- a loop over a symbolic Python value ends in TraceUnknown (exit 3) naming the line; a spent
  time limit too; a loop over a tensor cannot run (exit 2);
- torch's ``and_masks``/``or_masks`` and attention-gym's code in site-packages are traced;
- closure tensors are tables of their values (``n <= len`` stated), ``--assume`` makes them
  index tensors with a property;
- ``b`` needs ``--batch`` when the mask depends on it (decided by Z3), ``h`` likewise with ``--heads``;
- the domain bound (``n <= 2^31``, parameters within ``±2^31``) is in the side conditions.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import z3

from hasse.cli import main
from hasse.solvers.symbolic.mask import from_mask_mod, from_rule
from hasse.solvers.symbolic.trace import TraceError, TraceUnknown
from hasse.theory.limits import MAX_SYMBOLIC_VALUE
from hasse.theory.inputs.user_files import import_function
from hasse.theory.user_code import ARGUMENT

torch = pytest.importorskip("torch")

PROGRAMS = '''\
import torch
from torch.nn.attention.flex_attention import and_masks, noop_mask, or_masks

MODE = 2


def float_or_causal(b, h, q_idx, kv_idx):
    try:
        return q_idx / 2 <= kv_idx  # float_or_causal
    except Exception:
        return kv_idx <= q_idx


def branch_or_causal(b, h, q_idx, kv_idx):
    try:
        if q_idx < kv_idx:  # branch_or_causal
            return q_idx == kv_idx
        return kv_idx <= q_idx
    except RuntimeError:
        return kv_idx <= q_idx


def own_key_caught(b, h, q_idx, kv_idx):
    table = {}
    try:
        table["x"]  # own_key_caught
    except KeyError:
        pass
    return kv_idx <= q_idx


def raises_assert(b, h, q_idx, kv_idx):
    assert MODE == 3, "mode 3 only"  # raises_assert
    return kv_idx <= q_idx


def raises_runtime(b, h, q_idx, kv_idx):
    if MODE == 2:
        raise RuntimeError("not in mode 2")  # raises_runtime
    return kv_idx <= q_idx


def raises_key(b, h, q_idx, kv_idx):
    widths = {1: 4}
    return q_idx - kv_idx < widths[MODE]  # raises_key


def raises_zero(b, h, q_idx, kv_idx):
    step = MODE // (MODE - 2)  # raises_zero
    return q_idx - kv_idx < step


def tensor_loop(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    while d >= 4:  # tensor_loop
        d -= 4
    return d >= 0


def causal(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx


def window(b, h, q_idx, kv_idx):
    return q_idx - kv_idx < 3


def stride(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx) % 2 == 0


both = and_masks(causal, window)
either = or_masks(window, stride)
nested = and_masks(or_masks(window, stride), causal)
with_noop = and_masks(noop_mask, window)

doc = torch.tensor([0, 0, 1, 1, 1, 2, 2])


def document(b, h, q_idx, kv_idx):
    return (doc[q_idx] == doc[kv_idx]) & (kv_idx <= q_idx)


def document_next(b, h, q_idx, kv_idx):
    return doc[q_idx + 1] == doc[kv_idx]


LENGTHS = torch.tensor([3, 5])


def batch_lengths(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx < LENGTHS[b])


ORDER = [0, 1, 1, 2]


def list_by_tensor(b, h, q_idx, kv_idx):
    return ORDER[q_idx] == ORDER[kv_idx]


def reads_b(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (b == 1)


def b_cancels(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (b - b == 1)


def h_cancels(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (h * h >= 0)  # true at every h < 2^31 (no overflow), but h is in the formula


def reads_h(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((h == 0) | (kv_idx == q_idx))


def divides_by_h(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx + q_idx // (h - 1)  # divides_by_h


def under_1000(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx < 1000)


W = torch.tensor(3)
OFFSETS = torch.tensor([0, 2, 5])


def zero_d(b, h, q_idx, kv_idx):
    return (W - (q_idx - kv_idx) > 0) & (kv_idx <= q_idx)


def element_item(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx < OFFSETS[1].item()) & (OFFSETS[1] + kv_idx <= q_idx + 2)


from torch import where as torch_where  # noqa: E402

RANKS = torch.tensor([[0, 1, 2, 3, 4, 5], [5, 3, 4, 1, 2, 0]])


def per_head_rank(b, h, q_idx, kv_idx):
    return RANKS[h, kv_idx] <= RANKS[h, q_idx]


def first_row_rank(b, h, q_idx, kv_idx):
    return (RANKS[1][kv_idx] <= RANKS[1][q_idx]) & (RANKS[q_idx % 2][kv_idx] >= 1)


def where_by_name(b, h, q_idx, kv_idx):
    return torch_where(kv_idx <= q_idx, q_idx - kv_idx < 2, False)
'''


def _line(marker: str) -> int:
    return next(i for i, line in enumerate(PROGRAMS.splitlines(), 1) if line.rstrip().endswith(f"# {marker}"))


@pytest.fixture()
def progs(tmp_path) -> Path:
    path = tmp_path / "progs.py"
    path.write_text(PROGRAMS)
    return path


def load(path: Path, name: str):
    return import_function(str(path), name, "t", ARGUMENT)


def torch_grid(fn, n: int, b: int = 0, h: int = 0) -> np.ndarray:
    """The mask as FlexAttention computes it (``create_mask``: the mask_mod vmapped over int64 index tensors),
    at batch row ``b`` and head ``h``: the independent reference."""
    from torch.nn.attention.flex_attention import create_mask

    return create_mask(fn, b + 1, h + 1, n, n, device="cpu")[b, h].numpy().astype(bool)


def torch_raises(fn, n: int = 4, b: int = 0, h: int = 0):
    """The exception type torch raises running ``fn`` (None: it runs)."""
    try:
        torch_grid(fn, n, b, h)
    except Exception as exc:  # noqa: BLE001 - what the program raises is the reference
        return type(exc)
    return None


def formula_grid(mask, n: int, **params) -> np.ndarray:
    return mask.concrete(n, **params)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- 1. try/except around traced code


def test_try_except_around_an_untraceable_operation_is_refused(progs, capsys):
    """Before: the '/' was refused inside the try, the except branch (causal) traced alone: PROVED equal to causal.
    Torch computes the float comparison, which is not causal (the reference below)."""
    fn = load(progs, "float_or_causal")
    assert not np.array_equal(torch_grid(fn, 4), np.tril(np.ones((4, 4), bool)))  # the real mask is not causal
    code, out, err = cli(capsys, "equiv", f"{progs}:float_or_causal", "causal")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (code, out, err)
    assert "catches" in err and f"progs.py:{_line('float_or_causal')}" in err, err


def test_try_except_around_a_tensor_branch_is_refused(progs):
    with pytest.raises(TraceError) as info:
        from_mask_mod("branch_or_causal", load(progs, "branch_or_causal"))
    message = str(info.value)  # torch raises RuntimeError there, the handler returns causal: not modelled, refused
    assert "try/except" in message and "\n" not in message and f"progs.py:{_line('branch_or_causal')}" in message


def test_the_programs_own_error_caught_is_refused_too(progs):
    """Decided (design §10): any exception caught inside traced code is refused, the program's own included."""
    fn = load(progs, "own_key_caught")
    assert torch_raises(fn) is None  # torch runs it (the KeyError is caught)
    with pytest.raises(TraceError) as info:
        from_mask_mod("own_key_caught", fn)
    message = str(info.value)
    assert "catches KeyError" in message and f"progs.py:{_line('own_key_caught')}" in message, message


# --------------------------------------------------------------------------- 2. what the program raises


@pytest.mark.parametrize("name, exc", [("raises_assert", AssertionError), ("raises_runtime", RuntimeError),
                                       ("raises_key", KeyError), ("raises_zero", ZeroDivisionError)])
def test_what_the_program_raises_is_one_line_exit_2(progs, capsys, name, exc):
    assert torch_raises(load(progs, name)) is exc  # the reference: torch's run raises exactly this
    code, out, err = cli(capsys, "equiv", f"{progs}:{name}", "causal")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (code, err)
    assert f"progs.py:{_line(name)}" in err and f"the program raises {exc.__name__}" in err, err


def test_what_the_program_raises_in_a_subprocess_is_one_line(progs):
    proc = subprocess.run([sys.executable, "-m", "hasse", "prove-mask", f"{progs}:raises_key", "--claim", "dense"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "raises KeyError" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def make_checked(n, w):
    if w > 100:
        raise ValueError("w must be at most 100")

    def rule(q, k):
        return (k <= q) & (q - k < w)

    return rule


def test_a_raise_on_a_symbolic_branch_names_the_values_of_that_path():
    with pytest.raises(TraceError) as info:
        from_rule("checked", make_checked, params={"n": None, "w": None})
    message = str(info.value)
    assert "the program raises ValueError: w must be at most 100 when" in message, message
    w = int(message.rsplit("w = ", 1)[1].split(",")[0])
    with pytest.raises(ValueError):  # the values named really take that path
        make_checked(4, w)


# --------------------------------------------------------------------------- 3. loops and time


def make_loop(n, w):
    d = w
    while d >= 4:  # make_loop
        d -= 4

    def rule(q, k):
        return (q - k) == d

    return rule


def test_a_loop_over_a_symbolic_python_value_is_unknown_naming_its_line():
    with pytest.raises(TraceUnknown) as info:
        from_rule("loop", make_loop, params={"n": None, "w": None})
    message = str(info.value)
    assert "\n" not in message and "unknown" in message, message
    line = make_loop.__code__.co_firstlineno + 2
    assert f"test_symbolic_control.py:{line}" in message, message


def test_too_many_paths_is_unknown_naming_the_line_that_forks():
    from hasse.solvers.symbolic.trace import symbols, trace

    def program(q, k):
        d = 0
        for i in range(5):
            if q % (i + 2) == 0:  # forks
                d += 1
        return d == k

    q, k = symbols("q", "k")
    feasible = {tuple(x % (i + 2) == 0 for i in range(5)) for x in range(2 * 3 * 4 * 5 * 6)}  # a full period
    assert trace(program, [q, k], max_paths=64).paths == len(feasible)  # every feasible path, run once
    with pytest.raises(TraceUnknown) as info:
        trace(program, [q, k], max_paths=8)
    line = program.__code__.co_firstlineno + 3
    assert f"test_symbolic_control.py:{line}" in str(info.value) and "more than 8 paths" in str(info.value)


def test_a_loop_over_a_tensor_cannot_run(progs, capsys):
    assert torch_raises(load(progs, "tensor_loop")) is RuntimeError  # Boolean value of Tensor … is ambiguous
    code, out, err = cli(capsys, "prove-mask", f"{progs}:tensor_loop", "--claim", "dense")
    assert code == 2 and f"progs.py:{_line('tensor_loop')}" in err and len(err.strip().splitlines()) == 1, err


def test_a_loop_over_a_symbolic_value_through_the_cli_is_exit_3(tmp_path, capsys):
    """A factory whose loop runs over a symbolic value, as a catalogue-like rule: unknown, exit 3, one line."""
    from hasse.solvers.symbolic.resolve import TraceUnknownInput, symbolic_mask  # noqa: F401 - the CLI's mapping

    def fake(source):
        return from_rule(source, make_loop, params={"n": None, "w": None})

    import hasse.solvers.symbolic.catalog as catalog

    real = catalog.symbolic_mask
    catalog.symbolic_mask = fake
    try:
        code, out, err = cli(capsys, "prove-mask", "sliding_window", "--claim", "dense")
    finally:
        catalog.symbolic_mask = real
    assert code == 3 and "UNKNOWN" in out and "make_loop" not in err, (code, out, err)


def test_a_spent_time_limit_while_tracing_is_unknown():
    from hasse.theory.deadline import deadline

    with deadline(1e-9):
        with pytest.raises(TraceUnknown) as info:
            from_rule("window", make_checked, params={"n": None, "w": None})
    assert "time limit" in str(info.value)


def test_a_catalogue_spec_honours_timeout(capsys):
    from hasse.solvers.symbolic.resolve import TraceUnknownInput, symbolic_mask

    with pytest.raises(TraceUnknownInput):
        symbolic_mask("block_two_stream", timeout=1e-9)


# --------------------------------------------------------------------------- 4. library code


@pytest.mark.parametrize("name", ["both", "either", "nested", "with_noop", "noop_mask"])
def test_and_masks_or_masks_are_traced_equal_to_torch(progs, name):
    fn = load(progs, name)
    mask = from_mask_mod(name, fn)
    for n in range(1, 13):
        assert np.array_equal(formula_grid(mask, n), torch_grid(fn, n)), (name, n)


def test_attention_gym_in_site_packages_is_traced():
    gym = pytest.importorskip("attn_gym.masks")
    fn = gym.generate_sliding_window(3)
    assert "site-packages" in fn.__code__.co_filename
    mask = from_mask_mod("gym window", fn)
    for n in (1, 2, 5, 9):
        assert np.array_equal(formula_grid(mask, n), torch_grid(fn, n)), n


@pytest.mark.parametrize("name", ["zero_d", "element_item", "where_by_name"])
def test_0_d_tensors_concrete_elements_and_functions_imported_by_name(progs, name):
    """A 0-d tensor is a number, a concrete element is torch's own (its .item() runs), ``from torch import where``
    is the shim's: each equal to torch (before: refused, or torch's real where on traced values)."""
    fn = load(progs, name)
    mask = from_mask_mod(name, fn)
    for n in range(1, 9):
        assert np.array_equal(formula_grid(mask, n), torch_grid(fn, n)), (name, n)


# --------------------------------------------------------------------------- 5. closure tensors


def test_a_closure_tensor_is_a_table_of_its_values_for_n_up_to_its_length(progs):
    fn = load(progs, "document")
    mask = from_mask_mod("document", fn)
    length = 7
    assert any(z3.simplify(c == (mask.n <= length)) is not None and str(c) == f"n <= {length}"
               for c in mask.conditions), mask.conditions
    assert "doc as given" in mask.statement, mask.statement
    for n in range(1, length + 1):
        assert np.array_equal(formula_grid(mask, n), torch_grid(fn, n)), n
    assert torch_raises(fn, length + 1) is IndexError  # beyond its length torch raises: outside the statement


def test_an_index_past_the_end_is_an_obligation_failing_where_torch_raises(progs):
    fn = load(progs, "document_next")
    mask = from_mask_mod("document_next", fn)
    failing = None
    for n in range(1, 10):
        solver = z3.Solver()
        solver.add(*mask.conditions, mask.n == n, mask.q >= 0, mask.k >= 0, mask.q < n, mask.k < n,
                   z3.Not(z3.And([ob for ob, _ in mask.obligations])))
        if solver.check() == z3.sat:
            failing = n
            break
    truth = next(n for n in range(1, 10) if torch_raises(fn, n) is not None)
    assert failing == truth, (failing, truth)


def test_a_closure_tensor_indexed_by_b_with_batch(progs):
    fn = load(progs, "batch_lengths")
    mask = from_mask_mod("batch_lengths", fn, batch=2)
    for b in (0, 1):
        for n in (1, 4, 6):
            assert np.array_equal(formula_grid(mask, n, b=b), torch_grid(fn, n, b=b)), (b, n)
    with pytest.raises(TraceError) as info:
        from_mask_mod("batch_lengths", fn)
    assert "--batch" in str(info.value)


def test_a_2_d_closure_tensor_by_concrete_and_symbolic_indices(progs):
    """RANKS[h, kv] over two heads (a nested If), RANKS[1][q] (a concrete row first), RANKS[q % 2][kv]."""
    fn = load(progs, "per_head_rank")
    mask = from_mask_mod("per_head_rank", fn, heads=2)
    for n in range(1, 7):
        want = torch_grid(fn, n, h=0) | torch_grid(fn, n, h=1)
        assert np.array_equal(formula_grid(mask, n), want), n
    fn = load(progs, "first_row_rank")
    mask = from_mask_mod("first_row_rank", fn)
    assert "n <= 6" in {str(c) for c in mask.conditions}
    for n in range(1, 7):
        assert np.array_equal(formula_grid(mask, n), torch_grid(fn, n)), n


PARTIALS = '''\
import functools
import torch
DOC = torch.tensor([0, 0, 1, 1, 1])


def window(b, h, q_idx, kv_idx, w=2, doc=None):
    near = (kv_idx <= q_idx) & (q_idx - kv_idx < w)
    return near if doc is None else near & (doc[q_idx] == doc[kv_idx])


part = functools.partial(window, w=3)
part_doc = functools.partial(window, doc=DOC)


class Masker:
    def __init__(self, w):
        self.w = w

    def mask(self, b, h, q_idx, kv_idx):
        return torch.where(kv_idx <= q_idx, q_idx - kv_idx < self.w, False)


bound = Masker(2).mask
'''


@pytest.mark.parametrize("name", ["part", "part_doc", "bound"])
def test_a_partial_and_a_bound_method_are_traced_through_their_function(tmp_path, name):
    """Before: a functools.partial or a bound method ran with the real torch and its closure tensor unread (refused)."""
    (tmp_path / "partials.py").write_text(PARTIALS)
    fn = load(tmp_path / "partials.py", name)
    mask = from_mask_mod(name, fn)
    def plain(b, h, q_idx, kv_idx):  # create_mask wants a plain function of four arguments
        return fn(b, h, q_idx, kv_idx)

    for n in range(1, 6):
        assert np.array_equal(formula_grid(mask, n), torch_grid(plain, n)), (name, n)


def test_a_python_list_indexed_by_a_tensor_cannot_run(progs):
    fn = load(progs, "list_by_tensor")
    with pytest.raises(TraceError):
        from_mask_mod("list_by_tensor", fn)


def nondecreasing_sequences(n: int):
    for cuts in itertools.product((0, 1), repeat=max(n - 1, 0)):
        yield np.concatenate([[0], np.cumsum(cuts)]).astype(np.int64)


def test_assume_nondecreasing_proves_for_every_split(progs, capsys):
    """Dense (transitive) for every nondecreasing doc: checked here on every sequence of length n <= 6."""
    for n in range(1, 7):
        for ids in nondecreasing_sequences(n):
            m = (ids[:, None] == ids[None, :]) & np.tril(np.ones((n, n), bool))
            assert not (((m.astype(int) @ m.astype(int)) > 0) & ~m).any()  # transitive: the truth
    code, out, err = cli(capsys, "prove-mask", f"{progs}:document", "--claim", "dense", "--assume",
                         "doc=nondecreasing")
    assert code in (0, 1) and "PROVED" in out and "doc" in out, (code, out, err)
    mask = from_mask_mod("document", load(progs, "document"), assume={"doc": "nondecreasing"})
    assert [ix.name for ix in mask.indexes] == ["doc"] and mask.indexes[0].prop == "nondecreasing"
    assert not any(str(c).startswith("n <= 7") for c in mask.conditions)


def test_assume_names_the_tensors_the_program_reads(progs, capsys):
    code, out, err = cli(capsys, "prove-mask", f"{progs}:document", "--claim", "dense", "--assume",
                         "docs=nondecreasing")
    assert code == 2 and "reads no closure or global tensor named docs" in err and "doc)" in err, err
    code, out, err = cli(capsys, "prove-mask", f"{progs}:document", "--claim", "dense", "--assume", "doc=sorted")
    assert code == 2 and "nondecreasing, permutation, parents" in err, err
    code, out, err = cli(capsys, "equiv", f"{progs}:document", f"{progs}:causal", "--assume", "docs=nondecreasing")
    assert code == 2 and "neither mask reads" in err, err
    for argv in (["prove-mask", "causal", "--claim", "dense", "--assume", "doc=nondecreasing"],
                 ["prove-mask", "causal", "--claim", "dense", "--batch", "2"], ["equiv", "causal", "causal", "--batch", "2"]):
        code, out, err = cli(capsys, *argv)  # a catalogue spec reads no closure tensor and no b: said, not ignored
        assert code == 2 and "FILE.py:fn" in err and len(err.strip().splitlines()) == 1, (argv, err)


# --------------------------------------------------------------------------- 6. b and h


def test_a_mask_reading_b_needs_batch(progs, capsys):
    fn = load(progs, "reads_b")
    assert not np.array_equal(torch_grid(fn, 3, b=1), torch_grid(fn, 3, b=0))  # it does depend on b
    code, out, err = cli(capsys, "equiv", f"{progs}:reads_b", "causal")
    assert code == 2 and "reads b" in err and "--batch" in err, err


def test_with_batch_the_claim_covers_b_1(progs):
    fn = load(progs, "reads_b")
    mask = from_mask_mod("reads_b", fn, batch=2)
    assert "b" in mask.params
    for b in (0, 1):
        for n in (1, 3, 5):
            assert np.array_equal(formula_grid(mask, n, b=b), torch_grid(fn, n, b=b)), (b, n)
    from hasse.solvers.symbolic.claims import check_equivalence
    from hasse.solvers.symbolic.catalog import symbolic_mask

    verdict = check_equivalence(mask, symbolic_mask("causal"))
    assert verdict.verdict == "refuted" and verdict.counterexample["params"].get("b") == 1, verdict


def test_b_and_h_dependence_is_decided_by_z3_not_by_syntax(progs):
    for name in ("b_cancels", "h_cancels"):
        fn = load(progs, name)
        mask = from_mask_mod(name, fn)  # no --batch, no --heads needed: the mask is the same at every b, h
        for n in (1, 4):
            assert np.array_equal(formula_grid(mask, n), torch_grid(fn, n)), name
    with pytest.raises(TraceError) as info:
        from_mask_mod("reads_h", load(progs, "reads_h"))
    assert "--heads" in str(info.value)


def test_obligations_hold_at_every_head(progs):
    """``q // (h - 1)`` divides by zero at h = 1: with 2 heads that is a failure (before: only h = 0 was checked)."""
    fn = load(progs, "divides_by_h")
    assert torch_raises(fn, 3, h=1) is not None and torch_raises(fn, 3, h=0) is None
    mask = from_mask_mod("divides_by_h", fn, heads=2)
    solver = z3.Solver()
    solver.add(*mask.conditions, mask.q >= 0, mask.k >= 0, mask.q < mask.n, mask.k < mask.n,
               z3.Not(z3.And([ob for ob, _ in mask.obligations])))
    assert solver.check() == z3.sat


# --------------------------------------------------------------------------- 7, 8. the domain bound, constants


def test_the_domain_bound_is_in_the_side_conditions(progs):
    mask = from_mask_mod("causal", load(progs, "causal"))
    texts = {str(c) for c in mask.conditions}
    assert f"n <= {MAX_SYMBOLIC_VALUE}" in texts and "n >= 1" in texts, texts
    window = from_rule("window", make_checked, params={"n": None, "w": 3})
    assert f"n <= {MAX_SYMBOLIC_VALUE}" in {str(c) for c in window.conditions}
    with pytest.raises(TraceError):
        from_rule("checked", make_checked, params={"n": None, "w": None})  # w > 100 is inside the bound: raised


def test_constants_reach_the_symbolic_mask(progs):
    mask = from_mask_mod("under_1000", load(progs, "under_1000"))
    assert 1000 in mask.constants, mask.constants


# --- an operation that raises only at some values, inside the program's try (lead, issue 21) -------------

SWALLOWS = '''\
def swallows(b, h, q_idx, kv_idx):
    try:
        return q_idx // kv_idx >= 1
    except RuntimeError:
        return q_idx >= kv_idx


def quiet_try(b, h, q_idx, kv_idx):
    try:
        allowed = q_idx >= kv_idx
    except RuntimeError:
        allowed = q_idx > kv_idx
    return allowed


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
'''


def test_a_divisor_that_can_be_0_inside_the_programs_try_is_refused_not_refuted(tmp_path, capsys):
    """torch raises on kv = 0 and runs the handler: the program is causal at every n. Tracing the try body
    alone gives an obligation that fails at n = 1, a wrong refutation; the kit refuses instead."""
    torch = pytest.importorskip("torch")
    from hasse.cli import main

    path = tmp_path / "sw.py"
    path.write_text(SWALLOWS)
    namespace: dict = {}
    exec(SWALLOWS, namespace)
    for n in (1, 2, 5):  # the truth: torch runs the handler
        q, k = torch.arange(n)[:, None], torch.arange(n)[None, :]
        assert torch.equal(namespace["swallows"](0, 0, q, k), q >= k)
    code = main(["equiv", f"{path}:swallows", f"{path}:causal"])
    err = capsys.readouterr().err
    assert code == 2 and "try block" in err and len(err.strip().splitlines()) == 1, err
    # a try whose body never raises traces the path torch runs
    assert main(["equiv", f"{path}:quiet_try", f"{path}:causal"]) == 0


def test_a_mask_mod_returning_a_python_bool_or_an_int_tensor_names_the_users_def_line(tmp_path, capsys):
    """The refusal is about the program's result: it names the program's def line, not the kit's."""
    from hasse.cli import main

    path = tmp_path / "rt.py"
    path.write_text("def everything(b, h, q_idx, kv_idx):\n    return True\n\n\n"
                    "def difference(b, h, q_idx, kv_idx):\n    return q_idx - kv_idx\n")
    for name, line in (("everything", 1), ("difference", 5)):
        assert main(["prove-mask", f"{path}:{name}", "--claim", "dense"]) == 2
        err = capsys.readouterr().err
        assert f"rt.py:{line}: `{name}`" in err and "functions.py" not in err and "cannot run" in err, err


def test_a_path_bound_of_zero_is_unknown_not_a_crash():
    """max_paths = 0 stops before the first path: TraceUnknown naming the mask (it once raised NameError: the
    lines of the forking path were read before any path had run)."""
    from hasse.solvers.symbolic.trace import symbols, trace

    q, k = symbols("q", "k")
    with pytest.raises(TraceUnknown) as info:
        trace(lambda q, k: k <= q, [q, k], max_paths=0, source="m.py:causal")
    assert str(info.value).startswith("m.py:causal: more than 0 paths"), info.value

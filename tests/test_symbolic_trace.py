"""The symbolic tracer (solvers/symbolic/terms/, trace/): Python's semantics, and one-line refusals.

References are Python itself (``//`` and ``%`` on random integers, negative ones
included) and the concrete engine's own evaluation of the same mask_mod on numpy
arrays (:func:`theory.mask_mod.mask_mod_to_mask`). Each untraceable construct must
give a :class:`TraceError` of one line naming the user's file and the line.
"""

from __future__ import annotations

import random
import numpy as np
import pytest
import z3

from hasse.solvers.symbolic.catalog import symbolic_mask_mod
from hasse.solvers.symbolic.mask import from_mask_mod, from_rule
from hasse.solvers.symbolic.terms import SymInt, Tracer, maximum, minimum, where
from hasse.solvers.symbolic.trace import TraceError, symbols, trace
from hasse.theory.inputs.mask_mod import mask_mod_to_mask
from hasse.theory.inputs.user_files import import_function, resolve_function
from hasse.theory.user_code import ARGUMENT


def value(term, **env) -> int | bool:
    e = z3.simplify(z3.substitute(term, *[(z3.Int(k), z3.IntVal(v)) for k, v in env.items()]))
    if z3.is_int_value(e):
        return e.as_long()
    assert z3.is_true(e) or z3.is_false(e), e
    return z3.is_true(e)


# --------------------------------------------------------------------------- arithmetic


def test_floor_division_and_modulo_are_pythons():
    rng = random.Random(0)
    x, y = SymInt(z3.Int("x"), Tracer()), SymInt(z3.Int("y"), Tracer())
    ops = {
        "x // y": (x // y).expr, "x % y": (x % y).expr,
        "7 // y": (7 // y).expr, "-7 % y": (-7 % y).expr,
        "x // -3": (x // -3).expr, "x % -3": (x % -3).expr, "x // 4": (x // 4).expr, "x % 4": (x % 4).expr,
        "(x - y) // (y + 2)": ((x - y) // (y + 2)).expr,
    }
    for _ in range(300):
        a, b = rng.randint(-40, 40), rng.choice([v for v in range(-9, 10) if v not in (0, -2)])
        env = {"x": a, "y": b}
        expected = {"x // y": a // b, "x % y": a % b, "7 // y": 7 // b, "-7 % y": -7 % b, "x // -3": a // -3,
                    "x % -3": a % -3, "x // 4": a // 4, "x % 4": a % 4, "(x - y) // (y + 2)": (a - b) // (b + 2)}
        for name, term in ops.items():
            assert value(term, **env) == expected[name], (name, a, b)


def test_a_divisor_that_may_be_zero_is_an_obligation():
    tracer = Tracer()
    x, y = SymInt(z3.Int("x"), tracer), SymInt(z3.Int("y"), tracer)
    _ = x // y
    assert len(tracer.obligations) == 1 and "the divisor is 0" in tracer.obligations[0][1]
    solver = z3.Solver()
    solver.add(z3.Not(tracer.obligations[0][0]))
    assert solver.check() == z3.sat  # y = 0 violates it
    solver.add(z3.Int("y") != 0)
    assert solver.check() == z3.unsat


def test_min_max_where_abs():
    rng = random.Random(1)
    x, y = SymInt(z3.Int("x"), None), SymInt(z3.Int("y"), None)
    for _ in range(50):
        a, b = rng.randint(-9, 9), rng.randint(-9, 9)
        assert value(minimum(x, y).expr, x=a, y=b) == min(a, b)
        assert value(maximum(x, 3).expr, x=a) == max(a, 3)
        assert value(where(x < y, x - y, 2 * y).expr, x=a, y=b) == (a - b if a < b else 2 * b)
        assert value(abs(x - y).expr, x=a, y=b) == abs(a - b)


# --------------------------------------------------------------------------- programs traced, against the numpy engine


def equal_on_grids(fn, sym, sizes=(1, 2, 3, 5, 8)):
    for n in sizes:
        expected = mask_mod_to_mask(fn, n)
        assert np.array_equal(sym.concrete(n), expected), (sym.name, n)


def test_python_control_flow_on_tensors_cannot_run():
    """``if``, ``min``, ``and`` on a tensor: torch raises (ambiguous truth value), so the tracer refuses
    (issue 21: these were traced as Python branches and proved)."""
    def branches(b, h, q, kv):
        if q < kv:
            return q + kv == 3
        elif q - kv > 2:
            return (q - kv) % 2 == 0
        return True

    def min_max(b, h, q, kv):
        return (min(q, kv) >= 1) & (max(q, kv) <= 4)

    def and_or(b, h, q, kv):
        return (q > 1 and kv < 3) or q == kv

    def negative_division(b, h, q, kv):
        return (kv - q) // 3 == (q - kv) % -4

    import torch

    for fn in (branches, min_max, and_or):
        q, kv = torch.arange(4)[:, None], torch.arange(4)[None, :]
        with pytest.raises(RuntimeError, match="ambiguous"):
            fn(torch.tensor(0), torch.tensor(0), q, kv)  # the reference: torch itself refuses
        with pytest.raises(TraceError, match="truth value"):
            from_mask_mod(fn.__name__, fn)
    equal_on_grids(negative_division, from_mask_mod("negative_division", negative_division))


def test_paths_counted_and_joined():
    def program(q, k):
        return (q >= k) if q < 3 else (k == 0)

    q, k = symbols("q", "k")
    traced = trace(program, [q, k])
    assert traced.paths == 2
    for a in range(-2, 6):
        for b in range(-2, 6):
            assert value(traced.formula, q=a, k=b) == ((a >= b) if a < 3 else (b == 0))


MODULE = '''\
import numpy as np
import torch


def torch_where(b, h, q_idx, kv_idx):
    near = torch.where(q_idx - kv_idx < 3, True, False)
    causal = torch.where(kv_idx <= q_idx, 1, 0) == 1
    return near & causal & torch.logical_not(q_idx == kv_idx + 1)


def numpy_where(b, h, q_idx, kv_idx):
    far = np.where(np.maximum(q_idx, 2) - kv_idx >= 2, 1, 0)
    return np.logical_or(far == 1, np.minimum(q_idx, kv_idx) == 3)


def make_window(n, w):
    span = min(w, n)

    def rule(q, k):
        return (q - k >= 0) & (q - k < span)

    return rule


def bitwise(b, h, q_idx, kv_idx):
    return (q_idx << kv_idx) == 1


def float_division(b, h, q_idx, kv_idx):
    return q_idx / 2 <= kv_idx


TABLE = [0, 1, 1, 2, 2, 2]


def list_lookup(b, h, q_idx, kv_idx):
    return TABLE[q_idx] == TABLE[kv_idx]


def unknown_torch(b, h, q_idx, kv_idx):
    return torch.sin(q_idx) == 0
'''


@pytest.fixture()
def user_file(tmp_path):
    path = tmp_path / "user_masks.py"
    path.write_text(MODULE)
    return path


def test_torch_and_numpy_where_through_the_shims(user_file):
    import torch

    m = symbolic_mask_mod(str(user_file), "numpy_where", code=ARGUMENT)
    equal_on_grids(resolve_function(str(user_file), "numpy_where", "t", ARGUMENT), m)
    m = symbolic_mask_mod(str(user_file), "torch_where", code=ARGUMENT)
    fn = resolve_function(str(user_file), "torch_where", "t", ARGUMENT)
    for n in (1, 2, 3, 6):
        q, kv = torch.arange(n)[:, None], torch.arange(n)[None, :]
        expected = fn(torch.tensor(0), torch.tensor(0), q, kv).expand(n, n).numpy()
        assert np.array_equal(m.concrete(n), expected), n


def test_a_factory_called_with_symbolic_parameters(user_file):
    make = import_function(str(user_file), "make_window", "t", ARGUMENT)
    m = from_rule("user window", make, params={"n": None, "w": None})
    for n in (1, 2, 4, 7):
        for w in (1, 2, 3, 9):
            rule = make(n, w)
            expected = np.fromfunction(lambda q, k: rule(q, k), (n, n), dtype=int)
            assert np.array_equal(m.concrete(n, w=w), expected), (n, w)


def line_of(name: str, text: str) -> int:
    start = MODULE.splitlines().index(f"def {name}(b, h, q_idx, kv_idx):")
    return start + 1 + next(i for i, line in enumerate(MODULE.splitlines()[start:]) if text in line)


@pytest.mark.parametrize("name, text, words", [
    ("bitwise", "<<", "shift by a symbolic count"),
    ("float_division", "/ 2", "true division"),
    ("list_lookup", "TABLE[q_idx]", "index"),
    ("unknown_torch", "sin", "torch.sin() is not modelled"),
])
def test_untraceable_names_file_and_line(user_file, name, text, words):
    with pytest.raises(TraceError) as info:
        symbolic_mask_mod(str(user_file), name, code=ARGUMENT)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"user_masks.py:{line_of(name, text)}:"), message
    assert words in message, message


def test_plain_mask_mod_equal_to_engine_at_many_sizes():
    def blocky(b, h, q_idx, kv_idx):
        return ((q_idx // 4) == (kv_idx // 4)) | ((kv_idx % 4 == 0) & (kv_idx <= q_idx))

    equal_on_grids(blocky, from_mask_mod("blocky", blocky), sizes=range(1, 13))

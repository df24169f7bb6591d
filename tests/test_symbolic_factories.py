"""mask_mod factories of n proved for every n (issue 25, solvers/symbolic/catalog/factory.py) and the two flex exports.

A factory ``make_mask_mod(n, **params)`` beside ``positions(n, **params)`` is traced with ``n`` and the parameters
not given literally symbolic. The references are independent of the tracer: the catalogue's concrete builders
(theory.catalog.build_mask: the numpy rules of theory/masks), brute force over small n for the smallest
counterexample, and real torch on index grids for the files themselves.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import z3

from hasse.cli import main
from hasse.solvers.symbolic.catalog import symbolic_factory, symbolic_mask
from hasse.solvers.symbolic.recheck import mask_grid
from hasse.solvers.symbolic.trace import TraceError
from hasse.theory.catalog import build_mask
from hasse.theory.errors import InputError
from hasse.theory.user_code import ARGUMENT

ROOT = Path(__file__).resolve().parents[1]
BUTTERFLY = ROOT / "theory" / "flex" / "butterfly.py"
BLOCK = ROOT / "theory" / "flex" / "block_two_stream.py"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def catalogue(spec: str) -> np.ndarray:
    return np.asarray(build_mask(spec).matrix, dtype=bool)


def load(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_flex_{path.stem}_{id(path)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_grid(module, n: int, **params) -> np.ndarray:
    torch = pytest.importorskip("torch")
    size = module.positions(n, **params)
    idx = torch.arange(size)
    zero = torch.zeros((), dtype=torch.int64)
    out = module.make_mask_mod(n, **params)(zero, zero, idx[:, None], idx[None, :])
    return np.asarray(out.broadcast_to((size, size)).numpy(), dtype=bool)


def divisors(n: int):
    return [d for d in range(1, n + 1) if n % d == 0]


# --------------------------------------------------------------------------- the flex files, concretely


def test_flex_files_equal_the_catalogue_layouts_with_torch():
    bf, bts = load(BUTTERFLY), load(BLOCK)
    for n in range(1, 7):
        assert bf.positions(n) == 3 * n - 2
        assert np.array_equal(torch_grid(bf, n), catalogue(f"butterfly:n={n}")), n
        for block in divisors(n):
            for variant in ("chain", "clique"):
                assert bts.positions(n, block, variant) == 2 * n - block
                got = torch_grid(bts, n, block=block, variant=variant)
                assert np.array_equal(got, catalogue(f"block_two_stream:n={n},block={block},variant={variant}")), \
                    (n, block, variant)
    with pytest.raises(ValueError):
        bts.make_mask_mod(4, 3)  # 3 does not divide 4: the factory refuses, as the catalogue does


def test_flex_files_run_under_flexattentions_vmap():
    """FlexAttention builds the mask by vmap over the mask_mod (create_mask; create_block_mask on CPU)."""
    pytest.importorskip("torch")
    flex = pytest.importorskip("torch.nn.attention.flex_attention")
    for module, n, params, spec in ((load(BUTTERFLY), 5, {}, "butterfly:n=5"),
                                    (load(BLOCK), 6, {"block": 2, "variant": "clique"},
                                     "block_two_stream:n=6,block=2,variant=clique"),
                                    (load(BLOCK), 6, {"block": 3}, "block_two_stream:n=6,block=3")):
        size = module.positions(n, **params)
        got = flex.create_mask(module.make_mask_mod(n, **params), 1, 1, size, size, device="cpu")[0, 0].numpy()
        assert np.array_equal(got, catalogue(spec)), spec
        flex.create_block_mask(module.make_mask_mod(n, **params), None, None, size, size, device="cpu")


def test_the_flex_files_import_neither_hasse_nor_torch():
    import ast

    for path in (BUTTERFLY, BLOCK):
        tree = ast.parse(path.read_text())
        names = [alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                 for alias in node.names] + [node.module for node in ast.walk(tree)
                                             if isinstance(node, ast.ImportFrom) and node.module]
        assert not any(name.split(".")[0] in ("hasse", "torch") for name in names), (path, names)
        assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")] \
            == ["positions", "make_mask_mod"], path


# --------------------------------------------------------------------------- traced for every n


def test_symbolic_factory_names_the_parameters_as_the_catalogue(tmp_path):
    bf = symbolic_factory(str(BUTTERFLY), "make_mask_mod", code=ARGUMENT)
    n = z3.Int("n")
    assert bf.params == {} and z3.simplify(bf.size - (3 * n - 2)) == 0
    bts = symbolic_factory(str(BLOCK), "make_mask_mod(variant='clique')", code=ARGUMENT)
    assert {k: str(v) for k, v in bts.params.items()} == {"block": "l"}
    assert {k: str(v) for k, v in symbolic_mask("block_two_stream").params.items()} == {"block": "l"}
    # the formula at concrete values is the catalogue's mask (the traced formula, not the program)
    for n_ in range(1, 7):
        assert np.array_equal(bf.concrete(n_), catalogue(f"butterfly:n={n_}"))
        for block in divisors(n_):
            assert np.array_equal(bts.concrete(n_, block=block),
                                  catalogue(f"block_two_stream:n={n_},block={block},variant=clique"))
    # the re-check's program is the file run as the user runs it
    assert np.array_equal(mask_grid(bts, 6, {"block": 2}), catalogue("block_two_stream:n=6,block=2,variant=clique"))
    with pytest.raises(TraceError, match=r"positions.*returns an int, not a mask_mod"):
        symbolic_factory(str(BUTTERFLY), "positions", code=ARGUMENT)
    plain = tmp_path / "plain.py"
    plain.write_text("def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n")
    with pytest.raises(InputError, match="not a factory of n"):
        symbolic_factory(str(plain), "causal", code=ARGUMENT)
    with pytest.raises(InputError):
        symbolic_factory(str(BUTTERFLY), "make_mask_mod")  # no permission to run the file


def test_butterfly_file_proved_equal_to_the_layout_for_every_n(capsys):
    code, out, err = cli(capsys, "equiv", f"{BUTTERFLY}:make_mask_mod", "butterfly")
    assert code == 0 and "PROVED" in out and "for all 1 <= n <= 2^31" in out, (out, err)
    assert "re-check by the concrete engine: confirmed" in out, out


@pytest.mark.parametrize("variant", ["chain", "clique"])
def test_block_two_stream_file_proved_for_every_n_and_block(capsys, variant):
    code, out, err = cli(capsys, "equiv", f"{BLOCK}:make_mask_mod(variant='{variant}')",
                         f"block_two_stream:variant={variant}")
    assert code == 0 and "PROVED" in out and "l | n" in out, (out, err)
    assert "re-check by the concrete engine: confirmed" in out, out
    code, out, err = cli(capsys, "equiv", f"{BLOCK}:make_mask_mod(variant='{variant}')",
                         f"block_two_stream:variant={'clique' if variant == 'chain' else 'chain'}")
    assert code == 1 and "REFUTED" in out, (out, err)


def test_a_literal_n_fixes_n(capsys):
    code, out, err = cli(capsys, "equiv", f"{BUTTERFLY}:make_mask_mod(4)", "butterfly:n=4")
    assert code == 0 and "PROVED" in out and "n = 4" in out, (out, err)


def test_the_factory_through_its_task_is_leak_free(capsys):
    code, out, err = cli(capsys, "prove-mask", f"{BLOCK}:make_mask_mod", "--task", "block_two_stream",
                         "--claim", "leak-free")
    assert code == 0 and "PROVED" in out and "l | n" in out, (out, err)


# --------------------------------------------------------------------------- planted mistakes


def smallest_difference(module, spec_of, params_of):
    """The smallest n (then parameter) where the file run with torch differs from the catalogue (brute force)."""
    for n in range(1, 13):
        for params in params_of(n):
            try:
                got = torch_grid(module, n, **params)
            except ValueError:
                continue
            want = catalogue(spec_of(n, params))
            if got.shape != want.shape or not np.array_equal(got, want):
                return n, params
    return None


def test_an_off_by_one_in_butterfly_is_refuted_at_its_smallest_n(tmp_path, capsys):
    bad = tmp_path / "butterfly_bad.py"
    bad.write_text(BUTTERFLY.read_text().replace("(kv_idx < target)", "(kv_idx <= target)"))
    assert bad.read_text() != BUTTERFLY.read_text()
    expected = smallest_difference(load(bad), lambda n, p: f"butterfly:n={n}", lambda n: [{}])
    assert expected is not None
    code, out, err = cli(capsys, "equiv", f"{bad}:make_mask_mod", "butterfly", "--json")
    import json

    obj = json.loads(out)
    assert code == 1 and obj["verdict"] == "refuted", obj
    assert obj["counterexample"]["n"] == expected[0], (obj["counterexample"], expected)
    assert obj["recheck"].startswith("confirmed"), obj["recheck"]


def test_an_off_by_one_in_block_two_stream_is_refuted_at_its_smallest_n(tmp_path, capsys):
    bad = tmp_path / "block_bad.py"
    bad.write_text(BLOCK.read_text().replace("(kv_idx // block < t // block)", "(kv_idx // block <= t // block)"))
    assert bad.read_text() != BLOCK.read_text()
    expected = smallest_difference(load(bad), lambda n, p: f"block_two_stream:n={n},block={p['block']}",
                                   lambda n: [{"block": d} for d in divisors(n)])
    import json

    code, out, err = cli(capsys, "equiv", f"{bad}:make_mask_mod", "block_two_stream", "--json")
    obj = json.loads(out)
    assert code == 1 and obj["verdict"] == "refuted", obj
    cx = obj["counterexample"]
    assert (cx["n"], cx["params"]["block"]) == (expected[0], expected[1]["block"]), (cx, expected)
    assert obj["recheck"].startswith("confirmed"), obj["recheck"]


def test_a_factory_raising_where_the_spec_is_defined_is_a_failure(tmp_path, capsys):
    """The factory refuses block > 2 although block_two_stream allows every l | n: refuted where it raises."""
    bad = tmp_path / "block_refuses.py"
    bad.write_text(BLOCK.read_text().replace('    if n % block != 0:',
                                             '    if block > 2:\n        raise ValueError("too large")\n'
                                             '    if n % block != 0:'))
    expected = next((n, d) for n in range(1, 13) for d in divisors(n) if d > 2)  # the spec's first such value
    import json

    code, out, err = cli(capsys, "equiv", f"{bad}:make_mask_mod", "block_two_stream", "--json")
    obj = json.loads(out)
    assert code == 1 and obj["verdict"] == "refuted", obj
    cx = obj["counterexample"]
    assert "raises ValueError: too large" in cx["failure"], cx
    assert (cx["n"], cx["params"]["block"]) == expected, cx
    assert obj["recheck"].startswith("confirmed: the program raises"), obj["recheck"]
    # the same file proves nothing through the task either (its domain is the task's l | n)
    code, out, err = cli(capsys, "prove-mask", f"{bad}:make_mask_mod", "--task", "block_two_stream",
                         "--claim", "leak-free")
    assert code == 1 and "too large" in out, (out, err)


# --------------------------------------------------------------------------- tensor arguments

MAE = '''\
def positions(n, masked=None):
    return n


def make_mask_mod(n, masked):
    if isinstance(masked, (list, tuple)):
        import torch

        masked = torch.tensor(masked)

    def mask_mod(b, h, q_idx, kv_idx):
        return ~(masked[kv_idx] != 0) | (masked[q_idx] != 0)

    return mask_mod


def make_rewrite(n, masked):
    def mask_mod(b, h, q_idx, kv_idx):
        return (masked[kv_idx] == 0) | ~(masked[q_idx] == 0)

    return mask_mod


def make_other(n, masked):
    def mask_mod(b, h, q_idx, kv_idx):
        return (masked[kv_idx] == 0) | (q_idx == kv_idx)

    return mask_mod


def make_plain(n, masked):
    def mask_mod(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    return mask_mod
'''


@pytest.fixture
def mae(tmp_path):
    path = tmp_path / "mae.py"
    path.write_text(MAE)
    return path


def mae_grid(masked, fn: str) -> np.ndarray:
    """The file's mask at these flags, by numpy (the reference of the refutation)."""
    flags = np.asarray(masked)
    n = len(flags)
    q, k = np.arange(n)[:, None], np.arange(n)[None, :]
    if fn == "make_mask_mod":
        return np.broadcast_to((flags[k] == 0) | (flags[q] != 0), (n, n))
    return np.broadcast_to((flags[k] == 0) | (q == k), (n, n))


def test_a_tensor_argument_assumed_any_is_proved_and_refuted(mae, capsys):
    code, out, err = cli(capsys, "equiv", f"{mae}:make_mask_mod", f"{mae}:make_rewrite", "--assume", "masked=any")
    assert code == 0 and "PROVED" in out and "masked" in out, (out, err)
    import json

    code, out, err = cli(capsys, "equiv", f"{mae}:make_mask_mod", f"{mae}:make_other", "--assume", "masked=any",
                         "--json")
    obj = json.loads(out)
    assert code == 1 and obj["verdict"] == "refuted", obj
    import itertools

    expected = next(n for n in range(1, 6) for flags in itertools.product((0, 1), repeat=n)
                    if not np.array_equal(mae_grid(flags, "make_mask_mod"), mae_grid(flags, "make_other")))
    cx = obj["counterexample"]
    assert cx["n"] == expected, (cx, expected)
    assert obj["recheck"].startswith("confirmed"), obj["recheck"]


def test_the_mae_file_is_the_published_mae_task(mae, capsys):
    """A task-only name as MASK; the factory's masked and the task's are the same Z3 function (were they two,
    the equivalence would be refuted: two independent tensors)."""
    mask = symbolic_mask("mae_published")
    assert any(ix.name == "masked" for ix in mask.indexes)
    code, out, err = cli(capsys, "equiv", f"{mae}:make_mask_mod", "mae_published", "--assume", "masked=any")
    assert code == 0 and "PROVED" in out, (out, err)
    code, out, err = cli(capsys, "equiv", f"{mae}:make_mask_mod", "masked_context", "--assume", "masked=any")
    assert code == 1 and "REFUTED" in out, (out, err)


def test_the_factory_program_runs_with_concrete_tensors(mae):
    mask = symbolic_factory(str(mae), "make_mask_mod", assume={"masked": "any"}, code=ARGUMENT)
    for flags in ([0, 1, 0, 0], [1, 1, 0], [0], [3, 0, -1, 0, 2]):
        got = mask_grid(mask, len(flags), {}, {"masked": flags})
        assert np.array_equal(got, mae_grid(flags, "make_mask_mod")), flags


# --------------------------------------------------------------------------- one-line refusals


def test_refusals_are_one_line_exit_2(tmp_path, mae, capsys):
    no_positions = tmp_path / "nopos.py"
    no_positions.write_text("def make_mask_mod(n, block=1):\n    return lambda b, h, q, k: q >= k\n")
    code, out, err = cli(capsys, "equiv", f"{no_positions}:make_mask_mod", "causal")
    assert code == 2 and "defines no positions" in err and len(err.strip().splitlines()) == 1, err

    string = tmp_path / "string.py"
    string.write_text("def positions(n, variant: str):\n    return n\n\n\n"
                      "def make_mask_mod(n, variant: str):\n"
                      "    return lambda b, h, q, k: (q >= k) | (variant == 'full')\n")
    code, out, err = cli(capsys, "equiv", f"{string}:make_mask_mod", "causal")
    assert code == 2 and "must be given literally" in err and len(err.strip().splitlines()) == 1, err
    code, out, err = cli(capsys, "equiv", f"{string}:make_mask_mod(variant='causal')", "causal")
    assert code == 0 and "PROVED" in out, (out, err)

    code, out, err = cli(capsys, "equiv", f"{mae}:make_plain", "causal", "--assume", "mask=any")
    assert code == 2 and "neither mask reads" in err and len(err.strip().splitlines()) == 1, err
    code, out, err = cli(capsys, "prove-mask", f"{mae}:make_plain", "--claim", "dense", "--assume", "mask=any")
    assert code == 2 and "no parameter" in err and len(err.strip().splitlines()) == 1, err


def test_only_the_programs_own_raise_is_a_failure_the_tracers_limit_is_exit_2(tmp_path, capsys):
    """An ``assert``/``raise`` of the factory is the program refusing values (refuted there, proved once the
    range excludes them); an operation the tracer cannot do on a symbolic stand-in is exit 2, never refuted."""
    path = tmp_path / "checks.py"
    path.write_text('''\
def positions(n, block=1):
    return n


def make_mask_mod(n, block=1):
    assert block >= 1, "block must be positive"

    def mask_mod(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    return mask_mod


def make_indexed(n, block=1):
    def mask_mod(b, h, q_idx, kv_idx):
        return block[kv_idx] == 0

    return mask_mod
''')
    import json

    code, out, err = cli(capsys, "prove-mask", f"{path}:make_mask_mod", "--claim", "dense", "--json")
    obj = json.loads(out)
    assert code == 1 and "AssertionError: block must be positive" in obj["counterexample"]["failure"], obj
    assert obj["counterexample"]["params"]["block"] < 1, obj
    code, out, err = cli(capsys, "prove-mask", f"{path}:make_mask_mod", "--claim", "dense", "--param-range",
                         "block=1..100")
    assert code == 0 and "PROVED" in out, (out, err)
    code, out, err = cli(capsys, "prove-mask", f"{path}:make_indexed", "--claim", "dense")
    assert code == 2 and "not subscriptable" in err and "--assume block=any" in err, (out, err)
    assert len(err.strip().splitlines()) == 1, err

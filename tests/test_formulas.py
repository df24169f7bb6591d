"""Size formulas (solvers.formulas) against the catalogue's concrete masks and tasks.

Every formula is evaluated for every n <= 16 (every block size l dividing n, both
variants, for Block Two-Stream) and compared with what the catalogue builds: the
mask's size and number of True entries (with and without the diagonal), the task's
labelled positions and its label density. The closed forms are checked separately
with sympy against polynomials written out by hand.
"""

from __future__ import annotations

import doctest
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy

import hasse.solvers.formulas as formulas_module
from hasse.solvers.formula_text import describe
from hasse.solvers.formulas import SizeFormulas, evaluate, formula_for_family, formulas, l, n
from hasse.theory.catalog import build_family, build_mask, build_task
from hasse.theory.errors import InputError

SIZES = range(1, 17)
BLOCK_CASES = [(size, block, variant) for size in SIZES for block in range(1, size + 1) if size % block == 0
               for variant in ("chain", "clique")]  # 2 × Σ d(n) = 2 × 50 cases


def concrete(mask: np.ndarray, supervised: int) -> dict[str, int | Fraction]:
    """The sizes of a built mask and its task, counted directly."""
    size = mask.shape[0]
    return {
        "positions": size,
        "edges": int(mask.sum()),
        "edges_off_diagonal": int(mask.sum() - np.trace(mask)),
        "supervised": supervised,
        "label_density": Fraction(supervised, size),
    }


# ---------------------------------------------------------------- formulas = catalogue


@pytest.mark.parametrize("size", range(2, 17))
def test_causal_matches_merged_ar_layout(size):
    """Causal on n - 1 positions, label i + 1 at position i: ``causal:n=<n-1>`` and the ``ar:n`` members."""
    mask = build_mask(f"causal:n={size - 1}").matrix
    assert mask.diagonal().all()  # the convention: every position attends itself
    # the merged layout's labels, collected from the family: T_k supervises position k - 1 with label k
    labels = {}
    for task in build_family(f"ar:n={size}"):
        (p,) = task.supervised
        labels.setdefault(p, set()).update(task.labels[p])
        assert np.array_equal(task.mask, mask[: task.size, : task.size])  # T_k is the causal prefix
    assert labels == {i: {i + 1} for i in range(size - 1)}
    # the same labels from causal_lm:n, whose last position (no next token) is dropped
    lm = build_task(f"causal_lm:n={size}")
    assert [list(lm.labels[i]) for i in range(size - 1)] == [[i + 1] for i in range(size - 1)]
    assert np.array_equal(lm.mask[: size - 1, : size - 1], mask)
    assert evaluate(formulas("causal"), size) == concrete(mask, len(labels))


@pytest.mark.parametrize("size, block, variant", BLOCK_CASES)
def test_block_two_stream_matches_catalogue(size, block, variant):
    spec = f"block_two_stream:n={size},block={block},variant={variant}"
    mask, task = build_mask(spec).matrix, build_task(spec)
    assert np.array_equal(task.mask, mask)
    assert mask.diagonal().all()
    assert evaluate(formulas("block_two_stream", variant), size, block) == concrete(mask, len(task.supervised))


@pytest.mark.parametrize("size", SIZES)
def test_butterfly_matches_catalogue(size):
    mask, task = build_mask(f"butterfly:n={size}").matrix, build_task(f"butterfly:n={size}")
    assert np.array_equal(task.mask, mask)
    assert mask.diagonal().all()
    assert evaluate(formulas("butterfly"), size) == concrete(mask, len(task.supervised))


# ---------------------------------------------------------------- closed forms


def test_closed_forms():
    half = sympy.Rational(1, 2)
    expected = {  # construction, variant -> (positions, edges, supervised), written out by hand
        ("causal", "chain"): (n - 1, half * n * (n - 1), n - 1),
        ("block_two_stream", "chain"): (2 * n - l, n**2 - n * l + n + half * l * (l - 1), n),
        ("block_two_stream", "clique"): (2 * n - l, n**2 - half * n * l + half * n + half * l * (l - 1), n),
        ("butterfly", "chain"): (3 * n - 2, 2 * n**2 - n, n),
    }
    for (construction, variant), (positions, edges, supervised) in expected.items():
        f = formulas(construction, variant)
        assert sympy.expand(f.positions - positions) == 0
        assert sympy.expand(f.edges - edges) == 0
        assert sympy.expand(f.edges_off_diagonal - (edges - positions)) == 0
        assert sympy.expand(f.supervised - supervised) == 0
        assert sympy.simplify(f.label_density - supervised / positions) == 0
    assert sympy.expand(formulas("butterfly").edges) == 2 * n**2 - n
    assert sympy.factor(formulas("butterfly").edges_off_diagonal) == 2 * (n - 1) ** 2
    assert sympy.factor(formulas("causal").edges_off_diagonal) == (n - 1) * (n - 2) / 2
    assert formulas("causal").label_density == 1


def test_label_density_is_a_cancelled_rational():
    for construction, variant in (("block_two_stream", "chain"), ("butterfly", "chain")):
        density = formulas(construction, variant).label_density
        num, den = sympy.fraction(density)
        assert sympy.gcd(num, den) == 1 and den.is_polynomial(n, l)
    assert formulas("butterfly").label_density == n / (3 * n - 2)
    assert formulas("block_two_stream").label_density == n / (2 * n - l)


def test_symbols_are_positive_integers():
    assert n.is_integer and n.is_positive and l.is_integer and l.is_positive
    assert formulas("butterfly").edges.free_symbols == {n}
    assert formulas("block_two_stream", "clique").edges.free_symbols == {n, l}


# ---------------------------------------------------------------- API


def test_formula_for_family():
    assert formula_for_family("ar") == formulas("causal")
    assert formula_for_family("ar:n=5") == formulas("causal")
    assert formula_for_family("block:n=6,block=2") == formulas("block_two_stream", "chain")
    assert formula_for_family("block:n=6,block=2,variant=clique") == formulas("block_two_stream", "clique")
    assert formula_for_family("infill") == formulas("butterfly")
    for bad in ("nope", "butterfly:n=4", "block:colour=red", "block:variant=ring"):
        with pytest.raises(InputError):
            formula_for_family(bad)


def test_size_formulas_is_frozen():
    f = formulas("butterfly")
    assert isinstance(f, SizeFormulas) and f.construction == "butterfly" and f.variant is None
    assert formulas("block_two_stream", "clique").variant == "clique"
    with pytest.raises(AttributeError):
        f.positions = n  # type: ignore[misc]


@pytest.mark.parametrize(
    "call",
    [
        lambda: formulas("xlnet"),
        lambda: formulas("block_two_stream", "ring"),
        lambda: formulas("butterfly", "clique"),
        lambda: evaluate(formulas("causal"), 1),  # ar:n needs n >= 2
        lambda: evaluate(formulas("butterfly"), 0),
        lambda: evaluate(formulas("butterfly"), 4, 2),  # no blocks
        lambda: evaluate(formulas("block_two_stream"), 4),  # l missing
        lambda: evaluate(formulas("block_two_stream"), 4, 3),  # 3 does not divide 4
        lambda: evaluate(formulas("butterfly"), 2.5),
    ],
)
def test_bad_input_raises_input_error(call):
    with pytest.raises(InputError):
        call()


def test_evaluate_types():
    values = evaluate(formulas("block_two_stream"), 6, 2)
    # by hand: C_0 … C_3 causal 1+2+3+4 = 10; Q -> C 2·(0+2+4) = 12; Q -> Q chain 3·3 = 9
    assert values == {"positions": 10, "edges": 31, "edges_off_diagonal": 21, "supervised": 6,
                      "label_density": Fraction(3, 5)}
    assert all(type(values[k]) is int for k in ("positions", "edges", "edges_off_diagonal", "supervised"))
    assert type(values["label_density"]) is Fraction


def test_describe():
    assert describe(formulas("butterfly")) == [
        "butterfly (n tokens)",
        "  positions = 3n - 2",
        "  edges = 2n^2 - n = n(2n - 1)",
        "  edges_off_diagonal = 2n^2 - 4n + 2 = 2(n - 1)^2",
        "  supervised = n",
        "  label_density = n/(3n - 2)",
    ]
    assert describe(formulas("causal")) == [
        "causal on n - 1 positions (n tokens)",
        "  positions = n - 1",
        "  edges = (n^2 - n)/2 = n(n - 1)/2",
        "  edges_off_diagonal = (n^2 - 3n + 2)/2 = (n - 1)(n - 2)/2",
        "  supervised = n - 1",
        "  label_density = 1",
    ]
    assert describe(formulas("block_two_stream", "chain"))[1:] == [
        "  positions = 2n - l",
        "  edges = (2n^2 - 2nl + l^2 + 2n - l)/2",
        "  edges_off_diagonal = (2n^2 - 2nl + l^2 - 2n + l)/2",
        "  supervised = n",
        "  label_density = n/(2n - l)",
    ]


def test_doctests():
    result = doctest.testmod(formulas_module)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------- dependency direction


def _run_blocked(blocked: tuple[str, ...], body: str) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in {blocked!r}:
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
        """
    ) + textwrap.dedent(body) + "\nprint('ok')\n"
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_theory_imports_without_sympy():
    _run_blocked(("sympy",), """
        import importlib, pkgutil
        from hasse import theory
        for mod in pkgutil.walk_packages(theory.__path__, 'hasse.theory.'):
            importlib.import_module(mod.name)
        import hasse.theory.tasks.families, hasse.theory.tasks.case_studies
        assert 'sympy' not in sys.modules
        """)


def test_formulas_import_without_torch():
    _run_blocked(("torch",), """
        from hasse.solvers import formulas
        formulas.evaluate(formulas.formulas('butterfly'), 3)
        assert 'torch' not in sys.modules
        """)

"""One-line bugs to plant in a temporary copy of the kit: the mutation table the proofs must catch.

Each :class:`Mutation` names a file of the repository, one line as it is there (exactly
once, surrounding whitespace ignored) and the line that replaces it, and the theorem
(with the size) that must refute it. :func:`mutated_copy` lays out a copy of the kit the
way it is installed (``hasse/``, ``hasse/theory/`` …) with the mutation applied, so that
``PYTHONPATH=<copy>`` runs the mutated kit without touching the working tree;
:func:`run_kit` runs a command of it (``python -m hasse …``), :func:`run_proof` one proof script.

Used by ``tests/test_engine_theorems.py`` (each mutation refuted by its theorem, with a
counterexample the clean code confirms) and ``python -m benchmarks.mutation`` (every
mutation against ``hasse prove all --n 4 --method both``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"hasse": "hasse", "theory": "hasse/theory", "solvers": "hasse/solvers", "proofs": "hasse/proofs",
            "gpu_check": "hasse/gpu_check"}  # repository folder -> where it is installed


@dataclass(frozen=True)
class Mutation:
    """A one-line bug: in ``path`` (relative to the repository), ``original`` becomes ``mutated``."""

    name: str
    path: str
    original: str
    mutated: str
    theorem: str  # the theorem that must refute it
    n: int  # the size at which it must be refuted
    note: str = ""


MUTATIONS = (
    Mutation("order_ties_by_largest_member", "theory/order.py",
             "ready = [(classes[c][0], c) for c in range(len(classes)) if waiting[c] == 0]",
             "ready = [(classes[c][-1], c) for c in range(len(classes)) if waiting[c] == 0]",
             "engine_matches_definitions", 3, "canonical order: ties broken by the largest member"),
    Mutation("dense_depth_always_one", "theory/order.py",
             "depth = 1 if np.count_nonzero(mask) > np.count_nonzero(np.diagonal(mask)) else 0",
             "depth = 1", "engine_matches_definitions", 2, "every dense mask given depth 1"),
    Mutation("height_without_plus_one", "theory/order.py",
             "levels[c] = 1 + max(levels[b] for b in lower[c])",
             "levels[c] = max(levels[b] for b in lower[c])", "engine_matches_definitions", 2),
    Mutation("analysis_reach_off_by_one", "theory/analysis.py",
             "if residual and depth is not None and layers >= depth:",
             "if residual and depth is not None and layers >= depth - 1:", "engine_matches_definitions", 3),
    Mutation("sparse_hasse_edge_from_largest", "theory/sparse.py",
             "out[order.classes[up][0], order.classes[lo][0]] = True",
             "out[order.classes[up][0], order.classes[lo][-1]] = True", "engine_matches_definitions", 3,
             "the sparse realisation's Hasse edge taken from the largest lower member"),
    Mutation("sparse_cycle_reversed", "theory/sparse.py",
             "out[b, a] = True  # b attends a: a -> b around the cycle",
             "out[a, b] = True", "engine_matches_definitions", 3),
    Mutation("batch_sparse_cycle_reversed", "theory/batch.py",
             "out[t] |= np.where(nxt == t, bit(n, q), 0).astype(rows.dtype)",
             "out[q] |= np.where(nxt == t, bit(n, t), 0).astype(rows.dtype)", "sparse_realisation_keeps_hasse", 3,
             "a reversed class cycle: same R* and same depth, not the designed realisation"),
    Mutation("leak_direct_attention_only", "theory/leak.py",
             "reached = [(p, c) for p, c in queries if c in colour_bits and order.upstream_bits(p) & colour_bits[c]]",
             "reached = [(p, c) for p, c in queries if c in colour_bits and any(mask[p, v] or v == p "
             "for v in holders[c])]",
             "leak_search_is_exact", 3, "the leak check counts direct attention only"),
    Mutation("leak_depth_plus_one", "theory/leak.py",
             "Leak(p, t, path[0], path, len(path) - 1)", "Leak(p, t, path[0], path, len(path))",
             "leak_search_is_exact", 2),
    Mutation("isolation_counts_own_group", "theory/leak.py",
             "queries += [(p, h) for h in range(len(groups)) if h != g]",
             "queries += [(p, h) for h in range(len(groups))]", "leak_search_is_exact", 2),
    Mutation("compositions_empty", "solvers/task_sets.py",
             "for first in range(1, n + 1):", "for first in range(1, n):", "catalog_layouts_match_design", 3,
             "the family class made empty"),
    Mutation("block_specs_skip_whole_block", "solvers/task_sets.py",
             "for block in range(1, n + 1):", "for block in range(1, n):", "catalog_layouts_match_design", 2),
    Mutation("infill_centre_drops_right", "theory/tasks/parts.py",
             "sources = [i for i in (k - 1, k + 1) if 0 <= i < n]", "sources = [i for i in (k - 1,) if 0 <= i < n]",
             "catalog_layouts_match_design", 2, "the infill centre symbol drops its right neighbour"),
    Mutation("butterfly_forward_window_2", "theory/masks/butterfly.py",
             "forward = (qs == 0) & (ks == 0) & (j <= i)", "forward = (qs == 0) & (ks == 0) & (j <= i) & (j >= i - 1)",
             "catalog_layouts_match_design", 4, "the Butterfly forward stream a window of 2"),
    Mutation("two_stream_query_sees_own_block", "theory/masks/block_two_stream.py",
             "qc = q_query & ~k_query & (k // block < t // block)",
             "qc = q_query & ~k_query & (k // block <= t // block)", "catalog_layouts_match_design", 2),
    Mutation("xlnet_query_sees_own_content", "theory/masks/xlnet.py",
             "query = q_query & ~k_query & (rk < rq)", "query = q_query & ~k_query & (rk <= rq)",
             "catalog_layouts_match_design", 1),
)


def by_name(name: str) -> Mutation:
    return next(m for m in MUTATIONS if m.name == name)


def apply(mutation: Mutation, text: str) -> str:
    """``text`` with the mutation's line replaced (indentation kept); ValueError unless it occurs once."""
    lines = text.split("\n")
    hits = [i for i, line in enumerate(lines) if line.strip() == mutation.original.strip()]
    if len(hits) != 1:
        raise ValueError(f"{mutation.name}: the line {mutation.original!r} occurs {len(hits)} times in {mutation.path}")
    line = lines[hits[0]]
    lines[hits[0]] = line[: len(line) - len(line.lstrip())] + mutation.mutated.strip()
    return "\n".join(lines)


def copy_kit(dest: Path) -> Path:
    """A copy of the kit's packages under ``dest`` laid out as installed; returns ``dest`` (for PYTHONPATH)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder, target in PACKAGES.items():
        shutil.copytree(ROOT / folder, dest / target, ignore=ignore, dirs_exist_ok=True)
    return dest


def installed_path(path: str) -> str:
    """Where repository file ``path`` lives in a copy laid out by :func:`copy_kit`."""
    folder, _, rest = path.partition("/")
    return f"{PACKAGES[folder]}/{rest}"


def mutated_copy(mutation: Mutation | None, dest: Path) -> Path:
    """A copy of the kit under ``dest`` with ``mutation`` applied (None: the clean kit)."""
    copy_kit(dest)
    if mutation is not None:
        target = dest / installed_path(mutation.path)
        target.write_text(apply(mutation, target.read_text()))
    return dest


def run_kit(copy: Path, *args: str, module: str = "hasse", timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` on the kit in ``copy`` (its own PYTHONPATH, no bytecode written)."""
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=timeout)


def run_proof(copy: Path, theorem: str, n: int, method: str = "exhaustive", timeout: float = 600):
    """The proof script of ``theorem`` on the kit in ``copy``: ``python -m hasse.proofs.<theorem> --json``."""
    return run_kit(copy, "--n", str(n), "--method", method, "--json", module=f"hasse.proofs.{theorem}",
                   timeout=timeout)

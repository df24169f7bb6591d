"""The theorem list of design.md §5, in order; each name is a module ``proofs.<name>`` with ``THEOREM``.

:data:`NAMES` is every theorem: :data:`MASK_THEOREMS` (over every mask), :data:`ENGINE_THEOREMS`
(the engine behind the command line against the definitions) and :data:`TASK_THEOREMS`
(task-level); tests and benchmarks read these lists.

>>> len(NAMES), MASK_THEOREMS[0], TASK_THEOREMS[-1]
(22, 'reach_monotone_in_depth', 'butterfly_is_leak_free_with_full_coverage')
"""

from __future__ import annotations

import importlib

from hasse.proofs.theorem import Theorem
from hasse.theory.errors import InputError

MASK_THEOREMS = (  # quantified over every mask of size n
    "reach_monotone_in_depth",
    "reach_stable_by_n_minus_1",
    "limit_is_preorder",
    "quotient_is_partial_order",
    "hasse_closure_is_limit",
    "no_residual_can_oscillate",
    "sparse_realisation_keeps_hasse",
)

ENGINE_THEOREMS = (  # the code the CLI runs, against the definitions, on every object of size n (exhaustive only)
    "engine_matches_definitions",
    "leak_search_is_exact",
    "catalog_layouts_match_design",
    "stack_flow_matches_products",  # the engines of stacks, arrays, orbits, combining, copies and the symbolic
    "mask_arrays_read_as_defined",  # tracer, each against an independent reference
    "orbit_enumeration_covers_every_mask",
    "shard_combination_is_exact",
    "copy_choice_is_minimum",
    "symbolic_forms_match_programs",
)

TASK_THEOREMS = (  # over labelled DAGs, task families and the case studies
    "equivalence_preserves_upstream_inputs",
    "merged_task_embeds_every_task",
    "merge_is_minimum",
    "causal_is_minimum_merge_of_ar",
    "block_two_stream_is_leak_free_and_consistent",
    "butterfly_is_leak_free_with_full_coverage",
)

NAMES = MASK_THEOREMS + ENGINE_THEOREMS + TASK_THEOREMS

ALIASES: dict[str, str] = {  # another accepted name -> the theorem's name
    "merged_task_is_minimum": "merge_is_minimum",
}


def get(name: str) -> Theorem:
    """The theorem called ``name`` (:class:`InputError` naming the known ones otherwise)."""
    name = ALIASES.get(name, name)
    if name not in NAMES:
        raise InputError(f"unknown theorem {name!r}; known: {', '.join(NAMES)} (or 'all')")
    return importlib.import_module(f"hasse.proofs.{name}").THEOREM


def available() -> tuple[str, ...]:
    """The names whose proof script exists in this checkout."""
    out = []
    for name in NAMES:
        try:
            importlib.import_module(f"hasse.proofs.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"hasse.proofs.{name}":
                raise
            continue
        out.append(name)
    return tuple(out)

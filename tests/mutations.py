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
    method: str = "exhaustive"  # the method of ``theorem`` that catches it
    verdict: str = "refuted"  # what that run must say: "refuted", or "unknown" (a control or the completeness guard)
    tests: tuple[str, ...] = ()  # pytest arguments (files, ::names, -k EXPR) that catch it without the proofs


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
    # ---- Z3 encodings of the mask theorems (solvers/smt/masks.py, z3_claims.py, z3_hasse.py)
    Mutation("z3_product_transposed_index", "solvers/smt/masks.py",
             "return [[or_([and_(a[q][j], b[j][k]) for j in range(n)]) for k in range(n)] for q in range(n)]",
             "return [[or_([and_(a[q][j], b[k][j]) for j in range(n)]) for k in range(n)] for q in range(n)]",
             "hasse_closure_is_limit", 3, "encode_product reads b[k][j]: A . B^T", method="z3"),
    Mutation("z3_powers_start_at_a", "solvers/smt/masks.py", "out = [identity(len(a))]", "out = [a]",
             "reach_stable_by_n_minus_1", 3, "the plain power list one step ahead (A^L is A^(L+1)); only the naive "
             "encodings and the A^2 = I witness use it, so prove all (better encodings) proves on",
             method="z3", verdict="refuted", tests=("tests/test_z3_masks.py", "-k", "powers")),
    Mutation("z3_column_power_drops_last_key", "solvers/smt/masks.py",
             "col = [or_([and_(a[q][j], col[j]) for j in range(n)]) for q in range(n)]",
             "col = [or_([and_(a[q][j], col[j]) for j in range(n - 1)]) for q in range(n)]",
             "limit_is_preorder", 4, "a dropped disjunct: the column powers never step through position n-1",
             method="z3", verdict="unknown"),
    Mutation("z3_symmetry_sorts_named_positions", "solvers/smt/masks.py",
             "out += [z3.Implies(col[j + 1], col[j]) for j in range(first, n - 1)]",
             "out += [z3.Implies(col[j + 1], col[j]) for j in range(first - 1, n - 1)]",
             "limit_is_preorder", 4, "symmetry breaking too strong: the last named position is sorted too",
             method="z3", verdict="unknown"),
    Mutation("z3_layers_forget_seen", "solvers/smt/masks.py",
             "seen = [or_([s, f]) for s, f in zip(seen, layer)]", "seen = list(layer)",
             "reach_stable_by_n_minus_1", 3, "breadth-first layers that forget what was seen before the last one",
             method="z3"),
    Mutation("z3_closure_rank_not_strict", "solvers/smt/masks.py",
             "out.append(z3.Implies(c[q][k], or_([and_(and_(g[q][j], c[j][k]), rank[j][k] < rank[q][k])",
             "out.append(z3.Implies(c[q][k], or_([and_(and_(g[q][j], c[j][k]), rank[j][k] <= rank[q][k])",
             "hasse_closure_is_limit", 3, "the closure's justification ranks not strict: cycles justify themselves",
             method="z3"),
    Mutation("z3_first_index_skips_zero", "solvers/smt/claims.py",
             "for i in range(len(conditions) - 1, -1, -1):", "for i in range(len(conditions) - 1, 0, -1):",
             "reach_stable_by_n_minus_1", 2, "L* = 0 never reported (range one step short)", method="z3"),
    Mutation("z3_roles_one_short", "solvers/smt/claims.py",
             "out = [t + (x,) for t in out for x in range(max(t, default=-1) + 2)]",
             "out = [t + (x,) for t in out for x in range(max(t, default=-1) + 1)]",
             "limit_is_preorder", 3, "canonical roles never open a new position: only (0, 0, 0) is checked",
             method="z3", verdict="unknown"),
    Mutation("z3_hasse_is_strict_order", "solvers/smt/hasse.py",
             "h = [[and_(s[q][k], not_(ss[q][k])) for k in range(n)] for q in range(n)]",
             "h = [[s[q][k] for k in range(n)] for q in range(n)]",
             "hasse_closure_is_limit", 3, "the Hasse diagram taken as the whole strict order", method="z3"),
    Mutation("z3_sparse_every_member_to_smallest", "solvers/smt/hasse.py",
             "nxt[x][t] = z3.And(last[x], e[x][t], first[t])", "nxt[x][t] = z3.And(e[x][t], first[t])",
             "sparse_realisation_keeps_hasse", 3, "the class cycle's wrap-around taken from every member",
             method="z3"),
    Mutation("z3_predicted_around_off_by_one", "solvers/smt/hasse.py",
             "around = z3.If(rank[x] == 0, zero, size[x] - rank[x])",
             "around = z3.If(rank[x] == 0, zero, size[x] - rank[x] - 1)",
             "sparse_realisation_keeps_hasse", 3, "predicted hop distance around the class one short", method="z3"),
    # ---- Z3 on tasks (solvers/smt/task_maps.py, z3_merge_within.py, z3_leak_walks.py)
    Mutation("z3_embedding_labels_reversed", "solvers/smt/task_maps.py",
             "and (not labels or src.labels[c] <= tgt.labels[m])] for c in nodes}",
             "and (not labels or src.labels[c] >= tgt.labels[m])] for c in nodes}",
             "causal_is_minimum_merge_of_ar", 4, "label inclusion the wrong way round", method="z3"),
    Mutation("z3_merge_fixes_whole_first_task", "solvers/smt/merge_within.py",
             "for j, c in enumerate(largest_down_set(d)[:k]):", "for j, c in enumerate(range(d.size)[:k]):",
             "merge_is_minimum", 3, "symmetry breaking too strong: every node of the first task fixed, not one "
             "down-set", method="z3"),
    Mutation("z3_merge_alphabet_short", "solvers/smt/merge_within.py",
             "solver.add(0 <= x, x < max(alphabet, 1))", "solver.add(0 <= x, x < max(alphabet - 1, 1))",
             "merge_is_minimum", 3, "the last input multiset unusable by a merged node", method="z3"),
    Mutation("z3_leak_walk_reversed", "solvers/smt/leak_walks.py",
             "solver.add(z3.Implies(x, z3.And(at[-1][p], z3.Or([at[0][j] for j in holders.get(t, [])]))))",
             "solver.add(z3.Implies(x, z3.And(at[0][p], z3.Or([at[-1][j] for j in holders.get(t, [])]))))",
             "block_two_stream_is_leak_free_and_consistent", 4, "the leak walk searched backwards (position to "
             "holder); the task theorems' Z3 side has no planted leaky control, so prove all proves on",
             method="z3", tests=("tests/test_proofs_tasks.py", "-k", "leak_walk or counterexample_methods")),
    # ---- the exhaustive enumerator (solvers/exhaustive.py, theory/batch_rows.py): the completeness guard
    Mutation("scan_skips_first_of_batch", "solvers/exhaustive.py",
             "rows = _rows(n, diagonal, pos, end, size)", "rows = _rows(n, diagonal, pos + 1, end, size)",
             "limit_is_preorder", 3, "the first mask of every batch skipped", verdict="unknown"),
    Mutation("search_starts_at_one", "solvers/exhaustive.py",
             "start, stop = (0, total) if ctx.shard is None else part(0, total, *ctx.shard)",
             "start, stop = (1, total) if ctx.shard is None else part(0, total, *ctx.shard)",
             "limit_is_preorder", 3, "the empty mask never enumerated", verdict="unknown"),
    Mutation("enumeration_skips_superdiagonal", "theory/batch_rows.py",
             "chunk = (chunk & low) | ((chunk & ~low) << np.uint64(1))",
             "chunk = (chunk & low) | ((chunk & ~low) << np.uint64(1)) & ~np.uint64(1 << (q + 1))",
             "limit_is_preorder", 3, "M[q, q+1] never set", verdict="unknown"),
    # ---- the batch algebra (theory/batch.py)
    Mutation("batch_closure_one_squaring_short", "theory/batch.py",
             "return max(n - 2, 0).bit_length()", "return max(n - 3, 0).bit_length()", "limit_is_preorder", 4,
             "R* by one squaring too few"),
    Mutation("batch_first_repeat_off_by_one", "theory/batch.py",
             "depth[equal_masks(powers_[level], powers_[level + 1])] = level",
             "depth[equal_masks(powers_[level], powers_[level + 1])] = level + 1", "reach_stable_by_n_minus_1", 2),
    # ---- equivalence, merge, the independent diagrams (theory/equivalence.py, merge.py, solvers/posets.py)
    Mutation("signature_covers_unsorted", "theory/equivalence.py",
             "key = (h.inputs[c], tuple(sorted(out[d] for d in h.lower[c])))",
             "key = (h.inputs[c], tuple(out[d] for d in h.lower[c]))",
             "equivalence_preserves_upstream_inputs", 3, "signatures depend on the order of the covered nodes"),
    Mutation("merge_labels_overwritten", "theory/merge.py", "labels[q].update(h.task.labels[p])",
             "labels[q] = set(h.task.labels[p])", "merged_task_embeds_every_task", 3,
             "a label dropped: the last task's labels replace the others'"),
    Mutation("merge_taken_only_covers", "theory/merge.py",
             "taken = {images[d] for d in range(c) if up[d] & up[c]}  # images within a common down-set",
             "taken = {images[d] for d in h.lower[c]}", "merged_task_embeds_every_task", 3,
             "two nodes of one down-set merged unless one covers the other"),
    Mutation("posets_upstream_transposed", "solvers/posets.py",
             "upstream = [frozenset(int(q) for q in np.flatnonzero(r[c[0]])) for c in cls]",
             "upstream = [frozenset(int(q) for q in np.flatnonzero(r[:, c[0]])) for c in cls]",
             "merge_is_minimum", 3, "the reference diagram reads downstream for upstream", method="z3"),
    # ---- leak paths, catalogue layouts, families
    Mutation("leak_path_drops_source", "theory/leak.py", "for d in range(depth - 1, -1, -1):",
             "for d in range(depth - 1, 0, -1):", "leak_search_is_exact", 3, "the path walked back stops one short"),
    Mutation("block_causal_strict", "theory/masks/block_causal.py", "return k // block <= q // block",
             "return k // block < q // block", "catalog_layouts_match_design", 2),
    Mutation("prefix_lm_prefix_off_by_one", "theory/masks/prefix_lm.py", "return (k < prefix) | (k <= q)",
             "return (k <= prefix) | (k <= q)", "catalog_layouts_match_design", 2),
    Mutation("document_causal_strict", "theory/masks/document.py", "return same & (k <= q) if causal else same",
             "return same & (k < q) if causal else same", "catalog_layouts_match_design", 2,
             "catalog_layouts_match_design does not cover document (free-form lengths): the tests catch it",
             verdict="refuted", tests=("tests/test_catalog.py", "-k", "document")),
    Mutation("ar_label_off_by_one", "theory/tasks/families.py", "labels = [None] * (k - 1) + [k]",
             "labels = [None] * (k - 1) + [k - 1]", "catalog_layouts_match_design", 2,
             "T_k predicts its own last token"),
    # ---- issue 20, item 8: the engines added since `prove all` was written, each caught by its engine theorem
    # the stack engine (theory/stack.py, theory/stack_leak.py)
    Mutation("stack_quiet_after_one_layer", "theory/stack.py",
             "if quiet >= stack.depth:  # a whole pass added nothing: a fixed point of every layer",
             "if quiet >= 1:", "stack_flow_matches_products", 4,
             "one quiet layer taken for convergence (a later layer may still add)"),
    Mutation("stack_interval_layers_reversed", "theory/stack.py", "new_lo, new_hi = lo[a_lo], hi[a_hi]",
             "new_lo, new_hi = a_lo[lo], a_hi[hi]", "stack_flow_matches_products", 4,
             "the interval engine composes R(L-1) A_L instead of A_L R(L-1)"),
    Mutation("stack_interval_form_ignores_hi", "theory/stack.py",
             "if np.any(np.diff(lo) < 0) or np.any(np.diff(hi) < 0):", "if np.any(np.diff(lo) < 0):",
             "stack_flow_matches_products", 4, "a layer with decreasing run ends taken as monotone-interval"),
    Mutation("stack_leak_nearest_by_position", "theory/stack_leak.py", "order = np.lexsort((cands[seen], f[seen]))",
             "order = np.lexsort((f[seen], cands[seen]))", "stack_flow_matches_products", 4,
             "the leak's source is the smallest holder, not the one seen after the fewest layers"),
    Mutation("stack_leak_first_empty_row_only", "theory/stack_leak.py", "rows.update(found.rows)",
             "rows.update(found.rows[:1])", "stack_flow_matches_products", 4,
             "only the first empty row of each layer reported"),
    # the array readers (theory/inputs/arrays.py)
    Mutation("additive_threshold_lets_through", "theory/inputs/arrays.py", "return arr > BLOCKED_AT",
             "return arr >= BLOCKED_AT", "mask_arrays_read_as_defined", 4,
             "an additive value exactly at the threshold read as allowed"),
    Mutation("mha_heads_major", "theory/inputs/arrays.py",
             "arr = arr.reshape(arr.shape[0] // heads, heads, *arr.shape[1:])  # torch's MHA: index b * H + h",
             "arr = arr.reshape(heads, arr.shape[0] // heads, *arr.shape[1:]).swapaxes(0, 1)",
             "mask_arrays_read_as_defined", 4, "(B * H, Q, K) read as index h * B + b"),
    Mutation("broadcast_batch_declared", "theory/inputs/arrays.py",
             "return HeadMasks(np.ascontiguousarray(masks), h if h > 1 else None, b if b > 1 else None,",
             "return HeadMasks(np.ascontiguousarray(masks), h if h > 1 else None, b if b > 0 else None,",
             "mask_arrays_read_as_defined", 4, "a batch dimension of size 1 declared"),
    Mutation("blocked_not_inverted", "theory/inputs/arrays.py", 'return ~ones if convention == "blocked" else ones',
             "return ones", "mask_arrays_read_as_defined", 4, "a 0/1 array in the blocked convention read as allowed"),
    # the orbit enumerations and their scan (solvers/orbits.py, solvers/preorders.py, proofs/orbit_cover.py,
    # proofs/orbits_check.py)
    Mutation("relabelling_transposes", "solvers/orbits.py",
             "target[_bit_position(n, q, k)] = 1 << _bit_position(n, perm[q], perm[k])",
             "target[_bit_position(n, q, k)] = 1 << _bit_position(n, perm[k], perm[q])",
             "orbit_enumeration_covers_every_mask", 4, "canonical masks under relabelling and transposition"),
    Mutation("orbit_parts_overlap", "solvers/orbits.py",
             "mine = rows if part is None else np.ascontiguousarray(rows[:, part[0]::part[1]])",
             "mine = rows if part is None else np.ascontiguousarray(rows[:, part[0]::max(part[1] - 1, 1)])",
             "orbit_enumeration_covers_every_mask", 4, "the parts' strides overlap"),
    Mutation("preorders_row_set_not_closed", "solvers/preorders.py",
             "closed_d = ~(outof & ~subs[None]).any(axis=2)", "closed_d = np.ones_like(closed_c)",
             "orbit_enumeration_covers_every_mask", 4, "non-transitive relations listed as preorders"),
    Mutation("loops_without_the_full_diagonal", "proofs/orbit_cover.py",
             "for loops in range(2 ** n):  # LOOPS: every set of loops on the representatives",
             "for loops in range(2 ** n - 1):", "orbit_enumeration_covers_every_mask", 4,
             "the classes with every loop set never enumerated"),
    Mutation("loops_expected_halved", "proofs/orbit_cover.py",
             "return count * 2 ** n if kind == LOOPS else count",
             "return count * 2 ** (n - 1) if kind == LOOPS else count", "orbit_enumeration_covers_every_mask", 4),
    Mutation("scan_stops_at_first_decided", "proofs/orbits_check.py",
             "if all(s.outcome is not None for s in scans):", "if any(s.outcome is not None for s in scans):",
             "orbit_enumeration_covers_every_mask", 4, "one pass for several theorems ends once any of them is decided"),
    # combining shards and parts (proofs/certificates/combine.py)
    Mutation("combine_witness_highest_index", "proofs/certificates/combine.py",
             'best = min(hits, key=lambda r: hit_of(theorem, r)[1]["index"])',
             'best = max(hits, key=lambda r: hit_of(theorem, r)[1]["index"])', "shard_combination_is_exact", 4,
             "the combined witness is not the lowest index"),
    Mutation("combine_shard_label_unchecked", "proofs/certificates/combine.py",
             "if label is not None and _shard_range(label, total) != (a, b):",
             "if label is not None and _shard_range(label, total) is None:", "shard_combination_is_exact", 4,
             "a shard's range moved to another shard's is accepted"),
    Mutation("combine_orbit_part_twice", "proofs/certificates/combine.py", "if part[0] in seen:",
             "if part[0] in seen and False:", "shard_combination_is_exact", 4, "an orbit part counted twice"),
    # duplicate-copy merging (theory/merge_copies.py)
    Mutation("copies_share_within_down_set", "theory/merge_copies.py",
             "taken = {images[d] for d in range(c) if ups[i][c] & ups[i][d]}", "taken = set()",
             "copy_choice_is_minimum", 4, "two nodes of one down-set share a merged node"),
    Mutation("copies_needed_skips_node_itself", "theory/merge_copies.py", "if acc >> d & 1:",
             "if acc >> d & 1 and d != c:", "copy_choice_is_minimum", 4, "the lower bound leaves out the top node"),
    Mutation("copies_excess_counts_needed", "theory/merge_copies.py", "grew = made[g] > need.get(g, 0)",
             "grew = made[g] >= need.get(g, 0)", "copy_choice_is_minimum", 4,
             "every needed copy counted as excess: the search stops short of the minimum"),
    # the symbolic tracer (solvers/symbolic/)
    Mutation("symbolic_le_strict", "solvers/symbolic/terms/bits.py",
             '_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,',
             '_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a < b, ">": lambda a, b: a > b,',
             "symbolic_forms_match_programs", 4),
    Mutation("symbolic_xor_as_or", "solvers/symbolic/terms/bits.py",
             'logic = {"&": z3.And, "|": z3.Or, "^": z3.Xor}[op]', 'logic = {"&": z3.And, "|": z3.Or, "^": z3.Or}[op]',
             "symbolic_forms_match_programs", 4),
    Mutation("tracer_logical_and_as_or", "solvers/symbolic/terms/functions.py",
             'e = {"and": z3.And, "or": z3.Or, "xor": z3.Xor}[op](*terms)',
             'e = {"and": z3.Or, "or": z3.Or, "xor": z3.Xor}[op](*terms)',
             "symbolic_forms_match_programs", 4, "np.logical_and traced as an or"),
    Mutation("tracer_skips_first_alternative", "solvers/symbolic/trace/paths.py",
             "for i in range(len(prefix), len(decisions)):", "for i in range(len(prefix) + 1, len(decisions)):",
             "symbolic_forms_match_programs", 4, "the first alternative branch of every path never run"),
    Mutation("symbolic_prefix_below_n", "solvers/symbolic/catalog/traced.py",
             '"prefix_lm": (_prefix_lm, ("prefix",), None, None, lambda n, prefix: [prefix <= n]),',
             '"prefix_lm": (_prefix_lm, ("prefix",), None, None, lambda n, prefix: [prefix < n]),',
             "symbolic_forms_match_programs", 4, "the side condition refuses a prefix of the whole length"),
    Mutation("symbolic_heads_one_short", "solvers/symbolic/mask.py",
             "formula = z3.Or([z3.substitute(formula, (h, z3.IntVal(i))) for i in range(heads)])",
             "formula = z3.Or([z3.substitute(formula, (h, z3.IntVal(i))) for i in range(heads - 1)])",
             "symbolic_forms_match_programs", 4, "the union over heads leaves out the last head"),
)

ENGINE_AREAS = {  # issue 20, item 8: each file of an engine `prove all` did not cover, and the theorem now covering it
    "theory/stack.py": "stack_flow_matches_products", "theory/stack_leak.py": "stack_flow_matches_products",
    "theory/inputs/arrays.py": "mask_arrays_read_as_defined", "solvers/orbits.py": "orbit_enumeration_covers_every_mask",
    "solvers/preorders.py": "orbit_enumeration_covers_every_mask",
    "proofs/orbit_cover.py": "orbit_enumeration_covers_every_mask",
    "proofs/orbits_check.py": "orbit_enumeration_covers_every_mask",
    "proofs/certificates/combine.py": "shard_combination_is_exact", "theory/merge_copies.py": "copy_choice_is_minimum",
    "solvers/symbolic/": "symbolic_forms_match_programs",
}

PROVE_MISSES = {  # caught by their tests, not by `prove all --n 4 --method both` (the benchmark says why)
    "z3_powers_start_at_a", "z3_leak_walk_reversed", "document_causal_strict",
}


def by_name(name: str) -> Mutation:
    return next(m for m in MUTATIONS if m.name == name)


def line_of(mutation: Mutation) -> int:
    """The line number (from 1) of the mutated line in this checkout (0 when it is not there exactly once)."""
    lines = (ROOT / mutation.path).read_text().split("\n")
    hits = [i for i, line in enumerate(lines) if line.strip() == mutation.original.strip()]
    return hits[0] + 1 if len(hits) == 1 else 0


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


def mutated_copy(mutation: Mutation | None, dest: Path, *, with_tests: bool = False) -> Path:
    """A copy of the kit under ``dest`` with ``mutation`` applied (None: the clean kit).

    ``with_tests``: also the test suite and what it reads (README, docs, pyproject),
    and the repository's folder names (``theory/`` …) as links to the installed ones,
    so that tests reading the sources by their repository path see the mutated file.
    """
    copy_kit(dest)
    if mutation is not None:
        target = dest / installed_path(mutation.path)
        target.write_text(apply(mutation, target.read_text()))
    if with_tests:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for name in TEST_FILES:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, dest / name, ignore=ignore, dirs_exist_ok=True)
            elif source.exists():
                shutil.copy(source, dest / name)
        for folder, target in PACKAGES.items():
            if folder != target:
                (dest / folder).symlink_to(dest / target, target_is_directory=True)
    return dest


TEST_FILES = ("tests", "README.md", "docs", "pyproject.toml", "benchmarks")  # what the tests read besides the kit


def run_tests(copy: Path, args: tuple[str, ...] | list[str], timeout: float = 1800) -> subprocess.CompletedProcess:
    """``pytest -q -m "not slow" ARGS`` in a copy made ``with_tests`` (exit 0: every selected test passed)."""
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not slow", *args]
    return subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)


def run_kit(copy: Path, *args: str, module: str = "hasse", timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` on the kit in ``copy`` (its own PYTHONPATH, no bytecode written)."""
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=timeout)


def run_proof(copy: Path, theorem: str, n: int, method: str = "exhaustive", timeout: float = 600):
    """The proof script of ``theorem`` on the kit in ``copy``: ``python -m hasse.proofs.<theorem> --json``."""
    return run_kit(copy, "--n", str(n), "--method", method, "--json", module=f"hasse.proofs.{theorem}",
                   timeout=timeout)


# ---- issue 21: semantic bugs planted in the symbolic prover (tests/test_tracer_mutations.py) ----------------
# Each is caught by the adversarial corpus judged against brute force (never by a theorem: theorem "", n 0).
# Entries named "group:part" are planted together.
TRACER_MUTATIONS = (
    Mutation("floor_as_trunc", "solvers/symbolic/terms/arithmetic.py",
             "return _floor_div(x, y, yl, yh), lo, hi", "return _trunc_div(x, y, xl, xh, yl, yh), lo, hi",
             "", 0, "'//' on tensors modelled as truncation (C division) instead of torch's floor",
             tests=("tests/test_tracer_mutations.py",)),
    Mutation("int64_no_wrap", "solvers/symbolic/terms/promote.py",
             "return _wrap(expr, BITS[dtype]), low, high", "return expr, lo, hi",
             "", 0, "int64/int32 results never wrap (Z3 integers): q * 2**62 >= kv * 2**62 reads as causal",
             tests=("tests/test_tracer_mutations.py",)),
    Mutation("bool_sum_as_int", "solvers/symbolic/terms/arithmetic.py",
             "return SymBool(z3.Or(A.expr, B.expr), tracer, BOOL)",
             "return SymInt(z3.If(A.expr, 1, 0) + z3.If(B.expr, 1, 0), tracer, INT64)",
             "", 0, "bool + bool as integer addition (torch gives a bool: a logical or)",
             tests=("tests/test_tracer_mutations.py",)),
    Mutation("obligation_as_hypothesis:facts", "solvers/symbolic/mask.py", "out = []",
             "out = [z3.substitute(ob, (self.q, _term(q)), (self.k, _term(k))) for ob, _w in self.obligations "
             "for q, k in pairs]",
             "", 0, "the obligations (a divisor is not 0 …) added to every query as hypotheses",
             tests=("tests/test_tracer_mutations.py",)),
    Mutation("obligation_as_hypothesis:skip", "solvers/symbolic/claims/obligations.py", "if not mask.obligations:", "if True:",
             "", 0, "… and the check that they hold on the whole domain skipped",
             tests=("tests/test_tracer_mutations.py",)),
    Mutation("recheck_reads_formula:program", "solvers/symbolic/catalog/__init__.py",
             "mask.program = MaskModProgram(path, fn, source, code, heads, fallback)", "mask.program = None",
             "", 0, "the re-check evaluates the traced formula, never the user's mask_mod",
             tests=("tests/test_tracer_mutations.py",)),
    Mutation("recheck_reads_formula:bool_sum", "solvers/symbolic/terms/arithmetic.py",
             "return SymBool(z3.Or(A.expr, B.expr), tracer, BOOL)",
             "return SymInt(z3.If(A.expr, 1, 0) + z3.If(B.expr, 1, 0), tracer, INT64)",
             "", 0, "with a tracer bug for the formula re-check to miss", tests=("tests/test_tracer_mutations.py",)),
)

"""``hasse demo``: the built-in tour. Needs no input; every claim it prints is checked.

Exit status 0 when every check holds, 1 otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hasse.cli.parsers import add_command
from hasse.views.output import add_ascii_argument
from hasse.theory.analysis import MaskAnalysis, mask_to_analysis
from hasse.theory.catalog import build_mask
from hasse.theory.verdicts import PROVED, REFUTED

HELP = "a short tour of the kit on built-in examples (no input needed)"


def register(sub) -> None:
    p = add_command(sub, "demo", HELP, "Analyse the case-study masks of the paper (causal, Block Two-Stream, "
                    "Butterfly), a sparse sliding window and the no-residual negative control, checking each claim "
                    "it prints.")
    add_ascii_argument(p)
    p.set_defaults(run=run)


@dataclass
class Tour:
    ascii: bool = False
    failures: list[str] = field(default_factory=list)

    def check(self, claim: str, holds: bool) -> None:
        mark = ("ok " if self.ascii else "✓ ") if holds else "FAIL "
        print(f"   {mark}{claim}")
        if not holds:
            self.failures.append(claim)


def _section(title: str) -> None:
    print()
    print(title)


def _analyse(spec: str, **kwargs) -> MaskAnalysis:
    named = build_mask(spec)
    return mask_to_analysis(named.matrix, names=named.names, **kwargs)


def _path(task, path, ascii: bool) -> str:
    return (" -> " if ascii else " → ").join(task.names[v] for v in path)


def _leak_section(tour: Tour) -> None:
    from hasse.theory.catalog import build_task
    from hasse.theory.counterexample import find_counterexample
    from hasse.theory.leak import find_leaks

    _section("6. Leak checks: does a supervised position ever see the token it predicts?")
    for spec in ("butterfly:n=6", "block_two_stream:n=8,block=2", "block_two_stream:n=8,block=2,variant=clique"):
        r = find_leaks(build_task(spec))
        tour.check(f"{spec}: leak-free at every depth, target coverage {r.target_coverage:.0%}",
                   r.leak_free and r.target_coverage == 1.0)
    print("   bad designs, each with its smallest counterexample (design.md §4):")
    expected = {  # design: (property, depth)
        "bad_butterfly_self": ("leak", 0),
        "bad_butterfly_crossed": ("leak", 2),
        "bad_block_own_content:block=2": ("leak", 1),
        "bad_mlm_unmasked": ("leak", 0),
    }
    for design, (prop, depth) in expected.items():
        found = find_counterexample(design, 8)
        first = min(found.report.leaks, key=lambda x: x.depth) if found.report else None
        holds = found.property == prop and first is not None and first.depth == depth
        where = f"n = {found.n}, depth {first.depth}: {_path(found.task, first.path, tour.ascii)}" if first else "none"
        tour.check(f"{design}: {prop} at {where}", holds)
    r = find_leaks(build_task("bad_packed_window:lengths=3+3,window=2"))
    first = min(r.isolation, key=lambda x: x.depth) if r.isolation else None
    tour.check("bad_packed_window:lengths=3+3,window=2: document isolation broken at depth "
               f"{first.depth if first else '-'} ({first.source} → {first.position})" if first else
               "bad_packed_window: isolation broken", first is not None and first.depth == 1)
    r = find_leaks(build_task("bad_block_query_history:n=8,block=2"))
    tour.check("bad_block_query_history:n=8,block=2: leak-free — its flaw is inconsistency with inference",
               r.leak_free)


def _merge_section(tour: Tour) -> None:
    import numpy as np

    from hasse.theory.catalog import build_family, build_task
    from hasse.theory.consistency import check_consistency
    from hasse.theory.equivalence import diagrams_isomorphic
    from hasse.theory.labelled import task_to_hasse
    from hasse.theory.merge import family_to_merged_task
    from hasse.theory.task import make_task

    _section("7. Deriving the masks: the minimal merged task of each task family")
    n = 6
    causal = make_task(n, [(f"x{i}", i) for i in range(n - 1)], [i + 1 for i in range(n - 1)],
                       np.tril(np.ones((n - 1, n - 1), dtype=bool)))
    for family, reference, label in (
        (f"ar:n={n}", causal, f"causal attention on n - 1 = {n - 1} positions"),
        ("block:n=8,block=2", build_task("block_two_stream:n=8,block=2"), "Block Two-Stream (chain)"),
        ("block:n=8,block=2,variant=clique", build_task("block_two_stream:n=8,block=2,variant=clique"),
         "Block Two-Stream (clique)"),
        (f"infill:n={n}", build_task(f"butterfly:n={n}"), f"Butterfly, 3n - 2 = {3 * n - 2} positions"),
    ):
        tasks = build_family(family)
        merged = family_to_merged_task(tasks)
        ref = task_to_hasse(reference)
        same = diagrams_isomorphic(task_to_hasse(merged.task), ref)
        tour.check(f"merge({family}): {len(tasks)} tasks, {merged.task_nodes} task nodes -> {merged.groups} "
                   f"groups = {label}", same and merged.groups == merged.nodes == ref.size)
    family = build_family("block:n=8,block=2")
    good = check_consistency(build_task("block_two_stream:n=8,block=2"), family)
    tour.check(f"block_two_stream:n=8,block=2 is consistent with block inference ({good.checked} supervised "
               f"inference nodes matched)", good.consistent)
    bad = check_consistency(build_task("bad_block_query_history:n=8,block=2"), family)
    first = bad.mismatches[0] if bad.mismatches else None
    seen = ", ".join(f"{sym}@{pos}" for sym, pos in first.extra_upstream) if first else ""
    tour.check(f"bad_block_query_history is not: {len(bad.mismatches)} query nodes have no training twin "
               f"(e.g. the query for x{first.target if first else '?'} also sees {seen} in training)",
               not bad.consistent)


def _gpu_section(tour: Tour) -> None:
    """Real attention layers on the CPU (gpu_check), only when torch is installed."""
    from hasse.gpu_check.torch_extra import INSTALL, has_torch

    if not has_torch():
        _section(f"8. Real attention layers: skipped (torch is not installed: {INSTALL})")
        return
    from hasse.gpu_check.check import run_check
    from hasse.gpu_check.config import torch_threads
    from hasse.theory.catalog import build_task

    _section("8. Real attention layers (gpu_check, CPU, float64): gradients vs the theory")
    with torch_threads(1):
        spec = "sliding_window:n=12,w=3"
        r = run_check(build_mask(spec).matrix, 2, "sdpa").report
        tour.check(f"{spec}, 2 layers, SDPA: d out_q / d x_k is nonzero exactly on R(2) "
                   f"({int(r.theory.sum())} of {r.theory.size} pairs), 3 seeds", r.agrees)
        clean = run_check(build_task("butterfly:n=4"), backend="mha")
        tour.check("butterfly:n=4, nn.MultiheadAttention (mask inverted): leak gradients of all "
                   f"{len(clean.leak_gradients)} predictions exactly 0", clean.passed)
        bad = run_check(build_task("bad_butterfly_self:n=4"), backend="sdpa")
        tour.check("bad_butterfly_self:n=4: nonzero leak gradient at every P_k, where `hasse leak` names the leaks",
                   all(g.leaks for g in bad.leak_gradients) and bad.report.agrees and bad.gradients_match_theory)
        wrong = run_check(build_mask("butterfly:n=4").matrix, backend="mha", invert_mha=False).report
        tour.check(f"the kit's mask handed to MultiheadAttention uninverted: {len(wrong.unexpected)} unexpected "
                   "dependencies caught", len(wrong.unexpected) > 0)


def _stack_section(tour: Tour) -> None:
    from hasse.theory.catalog import build_task
    from hasse.theory.stack import propagate
    from hasse.theory.stack_leak import find_stack_leaks
    from hasse.theory.inputs.stacks import build_stack

    _section("5b. Stacks of different masks per layer (hasse analyze gemma3:n=4096; --stack 'causal x3, bidirectional')")
    gemma = build_stack("gemma3:n=4096")
    flow = propagate(gemma)
    tour.check(f"Gemma 3 (5 sliding windows of 1024 keys, then 1 global; 34 layers): the last position first sees "
               f"the first after {flow.first_sight(4095, 0)} layers (5 windows reach 5 x 1023 = 5115 back), and the "
               f"flow has converged by layer {flow.converged} of {gemma.depth}",
               flow.first_sight(4095, 0) == 5 and flow.converged == 5)
    small = propagate(build_stack("gemma3:n=24,scale=256"))  # windows of 4 keys
    tour.check("gemma3 at n = 24 with windows of 4 keys: position 15 sees all it will ever see after 5 layers, "
               "position 16 only at the global layer 6", small.receptive_field()[15] == 5
               and small.receptive_field()[16] == 6)
    stack = build_stack("causal x3, bidirectional", n=6)
    report = find_stack_leaks(build_task("causal_lm:n=6"), stack)
    first = report.leaks[0]
    tour.check(f"next-token prediction through causal x3, bidirectional: clean for 3 layers, leaks at layer "
               f"{first.depth} (position {first.position} reads x{first.target} by a hop of layer "
               f"{first.hop_layers[0]})", not report.leaks_within(3) and first.depth == 4 and first.hop_layers == (4,))


def _audit_section(tour: Tour) -> None:
    """A transformers model's measured flow against the intended mask, only when the hf extra is installed."""
    from hasse.gpu_check.audit.models import INSTALL, has_transformers

    if not has_transformers():
        _section(f"8b. Auditing a transformers model: skipped (transformers is not installed: {INSTALL})")
        return
    from hasse.gpu_check.audit.report import Setup, audit
    from hasse.gpu_check.audit.models import ModelSpec
    from hasse.gpu_check.audit.scenarios import make_scenario
    from hasse.gpu_check.config import torch_threads

    with torch_threads(2):
        clean = audit(Setup(ModelSpec("llama", 2), make_scenario("plain", 6), seeds=2), ["eager", "sdpa"])
        v = clean.versions
        _section(f"8b. Auditing transformers models, hybrids too (hasse audit; transformers {v['transformers']}, torch {v['torch']}, "
                 "random weights, nothing downloaded)")
        tour.check("llama, 2 layers, one plain sequence of 6, eager and sdpa: every output depends on exactly the "
                   "inputs R(2) of the causal mask allows", all(b.clean for b in clean.backends))
        packed = make_scenario("packed", lengths=(1, 1))  # the smallest input: one token per document
        found = audit(Setup(ModelSpec("llama", 2), packed, seeds=2), ["eager", "sdpa"])
        tour.check("llama, two documents 1+1 packed by position_ids [0, 0] without an attention_mask (the smallest "
                   "input): output 1 depends on input 0 at layer 1 in eager and sdpa - documents NOT isolated",
                   all(b.unexpected == ((1, 0),) and b.groups[0].kind == "contamination" and b.groups[0].layer == 1
                       for b in found.backends))
        fixed = audit(Setup(ModelSpec("llama", 2), packed, seeds=2, use_cache=False), ["eager", "sdpa"])
        tour.check("the same with use_cache=False: isolated (the packed-sequence detection runs only without a "
                   "cache; `hasse audit llama --scenario packed --documents 1+1 --no-cache`)",
                   all(b.clean for b in fixed.backends))
        hybrid = audit(Setup(ModelSpec("lfm2", 2), make_scenario("packed", lengths=(3, 4)), seeds=1,
                             use_cache=False), ["eager"])
        (b,) = hybrid.backends
        own = {f.op.path: f.isolated for f in b.operators}
        tour.check("LFM2 (a short convolution layer, then attention), documents 3+4 with use_cache=False: the "
                   "attention keeps them apart, the convolution does not - contamination first at layer 1, through "
                   "layers.0.conv (Lfm2ShortConv)",
                   b.groups[0].operator == "layers.0.conv (Lfm2ShortConv)" and b.groups[0].layer == 1
                   and own.get("layers.0.conv") is False and own.get("layers.1.self_attn") is True)


def _every_length_section(tour: Tour) -> None:
    from hasse.solvers.symbolic.catalog import symbolic_mask
    from hasse.solvers.symbolic.claims import check_equivalence, prove_dense, prove_leak_free
    from hasse.solvers.symbolic.tasks import symbolic_task

    _section("10. Proofs for every length (hasse prove-mask, hasse equiv): Z3 over a symbolic n")
    v = prove_leak_free(symbolic_task("butterfly"))
    tour.check(f"Butterfly {v.statement}: {v.verdict}", v.verdict == PROVED)
    v = prove_leak_free(symbolic_task("block_two_stream"))
    tour.check(f"Block Two-Stream {v.statement}: {v.verdict}", v.verdict == PROVED)
    v = prove_dense(symbolic_mask("sliding_window"))
    tour.check(f"a sliding window is not dense: {v.verdict}, smallest n = {v.counterexample['n']} "
               f"(re-check: {v.recheck})", v.verdict == REFUTED and v.counterexample["n"] == 3)
    v = check_equivalence(symbolic_mask("sliding_window:w=W"), symbolic_mask("sliding_window_distance:d=W"))
    tour.check(f"'a window of W keys' and 'a window of distance W' differ: smallest n = {v.counterexample['n']}",
               v.verdict == REFUTED and v.counterexample["n"] == 2)
    v = prove_leak_free(symbolic_task("bad_butterfly_crossed"), layers=2)
    tour.check(f"bad_butterfly_crossed leaks within 2 layers from n = {v.counterexample['n']} on, as the concrete "
               "search finds", v.verdict == REFUTED and v.counterexample["n"] == 2)


def _synthesis_section(tour: Tour) -> None:
    from hasse.solvers.symbolic.claim_runs import prove_claim
    from hasse.solvers.synthesis import brute_force_minimum, optimise
    from hasse.theory.spanner_formulas import chain_lower_bound, formula_designs
    from hasse.theory.spanners import chain_target
    from hasse.theory.synthesis import realises

    _section("11. Designing the cheapest mask for a depth budget (hasse synthesize)")
    best, brute = optimise(chain_target(6), 2), brute_force_minimum(chain_target(6), 2)
    tour.check(f"causal:n=6 within 2 layers: the optimum ({best.engine}) has {best.cost} pairs, the brute force "
               f"over every mask finds {brute.minimum}", best.status == "optimal" and best.cost == brute.minimum)
    n = 1024
    design = min(formula_designs(chain_target(n), 2), key=lambda d: d.pairs)
    dense = n * (n - 1) // 2
    tour.check(f"{design.spec}: {design.pairs:,} pairs ({dense / design.pairs:.0f}x fewer than dense), "
               f"{design.pairs / chain_lower_bound(n):.2f}x the proved 2-hop lower bound; realises causal:n={n}",
               realises(design.mask, chain_target(n), 2))
    run = prove_claim("realises", "sparse_causal:layers=2", timeout=60)
    tour.check(f"sparse_causal:layers=2 realises causal {run.verdict.statement}: {run.verdict.verdict}",
               run.verdict.verdict == PROVED)


def _prove_section(tour: Tour) -> None:
    import time

    from hasse.proofs import registry
    from hasse.proofs.cli import prove
    from hasse.proofs.theorem import disagreement

    _section("9. The theorems for n = 4, each by exhaustive search and by Z3 (hasse prove all --n 4 --method both)")
    start = time.monotonic()
    for name in registry.NAMES:
        results = prove(registry.get(name), 4, "both", timeout=120, show_progress=False)
        verdicts = ", ".join(f"{r.method} {r.verdict} ({r.checked:,} checked, {r.seconds:.1f} s)" for r in results)
        tour.check(f"{name}: {verdicts}",
                   all(r.verdict == PROVED for r in results) and disagreement(results) is None)
    print(f"   ({time.monotonic() - start:.0f} s in all)")


def run(args) -> int:
    from hasse.views.render_text import matrix_view

    tour = Tour(ascii=args.ascii)
    print("hasse demo: attention masks as partial orders (Li & Guo, Hasse Diagrams for Attention)")
    print("M[q, k] = 1 iff query q attends key k; with the residual, information flows k -> q one hop per layer.")

    n = 6
    _section(f"1. Causal attention, causal:n={n}")
    a = _analyse(f"causal:n={n}")
    tour.check(f"{len(a.classes)} classes, one per position, in one chain of height {a.height}: a total order",
               len(a.classes) == n and a.height == n and len(a.hasse_edges) == n - 1)
    tour.check(f"dense: one layer realises the whole limit (L* = {a.convergence_depth})",
               a.dense and a.convergence_depth == 1)

    n = 4
    _section(f"2. Butterfly Attention, butterfly:n={n} (forward F, backward B, prediction P streams)")
    a = _analyse(f"butterfly:n={n}")
    print(matrix_view(a.mask, names=a.names, ascii=args.ascii))
    tour.check(f"3n - 2 = {a.n} positions, every one its own class", a.n == 3 * n - 2 and len(a.classes) == a.n)
    tour.check(f"dense, convergence depth {a.convergence_depth}", a.dense and a.convergence_depth == 1)
    p_top = all(not any(lo == a.classes.index((p,)) for lo, _ in a.hasse_edges)
                for p in range(2 * n - 2, 3 * n - 2))
    tour.check("every prediction node P_k is maximal: nothing reads a prediction", p_top)

    n, block = 8, 2
    for variant in ("chain", "clique"):
        spec = f"block_two_stream:n={n},block={block},variant={variant}"
        _section(f"3{'ab'[variant == 'clique']}. Block Two-Stream Attention, {spec}")
        a = _analyse(spec)
        tour.check(f"2n - l = {a.n} positions (content C, queries Q)", a.n == 2 * n - block)
        tour.check(f"dense, depth {a.convergence_depth}, height {a.height}", a.dense and a.convergence_depth == 1)
        multi = [c for c in a.classes if len(c) > 1]
        expect_multi = (n // block) if variant == "clique" else 0
        tour.check(f"{len(multi)} classes of mutually visible queries ({variant} within a block)",
                   len(multi) == expect_multi)

    n, w = 12, 3
    _section(f"4. A sparse realisation: sliding_window:n={n},w={w}")
    a = _analyse(f"sliding_window:n={n},w={w}", layers=2)
    expected = math.ceil((n - 1) / (w - 1))
    tour.check(f"not dense: the last position sees the first only after L* = {a.convergence_depth} layers "
               f"(= ceil((n-1)/(w-1)) = {expected})", not a.dense and a.convergence_depth == expected)
    tour.check(f"after 2 layers each query sees {2 * (w - 1) + 1} positions at most",
               int(a.reachability.sum(axis=1).max()) == 2 * (w - 1) + 1)

    _section("5. Negative control: the 2x2 swap without the residual connection")
    swap = np.array([[0, 1], [1, 0]], dtype=bool)
    a = mask_to_analysis(swap, residual=False)
    tour.check(f"M^L alternates forever: pre-period {a.preperiod}, period {a.period}, no limit",
               a.period == 2 and a.convergence_depth is None)
    b = mask_to_analysis(swap)
    tour.check(f"with the residual it converges at depth {b.convergence_depth} to one class {{0, 1}}",
               b.convergence_depth == 1 and b.classes == ((0, 1),))

    _stack_section(tour)
    _leak_section(tour)
    _merge_section(tour)
    _gpu_section(tour)
    _audit_section(tour)
    _prove_section(tour)
    _every_length_section(tour)
    _synthesis_section(tour)

    print()
    if tour.failures:
        print(f"demo: {len(tour.failures)} check(s) FAILED")
        return 1
    print("demo: every check holds. Next: `hasse catalog`, `hasse analyze butterfly:n=6 --png b.png`, "
          "`hasse leak bad_butterfly_crossed:n=4`.")
    return 0

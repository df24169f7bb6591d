"""Proofs for every length (issue 13): each catalogue claim's time beside the largest n the concrete check reaches.

``python -m benchmarks.bench_symbolic`` (``--repeats K``, ``--only SUBSTRING``, ``--budget-factor F``).

For each claim the symbolic command (``hasse prove-mask`` / ``hasse equiv`` with ``--json``,
in-process: tracing, the Z3 queries, the smallest-n search and the concrete re-check
included) is timed, best of ``--repeats``. Then the *same statement* is checked concretely,
n = 1, 2, 3, … and, at each n, every value of the parameters the spec left symbolic (a
spec the catalogue refuses is outside the side conditions and skipped; index tensors
enumerated: every permutation for XLNet, every list of document lengths for packing,
every masked set for MLM): ``theory.order.mask_to_order(…).dense`` for dense,
``theory.leak.find_leaks`` (in the limit, or within L layers) for leak-free and
isolation, equality of the two concrete matrices for equiv. Reported: the largest N such
that every n <= N was checked within the symbolic claim's time (times ``--budget-factor``,
default 1), or, for a refuted claim, the n at which the concrete sweep meets its first
counterexample and the seconds it took. For the case studies, also the largest N with
``hasse prove``'s theorem for the same claim proved at every n <= N (each method) in that
time. The symbolic claim covers every n; the concrete sweeps, whatever their N, n <= N only.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import time

import numpy as np

from benchmarks._timing import best_time
from tests.cases import compositions

MAX_N = 64  # the sweep never goes beyond


def _divisors_and_more(n: int) -> range:
    return range(0, n + 2)  # parameter values tried at n (the catalogue refuses those outside its conditions)


def _compositions(n: int):
    return ("+".join(map(str, parts)) for parts in compositions(n))


def _subsets(n: int):
    for r in range(1, n + 1):
        for s in itertools.combinations(range(n), r):
            yield "+".join(map(str, s))


# (label, argv of the symbolic command, kind of concrete check, specs at n, layers)
def claims():
    p = _divisors_and_more
    return [
        ("causal dense", ["prove-mask", "causal", "--claim", "dense"], "dense",
         lambda n: [f"causal:n={n}"], None),
        ("bidirectional dense", ["prove-mask", "bidirectional", "--claim", "dense"], "dense",
         lambda n: [f"bidirectional:n={n}"], None),
        ("block_causal dense (all l)", ["prove-mask", "block_causal", "--claim", "dense"], "dense",
         lambda n: [f"block_causal:n={n},block={b}" for b in p(n)], None),
        ("prefix_lm dense (all prefixes)", ["prove-mask", "prefix_lm", "--claim", "dense"], "dense",
         lambda n: [f"prefix_lm:n={n},prefix={b}" for b in p(n)], None),
        ("sliding_window dense (all w): refuted", ["prove-mask", "sliding_window", "--claim", "dense"], "dense",
         lambda n: [f"sliding_window:n={n},window={w}" for w in p(n)], None),
        ("butterfly leak-free, every depth", ["prove-mask", "butterfly", "--claim", "leak-free"], "leak",
         lambda n: [f"butterfly:n={n}"], None),
        ("block_two_stream chain leak-free (all l)", ["prove-mask", "block_two_stream", "--claim", "leak-free"],
         "leak", lambda n: [f"block_two_stream:n={n},block={b}" for b in p(n)], None),
        ("block_two_stream clique leak-free (all l)",
         ["prove-mask", "block_two_stream:variant=clique", "--claim", "leak-free"], "leak",
         lambda n: [f"block_two_stream:n={n},block={b},variant=clique" for b in p(n)], None),
        ("bd3lm leak-free (all l)", ["prove-mask", "bd3lm", "--claim", "leak-free"], "leak",
         lambda n: [f"bd3lm:n={n},block={b}" for b in p(n)], None),
        ("xlnet leak-free (every permutation)", ["prove-mask", "xlnet", "--claim", "leak-free"], "leak",
         lambda n: ("xlnet:order=" + "+".join(map(str, o)) for o in itertools.permutations(range(n))), None),
        ("causal_lm through sliding_window:w=8", ["prove-mask", "sliding_window:w=8", "--claim", "leak-free",
                                                  "--task", "causal_lm"], "leak-through",
         lambda n: [(f"causal_lm:n={n}", f"sliding_window:n={n},window=8")], None),
        ("mlm leak-free (every masked set)", ["prove-mask", "mlm", "--claim", "leak-free"], "leak",
         lambda n: (f"mlm:n={n},masked={s}" for s in _subsets(n)), None),
        ("packed isolation (all lengths, windows)", ["prove-mask", "packed", "--claim", "isolation"], "isolation",
         lambda n: (f"packed:lengths={c}" + (f",window={w}" if w else "") for c in _compositions(n)
                    for w in range(0, n + 2)), None),
        ("bad_butterfly_crossed, 2 layers: refuted",
         ["prove-mask", "bad_butterfly_crossed", "--claim", "leak-free", "--layers", "2"], "leak",
         lambda n: [f"bad_butterfly_crossed:n={n}"], 2),
        ("bad_butterfly_crossed, every depth: refuted",
         ["prove-mask", "bad_butterfly_crossed", "--claim", "leak-free"], "leak",
         lambda n: [f"bad_butterfly_crossed:n={n}"], None),
        ("bad_mlm_unmasked, every depth: refuted", ["prove-mask", "bad_mlm_unmasked", "--claim", "leak-free"], "leak",
         lambda n: [f"bad_mlm_unmasked:n={n}"], None),
        ("bad_block_own_content, 1 layer: refuted",
         ["prove-mask", "bad_block_own_content", "--claim", "leak-free", "--layers", "1"], "leak",
         lambda n: [f"bad_block_own_content:n={n},block={b}" for b in p(n)], 1),
        ("bad_packed_window isolation, every depth: refuted",
         ["prove-mask", "bad_packed_window", "--claim", "isolation"], "isolation",
         lambda n: (f"bad_packed_window:lengths={c},window={w}" for c in _compositions(n) for w in range(1, n + 2)),
         None),
        ("planted mask_mod (wrong from n = 37) dense: refuted", ["prove-mask", f"{_planted()}:mask", "--claim", "dense"],
         "dense-grid", lambda n: [_planted_grid(n)], None),
        ("equiv window w=4 vs distance d=3", ["equiv", "sliding_window:w=4", "sliding_window_distance:d=3"], "equiv",
         lambda n: [(f"sliding_window:n={n},window=4", f"sliding_window_distance:n={n},d=3")], None),
        ("equiv window w=3 vs distance d=3: refuted", ["equiv", "sliding_window:w=3", "sliding_window_distance:d=3"],
         "equiv", lambda n: [(f"sliding_window:n={n},window=3", f"sliding_window_distance:n={n},d=3")], None),
        ("equiv mask_mods kv <= q < 1000, two spellings (issue 21: 167 s)",
         ["equiv", f"{_limited()}:limited", f"{_limited()}:limited2"], "equiv-grid",
         lambda n: [(_limited_grid(n), _limited_grid(n, 999))], None),
    ]


LIMITED = """def limited(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & (q_idx < 1000)


def limited2(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx >= 0) & (999 >= q_idx)
"""


def _limited() -> str:
    """Two spellings of a causal mask limited to the first 1,000 queries (issue 21's slow re-check), as a file."""
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="bench_symbolic."), "limited.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(LIMITED)
    return path


def _limited_grid(n: int, last: int = 1000) -> np.ndarray:
    q, k = np.arange(n)[:, None], np.arange(n)[None, :]
    return (k <= q) & ((q < last) if last == 1000 else (q <= last))


PLANTED = """def mask(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) & ((q_idx < 36) | (kv_idx > 0))
"""


def _planted() -> str:
    """The README's planted mask_mod, written to a temporary file (its path)."""
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="bench_symbolic."), "planted.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(PLANTED)
    return path


def _planted_grid(n: int) -> np.ndarray:
    q, k = np.arange(n)[:, None], np.arange(n)[None, :]
    return (k <= q) & ((q < 36) | (k > 0))


def symbolic(argv: list[str]) -> dict:
    from hasse.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([*argv, "--json"])
    if code == 2:
        raise RuntimeError(f"hasse {' '.join(argv)}: exit 2")
    return json.loads(out.getvalue())


def concrete_holds(kind: str, spec, layers: int | None) -> bool | None:
    """The statement at one concrete instance: True / False, None when the catalogue refuses the spec."""
    from hasse.theory.catalog import build_mask, build_task
    from hasse.theory.errors import InputError
    from hasse.theory.leak import find_leaks
    from hasse.theory.order import mask_to_order

    try:
        if kind == "dense-grid":
            return bool(mask_to_order(spec).dense)
        if kind == "dense":
            return bool(mask_to_order(np.asarray(build_mask(spec).matrix)).dense)
        if kind == "equiv-grid":
            a, b = spec
            return a.shape == b.shape and bool((a == b).all())
        if kind == "equiv":
            a, b = (np.asarray(build_mask(s).matrix) for s in spec)
            return a.shape == b.shape and bool((a == b).all())
        if kind == "leak-through":
            import dataclasses

            task = build_task(spec[0])
            task = dataclasses.replace(task, mask=np.asarray(build_mask(spec[1]).matrix))
            return not find_leaks(task, layers).leaks
        report = find_leaks(build_task(spec), layers)
        return not (report.isolation if kind == "isolation" else report.leaks)
    except (InputError, ValueError):
        return None


def concrete_sweep(kind: str, specs_at, layers: int | None, budget: float) -> dict:
    """n = 1, 2, … within ``budget`` seconds: the largest n fully checked, or the first counterexample."""
    start = time.perf_counter()
    reached = 0
    for n in range(1, MAX_N + 1):
        for spec in specs_at(n):
            if concrete_holds(kind, spec, layers) is False:
                return {"reached": reached, "counterexample_n": n, "seconds": time.perf_counter() - start}
            if time.perf_counter() - start > budget:
                return {"reached": reached, "counterexample_n": None, "seconds": time.perf_counter() - start}
        reached = n
        if time.perf_counter() - start > budget:
            break
    return {"reached": reached, "counterexample_n": None, "seconds": time.perf_counter() - start}


# the case-study theorems of `hasse prove` that state the same claim at one n (design.md §5)
PROVE_THEOREMS = {
    "butterfly leak-free, every depth": "butterfly_is_leak_free_with_full_coverage",
    "block_two_stream chain leak-free (all l)": "block_two_stream_is_leak_free_and_consistent",
}


def prove_sweep(name: str, method: str, budget: float) -> int:
    """The largest N with ``hasse prove NAME --n n --method METHOD`` proved for every n <= N within ``budget`` s."""
    from hasse.proofs import registry
    from hasse.proofs.theorem import Context, run_theorem

    theorem = registry.get(name)
    run_theorem(theorem, theorem.min_n, method, Context())  # warm up (imports, first Z3 context), not timed
    start, reached = time.perf_counter(), 0
    for n in range(theorem.min_n, MAX_N + 1):
        if run_theorem(theorem, n, method, Context()).verdict != "proved" or time.perf_counter() - start > budget:
            break
        reached = n
    return reached


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--budget-factor", type=float, default=1.0)
    args = ap.parse_args(argv)
    print("| claim | symbolic: verdict, s | smallest n | concrete, same time | hasse prove (exhaustive / z3), same time |")
    print("|---|---|---|---|---|")
    for label, cmd, kind, specs_at, layers in claims():
        if args.only and args.only not in label:
            continue
        seconds, data = best_time(lambda: symbolic(cmd), args.repeats)
        cx = (data.get("counterexample") or {}).get("n")
        sweep = concrete_sweep(kind, specs_at, layers, seconds * args.budget_factor)
        if sweep["counterexample_n"] is not None:
            conc = f"finds it at n = {sweep['counterexample_n']} ({sweep['seconds']:.3f} s)"
        else:
            conc = f"every n <= {sweep['reached']}" if sweep["reached"] else "not even n = 1"
            if sweep["reached"] == MAX_N:
                conc += f" (the sweep's cap, in {sweep['seconds']:.3f} s)"
        flag = "" if seconds <= 10 else " (over 10 s)"
        prove = "-"
        if label in PROVE_THEOREMS:
            budget = seconds * args.budget_factor
            prove = " / ".join(f"n <= {prove_sweep(PROVE_THEOREMS[label], m, budget)}" for m in ("exhaustive", "z3"))
            prove = f"`{PROVE_THEOREMS[label]}`: {prove}"
        print(f"| {label} | {data['verdict']}, {seconds:.3f}{flag} | {cx if cx is not None else '-'} | {conc} "
              f"| {prove} |", flush=True)


if __name__ == "__main__":
    main()

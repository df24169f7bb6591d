"""What ``hasse synthesize`` prints and writes: the report, its JSON object, the gpu-check verdict and the picture.

The design comes from :func:`hasse.solvers.synthesis.design.synthesize`; its leak and
prove-mask verdicts are computed there. The third verdict, real attention layers on the
kernel mask (:func:`gpu_verdict`), needs torch, so it is computed here, above both
``solvers`` and ``gpu_check``, by the command and the API alike.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from hasse.solvers.synthesis.design import Design, Verdict

CPU_WORK = 1 << 32  # hasse gpu-check's CPU limit: n^3 x seeds x layers
MASK_IN_JSON = 256  # the kernel mask's rows are in the JSON object up to this many positions
MATRIX_VIEW = 48  # the report draws the target and the mask as text up to this many positions


def _tiles(t) -> str:
    full, partial = (int(v) for v in t)
    return f"{full + partial} tiles ({full} full, {partial} partial)"


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3g}x" if b else "-"


def _handmade_line(h, layers: int, design: Design) -> str:
    name, parameter = getattr(h, "name", "?"), getattr(h, "parameter", "")
    what = f"{name} ({parameter})" if parameter else name
    if not getattr(h, "realises", False):
        depth = getattr(h, "depth", None)
        needs = f"; needs depth {depth}" if depth is not None else "; never (at any depth)"
        return f"  {what}: does not realise T within {layers} layer(s){needs}"
    pairs, tiles = int(getattr(h, "pairs", 0)), getattr(h, "tiles", (0, 0))
    tiles_text = _tiles(tiles) if isinstance(tiles, (tuple, list)) else f"{tiles} tiles"
    mine = design.pairs
    return f"  {what}: {pairs:,} pairs, {tiles_text}; the design has {_ratio(mine, pairs)} its pairs"


def report(design: Design, label: str, written: list[str] = (), *, ascii: bool = False) -> str:
    """The text report (see ``hasse synthesize --help``)."""
    from hasse.views.render_text import matrix_view

    d = design
    n = d.n
    lines = [f"target {label}: n = {n} positions, {d.dense_pairs:,} off-diagonal pairs (its dense mask), "
             f"depth budget L = {d.layers}"]
    how = {"optimal": "the exact optimum", "formula": "a closed formula (every n)",
           "construction": "a construction from the target's structure (checked at this n)",
           "heuristic": "the heuristic", "unknown": "UNKNOWN: the exact search ran out of time; the best mask found"}
    cost_text = f"{d.cost:,} {'pairs' if d.kind == 'pairs' else f'non-empty {d.block} x {d.block} tiles'}"
    lines.append(f"design: {how[d.method]} ({d.engine}); cost {cost_text}, of M (no diagonal)")
    bound = (f"lower bound {d.lower_bound:,} ({d.bound_how})" if d.lower_bound else "lower bound 0 (none proved)")
    verdict = "optimal: no mask is cheaper" if d.optimal else f"gap {d.gap:,}"
    lines.append(f"  {bound}; {verdict}; {d.seconds:.2f} s")
    if d.formula is not None:
        lines.append(f"  formula: {d.formula.spec} (target {d.formula.target_spec}, its own depth {d.formula.layers})")
    if d.structure is not None:
        lines.append(f"  structure: {d.structure}")
    others = [c for c in d.candidates if not (c.method == d.method and c.engine == d.engine
                                              and c.spec == getattr(d.formula, "spec", None))]
    for c in others:
        what = f"formula {c.spec}" if c.method == "formula" else f"{c.method} ({c.engine})"
        bound_c = "" if c.lower_bound is None else f", lower bound {c.lower_bound:,}"
        lines.append(f"  also: {what}: cost {c.cost:,}{bound_c}")
    lines += ["", f"{'':18}{'pairs':>12}  tiles of {d.block} x {d.block}",
              f"{'design M':18}{d.pairs:>12,}  {_tiles(d.tiles)}",
              f"{'as written (M|I)':18}{d.pairs + n:>12,}  {_tiles(d.kernel_tiles)}",
              f"{'dense T':18}{d.dense_pairs:>12,}  {_tiles(d.dense_tiles)}",
              f"ratio to dense: pairs {_ratio(d.pairs, d.dense_pairs)}, tiles as written "
              f"{_ratio(sum(d.kernel_tiles), sum(d.dense_tiles))}"]
    if d.handmade:
        lines.append(f"hand-made sparse patterns at depth {d.layers} (each intersected with T):")
        lines += [_handmade_line(h, d.layers, d) for h in d.handmade]
    lines.append(f"convergence depth: {d.depth} (the mask realises T within {d.depth} layer(s), so within every "
                 f"L >= {d.depth})")
    if d.permutation is not None:
        shown = ", ".join(map(str, d.permutation[:32])) + (", ..." if n > 32 else "")
        before = f"; non-empty tiles of M in the order given: {d.tiles_before}" if d.tiles_before else ""
        lines.append(f"relabelled: new position i holds old position perm[i]: [{shown}]{before}")
    lines.append("verdicts:")
    lines += [f"  {v.name}: {v.line}" for v in d.verdicts]
    if d.failed:
        lines.append("FAILED VERDICT: a synthesised mask the kit itself refutes is a bug of the kit; please report it")
    if n <= MATRIX_VIEW:
        lines += ["", "the mask as written (M or I); light cells: pairs of T it reaches in more hops",
                  matrix_view(d.kernel_mask, reach=d.target, ascii=ascii)]
    for what, path in written:
        lines.append(f"{what} written to {path}")
        if what == "mask_mod" and d.formula is not None:
            lines.append(_prove_hint(d.formula, path))
    return "\n".join(lines)


def _prove_hint(formula, path: str) -> str:
    """How to prove the file as written: the causal, block-causal, chunked and prefix-LM formulas are size-free
    (their file, for every n, against the target without n); the others bake their size in, so their formula is
    proved for every n through the catalogue spec."""
    name, _, given = formula.target_spec.partition(":")
    if name in ("causal", "block_causal", "chunked", "prefix_lm"):
        rest = ",".join(p for p in given.split(",") if not p.startswith("n="))
        return (f"  prove the file as written, for every n: hasse prove-mask {path}:mask_mod --claim realises "
                f"--target {name + (':' + rest if rest else '')} --layers {formula.layers} --witness {path}:witness")
    spec = ",".join(p for p in formula.spec.split(":", 1)[1].split(",") if not p.startswith("n="))
    return (f"  the file is {formula.spec} at this size; for every n: hasse prove-mask "
            f"{formula.spec.split(':')[0]}:{spec} --claim realises")


def design_json(design: Design) -> dict:
    """The fields of ``hasse synthesize --json`` after the header (docs/schema.json, ``synthesize``)."""
    d = design
    f = d.formula

    def tiles(t):
        return {"full": int(t[0]), "partial": int(t[1])}

    handmade = []
    for h in d.handmade:
        t = getattr(h, "tiles", None)
        handmade.append({"name": str(h.name), "parameter": str(getattr(h, "parameter", "")),
                         "realises": bool(h.realises), "depth": getattr(h, "depth", None),
                         "pairs": int(h.pairs) if h.realises and h.pairs is not None else None,
                         "tiles": tiles(t) if h.realises and isinstance(t, (tuple, list)) else None})
    return {
        "positions": d.n, "layers": d.layers, "kind": d.kind, "block": d.block, "method": d.method,
        "optimal": d.optimal, "cost": d.cost, "lower_bound": d.lower_bound, "bound_how": d.bound_how, "gap": d.gap,
        "seconds": d.seconds, "engine": d.engine, "pairs": d.pairs, "tiles": tiles(d.tiles),
        "kernel_pairs": d.pairs + d.n, "kernel_tiles": tiles(d.kernel_tiles),
        "dense": {"pairs": d.dense_pairs, "tiles": tiles(d.dense_tiles)}, "depth": d.depth,
        "formula": None if f is None else {"spec": f.spec, "target_spec": f.target_spec, "layers": int(f.layers)},
        "structure": d.structure,
        "permutation": None if d.permutation is None else list(d.permutation), "tiles_before": d.tiles_before,
        "handmade": handmade, "candidates": [c.to_json() for c in d.candidates],
        "verdicts": [v.to_json() for v in d.verdicts],
        "mask": d.kernel_mask if d.n <= MASK_IN_JSON else None,
    }


def _smaller_formula(spec: str, layers: int) -> tuple[str, int] | None:
    """The formula's spec at the largest ``n`` whose positions fit the CPU limit (None: no ``n=`` or none fits)."""
    from hasse.theory.catalog import build_mask

    found = re.search(r"(?<![a-z_])n=(\d+)", spec)
    if not found:
        return None
    n = int(found.group(1))
    at = lambda k: spec[:found.start(1)] + str(k) + spec[found.end(1):]  # noqa: E731
    while n >= 1:
        size = build_mask(at(n)).matrix.shape[0]
        if size ** 3 * layers <= CPU_WORK:
            return at(n), size
        n = min(n - 1, int(n * (CPU_WORK / layers) ** (1 / 3) / size))
    return None


def gpu_verdict(design: Design, device: str = "auto", *, seeds: int = 1, backend: str = "sdpa") -> Verdict:
    """Real attention layers (``backend``, ``seeds`` seed(s), the design's ``L`` blocks) on the kernel mask:
    PASS when the observed dependencies equal ``R(L)`` and ``R(L) == T``; on the CPU above its limit, a formula is
    run at the largest smaller ``n`` within it, an array is not run."""
    from hasse.gpu_check.torch_extra import has_torch

    if not has_torch():
        return Verdict("gpu-check", "not-run", "not run: torch is not installed (pip install 'hasse-attention[torch]')")
    from hasse.gpu_check.check import dependency_check
    from hasse.gpu_check.config import resolve_device, torch_threads
    from hasse.theory.catalog import build_mask
    from hasse.theory.order import mask_to_order

    device = resolve_device(device)
    L, n = design.layers, design.n
    mask, target, where = design.kernel_mask, design.target, f"n = {n}"
    if device == "cpu" and n ** 3 * seeds * L > CPU_WORK:
        smaller = None if design.formula is None else _smaller_formula(design.formula.spec, L * seeds)
        if smaller is None:
            return Verdict("gpu-check", "not-run", f"not run: n = {n} is too large for the CPU (n^3 x layers > 2^32; "
                                                   "use --device cuda)")
        spec, _ = smaller
        built = build_mask(spec).matrix
        mask = built | np.eye(built.shape[0], dtype=bool)
        target_spec = re.sub(r"(?<![a-z_])n=\d+", re.search(r"(?<![a-z_])n=\d+", spec).group(0),
                             design.formula.target_spec)
        target = mask_to_order(build_mask(target_spec).matrix).closure()
        where = (f"{target_spec}, formula {spec} (the CPU limit; {design.formula.target_spec} needs "
                 "--device cuda)")
    with torch_threads(1 if device == "cpu" else None):
        r = dependency_check(mask, L, backend, device, seeds=seeds)
    theory = np.array_equal(r.theory, target)  # R(L) of the mask run, against T
    if r.agrees and theory:
        return Verdict("gpu-check", "pass", f"PASS at {where}: {backend} on {device}, {L} layer(s), {seeds} seed(s): "
                                            "observed dependencies == R(L) == T")
    return Verdict("gpu-check", "fail", f"FAIL at {where}: {backend} on {device}: observed != R(L) or R(L) != T "
                                        f"({len(r.unexpected)} unexpected, {len(r.missing)} missing; a bug of the kit)")


def design_of(source, layers: int, *, cost: str = "pairs", block: int = 128, relabel: bool = False,
              timeout: float | None = None, gpu_check: bool = True, device: str = "auto", reading=None,
              progress=None, formula_only: bool = False) -> tuple[Design, str, tuple]:
    """``(design, label, names)`` for the command and the API: the target read (:func:`~hasse.solvers.synthesis.design.
    target_of`), designed, and the gpu-check verdict added (or "not run"); ``formula_only``: InputError before the
    gpu-check unless a formula applies (``--out FILE.py``: the cheapest formula is chosen then, even where
    another candidate is cheaper; the report lists it)."""
    from hasse.solvers.synthesis.design import synthesize, target_of
    from hasse.theory.errors import InputError

    target, task, label = target_of(source, reading)
    design = synthesize(target, layers, cost=cost, block=block, relabel=relabel, timeout=timeout, task=task,
                        progress=progress, prefer_formula=formula_only)
    if formula_only and design.formula is None:
        raise InputError(f"no closed formula is known for this target (the design is {design.method}); "
                         f"write .npy or .json")
    if gpu_check:
        if progress:
            progress(f"gpu-check: {design.layers} real layer(s) on the designed mask ...")
        verdict = gpu_verdict(design, device)
    else:
        verdict = Verdict("gpu-check", "not-run", "not run (--no-gpu-check)")
    names = tuple(task.names) if task is not None and len(task.names) == design.n else ()
    return replace(design, verdicts=design.verdicts + (verdict,)), label, names


def draw_synthesis(design: Design, path: str, title: str, names=()) -> None:
    """The picture: the dense target, the designed mask as written, and (cost tiles) its tile grid over it."""
    from hasse.views.draw_mask import heatmap
    from hasse.views.figure import new_figure, picture_format, require_matplotlib, save_png

    picture_format(path)
    require_matplotlib()
    d = design
    if d.permutation is not None and names:
        names = [names[p] for p in d.permutation]
    names = [str(s) for s in names] if names else [str(i) for i in range(d.n)]
    fig = new_figure(10.5, 5.6)
    left = fig.add_axes((0.05, 0.08, 0.42, 0.78))
    right = fig.add_axes((0.55, 0.08, 0.42, 0.78))
    fs = 7.0 if d.n <= 24 else 5.0
    heatmap(left, d.target, names, title=f"dense target T: {d.dense_pairs:,} pairs, {_tiles(d.dense_tiles)}",
            fontsize=fs)
    heatmap(right, d.kernel_mask, names, reach=d.target,
            title=f"designed M | I ({d.method}, L = {d.layers}): {d.pairs:,} pairs, {_tiles(d.kernel_tiles)}",
            fontsize=fs)
    if d.kind == "tiles" or d.n > d.block:
        for ax in (left, right):
            for edge in range(0, d.n + 1, d.block):
                ax.axhline(edge - 0.5, color="#d62728", lw=0.6)
                ax.axvline(edge - 0.5, color="#d62728", lw=0.6)
    fig.suptitle(title, fontsize=10.0)
    save_png(fig, path)

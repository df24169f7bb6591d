"""``hasse counterexample --method z3|both`` (and ``--inference``): run the searches, compare, print.

The searches are :mod:`solvers.z3_counterexample`; this module only formats them,
like :mod:`hasse.cmd_counterexample` does for the plain direct search.
"""

from __future__ import annotations

import sys

from hasse.cmd_leak import _flow_dict, _leak_dict, leak_report, path_text
from hasse.output import print_json
from hasse.theory.errors import InputError
from hasse.theory.leak import Flow, Leak, LeakReport


def run_methods(args) -> int:
    from hasse.solvers.z3_counterexample import disagreement, search_direct, search_z3

    if args.timeout is not None and args.timeout <= 0:
        raise InputError(f"--timeout must be positive, got {args.timeout}")
    if args.max_n < 1:
        raise InputError(f"--max-n must be >= 1, got {args.max_n}")
    show = sys.stderr.isatty() and not args.json

    def progress(label):
        def step(n: int) -> None:
            if show:
                print(f"\r  {label}: trying n = {n} of {args.max_n} …", end="", file=sys.stderr, flush=True)
        return step

    results = []
    if args.method in ("direct", "both"):
        results.append(search_direct(args.design, args.max_n, inference=args.inference, progress=progress("direct")))
    if args.method in ("z3", "both"):
        results.append(search_z3(args.design, args.max_n, inference=args.inference, timeout=args.timeout,
                                 progress=progress("z3")))
    if show:
        print("\r" + " " * 50 + "\r", end="", file=sys.stderr)
    loud = disagreement(*results) if len(results) == 2 else None
    main = results[0]
    if args.json:
        print_json(_json(args, results, loud))
    else:
        _print(args, results, loud)
    if loud:
        print(f"hasse: {loud}", file=sys.stderr)
        return 1
    if main.n is not None:
        return 1
    return 3 if any(r.unknown for r in results) else 0


def _report_of(found) -> LeakReport | None:
    """The direct search's report, or a one-witness report built from the Z3 walk (for printing)."""
    if found.report is not None or found.property not in ("leak", "isolation"):
        return found.report
    t, w = found.task, found.witness
    leaks, iso = (), ()
    if found.property == "leak":
        leaks = (Leak(w["position"], w["target"], w["source"], tuple(w["path"]), w["depth"]),)
    else:
        iso = (Flow(w["position"], w["source"], tuple(w["path"]), w["depth"]),)
    targets = tuple(sorted({x for ts in t.labels for x in ts}))
    return LeakReport(None, leaks, iso, t.supervised, targets, t.tokens, t.size, ())


def _json(args, results, loud) -> dict:
    main = results[0]
    out = {"design": args.design, "method": args.method, "n": main.n, "property": main.property,
           "where": main.where, "checked": list(main.checked),
           "skipped": [{"n": n, "reason": r} for n, r in main.skipped],
           "methods": [r.summary() for r in results]}
    if args.inference:
        out["inference"] = args.inference
    if len(results) == 2:
        out["agree"] = loud is None
    if main.task is not None:
        t = main.task
        out.update({"task": t.name, "mask": t.mask, "inputs": [list(x) for x in t.inputs],
                    "labels": [list(ts) for ts in t.labels], "names": t.names})
        report = _report_of(main)
        if report is not None:
            out["leaks"] = [_leak_dict(x) for x in report.leaks]
            out["isolation"] = [_flow_dict(x) for x in report.isolation]
        if main.property == "inconsistency":
            out["mismatches"] = [_mismatch(m) for m in main.mismatches] or [main.witness]
    return out


def _mismatch(m) -> dict:
    return {"inference_task": m.task, "position": m.position, "input": list(m.input), "target": m.target,
            "extra_upstream": [list(x) for x in m.extra_upstream],
            "missing_upstream": [list(x) for x in m.missing_upstream]}


def _print(args, results, loud) -> None:
    main = results[0]
    for r in results:
        head = f"[{r.method}] {args.design}: "
        if r.unknown:
            print(head + f"inconclusive ({r.unknown})")
        elif r.n is None:
            also = " and no inconsistency" if args.inference else ""
            print(head + f"no leak or isolation violation{also} for any n up to {args.max_n} "
                         f"(checked {len(r.checked)} sizes)")
        else:
            w = r.witness or {}
            detail = (f", path {path_text(w['path'], r.task.names, args.ascii)} at depth {w['depth']}"
                      if "path" in w else f", inference task {w.get('inference_task')} position {w.get('position')}")
            print(head + f"smallest counterexample at n = {r.n} ({r.property}, {r.where}{detail})"
                  + (f"; {r.solver_calls} solver calls" if r.method == "z3" else "") + f" in {r.seconds:.2f} s")
    if len(results) == 2 and loud is None:
        print("direct and z3 agree")
    if main.n is None:
        if main.skipped:
            print(f"skipped {len(main.skipped)} size(s) where the design does not exist, e.g. "
                  f"n = {main.skipped[0][0]}: {main.skipped[0][1]}")
        return
    t = main.task
    print()
    print(f"{'pos':>4} {'name':<8} {'input':<16} {'pos id':>6}  label")
    for p, ((sym, pid), ts) in enumerate(zip(t.inputs, t.labels)):
        label = ",".join(map(str, ts)) if ts else "-"
        print(f"{p:>4} {t.names[p]:<8} {sym:<16} {pid:>6}  {label}")
    print()
    if main.property == "inconsistency":
        print(f"task {t.name or '(unnamed)'} is inconsistent with inference by {args.inference} at n = {main.n}:")
        for m in main.mismatches or ():
            print(f"  inference task {m.task}, position {m.position} ({m.input[0]}@{m.input[1]} -> {m.target}): "
                  f"no equivalent training node; the closest sees extra {list(m.extra_upstream)}, "
                  f"misses {list(m.missing_upstream)}")
        if not main.mismatches:
            w = main.witness
            print(f"  inference task {w['inference_task']}, position {w['position']} ({w['input'][0]}@{w['input'][1]}"
                  f" -> {w['target']}): Z3 finds no injective cover-exact map of its down-set into the training "
                  f"task with that label at the image of the position (unsat)")
        return
    print(leak_report(t, _report_of(main), ascii=args.ascii))

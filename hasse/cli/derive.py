"""``hasse derive FAMILY``: the paper's recipe from a task family to a proved, exported mask.

Every step at one n is :func:`theory.derive.derive` (tasks, Hasse diagrams, node equivalence,
the minimal merged task, leaks, coverage, the family served, the layout, the published designs);
the minimality checks are :mod:`solvers.derive_minimum`; the proofs for every n are
``prove-mask … --claim leak-free`` on the recipe's symbolic layout and ``equiv`` of the exported
file against it (:mod:`solvers.symbolic.claim_runs`). This module reads the family (a catalogue
spec, a JSON family file or a Python function returning tasks), prints, draws and writes.
"""

from __future__ import annotations

import os

from hasse.cli.arguments import add_code_timeout_argument, add_trust_code_argument, integer, reading_of
from hasse.cli.parsers import add_command
from hasse.theory.errors import InputError

DESCRIPTION = """\
Run the paper's recipe on a task family and show each step:

  1. the tasks and their labelled Hasse diagrams (classes with their inputs, covers);
  2. node equivalence: the groups of task nodes whose down-sets are isomorphic;
  3. the minimal merged task (one node per group, design §3) and its Hasse diagram;
  4. its mask, and the verdicts at this n: leaks at every depth (with the shortest witness
     path), coverage, and that it serves every task of the family (each supervised node has an
     equivalent merged node with its label); for a built-in family, that the merge is
     isomorphic to the family's closed-form layout, and whether it is minimum (the quotient
     search and Z3, on families small enough);
  5. for a family given by formulas (the built-in ones): the layout proved leak-free for every
     n (`prove-mask LAYOUT --claim leak-free`), and each published design compared at this n:
     its positions, its pairs beyond the derived ones, its leaks with their witness, whether it
     serves the family and whether it is the derived design up to the order of positions.

--export flex --out FILE.py writes a FlexAttention mask_mod factory (positions(n, …) and
make_mask_mod(n, …): plain Python that create_block_mask accepts), proves it equal to the
derived layout for every n (`hasse equiv FILE.py:make_mask_mod LAYOUT`), and writes FILE.task.json
beside it (the derived task at this n with its mask read from FILE.py) for `hasse gpu-check`.
--export npy writes the merged mask, --export json the merged task (both at this n, any family).
"""
EPILOG = """\
FAMILY is a built-in family (`hasse catalog` lists them: ar, block, infill, mae, mae2d,
masked_diffusion, any_order, fim, mtp, block_mixture), a JSON family file
{"tokens": n, "tasks": [task, ...]}, or FILE.py:fn (a function returning the family's tasks, as
Task objects or task dicts; named arguments by a call: FILE.py:family(n=6)). --n N sets the
n of a built-in family.

examples:
  hasse derive infill --n 5                    Butterfly, proved for every n
  hasse derive mae:n=6,masked=1+4              MAE: the derived mask vs He et al.'s
  hasse derive any_order:n=4,order=2+0+3+1     the two-stream design of one order vs XLNet
  hasse derive mtp:n=6,k=3 --export flex --out mtp.py && hasse gpu-check mtp.task.json --trust-code
  hasse derive my_family.json --png family.png

exit status: 0 every verdict holds; 1 one fails (a leak in the merge, a merge not isomorphic to
its layout or not minimum, a refuted proof, an export that differs); 2 bad input; 3 a proof
unknown (time limit, solver).
"""

MAX_TASKS_SHOWN = 3  # tasks drawn by --png (hasse.views.derive_report shows as many as text)
MINIMUM_AUTO = 60  # task nodes up to which the minimality checks run by default
Z3_AUTO_SECONDS = 10.0  # Z3's budget per call in those default checks
EXPORTS = ("flex", "npy", "json")


def register(sub) -> None:
    p = add_command(sub, "derive", "the recipe from a task family to a proved mask: merge, verdicts, proofs, export",
                    DESCRIPTION, EPILOG)
    p.add_argument("family", metavar="FAMILY")
    p.add_argument("--n", type=integer("--n", 1), metavar="N", help="the number of tokens of a built-in family")
    p.add_argument("--export", choices=EXPORTS, help="write the derived mask: flex (a mask_mod factory, proved), "
                   "npy (the merged mask) or json (the merged task); needs --out")
    p.add_argument("--out", metavar="FILE", help="where --export writes")
    p.add_argument("--png", metavar="FILE", help="draw the merged task (mask and Hasse diagram) to FILE and the "
                   f"first {MAX_TASKS_SHOWN} tasks to FILE_task<i> (.png, .svg or .pdf by the suffix)")
    p.add_argument("--png-tasks", type=integer("--png-tasks", 0), default=MAX_TASKS_SHOWN, metavar="K",
                   help=f"with --png: how many of the family's tasks to draw (default {MAX_TASKS_SHOWN})")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--no-proof", action="store_true", help="skip the proofs for every n (Z3)")
    p.add_argument("--minimum", choices=("auto", "yes", "no"), default="auto",
                   help=f"check the merge is minimum (quotient search and Z3): auto = when the family has at "
                        f"most {MINIMUM_AUTO} task nodes (default)")
    p.add_argument("--ascii", action="store_true", help="ASCII characters only")
    add_trust_code_argument(p)
    add_code_timeout_argument(p, "building the family, the merge and each solver call")
    from hasse.views.output import ascii_aware

    p.set_defaults(run=ascii_aware(run))


# ------------------------------------------------------------------------------------------ reading


def read_family(source: str, n: int | None, args) -> tuple[tuple, str, object, dict]:
    """``(tasks, label, recipe, values)``: the family and, for a built-in one, its recipe and parsed values."""
    from hasse.theory.derivations import recipe_of
    from hasse.theory.inputs.calls import split_function
    from hasse.theory.inputs.forms import form_of

    if split_function(source) is not None:
        if n is not None:
            raise InputError("--n applies to a built-in family; give a FILE.py:fn family its n in the call "
                             "(FILE.py:family(n=6))", source)
        return _python_family(source, args), source, None, {}
    if form_of(source) == "file":
        if n is not None:
            raise InputError("--n applies to a built-in family; a family file fixes its own tokens", source)
        from hasse.theory.inputs.read import read

        return read(source, reading_of(args), accept=("family",)).family, source, None, {}
    from hasse.theory.catalog import build_family, canonical_spec, resolve_spec
    from hasse.theory.spec import get_entry, parse_spec

    name, raw = parse_spec(source)
    entry = get_entry(name, "family", source.strip())
    if n is not None:
        if entry.param("n") is None:
            raise InputError(f"--n: the family {name} has no parameter n (its parameters: "
                             f"{', '.join(p.name for p in entry.params)})", source)
        if "n" in raw and int(raw["n"]) != n:
            raise InputError(f"--n {n} and n={raw['n']} in the spec disagree", source)
        raw = {**raw, "n": str(n)}
        source = name + ":" + ",".join(f"{k}={v}" for k, v in raw.items())
    spec = resolve_spec(source, "family")
    values = dict(spec.values)
    return build_family(spec.canonical), canonical_spec(spec.entry, values), recipe_of(name), values


def _python_family(source: str, args) -> tuple:
    """The tasks a ``FILE.py:fn`` (or ``FILE.py:fn(n=6)``) returns, in one bounded run of the user's code."""
    from hasse.theory.inputs.calls import parse_call, split_function
    from hasse.theory.inputs.user_files import import_function
    from hasse.theory.user_code import ARGUMENT, run

    path, function = split_function(source)
    name, call_args, kwargs = parse_call(function, source) if "(" in function else (function, (), {})

    def job():
        from hasse.theory.inputs.tasks import task_from_dict
        from hasse.theory.merge import check_family
        from hasse.theory.task import Task

        fn = import_function(path, name, source, ARGUMENT)
        try:
            items = fn(*call_args, **kwargs)
        except InputError:
            raise
        except Exception as exc:  # the user's function: one line naming it
            raise InputError(f"{function} raised {type(exc).__name__}: {exc}", source) from None
        try:
            items = list(items)
        except TypeError:
            raise InputError(f"{function} returned {type(items).__name__}, not a list of tasks", source) from None
        tasks = []
        for i, item in enumerate(items):
            if isinstance(item, Task):
                tasks.append(item)
            elif isinstance(item, dict):
                tasks.append(task_from_dict(item, f"{source}: task {i}", os.path.dirname(path),
                                            trust_code=bool(getattr(args, "trust_code", False))))
            else:
                raise InputError(f"{function} returned {type(item).__name__} as task {i}: give Task objects or "
                                 "task dicts ({\"tokens\", \"inputs\", \"labels\", \"mask\"})", source)
        check_family(tasks, source)
        return tuple(t if t.name else _named(t, f"task {i}") for i, t in enumerate(tasks))

    return run(job, source=source, what="family function", path=path)


def _named(task, name):
    from dataclasses import replace

    return replace(task, name=name)


# ------------------------------------------------------------------------------------------ the steps


def run(args) -> int:
    from hasse.theory.deadline import deadline
    from hasse.theory.derive import derive

    if args.export and not args.out:
        raise InputError(f"--export {args.export} needs --out FILE")
    if args.out and not args.export:
        raise InputError("--out needs --export flex|npy|json")
    with deadline(args.timeout):
        tasks, label, recipe, values = read_family(args.family, args.n, args)
        result = derive(tasks, label, recipe, values)
    report = {"minimum": _minimum(result, args), "proof": None, "consistent": None, "export": None}
    if recipe is not None and not args.no_proof:
        symbolic = recipe.symbolic(values)
        if symbolic is not None:
            report["proof"] = _prove(symbolic, args.timeout)
        consistent = recipe.consistent(values)
        if consistent is not None:
            report["consistent"] = _prove(consistent, args.timeout, "consistent")
    if args.export:
        from hasse.cli.derive_export import export

        report["export"] = export(result, recipe, values, args)
    if args.png:
        from hasse.views.derive_report import draw_derivation

        draw_derivation(result, args.png, args.png_tasks)
    code = _exit_code(result, report)
    from hasse.views.derive_report import derive_json, derive_text

    if args.json:  # on stdout only: derive's --out is the export's file, never the JSON object
        from hasse.views.output import print_json, to_jsonable

        print_json(to_jsonable(derive_json(result, recipe, values, report, code, args)))
        return code
    print(derive_text(result, recipe, values, report, code, args))
    return code


def _minimum(result, args) -> list | None:
    """Both minimality checks (auto: on families of at most MINIMUM_AUTO task nodes; Z3 with a budget of
    Z3_AUTO_SECONDS there, --timeout or 60 s with --minimum yes)."""
    if args.minimum == "no" or (args.minimum == "auto" and result.merged.task_nodes > MINIMUM_AUTO):
        return None
    from hasse.solvers.derive_minimum import check_minimum

    budget = args.timeout or (Z3_AUTO_SECONDS if args.minimum == "auto" else 60.0)
    return [c.to_json() for c in check_minimum(result.tasks, timeout=budget)]


def _prove(symbolic: str, timeout, claim: str = "leak-free") -> dict:
    from hasse.solvers.symbolic.claim_runs import prove_claim

    command = f"hasse prove-mask {symbolic} --claim {claim}"
    try:
        run = prove_claim(claim, symbolic, timeout=timeout, search_layers=4 if claim == "leak-free" else 0)
    except InputError as exc:
        return {"command": command, "verdict": "unknown", "reason": str(exc)}
    v = run.verdict
    return {"command": command, "verdict": v.verdict,
            "statement": v.statement, "reason": v.reason, "recheck": v.recheck, "seconds": round(v.seconds, 3)}


def _exit_code(result, report) -> int:
    from hasse.solvers.derive_minimum import verdict_of

    bad = (not result.leaks.leak_free or not result.served.consistent or result.layout_same is False
           or verdict_of(report["minimum"]) == "refuted")
    proof = report["proof"]
    if report.get("consistent") and report["consistent"]["verdict"] == "refuted":
        bad = True
    export = report["export"] or {}
    equiv = export.get("equiv")
    if proof and proof["verdict"] == "refuted" or equiv and equiv["verdict"] == "refuted":
        bad = True
    if export.get("at_n", {}).get("verdict") == "differs":
        bad = True
    if bad:
        return 1
    unknown = [x for x in (proof, equiv, report.get("consistent")) if x and x["verdict"] == "unknown"]
    if verdict_of(report["minimum"]) == "unknown":
        unknown.append(report["minimum"])
    if export.get("at_n", {}).get("verdict") == "unknown":
        unknown.append(export["at_n"])
    return 3 if unknown else 0

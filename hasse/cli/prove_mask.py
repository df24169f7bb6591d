"""``hasse prove-mask MASK --claim …``: a claim about a mask program for every length at once (issue 13).

The CLI layer over :mod:`solvers.symbolic`: it resolves MASK (a catalogue spec whose
missing parameters, ``n`` included, become symbolic, or a ``file.py:function`` mask_mod)
into a :class:`~solvers.symbolic.mask.SymbolicMask`, the task (``--task`` or MASK's own)
into a :class:`~solvers.symbolic.task.SymbolicTask`, narrows parameters (``--param-range``),
calls the claim (:mod:`solvers.symbolic.claims`) and prints its verdict, statement,
counterexample and concrete re-check. ``hasse equiv`` (:mod:`hasse.cli.equiv`) shares the
helpers here. Exit codes as ``hasse prove``: 0 proved, 1 refuted (or a re-check that
disagrees), 3 unknown, 2 bad input (an untraceable program included).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import platform
import re
import sys
import time

from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header, say, spec_of
from hasse.cli.parsers import add_command, integer
from hasse.theory.errors import InputError, clip

CLAIMS = ("dense", "leak-free", "isolation", "consistent")
SEARCH_LAYERS = 4  # every depth, invariant failed: a walk of at most this many hops is looked for
VERDICT_WORDS = {"proved": "PROVED", "refuted": "REFUTED", "unknown": "UNKNOWN"}
FORMULA_CHARS = 20_000  # a certificate keeps a formula's text up to this length (its SHA-256 always)

DESCRIPTION = """\
Prove a claim about a mask for EVERY sequence length at once, not one n at a time.

The mask program (a catalogue rule or your FlexAttention mask_mod) is run once on
symbolic integers: its comparisons and arithmetic become a Z3 formula M[q, k] of the
positions q, k, the length n and every parameter you left out. A claim is then one
Z3 query over all n (and all parameter values): unsat of its negation = proved.

"For all n" here means: every length n (and every value of each parameter left out
of the spec) that satisfies the side conditions printed in the statement, e.g.
"for all 1 <= n <= 2^31 and all l >= 1 with l | n" -- the conditions the program's
own parameter checks demand (a block must divide n), --param-range, and the bound
n <= 2^31 (each parameter within +-2^31). Nothing is claimed outside them. A
division by a value that can be 0 is where torch raises: the claim is refuted
there ("the program fails: ... at n = N, pair (q, k)"), never assumed away.
Lookups into index tensors (document ids, a permutation, a parent function) are
unknown functions with only their declared property (non-decreasing, bijection,
points backward), so a proof holds for every tensor with that property.

The program is traced as FlexAttention runs it: b, h, q_idx, kv_idx are int64
tensors; int64 arithmetic wraps modulo 2^64, bool + bool is "or", // floors and %
takes the divisor's sign. What torch refuses (bool - bool, a tensor in an if or a
chained comparison, torch.minimum(t, 10)) is a program that cannot run: exit 2,
naming your line. A tensor your mask_mod captures is read with its values (the
claim is then for n <= its length) or, with --assume NAME=PROPERTY, as every
tensor with that property. Every verdict is re-checked by running YOUR program
(as hasse analyze FILE.py:fn --n N does) at every n <= 64, at n within 2 of each
constant, and at 2^k +- 1 up to 2^20 on sampled positions: a program that differs
from its traced formula is DISAGREES (a bug of the kit), exit 1.

claims:
  dense       M or I is transitive: one layer already realises the limit
  leak-free   no target reaches the position that predicts it: within --layers L
              hops (the intermediate positions are existential), or at every depth
              through an inductive invariant
  isolation   no flow between the task's declared groups (packed documents)
  consistent  training-inference consistency of a Block Two-Stream-style design

An invariant is a relation I(q, k) ("q may depend on k") with three properties the
kit checks, never assumes: M or identity is inside I; I is transitive; and no
position predicting a target t has I to a position holding t. Together they mean
no walk of any length leaks. The default is the catalogue's known closure (the
mask itself when dense; the causal order for a sliding window); --invariant
FILE.py:fn gives your own, as a mask_mod. An invariant that fails proves nothing;
the command then looks for a real leak walk of at most --search-layers K hops
(default 4), which refutes the claim at every depth, reported at the smallest n
over every walk length (or labelled "an n; smaller may exist"); none found: unknown.

verdicts: proved (with the statement of exactly what was proved); refuted (the
smallest n, the parameters, the positions and the witness path, re-checked by the
concrete engine at that n -- a disagreement is reported loudly, exit 1); unknown
(timeout or solver "unknown", never counted as proved).
"""
EPILOG = """\
examples:
  hasse prove-mask causal --claim dense                     every n >= 1
  hasse prove-mask butterfly --claim leak-free              Butterfly's own task, every n
  hasse prove-mask sliding_window:w=8 --claim leak-free --task causal_lm
  hasse prove-mask sliding_window --claim leak-free --task causal_lm --layers 3
  hasse prove-mask packed --claim isolation
  hasse prove-mask block_two_stream --claim leak-free --param-range block=1..64
  hasse prove-mask masks.py:my_mask --claim dense --timeout 30 --certificate proof.json

--param-range NAME=LO..HI (repeatable; n included) adds LO <= NAME <= HI to the side
conditions. A spec that fixes n (causal:n=8) proves the claim at that n only.

exit status: 0 proved; 1 refuted (or the concrete re-check disagrees); 3 unknown
(timeout); 2 bad input, including a program that cannot be traced (one line: the
operation and the line of your file).
"""


def register(sub) -> None:
    p = add_command(sub, "prove-mask", "prove a claim about a mask for every length n (symbolic, Z3)",
                    DESCRIPTION, EPILOG)
    p.add_argument("mask", metavar="MASK", help="a catalogue spec (parameters left out are symbolic) or FILE.py:fn")
    p.add_argument("--claim", choices=CLAIMS, help="what to prove (see above; required)")
    p.add_argument("--task", metavar="TASK",
                   help="the task whose targets must not leak (a catalogue task: causal_lm, mlm, packed, …); "
                        "default: MASK's own task (butterfly, block_two_stream, …)")
    p.add_argument("--layers", type=integer("--layers"), metavar="L", help="leak-free/isolation within L layers (default: every depth)")
    p.add_argument("--invariant", metavar="FILE.py:fn",
                   help="the inductive invariant for every depth, as a mask_mod (or a catalogue spec)")
    p.add_argument("--search-layers", type=integer("--search-layers", 0), default=SEARCH_LAYERS, metavar="K",
                   help="every depth: when the invariant fails, look for a real leak walk of at most K hops "
                        f"(default {SEARCH_LAYERS}; 0: do not)")
    add_common_arguments(p)
    p.set_defaults(run=ascii_aware(run))


def add_common_arguments(p) -> None:
    """The flags prove-mask and equiv share: --heads, --param-range, --timeout, --json/--out/--ascii, --certificate."""
    p.add_argument("--heads", type=integer("--heads", 1), metavar="H", help="number of heads of a mask_mod that reads h (the union)")
    p.add_argument("--batch", type=integer("--batch", 1), metavar="B",
                   help="batch size of a mask_mod that reads b: b is a parameter of the claim, 0 <= b < B "
                        "(without it, a mask_mod whose mask depends on b is refused)")
    p.add_argument("--assume", action="append", default=[], metavar="NAME=PROPERTY",
                   help="a tensor NAME the mask_mod reads (a closure or global) stands for every tensor of length n "
                        "with PROPERTY: nondecreasing, permutation or parents (repeatable; default: its values as "
                        "given, the claim for n <= its length)")
    p.add_argument("--param-range", action="append", default=[], metavar="NAME=LO..HI",
                   help="only values LO <= NAME <= HI (repeatable; NAME may be n)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds for each solver call and for tracing each file.py mask_mod (past it: unknown; "
                        "default: the claims' own, 30 s; tracing 60 s)")
    add_json_arguments(p)
    p.add_argument("--certificate", metavar="FILE",
                   help="write the claim, statement, verdict, formulas and versions as JSON")


# --- resolving the inputs ----------------------------------------------------------------------------------

def _catalog():
    try:
        from hasse.solvers.symbolic import catalog
    except ImportError as exc:  # pragma: no cover - while solvers/symbolic/catalog.py is missing
        raise InputError(f"symbolic forms of the catalogue are not available ({exc})") from None
    return catalog


def _claims():
    try:
        from hasse.solvers.symbolic import claims
    except ImportError as exc:  # pragma: no cover - while solvers/symbolic/claims.py is missing
        raise InputError(f"the symbolic claims are not available ({exc})") from None
    return claims


def _trace_errors() -> tuple:
    from hasse.solvers.symbolic.terms import Untraceable
    from hasse.solvers.symbolic.trace import TraceError

    return (TraceError, Untraceable)


class TraceUnknownInput(InputError):
    """Tracing reached a bound of the tracer or the time limit: the verdict is unknown (exit 3), not bad input."""


def parse_assume(items) -> dict[str, str]:
    """``--assume NAME=PROPERTY`` (repeatable) as ``{NAME: PROPERTY}``; one-line InputError otherwise.

    >>> parse_assume(["doc=nondecreasing", "perm = permutation"])
    {'doc': 'nondecreasing', 'perm': 'permutation'}
    >>> parse_assume(["doc=sorted"])
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --assume doc=sorted: PROPERTY must be one of nondecreasing, permutation, parents
    """
    from hasse.solvers.symbolic.mask import ASSUMABLE

    out: dict[str, str] = {}
    for text in items or ():
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*(\w+)\s*", text)
        if not m:
            raise InputError(f"--assume {clip(text, 60)}: expected NAME=PROPERTY (e.g. doc=nondecreasing)")
        name, prop = m.groups()
        if prop not in ASSUMABLE:
            raise InputError(f"--assume {clip(text, 60)}: PROPERTY must be one of {', '.join(ASSUMABLE)}")
        if name in out and out[name] != prop:
            raise InputError(f"--assume {name}: given twice ({out[name]}, {prop})")
        out[name] = prop
    return out


TORCH_WORDS = ("torch", "attn_gym", "flex_attention")  # a file naming one of these imports torch (or may)


def preload_torch(path: str) -> None:
    """Import torch here once when the user's file names it: every bounded child (the rehearsal of the trace,
    the re-check's run of the program) is forked from this process and inherits it, where each would
    otherwise import torch again (about 5 s each). Only a matter of time: the runs are the same."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return  # the loader says what is wrong with the file
    from hasse.gpu_check.torch_extra import has_torch

    if any(w in text for w in TORCH_WORDS) and has_torch():
        import torch  # noqa: F401 - loaded for the children to inherit


def symbolic_mask(source: str, heads: int | None = None, what: str = "MASK", *, batch: int | None = None,
                  assume: dict | None = None, timeout: float | None = None, strict_assume: bool = True):
    """The SymbolicMask of a MASK argument: ``FILE.py:fn`` (a mask_mod) or a catalogue spec; one-line exit 2 else.

    ``batch`` and ``assume`` apply to a mask_mod (``--batch``, ``--assume``); a given
    ``timeout`` bounds the tracing of a catalogue spec too. A trace that reaches a bound of
    the tracer or the time limit raises :class:`TraceUnknownInput` (the verdict unknown, exit 3).
    """
    from hasse.solvers.symbolic.trace import TraceUnknown
    from hasse.theory.deadline import deadline
    from hasse.theory.inputs.forms import form_of
    from hasse.theory.inputs.calls import split_function

    try:
        if form_of(source) == "function":
            path, fn = split_function(source)
            from hasse.solvers.symbolic.catalog import symbolic_mask_mod
            from hasse.theory.user_code import ARGUMENT

            preload_torch(path)
            with deadline(timeout):
                return symbolic_mask_mod(path, fn, heads=heads, code=ARGUMENT, batch=batch,  # typed on the command line
                                         assume=assume or None, fallback=_torch_fallback(),
                                         strict_assume=strict_assume)
        if form_of(source) != "spec":
            raise InputError(f"{what} must be a catalogue spec or FILE.py:function for a proof for every n "
                             f"(a matrix file holds one size)", source)
        if assume:
            raise InputError(f"--assume names a tensor a FILE.py:fn mask_mod reads; {source} is a catalogue spec")
        with deadline(timeout):  # a catalogue mask does not read b: --batch changes nothing
            return _catalog().symbolic_mask(source)
    except TraceUnknown as exc:
        raise TraceUnknownInput(_one_line(exc)) from None
    except _trace_errors() as exc:
        raise InputError(_one_line(exc)) from None
    except TimeoutError as exc:  # theory.deadline, outside a trace (the catalogue's own work)
        raise TraceUnknownInput(f"{source}: tracing stopped at the time limit ({exc}): unknown") from None


def _torch_fallback():
    """The torch evaluator of a mask_mod that numpy cannot run (``hasse analyze``'s), or None without torch."""
    from hasse.gpu_check.mask_mod import torch_fallback_or_none

    return torch_fallback_or_none()


def symbolic_task(source: str, mask=None):
    """The SymbolicTask named ``source``; with ``mask``, the same task read through that mask instead of its own."""
    try:
        from hasse.solvers.symbolic.tasks import symbolic_task as make
    except ImportError as exc:  # pragma: no cover - while solvers/symbolic/tasks.py is missing
        raise InputError(f"symbolic tasks are not available ({exc})") from None
    try:
        task = make(source)
    except _trace_errors() as exc:
        raise InputError(_one_line(exc)) from None
    if mask is None:
        return task
    from hasse.solvers.symbolic.tasks import check_same_size

    check_same_size(task, mask)  # a mask of another size would make the claim hold vacuously: exit 2
    own = task.concrete

    def concrete(n, **params):  # the concrete task at n, its mask replaced by MASK's PROGRAM at n (the re-check)
        from hasse.solvers.symbolic.recheck import mask_grid

        t = own(n, **params) if own is not None else None
        if t is None:
            return None
        return dataclasses.replace(t, mask=mask_grid(mask, n, {k: v for k, v in params.items() if k in mask.params}))

    extra = [i for i in task.mask.indexes if all(i is not j for j in mask.indexes)]  # the task's own index
    if extra:  # tensors (packed's doc) stay declared: their axioms come with the mask's facts
        mask = dataclasses.replace(mask, indexes=list(mask.indexes) + extra)
    return dataclasses.replace(task, mask=mask, concrete=concrete if own is not None else None,
                               name=f"{task.name} through {mask.name}")


def known_invariant(task):
    """The catalogue's invariant for ``task`` (P3's tasks.known_invariant, else claims'), or None."""
    for module in ("tasks", "claims"):
        try:
            mod = __import__(f"hasse.solvers.symbolic.{module}", fromlist=["known_invariant"])
        except ImportError:
            continue
        fn = getattr(mod, "known_invariant", None)
        if fn is not None:
            return fn(task)
    return None


def parse_range(text: str) -> tuple[str, int, int]:
    """``NAME=LO..HI`` as ``(name, lo, hi)``; one-line InputError otherwise.

    >>> parse_range("n=2..100"), parse_range("block=1..1")
    (('n', 2, 100), ('block', 1, 1))
    >>> parse_range("n=5..2")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --param-range n=5..2: LO must be <= HI
    """
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*", text)
    if not m:
        raise InputError(f"--param-range {clip(text, 60)}: expected NAME=LO..HI (e.g. n=2..64)")
    from hasse.theory.limits import parse_int

    name = m.group(1)
    lo, hi = (parse_int(m.group(i), f"--param-range {name}") for i in (2, 3))  # within 64 bits, as every integer
    if lo > hi:
        raise InputError(f"--param-range {text}: LO must be <= HI")
    return name, lo, hi


def narrow(mask, ranges: list[str]) -> list[tuple[str, int, int]]:
    """Add each ``--param-range`` to ``mask``'s side conditions (and its statement); returns the ranges parsed."""
    from hasse.solvers.symbolic.mask import describe_conditions

    parsed = [parse_range(r) for r in ranges]
    for name, lo, hi in parsed:
        if name == "n":
            term = mask.n
        elif name in mask.params or name in {str(t): k for k, t in mask.params.items()}:
            term = mask.params.get(name) if name in mask.params else \
                next(t for t in mask.params.values() if str(t) == name)
        else:
            known = ", ".join(["n", *mask.params]) if not _is_number(mask.n) else ", ".join(mask.params) or "none"
            raise InputError(f"--param-range {name}: not a symbolic parameter of {mask.name} (symbolic: {known})")
        if _is_number(term):
            raise InputError(f"--param-range {name}: {mask.name} fixes {name}")
        mask.conditions.extend([term >= lo, term <= hi])
    if parsed:
        mask.statement = describe_conditions(mask.n, mask.params, mask.conditions)
    return parsed


def _copy(mask):
    """A copy of ``mask`` with its own list of side conditions (--param-range extends it; a cached form stays)."""
    return dataclasses.replace(mask, conditions=list(mask.conditions))


def _is_number(term) -> bool:
    import z3

    return z3.is_int_value(term)


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def call_claim(fn, *args, timeout: float | None = None, **kwargs):
    """Call a claim of :mod:`solvers.symbolic.claims`, passing ``timeout`` when it takes one (else Z3's global)."""
    import z3

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    if timeout is not None:
        if "timeout" in params:
            kwargs["timeout"] = timeout
        else:
            z3.set_param("timeout", max(1, int(timeout * 1000)))
    try:
        return fn(*args, **{k: v for k, v in kwargs.items() if v is not None})
    except _trace_errors() as exc:
        raise InputError(_one_line(exc)) from None
    finally:
        if timeout is not None and "timeout" not in params:
            z3.set_param("timeout", 4294967295)


# --- the command ------------------------------------------------------------------------------------------

def run(args) -> int:
    """The command; a mask_mod or invariant stopped at --timeout (theory.user_code) is the verdict unknown, exit 3."""
    from hasse.theory.user_code import UserCodeTimeout

    start = time.perf_counter()
    try:
        return _run(args)
    except (UserCodeTimeout, TraceUnknownInput) as exc:
        obj = {**json_header("prove-mask", args.mask, spec_of(args.mask)), "claim": args.claim, "task": args.task,
               "layers": args.layers, "invariant": args.invariant, "param_ranges": [],
               **timed_out_record(exc, time.perf_counter() - start)}
        return report(args, obj, {}, title=f"prove-mask {args.mask} --claim {args.claim}")


def timed_out_record(exc, seconds: float) -> dict:
    """The verdict fields when user code (the mask_mod traced) was stopped at its time limit: unknown, and why."""
    return {"verdict": "unknown", "statement": "", "seconds": seconds, "counterexample": None, "recheck": None,
            "reason": str(exc)}


def _run(args) -> int:
    from hasse.proofs.certificates.format import refuse_overwrite

    if args.claim is None:
        raise InputError(f"--claim is required: one of {', '.join(CLAIMS)}")
    if args.search_layers < 0:
        raise InputError(f"--search-layers must be >= 0, got {args.search_layers}")
    from hasse.theory.limits import MAX_WALK_LAYERS, require_count
    from hasse.theory.inputs.forms import form_of

    require_count("--search-layers", args.search_layers, MAX_WALK_LAYERS, "a walk holds one copy of the mask per "
                  "hop", low=0)
    for flag, given, reads in (("--heads", args.heads, "h"), ("--batch", args.batch, "b"),
                               ("--assume", args.assume, "a tensor")):
        if given and not any(form_of(s) == "function" for s in (args.mask, args.invariant) if s):
            raise InputError(f"{flag} applies to a FILE.py:fn mask_mod that reads {reads}; {args.mask} is a catalogue "
                             "spec" + (" (one mask for every head)" if flag == "--heads" else ""))
    if args.layers is not None and args.layers < 1:
        raise InputError(f"--layers must be >= 1, got {args.layers}")
    if args.layers is not None and args.invariant:
        raise InputError("--layers and --invariant exclude each other (within L layers, or at every depth)")
    if args.claim in ("dense", "consistent") and (args.layers is not None or args.invariant):
        raise InputError(f"--claim {args.claim} takes neither --layers nor --invariant")
    if args.claim == "dense" and args.task:
        raise InputError("--claim dense is about the mask alone: no --task")
    if args.certificate:
        refuse_overwrite(args.certificate, ())
    task = None
    if args.claim != "dense" and not args.task:
        task = _own_task(args.mask, args.claim)  # MASK is a task (butterfly, packed): its own mask and labels
        mask = task.mask = _copy(task.mask)
    else:
        mask = _copy(symbolic_mask(args.mask, args.heads, batch=args.batch, assume=parse_assume(args.assume),
                                   timeout=args.timeout))
    ranges = narrow(mask, args.param_range)
    claims = _claims()
    invariant = None
    start = time.perf_counter()
    if args.claim == "dense":
        verdict = call_claim(claims.prove_dense, mask, timeout=args.timeout)
    else:
        if task is None:
            task = symbolic_task(args.task, mask)
        if args.claim == "consistent":
            if not hasattr(claims, "prove_consistent"):
                raise InputError("--claim consistent: no symbolic consistency check in this version of the kit "
                                 "(use hasse consistent TRAIN_TASK --inference FAMILY at one n)")
            verdict = call_claim(claims.prove_consistent, task, timeout=args.timeout)
        else:
            if args.layers is None:
                invariant = (symbolic_mask(args.invariant, args.heads, "--invariant", batch=args.batch,
                                           assume=parse_assume(args.assume), timeout=args.timeout) if args.invariant
                             else known_invariant(task))
                if invariant is None:
                    raise InputError(f"{args.mask}: no known invariant for every depth; give --layers L or "
                                     f"--invariant FILE.py:fn")
            fn = claims.prove_leak_free if args.claim == "leak-free" else claims.prove_isolation
            if args.claim == "isolation" and task.group is None:
                raise InputError(f"{args.task or args.mask}: the task declares no isolation groups")
            verdict = call_claim(fn, task, layers=args.layers, invariant=invariant, timeout=args.timeout)
            if args.layers is None and args.search_layers > 0:
                verdict = _walk_search(fn, task, verdict, args.search_layers, args.timeout)
    seconds = time.perf_counter() - start
    record = verdict_record(verdict, seconds)
    _name_positions(record["counterexample"], task)
    obj = {**json_header("prove-mask", args.mask, spec_of(args.mask)), "claim": args.claim,
           "task": args.task, "layers": args.layers,
           "invariant": args.invariant or (getattr(invariant, "name", None) if invariant is not None else None),
           "param_ranges": [{"name": n, "lo": lo, "hi": hi} for n, lo, hi in ranges], **record}
    formulas = {"mask": mask}
    if invariant is not None:
        formulas["invariant"] = invariant
    if task is not None:
        formulas["task"] = task
    return report(args, obj, formulas, title=f"prove-mask {args.mask} --claim {args.claim}"
                  + (f" --task {args.task}" if args.task else "")
                  + (f" --layers {args.layers}" if args.layers else ""))


def _walk_search(fn, task, verdict, hops: int, timeout):
    """An every-depth verdict left unknown by a failing invariant, settled by a real walk where one exists.

    A leak (or a crossing) within ``hops`` layers is one at every depth from there on, so a
    refutation by walks refutes the every-depth claim. Its headline n is then made the
    smallest over every walk length (:func:`solvers.symbolic.claims.smallest_refutation`: a
    concrete search by increasing n where it is complete, else walks long enough for every
    n <= m); where that cannot finish the counterexample says "an n; smaller may exist"
    and still refutes. No walk found: the verdict stays unknown (the invariant's failure
    is no proof).
    """
    get = (lambda k: verdict.get(k)) if isinstance(verdict, dict) else (lambda k: getattr(verdict, k, None))
    if get("verdict") != "unknown" or "fails" not in str(get("reason") or ""):
        return verdict
    walk = call_claim(fn, task, layers=hops, timeout=timeout)
    wget = (lambda k: walk.get(k)) if isinstance(walk, dict) else (lambda k: getattr(walk, k, None))
    if wget("verdict") != "refuted":  # a longer walk: the concrete search by increasing n, where it applies
        search = getattr(_claims(), "search_every_depth", None)
        found = call_claim(search, fn, task, timeout=timeout) if search is not None else None
        if found is None:
            return verdict
        return {"verdict": "refuted", "statement": get("statement"), "counterexample": found.counterexample,
                "recheck": found.recheck, "seconds": (get("seconds") or 0) + (wget("seconds") or 0) + found.seconds,
                "reason": f"{found.reason} (no walk of at most {hops} hops; a longer real walk: it stays at every "
                          f"greater depth; {get('reason')})"}
    smallest = getattr(_claims(), "smallest_refutation", None)
    if smallest is not None and not isinstance(walk, dict):
        walk = call_claim(smallest, fn, task, walk, timeout=timeout)
        wget = lambda k: getattr(walk, k, None)  # noqa: E731
    elif isinstance(wget("counterexample"), dict):  # no search for the smallest n here: say so
        walk = {**walk, "counterexample": {**wget("counterexample"), "smallest": False},
                "reason": f"{wget('reason')} (an n; smaller may exist: the smallest among walks of at most {hops} hops)"}
        wget = walk.get
    return {"verdict": "refuted", "statement": get("statement"), "counterexample": wget("counterexample"),
            "recheck": wget("recheck"), "seconds": (get("seconds") or 0) + (wget("seconds") or 0),
            "reason": f"{wget('reason')} (a real walk: it stays at every greater depth; {get('reason')})"}


def _name_positions(cx, task) -> None:
    """Add ``names`` (position -> its name in the concrete task at the counterexample's n: F0, B1, P1, Q2) to ``cx``.

    Only for a task whose concrete form names its positions other than by their numbers;
    nothing is added when the concrete task cannot be built (the re-check says why).
    """
    if not isinstance(cx, dict) or task is None or task.concrete is None or "n" not in cx:
        return
    try:
        names = task.concrete(int(cx["n"]), **(cx.get("params") or {})).names
    except Exception:  # the concrete form is the re-check's business; a name is only a convenience
        return
    positions = set()
    for key in ("path", "positions", "position", "source", "pair"):
        value = cx.get(key)
        for p in value if isinstance(value, list) else [value]:
            if isinstance(p, int) and 0 <= p < len(names):
                positions.add(p)
    if positions and any(names[p] != str(p) for p in positions):
        cx["names"] = {str(p): names[p] for p in sorted(positions)}


def _own_task(source: str, claim: str):
    """MASK's own task (a catalogue design that is a task: butterfly, packed, …); exit 2 when MASK is none."""
    from hasse.theory.inputs.forms import form_of

    if form_of(source) != "spec":
        raise InputError(f"{source}: --claim {claim} needs a task; give --task TASK (e.g. causal_lm)")
    try:
        return dataclasses.replace(symbolic_task(source))  # a copy: its mask is narrowed in place
    except InputError as exc:
        raise InputError(f"--claim {claim} needs a task and MASK is none ({exc}); give --task TASK (e.g. causal_lm)") \
            from None


def verdict_record(verdict, seconds: float) -> dict:
    """The fields of a SymbolicVerdict that go into the JSON object (jsonable), checked for a known verdict word."""
    from hasse.views.output import to_jsonable

    get = (lambda k, d=None: verdict.get(k, d)) if isinstance(verdict, dict) else \
        (lambda k, d=None: getattr(verdict, k, d))
    word = get("verdict")
    if word not in VERDICT_WORDS:
        raise RuntimeError(f"a symbolic claim returned the verdict {word!r}")
    recheck = get("recheck")
    return {"verdict": word, "statement": str(get("statement") or ""),
            "seconds": float(get("seconds") if get("seconds") is not None else seconds),
            "counterexample": to_jsonable(get("counterexample")),
            "recheck": None if recheck is None else str(recheck),
            "reason": None if not get("reason") else str(get("reason"))}


def disagrees(obj: dict) -> bool:
    """A concrete re-check that contradicts the symbolic verdict (a bug: reported loudly, exit 1)."""
    return bool(obj.get("recheck")) and "DISAGREE" in obj["recheck"].upper()


def not_rechecked(obj: dict) -> bool:
    """A proof whose re-check did not run (its program could not be run): not confirmed, so unknown (exit 3)."""
    return obj["verdict"] == "proved" and str(obj.get("recheck") or "").startswith("not re-checked")


def exit_code(obj: dict) -> int:
    if disagrees(obj):
        return 1
    if not_rechecked(obj):
        return 3
    return {"proved": 0, "refuted": 1, "unknown": 3}[obj["verdict"]]


def counterexample_lines(cx) -> list[str]:
    """The counterexample, one fact a line: n and the parameters first, then positions, the witness path, the rest."""
    if cx is None:
        return []
    if not isinstance(cx, dict):
        return [f"  counterexample: {json.dumps(cx, default=str)}"]
    lines = []
    head = []
    if "n" in cx:
        head.append(f"n = {cx['n']}")
    for name, value in (cx.get("params") or {}).items():
        head.append(f"{name} = {value}")
    title = "counterexample (an n; smaller may exist)" if cx.get("smallest") is False else "smallest counterexample"
    lines.append(f"  {title}: " + (", ".join(head) if head else "(no size)"))
    names = cx.get("names") if isinstance(cx.get("names"), dict) else {}
    for key, value in cx.items():
        if key in ("n", "params", "names", "smallest"):
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if names and key == "path" and isinstance(value, list):
            text += "  (" + " -> ".join(names.get(str(p), str(p)) for p in value) + ")"
        if len(text) > 600:
            text = text[:600] + f"… (+{len(text) - 600} more characters)"
        lines.append(f"  {key.replace('_', ' ')}: {text}")
    return lines


def report(args, obj: dict, formulas: dict, title: str) -> int:
    """Print (or emit as JSON) one verdict, write the certificate, return the exit code."""
    if args.certificate:
        write_certificate(args.certificate, obj, formulas, list(getattr(args, "argv", ()) or ()))
    if not emit_json(args, obj):
        say(f"{title}: {VERDICT_WORDS[obj['verdict']]} ({obj['seconds']:.2f} s)")
        if obj["statement"]:
            say(f"  {'proved' if obj['verdict'] == 'proved' else 'statement'}: {obj['statement']}")
        if obj["counterexample"] is not None:
            say(*counterexample_lines(obj["counterexample"]))
        if obj["recheck"]:
            say(f"  re-check by the concrete engine: {obj['recheck']}")
        if obj["reason"]:
            say(f"  reason: {obj['reason']}")
        if args.certificate:
            say(f"  certificate written to {args.certificate}")
        if args.out:
            say(f"  JSON written to {args.out}")
    if disagrees(obj):
        print(f"hasse: the symbolic verdict and the concrete engine DISAGREE: {obj['recheck']} (a bug in the kit)",
              file=sys.stderr)
    return exit_code(obj)


def formula_record(mask) -> dict:
    """A mask's formula as text (cut at FORMULA_CHARS) with its SHA-256, its size term and side conditions.

    A task (anything with ``holds``) gives ``holds(p, t)``, ``predicts(p, t)`` and ``group(p)`` at fresh
    symbols ``p``, ``t`` instead, each with its own SHA-256.
    """
    if hasattr(mask, "holds"):
        import z3

        p, t = z3.Ints("p t")
        parts = {"holds": mask.holds(p, t), "predicts": mask.predicts(p, t)}
        if mask.group is not None:
            parts["group"] = mask.group(p)
        out = {"name": mask.name, "conditions": [str(c) for c in mask.conditions]}
        for key, expr in parts.items():
            text = str(expr)
            out[key] = text if len(text) <= FORMULA_CHARS else None
            out[f"{key}_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return out
    text = str(mask.formula)
    return {"name": mask.name, "size": str(mask.size), "conditions": [str(c) for c in mask.conditions],
            "formula": text if len(text) <= FORMULA_CHARS else None, "formula_chars": len(text),
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def versions() -> dict:
    import z3

    from hasse import __version__

    return {"hasse": __version__, "z3": z3.get_version_string(), "python": platform.python_version()}


def write_certificate(path: str, obj: dict, formulas: dict, argv: list[str]) -> None:
    """The proof's certificate (JSON, written atomically): the claim, statement, verdict, formulas, versions, seconds."""
    from hasse.views.output import to_jsonable
    from hasse.theory.atomic_file import write_text

    cert = {"certificate": f"hasse {obj['command']}", **obj,
            "formulas": {k: formula_record(m) for k, m in formulas.items()},
            "versions": versions(), "argv": argv}
    write_text(path, json.dumps(to_jsonable(cert), indent=1) + "\n")

"""The mutation suite: every one-line bug of ``tests/mutations.py`` against ``hasse prove all``, then the tests.

For each mutation: a temporary copy of the kit with the bug applied
(:func:`tests.mutations.mutated_copy`), then ``hasse prove all --n N --method both --json``
run on it (``PYTHONPATH`` = the copy). ``prove all`` *catches* the mutation when some
result is refuted or unknown (named by the first such theorem and method), and *misses*
it when every result is proved (exit 0). A missed mutation is then given to the tests
that should catch it (the mutation's ``tests``: pytest files, ``::`` names or ``-k``
expressions; the whole suite ``-m "not slow"`` when it names none), run in a copy that
also holds the test suite: *caught* when a test fails, *missed* when they all pass.
The clean kit runs first, and so do the named tests on the clean copy: both must pass
(else the table means nothing).

    python -m benchmarks.mutation [--n 4] [--only NAME ...] [--tests-always] [--json]

``--tests-always`` runs the tests of every mutation, also of those ``prove all`` caught.
Prints one row per mutation (mutation | file:line | prove all | tests) and
``prove all alone: X of N (P %); prove + tests: Y of N``; exit 0 when every mutation
is caught by one or the other.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mutations import MUTATIONS, line_of, mutated_copy, run_kit, run_tests  # noqa: E402

FULL_SUITE = ("tests",)  # a mutation that names no tests: the whole suite, -m "not slow"


def prove_all(mutation, n: int) -> dict:
    """``prove all --n N --method both`` on a copy with ``mutation``: verdict refuted / unknown / missed."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = mutated_copy(mutation, Path(tmp) / "kit")
        start = time.monotonic()
        done = run_kit(copy, "prove", "all", "--n", str(n), "--method", "both", "--json", timeout=1800)
        seconds = time.monotonic() - start
    try:
        results = json.loads(done.stdout)["results"]
    except (ValueError, KeyError, TypeError):
        results = []
    refuted = [f"{r['theorem']} ({r['method']})" for r in results if r["verdict"] == "refuted"]
    unknown = [f"{r['theorem']} ({r['method']})" for r in results if r["verdict"] == "unknown"]
    if refuted:
        verdict, by = "refuted", refuted
    elif unknown:
        verdict, by = "unknown", unknown
    elif done.returncode != 0:  # no verdict at all: a crash is not a refutation
        verdict, by = "error", done.stderr.strip().splitlines()[-1:]
    else:
        verdict, by = "missed", []
    return {"exit": done.returncode, "prove": verdict, "by": by[:3], "prove_seconds": round(seconds, 1)}


def run_named_tests(mutation, args: tuple[str, ...]) -> dict:
    """The tests ``args`` on a copy with ``mutation`` (None: the clean kit): caught when one fails."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = mutated_copy(mutation, Path(tmp) / "kit", with_tests=True)
        start = time.monotonic()
        done = run_tests(copy, args)
        seconds = time.monotonic() - start
    lines = done.stdout.strip().splitlines()
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in lines if line.startswith(("FAILED ", "ERROR "))]
    status = {0: "missed", 1: "caught"}.get(done.returncode, "error")  # 2-5: interrupted, usage, none collected
    return {"tests": status, "test_args": list(args), "failed": failed[:2], "test_seconds": round(seconds, 1),
            "test_summary": lines[-1] if lines else done.stderr.strip()[-200:]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutation", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutations")
    parser.add_argument("--tests-always", action="store_true", help="run the tests also where prove all caught it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    unknown_names = set(args.only or ()) - {m.name for m in MUTATIONS}
    if unknown_names:
        parser.error(f"no such mutation: {', '.join(sorted(unknown_names))}")
    clean = prove_all(None, args.n)
    clean_tests: dict[tuple, dict] = {}  # the named tests on the clean kit, once per selection
    rows = []
    for m in chosen:
        row = {"mutation": m.name, "file": m.path, "line": line_of(m), **prove_all(m, args.n)}
        caught_by_prove = row["prove"] in ("refuted", "unknown")
        if caught_by_prove and not args.tests_always:
            row["tests"] = "not needed"
        else:
            selection = tuple(m.tests) or FULL_SUITE
            if selection not in clean_tests:
                clean_tests[selection] = run_named_tests(None, selection)
            row.update(run_named_tests(m, selection))
            if clean_tests[selection]["tests"] != "missed":  # the tests fail on the clean kit: they prove nothing
                row["tests"] = "error"
                row["test_summary"] = "the tests fail on the clean kit: " + clean_tests[selection]["test_summary"]
        row["caught"] = caught_by_prove or row["tests"] == "caught"
        rows.append(row)
        if not args.json:
            print(_row_text(row), file=sys.stderr, flush=True)
    by_prove = sum(r["prove"] in ("refuted", "unknown") for r in rows)
    caught = sum(r["caught"] for r in rows)
    total = len(rows)
    summary = (f"prove all alone: {by_prove} of {total} ({100 * by_prove / max(total, 1):.0f} %); "
               f"prove + tests: {caught} of {total}")
    if args.json:
        print(json.dumps({"n": args.n, "clean": clean, "clean_tests": [dict(v, selection=list(k)) for k, v in
                                                                        clean_tests.items()],
                          "mutations": rows, "by_prove": by_prove, "caught": caught, "total": total,
                          "summary": summary}))
    else:
        print(f"clean kit: prove all exit {clean['exit']} in {clean['prove_seconds']} s"
              + ("" if clean["exit"] == 0 else "  (NOT clean: the table means nothing)"))
        print(table(rows, args.n))
        print(f"\n{summary}  (`hasse prove all --n {args.n} --method both`)")
    return 0 if clean["exit"] == 0 and caught == total else 1


def _prove_text(row: dict) -> str:
    if row["prove"] in ("refuted", "unknown"):
        return f"{row['prove']}: {row['by'][0]}"
    return row["prove"] + (f": {row['by'][0]}" if row["by"] else "")


def _tests_text(row: dict) -> str:
    if row["tests"] == "caught" and row.get("failed"):
        return f"caught: {row['failed'][0]}"
    return row["tests"]


def _row_text(row: dict) -> str:
    return f"{row['mutation']}  {row['file']}:{row['line']}  {_prove_text(row)}  {_tests_text(row)}"


def table(rows: list[dict], n: int = 4) -> str:
    """The rows as a Markdown table: mutation | file:line | prove all | tests."""
    out = [f"| mutation | file:line | prove all --n {n} --method both | tests |", "|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['mutation']} | {r['file']}:{r['line']} | {_prove_text(r)} | {_tests_text(r)} |")
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())

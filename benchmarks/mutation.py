"""The mutation suite: every one-line bug of ``tests/mutations.py`` against ``hasse prove all``.

For each mutation: a temporary copy of the kit with the bug applied
(:func:`tests.mutations.mutated_copy`), then ``hasse prove all --n N --method both --json``
run on it (``PYTHONPATH`` = the copy). A mutation is *caught* when some result is
refuted or unknown (exit status 1 or 3), *missed* when every result is proved (exit 0);
the first refuted theorem is named. The clean kit runs first and must exit 0 (else the
table means nothing).

    python -m benchmarks.mutation [--n 4] [--only NAME ...] [--json]

Prints one row per mutation and the caught fraction; exit 0 when every mutation is caught.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mutations import MUTATIONS, mutated_copy, run_kit  # noqa: E402


def run_one(mutation, n: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        copy = mutated_copy(mutation, Path(tmp) / "kit")
        start = time.monotonic()
        done = run_kit(copy, "prove", "all", "--n", str(n), "--method", "both", "--json")
        seconds = time.monotonic() - start
    try:
        results = json.loads(done.stdout)["results"]
    except (ValueError, KeyError):
        results = []
    refuted = [r["theorem"] for r in results if r["verdict"] == "refuted"]
    unknown = [r["theorem"] for r in results if r["verdict"] == "unknown"]
    caught = done.returncode != 0
    return {"mutation": mutation.name if mutation else "(clean kit)", "file": mutation.path if mutation else "",
            "exit": done.returncode, "caught": caught, "refuted_by": refuted[:3], "unknown": unknown[:3],
            "seconds": round(seconds, 1), "error": done.stderr.strip().splitlines()[-1:] if not results else []}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mutation", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutations")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    clean = run_one(None, args.n)
    rows = [run_one(m, args.n) for m in chosen]
    caught = sum(r["caught"] for r in rows)
    if args.json:
        print(json.dumps({"n": args.n, "clean": clean, "mutations": rows, "caught": caught, "total": len(rows)}))
    else:
        print(f"clean kit: exit {clean['exit']} in {clean['seconds']} s" + ("" if clean["exit"] == 0 else
                                                                           "  (NOT clean: the table means nothing)"))
        width = max(len(r["mutation"]) for r in rows) if rows else 10
        print(f"{'mutation':<{width}}  {'caught':<6}  exit  {'seconds':>7}  refuted by / unknown")
        for r in rows:
            by = ", ".join(r["refuted_by"]) or (", ".join(r["unknown"]) + " (unknown)" if r["unknown"] else "")
            print(f"{r['mutation']:<{width}}  {'yes' if r['caught'] else 'MISSED':<6}  {r['exit']:>4}  "
                  f"{r['seconds']:>7.1f}  {by or '; '.join(r['error'])}")
        print(f"\ncaught {caught} of {len(rows)} ({100 * caught / max(len(rows), 1):.0f} %) with "
              f"`hasse prove all --n {args.n} --method both`")
    return 0 if clean["exit"] == 0 and caught == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

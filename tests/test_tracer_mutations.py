"""Planted semantic bugs in the symbolic prover (issue 21, "Done when"): each must make a test fail.

Each group of ``TRACER_MUTATIONS`` (tests/mutations.py; entries ``group:part`` are applied together) is
planted in a copy of the kit (``mutated_copy``); a few programs of the adversarial corpus
(tests/adversarial/) run through ``hasse prove-mask`` / ``hasse equiv`` of that copy, black box, and are
judged against the brute-force oracle exactly as in tests/test_adversarial.py (``judge``). The group is
caught when some program the clean kit gets right is judged wrong on the mutated copy (a false proof, a
wrong n, or the kit's own re-check answering DISAGREES). And no planted tracer bug may leave a false
PROVED / "equivalent" standing: the re-check that runs the user's own program must stop each. The one
group that turns the re-check itself into a re-check of the formula carries a tracer bug with it (bool +
bool as integer addition), and there the false proof must appear: that is what the program re-check is for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mutations import TRACER_MUTATIONS, apply, installed_path, line_of  # noqa: E402
from mutations import copy_kit  # noqa: E402
from test_adversarial import Case, argv_of, judge, oracle, run_kit  # noqa: E402,F401 (oracle: the fixture)


def case(file, spec, claim, ref=None, N=40):
    return Case(file, spec, claim, ref, N, 1, 1, False, False, False)


PROGRAMS = {  # group -> programs whose verdict the planted bug changes
    "floor_as_trunc": [case("division.py", "floor_of_negatives", "equiv", "correct.py:halves_causal"),
                       case("division.py", "trunc_of_negatives", "equiv", "division.py:floor_of_negatives")],
    "int64_no_wrap": [case("overflow.py", "mul_2_62", "equiv", "correct.py:causal"),
                      case("overflow.py", "pow_32", "equiv", "correct.py:causal")],
    "bool_sum_as_int": [case("bool_arith.py", "sum_eq_2", "equiv", "correct.py:diag"),
                        case("bool_arith.py", "sum_ge_2", "equiv", "correct.py:diag")],
    "obligation_as_hypothesis": [case("division.py", "dense_until_divisor_7", "dense"),
                                 case("division.py", "leak_free_until_divisor_21", "leak"),
                                 case("division.py", "kv_mod_q_minus_3", "dense")],
    "recheck_reads_formula": [case("bool_arith.py", "sum_eq_2", "equiv", "correct.py:diag"),
                              case("bool_arith.py", "sum_of_three_eq_3", "equiv", "correct.py:window3")],
}
FALSE_PROOF_EXPECTED = {"recheck_reads_formula"}  # with the program re-check gone, the tracer bug stands


def groups() -> dict:
    out: dict = {}
    for m in TRACER_MUTATIONS:
        out.setdefault(m.name.split(":")[0], []).append(m)
    return out


DRIVER = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.append(os.path.dirname(sys.argv[1]))  # `tests.*` helpers, after the kit's copy (which must win `hasse`)
import hasse
assert hasse.__file__.startswith(sys.argv[2]), hasse.__file__
from test_adversarial import run_kit
for argv in json.loads(sys.argv[3]):
    print(json.dumps(run_kit(argv)), flush=True)
"""


def run_mutated(copy: Path, argvs: list) -> list:
    """Each argv through ``main`` of the kit in ``copy`` (one interpreter; each run forked, bounded)."""
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(HERE), str(copy), json.dumps(argvs)], cwd=copy,
                          env=env, capture_output=True, text=True, timeout=1800)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and len(lines) == len(argvs), proc.stderr[-3000:]
    return [None if line == "null" else tuple(json.loads(line)) for line in lines]


def test_every_group_has_programs_and_every_line_is_in_the_code():
    assert set(groups()) == set(PROGRAMS)
    for m in TRACER_MUTATIONS:
        assert line_of(m), f"{m.name}: {m.original!r} is not in {m.path} exactly once (update the entry)"


@pytest.mark.parametrize("group", sorted(PROGRAMS))
def test_a_planted_tracer_bug_is_caught(group, oracle, tmp_path):
    copy = copy_kit(tmp_path / "kit")
    for m in groups()[group]:
        target = copy / installed_path(m.path)
        target.write_text(apply(m, target.read_text()))
    cases = PROGRAMS[group]
    mutated = run_mutated(copy, [argv_of(c) for c in cases])
    rows = []
    for c, got in zip(cases, mutated):
        clean = judge(c, run_kit(argv_of(c)), oracle)
        bad = judge(c, got, oracle)
        rows.append((c.id, clean, bad))
    table = "\n".join(f"  {i}: clean {a.category}, mutated {b.category}: {b.message[:300]}" for i, a, b in rows)
    if os.environ.get("HASSE_ADVERSARIAL_REPORT"):
        with open(os.environ["HASSE_ADVERSARIAL_REPORT"], "a", encoding="utf-8") as f:
            for i, a, b in rows:
                f.write(json.dumps({"mutation": group, "id": i, "clean": a.category, "mutated": b.category,
                                    "message": b.message[:400]}) + "\n")
    assert all(a.ok for _, a, _ in rows), f"the clean kit is wrong on a program of this group:\n{table}"
    assert any(not b.ok for _, _, b in rows), f"{group}: no program notices the planted bug:\n{table}"
    broken = [i for i, _, b in rows if b.category in ("CRASH", "HANG", "BAD-JSON", "NOT-ONE-LINE")]
    assert not broken, f"{group}: the mutated copy crashes (the entry plants a broken line, not a semantic bug):\n{table}"
    false_proofs = [i for i, _, b in rows if b.category == "FALSE-PROOF"]
    if group in FALSE_PROOF_EXPECTED:
        assert false_proofs, f"{group}: the tracer bug did not reach a proof with the re-check on the formula:\n{table}"
    else:
        assert not false_proofs, f"{group}: a false proof survives the planted bug (the re-check missed it):\n{table}"

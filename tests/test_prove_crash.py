"""A check that crashes gives `unknown` with the crash site; `prove all` goes on (issue 11 follow-up).

Planted: the check raises ZeroDivisionError. Without the guard in
``proofs.theorem.run_theorem`` the exception escapes and `prove all` stops with a traceback.
"""

from __future__ import annotations

import dataclasses

from hasse import cli
from hasse.proofs import registry
from hasse.proofs.theorem import UNKNOWN, Theorem, run_theorem


def _boom(n, ctx):
    return 1 // 0


def test_a_crashing_check_is_unknown_and_names_the_crash():
    result = run_theorem(Theorem("boom", "a planted crash", _boom, None), 3, "exhaustive")
    assert result.verdict == UNKNOWN
    assert result.reason.startswith("crashed: ZeroDivisionError")
    assert "test_prove_crash.py" in result.reason


def test_prove_all_goes_on_after_a_crash(monkeypatch, capsys):
    first = registry.get(registry.NAMES[0])
    crashing = dataclasses.replace(first, exhaustive_check=_boom)
    real_get = registry.get
    monkeypatch.setattr(registry, "get", lambda name: crashing if name == first.name else real_get(name))
    monkeypatch.setattr(registry, "NAMES", registry.NAMES[:3])
    code = cli.main(["prove", "all", "--n", "2", "--method", "exhaustive"])
    out = capsys.readouterr().out
    assert code == cli.EXIT_INCONCLUSIVE
    assert "crashed: ZeroDivisionError" in out
    for name in registry.NAMES[1:3]:  # the theorems after the crash still ran
        assert name in out

"""The one certificate writer (proofs/certificates/format.py): theorem, claim and audit certificates, one path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hasse.proofs.certificates.format import (audit_certificate, claim_certificate, read_certificate,
                                              write_certificate)
from hasse.theory.errors import InputError
from hasse.theory.version import AUDIT_VERSIONS, CLAIM_VERSIONS, PROOF_VERSIONS, versions


def test_a_theorem_certificate_is_read_back(tmp_path):
    from hasse.proofs import registry
    from hasse.proofs.cli import prove

    path = tmp_path / "cert.json"
    write_certificate(str(path), prove(registry.get("limit_is_preorder"), 3, "exhaustive"))
    cert = read_certificate(str(path))
    assert cert.results[0]["verdict"] == "proved" and cert.results[0]["versions"] == versions(PROOF_VERSIONS)


def test_a_claim_certificate_keeps_the_object_formulas_versions_and_argv(tmp_path):
    from hasse.solvers.symbolic.catalog import symbolic_mask

    obj = {"command": "prove-mask", "claim": "dense", "verdict": "proved", "counterexample": {"path": np.arange(3)}}
    path = tmp_path / "claim.json"
    write_certificate(str(path), claim_certificate(obj, {"mask": symbolic_mask("causal")}, ("prove-mask", "causal")))
    data = json.loads(path.read_text())
    assert list(data)[:3] == ["certificate", "command", "claim"] and data["certificate"] == "hasse prove-mask"
    assert data["counterexample"] == {"path": [0, 1, 2]} and data["argv"] == ["prove-mask", "causal"]
    assert data["versions"] == versions(CLAIM_VERSIONS) and len(data["formulas"]["mask"]["sha256"]) == 64


def test_an_audit_certificate_adds_how_it_was_made(tmp_path):
    path = tmp_path / "audit.json"
    data = {"command": "audit", "versions": {"torch": "x"}, "passed": np.bool_(True)}
    write_certificate(str(path), audit_certificate(data, 1.23456, ["audit", "llama"]))
    out = json.loads(path.read_text())
    assert out["passed"] is True and out["certificate"]["kind"] == "audit" and out["certificate"]["seconds"] == 1.235
    assert set(out["certificate"]) == {"kind", "argv", "python", "platform", "seconds", "created"}
    assert AUDIT_VERSIONS == ("transformers", "torch")


def test_the_writer_refuses_a_folder_and_an_input(tmp_path):
    with pytest.raises(InputError, match="not a regular file"):
        write_certificate(str(tmp_path), {"certificate": "x"})
    given = tmp_path / "in.json"
    given.write_text("{}")
    with pytest.raises(InputError, match="overwrite the input"):
        write_certificate(str(given), {"certificate": "x"}, inputs=(str(given),))

"""The command line in-process for the tests: ``run`` (exit code, stdout, stderr of ``hasse.cli.main``),
``schema_problems`` (a JSON report against docs/schema.json) and ``written`` (a fixture: a file of a given
text under the test's tmp_path)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from hasse.cli import main

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "docs" / "schema.json"


def run(capsys, *argv):
    """``(exit code, stdout, stderr)`` of ``main`` on ``argv`` (each argument made a str)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def schema_problems(command: str, data) -> list[str]:
    """The messages (first 200 characters) of every way ``data`` breaks ``command``'s schema in docs/schema.json."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = _schema()
    wanted = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/" + command}
    return [e.message[:200] for e in jsonschema.Draft202012Validator(wanted).iter_errors(data)]


def written(name: str, text: str):
    """A fixture: the path of ``tmp_path / name`` holding ``text`` (bind it to the fixture's name)."""

    @pytest.fixture
    def fixture(tmp_path) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return fixture

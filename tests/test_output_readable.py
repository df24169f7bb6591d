"""Output a person reads (issue 11, point 4).

- progress lines never leave a half line before a result: none at all when stderr is
  captured, and on a (fake) terminal each one is erased before the next result line;
- aligned columns (``hasse prove``'s verdicts, leak and flow tables);
- nothing cut without an ellipsis and the count of what was left out;
- one-line usage errors naming the subcommand, ``hasse`` alone -> exit 2;
- "LEAK in the limit (first at depth d)" with d the shortest witness length, computed
  here from :func:`hasse.find_leaks`, independently of the printer;
- ``assert_no_leak`` in pytest: the message, not the helper's source; the plugin.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from importlib.metadata import distributions
from pathlib import Path

import pytest

import hasse
from hasse.views import output
from hasse.cli import build_parser, main
from hasse.views.tables import Columns, align, capped_rows, cut, cut_items

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ a fake terminal


class Screen:
    """A terminal that stdout and stderr both write to: ``\\r``, ``ESC[K`` and ``\\n`` act as on a real one.

    ``lines`` is what a person sees afterwards; ``log`` keeps every write with its stream.
    """

    def __init__(self):
        self.lines: list[str] = []
        self.current: list[str] = []
        self.col = 0
        self.log: list[tuple[str, str]] = []

    def write(self, stream: str, text: str) -> None:
        self.log.append((stream, text))
        i = 0
        while i < len(text):
            ch = text[i]
            if text.startswith("\x1b[K", i):
                del self.current[self.col:]
                i += 3
                continue
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self.lines.append("".join(self.current))
                self.current, self.col = [], 0
            else:
                if self.col < len(self.current):
                    self.current[self.col] = ch
                else:
                    self.current.append(ch)
                self.col += 1
            i += 1

    def finish(self) -> list[str]:
        if self.current:
            self.lines.append("".join(self.current))
            self.current = []
        return self.lines


class TtyStream(io.TextIOBase):
    def __init__(self, screen: Screen, name: str, tty: bool = True):
        self.screen, self.name, self.tty = screen, name, tty

    def write(self, text: str) -> int:
        self.screen.write(self.name, text)
        return len(text)

    def isatty(self) -> bool:
        return self.tty

    def flush(self) -> None:
        pass


def test_screen_emulates_a_terminal():
    screen = Screen()
    screen.write("err", "\r  working 1/10")
    screen.write("out", "RESULT\n")
    assert screen.finish() == ["  working 1/10RESULT"]  # the half line a person would see
    screen = Screen()
    screen.write("err", "\r  working 1/10\r\x1b[K")
    screen.write("out", "RESULT\n")
    assert screen.finish() == ["RESULT"]


@contextlib.contextmanager
def terminal(monkeypatch, tty: bool = True):
    """stdout and stderr on one fake terminal (stderr a TTY when ``tty``); yields the Screen."""
    screen = Screen()
    err = TtyStream(screen, "err", tty)
    monkeypatch.setattr(sys, "stdout", TtyStream(screen, "out", tty))
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(output, "PROGRESS", output.ProgressLine(err, min_interval=0))
    yield screen


def _stopping_early(monkeypatch):
    """Every check reports progress 3 of 10 and then stops (as a timeout or an early counterexample does)."""
    import hasse.proofs.cli as proofs_cli

    real = proofs_cli.run_theorem

    def run_theorem(theorem, n, method, ctx):
        if ctx.progress is not None:
            ctx.progress(3, 10)
        return real(theorem, n, method, replace(ctx, progress=None))

    monkeypatch.setattr(proofs_cli, "run_theorem", run_theorem)


PROVE = ["prove", "reach_monotone_in_depth", "--n", "3", "--method", "both"]


def test_prove_on_a_terminal_clears_each_progress_line_before_its_result(monkeypatch):
    _stopping_early(monkeypatch)
    with terminal(monkeypatch) as screen:
        code = main(PROVE)
    lines = screen.finish()
    assert code == 0
    shown = [text for stream, text in screen.log if stream == "err" and "3/10" in text]
    assert len(shown) == 2, screen.log  # one status line per method was drawn ...
    assert not any("3/10" in line for line in lines), lines  # ... and none is left on the screen
    rows = [line for line in lines if line.startswith("reach_monotone_in_depth")]
    assert len(rows) == 2 and all(" PROVED " in r for r in rows), lines
    # each status was erased before the next thing written to stdout
    pending = False
    for stream, text in screen.log:
        if stream == "err" and "3/10" in text:
            pending = True
        elif stream == "err" and text.startswith("\r\x1b[K"):
            pending = False
        elif stream == "out" and text.strip():
            assert not pending, f"{text!r} printed after a status line that was not cleared"


def test_planted_missing_clear_leaves_a_half_line(monkeypatch):
    """The check above can fail: without clearing, the status and the verdict share a line."""
    _stopping_early(monkeypatch)
    monkeypatch.setattr(output.ProgressLine, "clear", lambda self: None)
    with terminal(monkeypatch) as screen:
        main(PROVE)
    assert any("3/10" in line for line in screen.finish())


def test_prove_with_captured_stderr_prints_no_progress(monkeypatch):
    _stopping_early(monkeypatch)
    with terminal(monkeypatch, tty=False) as screen:
        assert main(PROVE) == 0
    assert all("\r" not in text and "\x1b" not in text for _, text in screen.log)


def test_prove_subprocess_has_no_carriage_return():
    proc = subprocess.run([sys.executable, "-m", "hasse", *PROVE[:-1], "exhaustive"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr + proc.stdout and "\x1b" not in proc.stderr + proc.stdout


def test_progress_line_never_wraps(monkeypatch):
    screen = Screen()
    line = output.ProgressLine(TtyStream(screen, "err"), min_interval=0)
    monkeypatch.setenv("COLUMNS", "40")
    line.show("x" * 100)
    drawn = screen.finish()[0]
    assert len(drawn) <= 39 and drawn.endswith("…")


# ------------------------------------------------------------------ aligned columns


def _column_starts(line: str, word: str) -> int:
    return line.index(f" {word}") + 1


def test_prove_all_verdict_column_starts_at_one_offset(capsys):
    code = main(["prove", "all", "--n", "2", "--method", "both"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    from hasse.proofs.registry import NAMES

    rows = [line for line in out if line.split() and line.split()[0] in set(NAMES)]
    assert len(rows) >= 20
    header = next(line for line in out if line.startswith("theorem"))
    starts = {_column_starts(r, "PROVED") for r in rows}
    assert starts == {header.index("verdict")}, out
    seconds_end = {r.index(" s ") + 2 for r in rows}  # seconds right-aligned: one end column
    assert len(seconds_end) == 1


def test_align_and_columns():
    lines = align([("a", 1, "x"), ("bbbb", 100, "y")], header=("name", "count", "note"), right=(1,))
    assert [line.index("note") if i == 0 else None for i, line in enumerate(lines)][0] == \
        lines[1].index("x") == lines[2].index("y")
    assert all(line == line.rstrip() for line in lines)
    cols = Columns(("t", "v"), [("long_name", "x")])
    assert cols.row(("a", "tail")).index("tail") == cols.row(("long_name", "tail")).index("tail")


def test_leak_table_columns_line_up(capsys):
    code = main(["leak", "bad_butterfly_crossed:n=6"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    start = out.index(next(line for line in out if line.startswith("leaks (")))
    header, rows = out[start + 1], []
    for line in out[start + 2:]:
        if not line.strip():
            break
        rows.append(line)
    assert len(rows) >= 4
    path_col = header.index("path")
    assert all(r[path_col - 2:path_col] == "  " and r[path_col] != " " for r in rows), out
    depth_end = header.index("depth") + len("depth")
    assert all(r[depth_end - 1].isdigit() and r[depth_end] == " " for r in rows), out


# ------------------------------------------------------------------ ellipses


def test_cut_says_how_much_was_left_out():
    text = "x" * 712
    assert cut(text, 300) == "x" * 300 + "… (+412 more characters)"
    assert cut(text, 300, ascii=True).endswith("... (+412 more characters)")
    assert cut(text, 712) == text
    assert cut_items(range(25), 5) == "0, 1, 2, 3, 4, … (+20 more)"
    assert capped_rows(list(range(7)), str, 3)[-1] == "  … and 4 more (use --json for all)"


def test_prove_witness_is_cut_with_a_count():
    from hasse.cli.prove import WITNESS_CHARS, result_lines, verdict_columns
    from hasse.proofs import registry
    from hasse.proofs.theorem import Result

    theorem = registry.get("no_residual_can_oscillate")
    witness = {"mask": [[i % 2] * 40 for i in range(40)]}
    full = json.dumps(witness)
    r = Result(theorem=theorem.name, n=40, method="z3", verdict="proved", checked=1, seconds=0.5, witness=witness)
    lines = result_lines(verdict_columns([theorem], 40, "z3"), r)
    shown = lines[1].split("witness: ", 1)[1]
    assert shown == full[:WITNESS_CHARS] + f"… (+{len(full) - WITNESS_CHARS:,} more characters)"


def test_no_silent_truncation_left_in_printers():
    """A slice that cuts text for a person must say so: every `[:N]` in the printers is next to an ellipsis."""
    import re

    offenders = []
    for path in [*ROOT.glob("hasse/*.py"), ROOT / "proofs" / "cli.py"]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\)\[:\d{3}\]", line) and "…" not in line and "more" not in line:
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert not offenders, offenders


# ------------------------------------------------------------------ usage errors


def _subcommands(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _subcommands(sub, (*prefix, name))


SUBCOMMANDS = [path for path, _ in _subcommands(build_parser())]


@pytest.mark.parametrize("path", SUBCOMMANDS, ids=" ".join)
def test_unknown_flag_is_one_line_naming_the_subcommand(path, capsys):
    parser = dict(_subcommands(build_parser()))[path]
    required = [a for a in parser._actions if a.required and not a.option_strings
                and not isinstance(a, argparse._SubParsersAction)]
    options = [a for a in parser._actions if a.required and a.option_strings]
    argv = [*path, *["x"] * len(required)]
    for a in options:
        argv += [a.option_strings[0], "1"]
    with pytest.raises(SystemExit) as info:
        main([*argv, "--bogus-flag"])
    err = capsys.readouterr().err
    name = "hasse " + " ".join(path)
    assert info.value.code == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"{name}: error: unrecognized arguments: --bogus-flag"), err
    assert f"(see {name} --help)" in err


def test_a_flag_before_the_command_is_the_top_levels(capsys):
    with pytest.raises(SystemExit):
        main(["--bogus-flag", "catalog"])
    assert capsys.readouterr().err.startswith("hasse: error: unrecognized arguments: --bogus-flag")


def test_hasse_alone_exits_2_with_usage_on_stderr():
    proc = subprocess.run([sys.executable, "-m", "hasse"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("usage: hasse")
    assert proc.stderr.splitlines()[-1] == "hasse: error: no command given (see hasse --help)"


# ------------------------------------------------------------------ verdict sentences


@pytest.mark.parametrize("spec", ["bad_butterfly_crossed:n=4", "bad_butterfly_self:n=3",
                                  "bad_block_own_content:n=4,block=2", "bad_mlm_unmasked:n=3",
                                  "bad_packed_window:lengths=3+3,window=2"])
def test_leak_verdict_names_the_first_depth(spec, capsys):
    report = hasse.find_leaks(spec)
    found = report.leaks or report.isolation
    first = min(len(x.path) - 1 for x in found)  # the shortest witness, counted here
    code = main(["leak", spec])
    out = capsys.readouterr().out
    assert code == 1
    verdict = next(line for line in out.splitlines() if line.startswith("verdict:"))
    assert verdict.endswith(f"in the limit (first at depth {first})"), verdict
    assert "every depth" not in verdict


def test_clean_and_bounded_verdicts(capsys):
    assert main(["leak", "butterfly:n=4"]) == 0
    assert "verdict: LEAK-FREE in the limit (every depth)" in capsys.readouterr().out
    main(["leak", "bad_butterfly_crossed:n=3", "--layers", "1"])
    assert "verdict: LEAK-FREE within L = 1 layer\n" in capsys.readouterr().out
    main(["leak", "bad_butterfly_crossed:n=3", "--layers", "3"])
    assert "verdict: LEAK within L = 3 layers (first at depth 2)" in capsys.readouterr().out


def test_flow_sentences(capsys):
    flows = hasse.find_flows("sliding_window:n=12,w=3", sources=[0, 1], sinks=[9, 10, 11])
    first = min(len(f.path) - 1 for f in flows)
    assert main(["flow", "sliding_window:n=12,w=3", "--from", "0-1", "--to", "9-11"]) == 1
    out = capsys.readouterr().out
    assert f"in the limit (first at depth {first})" in out and "every depth" not in out
    assert main(["flow", "document:lengths=3+4", "--from", "0-2", "--to", "3-6"]) == 0
    assert "in the limit (every depth)" in capsys.readouterr().out


def test_assert_no_leak_message_names_the_first_depth_and_the_command():
    with pytest.raises(AssertionError) as info:
        hasse.assert_no_leak("bidirectional:n=5", labels=[None, None, 0, None, None])
    message = str(info.value)
    assert message.splitlines()[0] == "1 leak in the limit (first at depth 1):"
    command = message.splitlines()[-1].removeprefix("reproduce: ")
    assert command == "hasse flow bidirectional:n=5 --from 0 --to 2"
    assert main(command.split()[1:]) == 1  # the command line shows the same leak


# ------------------------------------------------------------------ pytest: short failures, the plugin


# as pytest's autoload sees it: every installed distribution (a stale hasse_attention.egg-info
# in the checkout can hide the installed one from importlib.metadata.entry_points)
PLUGIN_ACTIVE = any(ep.group == "pytest11" and ep.name == "hasse"
                    for dist in distributions() for ep in dist.entry_points)
PLUGIN_ARGS = [] if PLUGIN_ACTIVE else ["-p", "hasse.pytest_plugin"]

USER_TESTS = '''
import numpy as np
import pytest

CAUSAL = np.tril(np.ones((5, 5), dtype=bool))

def test_helper_fails_short():
    from hasse.testing import assert_no_leak
    assert_no_leak(CAUSAL, labels=[None, None, 0, None, None])

def test_fixture(assert_no_leak):
    assert_no_leak(CAUSAL, labels=[1, 2, 3, 4, None])

def test_mask_fixture(hasse_mask):
    assert hasse_mask("sliding_window:n=6,w=2").n == 6

@pytest.mark.hasse_no_leak("sliding_window:n=8,w=2")
def test_marker_clean():
    pass

@pytest.mark.hasse_no_leak("bidirectional:n=4")
def test_marker_leaks():
    pass
'''


def _lines_of_testing_py(text: str) -> list[str]:
    """The lines of pytest's output that quote hasse/testing.py's source."""
    import tokenize

    source = (ROOT / "hasse" / "testing.py").read_text()
    lines = source.splitlines()
    skip = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    code = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type not in skip}
    ours = {lines[i - 1].strip() for i in code if len(lines[i - 1].strip()) > 25}  # code, not docstrings
    return [line for line in text.splitlines() if line.lstrip(">").strip() in ours]


def test_failing_assert_no_leak_in_pytest_shows_the_message_not_our_source(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("--strict-markers", "-p", "no:cacheprovider", *PLUGIN_ARGS)
    result.assert_outcomes(passed=3, failed=2)
    text = result.stdout.str()
    assert "1 leak in the limit (first at depth 1):" in text
    assert "position 2 (target 0) depends on position 0, which holds token 0, at depth 1: 0 -> 2" in text
    assert 'reproduce: numpy.save("mask.npy", mask), then: hasse flow mask.npy --from 0 --to 2' in text
    assert "hasse_no_leak: 3 leaks in the limit (first at depth 1):" in text  # the marker's message
    assert "reproduce: hasse flow bidirectional:n=4 --from 1 --to 0" in text
    assert not _lines_of_testing_py(text), _lines_of_testing_py(text)
    assert "hasse/testing.py" not in text and "pytest_plugin.py" not in text
    failure = text[text.index("test_helper_fails_short"):text.index("test_marker_leaks")]
    assert len(failure.splitlines()) < 20, failure  # short: the test's lines and the message


def test_planted_missing_tracebackhide_shows_our_source(pytester):
    """The check above can fail: with __tracebackhide__ off, pytest quotes the helper's source."""
    pytester.makeconftest(f'''
import hasse.testing

path = {str(ROOT / "hasse" / "testing.py")!r}
source = open(path).read().replace("__tracebackhide__ = True", "__tracebackhide__ = False")
exec(compile(source, path, "exec"), hasse.testing.__dict__)  # the same lines, frames no longer hidden
''')
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *PLUGIN_ARGS)
    result.assert_outcomes(passed=3, failed=2)
    assert _lines_of_testing_py(result.stdout.str())


def test_plugin_costs_nothing_when_loaded():
    code = ("import sys; import hasse.pytest_plugin; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'z3', 'torch', 'networkx')))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_plugin_is_registered_in_pyproject():
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["pytest11"] == {"hasse": "hasse.pytest_plugin"}


def test_plugin_can_be_turned_off(pytester):
    pytester.makepyfile(test_user='''
import pytest

@pytest.mark.hasse_no_leak("bidirectional:n=4")
def test_marker():
    pass
''')
    args = ["-p", "no:cacheprovider", "-p", "no:hasse"] if PLUGIN_ACTIVE else ["-p", "no:cacheprovider"]
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=1)  # without the plugin the marker is only a mark


def test_certificate_verify_rows_line_up(tmp_path, capsys):
    cert = tmp_path / "cert.json"
    assert main(["prove", "all", "--n", "2", "--method", "both", "--certificate", str(cert)]) == 0
    capsys.readouterr()
    assert main(["certificate", "verify", str(cert)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("AGREES")]
    assert len(rows) >= 20
    assert len({r.index(" proved ") for r in rows}) == 1 and len({r.index(" n=2 ") for r in rows}) == 1


def test_hostile_values_in_messages_are_cut_with_a_count():
    from hasse.theory.errors import clip

    assert clip("t" * 500, 60) == "t" * 60 + "… (+440 more characters)"
    assert clip("short", 60) == "short"


def test_merge_formulas_and_consistent_rows_line_up(capsys):
    main(["merge", "infill:n=4"])
    rows = [line for line in capsys.readouterr().out.splitlines() if " -> " in line and line.endswith(" ok")]
    assert len(rows) >= 4 and len({r.index(" -> ") for r in rows}) == 1, rows
    assert main(["consistent", "bad_block_query_history:n=8,block=2", "--inference", "block:n=8,block=2"]) == 1
    rows = [line for line in capsys.readouterr().out.splitlines() if "closest training node" in line]
    assert len(rows) >= 2 and len({r.index("closest") for r in rows}) == 1, rows

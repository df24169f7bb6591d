"""One vocabulary across commands (issue 11.3, design.md §7).

Flags: the size of a mask (tokens) is --n on every command; every command with --json
has --out and --ascii. Spec parameters: one spelling per concept (window, block, n),
other spellings only as declared aliases (w for window), which build the same thing.
"""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pytest

from hasse.cli import build_parser, main
from hasse.theory.catalog import build_mask, build_task, entries, resolve_spec
from hasse.theory.errors import InputError
from tests.cli_parsers import commands

# flags that name a size on another axis than the tokens: the key axis of a non-square mask
# (FlexAttention's KV_LEN) and the query rows; not a second name for --n.
OTHER_AXES = {"--kv-len", "--queries"}
SIZE_FLAG = re.compile(r"^--(?:n|max-n|max-size|size|tokens|length|len|num-tokens|seq-len|positions)$")

# parameter names that look like an abbreviation of another one but name another concept
NOT_ABBREVIATIONS = {("b", "block"): "b is the index of the block predicted (task block), not a block size",
                     ("d", "documents"): "d is a window's distance (sliding_window_distance), not documents",
                     ("d", "dmin"): "d is one offset of multi-token prediction (task mtp), dmin MuToR's least one",
                     ("block", "blocks"): "blocks lists several block sizes (block_mixture), block is one size",
                     ("b", "blocks"): "b is the index of the block predicted, blocks a list of block sizes"}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def options(parser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions for o in a.option_strings}


def test_the_mask_size_flag_is_n_everywhere():
    seen = []
    for name, parser in commands().items():
        for flag, action in options(parser).items():
            if SIZE_FLAG.match(flag) and flag != "--n":
                # only a hidden, deprecated alias may spell it otherwise (counterexample --max-n)
                assert action.help == argparse.SUPPRESS, f"hasse {name} names a size {flag}; use --n"
            if flag == "--n":
                seen.append(name)
            assert flag in OTHER_AXES or "len" not in flag and "size" not in flag, (name, flag)
    assert {"analyze", "leak", "flow", "counterexample", "prove", "gpu-check"} <= set(seen)


def test_every_command_with_json_has_out_and_ascii():
    with_json = {name: p for name, p in commands().items() if "--json" in options(p)}
    assert len(with_json) >= 10
    for name, parser in with_json.items():
        assert {"--out", "--ascii"} <= set(options(parser)), f"hasse {name} has --json but not --out / --ascii"
        assert options(parser)["--out"].metavar in ("FILE", "TASK.json")


def test_no_parameter_is_spelled_two_ways_without_an_alias():
    names: dict[str, set[str]] = {}  # canonical name -> the aliases declared with it, over every entry
    for entry in entries():
        for p in entry.params:
            names.setdefault(p.name, set()).update(p.aliases)
            assert p.name not in p.aliases
    for a in names:
        for b in names:
            if a != b and b.startswith(a) and (a, b) not in NOT_ABBREVIATIONS:
                pytest.fail(f"spec parameter {a!r} looks like a second spelling of {b!r}: declare it an alias")
    # an alias is never also a canonical name, and the same alias always means the same parameter
    owners: dict[str, set[str]] = {}
    for name, aliases in names.items():
        for alias in aliases:
            owners.setdefault(alias, set()).add(name)
    assert all(len(o) == 1 for o in owners.values()) and not set(owners) & set(names)
    # every entry with a window accepts w; block sizes are `block`, sizes `n`
    for entry in entries():
        for p in entry.params:
            if p.name == "window":
                assert "w" in p.aliases, entry.name
        assert not {p.name for p in entry.params} & {"block_size", "l", "size", "tokens", "w"}, entry.name


@pytest.mark.parametrize("w_spec, window_spec", [
    ("sliding_window:n=12,w=3", "sliding_window:n=12,window=3"),
    ("sliding_window:w=1,n=5", "sliding_window:n=5,window=1"),
    ("sliding_window:n=4096,w=8", "sliding_window:n=4096,window=8"),  # the figure
])
def test_w_and_window_give_the_same_mask(w_spec, window_spec):
    a, b = build_mask(w_spec), build_mask(window_spec)
    assert np.array_equal(a.matrix, b.matrix) and a.spec == b.spec == window_spec
    n, w = (resolve_spec(window_spec).kwargs()[k] for k in ("n", "window"))
    q, k = np.indices((n, n))
    assert np.array_equal(a.matrix, (q - w < k) & (k <= q))  # the definition, independently


@pytest.mark.parametrize("name", ["packed:lengths=3+2", "bad_packed_window:lengths=3+3"])
def test_w_and_window_give_the_same_task(name):
    a, b = build_task(f"{name},w=2"), build_task(f"{name},window=2")
    assert a == b and a.name == b.name and ",window=2" in a.name


@pytest.mark.parametrize("spec", ["sliding_window:n=4,w=2,window=2", "packed:lengths=2+2,window=2,w=2"])
def test_a_parameter_given_under_two_names_is_refused(spec):
    with pytest.raises(InputError, match="given twice"):
        resolve_spec(spec)


def test_the_cli_reports_window_and_takes_w(capsys):
    code, out, _ = run(capsys, "analyze", "sliding_window:n=6,w=2")
    assert code == 0 and "sliding_window:n=6,window=2" in out
    code, _, err = run(capsys, "analyze", "sliding_window:n=6,w=2,window=2")
    assert code == 2 and "given twice" in err and err.count("\n") == 1


def test_counterexample_takes_n_and_the_old_max_n(capsys):
    _, new, _ = run(capsys, "counterexample", "bad_butterfly_crossed", "--n", "3", "--json")
    code, old, err = run(capsys, "counterexample", "bad_butterfly_crossed", "--max-n", "3", "--json")
    assert code == 1 and json.loads(old)["checked"] == json.loads(new)["checked"] == [1, 2]
    assert "deprecated" in err and "--n" in err
    code, _, err = run(capsys, "counterexample", "bad_butterfly_crossed", "--max-n", "3", "--n", "3")
    assert code == 2 and "--n only" in err
    assert "--max-n" not in build_parser()._subparsers._group_actions[0].choices["counterexample"].format_help()


def test_counterexample_design_and_inference_may_fix_n(capsys):
    # a design that fixes n: that size only (it used to be refused with "leave n out")
    code, out, _ = run(capsys, "counterexample", "bad_block_own_content:n=4,block=2", "--json")
    data = json.loads(out)
    assert code == 1 and data["checked"] == [4] and data["tokens"] == 4
    # --inference as hasse consistent takes it (block:n=4,block=2) or without n: the same answer at n = 4
    base = ["counterexample", "bad_block_query_history:block=2", "--method", "both", "--json"]
    with_n = json.loads(run(capsys, *base, "--inference", "block:n=4,block=2")[1])
    without = json.loads(run(capsys, *base, "--inference", "block:block=2")[1])
    assert with_n["tokens"] == without["tokens"] == 4 and with_n["property"] == "inconsistency"
    assert with_n["checked"] == [4] and with_n["agree"]
    code, _, err = run(capsys, "counterexample", "bad_block_query_history:n=6,block=2", "--inference",
                       "block:n=4,block=2")
    assert code == 2 and "fixes n = 6" in err and err.count("\n") == 1
    code, _, err = run(capsys, "counterexample", "butterfly:n=4", "--n", "6")
    assert code == 2 and "leave out --n" in err


@pytest.mark.parametrize("argv", [
    ["analyze", "butterfly:n=3"],
    ["leak", "bad_butterfly_crossed:n=3"],
    ["flow", "sliding_window:n=8,w=2", "--from", "0", "--to", "7"],
    ["counterexample", "bad_butterfly_crossed", "--n", "3", "--method", "both"],
    ["merge", "infill:n=3"],
    ["consistent", "bad_block_query_history:n=4,block=2", "--inference", "block:n=4,block=2"],
    ["prove", "reach_stable_by_n_minus_1", "--n", "3"],
    ["catalog", "--verbose"],
])
def test_ascii_output_is_ascii(capsys, argv):
    code, plain, _ = run(capsys, *argv)
    code2, out, err = run(capsys, *argv, "--ascii")
    assert code2 == code and out.isascii() and err.isascii(), [c for c in out + err if not c.isascii()][:5]
    if argv[0] in ("leak", "flow", "catalog"):  # these print arrows or ellipses without --ascii
        assert not plain.isascii()

"""The input wing's one reader, hasse.theory.inputs.read: each kind from text and from API objects, the
kinds a caller accepts, errors that carry their parameter to the command line's flag, the torch hooks."""

import json

import numpy as np
import pytest

from hasse.cli import main
from hasse.theory.errors import InputError
from hasse.theory.inputs import hooks
from hasse.theory.inputs.read import Reading, Subject, kind_of, read
from hasse.theory.mask import NamedMask
from hasse.theory.stack import LayerStack
from hasse.theory.task import Task
from tests.fresh_python import modules_after

CAUSAL_3 = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]


def test_each_kind_from_text(tmp_path):
    mask = read("causal:n=3", accept=("mask",))
    assert isinstance(mask, Subject) and mask.kind == "mask" and mask.label == "causal:n=3"
    assert mask.mask.matrix.astype(int).tolist() == CAUSAL_3 and mask.grid.masks.shape == (1, 1, 3, 3)
    task = read("butterfly:n=3", accept=("task", "mask"))
    assert task.kind == "task" and isinstance(task.task, Task) and task.mask is None
    family = read("ar:n=4", accept=("family",))
    assert family.kind == "family" and len(family.family) == 3
    preset = read("gemma2:n=16", accept=("preset", "mask"))
    assert preset.kind == "preset" and preset.stack.depth == 26
    stack = read("causal x2, bidirectional", Reading(n=4), accept=("preset", "stack"))
    assert stack.kind == "stack" and stack.stack.depth == 3
    one_layer = read("causal:n=4", accept=("stack",))  # a mask is a stack of one layer
    assert one_layer.kind == "stack" and one_layer.stack.depth == 1
    (tmp_path / "m.py").write_text("def causal(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n")
    design = read(f"{tmp_path / 'm.py'}:causal", accept=("function", "task"))
    assert design.kind == "function" and design.mask is None  # a design: named, its owner reads it
    mod = read(f"{tmp_path / 'm.py'}:causal", Reading(n=3), accept=("mask",))  # the same text as a mask_mod
    assert mod.kind == "mask" and mod.mask.matrix.astype(int).tolist() == CAUSAL_3
    (tmp_path / "task.json").write_text(json.dumps({"tokens": 2, "inputs": [["x0", 0], ["x1", 1]],
                                                    "labels": [1, None], "mask": [[1, 0], [1, 1]]}))
    assert kind_of(str(tmp_path / "task.json")) == "task"
    assert read(str(tmp_path / "task.json"), accept=("mask",)).mask.n == 2  # a task file's mask
    (tmp_path / "stack.json").write_text(json.dumps({"layers": ["causal x2"], "n": 4}))
    assert kind_of(str(tmp_path / "stack.json")) == "stack"
    assert read(str(tmp_path / "stack.json"), accept=("stack",)).stack.depth == 2


def test_each_kind_from_api_objects():
    array = np.tril(np.ones((3, 3), dtype=bool))
    subject = read(array, accept=("mask",))
    assert subject.kind == "mask" and subject.label == "array" and subject.mask.matrix.tolist() == array.tolist()
    named = NamedMask(array, ("a", "b", "c"), "mine")
    assert read(named, accept=("mask",)).mask.names == ("a", "b", "c")
    task = read("butterfly:n=3", accept=("task",)).task
    assert read(task, accept=("task", "mask")).task is task
    family = read("ar:n=4", accept=("family",)).family
    assert read(list(family), accept=("family",)).family == family
    stack = read("causal x2", Reading(n=3), accept=("stack",)).stack
    assert isinstance(stack, LayerStack) and read(stack, accept=("stack",)).stack is stack
    two_rows = np.stack([array, np.eye(3, dtype=bool)])[:, None]  # (B, H, Q, K) = (2, 1, 3, 3)
    first = read(two_rows, accept=("mask",)).first_row()
    assert first.spec.endswith("[batch row 0 of 2]")


def test_a_kind_not_accepted_is_refused_in_one_line():
    task = read("butterfly:n=3", accept=("task",)).task
    with pytest.raises(InputError) as info:
        read(task, accept=("mask",))
    assert str(info.value) == "butterfly:n=3: a task where a mask is expected"
    with pytest.raises(InputError) as info:  # text of another kind: the accepted kind's reader says why
        read("causal:n=4", accept=("family",))
    assert "\n" not in str(info.value) and "causal" in str(info.value)
    with pytest.raises(ValueError, match="accept must name kinds"):
        read("causal:n=4", accept=("matrix",))


def test_the_param_reaches_the_command_line_as_the_flag(capsys):
    err = InputError("{kv_len=K} needs {n=Q}, the number of queries", "m.py:f", param="kv_len")
    assert err.param == "kv_len" and str(err) == "m.py:f: kv_len=K needs n=Q, the number of queries"
    with pytest.raises(InputError, match=r"heads and batch apply to") as info:  # the API's words
        read("causal:n=4", Reading(heads=2), accept=("mask",))
    assert info.value.param == "heads"
    assert main(["analyze", "causal:n=4", "--heads", "2"]) == 2  # the command line's words, from the table
    assert "causal:n=4: --heads and --batch apply to" in capsys.readouterr().err


def test_a_message_without_param_shows_the_plain_name(monkeypatch, capsys):
    """A planted message that names heads and batch without carrying param: the CLI prints it as written (a
    rewording of message strings would print --heads here)."""
    import hasse.theory.inputs.read as reader

    def planted(source, reading=Reading(), *, accept):
        raise InputError("heads and batch apply to a file.py:mask_mod or a 3-D/4-D array", source)

    monkeypatch.setattr(reader, "read", planted)
    assert main(["analyze", "causal:n=4"]) == 2
    err = capsys.readouterr().err
    assert err == "hasse: error: causal:n=4: heads and batch apply to a file.py:mask_mod or a 3-D/4-D array\n"


def test_the_hooks_are_registered_once_by_the_layer_with_torch():
    import hasse.api  # noqa: F401  registers them at import
    from hasse.gpu_check.mask_mod import torch_fallback_or_none
    from hasse.gpu_check.torch_masks import register_input_hooks, torch_reader_or_none

    assert hooks.registered()
    register_input_hooks()  # again: the same providers, one of each
    assert hooks._PROVIDERS == {"fallback": torch_fallback_or_none, "torch_reader": torch_reader_or_none}
    assert hooks.fallback() is torch_fallback_or_none() and hooks.torch_reader() is torch_reader_or_none()


def test_no_call_site_passes_the_hooks_by_hand():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    offenders = [str(p.relative_to(root)) for folder in ("hasse", "theory", "solvers", "proofs", "gpu_check")
                 for p in (root / folder).rglob("*.py")
                 if "torch_reader=torch_reader_or_none()" in p.read_text()
                 or "fallback=torch_fallback_or_none()" in p.read_text()]
    assert offenders == []


def test_importing_the_input_wing_imports_no_torch():
    loaded = modules_after("import hasse.theory.inputs.read, hasse.theory.inputs.masks, hasse.theory.inputs.hooks\n"
                           "import hasse.theory.inputs.stacks, hasse.theory.inputs.tasks\n"
                           "from hasse.theory.inputs.read import read\n"
                           "read('causal:n=3', accept=('mask',))", timeout=120)
    assert sorted(m for m in loaded if m == "torch" or m.startswith("torch.")) == []

"""assert_no_leak: the helper for users' own test suites."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hasse.testing import assert_no_leak


# mask_mods written the way FlexAttention users write them
def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def make_sliding_window(window):
    def sliding_window(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < window)

    return sliding_window


def bidirectional(b, h, q_idx, kv_idx):
    return q_idx >= 0  # every key


def test_next_token_prediction_is_clean():
    labels = [i + 1 for i in range(7)] + [None]
    assert_no_leak(causal, labels=labels, n=8)
    assert_no_leak(make_sliding_window(3), labels=labels, n=8)


def test_leak_message_shows_witness_path():
    # labels shifted the wrong way: position i predicts token i - 1, which it has seen
    labels = [None] + list(range(5))
    with pytest.raises(AssertionError) as info:
        assert_no_leak(make_sliding_window(2), labels=labels, n=6)
    message = str(info.value)
    assert "5 leaks" in message
    assert "position 3 (target 2) depends on position 2, which holds token 2, at depth 1: 2 -> 3" in message


def test_layers_and_depth():
    # a window of 2 keys: token 0 reaches position 4 only after 4 layers
    labels = [None, None, None, None, 0]
    assert_no_leak(make_sliding_window(2), labels=labels, layers=3, n=5)
    with pytest.raises(AssertionError, match="at depth 4: 0 -> 1 -> 2 -> 3 -> 4"):
        assert_no_leak(make_sliding_window(2), labels=labels, layers=4, n=5)


def test_masked_inputs_via_sources():
    # MLM-style: bidirectional, masked positions hold nothing
    labels = [None, 1, None, 3]
    sources = [0, None, 2, None]
    assert_no_leak(bidirectional, labels=labels, sources=sources, n=4)
    with pytest.raises(AssertionError, match="depth 0"):
        assert_no_leak(bidirectional, labels=labels, n=4)  # unmasked: each position holds its own token


def test_matrix_input_and_bad_sizes():
    assert_no_leak(np.tril(np.ones((3, 3))), labels=[1, 2, None])
    with pytest.raises(ValueError, match="labels"):
        assert_no_leak(np.eye(3), labels=[None])
    with pytest.raises(ValueError, match="needs n"):
        assert_no_leak(causal, labels=[None])


def test_importable_without_torch_and_z3():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('torch', 'z3'):
                    raise ImportError('blocked')
        sys.meta_path.insert(0, Block())
        from hasse.testing import assert_no_leak
        import numpy as np
        assert_no_leak(lambda b, h, q, k: q >= k, labels=[1, None], n=2)
        print('ok')
    """)
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_doctests():
    import doctest

    import hasse.testing

    result = doctest.testmod(hasse.testing)
    assert result.attempted >= 2 and result.failed == 0

"""The catalogue of built-in masks and its spec language.

Every expected matrix below is written out by hand from the rules in design.md §4
and prior_art.md (rows are queries q, columns keys k, 1 = q attends k), not
computed by the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from hasse.theory import catalog
from hasse.theory.catalog import (
    Entry,
    Param,
    build_mask,
    canonical_spec,
    get_entry,
    mask_entries,
    parse_spec,
    resolve_spec,
)
from hasse.theory.errors import InputError
from hasse.theory.mask import NamedMask, grid
from hasse.theory.masks import (
    build_butterfly,
    make_sliding_window,
    make_sliding_window_distance,
)

EXPECTED = {
    "causal:n=3": (
        ("0", "1", "2"),
        [
            [1, 0, 0],
            [1, 1, 0],
            [1, 1, 1],
        ],
    ),
    "bidirectional:n=2": (
        ("0", "1"),
        [
            [1, 1],
            [1, 1],
        ],
    ),
    # window = 2 keys, self included: q - 2 < k <= q
    "sliding_window:n=5,window=2": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 1, 1, 0, 0],
            [0, 0, 1, 1, 0],
            [0, 0, 0, 1, 1],
        ],
    ),
    # chunks of 2, causal inside: k // 2 == q // 2 and k <= q (Llama 4's chunked layers)
    "chunked:n=5,chunk=2": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 1, 1, 0],
            [0, 0, 0, 0, 1],
        ],
    ),
    # a recurrence whose state resets every 3 positions: the prefix of q's chunk
    "recurrent:n=4,chunk=3": (
        ("0", "1", "2", "3"),
        [
            [1, 0, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 0],
            [0, 0, 0, 1],
        ],
    ),
    # a recurrence reset every 3 positions and at the documents 2+3: causal within the segments 2, 1, 2
    "recurrent:n=5,chunk=3,documents=2+3": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 0, 1, 0],
            [0, 0, 0, 1, 1],
        ],
    ),
    # a causal convolution of kernel 3: q - 3 < k <= q
    "conv:n=5,width=3": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 1, 1, 1, 0],
            [0, 0, 1, 1, 1],
        ],
    ),
    # the same, reset at the documents 2+3: nothing reaches back into document 0
    "conv:n=5,width=3,documents=2+3": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 1, 1, 0],
            [0, 0, 1, 1, 1],
        ],
    ),
    # distance d = 2, so 3 keys: 0 <= q - k <= 2
    "sliding_window_distance:n=5,d=2": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 1, 1, 1, 0],
            [0, 0, 1, 1, 1],
        ],
    ),
    "prefix_lm:n=4,prefix=2": (
        ("0", "1", "2", "3"),
        [
            [1, 1, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 0],
            [1, 1, 1, 1],
        ],
    ),
    "document:lengths=2+3,causal=false": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 1, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 0, 1, 1, 1],
            [0, 0, 1, 1, 1],
            [0, 0, 1, 1, 1],
        ],
    ),
    "document:lengths=2+3,causal=true": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [0, 0, 1, 0, 0],
            [0, 0, 1, 1, 0],
            [0, 0, 1, 1, 1],
        ],
    ),
    "block_causal:n=4,block=2": (
        ("0", "1", "2", "3"),
        [
            [1, 1, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 1],
            [1, 1, 1, 1],
        ],
    ),
    "bd3lm:n=4,block=2": (
        ("xt0", "xt1", "xt2", "xt3", "x0_0", "x0_1", "x0_2", "x0_3"),
        [
            # xt0 xt1 xt2 xt3 x00 x01 x02 x03
            [1, 1, 0, 0, 0, 0, 0, 0],  # xt0: own noised block
            [1, 1, 0, 0, 0, 0, 0, 0],  # xt1
            [0, 0, 1, 1, 1, 1, 0, 0],  # xt2: own noised block + clean block 0
            [0, 0, 1, 1, 1, 1, 0, 0],  # xt3
            [0, 0, 0, 0, 1, 1, 0, 0],  # x0_0: clean, block-causal
            [0, 0, 0, 0, 1, 1, 0, 0],  # x0_1
            [0, 0, 0, 0, 1, 1, 1, 1],  # x0_2
            [0, 0, 0, 0, 1, 1, 1, 1],  # x0_3
        ],
    ),
    # order 2, 0, 1: rank(2) = 0, rank(0) = 1, rank(1) = 2
    "xlnet:order=2+0+1": (
        ("c0", "c1", "c2", "g0", "g1", "g2"),
        [
            # c0 c1 c2 g0 g1 g2
            [1, 0, 1, 0, 0, 0],  # c0 sees c2, itself
            [1, 1, 1, 0, 0, 0],  # c1 sees everything of content
            [0, 0, 1, 0, 0, 0],  # c2 is first: only itself
            [0, 0, 1, 1, 0, 0],  # g0 sees c2 (not c0), itself
            [1, 0, 1, 0, 1, 0],  # g1 sees c2, c0, itself
            [0, 0, 0, 0, 0, 1],  # g2 sees no content
        ],
    ),
    # nodes t0 (root), t1 <- t0, t2 <- t0, t3 <- t1; two cached positions p0, p1
    "tree:parents=-1+0+0+1,prefix=2": (
        ("p0", "p1", "t0", "t1", "t2", "t3"),
        [
            # p0 p1 t0 t1 t2 t3
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0],
            [1, 1, 1, 1, 0, 0],
            [1, 1, 1, 0, 1, 0],
            [1, 1, 1, 1, 0, 1],
        ],
    ),
    "block_two_stream:n=4,block=2,variant=chain": (
        ("C0", "C1", "Q0", "Q1", "Q2", "Q3"),
        [
            # C0 C1 Q0 Q1 Q2 Q3
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [0, 0, 1, 0, 0, 0],
            [0, 0, 1, 1, 0, 0],
            [1, 1, 0, 0, 1, 0],
            [1, 1, 0, 0, 1, 1],
        ],
    ),
    "block_two_stream:n=4,block=2,variant=clique": (
        ("C0", "C1", "Q0", "Q1", "Q2", "Q3"),
        [
            # C0 C1 Q0 Q1 Q2 Q3
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [0, 0, 1, 1, 0, 0],
            [0, 0, 1, 1, 0, 0],
            [1, 1, 0, 0, 1, 1],
            [1, 1, 0, 0, 1, 1],
        ],
    ),
    "butterfly:n=3": (
        ("F0", "F1", "B1", "B2", "P0", "P1", "P2"),
        [
            # F0 F1 B1 B2 P0 P1 P2
            [1, 0, 0, 0, 0, 0, 0],  # F0
            [1, 1, 0, 0, 0, 0, 0],  # F1
            [0, 0, 1, 1, 0, 0, 0],  # B1
            [0, 0, 0, 1, 0, 0, 0],  # B2
            [0, 0, 1, 1, 1, 0, 0],  # P0: right context only
            [1, 0, 0, 1, 0, 1, 0],  # P1: F0 and B2
            [1, 1, 0, 0, 0, 0, 1],  # P2: left context only
        ],
    ),
    "butterfly:n=1": (("P0",), [[1]]),
    # the chain formula for 2 layers: 3 = 0b11 attends only its dyadic interval [2, 3] (0 -> 2 -> 3 walks)
    "sparse_causal:n=5,layers=2,tile=0": (
        ("0", "1", "2", "3", "4"),
        [
            [1, 0, 0, 0, 0],
            [1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 0, 1, 1, 0],
            [1, 1, 1, 1, 1],
        ],
    ),
    # P3: the chain row of 3 below 3 (F2 only); P0: the mirrored row of 3 (m = 2: B1 only)
    "sparse_butterfly:n=4,layers=2,tile=0": (
        ("F0", "F1", "F2", "B1", "B2", "B3", "P0", "P1", "P2", "P3"),
        [
            [1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 1, 1, 1, 0, 0, 0, 0],
            [0, 0, 0, 0, 1, 1, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
            [0, 0, 0, 1, 0, 0, 1, 0, 0, 0],
            [1, 0, 0, 0, 1, 1, 0, 1, 0, 0],
            [1, 1, 0, 0, 0, 1, 0, 0, 1, 0],
            [0, 0, 1, 0, 0, 0, 0, 0, 0, 1],
        ],
    ),
    # one block of 4 queries, no content: the chain formula on the offsets
    "sparse_block_two_stream:n=4,block=4,layers=2,tile=0": (
        ("Q0", "Q1", "Q2", "Q3"),
        [
            [1, 0, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 0],
            [0, 0, 1, 1],
        ],
    ),
    # half stars: r_0 = 0 and r_1 = 2 attend their blocks, r_1 block 0 (chain edge (1, 0)), 3 attends r_1 and r_0
    "sparse_block_causal:n=4,block=2,layers=2,units=0": (
        ("0", "1", "2", "3"),
        [
            [1, 1, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 1],
            [1, 0, 1, 1],
        ],
    ),
    # the chain on the offsets of each chunk (two positions: the chunk's own causal rows)
    "sparse_chunked:n=4,chunk=2,layers=2,tile=0": (
        ("0", "1", "2", "3"),
        [
            [1, 0, 0, 0],
            [1, 1, 0, 0],
            [0, 0, 1, 0],
            [0, 0, 1, 1],
        ],
    ),
    # chain indices 0, 0, 1, 2: the prefix a star through 0; 2 and 3 attend the prefix (chain edges (1, 0), (2, 0))
    "sparse_prefix_lm:n=4,prefix=2,layers=2": (
        ("0", "1", "2", "3"),
        [
            [1, 1, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 0],
            [1, 1, 1, 1],
        ],
    ),
}


@pytest.mark.parametrize("spec", sorted(EXPECTED))
def test_entry_matches_hand_written_matrix(spec):
    names, rows = EXPECTED[spec]
    mask = build_mask(spec)
    assert isinstance(mask, NamedMask)
    assert mask.matrix.dtype == bool
    assert mask.matrix.astype(int).tolist() == rows
    assert mask.names == names
    assert mask.spec == spec  # these specs are already canonical


def test_every_mask_entry_has_a_hand_written_case():
    covered = {spec.partition(":")[0] for spec in EXPECTED}
    assert covered == {e.name for e in mask_entries()}


def test_mask_entries_order():
    assert [e.name for e in mask_entries()] == [
        "causal",
        "bidirectional",
        "sliding_window",
        "sliding_window_distance",
        "prefix_lm",
        "document",
        "block_causal",
        "chunked",
        "recurrent",
        "conv",
        "bd3lm",
        "xlnet",
        "tree",
        "block_two_stream",
        "butterfly",
        "sparse_causal",
        "sparse_butterfly",
        "sparse_block_two_stream",
        "sparse_block_causal",
        "sparse_chunked",
        "sparse_prefix_lm",
    ]


# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize("n", range(1, 13))
def test_block_two_stream_has_2n_minus_l_positions(n):
    for block in (b for b in range(1, n + 1) if n % b == 0):
        for variant in ("chain", "clique"):
            mask = build_mask(f"block_two_stream:n={n},block={block},variant={variant}")
            assert mask.n == 2 * n - block
            assert mask.names[: n - block] == tuple(f"C{i}" for i in range(n - block))
            assert mask.names[n - block :] == tuple(f"Q{t}" for t in range(n))


@pytest.mark.parametrize("n", range(1, 13))
def test_butterfly_has_3n_minus_2_positions(n):
    mask = build_mask(f"butterfly:n={n}")
    assert mask.n == 3 * n - 2
    assert mask.names == (
        tuple(f"F{i}" for i in range(n - 1)) + tuple(f"B{i}" for i in range(1, n)) + tuple(f"P{k}" for k in range(n))
    )


@pytest.mark.parametrize("n", range(1, 9))
def test_two_copy_layouts_have_2n_positions(n):
    assert build_mask(f"bd3lm:n={n},block=1").n == 2 * n
    order = "+".join(str(i) for i in reversed(range(n)))
    assert build_mask(f"xlnet:order={order}").n == 2 * n


def test_document_size_is_sum_of_lengths():
    assert build_mask("document:lengths=3+2+4").n == 9


def test_tree_size_is_prefix_plus_nodes():
    assert build_mask("tree:parents=-1+0+1").n == 3
    assert build_mask("tree:parents=-1+0+1,prefix=5").n == 8


# --------------------------------------------------------------------------- relations between entries


@pytest.mark.parametrize("n", range(1, 8))
def test_sliding_window_conventions_differ_by_one(n):
    for w in range(1, n + 2):
        a = build_mask(f"sliding_window:n={n},w={w}").matrix
        b = build_mask(f"sliding_window_distance:n={n},d={w - 1}").matrix
        assert np.array_equal(a, b)
        assert a.sum(axis=1).max() == min(w, n)  # w keys per full row, self included


@pytest.mark.parametrize("n", range(1, 8))
def test_degenerate_parameters_give_causal(n):
    causal = build_mask(f"causal:n={n}").matrix
    assert np.array_equal(build_mask(f"prefix_lm:n={n},prefix=0").matrix, causal)
    assert np.array_equal(build_mask(f"block_causal:n={n},block=1").matrix, causal)
    assert np.array_equal(build_mask(f"sliding_window:n={n},w={n}").matrix, causal)
    assert np.array_equal(build_mask(f"document:lengths={n},causal=true").matrix, causal)
    chain = "+".join(str(i - 1) for i in range(n))  # a path: every node's parent is the previous one
    assert np.array_equal(build_mask(f"tree:parents={chain}").matrix, causal)
    ones = build_mask(f"bidirectional:n={n}").matrix
    assert np.array_equal(build_mask(f"prefix_lm:n={n},prefix={n}").matrix, ones)
    assert np.array_equal(build_mask(f"block_causal:n={n},block={n}").matrix, ones)


def test_rules_are_named_and_broadcast():
    assert make_sliding_window(4).__name__ == "sliding_window_w4"
    assert make_sliding_window_distance(3).__name__ == "sliding_window_distance_d3"
    rule = make_sliding_window(2)
    assert bool(rule(3, 2)) and not bool(rule(3, 1))  # plain ints work too
    assert np.array_equal(grid(rule, 4), build_mask("sliding_window:n=4,w=2").matrix)


@pytest.mark.parametrize("entry", mask_entries(), ids=lambda e: e.name)
def test_every_entry_has_a_usage_and_summary(entry):
    assert entry.summary and "\n" not in entry.summary
    assert entry.usage().startswith(entry.name)


# --------------------------------------------------------------------------- spec language


def test_parse_spec_basic_and_continuation():
    assert parse_spec("butterfly:n=4") == ("butterfly", {"n": "4"})
    assert parse_spec("mlm:n=8,masked=1,3") == ("mlm", {"n": "8", "masked": "1,3"})
    assert parse_spec("  causal : n = 4 ") == ("causal", {"n": "4"})
    assert parse_spec("ar") == ("ar", {})


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("document:lengths=3+2+4", (3, 2, 4)),
        ("document:lengths=3,2,4", (3, 2, 4)),
        ("document:lengths=3,2+4", (3, 2, 4)),
    ],
)
def test_int_lists_accept_plus_and_comma(spec, expected):
    assert resolve_spec(spec).kwargs()["lengths"] == expected
    assert build_mask(spec).spec == "document:lengths=3+2+4,causal=false"


def test_comma_list_then_more_keys():
    assert build_mask("document:lengths=2,3,causal=yes").spec == "document:lengths=2+3,causal=true"
    assert build_mask("tree:parents=-1,0,0,1,prefix=2").spec == "tree:parents=-1+0+0+1,prefix=2"
    assert build_mask("xlnet:order=2,0,1").spec == "xlnet:order=2+0+1"


@pytest.mark.parametrize("word, value", [("true", True), ("1", True), ("YES", True), ("false", False), ("0", False), ("no", False)])
def test_booleans(word, value):
    assert resolve_spec(f"document:lengths=2+3,causal={word}").kwargs()["causal"] is value


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("butterfly:n=4", "butterfly:n=4"),
        ("block_two_stream:variant=clique,block=2,n=4", "block_two_stream:n=4,block=2,variant=clique"),
        ("block_two_stream:n=4,block=2", "block_two_stream:n=4,block=2,variant=chain"),
        ("tree:parents=-1+0", "tree:parents=-1+0,prefix=0"),
        ("document:causal=1,lengths=1+1", "document:lengths=1+1,causal=true"),
        ("sliding_window: w = 3 , n = 5", "sliding_window:n=5,window=3"),
        ("sliding_window:window=3,n=5", "sliding_window:n=5,window=3"),
    ],
)
def test_spec_round_trip(text, canonical):
    first = build_mask(text)
    assert first.spec == canonical
    again = build_mask(first.spec)
    assert again.spec == canonical
    assert np.array_equal(again.matrix, first.matrix)
    assert again.names == first.names


@pytest.mark.parametrize("entry", mask_entries(), ids=lambda e: e.name)
def test_module_spec_agrees_with_catalogue_canonical_form(entry):
    """The family modules write their own spec; it must be the catalogue's canonical one."""
    spec = next(s for s in EXPECTED if s.partition(":")[0] == entry.name)
    resolved = resolve_spec(spec)
    built = entry.builder(**resolved.kwargs())
    assert built.spec == resolved.canonical == canonical_spec(entry, resolved.kwargs())


def test_direct_build_matches_catalogue():
    assert np.array_equal(build_butterfly(3).matrix, build_mask("butterfly:n=3").matrix)


def test_name_alone_allowed_when_every_param_has_a_default():
    entry = Entry("demo_all_defaults", "test only", (Param("n", "int", 3),), lambda n: n, kind="demo")
    catalog.register(entry)
    try:
        spec, built = catalog.build_spec("demo_all_defaults", "demo")
        assert built == 3 and spec.canonical == "demo_all_defaults:n=3"
        assert entry not in mask_entries()
        with pytest.raises(InputError, match="is a demo, not a mask"):
            build_mask("demo_all_defaults")
        with pytest.raises(ValueError, match="already registered"):
            catalog.register(entry)
    finally:
        del catalog._REGISTRY[("demo", "demo_all_defaults")]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "spec, problem",
    [
        ("nope:n=3", "unknown mask 'nope'; known: causal, bidirectional"),
        ("causal:n=3,w=2", "unknown parameter 'w' for causal; its parameters: n"),
        ("causal", "missing required parameter 'n'"),
        ("block_two_stream:n=4", "missing required parameter 'block'"),
        ("causal:n=four", "n must be an integer, got 'four'"),
        ("causal:n=2.5", "n must be an integer, got '2.5'"),
        ("causal:n=", "n must be an integer, got ''"),
        ("causal:n=0", "n must be a positive integer, got 0"),
        ("butterfly:n=-2", "n must be a positive integer, got -2"),
        ("block_causal:n=4,block=3", "block = 3 does not divide n = 4"),
        ("bd3lm:n=6,block=4", "block = 4 does not divide n = 6"),
        ("block_two_stream:n=5,block=2", "block = 2 does not divide n = 5"),
        ("block_causal:n=4,block=0", "block must be a positive integer, got 0"),
        ("sliding_window:n=4,w=0", "window must be a positive integer, got 0"),
        ("sliding_window:n=4,w=2,window=2", "parameter 'window' is given twice (as 'w' and 'window')"),
        ("sliding_window:n=4,window=-1", "window must be a positive integer, got -1"),
        ("sliding_window_distance:n=4,d=-1", "d must be a non-negative integer, got -1"),
        ("prefix_lm:n=4,prefix=5", "prefix must be between 0 and n = 4, got 5"),
        ("prefix_lm:n=4,prefix=-1", "prefix must be a non-negative integer, got -1"),
        ("xlnet:order=0+0+1", "order must be a permutation of 0..2, got 0+0+1 (0 repeats)"),
        ("xlnet:order=0+1+3", "order must be a permutation of 0..2, got 0+1+3 (3 is out of range)"),
        ("xlnet:order=0+-1", "order must be a permutation of 0..1"),
        ("tree:parents=-1+2+0", "parents[1] = 2 points forward"),
        ("tree:parents=-1+1", "parents[1] = 1 points to the node itself"),
        ("tree:parents=-1+0+7", "parents[2] = 7 is out of range"),
        ("tree:parents=-1+-2", "parents[1] = -2 is out of range"),
        ("tree:parents=-1,prefix=-1", "prefix must be a non-negative integer, got -1"),
        ("document:lengths=2+0", "lengths must be positive, got 0 for document 1"),
        ("document:lengths=2++3", "lengths must be integers separated by '+' or ','"),
        ("document:lengths=2,3,causal=maybe", "causal must be true or false"),
        ("block_two_stream:n=4,block=2,variant=star", "variant must be one of chain, clique; got 'star'"),
        ("causal:n=3,n=4", "parameter 'n' is given twice"),
        ("causal:n=3,,", "empty item between commas"),
        ("causal:4", "item '4' has no key"),
        ("causal:=4", "item '=4' has no key"),
        (":n=3", "no name before ':'"),
        ("causal:n=1000000000", "needs about"),
    ],
)
def test_errors_name_the_spec_and_the_problem(spec, problem):
    with pytest.raises(InputError) as info:
        build_mask(spec)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(spec.strip() + ": "), message
    assert problem in message, message


def test_missing_parameter_shows_usage():
    with pytest.raises(InputError, match=r"usage: block_two_stream:n=N,block=BLOCK\[,variant=chain\|clique\]"):
        build_mask("block_two_stream:n=4")


def test_unknown_entry_lists_every_mask():
    with pytest.raises(InputError) as info:
        get_entry("nope", "mask")
    for entry in mask_entries():
        assert entry.name in str(info.value)


def test_empty_spec():
    with pytest.raises(InputError, match="empty spec"):
        build_mask("   ")


def test_direct_builders_raise_input_error_too():
    with pytest.raises(InputError, match="n must be a positive integer"):
        build_butterfly(0)
    with pytest.raises(InputError, match="n must be an integer"):
        build_butterfly(2.0)

"""Rendering: text views, DOT, and PNG pictures of a mask analysis.

The fixtures are written out by hand (classes, Hasse edges, heights) so that these tests
do not depend on the engine; one test checks them against the engine.
"""

from __future__ import annotations

import builtins
import doctest
import re
import struct

import numpy as np
import pytest

import hasse.views.diagram_plan
import hasse.views.dot
import hasse.views.draw_hasse
import hasse.views.figure
import hasse.views.layout
import hasse.views.render_text
from hasse.views.dot import to_dot
from hasse.views.draw_hasse import draw_analysis
from hasse.views.draw_mask import draw_mask
from hasse.views.layout import count_crossings, layered_layout, longest_chain_layers
from hasse.views.render_text import classes_view, hasse_view, matrix_view, members_text
from hasse.theory.analysis import MaskAnalysis
from hasse.theory.errors import InputError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def make_analysis(mask, classes, edges, height, names=None, **fields) -> MaskAnalysis:
    mask = np.asarray(mask, dtype=bool)
    n = mask.shape[0]
    values = dict(n=n, residual=True, convergence_depth=1, preperiod=None, period=None,
                  classes=tuple(tuple(c) for c in classes), hasse_edges=tuple(edges), dense=True,
                  height=height, empty_rows=(), layers=None, reachability=None, mask=mask,
                  names=tuple(names) if names else tuple(str(i) for i in range(n)))
    values.update(fields)
    return MaskAnalysis(**values)


def causal(n: int) -> MaskAnalysis:
    return make_analysis(np.tril(np.ones((n, n), bool)), [(i,) for i in range(n)],
                         [(i, i + 1) for i in range(n - 1)], height=n)


def butterfly3() -> MaskAnalysis:
    """Butterfly for n = 3: F0 F1 | B1 B2 | P0 P1 P2 (positions 0..6), by hand.

    F_i attends F_j (j <= i); B_i attends B_j (j >= i); P_k attends F_j (j < k),
    B_j (j > k) and itself. Canonical order: F0, F1, B2, B1, P0, P1, P2.
    """
    names = ("F0", "F1", "B1", "B2", "P0", "P1", "P2")
    rows = [
        "1000000",  # F0: F0
        "1100000",  # F1: F0 F1
        "0011000",  # B1: B1 B2
        "0001000",  # B2: B2
        "0011100",  # P0: B1 B2 P0
        "1001010",  # P1: F0 B2 P1
        "1100001",  # P2: F0 F1 P2
    ]
    mask = np.array([[c == "1" for c in row] for row in rows])
    classes = [(0,), (1,), (3,), (2,), (4,), (5,), (6,)]
    # c0 F0, c1 F1, c2 B2, c3 B1, c4 P0, c5 P1, c6 P2
    edges = [(0, 1), (0, 5), (1, 6), (2, 3), (2, 5), (3, 4)]
    return make_analysis(mask, classes, edges, height=3, names=names)


def chain(n: int) -> MaskAnalysis:
    """n singleton classes in a chain, with a tiny stand-in mask (the views ignore it)."""
    return make_analysis(np.eye(2, dtype=bool), [(i,) for i in range(n)],
                         [(i, i + 1) for i in range(n - 1)], height=n,
                         names=[str(i) for i in range(n)], n=n)


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    return struct.unpack(">II", data[16:24])


# ------------------------------------------------------------------------- text views


def test_matrix_view_3x3_exact():
    mask = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], bool)
    assert matrix_view(mask) == "  0\n0 █··\n1 ██·\n2 ·██"
    assert matrix_view(mask, ascii=True) == "  0\n0 #..\n1 ##.\n2 .##"


def test_matrix_view_names_header_and_labels():
    a = butterfly3()
    lines = matrix_view(a.mask, a.names, ascii=True).splitlines()
    assert lines[:3] == ["     FFBBPPP", "     0112012", "     0    5"]
    assert lines[3] == "F0 0 #......"
    assert lines[8] == "P1 5 #..#.#."
    assert len(lines) == 3 + 7


def test_matrix_view_highlight_reach_and_legend():
    mask = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], bool)
    reach = np.tril(np.ones((3, 3), bool))
    lines = matrix_view(mask, highlight={(2, 1)}, reach=reach, ascii=True).splitlines()
    assert lines[1:4] == ["0 #..", "1 ##.", "2 +@#"]
    assert lines[4].strip() == "# attends   . does not   + reachable, not attended   @ highlighted"
    unicode_rows = matrix_view(mask, highlight=[(2, 1)], reach=reach).splitlines()
    assert unicode_rows[3] == "2 ░●█"
    assert matrix_view(mask, reach=mask) == matrix_view(mask)  # nothing reach-only: no legend


def test_matrix_view_ruler_every_10_for_large_n():
    text = matrix_view(np.eye(50, dtype=bool), ascii=True)
    ruler = text.splitlines()[0]
    assert ruler.split() == ["0", "10", "20", "30", "40"]
    assert ruler.index("10") - ruler.index("0") == 10
    assert len(text.splitlines()) == 51


def test_matrix_view_refuses_large_n():
    text = matrix_view(np.eye(65, dtype=bool))
    assert "\n" not in text and "65 x 65" in text and "n <= 64" in text


def test_members_text_ranges_and_truncation():
    names = [str(i) for i in range(20)]
    assert members_text([0, 1, 2], names) == "0, 1, 2"
    assert members_text(list(range(8)) + [10], names) == "0-7, 10"
    assert members_text([0, 1, 2, 3], ["F0", "F1", "B1", "B2"], max_items=2, ascii=True) == "F0, F1, ... (+2)"


def test_classes_view_lists_names():
    text = classes_view(butterfly3())
    assert text.splitlines() == ["7 classes", "  c0  {F0}", "  c1  {F1}", "  c2  {B2}", "  c3  {B1}",
                                 "  c4  {P0}", "  c5  {P1}", "  c6  {P2}"]


def test_classes_view_truncates():
    lines = classes_view(chain(8190)).splitlines()
    assert lines[0] == "8190 classes"
    assert len(lines) == 1 + 20 + 1
    assert lines[20].split() == ["c19", "{19}"]
    assert lines[-1] == "  … and 8170 more classes"
    assert classes_view(chain(30), limit=5, ascii=True).splitlines()[-1] == "  ... and 25 more classes"


def test_hasse_view_groups_by_lower_class():
    lines = hasse_view(butterfly3(), ascii=True).splitlines()
    assert lines[0] == "Hasse diagram: 7 classes, 6 edges (lower -> upper, upstream first)"
    assert [re.sub(r"\s+", " ", line.strip()) for line in lines[1:]] == [
        "c0 {F0} -> c1, c5", "c1 {F1} -> c6", "c2 {B2} -> c3, c5", "c3 {B1} -> c4"]


def test_hasse_view_truncates_and_handles_no_edges():
    lines = hasse_view(chain(100)).splitlines()
    assert len(lines) == 1 + 20 + 1
    assert lines[-1] == "  … and 79 more lower classes (79 edges)"
    single = make_analysis(np.ones((3, 3), bool), [(0, 1, 2)], [], height=1)
    assert "no edges" in hasse_view(single)


# -------------------------------------------------------------------------------- DOT


def parse_dot(text: str):
    nodes = re.findall(r'^\s*(c\d+) \[label="((?:[^"\\]|\\.)*)"', text, re.M)
    edges = re.findall(r"^\s*(c\d+) -> (c\d+);$", text, re.M)
    return dict(nodes), edges


def test_dot_structure_and_every_edge():
    a = butterfly3()
    text = to_dot(a)
    assert text.startswith("digraph hasse {") and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}") == 1
    assert "rankdir=BT;" in text
    nodes, edges = parse_dot(text)
    assert len(nodes) == len(a.classes)
    assert nodes["c2"] == "3 (B2)" and nodes["c3"] == "2 (B1)"
    assert edges == [(f"c{lo}", f"c{up}") for lo, up in a.hasse_edges]
    assert len([line for line in text.splitlines() if "->" in line and not line.strip().startswith("//")]) == 6
    assert to_dot(a) == text  # deterministic


def test_dot_plain_labels_and_escaping():
    nodes, edges = parse_dot(to_dot(causal(4)))
    assert nodes == {"c0": "0", "c1": "1", "c2": "2", "c3": "3"}
    assert edges == [("c0", "c1"), ("c1", "c2"), ("c2", "c3")]
    big = make_analysis(np.ones((3, 3), bool), [(0, 1, 2)], [], height=1)
    assert parse_dot(to_dot(big))[0] == {"c0": "0,1,2"}
    odd = make_analysis(np.eye(2, dtype=bool), [(0,), (1,)], [], height=1, names=('say "hi"', "back\\slash"))
    text = to_dot(odd)
    assert r'c0 [label="0 (say \"hi\")"];' in text
    assert r'c1 [label="1 (back\\slash)"];' in text


# ---------------------------------------------------------------------------- layout


def test_longest_chain_layers_and_waypoints():
    a = butterfly3()
    assert longest_chain_layers(len(a.classes), a.hasse_edges) == [0, 1, 0, 1, 2, 1, 2]
    lay = layered_layout([20.0] * 7, a.hasse_edges)
    assert lay.routes == [[lo, up] for lo, up in a.hasse_edges]  # no edge skips a layer


def test_layout_keeps_boxes_apart_and_is_deterministic():
    widths = [30.0, 50.0, 20.0, 40.0, 30.0, 60.0, 25.0]
    edges = butterfly3().hasse_edges
    lay = layered_layout(widths, edges, gap=10.0)
    w = widths + [0.0] * (len(lay.layer) - len(widths))
    for row in lay.rows:
        for a, b in zip(row, row[1:]):
            assert lay.x[b] - lay.x[a] >= (w[a] + w[b]) / 2 + 5.0 - 1e-9
    again = layered_layout(widths, edges, gap=10.0)
    assert again.rows == lay.rows and np.allclose(again.x, lay.x)


def butterfly_edges(n: int):
    """Hasse edges of butterfly:n over nodes F0..F_{n-2}, B1..B_{n-1}, P0..P_{n-1} (positions)."""
    F = lambda i: i  # noqa: E731
    B = lambda i: n - 2 + i  # noqa: E731
    P = lambda k: 2 * n - 2 + k  # noqa: E731
    edges = [(F(i), F(i + 1)) for i in range(n - 2)] + [(B(i + 1), B(i)) for i in range(1, n - 1)]
    edges += [(F(k - 1), P(k)) for k in range(1, n)] + [(B(k + 1), P(k)) for k in range(n - 1)]
    return 3 * n - 2, edges


@pytest.mark.parametrize("n", [6, 10, 16])
def test_butterfly_layout_has_few_crossings(n):
    m, edges = butterfly_edges(n)
    lay = layered_layout([24.0] * m, edges)
    up = [[] for _ in lay.layer]
    for route in lay.routes:
        for a, b in zip(route, route[1:]):
            up[a].append(b)
    # the two chains must cross once; barycentre sweeps alone leave 26 at n = 16
    assert count_crossings(lay.rows, up) <= 4


# ---------------------------------------------------------------------------- pictures


@pytest.mark.parametrize("build", [causal, butterfly3], ids=["causal4", "butterfly3"])
def test_draw_analysis_writes_png(tmp_path, build):
    a = build(4) if build is causal else build()
    out = tmp_path / "picture.png"
    draw_analysis(a, str(out), title="case")
    width, height = png_size(out)
    assert out.stat().st_size > 5000 and width > 300 and height > 200


def test_draw_analysis_grows_with_n(tmp_path):
    small, big = tmp_path / "small.png", tmp_path / "big.png"
    draw_analysis(causal(4), str(small))
    draw_analysis(causal(30), str(big))
    assert png_size(big)[1] > png_size(small)[1]


def test_draw_analysis_too_many_classes_draws_heatmap_only(tmp_path):
    out = tmp_path / "big.png"
    draw_analysis(causal(201), str(out))
    assert png_size(out)[0] > 0


def test_draw_analysis_with_reachability_and_empty_rows(tmp_path):
    mask = np.array([[0, 0, 0], [1, 1, 0], [0, 1, 1]], bool)
    reach = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]], bool)
    a = make_analysis(mask, [(0,), (1,), (2,)], [(0, 1), (1, 2)], height=3, layers=2,
                      reachability=reach, empty_rows=(0,), convergence_depth=2, dense=False)
    out = tmp_path / "reach.png"
    draw_analysis(a, str(out))
    assert png_size(out)[0] > 0


def test_draw_mask_with_path(tmp_path):
    a = butterfly3()
    out = tmp_path / "leak.png"
    draw_mask(a.mask, a.names, str(out), "F0 -> P1", highlight_path=[0, 5])
    assert png_size(out)[0] > 0
    draw_mask(a.mask, None, str(out), "depth 0", highlight_path=[4])
    assert png_size(out)[0] > 0
    with pytest.raises(InputError, match="leaves the positions"):
        draw_mask(a.mask, a.names, str(out), "bad", highlight_path=[0, 9])


def test_unwritable_path_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot write the picture"):
        draw_analysis(causal(3), str(tmp_path / "missing-dir" / "x.png"))


def test_missing_matplotlib_is_input_error(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    message = "--png needs matplotlib: pip install 'hasse-attention[viz]'"
    with pytest.raises(InputError) as info:
        draw_analysis(causal(3), str(tmp_path / "x.png"))
    assert str(info.value) == message
    with pytest.raises(InputError, match="needs matplotlib"):
        draw_mask(np.eye(2, dtype=bool), None, str(tmp_path / "y.png"), "t")
    assert not (tmp_path / "x.png").exists()


# ------------------------------------------------------------------ engine and doctests


def test_hand_fixtures_agree_with_the_engine():
    analysis = pytest.importorskip("hasse.theory.analysis")
    if not hasattr(analysis, "mask_to_analysis"):
        pytest.skip("engine not available")
    for fixture in (causal(4), butterfly3()):
        real = analysis.mask_to_analysis(fixture.mask, names=fixture.names)
        assert (real.classes, real.hasse_edges, real.height) == (
            fixture.classes, fixture.hasse_edges, fixture.height)


@pytest.mark.parametrize("spec", ["butterfly:n=6", "block_two_stream:n=8,block=2", "causal:n=5"])
def test_catalog_masks_render(tmp_path, spec):
    catalog = pytest.importorskip("hasse.theory.catalog")
    from hasse.theory.analysis import mask_to_analysis

    named = catalog.build_mask(spec)
    a = mask_to_analysis(named.matrix, names=named.names)
    nodes, edges = parse_dot(to_dot(a))
    assert len(nodes) == len(a.classes) and len(edges) == len(a.hasse_edges)
    assert len(matrix_view(a.mask, a.names).splitlines()) >= a.n + 1
    draw_analysis(a, str(tmp_path / "x.png"), title=spec)
    assert png_size(tmp_path / "x.png")[0] > 0


@pytest.mark.parametrize("module", [hasse.views.render_text, hasse.views.dot, hasse.views.draw_hasse, hasse.views.figure, hasse.views.layout,
                                    hasse.views.diagram_plan])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0

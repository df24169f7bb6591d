"""What a picture of a Hasse diagram shows: long chains collapsed, middle layers banded, or a summary.

Pure planning over the diagram's edges, no geometry (:mod:`hasse.views.layout` lays out
what this plans) and no matplotlib (:mod:`hasse.views.draw_hasse` draws it):

- :func:`collapse_chains` -- a run of classes with one cover below and one above is
  drawn as one labelled edge (a :class:`Chain`);
- :func:`plan_diagram` -- the :class:`DiagramPlan`: the shown classes, their chains,
  a band for the hidden middle layers of a tall diagram, or ``summary_only``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hasse.views.layout import longest_chain_layers

MAX_LAYERS = 14  # a diagram taller than this (after collapsing chains) loses its middle layers
KEEP_LAYERS = 5  # ... keeping this many at the bottom and at the top
MAX_SHOWN = 160  # above this many shown classes (or MAX_WIDTH on a layer), a summary is drawn
MAX_WIDTH = 28


@dataclass
class Chain:
    """A run of classes, each with one cover below and one above, drawn as one edge.

    ``lower -> hidden[0] -> ... -> hidden[-1] -> upper`` is ``hops`` Hasse edges.
    """

    lower: int
    upper: int
    hidden: tuple[int, ...]

    @property
    def hops(self) -> int:
        return len(self.hidden) + 1


@dataclass
class DiagramPlan:
    """What a picture of a Hasse diagram shows (:func:`plan_diagram`).

    The display graph has ``len(shown)`` class nodes (``shown[i]`` is a class index),
    then one node per chain in ``chains`` (a labelled edge "… k hops …"), then, when
    ``band`` is set, one node for the hidden middle layers. ``edges`` are display-node
    pairs (lower, upper). ``summary_only`` means even this is too large: draw numbers.
    """

    classes: int
    shown: list[int]
    chains: list[Chain]
    band: tuple[int, int, int] | None  # first and last hidden layer, classes hidden there
    edges: list[tuple[int, int]]
    summary_only: bool
    layers: int  # layers of the full diagram
    widest: int  # classes on its widest layer

    @property
    def nodes(self) -> int:
        """Display nodes: shown classes, chain edges and the band."""
        return len(self.shown) + len(self.chains) + (self.band is not None)

    @property
    def hidden(self) -> int:
        """Classes not drawn as boxes."""
        return self.classes - len(self.shown)


def collapse_chains(m: int, edges: Sequence[tuple[int, int]], keep: int = 1,
                    shortest: int = 3) -> tuple[list[int], list[Chain], list[tuple[int, int]]]:
    """Collapse every maximal run of at least ``2 * keep + shortest`` chain classes (one
    cover below, one above) into a :class:`Chain`, keeping ``keep`` classes at each end.

    Returns the kept classes, the chains, and the Hasse edges between kept classes.

    >>> kept, chains, rest = collapse_chains(10, [(i, i + 1) for i in range(9)])
    >>> kept, [(c.lower, c.upper, c.hops) for c in chains], rest
    ([0, 1, 8, 9], [(1, 8, 7)], [(0, 1), (8, 9)])
    """
    ups: list[list[int]] = [[] for _ in range(m)]
    downs: list[list[int]] = [[] for _ in range(m)]
    for a, b in edges:
        ups[a].append(b)
        downs[b].append(a)
    inner = [len(ups[v]) == 1 and len(downs[v]) == 1 for v in range(m)]
    hidden: set[int] = set()
    chains: list[Chain] = []
    for v in range(m):
        if not inner[v] or inner[downs[v][0]]:
            continue  # not the first class of a run
        run = [v]
        while inner[ups[run[-1]][0]]:
            run.append(ups[run[-1]][0])
        if len(run) < 2 * keep + shortest:
            continue
        middle = run[keep: len(run) - keep]
        lower = run[keep - 1] if keep else downs[v][0]
        upper = run[len(run) - keep] if keep else ups[run[-1]][0]
        chains.append(Chain(lower, upper, tuple(middle)))
        hidden.update(middle)
    kept = [v for v in range(m) if v not in hidden]
    rest = [(a, b) for a, b in edges if a not in hidden and b not in hidden]
    return kept, chains, rest


def plan_diagram(m: int, edges: Sequence[tuple[int, int]], max_layers: int = MAX_LAYERS,
                 keep_layers: int = KEEP_LAYERS) -> DiagramPlan:
    """Decide what a picture of the Hasse diagram on ``m`` classes shows.

    1. long chains collapse into one labelled edge (:func:`collapse_chains`);
    2. if the result still has more than ``max_layers`` layers, only the bottom and
       top ``keep_layers`` are drawn, the middle replaced by one band node that the
       edges into and out of it meet;
    3. if more than ``MAX_SHOWN`` classes (or ``MAX_WIDTH`` on a layer) remain, the
       plan is ``summary_only``.

    >>> p = plan_diagram(4096, [(i, i + 1) for i in range(4095)])
    >>> p.nodes, p.hidden, [c.hops for c in p.chains], p.band
    (5, 4092, [4093], None)
    """
    full_layers = longest_chain_layers(m, edges)
    counts = np.bincount(full_layers, minlength=1) if m else np.zeros(1, int)
    kept, chains, rest = collapse_chains(m, edges)
    index = {v: i for i, v in enumerate(kept)}
    display = [(index[a], index[b]) for a, b in rest]
    for c, chain in enumerate(chains):
        node = len(kept) + c
        display += [(index[chain.lower], node), (node, index[chain.upper])]
    total = len(kept) + len(chains)
    layer = longest_chain_layers(total, display)
    band = None
    shown_nodes = list(range(total))
    levels = max(layer) + 1 if total else 0
    if levels > max_layers:
        lo, hi = keep_layers, levels - keep_layers  # hidden: lo <= layer < hi
        hid = {v for v in range(total) if lo <= layer[v] < hi}
        shown_nodes = [v for v in range(total) if v not in hid]
        renumber = {v: i for i, v in enumerate(shown_nodes)}
        band_node = len(shown_nodes)
        edges_out: set[tuple[int, int]] = set()
        for a, b in display:
            if a in hid and b in hid:
                continue
            if a in hid:
                edges_out.add((band_node, renumber[b]))
            elif b in hid or layer[b] >= hi > lo > layer[a]:
                edges_out.add((renumber[a], band_node))
                if b not in hid:
                    edges_out.add((band_node, renumber[b]))
            else:
                edges_out.add((renumber[a], renumber[b]))
        hidden_classes = sum(1 for v in hid if v < len(kept)) + sum(
            len(chains[v - len(kept)].hidden) for v in hid if v >= len(kept))
        band = (lo, hi - 1, hidden_classes)
        display = sorted(edges_out)
    shown = [kept[v] for v in shown_nodes if v < len(kept)]
    kept_chains = [chains[v - len(kept)] for v in shown_nodes if v >= len(kept)]
    if band is not None:  # renumber: classes first, then chains, then the band
        order = [v for v in shown_nodes if v < len(kept)] + [v for v in shown_nodes if v >= len(kept)]
        old = {v: i for i, v in enumerate(shown_nodes)}
        new = {old[v]: i for i, v in enumerate(order)}
        new[len(shown_nodes)] = len(shown_nodes)
        display = sorted((new[a], new[b]) for a, b in display)
    shown_layers = longest_chain_layers(len(shown) + len(kept_chains) + (band is not None), display)
    widest_shown = int(np.bincount(shown_layers).max()) if shown_layers else 0
    summary = len(shown) > MAX_SHOWN or widest_shown > MAX_WIDTH
    return DiagramPlan(classes=m, shown=shown, chains=kept_chains, band=band, edges=display,
                       summary_only=summary, layers=len(counts) if m else 0, widest=int(counts.max()) if m else 0)

"""Tree attention for speculative decoding (Medusa, tree speculation).

``prefix`` cached positions ``0 … prefix-1`` (causal among themselves), then one
position per tree node: node ``i`` at ``prefix + i``, with ``parents[i]`` the index
of its parent node (``-1`` for a root). Each node attends itself, its ancestors
and the whole cached prefix, so every root-to-leaf path reads as a causal sequence.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.limits import check_positions
from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import require_int_list, require_non_negative
from hasse.theory.spec import Entry, Param, plus_joined


def tree_table(parents: Sequence[int], prefix: int = 0) -> np.ndarray:
    """The ``(prefix + m) x (prefix + m)`` table ``T[q, k]`` of the tree rule.

    Raises
    ------
    InputError
        ``parents`` is empty, a parent is below ``-1``, or a parent is not an
        earlier node (``parents[i] >= i``); ``prefix`` is negative.

    >>> tree_table((-1, 0), prefix=1).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    parents = require_int_list("parents", parents)
    prefix = require_non_negative("prefix", prefix)
    rule = "a parent must be an earlier node, or -1 for a root"
    for i, parent in enumerate(parents):
        if parent < -1 or parent >= len(parents):
            raise InputError(f"parents[{i}] = {parent} is out of range: there are {len(parents)} nodes ({rule})")
        if parent >= i:
            where = "to the node itself" if parent == i else "forward"
            raise InputError(f"parents[{i}] = {parent} points {where} ({rule})")
    size = prefix + len(parents)
    check_positions(size)
    table = np.zeros((size, size), dtype=bool)
    table[:prefix, :prefix] = np.tri(prefix, dtype=bool)
    for i, parent in enumerate(parents):
        row = prefix + i
        table[row, :prefix] = True
        if parent >= 0:
            table[row, prefix:] = table[prefix + parent, prefix:]
        table[row, row] = True
    return table


def make_tree(parents: Sequence[int], prefix: int = 0):
    """Return the tree rule (named ``tree_m<nodes>_prefix<prefix>``).

    ``q`` attends ``k`` iff ``k = q``; or ``k`` is an ancestor of ``q`` in the tree;
    or ``k`` is in the cached prefix and ``q`` is a tree node; or both are in the
    prefix and ``k <= q``. Parents must point to earlier nodes, so a parent list in
    the order nodes are generated (breadth- or depth-first) is accepted as is.

    Examples
    --------
    >>> grid(make_tree((-1, 0, 0)), 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 0, 1]]
    """
    table = tree_table(parents, prefix)

    def rule(q, k):
        return table[q, k]

    return name_rule(rule, f"tree_m{len(table) - int(prefix)}_prefix{int(prefix)}")


def names(nodes: int, prefix: int) -> tuple[str, ...]:
    """``p0 … p<prefix-1>`` for the cached prefix, then ``t0 … t<nodes-1>`` for the tree."""
    return tuple(f"p{i}" for i in range(prefix)) + tuple(f"t{i}" for i in range(nodes))


def build(parents: Sequence[int], prefix: int = 0) -> NamedMask:
    """The tree-speculation mask: ``prefix + len(parents)`` positions.

    See :func:`make_tree` for the rule.

    Examples
    --------
    >>> m = build((-1, 0, 0), prefix=1)
    >>> m.names
    ('p0', 't0', 't1', 't2')
    >>> m.matrix.astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 0, 1]]
    """
    rule = make_tree(parents, prefix)
    parents = tuple(int(v) for v in parents)
    prefix = int(prefix)
    size = prefix + len(parents)
    return named_mask(
        rule, size, f"tree:parents={plus_joined(parents)},prefix={prefix}", lambda: names(len(parents), prefix)
    )


ENTRY = Entry(
    "tree",
    "tree speculation (Medusa): a node attends itself, its ancestors and the cached prefix",
    (
        Param("parents", "int_list", help="parent node of each tree node, -1 for a root, e.g. -1+0+0+1"),
        Param("prefix", "int", 0, help="cached positions before the tree, causal among themselves"),
    ),
    build,
)


def main() -> None:
    print(to_text(build((-1, 0, 0, 1), prefix=2)))


if __name__ == "__main__":
    main()

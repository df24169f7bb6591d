"""Short causal convolutions (LFM2's conv layers, the conv inside Mamba and Gated DeltaNet blocks) as a dependency pattern.

``conv:n=N,width=K[,documents=A+B+…]`` is not attention: it is the dependency pattern
of a causal depthwise convolution of kernel size ``K`` (``conv1d`` with ``K - 1``
positions of left padding, transformers' ``linear_conv_kernel_dim`` /
``conv_L_cache`` / ``d_conv``), whose output at ``q`` reads the ``K`` inputs
``q - K < k <= q``, itself included (the kit's ``sliding_window`` of ``K`` keys).
With ``documents`` (packed documents, lengths adding up to ``n``) the convolution is
reset at each document's first position, as ``seq_idx`` / ``cu_seqlens`` make the
reference kernels do, so ``doc(k) == doc(q)`` too; a convolution that ignores the
boundaries is the plain window, which reaches ``K - 1`` positions into the previous
document. A stack (:mod:`theory.stack`) takes it as a layer of kind ``convolution``.
Each row is one run ``max(q - K + 1, start(q)) … q`` with both ends non-decreasing:
monotone-interval, so the interval engine takes it.
"""

from __future__ import annotations

from typing import Sequence

from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.masks.chunked import DOCUMENTS
from hasse.theory.masks.document import segment_ids
from hasse.theory.params import N, require_positive
from hasse.theory.spec import Entry, Param, plus_joined


def make_convolution(width: int, doc=None):
    """Return the rule ``q - width < k <= q`` (and ``doc[k] == doc[q]`` when ``doc`` is given), named ``conv_k<width>``.

    ``doc`` is the document of each position (:func:`theory.masks.document.segment_ids`).

    >>> grid(make_convolution(2), 4).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    >>> import numpy as np
    >>> grid(make_convolution(3, np.array([0, 0, 1, 1])), 4).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]]
    """
    width = require_positive("width", width)

    def rule(q, k):
        inside = (q - width < k) & (k <= q)
        return inside if doc is None else inside & (doc[q] == doc[k])

    return name_rule(rule, f"conv_k{width}")


def build(n: int, width: int, documents: Sequence[int] = ()) -> NamedMask:
    """The causal convolution of kernel size ``width`` on ``n`` positions, reset at ``documents`` when given.

    Raises
    ------
    InputError
        ``width`` is not a positive integer, or ``documents`` do not add up to ``n``.

    >>> build(4, 2).matrix.astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    >>> build(4, 3, (2, 2)).spec
    'conv:n=4,width=3,documents=2+2'
    """
    n = require_positive("n", n)
    width = require_positive("width", width)
    if not documents:
        return named_mask(make_convolution(width), n, f"conv:n={n},width={width}")
    doc = segment_ids(n, documents)
    return named_mask(make_convolution(width, doc), n,
                      f"conv:n={n},width={width},documents={plus_joined(int(v) for v in documents)}")


ENTRY = Entry(
    "conv",
    "dependency pattern of a short causal convolution of width K: q - K < k <= q "
    "(documents=A+B+…: reset at each document)",
    (N, Param("width", "int", help="kernel size K, keys per output, self included (K >= 1); alias kernel",
              aliases=("kernel",)), DOCUMENTS),
    build,
)


def main() -> None:
    print(to_text(build(6, 3)))
    print()
    print(to_text(build(6, 3, (2, 4))))


if __name__ == "__main__":
    main()

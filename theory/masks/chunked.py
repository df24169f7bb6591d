"""Chunked causal attention (Llama 4's local layers) and the recurrent dependency pattern.

``chunked:n=N,chunk=C``: a query attends the keys of its own chunk up to itself,
``k // C == q // C and k <= q`` (transformers' ``chunked_attention`` layers: the causal
mask and the chunk overlay ``kv_idx // C == q_idx // C``). Nothing crosses a chunk
boundary inside one such layer; the global layers between them carry it.

``recurrent:n=N[,chunk=C][,documents=A+B+…]`` is not attention: it is the dependency
pattern of a recurrent, linear-attention or state-space layer (Mamba, RWKV, Gated
DeltaNet, KDA, …), whose output at ``q`` is a function of the inputs ``k <= q`` its
recurrence has read: the causal prefix, or, when the state is reset every ``C``
positions, the prefix of ``q``'s chunk; with ``documents`` (packed documents, lengths
adding up to ``n``) the state is also reset at each document's first position, so
``doc(k) == doc(q)`` too: causal within segments. A stack (:mod:`theory.stack`) takes it as a layer of kind ``recurrent``,
which keeps the theory exact: the paper's future work on linear attention and
state-space layers enters through this pattern.
"""

from __future__ import annotations

from typing import Sequence

from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.masks.document import segment_ids
from hasse.theory.params import N, require_positive
from hasse.theory.spec import Entry, Param, plus_joined

DOCUMENTS = Param("documents", "int_list", default=(),
                  help="packed documents, lengths adding up to n, e.g. 3+5+4: reset at each (default: one)")


def make_chunked(chunk: int):
    """Return the rule ``k // chunk == q // chunk and k <= q``, named ``chunked_c<chunk>``.

    >>> grid(make_chunked(2), 4).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]]
    """
    chunk = require_positive("chunk", chunk)

    def rule(q, k):
        return (k // chunk == q // chunk) & (k <= q)

    return name_rule(rule, f"chunked_c{chunk}")


def build(n: int, chunk: int) -> NamedMask:
    """Chunked causal attention on ``n`` positions (a last chunk shorter than ``chunk`` is allowed).

    >>> build(3, 2).matrix.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    n = require_positive("n", n)
    chunk = require_positive("chunk", chunk)
    return named_mask(make_chunked(chunk), n, f"chunked:n={n},chunk={chunk}")


def make_segmented(chunk: int, doc):
    """Return the rule ``k <= q``, ``k // chunk == q // chunk`` and ``doc[k] == doc[q]``, named ``segmented_c<chunk>``.

    >>> import numpy as np
    >>> grid(make_segmented(3, np.array([0, 0, 1, 1])), 4).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    """
    chunk = require_positive("chunk", chunk)

    def rule(q, k):
        return (k // chunk == q // chunk) & (k <= q) & (doc[q] == doc[k])

    return name_rule(rule, f"segmented_c{chunk}")


def build_recurrent(n: int, chunk: int = 0, documents: Sequence[int] = ()) -> NamedMask:
    """The dependency pattern of a recurrent layer: causal, or causal within chunks when ``chunk > 0``.

    With ``documents`` the state is also reset at every document boundary (causal within segments).

    >>> build_recurrent(3).matrix.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> build_recurrent(3, 2).matrix.astype(int).tolist() == build(3, 2).matrix.astype(int).tolist()
    True
    >>> build_recurrent(4, documents=(1, 3)).matrix.astype(int).tolist()
    [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 1, 1, 1]]
    """
    n = require_positive("n", n)
    if documents:
        chunk = require_positive("chunk", chunk) if chunk else 0
        doc = segment_ids(n, documents)
        return named_mask(make_segmented(chunk or n, doc), n,
                          f"recurrent:n={n},chunk={chunk},documents={plus_joined(int(v) for v in documents)}")
    if chunk:
        chunk = require_positive("chunk", chunk)
        return named_mask(make_chunked(chunk), n, f"recurrent:n={n},chunk={chunk}")
    return named_mask(make_chunked(n), n, f"recurrent:n={n},chunk=0")


ENTRIES = (
    Entry(
        "chunked",
        "chunked causal attention (Llama 4 local layers): k // chunk == q // chunk and k <= q",
        (N, Param("chunk", "int", help="positions per chunk (chunk >= 1)")),
        build,
    ),
    Entry(
        "recurrent",
        "dependency pattern of a recurrent / linear-attention / state-space layer: causal "
        "(chunk=C: state reset every C positions; documents=A+B+…: reset at each document)",
        (N, Param("chunk", "int", default=0, help="reset the state every chunk positions (0: never)"), DOCUMENTS),
        build_recurrent,
    ),
)


def main() -> None:
    print(to_text(build(4, 2)))
    print()
    print(to_text(build_recurrent(4)))


if __name__ == "__main__":
    main()

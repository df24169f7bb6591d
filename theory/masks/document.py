"""Packed documents: several documents in one sequence, each attending only itself.

Isolation between the documents is a forbidden-flow property (``hasse flow`` and
the ``isolate`` groups of a task check it); this module only builds the mask.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hasse.theory.errors import InputError
from hasse.theory.limits import check_positions
from hasse.theory.mask import NamedMask, grid, name_rule, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import require_int_list
from hasse.theory.spec import Entry, Param, plus_joined


def document_ids(lengths: Sequence[int]) -> np.ndarray:
    """``doc[p]``, the document of each position: ``lengths = (2, 3)`` -> ``[0, 0, 1, 1, 1]``.

    Raises
    ------
    InputError
        ``lengths`` is empty or holds a length below 1.

    >>> document_ids((2, 3)).tolist()
    [0, 0, 1, 1, 1]
    """
    lengths = require_int_list("lengths", lengths)
    for i, length in enumerate(lengths):
        if length < 1:
            raise InputError(f"lengths must be positive, got {length} for document {i}")
    check_positions(sum(lengths))  # before the positions' document ids are laid out
    return np.repeat(np.arange(len(lengths)), lengths)


def segment_ids(n: int, documents: Sequence[int] = ()) -> np.ndarray:
    """The document of each of ``n`` positions: one document when ``documents`` is empty, else their lengths.

    What the token mixers reset at (``conv`` and ``recurrent``'s ``documents``): the lengths
    must add up to ``n``.

    >>> segment_ids(3).tolist(), segment_ids(5, (2, 3)).tolist()
    ([0, 0, 0], [0, 0, 1, 1, 1])
    >>> segment_ids(4, (2, 3))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: documents = 2+3 add up to 5, not n = 4
    """
    if not documents:
        check_positions(n)
        return np.zeros(n, dtype=np.int64)
    doc = document_ids(documents)
    if doc.size != n:
        raise InputError(f"documents = {plus_joined(int(v) for v in documents)} add up to {doc.size}, not n = {n}")
    return doc


def make_document(lengths: Sequence[int], causal: bool = False):
    """Return the rule ``doc(q) == doc(k)`` (and ``k <= q`` when ``causal``).

    Documents are packed in order: document ``i`` holds the ``lengths[i]``
    positions after those of documents ``0 … i-1``. The rule is named
    ``document_<lengths>`` (``document_2+3``, ``document_2+3_causal``).

    Examples
    --------
    >>> grid(make_document((1, 2)), 3).astype(int).tolist()
    [[1, 0, 0], [0, 1, 1], [0, 1, 1]]
    >>> grid(make_document((1, 2), causal=True), 3).astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
    """
    doc = document_ids(lengths)
    causal = bool(causal)

    def rule(q, k):
        same = doc[q] == doc[k]
        return same & (k <= q) if causal else same

    suffix = "_causal" if causal else ""
    return name_rule(rule, f"document_{plus_joined(lengths)}{suffix}")


def build(lengths: Sequence[int], causal: bool = False) -> NamedMask:
    """The packed-document mask on ``n = sum(lengths)`` positions.

    ``M[q, k] = doc(q) == doc(k)``, and also ``k <= q`` when ``causal``.

    Raises
    ------
    InputError
        ``lengths`` is empty or holds a length below 1.

    Examples
    --------
    >>> build((2, 1), causal=True).matrix.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    rule = make_document(lengths, causal)
    lengths = tuple(int(v) for v in lengths)
    n = sum(lengths)
    flag = "true" if causal else "false"
    return named_mask(rule, n, f"document:lengths={plus_joined(lengths)},causal={flag}")


ENTRY = Entry(
    "document",
    "packed documents: doc(q) == doc(k) (and k <= q when causal)",
    (
        Param("lengths", "int_list", help="document lengths, e.g. 3+2+4; n = their sum"),
        Param("causal", "bool", False, help="causal inside each document"),
    ),
    build,
)


def main() -> None:
    print(to_text(build((2, 3))))
    print()
    print(to_text(build((2, 3), causal=True)))


if __name__ == "__main__":
    main()

"""The mask entries of the catalogue, registered in catalogue order.

Each family module declares its own entry beside its ``build`` (``ENTRY``, or
``ENTRIES`` where it has two); this module registers them in the order that
``hasse catalog`` prints. Registration happens here, once, and not in the family
modules themselves, so that the order does not depend on which family is imported
first and so that ``python -m hasse.theory.masks.<family>`` registers nothing.
:mod:`theory.tasks` imports this module before it registers the tasks, so the
masks come first in the registry whichever of the two is imported first.
"""

from __future__ import annotations

from hasse.theory.masks import (
    bd3lm,
    bidirectional,
    block_causal,
    block_two_stream,
    butterfly,
    causal,
    chunked,
    convolution,
    document,
    prefix_lm,
    sliding_window,
    sparse_chains,
    sparse_spanners,
    tree,
    xlnet,
)
from hasse.theory.spec import Entry, register

MASK_ENTRIES: tuple[Entry, ...] = (  # catalogue order
    causal.ENTRY,
    bidirectional.ENTRY,
    *sliding_window.ENTRIES,
    prefix_lm.ENTRY,
    document.ENTRY,
    block_causal.ENTRY,
    *chunked.ENTRIES,
    convolution.ENTRY,
    bd3lm.ENTRY,
    xlnet.ENTRY,
    tree.ENTRY,
    block_two_stream.ENTRY,
    butterfly.ENTRY,
    *sparse_spanners.ENTRIES,
    *sparse_chains.ENTRIES,
)

for _entry in MASK_ENTRIES:
    register(_entry)
del _entry

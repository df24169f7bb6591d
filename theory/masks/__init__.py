"""The built-in masks, one module per family (re-exports only).

Each family module holds a vectorised predicate ``rule(q, k)`` or a factory that
returns one, a ``build(...) -> NamedMask``, its catalogue entry (``ENTRY``, or
``ENTRIES`` for two) and a ``main()`` that prints a small example
(``python -m hasse.theory.masks.butterfly``). :mod:`theory.masks.entries` registers
the entries in catalogue order; the spec language and the registry live in
:mod:`theory.spec`, resolving and building specs in :mod:`theory.catalog`.

Every builder (here and in :mod:`theory.tasks`) raises :class:`~theory.errors.InputError`
when ``n`` is not a positive integer (:func:`theory.params.require_positive`); a builder's
own docstring names only the other values it refuses.

The names below are re-exported lazily (PEP 562), so that running a family module
with ``python -m`` does not import it twice.
"""

from __future__ import annotations

from hasse.theory.lazy import lazy_exports

_EXPORTS = {  # public name -> (family module, name in it)
    "causal_mask": (".causal", "causal_mask"),
    "build_causal": (".causal", "build"),
    "bidirectional_mask": (".bidirectional", "bidirectional_mask"),
    "build_bidirectional": (".bidirectional", "build"),
    "make_sliding_window": (".sliding_window", "make_sliding_window"),
    "build_sliding_window": (".sliding_window", "build"),
    "make_sliding_window_distance": (".sliding_window", "make_sliding_window_distance"),
    "build_sliding_window_distance": (".sliding_window", "build_distance"),
    "make_prefix_lm": (".prefix_lm", "make_prefix_lm"),
    "build_prefix_lm": (".prefix_lm", "build"),
    "make_document": (".document", "make_document"),
    "build_document": (".document", "build"),
    "make_block_causal": (".block_causal", "make_block_causal"),
    "build_block_causal": (".block_causal", "build"),
    "make_bd3lm": (".bd3lm", "make_bd3lm"),
    "build_bd3lm": (".bd3lm", "build"),
    "make_xlnet": (".xlnet", "make_xlnet"),
    "build_xlnet": (".xlnet", "build"),
    "make_tree": (".tree", "make_tree"),
    "build_tree": (".tree", "build"),
    "make_block_two_stream": (".block_two_stream", "make_block_two_stream"),
    "build_block_two_stream": (".block_two_stream", "build"),
    "make_butterfly": (".butterfly", "make_butterfly"),
    "build_butterfly": (".butterfly", "build"),
    "make_convolution": (".convolution", "make_convolution"),
    "build_convolution": (".convolution", "build"),
    "build_recurrent": (".chunked", "build_recurrent"),
    "make_sparse_causal": (".sparse_spanners", "make_sparse_causal"),
    "build_sparse_causal": (".sparse_spanners", "build_sparse_causal"),
    "make_sparse_butterfly": (".sparse_spanners", "make_sparse_butterfly"),
    "build_sparse_butterfly": (".sparse_spanners", "build_sparse_butterfly"),
    "make_sparse_block_two_stream": (".sparse_spanners", "make_sparse_block_two_stream"),
    "build_sparse_block_two_stream": (".sparse_spanners", "build_sparse_block_two_stream"),
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

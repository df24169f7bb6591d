"""Families of `hasse derive` (issue 25): multi-token prediction with registers, BD3-LM with several block sizes.

Each family is built from its rules (which token each position holds, which it predicts,
what it attends), never from the merged layout; the derived layout is a catalogue task
beside it; :data:`RECIPES` tells `hasse derive` how the two relate (theory.derivations).

- ``mtp`` — member ``(i, d)``: the causal prefix ``x_0 … x_i`` (``x_j`` at pos id ``j``); ``d = 1``:
  the prefix's last position predicts ``x_{i+1}``; ``d >= 2``: one register ``([MASK], i + d - 1)``
  (MuToR's position id: that of the token which predicts ``x_{i+d}`` in next-token prediction)
  attends the prefix and itself and predicts ``x_{i+d}``. Derived layout ``mtp_registers``; published
  ``mutor`` (MuToR's interleaved order) and ``mtp_heads`` (Gloeckle et al.'s k heads). Built in
  :mod:`theory.tasks.mtp`.
- ``block_mixture`` — member ``(size L, b)``: clean context of blocks ``0 … b-1`` (block-causal or
  causal), then ``L`` ``[MASK]`` queries (a clique) predicting block ``b``. Derived layout
  ``block_mixture_merged``; published ``bd3lm_batch`` (one BD3-LM sequence per size). Built in
  :mod:`theory.tasks.block_mixture`.
"""

from __future__ import annotations

from hasse.theory.recipe import Published, Recipe
from hasse.theory.spec import Entry, Param

_MTP = "hasse.theory.tasks.mtp"
_BLOCKS_MODULE = "hasse.theory.tasks.block_mixture"


def _lazy(module: str, name: str):
    """A catalogue builder that imports ``module`` on first call (the registry stays cheap to import)."""

    def build(**kwargs):
        import importlib

        return getattr(importlib.import_module(module), name)(**kwargs)

    build.__name__ = build.__qualname__ = name
    return build


_N = Param("n", "int", help="number of tokens in the sample (n >= k + 1)")
_K = Param("k", "int", help="offsets 1 … k are predicted (1 <= k <= n-1)")
_I = Param("anchor", "int", help="i, the prefix's last token (MuToR's anchor), 0 <= i <= n-1-d")
_D = Param("d", "int", help="the offset predicted, 1 <= d <= k")
_DMIN = Param("dmin", "int", 1, help="smallest register offset (MuToR's min_offset + 1; its default 1)")
_NB = Param("n", "int", help="number of tokens in the sample; every block size divides it")
_BLOCKS = Param("blocks", "int_list", help="block sizes, distinct, each dividing n, e.g. 2+4")
_CONTEXT = Param("context", "choice", "block", "clean context: block-causal (BD3-LM's x0) or causal",
                 ("block", "causal"))
_SIZE = Param("block", "int", help="this member's block size L, one of blocks")
_B = Param("b", "int", help="the block predicted, 0 <= b < n/size")

ENTRIES: tuple = tuple(
    Entry(name, summary, params, _lazy(module, builder), kind)
    for kind, name, module, builder, params, summary in (
        ("task", "mtp", _MTP, "mtp_task", (_N, _K, _I, _D),
         "MTP member (i,d): causal prefix x_0..x_i; d=1: x_i predicts x_{i+1}; d>=2: a register predicts x_{i+d}"),
        ("family", "mtp", _MTP, "mtp_family", (_N, _K),
         "multi-token prediction family: every prefix i and offset d <= k; its merge is mtp_registers"),
        ("task", "mtp_registers", _MTP, "mtp_registers",  (_N, _K),
         "MTP with registers in one pass: causal x_0..x_{n-2}, then register streams d=2..k (k(2n-k-1)/2 positions)"),
        ("task", "mutor", _MTP, "mutor", (_N, _K, _DMIN),
         "MuToR (Gerontopoulos et al. 2025): registers r_{i,d} interleaved after their anchor x_i, offsets dmin..k"),
        ("task", "mtp_heads", _MTP, "mtp_heads", (_N, _K),
         "MTP with k output heads (Gloeckle et al. 2024): causal LM, position i predicts x_{i+1}..x_{i+k}"),
        ("task", "block_mixture", _BLOCKS_MODULE, "block_mixture_task", (_NB, _BLOCKS, _CONTEXT, _SIZE, _B),
         "block-mixture member (L,b): clean blocks 0..b-1 of size L, then L [MASK] queries predicting block b"),
        ("family", "block_mixture", _BLOCKS_MODULE, "block_mixture_family", (_NB, _BLOCKS, _CONTEXT),
         "BD3-LM family over several block sizes: every size L and block b; its merge is block_mixture_merged"),
        ("task", "block_mixture_merged", _BLOCKS_MODULE, "block_mixture_merged", (_NB, _BLOCKS, _CONTEXT),
         "several block sizes in one pass: per-size clean+query streams (block), or one causal clean stream shared"),
        ("task", "bd3lm_batch", _BLOCKS_MODULE, "bd3lm_batch", (_NB, _BLOCKS),
         "BD3-LM once per block size, the sequences side by side (block-diagonal): 2n positions per size"),
    )
)


def _plus(values) -> str:
    return "+".join(str(int(v)) for v in values)


def _mixture_layout(values: dict) -> str:
    return (f"block_mixture_merged:n={values['n']},blocks={_plus(values['blocks'])},"
            f"context={values.get('context', 'block')}")


RECIPES: tuple = (
    Recipe(
        "mtp",
        lambda values: f"mtp_registers:n={values['n']},k={values['k']}",
        lambda values: f"mtp_registers:k={values['k']}",
        flex="mtp_registers",
        flex_args=lambda values: f"k={values['k']}",
        published=(
            Published("MuToR (Gerontopoulos et al. 2025, arXiv 2505.10518), offsets d = 2 … k",
                      "nasosger/MuToR language_modeling/src/finetune.py process_input_and_labels_mutor "
                      "(interleaving, reg_positions = anchor + d - 1, register/regular masking)",
                      lambda values: f"mutor:n={values['n']},k={values['k']},dmin=2"),
            Published("MuToR with its default offsets d = 1 … k (min_offset = 0)",
                      "nasosger/MuToR language_modeling/src/args_mutor.py (min_offset = 0, max_offset = 3)",
                      lambda values: f"mutor:n={values['n']},k={values['k']},dmin=1"),
            Published("k output heads on the causal trunk (Gloeckle et al. 2024, arXiv 2404.19737)",
                      "the paper's method: a shared causal trunk and k independent output heads, "
                      "head j predicting x_{i+j} at i",
                      lambda values: f"mtp_heads:n={values['n']},k={values['k']}"),
        ),
        finding=("The merge of the multi-token family is the causal content stream plus one stream of "
                 "registers per offset d >= 2, each register reading the prefix up to its anchor and itself: "
                 "MuToR's mask with its offsets d >= 2 placed in one sequence (isomorphic). MuToR's default "
                 "d = 1 registers duplicate what the anchor token predicts already; k heads need no "
                 "registers but put k labels on one position (k output heads)."),
        doc="docs/families/mtp.md",
    ),
    Recipe(
        "block_mixture",
        _mixture_layout,
        lambda values: (f"block_mixture_merged:blocks={_plus(values['blocks'])},"
                        f"context={values.get('context', 'block')}"),
        flex="block_mixture",
        flex_args=lambda values: (f"blocks=({', '.join(str(int(b)) for b in values['blocks'])},), "
                                  f"context={values.get('context', 'block')!r}"),
        published=(
            Published("BD3-LM (Arriola et al. 2025, arXiv 2503.09573), one sequence per block size",
                      "kuleshov-group/bd3lms block_diff_mask ([x_t ; x_0], 2n positions per sequence)",
                      lambda values: f"bd3lm_batch:n={values['n']},blocks={_plus(values['blocks'])}"),
        ),
        finding=("With block-causal clean context (BD3-LM's x0) the sizes share nothing: the merge is the "
                 "disjoint union of BD3-LM's design per size without its last clean block (2n - L positions "
                 "per size, never read by a query). With a causal clean stream every size reads the same "
                 "stream: n - min(L) clean positions in all, plus n queries per size."),
        doc="docs/families/block_mixture.md",
    ),
)

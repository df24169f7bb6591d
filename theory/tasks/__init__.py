"""Built-in tasks, task families and bad designs, registered in the catalogue.

Imported by :mod:`theory.catalog`; the entries go into the registry of
:mod:`theory.spec`, after the mask entries (:mod:`theory.masks.entries`). Entries of
kind ``"task"`` build one :class:`~theory.task.Task`; entries of kind ``"family"``
build a tuple of them. The modules:

- :mod:`theory.tasks.families` — ``ar``, ``block``, ``infill`` (design §4), by member and whole;
- :mod:`theory.tasks.case_studies` — ``block_two_stream`` and ``butterfly`` as full tasks;
- :mod:`theory.tasks.prior_art` — ``causal_lm``, ``mlm``, ``bd3lm``, ``xlnet``, ``packed``;
- :mod:`theory.tasks.bad` — the six ``bad_*`` designs, each with the counterexample it must produce.

A name that is both a mask and a task (``butterfly``, ``bd3lm``, …) resolves to the
mask where a MASK is expected and to the task where a TASK is expected.
"""

from __future__ import annotations

import hasse.theory.masks.entries  # noqa: F401  (the mask entries are registered first)
from hasse.theory.lazy import lazy_exports
from hasse.theory.spec import Entry, Param, register

_EXPORTS = {  # public name -> module of theory.tasks that defines it
    **dict.fromkeys(("ar_task", "ar_family", "ar_merged", "block_task", "block_family", "infill_task", "infill_family"),
                    ".families"),
    **dict.fromkeys(("block_two_stream_task", "butterfly_task"), ".case_studies"),
    **dict.fromkeys(("causal_lm", "mlm", "bd3lm", "xlnet", "packed"), ".prior_art"),
    **dict.fromkeys(("bad_butterfly_self", "bad_butterfly_crossed", "bad_block_own_content", "bad_mlm_unmasked",
                     "bad_packed_window", "bad_block_query_history"), ".bad"),
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

def _builder(name: str):
    """A catalogue builder that imports the module defining ``name`` on first call."""

    def build(**kwargs):
        return __getattr__(name)(**kwargs)

    build.__name__ = build.__qualname__ = name
    return build


_N = Param("n", "int", help="number of tokens in the sample (n >= 1)")
_N2 = Param("n", "int", help="number of tokens in the sample (n >= 2)")
_BLOCK = Param("block", "int", help="block size l; must divide n")
_VARIANT = Param("variant", "choice", "chain", "attention among a block's queries", ("chain", "clique"))
_LENGTHS = Param("lengths", "int_list", help="document lengths, e.g. 3+2+4; n = their sum")
_K_AR = Param("k", "int", help="the token predicted, 1 <= k <= n-1")
_K_INFILL = Param("k", "int", help="the token predicted, 0 <= k <= n-1")
_B = Param("b", "int", help="the block predicted, 0 <= b < n/l")
_MASKED = Param("masked", "int_list", help="masked positions, distinct, e.g. 1+3")
_ORDER = Param("order", "int_list", help="factorisation order, a permutation of 0..n-1, e.g. 2+0+1")
_WINDOW_OPTIONAL = Param("window", "int", 0, help="keys per query, self included; 0 = no window; alias w",
                         aliases=("w",))
_WINDOW = Param("window", "int", help="keys per query, self included (>= 2 to cross a boundary); alias w",
                aliases=("w",))

_ENTRIES = (  # (kind, name, builder, params, summary)
    ("task", "ar", "ar_task", (_N2, _K_AR),
     "AR family member T_k: causal prefix x_0..x_{k-1}, predicts x_k at position k-1"),
    ("task", "ar_merged", "ar_merged", (_N2,),
     "the ar family's merge: causal on n-1 positions, x_i at position i predicting x_{i+1}"),
    ("task", "block", "block_task", (_N, _BLOCK, _B, _VARIANT),
     "block family member B_b: causal content of blocks < b, then block b's [MASK] queries"),
    ("task", "infill", "infill_task", (_N, _K_INFILL),
     "infill family member T_k: left arm, right arm, centre agg(x_{k-1},x_{k+1}) predicting x_k"),
    ("task", "block_two_stream", "block_two_stream_task", (_N, _BLOCK, _VARIANT),
     "Block Two-Stream task: C_i = x_i, Q_t = [MASK] predicting x_t (2n-l positions)"),
    ("task", "butterfly", "butterfly_task", (_N,),
     "Butterfly task: F_i, B_i = x_i, P_k = agg(x_{k-1},x_{k+1}) predicting x_k (3n-2 positions)"),
    ("task", "causal_lm", "causal_lm", (_N,),
     "causal LM: x_i at position i predicts x_{i+1}"),
    ("task", "mlm", "mlm", (_N, _MASKED),
     "masked LM, bidirectional: [MASK] at the masked positions, each predicting its own token"),
    ("task", "bd3lm", "bd3lm", (_N, _BLOCK),
     "BD3-LM block diffusion: x_t half [MASK] predicting x_i, clean x_0 half unsupervised"),
    ("task", "xlnet", "xlnet", (_ORDER,),
     "XLNet two-stream: content c_i = x_i, query g_i = [MASK] predicting x_i"),
    ("task", "packed", "packed", (_LENGTHS, _WINDOW_OPTIONAL),
     "causal LM over packed documents (optionally in a window of w keys); documents isolated"),
    ("task", "bad_butterfly_self", "bad_butterfly_self", (_N,),
     "bad: Butterfly with P_k holding x_k; must find a leak at depth 0 at every P_k"),
    ("task", "bad_butterfly_crossed", "bad_butterfly_crossed", (_N,),
     "bad: Butterfly with F -> B; must find a leak at depth 2 (B_m -> F_j -> P_m), smallest n = 2"),
    ("task", "bad_block_own_content", "bad_block_own_content", (_N, _BLOCK),
     "bad: block queries see their own block's content; must find a leak at depth 1"),
    ("task", "bad_mlm_unmasked", "bad_mlm_unmasked", (_N,),
     "bad: bidirectional with labels on unmasked tokens; must find a leak at depth 0"),
    ("task", "bad_packed_window", "bad_packed_window", (_LENGTHS, _WINDOW),
     "bad: sliding window over packed documents ignoring boundaries; must find an isolation violation at depth 1"),
    ("task", "bad_block_query_history", "bad_block_query_history", (_N, _BLOCK),
     "bad: Block Two-Stream queries also see earlier blocks' queries; leak-free but inconsistent with inference"),
    ("family", "ar", "ar_family", (_N2,),
     "AR family: tasks T_1..T_{n-1}; its minimal merge is causal attention on n-1 positions"),
    ("family", "block", "block_family", (_N, _BLOCK, _VARIANT),
     "block family: tasks B_0..B_{n/l-1}; its minimal merge is Block Two-Stream"),
    ("family", "infill", "infill_family", (_N,),
     "infill family: tasks T_0..T_{n-1}; its minimal merge is Butterfly"),
)

for _kind, _name, _build, _params, _summary in _ENTRIES:
    register(Entry(_name, _summary, _params, _builder(_build), _kind))
del _kind, _name, _build, _params, _summary

# the families of `hasse derive` (issue 25) and their derived layouts: each module declares ENTRIES
from hasse.theory.tasks import derived_masked, derived_orders, derived_tokens  # noqa: E402

for _module in (derived_masked, derived_orders, derived_tokens):
    for _derived in _module.ENTRIES:
        register(_derived)
del _module

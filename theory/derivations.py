"""What `hasse derive` knows about each built-in family (issue 25): its derived layout, its proof for
every n, its FlexAttention export and the masks its authors publish.

A :class:`Recipe` relates a catalogue *family* (built from its rules) to:

- ``layout(values)``: the catalogue TASK spec that the family's minimal merged task must be
  isomorphic to at these values (None where no closed form applies, e.g. every masked set);
- ``symbolic(values)``: the TASK spec, with ``n`` (and any list) left out, that
  ``prove-mask --claim leak-free`` proves for every n (None: no all-n proof);
- ``flex``: the module of :mod:`theory.flex` that ``--export flex`` writes, and
  ``flex_args(values)``: the keyword arguments (besides ``n``) of its ``make_mask_mod``
  at these values, as Python source text (``"k=3"``, ``"masked=[1, 3]"``);
- ``assume``: the ``--assume NAME=PROPERTY`` a proof of the export needs (a tensor argument);
- ``published``: the designs their authors use (:class:`Published`), compared at these values.

``values`` are the family spec's parsed parameter values (``n`` included). The recipes are
declared by the family modules (``theory.tasks.derived_*``: ``RECIPES``) and by this module
for the paper's three families; :func:`recipe_of` finds one by family name.
"""

from __future__ import annotations

from hasse.theory.recipe import Published, Recipe

__all__ = ["PAPER_RECIPES", "Published", "Recipe", "recipe_of", "recipes"]


def _block_layout(values: dict) -> str:
    return f"block_two_stream:n={values['n']},block={values['block']},variant={values.get('variant', 'chain')}"


PAPER_RECIPES = (
    Recipe("ar", lambda values: f"ar_merged:n={values['n']}", lambda values: "ar_merged", flex="ar_merged",
           finding="The merge of the ar family is causal attention on n - 1 positions (Li & Guo, §4).",
           doc="docs/families/ar.md"),
    Recipe("block", _block_layout,
           lambda values: f"block_two_stream:variant={values.get('variant', 'chain')}",
           flex="block_two_stream", flex_args=lambda values: f"block={values['block']}, "
                                                            f"variant={values.get('variant', 'chain')!r}",
           consistent=lambda values: f"block_two_stream:variant={values.get('variant', 'chain')}",
           finding="The merge of the block family is Block Two-Stream Attention (Li & Guo, §5).",
           doc="docs/families/block.md"),
    Recipe("infill", lambda values: f"butterfly:n={values['n']}", lambda values: "butterfly",
           flex="butterfly", finding="The merge of the infill family is Butterfly Attention (Li & Guo, §6).",
           doc="docs/families/infill.md"),
)


def recipes() -> tuple[Recipe, ...]:
    """Every recipe: the paper's families, then those of ``theory.tasks.derived_*``."""
    from hasse.theory.tasks import derived_masked, derived_orders, derived_tokens

    return PAPER_RECIPES + derived_masked.RECIPES + derived_orders.RECIPES + derived_tokens.RECIPES


def recipe_of(family: str) -> Recipe | None:
    """The recipe of the family called ``family`` (a name, not a spec); None if it has none."""
    return next((r for r in recipes() if r.family == family), None)

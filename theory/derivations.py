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

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Published:
    """A published design to compare with the derived one."""

    name: str  # "MAE (He et al. 2022), encoder + decoder"
    source: str  # where the mask comes from: the configuration or code, one line
    task: Callable[[dict], str | None]  # family values -> catalogue TASK spec at those values (None: no form)


@dataclass(frozen=True)
class Recipe:
    family: str  # the catalogue family's name
    layout: Callable[[dict], str | None]
    symbolic: Callable[[dict], str | None]
    flex: str | None = None  # module name under hasse.theory.flex
    flex_args: Callable[[dict], str] = field(default=lambda values: "")
    assume: tuple[str, ...] = ()  # "masked=any", "rank=permutation": what the export's proof assumes
    published: tuple[Published, ...] = ()
    finding: str = ""  # one paragraph: what the derivation finds against the published designs
    doc: str = ""  # the family's page under docs/families/


def _block_layout(values: dict) -> str:
    return f"block_two_stream:n={values['n']},block={values['block']},variant={values.get('variant', 'chain')}"


PAPER_RECIPES = (
    Recipe("block", _block_layout,
           lambda values: f"block_two_stream:variant={values.get('variant', 'chain')}",
           flex="block_two_stream", flex_args=lambda values: f"block={values['block']}, "
                                                            f"variant={values.get('variant', 'chain')!r}",
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

"""The record `hasse derive` reads for each built-in family (issue 25): :class:`Recipe` and :class:`Published`.

Declared by the family modules (``theory.tasks.derived_*``: ``RECIPES``) and by
:mod:`theory.derivations` for the paper's families; the fields are described there.
This module imports nothing of the kit, so the family modules can import it.
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
    consistent: Callable[[dict], str | None] = field(default=lambda values: None)  # a spec proved `--claim
    # consistent` for every n: training–inference consistency with the family's tasks as the decoding steps
    finding: str = ""  # one paragraph: what the derivation finds against the published designs
    doc: str = ""  # the family's page under docs/families/

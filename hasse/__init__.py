"""hasse — the command-line interface of the attention-mask theory kit (the composition root)."""

from hasse.theory.version import __version__

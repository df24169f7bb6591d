"""hasse — the command-line interface of the attention-mask theory kit (the composition root)."""

__version__ = "0.1.0"

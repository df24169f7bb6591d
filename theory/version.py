"""The kit's version: one place, read by the package metadata, the CLI and certificates."""

__version__ = "0.1.0"

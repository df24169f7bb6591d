"""Every (sub)command of ``hasse``, walked from the real parser (shared by the CLI contract tests)."""

from __future__ import annotations

import argparse

from hasse.cli import build_parser


def commands() -> dict[str, argparse.ArgumentParser]:
    """``{"leak": parser, "certificate verify": parser, ...}``: every subcommand, nested ones by their full name."""
    found = {}

    def walk(parser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{prefix} {name}".strip())
        if prefix:
            found[prefix] = parser

    walk(build_parser(), "")
    return found

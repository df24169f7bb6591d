"""How every command registers its parser on ``hasse``'s subcommands.

:func:`add_command` keeps a command's description and epilog as written (line
breaks, aligned examples), so each ``cmd_*`` module only adds its arguments.
"""

from __future__ import annotations

import argparse


def add_command(sub, name: str, help: str, description: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """The subparser ``hasse NAME``, its help texts printed exactly as written.

    >>> parser = argparse.ArgumentParser(prog="hasse")
    >>> p = add_command(parser.add_subparsers(), "leak", "check a task", "Line one.\\n  indented")
    >>> p.format_help().splitlines()[2:4]
    ['Line one.', '  indented']
    """
    return sub.add_parser(name, help=help, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)

"""How every command registers its parser on ``hasse``'s subcommands, and names its flags in errors.

:func:`add_command` keeps a command's description and epilog as written (line
breaks, aligned examples), so each command module only adds its arguments.
:data:`FLAGS` is the one table from the library's parameters to the command line's
flags: :func:`flagged` words an :class:`InputError` that carries a ``param`` with them.
"""

from __future__ import annotations

import argparse

from hasse.theory.errors import InputError

FLAGS = {"heads": "--heads", "batch": "--batch", "kv_len": "--kv-len", "queries": "--queries",
         "empty_rows": "--empty-rows", "n": "--n", "repeat": "--repeat", "convention": "--convention",
         "trust_code": "--trust-code", "stack": "--stack"}
"""The flag of each parameter an :class:`InputError` may carry (:data:`hasse.theory.errors.PARAMS`)."""


def flagged(exc: InputError) -> InputError:
    """The error in the command line's words: its parameters named by their flags (:data:`FLAGS`).

    >>> str(flagged(InputError("{kv_len=K} needs {n=Q}", "m.py:f", param="kv_len")))
    'm.py:f: --kv-len K needs --n Q'
    """
    return exc.worded(FLAGS)


def add_command(sub, name: str, help: str, description: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """The subparser ``hasse NAME``, its help texts printed exactly as written.

    >>> parser = argparse.ArgumentParser(prog="hasse")
    >>> p = add_command(parser.add_subparsers(), "leak", "check a task", "Line one.\\n  indented")
    >>> p.format_help().splitlines()[2:4]
    ['Line one.', '  indented']
    """
    return sub.add_parser(name, help=help, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def integer(flag: str, low: int | None = None):
    """The argparse ``type`` of every integer option: digits within 64 bits, at least ``low`` (one line else).

    The text is read by :func:`theory.limits.parse_int` (no int-str ValueError, no 5,000-digit
    echo: a usage error). ``low`` (1: "a positive integer", else ">= low") is checked by
    :func:`check_integers` once the command line is parsed, as the commands' own checks are
    (exit 2 through :class:`InputError`). Upper limits are the library's (:mod:`theory.limits`),
    which names the size it refuses.

    >>> heads = integer("--heads", 1)
    >>> heads("4"), heads.low
    (4, 1)
    >>> integer("--layers", 0)("9" * 5000)
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: --layers: an integer of 5,000 digits is beyond 64 bits (at most 9223372036854775807)
    """
    from hasse.theory.limits import parse_int

    def parse(text: str) -> int:
        try:
            return parse_int(text, flag)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "integer"
    parse.flag, parse.low = flag, low
    return parse


def check_integers(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """:class:`InputError` for an integer option below its :func:`integer` type's ``low`` (one line, the flag named).

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--heads", type=integer("--heads", 1))
    >>> check_integers(p, p.parse_args(["--heads", "0"]))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --heads must be a positive integer, got 0
    """
    for action in parser._actions:
        low = getattr(action.type, "low", None)
        value = getattr(args, action.dest, None)
        if low is not None and isinstance(value, int) and value < low:
            wording = "a positive integer" if low == 1 else f">= {low}"
            raise InputError(f"{action.type.flag} must be {wording}, got {value}")

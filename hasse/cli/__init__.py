"""``hasse`` command line: parse, call the library, print.

Exit status (design.md §7): 0 the property holds / the command succeeded;
1 a violation was found; 2 bad input or usage (one line on stderr naming the
source and the problem); 3 inconclusive.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings

from hasse.theory.errors import InputError
from hasse.theory.user_code import UserCodeTimeout

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE = 0, 1, 2, 3

DESCRIPTION = """\
Formal verification kit for Transformer attention masks.

A mask M is an n x n 0/1 matrix with M[q, k] = 1 iff query q may attend key k
(FlexAttention / SDPA convention; positions are 0-based). With the residual
connection, information flows k -> q one hop per layer; in the limit it forms a
preorder whose classes and Hasse diagram this tool computes.
"""

EPILOG = """\
MASK can be:
  a built-in spec      butterfly:n=4   block_two_stream:n=8,block=2   (see `hasse catalog`)
  a file               mask.npy   mask.txt / mask.csv (rows of 0/1)   mask.json (a "mask" field)
  an array file        mask.npy / mask.pt: (Q, K), (H, Q, K) or (B, H, Q, K); bool, 0/1 or additive (--convention)
  a mask_mod           my_masks.py:causal --n 16   (FlexAttention-style mask_mod(b, h, q_idx, kv_idx))

examples:
  hasse demo                                   the built-in tour, no input needed
  hasse catalog                                every built-in mask and its parameters
  hasse analyze butterfly:n=4                  depth, classes, Hasse diagram
  hasse analyze causal:n=6 --layers 2 --json   machine-readable, with R(2)
  hasse analyze swap.txt --no-residual         negative control: powers may never settle
  hasse analyze sliding_window:n=32,w=4 --png window.png --dot window.dot
  hasse prove-mask butterfly --claim leak-free  leak-free for every length n at once
  hasse equiv causal masks.py:my_causal        the same pairs for every n?
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: exit 2, one line (the usage is in --help)
        flag, _, rest = message.removeprefix("argument ").partition(": ")
        if message.startswith("argument ") and rest.startswith(flag):  # parsers.integer names its flag itself
            message = rest
        print(f"{self.prog}: error: {message} (see {self.prog} --help)".replace("\n", " "), file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def command_modules() -> tuple:
    """One module of hasse.cli per command, in the order ``hasse --help`` lists them. Every other module of
    hasse.cli is shared by the commands (argument helpers, the --train-demo options), never a command."""
    from hasse.cli import analyze, audit, catalog, certificate, counterexample, demo, equiv, gpu_check, leak, merge
    from hasse.cli import consistent, derive, flow, prove, prove_mask, synthesize

    return (analyze, leak, flow, counterexample, merge, derive, consistent, prove, prove_mask, equiv, synthesize,
            certificate,
            gpu_check, audit, catalog, demo)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hasse",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from hasse import __version__

    parser.add_argument("--version", action="version", version=f"hasse {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in command_modules():
        module.register(sub)
    return parser


def check_timeout(timeout: float | None) -> None:
    """Every command's ``--timeout`` is a positive, finite number of seconds (NaN, inf, 0, negative: exit 2).

    >>> check_timeout(1.5); check_timeout(None)
    >>> check_timeout(float("nan"))
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: --timeout must be a positive, finite number of seconds, got nan
    """
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise InputError(f"--timeout must be a positive, finite number of seconds, got {timeout:g}")


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """Print a Python warning raised while a command runs as ``hasse: warning: …`` on stderr (no source line)."""
    from hasse.views.output import warn

    warn(str(message))  # clears a status line first


def chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost (sub)parser that ``args`` went through: ``hasse leak`` for ``hasse leak TASK``.

    >>> p = build_parser()
    >>> chosen_parser(p, p.parse_args(["leak", "t.json"])).prog, chosen_parser(p, p.parse_args([])).prog
    ('hasse leak', 'hasse')
    """
    owner = parser
    while True:
        subs = [a for a in owner._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name is None or name not in subs[0].choices:
            return owner
        owner = subs[0].choices[name]


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser.parse_args(argv)``, but an unknown argument is reported by the subcommand it follows.

    argparse lets the top-level parser report the arguments no subparser knew, so
    ``hasse leak t.json --bogus`` said ``hasse: error: …``; here the subcommand that was
    chosen reports them, in one line that names it (``hasse leak: error: unrecognized
    arguments: --bogus (see hasse leak --help)``). Arguments given before the command
    stay the top-level parser's.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args, extras = parser.parse_known_args(argv)
    if extras:
        owner = chosen_parser(parser, args)
        command = getattr(args, "command", None)
        if command in argv and extras[0] in argv and argv.index(extras[0]) < argv.index(command):
            owner = parser
        owner.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def main(argv: list[str] | None = None) -> int:
    from hasse.gpu_check.torch_masks import register_input_hooks

    register_input_hooks()  # the torch readers of the input wing (theory.inputs.hooks); imports no torch
    parser = build_parser()
    args = parse_arguments(parser, argv)
    args.argv = tuple(sys.argv[1:] if argv is None else argv)  # the command as given (certificates record it)
    if not getattr(args, "run", None):  # `hasse` alone: the usage, and why it stopped (stderr, exit 2)
        parser.print_usage(sys.stderr)
        print("hasse: error: no command given (see hasse --help)", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        from hasse.views.output import refuse_outputs_onto_inputs

        from hasse.cli.parsers import check_integers

        check_integers(chosen_parser(parser, args), args)  # every integer option's lower bound (parsers.integer)
        refuse_outputs_onto_inputs(args)  # before any work: never write onto an input or a FIFO
        check_timeout(getattr(args, "timeout", None))
        if getattr(args, "png", None):  # the picture's suffix picks its format: refuse another before any work
            from hasse.views.figure import picture_format

            picture_format(args.png)
        from hasse.views.output import output_paths
        from hasse.theory.atomic_file import guard_outputs

        from hasse.theory.user_code import limits as user_code_limits

        with warnings.catch_warnings(), guard_outputs(output_paths(args)):  # no output onto a file read, named or not
            warnings.showwarning = _warning_line  # a Python warning (a BlockMask read at block size): one line
            with user_code_limits(seconds=getattr(args, "timeout", None)):  # user code is bounded by --timeout too
                return int(args.run(args))
    except UserCodeTimeout as exc:  # user code stopped at its time limit: no answer, not bad input (design §10)
        print(f"hasse: unknown: {exc}", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    except TimeoutError as exc:  # the kit's own work stopped at --timeout (theory.deadline): no answer
        print(f"hasse: unknown: {exc} (--timeout); nothing was decided", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    except InputError as exc:
        from hasse.cli.parsers import flagged

        print(f"hasse: error: {flagged(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("hasse: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK

"""Small helpers shared by the commands: JSON printing, warnings, and writing output files safely.

Outputs (``--out``, ``--png``, ``--dot``, ``--certificate``) are written atomically:
:func:`~hasse.theory.atomic_file.atomic_output` hands out a temporary file beside the target and renames it
over the target only when it is complete, so a crash or a full disk never leaves
half a file. :func:`refuse_outputs_onto_inputs` (called by :func:`hasse.cli.main`
before any command runs) refuses an output that is one of the command's input files,
two outputs naming one file, or an output that exists and is not a regular file (a
FIFO, a device, a folder). Files named inside input files (a ``{"mask": "m.npy"}``, a
stack layer) are covered while the command runs: every file a loader opens is
registered (:func:`hasse.theory.atomic_file.guard_outputs`) and reading an output is
refused before the work that would follow.
"""

from __future__ import annotations

import json
import os
import sys

from hasse.theory.atomic_file import atomic_output, same_file, write_problem, write_text  # noqa: F401  (the one atomic writer, used by commands)
from hasse.theory.jsonable import to_jsonable  # noqa: F401  (the one JSON converter, used by commands)


def print_json(obj) -> None:
    """Print one JSON object on stdout (compact rows of 0/1 stay readable)."""
    clear_progress()
    json.dump(to_jsonable(obj), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


def warn(message: str) -> None:
    clear_progress()
    print(f"hasse: warning: {message}", file=sys.stderr)


class ProgressLine:
    """One status line on stderr, rewritten in place on a terminal and cleared before any result is printed.

    On a terminal, :meth:`show` writes ``"\\r" + text + ESC[K`` (the text cut to the
    terminal's width, so it never wraps onto a line that ``\\r`` cannot reach) and
    :meth:`clear` writes ``"\\r" + ESC[K``. When the stream is not a terminal (a file, a
    pipe, a CI log) nothing is written at all (design.md §7: progress only on a
    terminal), so a captured stderr never holds a half line before a verdict.

    >>> import io
    >>> class Tty(io.StringIO):
    ...     def isatty(self): return True
    >>> line = ProgressLine(Tty(), min_interval=0); line.show("trying n = 3"); line.clear()
    >>> line.stream.getvalue().encode()
    b'\\rtrying n = 3\\x1b[K\\r\\x1b[K'
    >>> quiet = ProgressLine(io.StringIO()); quiet.show("trying n = 3"); quiet.clear(); quiet.stream.getvalue()
    ''
    """

    CLEAR_TO_END = "\x1b[K"

    def __init__(self, stream=None, min_interval: float = 0.2):
        self._stream = stream  # None: sys.stderr as it is at each call (pytest's capture swaps it)
        self.min_interval = min_interval  # seconds between two redraws (the last one of a run is forced)
        self.shown = False  # a status is on the screen and must be cleared before anything else
        self._last = float("-inf")

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    @property
    def live(self) -> bool:
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError):  # a closed or a bare stream
            return False

    def show(self, text: str, force: bool = False) -> None:
        """Replace the status by ``text`` (one line; only on a terminal, at most every ``min_interval`` s)."""
        import time

        if not self.live:
            return
        now = time.monotonic()
        if not force and self.shown and now - self._last < self.min_interval:
            return
        self._last = now
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns - 1
        text = text.replace("\n", " ").replace("\r", " ")
        if len(text) > width:
            text = text[:max(width - 1, 0)] + "…"
        self.stream.write("\r" + text + self.CLEAR_TO_END)
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the status line (nothing to do when none is shown)."""
        if self.shown:
            self.shown = False
            try:
                self.stream.write("\r" + self.CLEAR_TO_END)
                self.stream.flush()
            except (ValueError, OSError):
                pass


PROGRESS = ProgressLine()


def progress(text: str, force: bool = False) -> None:
    """Show ``text`` as the status line of a long run (stderr, only on a terminal). See :class:`ProgressLine`."""
    PROGRESS.show(text, force)


def clear_progress() -> None:
    """Erase the status line, if one is shown: every command calls it (or :func:`say`) before a result."""
    PROGRESS.clear()


def say(*lines: str) -> None:
    """Print result lines on stdout after clearing the status line, and flush (results appear as they come)."""
    clear_progress()
    print(*lines, sep="\n", flush=True)


OUTPUT_OPTIONS = {"out": "--out", "png": "--png", "dot": "--dot", "certificate": "--certificate"}


def _input_paths(args) -> list[str]:
    """The existing files named by a command's arguments (a ``file.py:function`` names ``file.py``)."""
    from hasse.theory.inputs.calls import split_function
    out = []
    for key, value in vars(args).items():
        if key in OUTPUT_OPTIONS or key == "argv":  # argv: the whole command line, outputs included
            continue
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str) or not item or item == "-":
                continue
            named = split_function(item)  # file.py:f(…) with a ':' inside an argument names file.py too
            head = named[0] if named else item.rpartition(":")[0]
            for candidate in (item, head or None):
                if candidate and os.path.exists(candidate):
                    out.append(candidate)
    return out


def refuse_outputs_onto_inputs(args) -> None:
    """:class:`InputError` when an output option names an input file of the command, the file of another output
    option, or a non-regular file (before any work; inputs named inside input files: :func:`hasse.theory.atomic_file.guard_outputs`)."""
    from hasse.theory.errors import InputError

    inputs = _input_paths(args)
    named = {}
    for key, flag in OUTPUT_OPTIONS.items():
        path = getattr(args, key, None)
        if not isinstance(path, str) or not path or path == "-":
            continue
        for other, given in named.items():  # two outputs onto one file: one would silently replace the other
            if same_file(path, given):
                raise InputError(f"{other} and {flag} name the same file; give each output its own", path)
        named[flag] = path
        problem = write_problem(path)
        if problem == "not a regular file":
            raise InputError(f"{flag}: not a regular file; give a file to write", path)
        if problem:
            raise InputError(f"{flag}: cannot write: {problem}", path)
        if not os.path.exists(path):
            continue
        for given in inputs:
            if same_file(path, given):
                raise InputError(f"{flag} would overwrite the input {given}", path)


def output_paths(args) -> dict:
    """``{flag: path}`` of the output options a command was given (``-``, stdout, left out)."""
    return {flag: path for key, flag in OUTPUT_OPTIONS.items()
            if isinstance(path := getattr(args, key, None), str) and path and path != "-"}


def spec_of(source, kind: str | None = None) -> str | None:
    """The canonical spec of a built-in spec argument (``sliding_window:w=3,n=8`` -> ``sliding_window:n=8,window=3``).

    None when ``source`` is a file, a ``file.py:function`` or not a complete spec.

    >>> spec_of("sliding_window:w=3,n=8"), spec_of("mask.npy"), spec_of("bad_block_own_content:block=2")
    ('sliding_window:n=8,window=3', None, None)
    """
    from hasse.theory.catalog import resolve_spec
    from hasse.theory.errors import InputError
    from hasse.theory.inputs.forms import form_of

    if not isinstance(source, str) or form_of(source) != "spec":
        return None
    try:
        return resolve_spec(source, kind).canonical
    except InputError:
        return None


def json_header(command: str, input=None, spec: str | None = None) -> dict:
    """The fields every command's JSON object starts with (design §7): command, version, input, spec.

    >>> h = json_header("analyze", "causal:n=4", "causal:n=4")
    >>> sorted(h), h["command"]
    (['command', 'input', 'spec', 'version'], 'analyze')
    """
    from hasse.theory.version import __version__

    return {"command": command, "version": __version__, "input": input, "spec": spec}


def emit_json(args, obj) -> bool:
    """Hand a command's JSON object out: to ``--out FILE`` (atomically) when given, on stdout with ``--json``.

    Returns True when the object went to stdout (the command then prints nothing
    else); with ``--out`` alone the command goes on to print its text report.
    """
    data = to_jsonable(obj)
    path = getattr(args, "out", None)
    if path:
        write_text(path, json.dumps(data, separators=(",", ":")) + "\n")
    if getattr(args, "json", False):
        print_json(data)
        return True
    return False


def add_json_arguments(p, *, ascii_help: str = "ASCII characters only",
                       json_help: str = "print one JSON object and nothing else", png_help: str | None = None) -> None:
    """``--json``, ``--out FILE`` and ``--ascii``, in the same words on every command (design §7); with
    ``png_help``, ``--png FILE`` (a picture of the report) before ``--ascii``."""
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument("--out", metavar="FILE", help="also write that JSON object to FILE (the terminal gets the report)")
    if png_help is not None:
        p.add_argument("--png", metavar="FILE", help=png_help)
    add_ascii_argument(p, ascii_help)


def add_ascii_argument(p, ascii_help: str = "ASCII characters only") -> None:
    """``--ascii`` alone (a command with no JSON object), in the same words as :func:`add_json_arguments`."""
    p.add_argument("--ascii", action="store_true", help=ascii_help)


ASCII_FOR = {"→": "->", "←": "<-", "…": "...", "≤": "<=", "≥": ">=", "×": "x", "—": "-", "–": "-", "−": "-",
             "·": ".", "█": "#", "░": ".", "▒": "+", "✓": "ok", "✗": "X", "≠": "!=", "∞": "inf", "⊆": "<=",
             "’": "'", "‘": "'", "“": '"', "”": '"', "↔": "<->", "│": "|", "─": "-", "┼": "+",
             "∅": "{}", "≈": "~", "μ": "u", "Σ": "sum", "⌈": "ceil(", "⌉": ")", "⌊": "floor(", "⌋": ")"}


def ascii_only(text: str) -> str:
    """``text`` in ASCII characters: arrows, ellipses and the like spelled out, anything else left becomes ``?``.

    >>> ascii_only("0 → 2 … ≤ 3")
    '0 -> 2 ... <= 3'
    """
    if text.isascii():
        return text
    out = []
    for ch in text:
        out.append(ch if ch.isascii() else ASCII_FOR.get(ch, "?"))
    return "".join(out)


class _AsciiWriter:
    """A text stream that writes everything through :func:`ascii_only` to the stream it wraps."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(ascii_only(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def ascii_aware(run):
    """Wrap a command's ``run(args)``: with ``--ascii`` everything it prints (stdout and stderr) is ASCII.

    Commands that draw in ASCII themselves (matrix views) still do; this catches the
    rest (arrows, ellipses, progress lines) on every command that takes ``--ascii``.
    """
    import functools

    @functools.wraps(run)
    def wrapped(args):
        if not getattr(args, "ascii", False):
            return run(args)
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _AsciiWriter(out), _AsciiWriter(err)
        try:
            return run(args)
        finally:
            sys.stdout, sys.stderr = out, err

    return wrapped

"""Naming a mask_mod on the command line: ``file.py:function`` or a factory call ``file.py:make(3, causal=True)``.

- :func:`split_function` -- ``"masks.py:make(window=3)"`` -> ``("masks.py", "make(window=3)")``,
  or None when the text names no Python function (the one rule :func:`theory.inputs.forms.form_of`
  uses for the ``"function"`` form);
- :func:`parse_call` -- ``"make(3, causal=True)"`` -> ``("make", (3,), {"causal": True})``.
  Arguments are read with :func:`ast.literal_eval`, one by one, and must be numbers,
  strings, booleans, None, or tuples/lists of those: the text is parsed, never evaluated,
  so ``make(__import__('os').system('x'))`` is refused without running anything;
- :func:`factory_problem` -- the one-line message for a factory named without its call
  (``'generate_sliding_window' takes (window_size) — it looks like a factory; …``).

Nothing here imports or runs the user's file: :func:`theory.inputs.user_files.resolve_function` does.
Every problem raises :class:`InputError` with one line naming the source.
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Callable

from hasse.theory.errors import InputError

MAX_CALL = 2_000  # characters in a factory call: arguments are a few literals, not data
_CALL = re.compile(r"(?P<path>.*?\.py):\s*(?P<call>[A-Za-z_]\w*\s*\(.*\))\s*\Z", re.S | re.I)
LITERALS = (bool, int, float, str, type(None))


def split_function(source: str) -> tuple[str, str] | None:
    """``(path, function)`` when ``source`` names a Python function, else None.

    With a call, the path ends at the first ``.py:`` that is followed by a name and
    ``(…)`` up to the end (so a ``:`` inside a string argument does not split it);
    without one, at the last ``:`` (``C:/masks.py:causal`` keeps its drive).

    >>> split_function("masks.py:causal")
    ('masks.py', 'causal')
    >>> split_function('masks.py:make(window=3, s="a:b")')
    ('masks.py', 'make(window=3, s="a:b")')
    >>> split_function("causal:n=4") is None, split_function("task.json") is None
    (True, True)
    """
    if m := _CALL.match(source):
        return m.group("path"), m.group("call").strip()
    head, sep, tail = source.rpartition(":")
    if sep and head.lower().endswith(".py"):
        return head, tail
    return None


def parse_call(text: str, source: str) -> tuple[str, tuple, dict]:
    """``(name, args, kwargs)`` of a factory call written with literal arguments only.

    >>> parse_call("make(3, causal=True, sizes=(2, 3), tag='a:b')", "m.py:make")
    ('make', (3,), {'causal': True, 'sizes': (2, 3), 'tag': 'a:b'})
    >>> parse_call("make(__import__('os').system('x'))", "m.py")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.py: argument 1 of make(...) is not a literal: "__import__('os').system('x')" (numbers, strings, True/False/None and tuples/lists of those only)
    """
    if len(text) > MAX_CALL:
        raise InputError(f"the call is {len(text):,} characters long (at most {MAX_CALL:,}: literal arguments only)",
                         source)
    try:
        tree = ast.parse(text.strip(), mode="eval")  # parsing runs nothing
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        raise InputError(f"cannot read the call {_short(text)} ({reason})", source) from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise InputError(f"expected name(arguments), got {_short(text)}", source)
    name = call.func.id
    args = tuple(_literal(node, f"argument {i} of {name}(...)", source) for i, node in enumerate(call.args, 1))
    kwargs = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise InputError(f"{name}(...): {_short('**' + ast.unparse(kw.value))} is not allowed (literal arguments "
                             "only)", source)
        kwargs[kw.arg] = _literal(kw.value, f"argument {kw.arg}= of {name}(...)", source)
    return name, args, kwargs


def _literal(node: ast.AST, what: str, source: str):
    hint = "(numbers, strings, True/False/None and tuples/lists of those only)"
    if isinstance(node, ast.Starred):
        raise InputError(f"{what}: {_short('*' + ast.unparse(node.value))} is not allowed {hint}", source)
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise InputError(f"{what} is not a literal: {_short(ast.unparse(node))} {hint}", source) from None
    if not _allowed(value):
        raise InputError(f"{what} is a {type(value).__name__}: {_short(ast.unparse(node))} {hint}", source)
    return value


def _allowed(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_allowed(v) for v in value)
    return isinstance(value, LITERALS)


def _short(text: str, width: int = 60) -> str:
    """``text`` in double quotes, cut at ``width`` characters with an ellipsis."""
    return '"' + (text if len(text) <= width else text[:width] + "…") + '"'


def factory_problem(fn: Callable, name: str, path: str) -> str | None:
    """The message for ``fn`` named without a call when it cannot be a ``mask_mod(b, h, q_idx, kv_idx)``.

    ``fn`` looks like a factory when its signature cannot take four positional
    arguments; None when it can (or has no signature to read).

    >>> def generate_sliding_window(window_size):
    ...     return lambda b, h, q, kv: q - kv < window_size
    >>> print(factory_problem(generate_sliding_window, "generate_sliding_window", "attn.py"))
    'generate_sliding_window' takes (window_size) — it looks like a factory; call it: attn.py:generate_sliding_window(3)
    >>> factory_problem(lambda b, h, q, kv: q >= kv, "causal", "m.py") is None
    True
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(0, 0, 0, 0)
        return None
    except TypeError:
        pass
    params = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}"
                       for p in signature.parameters.values())
    example = ", ".join(_example(p) for p in signature.parameters.values()
                        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    keyword = ", ".join(f"{p.name}={_example(p)}" for p in signature.parameters.values()
                        if p.default is p.empty and p.kind == p.KEYWORD_ONLY)
    example = ", ".join(x for x in (example, keyword) if x)
    return f"'{name}' takes ({params}) — it looks like a factory; call it: {path}:{name}({example})"


def _example(param: inspect.Parameter) -> str:
    """A literal to show for a required parameter in the hint (by its annotation; 3 when it has none)."""
    note = param.annotation
    note = getattr(note, "__name__", note) if note is not param.empty else "int"
    return {"bool": "True", "str": "'…'", "float": "0.5"}.get(str(note), "3")

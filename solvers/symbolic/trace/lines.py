"""The user's line an error names: ``masks.py:12: `return q // d```, and the values a path was taken at."""

from __future__ import annotations

import linecache
import os
import sys
import traceback
from typing import Sequence

import z3

from hasse.solvers.symbolic.terms import Sym, SymIndex, Tracer
from hasse.solvers.symbolic.terms import free_constants as _constants_in
from hasse.theory.errors import clip

_KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # solvers/symbolic/: the kit's own frames


def _user_frames(frames, files: Sequence[str], codes) -> list:
    """The frames of the traced program (its code objects, else its files, else outside the tracer)."""
    return ([f for f in frames if codes and f[1] in codes]
            or [f for f in frames if any(f[0].filename.endswith(x) for x in files if x)]
            or [f for f in frames if not os.path.abspath(f[0].filename).startswith(_KIT)])


def _where_in(exc: BaseException, files: Sequence[str], codes=None) -> str:
    """``file.py:LINE: `source``` of the innermost frame of the program in ``exc``'s traceback."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append((traceback.FrameSummary(tb.tb_frame.f_code.co_filename, tb.tb_lineno,
                                              tb.tb_frame.f_code.co_name), tb.tb_frame.f_code))
        tb = tb.tb_next
    chosen = _user_frames(frames, files, codes) or frames
    return _line_text(chosen[-1][0]) if chosen else ""


def _line_text(f) -> str:
    text = (linecache.getline(f.filename, f.lineno) or "").strip()
    name = f.filename.rsplit("/", 1)[-1]
    return f"{name}:{f.lineno}: `{text}`" if text else f"{name}:{f.lineno}"


def _running_line(files: Sequence[str], codes) -> str:
    """``file.py:LINE`` of the program's innermost frame running now (for obligations)."""
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append((traceback.FrameSummary(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name),
                       frame.f_code))
        frame = frame.f_back
    frames.reverse()
    chosen = _user_frames(frames, files, codes)
    if not chosen:
        return ""
    f = chosen[-1][0]
    return f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"


def _values_when(tracer: Tracer, hide: set) -> str:
    """`` when w = 3`` (a model of the path condition under the assumptions; '' when it is unconditional)."""
    if not tracer.taken:
        return ""
    solver = z3.Solver()
    solver.set("timeout", 2000)
    solver.add(*tracer.assumptions, tracer.path_condition())
    if solver.check() != z3.sat:
        return ""
    model = solver.model()
    names = sorted({str(c) for c in _constants_in(tracer.path_condition())} - hide)
    values = []
    for name in names:
        v = model.eval(z3.Int(name), model_completion=True)
        values.append(f"{name} = {v}")
    return f" when {', '.join(values)}" if values else ""


def _raises(exc: BaseException, files, codes, tracer: Tracer, positions: set) -> str:
    """``file.py:LINE: `source`: the program raises KeyError: 'x' when w = 3`` (one line)."""
    where_ = _where_in(exc, files, codes)
    if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), (Sym, SymIndex)):
        return f"{where_}: .{exc.name} of a traced value is not modelled".replace("\n", " ")
    if isinstance(exc, SystemExit):
        what = f"calls sys.exit({clip(repr(exc.code), 40)})"
    else:
        text = clip(" ".join(str(exc).split()), 200)
        what = f"raises {type(exc).__name__}" + (f": {text}" if text else "")
    return f"{where_}: the program {what}{_values_when(tracer, positions)}"

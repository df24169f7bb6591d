"""How a source is written: ``file.py:function``, a file, or a spec (:func:`form_of`).

The form is syntax; what a source *is* (a mask, a task, a preset, …) is decided by
:func:`theory.inputs.read.kind_of`, on top of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from hasse.theory.inputs.calls import split_function


def form_of(source: str, folder: str = "") -> str:
    """Which form a MASK, TASK, FAMILY or design argument has: ``"function"``, ``"file"`` or ``"spec"``.

    - ``"function"``: ``file.py:function``, the part before the last ``:`` ends in
      ``.py`` (a mask_mod where a MASK is expected, a task maker for a design), or a
      factory call ``file.py:make(3, s="a:b")`` (split at the first ``.py:`` followed by
      a call: :func:`theory.inputs.calls.split_function`);
    - ``"file"``: an existing file (relative to ``folder``, if given), or a name
      with no ``:`` but a suffix or a ``/`` (a file that is missing);
    - ``"spec"``: anything else, a built-in spec ``name:key=value,…``.

    >>> form_of("masks.py:sliding"), form_of("task.json"), form_of("butterfly:n=4")
    ('function', 'file', 'spec')
    >>> form_of("masks.py:make(3)"), form_of('masks.py:make(window=3, s="a:b")')
    ('function', 'function')
    """
    if split_function(source) is not None:
        return "function"
    if os.path.isfile(os.path.join(folder, source)):
        return "file"
    if ":" not in source and (Path(source).suffix or "/" in source or os.sep in source):
        return "file"
    return "spec"

"""FlexAttention mask_mods as masks: ``file.py:function`` evaluated on the index grid.

- :func:`load_mask_mod` -- import ``function`` from ``file.py`` and evaluate it on
  ``n`` positions (the ``file.py:function`` form of :func:`theory.mask_io.load_mask`);
- :func:`mask_mod_to_mask` -- ``M[q, k] = fn(0, 0, q, k)``, one call on numpy index
  arrays, with an optional fallback (torch, in ``gpu_check.mask_mod``) when that fails;
  a mask_mod whose result changes with ``h`` or ``b`` is refused (:class:`RangeNeeded`):
  its heads and batch must be declared (:mod:`theory.heads` evaluates those ranges);
- :func:`evaluate_mask_mod` -- ``M[q, k] = fn(b, h, q, k)`` at one batch index and head;
- :func:`broadcast_mask` -- a mask_mod's result broadcast to an (n, n) bool mask.

:func:`check_n` and :func:`check_mask_fits` check the size of any mask;
:mod:`theory.mask_io` uses them for its other forms too.
Every problem raises :class:`InputError` with one line naming the source.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
import sys
from typing import Callable

import numpy as np

from hasse.theory.atomic_file import note_read
from hasse.theory.errors import InputError, TooLargeError
from hasse.theory.limits import check_positions
from hasse.theory.mask import NamedMask, as_mask, default_names, square_up
from hasse.theory.inputs.calls import factory_problem, parse_call
from hasse.theory.user_code import in_child as user_code_in_child
from hasse.theory.user_code import raised as user_raised
from hasse.theory.user_code import require_permission
from hasse.theory.user_code import run as run_user_code

MaskModFallback = Callable[[Callable, int], np.ndarray]

# Values of h (and of b) compared with 0 to tell whether a mask_mod reads them.
PROBES = (1, 2, 3)
AXES = {"h": ("heads", "head"), "b": ("batch", "batch index")}


class RangeNeeded(InputError):
    """A mask_mod reads ``h`` or ``b`` but only one value of it was to be evaluated (``param``: ``heads`` or ``batch``)."""

    def __init__(self, axis: str, value: int, source: str | None):
        self.axis = axis
        self.value = value
        param, what = AXES[axis]
        super().__init__(f"mask_mod depends on {axis}; give {{{param}={param[0].upper()}}} ({axis} = 0 and {axis} = "
                         f"{value} give different masks: every {what} must be evaluated)", source, param=param)


_module_ids = itertools.count()


def check_n(n, source: str, name: str = "n") -> int:
    """Return ``n`` as a positive int, or raise InputError naming ``source`` (and ``name``, e.g. ``kv_len``)."""
    param = None if name == "n" else name  # n's messages name it as the API does, on the command line too
    word = f"{{{name}}}" if param else name
    try:
        n = int(n)
    except (TypeError, ValueError):
        raise InputError(f"{word} must be a positive integer, got {n!r}", source, param=param) from None
    if n <= 0:
        raise InputError(f"{word} = {n}: a mask needs at least one position", source, param=param)
    return n


def check_mask_fits(n: int, source: str) -> None:
    """Raise TooLargeError naming ``source`` when an n x n mask and the engine's matrices do not fit."""
    try:
        check_positions(n)
    except TooLargeError as exc:
        raise TooLargeError(str(exc), source) from None


def load_mask_mod(path: str, function: str, source: str, n, fallback, *, permission, kv_len=None,
                  queries: str | None = None) -> NamedMask:
    """Return the mask of ``function`` from the file ``path`` on ``n`` positions.

    ``source`` (``path:function``) names the mask and prefixes error messages.
    With ``kv_len`` the mask_mod is evaluated on the ``n x kv_len`` grid (``n``
    queries, FlexAttention's ``Q_LEN``; ``kv_len`` keys, its ``KV_LEN``) and embedded
    in a square mask by :func:`theory.mask.square_up` with the layout ``queries``.
    ``permission`` is a :class:`theory.user_code.CodePermission` (None: refused, the
    name came from a data file). The file is imported, its factory called and the
    mask_mod evaluated in one bounded run (:func:`theory.user_code.run`).
    """
    require_permission(permission, source)
    if not function:
        raise InputError("needs a function name after ':' (file.py:function)", source)
    if not os.path.isfile(path):
        raise InputError("no such file" if not os.path.exists(path) else "is not a file", path)
    note_read(path)  # a file the command reads: no output may replace it (theory.atomic_file)
    if n is None:
        raise InputError("a mask_mod needs n, the number of positions to evaluate it on", source)
    try:  # before the file runs: a size that cannot fit never executes it
        check_positions(n)
    except TooLargeError as exc:
        raise TooLargeError(str(exc), source) from None
    if kv_len is not None:
        kv_len = check_n(kv_len, source, "kv_len")
        check_mask_fits(n + kv_len, source)
    def evaluate() -> NamedMask:  # in the bounded child: import, factory call, every evaluation
        fn = resolve_function(path, function, source, permission)
        matrix = mask_mod_to_mask(fn, n, source=source, fallback=fallback, kv_len=kv_len)
        if kv_len is None and queries is None:
            return NamedMask(matrix, default_names(n), source)
        square, key_only, kind = square_up(matrix, queries, source)
        return NamedMask(square, default_names(square.shape[0]), source, key_only, kind)

    return run_user_code(evaluate, source=source, what="mask_mod", path=path)


def package_of(path: str) -> tuple[str, str] | None:
    """``(root folder, dotted name)`` of a file inside a package (its folder holds ``__init__.py``), else None.

    The folders holding ``__init__.py`` are walked up; the first one without it is the
    root that goes on ``sys.path``, as when the package is imported by name.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "gym" / "masks").mkdir(parents=True)
    >>> for f in ("gym/__init__.py", "gym/masks/__init__.py", "gym/masks/window.py"):
    ...     _ = (root / f).write_text("")
    >>> found = package_of(str(root / "gym" / "masks" / "window.py"))
    >>> found[1], found[0] == str(root)
    ('gym.masks.window', True)
    >>> package_of(str(root / "gym.py")) is None
    True
    """
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    inside = len(parts) > (0 if stem == "__init__" else 1)
    if not inside or not all(p.isidentifier() for p in parts):
        return None
    return folder, ".".join(parts)


def import_function(path: str, function: str, source: str, permission) -> Callable:
    """Import ``path`` and return its attribute ``function`` (errors: InputError): the one place a user's file is imported.

    ``permission`` must be a :class:`theory.user_code.CodePermission`: the command line
    (a code name typed as an argument) or ``--trust-code`` grants one; every reader of a
    data file passes None, refused here before the file runs. A file inside a package
    (folders holding ``__init__.py``) is imported by its dotted name with the package's
    root on ``sys.path`` (:func:`package_of`), so its relative and absolute package
    imports work; any other file as a fresh module, its folder on ``sys.path``.
    """
    require_permission(permission, source)
    package = package_of(path)
    folder = package[0] if package else os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)  # so that the file can import its neighbours, as a script (or its package) would
    try:
        module = _import_in_package(path, *package) if package else _import_alone(path)
    finally:
        if sys.path and sys.path[0] == folder:
            del sys.path[0]
    fn = getattr(module, function, None)
    if fn is None:
        defined = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))
        listing = ", ".join(defined) if defined else "none"
        raise InputError(f"no function '{function}' in {path} (callables defined there: {listing})", source)
    if not callable(fn):
        raise InputError(f"'{function}' in {path} is not a function", source)
    return fn


def _import_alone(path: str):
    """``path`` executed as a fresh module of its own (a file outside any package)."""
    name = f"_hasse_mask_mod_{next(_module_ids)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError("cannot be imported as a Python module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: one line, never the end of the command
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt) and not user_code_in_child():
            raise
        raise InputError(user_raised("importing it", exc, path), path) from None
    return module


def _import_in_package(path: str, root: str, dotted: str):
    """The module ``dotted`` imported by name (its package's root first on ``sys.path``); it must be ``path``.

    The package's modules are taken out of ``sys.modules`` again afterwards (the function keeps
    what it uses): another package of the same name, in another folder, imports afresh later.
    """
    before = set(sys.modules)
    try:
        module = importlib.import_module(dotted)
    except BaseException as exc:  # noqa: BLE001 - as in _import_alone
        if isinstance(exc, KeyboardInterrupt) and not user_code_in_child():
            raise
        raise InputError(user_raised(f"importing it as {dotted}", exc, path), path) from None
    finally:
        top = dotted.split(".")[0]
        for name in set(sys.modules) - before:
            if name == top or name.startswith(top + "."):
                del sys.modules[name]
    found = getattr(module, "__file__", None)
    if not found or os.path.realpath(found) != os.path.realpath(path):
        raise InputError(f"importing it as {dotted} (its package's name) finds {found or 'another module'}, "
                         f"not this file: another package named {dotted.split('.')[0]} comes first", path)
    return module


def resolve_function(path: str, function: str, source: str, permission) -> Callable:
    """The mask_mod that ``function`` names in ``path``: a function, or what a factory call returns.

    ``function`` is a name (``sliding``) or a call with literal arguments
    (``generate_sliding_window(3)``, :func:`theory.mask_mod_call.parse_call`); the
    factory is called once and must return a ``mask_mod(b, h, q_idx, kv_idx)``. A
    name whose function cannot take those four arguments is refused as a factory
    named without its call (:func:`theory.mask_mod_call.factory_problem`).
    ``permission``: as :func:`import_function`. Call it inside a bounded run
    (:func:`theory.user_code.run`): the file and the factory are the user's code.
    """
    if "(" not in function:
        fn = import_function(path, function, source, permission)
        if problem := factory_problem(fn, function, path):
            raise InputError(problem, source)
        return fn
    name, args, kwargs = parse_call(function, source)  # before the file runs: bad arguments never execute it
    factory = import_function(path, name, source, permission)
    try:
        fn = factory(*args, **kwargs)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(user_raised(function, exc, path), source) from None
    if not callable(fn):
        shown = repr(fn)
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        raise InputError(f"{function} returned {type(fn).__name__} ({shown}), not a mask_mod(b, h, q_idx, kv_idx)",
                         source)
    if factory_problem(fn, _name(fn), path):
        raise InputError(f"{function} returned '{_name(fn)}', which cannot take the four arguments "
                         "(b, h, q_idx, kv_idx) of a mask_mod", source)
    return fn


def mask_mod_to_mask(
    fn: Callable, n: int, *, source: str = "mask_mod", fallback: MaskModFallback | None = None,
    kv_len: int | None = None,
) -> np.ndarray:
    """Return ``M[q, k] = fn(0, 0, q, k)`` for a FlexAttention-style ``mask_mod`` on ``n`` positions.

    The mask must not depend on the head or batch index: it is also evaluated at
    ``h`` and ``b`` in :data:`PROBES`, and any difference raises
    :class:`RangeNeeded` (declare the ranges and use :mod:`theory.heads`).

    ``fn(b, h, q_idx, kv_idx)`` is called with numpy arrays: ``b`` and ``h``
    int64 scalars, ``q_idx`` of shape (n, 1) and ``kv_idx`` of shape (1, n). Its
    result must broadcast to (n, n) and hold booleans or 0/1; a result that does
    not depend on the indices broadcasts too (``return True`` is the all-true
    mask). Only mask_mods are accepted, not factories that return one: pass the
    function that a factory returns. When the numpy call raises and ``fallback``
    is given, ``fallback(fn, n)`` is used instead (torch, in gpu_check).

    With ``kv_len`` the grid is ``n x kv_len`` (``q_idx`` in ``0 … n-1``, ``kv_idx`` in
    ``0 … kv_len-1``, FlexAttention's ``Q_LEN x KV_LEN``; ``q_idx`` starts at 0 even when
    decoding: a mask_mod offsets it itself) and the result is ``(n, kv_len)``.

    >>> mask_mod_to_mask(lambda b, h, q, kv: q >= kv, 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> mask_mod_to_mask(lambda b, h, q, kv: True, 2).tolist()
    [[True, True], [True, True]]
    >>> try:
    ...     mask_mod_to_mask(lambda b, h, q, kv: (q >= kv) | (h == 1), 2, source="m")
    ... except RangeNeeded as exc:
    ...     print(exc)
    m: mask_mod depends on h; give heads=H (h = 0 and h = 1 give different masks: every head must be evaluated)
    """
    first = evaluate_mask_mod(fn, n, source=source, fallback=fallback, kv_len=kv_len)
    require_independent(fn, n, first, ("h", "b"), source=source, fallback=fallback, kv_len=kv_len)
    check_size_free(fn, n, first, source=source, fallback=fallback, kv_len=kv_len)
    return first


def require_independent(fn, n: int, first: np.ndarray, axes, *, source: str = "mask_mod",
                        fallback: MaskModFallback | None = None, b: int = 0, h: int = 0,
                        kv_len: int | None = None) -> None:
    """Raise :class:`RangeNeeded` when ``fn`` at ``axis`` = a value of :data:`PROBES` differs from ``first``.

    ``first`` is the mask at ``(b, h)``; each axis in ``axes`` (``"h"``, ``"b"``) is
    varied alone, the other kept.
    """
    for axis in axes:
        for value in PROBES:
            at = {"b": b, "h": h, axis: value}
            if not np.array_equal(evaluate_mask_mod(fn, n, source=source, fallback=fallback, kv_len=kv_len, **at),
                                  first):
                raise RangeNeeded(axis, value, source)


SIZE_PROBE_ENTRIES = 1 << 24  # the first larger grid evaluated to look for a baked-in size: at most 16M entries
SEARCH_ENTRIES = 1 << 20  # the doubling beyond it goes on while a grid has at most 1M entries


def probe_sizes(n: int) -> list[int]:
    """The sizes at which :func:`check_size_free` evaluates a mask_mod given ``n``.

    First ``n2 = max(n + 8, 2n)``, capped so that ``n2 * n2 <= 16M``; then doubling while
    a size ``m`` has ``m * m <= 1M`` (a closure over up to 1,023 positions is found from
    any smaller ``n``, in a few milliseconds). None when ``n`` is already at the cap.

    >>> probe_sizes(8), probe_sizes(1000), probe_sizes(3000), probe_sizes(4096)
    ([16, 32, 64, 128, 256, 512, 1024], [2000], [4096], [])
    """
    cap, search = math.isqrt(SIZE_PROBE_ENTRIES), math.isqrt(SEARCH_ENTRIES)
    if n >= cap:
        return []
    sizes = [min(max(n + 8, 2 * n), cap)]
    while 2 * sizes[-1] <= search:
        sizes.append(2 * sizes[-1])
    return sizes


def check_size_free(fn: Callable, n: int, first: np.ndarray, *, source: str = "mask_mod",
                    fallback: MaskModFallback | None = None, kv_len: int | None = None) -> None:
    """Raise InputError when the mask_mod's answer on ``n`` positions depends on ``n`` (a baked-in size).

    A mask_mod sees indices, never the size, so its ``n x n`` mask must be the top-left
    corner of its mask at any larger size. It is evaluated (``b = h = 0``) at the sizes of
    :func:`probe_sizes` and compared; the first difference, or a failure at a larger size
    (an ``IndexError`` from a closure over a tensor of length ``N``), is an error naming
    the size: a failure is narrowed by bisection to the largest size ``W`` that works, and
    ``W = n`` is accepted (the size given is the one baked in). On a ``Q x K`` grid
    (``kv_len``) the keys grow alone, then the queries alone, each checked the same way.

    >>> ids = np.arange(6) // 3  # two documents of 3, baked into the closure
    >>> same_doc = lambda b, h, q, kv: (ids[q] == ids[kv]) & (kv <= q)
    >>> check_size_free(same_doc, 6, evaluate_mask_mod(same_doc, 6))  # n = 6: the size baked in
    >>> check_size_free(same_doc, 4, evaluate_mask_mod(same_doc, 4), source="m.py:same_doc")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.py:same_doc: the mask_mod works at n = 4 but fails at n = 12 (IndexError: index 6 is out of bounds for axis 0 with size 6); it works up to n = 6: its size seems baked in (a closure over a tensor of length 6?); give --n 6
    >>> last_two = lambda b, h, q, kv: kv >= q.shape[0] - 2  # reads the grid's size
    >>> check_size_free(last_two, 4, evaluate_mask_mod(last_two, 4), source="m.py:last_two")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: m.py:last_two: the mask_mod's answer at n = 4 differs from the top-left corner of its answer at n = 12 at [0, 2]: its size seems baked in (a closure over a tensor of length N?); give --n equal to that size
    """
    queries, keys = first.shape
    # the grids to grow: both sides together for a square mask; each side alone for a Q x K one
    axes = [(1, 1)] if kv_len is None else [(0, 1), (1, 0)]
    for grow_q, grow_k in axes:
        _grow(fn, queries, keys, grow_q, grow_k, first, source, fallback, square=kv_len is None)


def _grow(fn, queries: int, keys: int, grow_q: int, grow_k: int, first, source, fallback, square: bool) -> None:
    """Probe ``fn`` on grids ``d`` larger along the sides chosen (see :func:`check_size_free`)."""
    failure = ""

    def at(d: int) -> np.ndarray | None:
        """The mask ``d`` larger along the growing sides, or None when the mask_mod fails there."""
        nonlocal failure
        try:
            return evaluate_mask_mod(fn, queries + grow_q * d, source=source, fallback=fallback,
                                     kv_len=None if square else keys + grow_k * d)
        except TooLargeError:
            raise
        except InputError as exc:
            failure = str(exc).removeprefix(f"{source}: ")
            return None

    def shape(d: int) -> str:
        return f"n = {queries + d}" if square else f"{queries + grow_q * d} x {keys + grow_k * d}"

    base, ok = max(queries * grow_q, keys * grow_k), 0
    for m in probe_sizes(base):
        bigger = at(m - base)
        if bigger is None:
            lo = _bisect(at, ok, m - base)
            if lo == 0:  # the size given is the one baked in
                return
            if square:
                raise InputError(f"the mask_mod works at n = {queries} but fails at n = {m} ({_reason(failure)}); it "
                                 f"works up to n = {queries + lo}: its size seems baked in (a closure over a tensor of "
                                 f"length {queries + lo}?); give --n {queries + lo}", source)
            option = "--n" if grow_q else "--kv-len"
            raise InputError(f"the mask_mod works at {shape(0)} but fails at {shape(m - base)} ({_reason(failure)}); "
                             f"it works up to {shape(lo)}: its size seems baked in; give {option} "
                             f"{(queries if grow_q else keys) + lo}", source)
        corner = bigger[:queries, :keys]
        if not np.array_equal(corner, first):
            q, k = (int(i) for i in np.argwhere(corner != first)[0])
            raise InputError(f"the mask_mod's answer at {shape(0)} differs from the top-left corner of its answer at "
                             f"{shape(m - base)} at [{q}, {k}]: its size seems baked in (a closure over a tensor of "
                             "length N?); give --n equal to that size", source)
        ok = m - base


def _bisect(at, ok: int, bad: int) -> int:
    """The largest ``d`` in ``[ok, bad)`` at which ``at(d)`` works, given that it works at ``ok`` and fails at ``bad``."""
    lo, hi = ok, bad
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid) is None:
            hi = mid
        else:
            lo = mid
    return lo


def _reason(text: str) -> str:
    """``"<name> raised IndexError: … (on numpy index arrays)"`` -> ``"IndexError: …"``."""
    _, sep, rest = text.partition(" raised ")
    rest = rest if sep else text
    return rest.removesuffix(" (on numpy index arrays)").removesuffix(" (on torch index tensors)")


def evaluate_mask_mod(fn: Callable, n: int, *, source: str = "mask_mod", fallback: MaskModFallback | None = None,
                      b: int = 0, h: int = 0, kv_len: int | None = None) -> np.ndarray:
    """``M[q, k] = fn(b, h, q, k)`` at one batch index ``b`` and head ``h`` (see :func:`mask_mod_to_mask`).

    The grid is ``n x n``, or ``n x kv_len`` when ``kv_len`` is given.

    >>> evaluate_mask_mod(lambda b, h, q, kv: (q >= kv) | (h == 1), 2, h=1).tolist()
    [[True, True], [True, True]]
    >>> evaluate_mask_mod(lambda b, h, q, kv: kv <= q + 2, 1, kv_len=3).astype(int).tolist()  # decode after 2
    [[1, 1, 1]]
    """
    n = check_n(n, source)
    keys = n if kv_len is None else check_n(kv_len, source, "kv_len")
    check_mask_fits(max(n, keys), source)
    if b or h:
        fn = _at(fn, b, h)
    zero = np.zeros((), dtype=np.int64)
    q_idx = np.arange(n, dtype=np.int64)[:, None]  # (n, 1)
    kv_idx = np.arange(keys, dtype=np.int64)[None, :]  # (1, K)
    try:
        with np.errstate(all="ignore", divide="raise"):  # an integer // or % by 0: torch raises, numpy gave 0
            result = fn(zero, zero, q_idx, kv_idx)
    except MemoryError as exc:  # beyond the address space user code may take (theory.user_code): torch would not fare better
        raise InputError(user_raised(f"mask_mod {_name(fn)}", exc), source) from None
    except Exception as exc:
        if fallback is None:
            raise InputError(f"{user_raised(f'mask_mod {_name(fn)}', exc)} (on numpy index arrays)", source) from None
        try:
            result = fallback(fn, n) if kv_len is None else fallback(fn, n, keys)
        except InputError as err:
            if err.source is None:
                raise InputError(str(err), source) from None
            raise
    return broadcast_mask(result, n, source=source, kv_len=kv_len)


def broadcast_mask(result, n: int, source: str | None = "mask_mod", kv_len: int | None = None) -> np.ndarray:
    """Return ``result`` broadcast to an (n, n) bool mask, or raise InputError on a wrong shape.

    With ``kv_len`` the shape is ``(n, kv_len)``.

    ``source`` prefixes error messages; None leaves them bare (for a caller to prefix).

    >>> broadcast_mask(np.array([[True], [False]]), 2).tolist()
    [[True, True], [False, False]]
    >>> broadcast_mask(np.ones((2, 2, 2)), 2)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: mask_mod: the mask_mod returned shape (2, 2, 2), which does not broadcast to (2, 2)
    """
    try:
        arr = np.asarray(result)
    except Exception as exc:
        raise InputError(f"the mask_mod returned {type(result).__name__}, not an array ({exc})", source) from None
    if arr.dtype == object:
        raise InputError(f"the mask_mod returned {type(result).__name__}, not booleans or 0/1", source)
    shape = (n, n if kv_len is None else kv_len)
    wrong_shape = f"the mask_mod returned shape {arr.shape}, which does not broadcast to {shape}"
    if arr.ndim > 2:
        raise InputError(wrong_shape, source)
    try:
        full = np.broadcast_to(arr, shape)
    except ValueError:
        raise InputError(wrong_shape, source) from None
    return as_mask(np.array(full), source=source, square=kv_len is None)


def _name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _at(fn: Callable, b: int, h: int) -> Callable:
    """``fn`` with its batch and head indices fixed at ``b`` and ``h``.

    The indices it receives (numpy or torch zeros) are shifted, ``zero + b``, so
    they keep their type for numpy, torch and vmap alike.
    """

    def at(b_idx, h_idx, q_idx, kv_idx):
        return fn(b_idx + b, h_idx + h, q_idx, kv_idx)

    at.__name__ = _name(fn)
    return at

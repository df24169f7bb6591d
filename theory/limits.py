"""The size limits, in one place (design.md §10): every size a user gives passes one check here.

Each kind of size has one named limit and one helper, and every reader calls the helper
*before* it allocates what the size asks for, whatever form the size came in:

- **positions** (:func:`check_positions`): the dense ``n x n`` matrices of one mask and the
  engine's matrices beside it take :data:`BYTES_PER_ENTRY` bytes per entry (one more byte
  per mask for the per-head and per-batch-row masks); at most :data:`MEMORY_BYTES` in all,
  so at most :data:`MAX_POSITIONS` (46,340) positions. Specs, text and JSON rows,
  ``.npy`` and ``.pt`` files (stride-0 tensors included: the shape counts, not the bytes
  stored), arrays, BlockMasks, mask_mods, stacks and presets all pass through it;
- **layers of a stack** (:func:`check_stack_layers`): a stack is expanded layer by layer,
  so counts times repeats may reach at most :data:`MAX_STACK_LAYERS`; a deeper model is
  asked as ``--layers L`` of its pattern, which is computed, not expanded (the repeated
  pattern's flow converges);
- **counts** (:func:`require_count`): a positive integer up to a named limit (work units,
  the heads of a symbolic union, the hops of a Z3 walk, the largest size a counterexample
  search builds: every size up to ``N`` holds about ``N^3 / 3`` entries in all, as a family);
- **integers written as text** (:func:`parse_int`): specs, ``--param-range``, stack counts,
  document lengths and every integer option: within 64 bits, as JSON integers
  (:mod:`theory.inputs.json_file`); longer text is refused before it is converted (Python's
  int-str limit, 4,300 digits, never shows).

Counts that are computed, not allocated, are not limited here: a depth of ``10^12`` is
answered from the period or the convergence depth (:mod:`theory.reach`).
"""

from __future__ import annotations

import math
import numbers
import re

from hasse.theory.errors import InputError, TooLargeError, clip

MEMORY_BYTES = 8 << 30  # the dense matrices of one command
BYTES_PER_ENTRY = 4  # a bool mask and the engine's matrices beside it (closure, int32/float32 work arrays)
MAX_POSITIONS = math.isqrt(MEMORY_BYTES // BYTES_PER_ENTRY)  # 46,340
MAX_STACK_LAYERS = 10_000  # layers a stack expands to (published models have at most a few hundred)
MAX_WALK_LAYERS = 256  # hops of a symbolic walk (prove-mask --layers, --search-layers): one Z3 copy per hop
MAX_SYMBOLIC_HEADS = 1024  # heads of a symbolic union (prove-mask --heads): one Z3 copy per head
# the domain of every symbolic statement (prove-mask, equiv): 1 <= n <= 2^31, q, kv, b, h in 0 … 2^31 - 1, every
# symbolic parameter within -2^31 … 2^31; int64 arithmetic on such values is decided under these bounds
MAX_SYMBOLIC_VALUE = 2**31
MAX_UNITS = 100_000  # work units of one distributed run (prove --units)
MAX_SEARCH_N = 2954  # a search over n = 1 … N builds about N^3 / 3 mask entries in all: at most MEMORY_BYTES
INT_BITS = 64  # integers given as text lie strictly between -2^63 and 2^63 (as JSON's)
_MAX_INT = 1 << (INT_BITS - 1)
_INT_TEXT = re.compile(r"\s*[+-]?\d+\s*")


def number_text(value: int) -> str:
    """An integer for a message: its digits when short, else its size (no conversion of a huge number).

    >>> number_text(12345), number_text(10 ** 5000)
    ('12345', 'about 10^5000')
    """
    value = int(value)
    if value.bit_length() <= 100:
        return str(value)
    sign = "-" if value < 0 else ""
    return f"{sign}about 10^{int(abs(value).bit_length() * math.log10(2))}"


def _gigabytes(count: int) -> str:
    return f"{count / 1e9:.1f} GB" if count < 10 ** 30 else f"{number_text(count // 10 ** 9)} GB"


def check_positions(n, source: str | None = None, *, masks: int = 1, what: str = "mask") -> int:
    """Return ``n`` when ``n x n`` matrices fit (``masks`` of them per head and batch row), else TooLargeError.

    The one size limit on positions: ``n * n * (BYTES_PER_ENTRY + masks - 1)`` bytes at
    most :data:`MEMORY_BYTES`, in integer arithmetic (no overflow for a huge ``n``).

    >>> check_positions(MAX_POSITIONS)
    46340
    >>> check_positions(50_000, "m.pt")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.TooLargeError: m.pt: mask of size n = 50000 needs about 10.0 GB (n x n x 4 bytes); the limit is 8.6 GB
    >>> check_positions(2 ** 31, what="masks of every head and batch row", masks=8)
    Traceback (most recent call last):
    ...
    hasse.theory.errors.TooLargeError: masks of every head and batch row of size n = 2147483648 needs about 50728546202.7 GB (n x n x 11 bytes); the limit is 8.6 GB
    """
    n = int(n)
    per_entry = BYTES_PER_ENTRY + max(int(masks), 1) - 1
    need = n * n * per_entry
    if need > MEMORY_BYTES:
        raise TooLargeError(f"{what} of size n = {number_text(n)} needs about {_gigabytes(need)} "
                            f"(n x n x {per_entry} bytes); the limit is {MEMORY_BYTES / 1e9:.1f} GB", source)
    return n


def too_large_why() -> str:
    """The limit in words, for a message that cannot give an exact size.

    >>> too_large_why()
    'n x n x 4 bytes within 8.6 GB'
    """
    return f"n x n x {BYTES_PER_ENTRY} bytes within {MEMORY_BYTES / 1e9:.1f} GB"


def require_count(name: str, value, limit: int, why: str, source: str | None = None, *, low: int = 1) -> int:
    """Return ``value`` as an int in ``low … limit``, else InputError naming ``name``, the limit and ``why``.

    >>> require_count("units", 8, MAX_UNITS, "one Dask task each")
    8
    >>> require_count("units", 10 ** 12, MAX_UNITS, "one Dask task each")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: units = 1000000000000 is more than 100,000 (one Dask task each)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be an integer, got {value!r}", source)
    value = int(value)
    if value < low:
        wording = "a positive integer" if low == 1 else f">= {low}"
        raise InputError(f"{name} must be {wording}, got {number_text(value)}", source)
    if value > limit:
        raise InputError(f"{name} = {number_text(value)} is more than {limit:,} ({why})", source)
    return value


def check_stack_layers(layers: int, source: str | None = None) -> int:
    """The number of layers a stack expands to (counts times repeats), at most :data:`MAX_STACK_LAYERS`.

    >>> check_stack_layers(34)
    34
    >>> check_stack_layers(10 ** 12, "causal x1000000000000")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: causal x1000000000000: the stack would have 1000000000000 layers, more than 10,000 (each layer is built; for a deeper model give its pattern and --layers L: R(L) of the repeated pattern is computed, not built)
    """
    layers = int(layers)
    if layers < 1:
        raise InputError(f"a stack needs at least one layer, got {number_text(layers)}", source)
    if layers > MAX_STACK_LAYERS:
        raise InputError(f"the stack would have {number_text(layers)} layers, more than {MAX_STACK_LAYERS:,} (each "
                         "layer is built; for a deeper model give its pattern and --layers L: R(L) of the repeated "
                         "pattern is computed, not built)", source)
    return layers


def parse_int(text: str, name: str, source: str | None = None) -> int:
    """The integer written in ``text``, within 64 bits; InputError naming ``name`` otherwise (one line).

    Text of more than 19 digits is refused before it is converted, so Python's int-str
    limit never shows.

    >>> parse_int(" 12 ", "n"), parse_int("-3", "lo")
    (12, -3)
    >>> parse_int("9" * 5000, "count")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: count: an integer of 5,000 digits is beyond 64 bits (at most 9223372036854775807)
    >>> parse_int("abc", "w")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: w must be an integer, got 'abc'
    """
    if isinstance(text, numbers.Integral) and not isinstance(text, bool):  # an int already (argv built in Python)
        return check_int_bits(int(text), name, source)
    if not isinstance(text, str) or not _INT_TEXT.fullmatch(text):
        raise InputError(f"{name} must be an integer, got {_quoted(text)}", source)
    digits = text.strip().lstrip("+-").lstrip("0")
    if len(digits) > 19:
        raise InputError(f"{name}: an integer of {len(digits):,} digits is beyond {INT_BITS} bits "
                         f"(at most {_MAX_INT - 1})", source)
    value = int(text)
    return check_int_bits(value, name, source)


def check_int_bits(value: int, name: str, source: str | None = None) -> int:
    """``value`` when it lies strictly between ``-2^63`` and ``2^63``, else InputError (as JSON integers).

    >>> check_int_bits(2 ** 63 - 1, "n")
    9223372036854775807
    >>> check_int_bits(2 ** 63, "n")
    Traceback (most recent call last):
    ...
    hasse.theory.errors.InputError: n = 9223372036854775808 is beyond 64 bits (at most 9223372036854775807)
    """
    if not -_MAX_INT < value < _MAX_INT:
        raise InputError(f"{name} = {number_text(value)} is beyond {INT_BITS} bits (at most {_MAX_INT - 1})", source)
    return value


def _quoted(text) -> str:
    return repr(clip(text, 40)) if isinstance(text, str) else repr(type(text).__name__)

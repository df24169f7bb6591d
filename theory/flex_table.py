"""The FlexAttention file of a merged task at one n (`hasse derive --export flex`, issue 25): a table.

A family given only by its tasks (a JSON file, a Python function) has no formula for other n, so its
export is the merged mask itself: ``ROWS`` (one string of 0/1 per query position), read into a bool
tensor by ``make_mask_mod(n)``, which refuses any other n. Same two functions as the files of
:mod:`theory.flex` (``positions``, ``make_mask_mod``); checked by running it at its n, every pair.

>>> import numpy as np
>>> src = table_source(np.array([[1, 0], [1, 1]], dtype=bool), tokens=3, label="ar:n=3")
>>> scope = {}
>>> exec(src, scope)
>>> scope["positions"](3), scope["ROWS"]
(2, ('10', '11'))
"""

from __future__ import annotations

import numpy as np

_TEMPLATE = '''"""FlexAttention mask_mod of the merged task of {label} at n = {tokens}: {size} positions, a table.

Valid at n = {tokens} only (the family was given by its tasks, not by formulas).
"""

N = {tokens}  # tokens of the sample
ROWS = (  # ROWS[q][k] == "1": query position q attends key position k
{rows}
)


def positions(n):
    """Q_LEN = KV_LEN for create_block_mask."""
    if n != N:
        raise ValueError(f"this mask was derived at n = {{N}}, not n = {{n}}")
    return len(ROWS)


def make_mask_mod(n):
    """mask_mod(b, h, q_idx, kv_idx) of the merged task (a lookup in the table)."""
    import torch

    positions(n)
    allowed = torch.tensor([[c == "1" for c in row] for row in ROWS], dtype=torch.bool)

    def mask_mod(b, h, q_idx, kv_idx):
        return allowed[q_idx, kv_idx]

    return mask_mod
'''


def table_source(mask: np.ndarray, *, tokens: int, label: str) -> str:
    """The text of the file: ``positions(n)`` and ``make_mask_mod(n)`` over the rows of ``mask``."""
    mask = np.asarray(mask, dtype=bool)
    rows = "\n".join(f'    "{"".join("1" if v else "0" for v in row)}",' for row in mask)
    return _TEMPLATE.format(label=label, tokens=tokens, size=mask.shape[0], rows=rows)

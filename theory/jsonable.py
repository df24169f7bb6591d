"""Plain JSON values from the kit's objects: numpy arrays and scalars, tuples, sets (every JSON the kit writes).

>>> import numpy as np
>>> to_jsonable({"rows": np.eye(2, dtype=bool), 1: (np.int64(3), {4}, np.float32(0.5))})
{'rows': [[1, 0], [0, 1]], '1': [3, [4], 0.5]}
"""

from __future__ import annotations

import numpy as np


def to_jsonable(value):
    """Turn numpy arrays (bool as 0/1), numpy scalars, tuples and sets into plain JSON values; keys become text."""
    if isinstance(value, np.ndarray):
        return value.astype(int).tolist() if value.dtype == bool else value.tolist()
    if isinstance(value, np.generic):  # np.int64, np.bool_, np.float32, …
        return value.item()
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    return value

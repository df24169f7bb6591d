"""Small helpers shared by the commands: JSON printing and warnings."""

from __future__ import annotations

import json
import sys

import numpy as np


def to_jsonable(value):
    """Turn numpy arrays, tuples and numpy scalars into plain JSON values."""
    if isinstance(value, np.ndarray):
        return value.astype(int).tolist() if value.dtype == bool else value.tolist()
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def print_json(obj) -> None:
    """Print one JSON object on stdout (compact rows of 0/1 stay readable)."""
    json.dump(to_jsonable(obj), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


def warn(message: str) -> None:
    print(f"hasse: warning: {message}", file=sys.stderr)

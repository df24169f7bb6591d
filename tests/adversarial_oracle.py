"""The truth about a mask_mod by brute force, independent of the kit: run it as FlexAttention does, then check.

Evaluation (``evaluate``, needs torch; run in a separate process by ``Oracle`` so that the test process never
starts torch's thread pool before it forks): the program is called through torch's own
``torch.nn.attention.flex_attention.create_mask`` (``b, h, q, kv`` int64 ``torch.arange``; ``torch.vmap`` over
kv, q, h, b) for ``B`` batch rows and ``H`` heads, and also once on broadcast index tensors (the call
``mask_mod(b[:, None, None, None], h[None, :, None, None], q[None, None, :, None], kv[None, None, None, :])``).
What raises is recorded with the smallest n at which it raises. A result that is not a bool tensor raises
too under vmap (create_block_mask asserts "mask.dtype must be torch.bool"); the broadcast call (the numpy
path of ``hasse analyze``) takes 0/1 values of any dtype.

Since vmap evaluates every pair on its own, the mask at n is the top-left n x n corner of the mask at N
and a raise at n stays at every larger n; so one call at N and a bisection for the first n that raises
give every n <= N. A program whose grid as a whole can change (its own try/except catches a raise
of the whole batch) is evaluated at every n on its own (``per_n``).

Claims (numpy only, the definitions of docs/design.md written out again here):
- dense at n: M_n or I is transitive;
- leak-free for causal_lm at n (every depth): no position p < n - 1 reaches position p + 1 (the holder of the
  token p predicts) by a walk of one or more attention edges among 0..n-1 (q attends k: q depends on k);
- equivalent at n: A_n == B_n.
Each ``first_*`` returns the smallest n <= N at which the claim fails, or None.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


# ---- loading a program ------------------------------------------------------------------------------------

def split_spec(spec: str) -> tuple[str, tuple]:
    """``"name"`` or ``"factory(1, 2)"`` -> (name, literal arguments or None)."""
    if "(" not in spec:
        return spec, None
    name, rest = spec.split("(", 1)
    args = ast.literal_eval("(" + rest[:-1] + ",)") if rest[:-1].strip() else ()
    return name, args


_MODULES: dict[str, object] = {}


def load(path: str, spec: str):
    """The mask_mod ``spec`` of the file ``path`` (imported once per file)."""
    if path not in _MODULES:
        name = "adversarial_" + Path(path).stem
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        _MODULES[path] = module
    name, args = split_spec(spec)
    fn = getattr(_MODULES[path], name)
    return fn(*args) if args is not None else fn


# ---- evaluation with torch ------------------------------------------------------------------------------

def _error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


def _vmap_grid(fn, B: int, H: int, n: int):
    import torch
    from torch.nn.attention.flex_attention import create_mask
    out = create_mask(fn, B, H, n, n, device="cpu")
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"create_mask gave {type(out).__name__}")
    if out.dtype != torch.bool:  # create_block_mask asserts it: "mask.dtype must be torch.bool"
        raise TypeError(f"mask.dtype must be torch.bool, got {out.dtype}")
    return (out != 0).numpy().astype(bool).reshape(B, H, n, n)


def _broadcast_grid(fn, B: int, H: int, n: int):
    import torch
    b = torch.arange(B)[:, None, None, None]
    h = torch.arange(H)[None, :, None, None]
    ar = torch.arange(n)
    out = fn(b, h, ar[None, None, :, None], ar[None, None, None, :])
    out = torch.as_tensor(out)
    if out.dtype != torch.bool and not ((out == 0) | (out == 1)).all():  # the numpy path takes 0/1 values
        raise TypeError(f"mask values must be 0/1, got {out.dtype}")
    return (torch.broadcast_to(out, (B, H, n, n)) != 0).numpy().astype(bool).copy()


def _first_raise(grid, fn, B, H, N):
    """(mask of the largest n <= N that runs (or None), the smallest n that raises or None, the error)."""
    try:
        return grid(fn, B, H, N), None, None
    except Exception as exc:  # noqa: BLE001 -- what the program raises is the point
        error = _error(exc)
    lo, hi = 0, N  # runs at lo (0: nothing), raises at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            grid(fn, B, H, mid)
            lo = mid
        except Exception as exc:  # noqa: BLE001
            hi, error = mid, _error(exc)
    mask = grid(fn, B, H, lo) if lo else None
    return mask, hi, error


def evaluate(path: str, spec: str, N: int, B: int = 1, H: int = 1, per_n: bool = False) -> dict:
    """Both evaluations of one program at n = 1..N: masks (B, H, n, n) and the first raise of each."""
    import torch
    torch.set_num_threads(1)
    try:
        fn = load(path, spec)
    except Exception as exc:  # noqa: BLE001 -- a factory that raises: the program cannot run at any n
        return {"vmap": {"masks": {}, "raise": 1, "error": _error(exc)},
                "broadcast": {"masks": {}, "raise": 1, "error": _error(exc)}}
    out = {}
    for kind, grid in (("vmap", _vmap_grid), ("broadcast", _broadcast_grid)):
        if per_n:
            masks, first, error = {}, None, None
            for n in range(1, N + 1):
                try:
                    masks[n] = grid(fn, B, H, n)
                except Exception as exc:  # noqa: BLE001
                    first, error = (first or n), (error or _error(exc))
                    masks[n] = None
            out[kind] = {"masks": masks, "raise": first, "error": error, "per_n": True}
        else:
            mask, first, error = _first_raise(grid, fn, B, H, N)
            out[kind] = {"masks": {} if mask is None else {mask.shape[-1]: mask}, "raise": first, "error": error}
    return out


def evaluate_pairs(path: str, spec: str, cells) -> list:
    """Each (b, h, q, kv) of ``cells`` evaluated alone through vmap, as create_mask does: True/False or an error."""
    import torch
    torch.set_num_threads(1)
    fn = load(path, spec)
    from torch.nn.attention.flex_attention import _vmap_for_bhqkv
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
    out = []
    for b, h, q, kv in cells:
        t = [torch.tensor([v], dtype=torch.int64) for v in (b, h, q, kv)]
        try:
            with TransformGetItemToIndex():
                value = _vmap_for_bhqkv(fn, prefix=())(*t)
            out.append(bool((value != 0).reshape(-1)[0]))
        except Exception as exc:  # noqa: BLE001
            out.append(_error(exc))
    return out


# ---- the oracle in its own process -------------------------------------------------------------------------

class Oracle:
    """A child ``python tests/adversarial_oracle.py`` answering ``evaluate`` / ``evaluate_pairs`` requests."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), str(self.workdir)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.count = 0

    def _ask(self, request: dict):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the oracle process died")
        return json.loads(line)

    def evaluate(self, path, spec, N, B=1, H=1, per_n=False) -> dict:
        reply = self._ask({"op": "evaluate", "path": str(path), "spec": spec, "N": N, "B": B, "H": H,
                           "per_n": per_n})
        data = np.load(reply.pop("file"), allow_pickle=False) if reply.get("file") else {}
        for kind in ("vmap", "broadcast"):
            reply[kind]["masks"] = {int(n): (data[f"{kind}_{n}"] if f"{kind}_{n}" in data else None)
                                    for n in reply[kind]["masks"]}
        return reply

    def pairs(self, path, spec, cells) -> list:
        return self._ask({"op": "pairs", "path": str(path), "spec": spec, "cells": [list(c) for c in cells]})

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def _serve(workdir: Path):
    count = 0
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "pairs":
            reply = evaluate_pairs(request["path"], request["spec"], request["cells"])
        else:
            result = evaluate(request["path"], request["spec"], request["N"], request["B"], request["H"],
                              request["per_n"])
            arrays, reply = {}, {}
            for kind, part in result.items():
                for n, mask in part["masks"].items():
                    if mask is not None:
                        arrays[f"{kind}_{n}"] = mask
                reply[kind] = dict(part, masks=list(part["masks"]))
            count += 1
            file = workdir / f"oracle_{count}.npz"
            np.savez(file, **arrays)
            reply["file"] = str(file)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


# ---- the claims, by brute force ---------------------------------------------------------------------------

class Truth:
    """Masks of one program at n = 1..N under one evaluation: ``at(n)`` (B, n, n) after the union over heads."""

    def __init__(self, part: dict, N: int):
        self.N, self.raise_n, self.error = N, part["raise"], part["error"]
        self.per_n = bool(part.get("per_n"))
        masks = {n: m for n, m in part["masks"].items() if m is not None}
        self._masks = {n: m.any(axis=1) for n, m in masks.items()}  # union over heads
        self.top = max(self._masks) if self._masks and not self.per_n else None

    def runs_at(self, n: int) -> bool:
        return self.raise_n is None or n < self.raise_n

    def at(self, n: int):
        if self.per_n:
            return self._masks.get(n)
        if self.top is None or n > self.top:
            return None
        return self._masks[self.top][:, :n, :n]

    def last(self) -> int:
        """The largest n <= N at which the program runs."""
        return self.N if self.raise_n is None else self.raise_n - 1


def dense_failure_n(M: np.ndarray):
    """Smallest n such that M[:n, :n] or I is not transitive (M one (K, K) mask), or None."""
    K = M.shape[0]
    A = M | np.eye(K, dtype=bool)
    best = None
    for a in range(K):
        # c attends b (A[c, b]) and b attends a (A[b, a]) but c does not attend a
        viol = A[:, :] & A[:, a][None, :] & ~A[:, a][:, None]  # viol[c, b] = A[c, b] & A[b, a] & ~A[c, a]
        if viol.any():
            cs, bs = np.nonzero(viol)
            n = int(np.max(np.stack([cs, bs, np.full_like(cs, a)]), axis=0).min()) + 1
            best = n if best is None else min(best, n)
    return best


def is_dense(M: np.ndarray) -> bool:
    A = M | np.eye(M.shape[0], dtype=bool)
    A2 = (A.astype(np.int64) @ A.astype(np.int64)) > 0
    return not (A2 & ~A).any()


def closure(M: np.ndarray) -> np.ndarray:
    """Walks of one or more edges: R[q, k] = q depends on k."""
    R = M.copy()
    while True:
        R2 = R | ((R.astype(np.int64) @ R.astype(np.int64)) > 0)
        if (R2 == R).all():
            return R
        R = R2


def leaks(M: np.ndarray) -> bool:
    n = M.shape[0]
    if n < 2:
        return False
    R = closure(M)
    return bool(R[np.arange(n - 1), np.arange(1, n)].any())


def leak_failure_n(M: np.ndarray):
    """Smallest n at which causal_lm leaks on M[:n, :n] (positions added one at a time), or None."""
    K = M.shape[0]
    R = np.zeros((0, 0), dtype=bool)
    for x in range(K):
        out = M[x, :x]
        into = M[:x, x]
        reach = out | ((out.astype(np.int64) @ R.astype(np.int64)) > 0) if x else out
        back = into | ((R.astype(np.int64) @ into.astype(np.int64)) > 0) if x else into
        self_loop = bool(M[x, x] or (reach & back).any())
        new = np.zeros((x + 1, x + 1), dtype=bool)
        new[:x, :x] = R | (back[:, None] & reach[None, :])
        new[x, :x], new[:x, x], new[x, x] = reach, back, self_loop
        R = new
        if x and (R[np.arange(x), np.arange(1, x + 1)]).any():
            return x + 1
    return None


def difference_n(A: np.ndarray, B: np.ndarray):
    """Smallest n with A[:n, :n] != B[:n, :n], or None."""
    q, k = np.nonzero(A != B)
    return int(np.maximum(q, k).min()) + 1 if q.size else None


def first_failure(claim: str, truth: Truth, other: Truth | None = None):
    """Smallest n <= N at which ``claim`` fails or a program raises, or None (it holds at every n <= N)."""
    raises = [t.raise_n for t in (truth, other) if t is not None and t.raise_n is not None]
    limit = min(raises) if raises else None
    found = None
    if truth.per_n or (other is not None and other.per_n):
        for n in range(1, (limit or truth.N + 1)):
            M = truth.at(n)
            if claim == "equiv":
                bad = any(difference_n(M[b], other.at(n)[b]) for b in range(M.shape[0]))
            elif claim == "dense":
                bad = any(not is_dense(M[b]) for b in range(M.shape[0]))
            else:
                bad = any(leaks(M[b]) for b in range(M.shape[0]))
            if bad:
                found = n
                break
    else:
        top = min(t.last() for t in (truth, other) if t is not None)
        if top >= 1:
            M = truth.at(top)
            for b in range(M.shape[0]):
                if claim == "equiv":
                    n = difference_n(M[b], other.at(top)[b])
                elif claim == "dense":
                    n = dense_failure_n(M[b])
                else:
                    n = leak_failure_n(M[b])
                if n is not None:
                    found = n if found is None else min(found, n)
    cands = [v for v in (found, limit) if v is not None]
    return min(cands) if cands else None


if __name__ == "__main__":
    _serve(Path(sys.argv[1]))
